#!/usr/bin/env bash
# test_security_share.sh: one tenant cannot freeze a node for all (issue 15,
# item 3).
#  1. shareName is unique per location across projects: project B's "demo"
#     is refused at the API (409, naming nothing of project A), and every
#     tenant's creates, resizes and deletes on the node still finish.
#  2. A squatter the API did not stop (a database from before per-location
#     uniqueness, planted while aquiferd is down) fails only its own create:
#     its operation ends with the node's reason, its stateDetails says why,
#     A's volume stays served, and the other tenants' operations finish.
#  3. A standalone agent given a hand-made intent checks every volume first
#     and fails only the bad ones (a duplicate export path, allowedClients
#     and rules one past the contract's limits, a bad shareName), serving the
#     good ones, including one at every limit; a volume already served keeps
#     its path against a newcomer.
. "$(dirname "$0")/lib.sh"

for tool in nfs-ls nfs-cp sqlite3; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils sqlite3)"; exit 77; }
done

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
for p in tenant-a tenant-b; do
	aq_req POST "/v1/projects?projectId=$p" '{}'
	aq_req POST "/v1/projects/$p/locations/east/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
done
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT
A=/v1/projects/tenant-a/locations/east
B=/v1/projects/tenant-b/locations/east
TA=$(aq_token "$D" editor tenant-a)
TB=$(aq_token "$D" editor tenant-b)

vol() { # vol SHARE [CAPACITY]
	printf '{"storagePool":"pool","capacityGib":"%s","protocols":["NFSV3"],"shareName":"%s",
	  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "${2:-100}" "$1"
}
# op_ok DESC: the last answer is an operation; wait for it; it succeeded.
op_ok() {
	local op
	op=$(printf '%s' "$BODY" | jq -r '.name // empty')
	if [ -z "$op" ]; then aq_failed "$1: an operation"; return 1; fi
	aq_op_wait "$op" 30 || return 1
	expect_true 'has("error") | not' "$1 finished without error"
}
served() { # served SHARE: nfs-ls lists the export's root
	nfs-ls "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS" >/dev/null 2>&1
}

# --- 1. the API: one "demo" per location ------------------------------------
aq_req_as "$TA" POST "$A/volumes?volumeId=demo" "$(vol demo)"
op_ok "tenant A creates shareName demo"
ok "demo is served" served demo
aq_req_as "$TB" POST "$B/volumes?volumeId=mine" "$(vol demo)"
expect_error 409 ALREADY_EXISTS "tenant B's shareName demo in the same location is refused"
expect_true '.error.message | test("shareName \"demo\" is already taken in location east")' "the refusal says the name is taken in this location"
expect_true '.error.message | test("tenant-a|volumes/demo") | not' "the refusal names nothing of tenant A"
aq_req_as "$TB" POST "$B/volumes?volumeId=mine&validateOnly=true" "$(vol demo)"
expect_error 409 ALREADY_EXISTS "validateOnly answers the same"
aq_req_as "$TB" GET "$B/volumes/mine"
expect_status 404 "nothing was stored for the refused create"
# every tenant's operations on the node still finish
aq_req_as "$TB" POST "$B/volumes?volumeId=b1" "$(vol b1)"
op_ok "tenant B creates b1"
aq_req_as "$TA" PATCH "$A/volumes/demo?updateMask=capacityGib" '{"capacityGib":"200"}'
op_ok "tenant A resizes demo"
aq_req_as "$TB" DELETE "$B/volumes/b1"
op_ok "tenant B deletes b1"
aq_req_as "$TA" POST "$A/volumes?volumeId=a2" "$(vol a2)"
op_ok "tenant A creates a2"
ok "demo is still served" served demo
ok "a2 is served" served a2

# --- 2. a squatter already in the database ----------------------------------
# Plant B's "demo" the way an older aquiferd (unique per project) stored it:
# the volume, its placement on the node (a pending create) and its operation.
aq_stop "$AQ_PID"
SQ=projects/tenant-b/locations/east/volumes/squat
SQOP=projects/tenant-b/locations/east/operations/operation-1-squat
sqlite3 "$D/aq.db" <<SQL
BEGIN;
INSERT INTO resources(name, kind, parent, seq, doc)
  SELECT '$SQ', 'volume', 'projects/tenant-b/locations/east', (SELECT MAX(rowid) + 1 FROM resources),
         json_set(doc, '$.name', '$SQ', '$.state', 'CREATING', '$.createTime', '2026-01-01T00:00:00Z')
  FROM resources WHERE name = 'projects/tenant-a/locations/east/volumes/demo';
INSERT INTO resources(name, kind, parent, seq, doc)
  SELECT 'placements/$SQ', 'placement', parent, (SELECT MAX(rowid) + 1 FROM resources),
         json_set(doc, '$.volume', '$SQ', '$.fsid', '5ca7000000000001', '$.dir', 'volumes/5ca7000000000001',
                  '$.op', '$SQOP', '$.action', 'create', '$.pendingGeneration', 0)
  FROM resources WHERE name = 'placements/projects/tenant-a/locations/east/volumes/demo';
INSERT INTO resources(name, kind, parent, seq, doc) VALUES ('$SQOP', 'operation', 'projects/tenant-b/locations/east',
  (SELECT MAX(rowid) + 1 FROM resources),
  json_object('name', '$SQOP', 'done', json('false'), 'metadata',
    json_object('@type', 'type.googleapis.com/google.cloud.netapp.v1.OperationMetadata', 'createTime', '2026-01-01T00:00:00Z',
                'target', '$SQ', 'verb', 'create', 'statusMessage', '', 'requestedCancellation', json('false'), 'apiVersion', 'v1')));
COMMIT;
SQL
ok "the squatter is planted" test "$(sqlite3 "$D/aq.db" "SELECT COUNT(*) FROM resources WHERE json_extract(doc, '\$.shareName') = 'demo'")" = 2
aq_start "$D" "$AQ_PORT" || exit 1
aq_op_wait "$SQOP" 30
expect_jq '.error.code' 13 "the squatter's create fails"
expect_true '.error.message | test("shareName \"demo\" is already exported by another volume on this node")' "its operation says why"
aq_req_as "$TB" GET "/v1/$SQ"
expect_jq .state ERROR "the squatter is ERROR"
expect_true '.stateDetails | test("could not serve the volume: .*already exported by another volume")' "its stateDetails says why"
aq_req_as "$TA" GET "$A/volumes/demo"
expect_jq .state READY "tenant A's demo stays READY"
ok "tenant A's demo is still served" served demo
aq_req_as "$TB" POST "$B/volumes?volumeId=b2" "$(vol b2)"
op_ok "tenant B's other create finishes meanwhile"
aq_req_as "$TA" PATCH "$A/volumes/a2?updateMask=capacityGib" '{"capacityGib":"300"}'
op_ok "tenant A's resize finishes meanwhile"
aq_req_as "$TA" DELETE "$A/volumes/a2"
op_ok "tenant A's delete finishes meanwhile"
aq_req_as "$TB" DELETE "/v1/$SQ"
op_ok "the failed squatter can be deleted"
ok "b2 is served" served b2
# once A's demo is gone the name is free for B
aq_req_as "$TA" DELETE "$A/volumes/demo"
op_ok "tenant A deletes demo"
aq_req_as "$TB" POST "$B/volumes?volumeId=demo" "$(vol demo)"
op_ok "then tenant B may take shareName demo"
ok "B's demo is served" served demo

# --- 3. a hand-made intent to a standalone agent -----------------------------
. "$AQ_SRC/tests/agent/tier/agent.sh"
agent_start lone
ent() { # ent NAME FSID SHARE RULES-JSON
	jq -nc --arg n "projects/p/locations/east/volumes/$1" --arg f "$2" --arg s "$3" --argjson r "$4" \
		'{name: $n, fsid: $f, shareName: $s, dir: ("volumes/" + $f), capacityBytes: 1073741824,
		  unixPermissions: "0777", exportRules: $r}'
}
rule='[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]'
# allowedClients of n entries (the first is 127.0.0.1), and n such rules
clients() { { echo 127.0.0.1; for i in $(seq 2 "$1"); do echo "10.0.$((i / 250)).$((i % 250 + 1))"; done; } | paste -sd, -; }
rules() { jq -nc --arg c "$2" --argjson n "$1" '[range($n) | {allowedClients: $c, accessType: "READ_WRITE"}]'; }
LIM=$(rules 20 "$(clients 32)")
intent_of() { jq -nc --arg node lone --argjson v "[$(IFS=,; echo "$*")]" '{node: $node, volumes: $v, deletes: []}'; }
push "$(intent_of "$(ent good1 1000000000000001 good1 "$rule")" \
	"$(ent dup 1000000000000002 good1 "$rule")" \
	"$(ent clients33 1000000000000003 c33 "$(rules 1 "$(clients 33)")")" \
	"$(ent rules21 1000000000000004 r21 "$(rules 21 127.0.0.1)")" \
	"$(ent limits 1000000000000005 limits "$LIM")" \
	"$(ent badshare 1000000000000006 'a/b' "$rule")")"
expect_status 200 "the agent applies an intent with bad volumes in it"
expect_jq '[.failed[].name | split("/") | last] | sort | join(",")' "badshare,clients33,dup,rules21" "exactly the bad volumes are reported"
expect_true '.failed[] | select(.name | endswith("/dup")) | .error | test("shareName \"good1\" is already exported by another volume on this node")' "the duplicate path says why"
expect_true '.failed[] | select(.name | endswith("/clients33")) | .error | test("allowedClients lists more than 32")' "allowedClients past the limit says why"
expect_true '.failed[] | select(.name | endswith("/rules21")) | .error | test("21 export rules; at most 20")' "rules past the limit say why"
expect_true '.failed[] | select(.name | endswith("/badshare")) | .error | test("shareName")' "a bad shareName says why"
NFS=$(cat "$AQ_TMP/lone/nfs.port")
ok "good1 is served" served good1
ok "the volume at every limit (20 rules of 32 clients) is served" served limits
ok "the volume past the limits is not" bash -c "! nfs-ls 'nfs://127.0.0.1/c33?version=3&nfsport=$NFS&mountport=$NFS' >/dev/null 2>&1"
st=$(curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status")
expect_eq "status: LIVE for the good ones, ERROR for the bad ones" "badshare=ERROR,clients33=ERROR,dup=ERROR,good1=LIVE,limits=LIVE,rules21=ERROR" \
	"$(jq -r '[.volumes[] | "\(.name | split("/") | last)=\(.state)"] | sort | join(",")' <<<"$st")"
expect_eq "status reports carry the failures" 4 "$(jq '.failed | length' <<<"$st")"
# the one already served keeps its path, even listed after a newcomer
echo marker >"$AQ_TMP/lone/shelf/volumes/1000000000000001/marker"
push "$(intent_of "$(ent newcomer 2000000000000001 good1 "$rule")" "$(ent good1 1000000000000001 good1 "$rule")")"
expect_jq '[.failed[].name | split("/") | last] | join(",")' newcomer "the newcomer fails, not the served volume"
ok "good1 keeps its export (its data is listed)" sh -c "nfs-ls 'nfs://127.0.0.1/good1?version=3&nfsport=$NFS&mountport=$NFS' | grep -q marker"
aq_sanitizer_clean "$D"
aq_finish
