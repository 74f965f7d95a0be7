#!/usr/bin/env bash
# deploy/quickstart.sh: bring up a working Aquifer on this machine.
# Builds the tree, starts aquiferd on 127.0.0.1:${AQ_PORT:-8080} and one
# aquifer-agent (NFS on 127.0.0.1:${AQ_NFS_PORT:-20490}, SMB on
# 127.0.0.1:${AQ_SMB_PORT:-4450}) with all state in ./run (a local folder, the
# shelf included), and creates a demo location, project, storage pool, an NFS
# volume "demo", an SMB volume "demo-smb" and its SMB user "demo" (password in
# run/smb-password, mode 0600). Prints the token, the CLI setup and how to
# mount each, and the dashboard's URL. Run as root on Debian 12; it installs
# what it needs.
# Settings (environment): AQ_PORT (aquiferd, 8080), AQ_AGENT_PORT (the
# agent's API, AQ_PORT + 1), AQ_NFS_PORT (NFS and MOUNT, 20490), AQ_SMB_PORT
# (SMB, 4450: 445 is Samba's when it is installed), AQ_STATE (the state
# folder, ./run), AQ_BINDIR (use the programs already built in that folder:
# nothing is installed or built), AQ_SHELF_FS (plain: the shelf is a folder
# and snapshots are copies, their time grows with the data; btrfs: the shelf
# is a btrfs file system in run/shelf.img, AQ_SHELF_GIB (64) sparse, loop-
# mounted on run/shelf, and snapshots are O(1) subvolume snapshots).
# TLS on every hop: a cluster CA (run/ca.crt), a server certificate for
# 127.0.0.1/localhost, the agent joins over HTTPS checking aquiferd with
# --ca-file and gets its own certificate; run/env sets AQUIFER_CA_FILE.
# Stop with: kill $(cat run/agent.pid) $(cat run/aquiferd.pid)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
state="${AQ_STATE:-$top/run}"
port="${AQ_PORT:-8080}"
if [ -n "${AQ_BINDIR:-}" ]; then
  bin=$(cd "$AQ_BINDIR" && pwd)
  cli="$bin/aquifer"
else
  bash deploy/deps.sh build
  if [ ! -x ./aquiferd ] || [ ! -f config.status ]; then
    autoreconf -fi >/dev/null 2>&1
    ./configure -q
  fi
  make -s -j"$(nproc)" aquiferd aquifer-agent aquifer >/dev/null
  bin=.
  cli=./aquifer
fi
mkdir -p "$state"
# the cluster CA and aquiferd's certificate, next to the database (mode 0600)
[ -f "$state/ca.crt" ] || "$bin/aquiferd" ca init --db "$state/aquifer.db" >/dev/null
[ -f "$state/server.crt" ] || "$bin/aquiferd" ca issue --db "$state/aquifer.db" --dns localhost --ip 127.0.0.1 >/dev/null
ca="$state/ca.crt"
if [ -f "$state/aquiferd.pid" ] && kill -0 "$(cat "$state/aquiferd.pid")" 2>/dev/null; then
  echo "aquiferd already running (pid $(cat "$state/aquiferd.pid"))"
else
  nohup "$bin/aquiferd" --listen "127.0.0.1:$port" --db "$state/aquifer.db" \
    --tls-cert "$state/server.crt" --tls-key "$state/server.key" >"$state/aquiferd.log" 2>&1 &
  echo $! >"$state/aquiferd.pid"
fi
base="https://127.0.0.1:$port"
for _ in $(seq 1 50); do curl -fs --cacert "$ca" "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs --cacert "$ca" "$base/healthz" >/dev/null || { echo "aquiferd did not start; see $state/aquiferd.log"; exit 1; }
token=$("$bin/aquiferd" token --db "$state/aquifer.db" --role admin --subject quickstart --ttl 2592000 | tail -n1)
auth=(--cacert "$ca" -H "Authorization: Bearer $token")
post() { # post PATH BODY: create unless it exists (409 is fine on a re-run)
  code=$(curl -s -o "$state/last.json" -w '%{http_code}' -X POST "${auth[@]}" "$base$1" -d "$2")
  case "$code" in 200|409) ;; *) echo "POST $1 -> $code: $(cat "$state/last.json")"; exit 1;; esac
}
post "/v1/locations?locationId=local" '{"displayName":"This machine"}'
post "/v1/projects?projectId=demo" '{"displayName":"Demo project"}'
post "/v1/projects/demo/locations/local/storagePools?storagePoolId=demo-pool" \
  '{"serviceLevel":"PREMIUM","capacityGib":"2048","network":"projects/demo/global/networks/default","description":"quickstart pool"}'

# one storage node, its shelf in the state folder
nfs_port="${AQ_NFS_PORT:-20490}"
smb_port="${AQ_SMB_PORT:-4450}"
agent_port="${AQ_AGENT_PORT:-$((port + 1))}"
mkdir -p "$state/shelf"
if [ "${AQ_SHELF_FS:-plain}" = btrfs ] && ! mountpoint -q "$state/shelf"; then
  command -v mkfs.btrfs >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq btrfs-progs >/dev/null; }
  if [ ! -f "$state/shelf.img" ]; then
    truncate -s "${AQ_SHELF_GIB:-64}G" "$state/shelf.img"
    mkfs.btrfs -q "$state/shelf.img" >/dev/null
  fi
  mount -o loop "$state/shelf.img" "$state/shelf" ||
    { echo "cannot loop-mount $state/shelf.img (run without AQ_SHELF_FS=btrfs for a plain folder)"; exit 1; }
fi
if [ -f "$state/agent.pid" ] && kill -0 "$(cat "$state/agent.pid")" 2>/dev/null; then
  echo "aquifer-agent already running (pid $(cat "$state/agent.pid"))"
else
  join=$(curl -fs -X POST "${auth[@]}" "$base/v1/locations/local:joinToken" -d '{}' | jq -r .token)
  nohup "$bin/aquifer-agent" --server "$base" --ca-file "$ca" --token "$join" --node node1 --location local \
    --shelf "$state/shelf" --listen "127.0.0.1:$agent_port" --nfs-listen "127.0.0.1:$nfs_port" \
    --smb-listen "127.0.0.1:$smb_port" --state-dir "$state/agent" >"$state/agent.log" 2>&1 &
  echo $! >"$state/agent.pid"
fi
for _ in $(seq 50); do
  [ "$(curl -fs "${auth[@]}" "$base/v1/nodes/node1" | jq -r .state 2>/dev/null)" = READY ] && break
  sleep 0.2
done
post "/v1/projects/demo/locations/local/volumes?volumeId=demo" \
  '{"storagePool":"demo-pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"demo",
    "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
# the SMB demo: a user (its password made once, kept in the state folder)
# and an SMB volume whose root it may write (unixPermissions 0777)
[ -s "$state/smb-password" ] || (umask 077 && openssl rand -hex 12 >"$state/smb-password")
post "/v1/projects/demo/locations/local/smbUsers?smbUserId=demo" \
  "{\"password\":\"$(cat "$state/smb-password")\",\"uid\":1000,\"gid\":1000,\"description\":\"quickstart SMB user\"}"
post "/v1/projects/demo/locations/local/volumes?volumeId=demo-smb" \
  '{"storagePool":"demo-pool","capacityGib":"100","protocols":["SMB"],"shareName":"demo-smb","unixPermissions":"0777"}'
for v in demo demo-smb; do
  for _ in $(seq 50); do
    [ "$(curl -fs "${auth[@]}" "$base/v1/projects/demo/locations/local/volumes/$v" | jq -r .state)" = READY ] && break
    sleep 0.2
  done
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
echo "  $cli volumes list"
echo "  $cli volumes describe demo --format='value(mountOptions[0].instructions)'   # to mount it:"
echo "$vol" | jq -r '.mountOptions[0].instructions' | sed 's/^/    /'
echo "  nfs-ls '$(echo "$vol" | jq -r '.mountOptions[0].libnfsUrl')'   # libnfs tools: mountOptions[0].libnfsUrl"
smbvol=$(curl -fs "${auth[@]}" "$base/v1/projects/demo/locations/local/volumes/demo-smb")
echo "SMB volume demo-smb is $(echo "$smbvol" | jq -r .state) (user demo, password in $state/smb-password):"
echo "  smbclient //127.0.0.1/demo-smb -p $smb_port -U demo%\$(cat $state/smb-password) -m SMB3 -c ls"
echo "$smbvol" | jq -r '.mountOptions[]? | select(.protocol == "SMB") | .instructions' | sed 's/^/    /'
echo "  curl --cacert $ca $base/healthz"
echo "Dashboard: $base/ui/#token=$token"
echo "  stop: kill \$(cat $state/agent.pid) \$(cat $state/aquiferd.pid)"
if mountpoint -q "$state/shelf"; then
  echo "  the shelf is a btrfs loop mount (snapshots are O(1)): umount $state/shelf after stopping"
else
  echo "  the shelf is a plain folder: snapshots are copies (AQ_SHELF_FS=btrfs for O(1) snapshots)"
fi
