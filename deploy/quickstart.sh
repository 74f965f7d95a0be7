#!/usr/bin/env bash
# deploy/quickstart.sh: bring up a working Aquifer on this machine.
# Builds the tree, starts aquiferd on 127.0.0.1:${AQ_PORT:-8080} with its
# state in ./run (a local folder), and creates a demo location, project and
# storage pool. Prints the token and how to use it. Run as root on Debian 12;
# it installs what it needs. Stop with: kill $(cat run/aquiferd.pid)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash deploy/deps.sh build
state="${AQ_STATE:-$top/run}"
port="${AQ_PORT:-8080}"
if [ ! -x ./aquiferd ] || [ ! -f config.status ]; then
  autoreconf -fi >/dev/null 2>&1
  ./configure -q
fi
make -s -j"$(nproc)" >/dev/null
mkdir -p "$state"
if [ -f "$state/aquiferd.pid" ] && kill -0 "$(cat "$state/aquiferd.pid")" 2>/dev/null; then
  echo "aquiferd already running (pid $(cat "$state/aquiferd.pid"))"
else
  nohup ./aquiferd --listen "127.0.0.1:$port" --db "$state/aquifer.db" >"$state/aquiferd.log" 2>&1 &
  echo $! >"$state/aquiferd.pid"
fi
base="http://127.0.0.1:$port"
for _ in $(seq 1 50); do curl -fs "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$base/healthz" >/dev/null || { echo "aquiferd did not start; see $state/aquiferd.log"; exit 1; }
token=$(./aquiferd token --db "$state/aquifer.db" --role admin --subject quickstart --ttl 2592000 | tail -n1)
auth=(-H "Authorization: Bearer $token")
post() { # post PATH BODY: create unless it exists (409 is fine on a re-run)
  code=$(curl -s -o "$state/last.json" -w '%{http_code}' -X POST "${auth[@]}" "$base$1" -d "$2")
  case "$code" in 200|409) ;; *) echo "POST $1 -> $code: $(cat "$state/last.json")"; exit 1;; esac
}
post "/v1/locations?locationId=local" '{"displayName":"This machine"}'
post "/v1/projects?projectId=demo" '{"displayName":"Demo project"}'
post "/v1/projects/demo/locations/local/storagePools?storagePoolId=demo-pool" \
  '{"serviceLevel":"PREMIUM","capacityGib":"2048","description":"quickstart pool"}'
cat >"$state/env" <<ENV
export AQUIFER_ENDPOINT=$base
export AQUIFER_TOKEN=$token
export AQUIFER_PROJECT=demo
export AQUIFER_LOCATION=local
ENV
chmod 600 "$state/env"
echo "Aquifer is up: $base (state in $state)"
echo "  source $state/env"
echo "  curl -H \"Authorization: Bearer \$AQUIFER_TOKEN\" $base/v1/projects/demo/locations/local/storagePools"
echo "  stop: kill \$(cat $state/aquiferd.pid)"
