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

function response(status, headers, body)
   if status ~= 200 then
      bad = (bad or 0) + 1
      if bad <= 3 then
         io.stderr:write("create.lua: HTTP " .. status .. ": " .. body:sub(1, 200) .. "\n")
      end
   end
end
