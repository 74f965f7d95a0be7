-- wrk script for bench/api/run.sh: an authenticated GET of one volume.
-- The bearer token comes from the environment (AQ_TOKEN); run.sh mints it.
local token = os.getenv("AQ_TOKEN")
if token and token ~= "" then
   wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.method = "GET"
