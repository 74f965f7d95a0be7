#!/usr/bin/env bash
# test_agent.sh: aquiferd with two aquifer-agents sharing one shelf (issue 3).
# Joins, level-triggered pushes, operations that finish only when the node
# applied them, placement within node ceilings, agent API auth, serving
# while aquiferd is away, restart from the last applied state, and failover
# of a killed node's volumes with their data, checked with libnfs clients.
. "$(dirname "$0")/lib.sh"

for tool in nfs-cp nfs-cat; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done

D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
aq_acme_start "$D"
JOIN=$(aq_join_token east)
ok "a cluster admin gets a join token for a location" test "${#JOIN}" -gt 20

# --- 1. two nodes, one shelf ------------------------------------------------
aq_agent_start "$D" n1 east "$SHELF" "$JOIN" 1000 || exit 1
N1_PID=$AGENT_PID N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 1000 || exit 1 # a join token joins once
N2_PID=$AGENT_PID N2_API=$AGENT_API_PORT N2_NFS=$AGENT_NFS_PORT
aq_req GET /v1/nodes
expect_jq '[.nodes[] | select(.state == "READY")] | length' 2 "both nodes READY"
expect_jq '[.nodes[].throughputCeilingMibps] | map(tostring) | join(",")' "1000,1000" "ceilings as the agents declared"
aq_req GET /v1/shelves
expect_jq '.shelves | length' 1 "the location has its shelf"
ls "$D"/n1/state/credentials.json >/dev/null 2>&1
ok "the agent keeps its credentials in --state-dir" test -f "$D/n1/state/credentials.json"
expect_eq "credentials file is private" 600 "$(stat -c %a "$D/n1/state/credentials.json")"

aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"40960","qosType":"MANUAL"}'
expect_jq .done true "pool ready at once"

vol() { # vol ID MIBPS
	printf '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"%s","throughputMibps":%s,
	  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "$2"
}

# An operation finishes only once a node applied it: freeze both agents.
kill -STOP "$N1_PID" "$N2_PID"
aq_req POST "$P/volumes?volumeId=va" "$(vol va 600)"
expect_status 200 "create va"
OPA=$(printf '%s' "$BODY" | jq -r .name)
expect_jq .done false "create is not done while no node applied it"
sleep 1.5
aq_req GET "/v1/$OPA"
expect_jq .done false "still not done while the nodes are frozen"
aq_req GET "$P/volumes/va"
expect_jq .state CREATING "the volume is CREATING meanwhile"
kill -CONT "$N1_PID" "$N2_PID"
aq_op_wait "$OPA" 20
expect_jq '.response.state' READY "create done once the node applied it"
aq_req GET "$P/volumes/va"
expect_jq .state READY "va READY"
VA_PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
expect_jq '.mountOptions[0].exportFull' "127.0.0.1:/va" "mountOptions name the address and export"
ok "mountOptions give the port of one of the nodes" test "$VA_PORT" = "$N1_NFS" -o "$VA_PORT" = "$N2_NFS"
# instructions are GCNV's kind: lines to paste into a shell (comments, mkdir,
# the mount command); the libnfs URL is a field of its own.
INSTR=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].instructions')
ok "instructions are valid shell" bash -n -c "$INSTR"
ok "instructions hold no libnfs URL" sh -c "! printf '%s' \"\$1\" | grep -q 'nfs://'" _ "$INSTR"
expect_eq "instructions give the mount command (vers=3, the node's port, nolock)" \
	"sudo mount -t nfs -o rw,hard,vers=3,tcp,port=$VA_PORT,mountport=$VA_PORT,nolock 127.0.0.1:/va /mnt/va" \
	"$(printf '%s\n' "$INSTR" | grep '^sudo mount ')"
expect_eq "instructions create the mount point first" "sudo mkdir -p /mnt/va" \
	"$(printf '%s\n' "$INSTR" | grep -v '^#' | head -n 1)"
expect_jq '.mountOptions[0].libnfsUrl' "nfs://127.0.0.1/va?version=3&nfsport=$VA_PORT&mountport=$VA_PORT" \
	"libnfsUrl is the volume for libnfs tools"
VA_LIBNFS=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].libnfsUrl')

# Real NFS traffic to the volume where mountOptions say.
head -c $((64 << 20)) /dev/urandom >"$AQ_TMP/data.bin"
URL="nfs://127.0.0.1/va/data.bin?version=3&nfsport=$VA_PORT&mountport=$VA_PORT"
ok "nfs-cp writes a 64 MiB file to va" nfs-cp "$AQ_TMP/data.bin" "$URL"
ok "nfs-ls of libnfsUrl lists it" sh -c "nfs-ls '$VA_LIBNFS' | grep -q data.bin"
nfs-cat "$URL" >"$AQ_TMP/back.bin" 2>/dev/null
expect_eq "nfs-cat reads the same bytes" "$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)" "$(sha256sum <"$AQ_TMP/back.bin" | cut -c1-64)"

# Export rules from the API reach the data path (on the node with room left).
rule_vol() { # ID RULES-JSON
	printf '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s","throughputMibps":10,
	  "exportPolicy":{"rules":%s}}' "$1" "$2"
}
aq_req POST "$P/volumes?volumeId=vro" "$(rule_vol vro '[{"allowedClients":"127.0.0.1","accessType":"READ_ONLY","squashMode":"NO_ROOT_SQUASH"}]')"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
aq_req GET "$P/volumes/vro"
RO_PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
head -c 4096 /dev/urandom >"$AQ_TMP/small.bin"
if nfs-cp "$AQ_TMP/small.bin" "nfs://127.0.0.1/vro/x?version=3&nfsport=$RO_PORT&mountport=$RO_PORT" 2>/dev/null; then
	aq_failed "a READ_ONLY export refuses writes"
else
	aq_pass "a READ_ONLY export refuses writes"
fi
aq_req POST "$P/volumes?volumeId=vfar" "$(rule_vol vfar '[{"allowedClients":"10.9.9.9","accessType":"READ_WRITE"}]')"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
aq_req GET "$P/volumes/vfar"
FAR_PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
if nfs-ls "nfs://127.0.0.1/vfar?version=3&nfsport=$FAR_PORT&mountport=$FAR_PORT" >/dev/null 2>&1; then
	aq_failed "a client outside allowedClients is refused at MNT"
else
	aq_pass "a client outside allowedClients is refused at MNT"
fi
# Changing the rules through the API takes effect without a restart.
aq_req PATCH "$P/volumes/vfar?updateMask=exportPolicy" '{"exportPolicy":{"rules":[{"allowedClients":"127.0.0.0/8","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
ok "after a PATCH of exportPolicy the client mounts" nfs-ls "nfs://127.0.0.1/vfar?version=3&nfsport=$FAR_PORT&mountport=$FAR_PORT"
for v in vro vfar; do
	aq_req DELETE "$P/volumes/$v"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
done

# --- 2. placement within ceilings ------------------------------------------
aq_req POST "$P/volumes?volumeId=vb" "$(vol vb 600)"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
aq_req GET "$P/volumes/vb"
VB_PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
ok "600 + 600 MiB/s land on different nodes" test "$VB_PORT" != "$VA_PORT"
aq_req POST "$P/volumes?volumeId=vc" "$(vol vc 600)"
expect_jq '.error.code' 8 "a third 600 MiB/s volume fails with RESOURCE_EXHAUSTED"
expect_true '.error.message | test("largest headroom is 400")' "the error names the largest headroom"
aq_req GET "$P/volumes/vc"
expect_status 404 "the failed volume was not stored"
aq_req GET /v1/nodes
expect_jq '[.nodes[].allocatedThroughputMibps] | add' 1200 "nodes show what is placed on them"

# --- 3. the agent API refuses strangers -------------------------------------
st_before=$(curl -s -H "Authorization: Bearer $(jq -r .pushSecret "$D/n1/state/credentials.json")" "http://127.0.0.1:$N1_API/v1/status" | jq -c '{g: .appliedGeneration, v: [.volumes[].name]}')
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://127.0.0.1:$N1_API/v1/intent" -d '{"generation":999999,"volumes":[]}')
expect_eq "PUT /v1/intent without credentials is 401" 401 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOK" "http://127.0.0.1:$N1_API/v1/intent" -d '{"generation":999999,"volumes":[]}')
expect_eq "PUT /v1/intent with a user token is 401" 401 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$N1_API/v1/status")
expect_eq "GET /v1/status without credentials is 401" 401 "$code"
st_after=$(curl -s -H "Authorization: Bearer $(jq -r .pushSecret "$D/n1/state/credentials.json")" "http://127.0.0.1:$N1_API/v1/status" | jq -c '{g: .appliedGeneration, v: [.volumes[].name]}')
expect_eq "refused intents changed nothing" "$st_before" "$st_after"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$N1_API/healthz")
expect_eq "agent /healthz needs no credentials" 200 "$code"

# --- 4. aquiferd away: agents keep serving; a restarted agent serves its last state
kill -STOP "$AQ_PID"
ok "va is served while aquiferd is stopped" sh -c "nfs-cat '$URL' >/dev/null"
[ "$VA_PORT" = "$N1_NFS" ] && { HOLD=n1 HOLD_PID=$N1_PID HOLD_API=$N1_API HOLD_NFS=$N1_NFS; } \
	|| { HOLD=n2 HOLD_PID=$N2_PID HOLD_API=$N2_API HOLD_NFS=$N2_NFS; }
kill -TERM "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null
aq_agent_restart "$D" "$HOLD" east "$SHELF" "$HOLD_API" "$HOLD_NFS"
HOLD_PID=$AGENT_PID
for _ in $(seq 50); do nfs-cat "$URL" >/dev/null 2>&1 && break; sleep 0.1; done
nfs-cat "$URL" >"$AQ_TMP/back2.bin" 2>/dev/null
expect_eq "an agent restarted while aquiferd is down serves its last applied state" \
	"$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)" "$(sha256sum <"$AQ_TMP/back2.bin" | cut -c1-64)"
kill -CONT "$AQ_PID"
aq_agent_wait_ready "$HOLD"

# --- 5. kill -9 of the node holding va: the other node takes it over -------
t0=$(date +%s.%N)
kill -KILL "$HOLD_PID"; wait "$HOLD_PID" 2>/dev/null
moved=
for _ in $(seq 600); do
	aq_req GET "$P/volumes/va"
	p=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
	if [ "$p" != "$VA_PORT" ] && nfs-cat "nfs://127.0.0.1/va/data.bin?version=3&nfsport=$p&mountport=$p" >"$AQ_TMP/back3.bin" 2>/dev/null; then
		moved=$p
		break
	fi
	sleep 0.1
done
t1=$(date +%s.%N)
secs=$(echo "$t1 - $t0" | bc)
echo "# failover took ${secs}s"
ok "va is served by the other node within 60 s (took ${secs}s)" test -n "$moved"
expect_eq "with its data intact" "$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)" "$(sha256sum <"$AQ_TMP/back3.bin" | cut -c1-64)"
aq_req GET "/v1/nodes/$HOLD"
expect_jq .state DOWN "the dead node shows DOWN"
aq_req GET /v1/nodes
expect_true '[.nodes[] | select(.state == "READY" and .overcommitted == true)] | length == 1' "the surviving node reports the overcommit"

# Deleting a volume finishes when its node applied it, and removes the data.
aq_req DELETE "$P/volumes/vb"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
aq_req GET "$P/volumes/vb"
expect_status 404 "vb is gone once deleted"
ok "vb's data left the shelf" test "$(ls "$SHELF/volumes" | wc -l)" -eq 1
# A volume its node cannot serve fails its operation with the node's reason.
aq_req POST "/v1/locations?locationId=west" '{}'
WSHELF=$AQ_TMP/west-shelf
mkdir -p "$WSHELF" && : >"$WSHELF/volumes" # a file where the volumes folder belongs
aq_agent_start "$D" w1 west "$WSHELF" "$(aq_join_token west)" || exit 1
W=/v1/projects/acme/locations/west
aq_req POST "$W/storagePools?storagePoolId=wp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_req POST "$W/volumes?volumeId=wv" '{"storagePool":"wp","capacityGib":"100","protocols":["NFSV3"],"shareName":"wv"}'
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 20
expect_jq .error.code 13 "the create fails (INTERNAL) when the node cannot attach the volume"
expect_true '.error.message | test("could not serve")' "the operation says why"
aq_req GET "$W/volumes/wv"
expect_jq .state ERROR "the volume shows ERROR"
expect_true '.stateDetails | test("w1")' "stateDetails names the node"

# Nodes: a READY node cannot be forgotten; the DOWN one, which holds nothing now, can.
[ "$HOLD" = n1 ] && ALIVE=n2 || ALIVE=n1
aq_req DELETE "/v1/nodes/$ALIVE"
expect_error 400 FAILED_PRECONDITION "a READY node holding volumes is not deleted"
aq_req DELETE "/v1/nodes/$HOLD"
expect_status 200 "the DOWN node is deleted"
aq_req GET /v1/nodes
expect_jq '[.nodes[] | select(.location == "east")] | length' 1 "one node left in east"
aq_finish
