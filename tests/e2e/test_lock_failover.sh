#!/usr/bin/env bash
# test_lock_failover.sh: NFSv4.1 locks survive a volume's move to another
# node and a kill -9 of its agent, with real agents sharing one shelf (issue
# 19, acceptance 3). The client is tests/agent/nfs4/nfs4_grace_tool.
#   1. client A locks a file on the node serving the volume; the volume's
#      holder records on the shelf (.aquifer-locks/<fsid>/holders) name A
#      before the lock is granted;
#   2. the node is drained: on the node that takes the volume over, client B
#      (who held nothing before) is refused (NFS4ERR_GRACE); A reclaims (OPEN CLAIM_PREVIOUS, LOCK
#      reclaim, RECLAIM_COMPLETE), which ends the grace period (every
#      recorded holder is done): B's lock on A's range is DENIED, elsewhere
#      granted;
#   3. the serving agent is killed (-9) and restarted: B (not reclaiming) is
#      refused until the grace period ends, A reclaims meanwhile, then B
#      locks a free range; A's range stays A's.
. "$(dirname "$0")/lib.sh"

TOOL=$AQ_BUILDDIR/tests/agent/nfs4/nfs4_grace_tool
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built"; exit 77; }
D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
P=/v1/projects/acme/locations/east
GRACE=15
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
AQ_AGENT_ARGS=(--nlm-grace-seconds "$GRACE")
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 10000 || exit 1
N1_PID=$AGENT_PID N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 10000 || exit 1
N2_PID=$AGENT_PID N2_API=$AGENT_API_PORT N2_NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"MANUAL"}'
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV4"],"shareName":"v1",
  "throughputMibps":100,"unixPermissions":"0777",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .response.state READY "volume v1 (NFSV4) READY"
port_of() { aq_req GET "$P/volumes/v1"; printf '%s' "$BODY" | jq -r '.mountOptions[0].port'; }
node_of_port() { [ "$1" = "$N1_NFS" ] && echo n1 || echo n2; }
PORT=$(port_of)
NODE=$(node_of_port "$PORT")
ok "v1 is served by n1 or n2 (port $PORT)" test "$PORT" = "$N1_NFS" -o "$PORT" = "$N2_NFS"
try() { "$TOOL" try "$1" /v1/data "$2" "$3" "$4" 2>/dev/null; }

# --- 1. A locks; A is on the shelf ----------------------------------------------
out=$("$TOOL" lock "$PORT" /v1/data client-a 0 100)
ok "client A locks [0,100) of v1/data on $NODE" test $? -eq 0
FH=$(printf '%s' "$out" | awk '/^fh / { print $2 }')
HOLDERS=$(ls "$SHELF"/.aquifer-locks/*/holders 2>/dev/null | head -1)
ok "v1's holder records are on the shelf ($HOLDERS), outside the export" test -n "$HOLDERS"
ok "... naming client A" grep -q "^nfs4 - $(printf client-a | od -An -tx1 | tr -d ' \n')$" "$HOLDERS"

# --- 2. drain: grace on the new node, A reclaims ----------------------------------
aq_req POST "/v1/nodes/$NODE:drain" '{}'
expect_status 200 "drain $NODE"
[ "$NODE" = n1 ] && NEW=$N2_NFS || NEW=$N1_NFS
moved() { test "$(port_of)" = "$NEW"; }
ok "v1 moves to the other node" aq_wait_until 30 moved
t0=$(date +%s)
# served: the LOCK got an answer (the pseudo-root names v1 once the node
# attached it; the API may show the new port a moment before)
served() { case "$(try "$NEW" client-b 500 10)" in 0 | 10010 | 10013) return 0 ;; *) return 1 ;; esac; }
aq_wait_until 20 served
expect_eq "client B is refused on the new node meanwhile (NFS4ERR_GRACE)" 10013 "$(try "$NEW" client-b 500 10)"
out=$("$TOOL" reclaim "$NEW" "$FH" client-a 0 100)
expect_eq "client A reclaims its open and lock, then RECLAIM_COMPLETE" "open 0 lock 0 reclaim_complete 0" "$out"
ok "... within the grace period ($(($(date +%s) - t0)) s of $GRACE)" test $(($(date +%s) - t0)) -lt "$GRACE"
expect_eq "every recorded holder is back: grace over, B is denied A's reclaimed range" 10010 "$(try "$NEW" client-b 0 10)"
expect_eq "... and granted a free one" 0 "$(try "$NEW" client-b 200 10)"

# --- 3. kill -9 of the serving agent, restart -------------------------------------
NEWNODE=$(node_of_port "$NEW")
if [ "$NEWNODE" = n1 ]; then API=$N1_API pid=$N1_PID; else API=$N2_API pid=$N2_PID; fi
kill -KILL "$pid"
wait "$pid" 2>/dev/null
# as aq_agent_restart, with the short grace period
"$AQUIFER_AGENT" --server "$AQ_URL" --node "$NEWNODE" --location east --shelf "$SHELF" --listen "127.0.0.1:$API" \
	--nfs-listen "127.0.0.1:$NEW" --state-dir "$D/$NEWNODE/state" --nlm-grace-seconds "$GRACE" \
	>>"$D/$NEWNODE/agent.log" 2>&1 &
AGENT_PID=$!
AQ_PIDS+=("$AGENT_PID")
if [ "$NEWNODE" = n1 ]; then N1_PID=$AGENT_PID; else N2_PID=$AGENT_PID; fi
t0=$(date +%s)
# any answer: a restarted agent listens only once it serves its last
# applied state, so its first answer already finds v1 (and in grace)
up() { test "$(try "$NEW" client-c 900 10)" != ""; }
ok "the restarted agent answers NFSv4.1" aq_wait_until 20 up
expect_eq "client C is refused after the restart (NFS4ERR_GRACE)" 10013 "$(try "$NEW" client-c 900 10)"
out=$("$TOOL" reclaim "$NEW" "$FH" client-a 0 100)
expect_eq "client A reclaims again" "open 0 lock 0 reclaim_complete 0" "$out"
expect_eq "B recorded but not back: still in grace, C refused" 10013 "$(try "$NEW" client-c 900 10)"
over() { test "$(try "$NEW" client-c 900 10)" = 0; }
ok "after the grace period C locks a free range" aq_wait_until $((GRACE + 10)) over
ok "... not before the grace period ended ($(($(date +%s) - t0)) s)" test $(($(date +%s) - t0)) -ge $((GRACE - 2))
expect_eq "A's reclaimed range stays A's" 10010 "$(try "$NEW" client-c 0 10)"
aq_stop "$N1_PID"
aq_stop "$N2_PID"
aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
aq_finish
