-- wrk script for bench/api/run.sh: volume creates with unique ids.
-- Each wrk thread numbers its own requests; ids are b<run>-<thread>-<n>.
-- AQ_TOKEN (bearer token), AQ_PARENT (projects/P/locations/L), AQ_POOL
-- (pool id) and AQ_RUN (a tag unique to this run) come from the environment.
local token = os.getenv("AQ_TOKEN")
local parent = os.getenv("AQ_PARENT")
local pool = os.getenv("AQ_POOL")
local run = os.getenv("AQ_RUN") or "r"
local threads = {}
local counter = 1

function setup(thread)
   thread:set("tid", counter)
   counter = counter + 1
   table.insert(threads, thread)
end

function init(args)
   n = 0
   wrk.headers["Authorization"] = "Bearer " .. token
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   n = n + 1
   local id = string.format("b%s-%d-%d", run, tid, n)
   local body = string.format(
      '{"shareName":"%s","storagePool":"%s","capacityGib":"100","protocols":["NFSV3"]}',
      id, pool)
   return wrk.format("POST", "/v1/" .. parent .. "/volumes?volumeId=" .. id, nil, body)
end

-- A 200 answer is an Operation; one that is already done with an error
-- (no node could take the volume: RESOURCE_EXHAUSTED) created nothing,
-- so it is counted apart (failedops) and not as an acknowledged create.
function response(status, headers, body)
   if status ~= 200 then
      bad = (bad or 0) + 1
      if bad <= 3 then
         io.stderr:write("create.lua: HTTP " .. status .. ": " .. body:sub(1, 200) .. "\n")
      end
   elseif body:find('"error"', 1, true) then
      failedops = (failedops or 0) + 1
      if failedops <= 3 then
         io.stderr:write("create.lua: failed operation: " .. body:sub(1, 300) .. "\n")
      end
   end
end

function done(summary, latency, requests)
   local n = 0
   for _, t in ipairs(threads) do
      n = n + (t:get("failedops") or 0)
   end
   io.write(string.format("failed operations: %d\n", n))
end
