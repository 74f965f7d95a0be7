#!/usr/bin/env bash
# deploy/quickstart.sh: bring up a working Aquifer on this machine.
# Builds the tree, starts aquiferd on 127.0.0.1:${AQ_PORT:-8080} and one
# aquifer-agent (NFS on 127.0.0.1:${AQ_NFS_PORT:-20490}) with all state in
# ./run (a local folder, the shelf included), and creates a demo location,
# project, storage pool and NFS volume. Prints the token, the CLI setup and
# how to mount. Run as root on Debian 12; it installs what it needs.
# TLS on every hop: a cluster CA (run/ca.crt), a server certificate for
# 127.0.0.1/localhost, the agent joins over HTTPS checking aquiferd with
# --ca-file and gets its own certificate; run/env sets AQUIFER_CA_FILE.
# Stop with: kill $(cat run/agent.pid) $(cat run/aquiferd.pid)
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
make -s -j"$(nproc)" aquiferd aquifer-agent aquifer >/dev/null
mkdir -p "$state"
# the cluster CA and aquiferd's certificate, next to the database (mode 0600)
[ -f "$state/ca.crt" ] || ./aquiferd ca init --db "$state/aquifer.db" >/dev/null
[ -f "$state/server.crt" ] || ./aquiferd ca issue --db "$state/aquifer.db" --dns localhost --ip 127.0.0.1 >/dev/null
ca="$state/ca.crt"
if [ -f "$state/aquiferd.pid" ] && kill -0 "$(cat "$state/aquiferd.pid")" 2>/dev/null; then
  echo "aquiferd already running (pid $(cat "$state/aquiferd.pid"))"
else
  nohup ./aquiferd --listen "127.0.0.1:$port" --db "$state/aquifer.db" \
    --tls-cert "$state/server.crt" --tls-key "$state/server.key" >"$state/aquiferd.log" 2>&1 &
  echo $! >"$state/aquiferd.pid"
fi
base="https://127.0.0.1:$port"
for _ in $(seq 1 50); do curl -fs --cacert "$ca" "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs --cacert "$ca" "$base/healthz" >/dev/null || { echo "aquiferd did not start; see $state/aquiferd.log"; exit 1; }
token=$(./aquiferd token --db "$state/aquifer.db" --role admin --subject quickstart --ttl 2592000 | tail -n1)
auth=(--cacert "$ca" -H "Authorization: Bearer $token")
post() { # post PATH BODY: create unless it exists (409 is fine on a re-run)
  code=$(curl -s -o "$state/last.json" -w '%{http_code}' -X POST "${auth[@]}" "$base$1" -d "$2")
  case "$code" in 200|409) ;; *) echo "POST $1 -> $code: $(cat "$state/last.json")"; exit 1;; esac
}
post "/v1/locations?locationId=local" '{"displayName":"This machine"}'
post "/v1/projects?projectId=demo" '{"displayName":"Demo project"}'
post "/v1/projects/demo/locations/local/storagePools?storagePoolId=demo-pool" \
  '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048","description":"quickstart pool"}'

# one storage node, its shelf in the state folder
nfs_port="${AQ_NFS_PORT:-20490}"
agent_port="${AQ_AGENT_PORT:-$((port + 1))}"
mkdir -p "$state/shelf"
if [ -f "$state/agent.pid" ] && kill -0 "$(cat "$state/agent.pid")" 2>/dev/null; then
  echo "aquifer-agent already running (pid $(cat "$state/agent.pid"))"
else
  join=$(curl -fs -X POST "${auth[@]}" "$base/v1/locations/local:joinToken" -d '{}' | jq -r .token)
  nohup ./aquifer-agent --server "$base" --ca-file "$ca" --token "$join" --node node1 --location local \
    --shelf "$state/shelf" --listen "127.0.0.1:$agent_port" --nfs-listen "127.0.0.1:$nfs_port" \
    --state-dir "$state/agent" >"$state/agent.log" 2>&1 &
  echo $! >"$state/agent.pid"
fi
for _ in $(seq 50); do
  [ "$(curl -fs "${auth[@]}" "$base/v1/nodes/node1" | jq -r .state 2>/dev/null)" = READY ] && break
  sleep 0.2
done
post "/v1/projects/demo/locations/local/volumes?volumeId=demo" \
  '{"storagePool":"demo-pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"demo",
    "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
for _ in $(seq 50); do
  [ "$(curl -fs "${auth[@]}" "$base/v1/projects/demo/locations/local/volumes/demo" | jq -r .state)" = READY ] && break
  sleep 0.2
done
cat >"$state/env" <<ENV
export AQUIFER_ENDPOINT=$base
export AQUIFER_TOKEN=$token
export AQUIFER_PROJECT=demo
export AQUIFER_LOCATION=local
export AQUIFER_CA_FILE=$ca
ENV
chmod 600 "$state/env"
vol=$(curl -fs "${auth[@]}" "$base/v1/projects/demo/locations/local/volumes/demo")
echo "Aquifer is up: $base (state in $state), volume demo is $(echo "$vol" | jq -r .state)"
echo "  source $state/env        # AQUIFER_ENDPOINT (https), AQUIFER_TOKEN, AQUIFER_CA_FILE, ..."
echo "  ./aquifer volumes list"
echo "  ./aquifer volumes describe demo --format='value(mountOptions[0].instructions)'"
echo "  $(echo "$vol" | jq -r '.mountOptions[0].instructions')"
echo "  nfs-ls 'nfs://127.0.0.1/demo?version=3&nfsport=$nfs_port&mountport=$nfs_port'"
echo "  curl --cacert $ca $base/healthz"
echo "  stop: kill \$(cat $state/agent.pid) \$(cat $state/aquiferd.pid)"
