#!/usr/bin/env bash
# test_node_lifecycle.sh: a status never says READY when nothing serves the
# volume (issue 15, items 12, 13, 14 and 17), with real agents and libnfs.
#   1. traffic right after a create reaches the volume's series (item 17);
#   2. the only node DOWN: the volume stays READY with stateDetails saying no
#      node serves it, aquifer_volume_served 0, and the dashboard shows it;
#      all of it clears when the node is back (item 14);
#   3. draining the last node is refused (naming force=true) and allowed with
#      it; the pending move resumes by itself when a node joins; undrain
#      (item 13);
#   4. a drain's move finishes only when the new node applies it: meanwhile
#      stateDetails say so and the gauge is 0 (item 14);
#   5. a node deleted and joined again under its name, its old intent.json
#      (a higher generation) still in its state folder, serves what it is
#      given: checked over NFS (item 12, the agent's reset);
#   6. aquiferd's database restored from a backup (generations behind what a
#      node applied): a new volume is really served (item 12, aquiferd never
#      takes an applied generation above its own).
. "$(dirname "$0")/lib.sh"

for tool in nfs-cp nfs-cat nfs-ls; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done

D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
VOL=projects/acme/locations/east/volumes/v1
P=/v1/projects/acme/locations/east
AQ_SERVE_ARGS=(--node-down-seconds 5)
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'

vol_field() { aq_req GET "$P/volumes/$1"; printf '%s' "$BODY" | jq -r "$2"; }
on_port() { aq_vol_is "$1" ".mountOptions[0].port == $2"; }
# served V: aquifer_volume_served of volume V in /metrics (admin token)
served() {
	aq_req GET /metrics
	printf '%s\n' "$BODY" | awk -v k="aquifer_volume_served{project=\"acme\",location=\"east\",pool=\"sp\",volume=\"$1\"}" '$1 == k { print $2 }'
}
nfs_url() { echo "nfs://127.0.0.1/$1/$3?version=3&nfsport=$2&mountport=$2"; }
# reads V PORT: the bytes of data.bin of V through the NFS server on PORT match
reads() { nfs-cat "$(nfs_url "$1" "$2" data.bin)" 2>/dev/null | cmp -s - "$AQ_TMP/data.bin"; }
# agent_start NODE JOIN STATE-DIR API NFS: an agent that keeps STATE-DIR as it is
agent_start() {
	mkdir -p "$D/$1"
	"$AQUIFER_AGENT" --server "$AQ_URL" --token "$2" --node "$1" --location east --shelf "$SHELF" \
		--listen "127.0.0.1:$4" --nfs-listen "127.0.0.1:$5" --state-dir "$3" --throughput-mibps 10000 \
		>>"$D/$1/agent.log" 2>&1 &
	AGENT_PID=$!
	AQ_PIDS+=("$AGENT_PID")
	aq_agent_wait_ready "$1"
}

aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 10000 || exit 1
N1_PID=$AGENT_PID N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"MANUAL"}'

# --- 1. the first seconds of a new volume are in its series --------------------
MIB16=$((16 << 20))
head -c $MIB16 /dev/urandom >"$AQ_TMP/data.bin"
aq_req POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"v1",
  "throughputMibps":200,"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_status 200 "create v1"
# write as soon as the export is live, before the node's next report
aq_wait_until 20 nfs-ls "$(nfs_url v1 "$N1_NFS" "")" >/dev/null 2>&1
ok "nfs-cp writes 16 MiB to v1 right after its create" nfs-cp "$AQ_TMP/data.bin" "$(nfs_url v1 "$N1_NFS" data.bin)"
written() { aq_req GET "$P/volumes/v1/metrics?window=5m"; printf '%s' "$BODY" | jq -r '[.points[] | (.writeBytes|tonumber)] | add // 0'; }
grown() { test "$(written)" -ge "$MIB16"; }
aq_wait_until 10 grown
got=$(written)
ok "the write right after the create is in v1's series (16 MiB, got $got bytes)" \
	test "$got" -ge "$MIB16" -a "$got" -le $((MIB16 * 11 / 10))
expect_eq "v1 is served (aquifer_volume_served 1)" 1 "$(served v1)"

# --- 2. the only node DOWN: READY, but saying no node serves it -----------------
kill -STOP "$N1_PID"
aq_wait_until 15 aq_vol_is v1 '.stateDetails != ""'
expect_jq .state READY "v1 stays READY while its only node is DOWN (GCNV has no other state)"
expect_true '.stateDetails | test("no node serves this volume") and test("n1 is DOWN")' "... and its stateDetails say no node serves it"
expect_eq "aquifer_volume_served of v1 is 0" 0 "$(served v1)"
aq_req GET /v1/nodes/n1
expect_jq .state DOWN "n1 is DOWN"
expect_true '.stateDetails | test("1 volumes wait")' "n1's stateDetails: one volume waits for another node"
if command -v chromium >/dev/null; then
	timeout 120 chromium --no-sandbox --headless --disable-gpu --disable-background-networking --no-first-run \
		--disable-dev-shm-usage --user-data-dir="$AQ_TMP/chrome" --virtual-time-budget=10000 --dump-dom \
		"$AQ_URL/ui/#token=$TOK" >"$AQ_TMP/dom.html" 2>"$AQ_TMP/chrome.log"
	ok "the dashboard shows v1's stateDetails: no node serves it" \
		grep -q "data-volume=\"$VOL\"[^>]*data-state-details=\"no node serves this volume" "$AQ_TMP/dom.html"
	ok "... in its state cell, marked not served" \
		grep -q '<td class="alert">⚠ not served · READY: no node serves this volume' "$AQ_TMP/dom.html"
	ok "... and its row stands out" grep -q "data-volume=\"$VOL\"[^>]*data-served=\"false\" class=\"unserved\"" "$AQ_TMP/dom.html"
	ok "the dashboard marks n1 DOWN (row and state cell)" grep -Eq \
		'data-node="nodes/n1"[^>]*data-state="DOWN" class="down"><td>n1</td><td>east</td><td class="alert">⚠ DOWN' "$AQ_TMP/dom.html"
else
	echo "# chromium missing: dashboard check skipped"
fi
kill -CONT "$N1_PID"
aq_wait_until 15 aq_vol_is v1 '.stateDetails == ""'
expect_jq .stateDetails "" "v1's stateDetails clear once n1 reports again"
expect_eq "aquifer_volume_served of v1 is 1 again" 1 "$(served v1)"
ok "v1 reads back over NFS from n1" reads v1 "$N1_NFS"

# --- 3. drain: refused on the last node, forced, resumed, undone -----------------
aq_req POST /v1/nodes/n1:drain '{}'
expect_error 400 FAILED_PRECONDITION "draining the last node holding volumes is refused"
expect_true '.error.message | test("force=true") and test("--force")' "... the message names force=true and --force"
aq_req GET /v1/nodes/n1
expect_jq .state READY "... and nothing changed: n1 is READY"
cli() { AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" "$@"; }
CLI_OUT=$(cli nodes drain n1 2>&1)
expect_eq "aquifer nodes drain n1 (the last node) exits 3" 3 "$?"
ok "... saying --force would drain it anyway" grep -q -- "--force" <<<"$CLI_OUT"
expect_eq "aquifer nodes drain n1 --force drains it" DRAINING "$(cli nodes drain n1 --force --format='value(state)' 2>/dev/null)"
aq_req GET /v1/nodes/n1
expect_jq .state DRAINING "n1 is DRAINING"
expect_true '.stateDetails | test("still serves 1 volumes")' "n1 says it still serves the volume that found no node"
ok "n1 keeps serving v1 while draining" reads v1 "$N1_NFS"
aq_req POST "$P/volumes?volumeId=vx" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"vx","throughputMibps":10}'
expect_true '.done and .error.code == 8 and (.error.message | test("no READY storage node"))' \
	"no READY node (n1 DRAINING): a create fails with RESOURCE_EXHAUSTED"
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 10000 || exit 1
N2_PID=$AGENT_PID N2_API=$AGENT_API_PORT N2_NFS=$AGENT_NFS_PORT
aq_wait_until 20 on_port v1 "$N2_NFS"
expect_eq "the pending move resumed when n2 joined: v1 is on n2" "$N2_NFS" "$(vol_field v1 '.mountOptions[0].port')"
ok "v1 reads back over NFS from n2" reads v1 "$N2_NFS"
expect_eq "aquifer_volume_served of v1 is 1" 1 "$(served v1)"
aq_req GET /v1/nodes/n1
expect_jq .volumeCount 0 "n1 holds nothing now"
expect_true '.stateDetails | test("drained")' "n1 says it is drained"
aq_req POST /v1/nodes/n1:undrain '{}'
expect_status 200 "undrain n1"
expect_jq .state READY "n1 is READY again"
aq_req POST /v1/nodes/n1:undrain '{}'
expect_error 400 FAILED_PRECONDITION "undrain of a READY node is refused"
aq_req POST /v1/nodes/nope:undrain '{}'
expect_error 404 NOT_FOUND "undrain of an unknown node"
CLI_OUT=$(cli nodes undrain n1 2>&1)
expect_eq "aquifer nodes undrain n1 (already READY) exits 3 with the server's reason" 3 "$?"
ok "... which it prints" grep -q "not DRAINING" <<<"$CLI_OUT"

# --- 4. a move finishes only when the new node serves it ------------------------
kill -STOP "$N1_PID"
aq_req POST /v1/nodes/n2:drain '{}'
expect_status 200 "drain n2 towards n1 (frozen)"
expect_true '.stateDetails | test("drained")' "n2 holds nothing once v1 is placed on n1"
aq_req GET "$P/volumes/v1"
expect_true '.state == "READY" and (.stateDetails | test("moving from node n2") and test("not served until n1 applies it"))' \
	"while n1 has not applied it, v1 says it is moving and not served"
expect_eq "... and aquifer_volume_served is 0" 0 "$(served v1)"
expect_eq "... and its mountOptions still name n2" "$N2_NFS" "$(vol_field v1 '.mountOptions[0].port')"
kill -CONT "$N1_PID"
aq_wait_until 15 aq_vol_is v1 ".mountOptions[0].port == $N1_NFS and .stateDetails == \"\""
expect_jq .stateDetails "" "once n1 applied it, v1's stateDetails clear"
expect_eq "... its mountOptions name n1" "$N1_NFS" "$(vol_field v1 '.mountOptions[0].port')"
expect_eq "... and aquifer_volume_served is 1" 1 "$(served v1)"
ok "v1 reads back over NFS from n1" reads v1 "$N1_NFS"

# --- 5. delete and re-join n1 with its old intent.json ---------------------------
expect_eq "aquifer nodes undrain n2" READY "$(cli nodes undrain n2 --format='value(state)' 2>/dev/null)"
aq_req POST /v1/nodes/n1:drain '{}'
expect_status 200 "drain n1 (v1 goes to n2)"
aq_wait_until 15 on_port v1 "$N2_NFS"
aq_wait_until 10 reads v1 "$N2_NFS"
ok "v1 is served by n2" reads v1 "$N2_NFS"
aq_stop "$N1_PID"
OLD_GEN=$(jq -r .generation "$D/n1/state/intent.json")
ok "n1's intent.json holds generation $OLD_GEN" test "$OLD_GEN" -ge 4
aq_req DELETE /v1/nodes/n1
expect_status 200 "delete the drained n1"
rm "$D/n1/state/credentials.json" # the operator's step to join again; intent.json stays
agent_start n1 "$(aq_join_token east)" "$D/n1/state" "$N1_API" "$N1_NFS"
N1_PID=$AGENT_PID
aq_req GET /v1/nodes/n1
ok "the new n1's generations start over ($(printf '%s' "$BODY" | jq -r .generation) < $OLD_GEN)" \
	test "$(printf '%s' "$BODY" | jq -r .generation)" -lt "$OLD_GEN"
intent_gen() { jq -r '.generation // 0' "$D/n1/state/intent.json" 2>/dev/null || echo 0; }
ok "the join dropped the old intent.json (it holds generation $(intent_gen) now)" test "$(intent_gen)" -lt "$OLD_GEN"
ok "the agent says it serves none of the old intent at start" bash -c '! grep -q "serving generation $1 " "$2"' _ "$OLD_GEN" "$D/n1/agent.log"
aq_req POST /v1/nodes/n2:drain '{}'
expect_status 200 "drain n2 (v1 goes to the new n1)"
aq_wait_until 20 on_port v1 "$N1_NFS"
aq_wait_until 10 reads v1 "$N1_NFS"
ok "the re-joined n1 really serves v1 (nfs-cat)" reads v1 "$N1_NFS"
aq_req GET /v1/nodes/n1
N1_GEN=$(printf '%s' "$BODY" | jq -r .generation)
SECRET=$(jq -r .pushSecret "$D/n1/state/credentials.json")
AGENT_GEN=$(curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$N1_API/v1/status" | jq -r .appliedGeneration)
expect_eq "the agent applied the node's generation" "$N1_GEN" "$AGENT_GEN"

# --- 6. a database restored from a backup -------------------------------------------
aq_stop "$AQ_PID"
mkdir -p "$AQ_TMP/backup" && cp "$D"/aq.db* "$AQ_TMP/backup/"
aq_start "$D" "$AQ_PORT" || exit 1
aq_agent_wait_ready n1
for v in t1 t2; do
	aq_mutate POST "$P/volumes?volumeId=$v" "{\"storagePool\":\"sp\",\"capacityGib\":\"100\",\"protocols\":[\"NFSV3\"],\"shareName\":\"$v\",\"throughputMibps\":10}"
	aq_mutate DELETE "$P/volumes/$v"
done
# the pushes are asynchronous: wait until n1 applied the last one
agent_applied() { curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$N1_API/v1/status" | jq -r .appliedGeneration; }
caught_up() { aq_req GET /v1/nodes/n1; test "$(agent_applied)" = "$(printf '%s' "$BODY" | jq -r .generation)"; }
ok "n1 applied every generation the mutations after the backup made" aq_wait_until 20 caught_up
AHEAD=$(agent_applied)
aq_stop "$AQ_PID"
rm -f "$D"/aq.db*
cp "$AQ_TMP/backup"/aq.db* "$D/"
# read the restored generation from a copy of the files, before aquiferd
# starts: once it runs, its first push to n1 may already have jumped past
mkdir -p "$AQ_TMP/peek" && cp "$D"/aq.db* "$AQ_TMP/peek/"
RGEN=$(sqlite3 "$AQ_TMP/peek/aq.db" "SELECT json_extract(doc,'\$.generation') FROM resources WHERE name='nodes/n1'")
ok "the restored database is behind n1 (generation ${RGEN:-none} < $AHEAD)" test "${RGEN:-999999}" -lt "$AHEAD"
aq_start "$D" "$AQ_PORT" || exit 1
aq_mutate POST "$P/volumes?volumeId=v3" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v3","throughputMibps":10,
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .done true "create v3 after the restore"
expect_eq "v3 is placed on n1" "$N1_NFS" "$(vol_field v3 '.mountOptions[0].port')"
ok "v3 is really served by n1 (nfs-ls)" nfs-ls "$(nfs_url v3 "$N1_NFS" "")"
ok "aquiferd says why it pushed past the node's generation" grep -q "above its own" "$D/aquiferd.log"

aq_stop "$N1_PID"
aq_stop "$N2_PID"
aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
aq_finish
