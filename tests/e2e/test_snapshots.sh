#!/usr/bin/env bash
# test_snapshots.sh: snapshots through the API with a real agent (issue 20).
#  - create ?snapshotId= is an Operation done when the node reports the
#    snapshot READY; get, list (paging, filter), patch (description, labels;
#    updateMask), delete (done when the node no longer has it);
#  - every refusal names its field and changes nothing: a missing or bad
#    snapshotId, unknown fields, output-only masks, bad snapshotPolicy,
#    snapReserve, sourceBackup, a clone from another location;
#  - the same ID under another volume or project is fine, twice in a volume 409;
#  - 255 per volume, the 256th RESOURCE_EXHAUSTED;
#  - :revert brings back the snapshot's bytes and deletes newer snapshots;
#  - a clone (restoreParameters.sourceSnapshot) has the snapshot's bytes and
#    cloneDetails; its source snapshot cannot be deleted while it exists;
#  - a volume with snapshots is deleted only with force=true;
#  - usedGib counts snapshot space, /metrics has per-volume snapshot figures.
. "$(dirname "$0")/lib.sh"

for t in nfs-cp nfs-cat nfs-ls; do
	command -v $t >/dev/null || { echo "SKIP: $t missing (apt-get install libnfs-utils)"; exit 77; }
done

aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/locations?locationId=west" '{}'
aq_req POST "/v1/projects?projectId=snap" '{}'
aq_req POST "/v1/projects?projectId=other" '{}'
P=/v1/projects/snap/locations/east
P2=/v1/projects/other/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_req POST "$P2/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT

vol() { printf '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s"%s,
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "${2:-}"; }
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
# nfs-cp makes a new file (it does not overwrite): each change is a new file
put() { printf '%s' "$2" >"$AQ_TMP/put.txt"; nfs-cp "$AQ_TMP/put.txt" "$(url "$1")" >/dev/null 2>&1; }
cat_() { nfs-cat "$(url "$1")" 2>/dev/null; }
opname() { printf '%s' "$BODY" | jq -r '.name // empty'; }

aq_mutate POST "$P/volumes?volumeId=v1" "$(vol v1)"
expect_true '.done and (has("error") | not)' "v1 created"
aq_mutate POST "$P/volumes?volumeId=v2" "$(vol v2)"
aq_mutate POST "$P2/volumes?volumeId=v1" "$(vol o1)"
expect_true '.done and (has("error") | not)' "v1 of another project created"
ok "a file is written to v1" put v1/f.txt "one"

# --- validation: INVALID_ARGUMENT naming the field, nothing stored ----------
aq_req POST "$P/volumes/v1/snapshots" '{}'
expect_error 400 INVALID_ARGUMENT "a create without snapshotId"
expect_true '.error.message | test("snapshotId")' "the refusal names snapshotId"
aq_req POST "$P/volumes/v1/snapshots?snapshotId=1bad" '{}'
expect_error 400 INVALID_ARGUMENT "a snapshotId starting with a digit"
aq_req POST "$P/volumes/v1/snapshots?snapshotId=s1" '{"size":1}'
expect_error 400 INVALID_ARGUMENT "an unknown field"
expect_true '.error.message | test("size")' "the refusal names the unknown field"
aq_req POST "$P/volumes/v1/snapshots?snapshotId=s1" '{"description":7}'
expect_error 400 INVALID_ARGUMENT "a description that is not a string"
expect_true '.error.message | test("description")' "the refusal names description"
aq_req POST "$P/volumes/nope/snapshots?snapshotId=s1" '{}'
expect_error 404 NOT_FOUND "a snapshot of a volume that does not exist"
aq_req POST "$P/volumes/v1/snapshots?snapshotId=s1&validateOnly=true" '{"description":"d"}'
expect_true '.done and .response.name == "projects/snap/locations/east/volumes/v1/snapshots/s1"' "validateOnly answers the would-be snapshot"
aq_req GET "$P/volumes/v1/snapshots"
expect_jq '.snapshots // [] | length' 0 "nothing was stored by the refusals or validateOnly"

# --- create, get, list, patch ------------------------------------------------
aq_req POST "$P/volumes/v1/snapshots?snapshotId=s1" '{"description":"first","labels":{"k":"v"},"state":"ERROR","usedBytes":5}'
expect_status 200 "create s1"
OP=$(opname)
expect_true '.done == false or (.response.state == "READY")' "the create is an operation"
aq_op_wait "$OP" 30
expect_true '.done and (has("error") | not) and .response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.Snapshot"' "the create finishes with the Snapshot"
expect_jq .response.state READY "its node made it: READY"
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_jq .state READY "GET s1: READY"
expect_jq .description first "description kept"
expect_jq .labels.k v "labels kept"
expect_true '(.createTime | test("^[0-9]{4}-")) and (.usedBytes | type) == "number" and .stateDetails == ""' "createTime, usedBytes (number), stateDetails"
aq_req POST "$P/volumes/v1/snapshots?snapshotId=s1" '{}'
expect_error 409 ALREADY_EXISTS "the same ID twice in a volume"
aq_mutate POST "$P/volumes/v2/snapshots?snapshotId=s1" '{}'
expect_true '.done and (has("error") | not)' "the same ID under another volume is fine"
aq_mutate POST "$P2/volumes/v1/snapshots?snapshotId=s1" '{}'
expect_true '.done and (has("error") | not)' "the same ID and volume ID in another project is fine"
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=s2" '{}'
aq_req GET "$P/volumes/v1/snapshots?pageSize=1"
expect_jq '.snapshots | length' 1 "list pages"
TOKN=$(printf '%s' "$BODY" | jq -r .nextPageToken)
aq_req GET "$P/volumes/v1/snapshots?pageSize=1&pageToken=$TOKN"
expect_jq '.snapshots[0].name' "projects/snap/locations/east/volumes/v1/snapshots/s2" "the second page has s2"
aq_req GET "$P/volumes/v1/snapshots?filter=description%3D%22first%22"
expect_jq '[.snapshots[].name] | join(",")' "projects/snap/locations/east/volumes/v1/snapshots/s1" "filter"
aq_req GET "$P/volumes/v2/snapshots"
expect_jq '.snapshots | length' 1 "v2 lists its own snapshot only"
aq_req PATCH "$P/volumes/v1/snapshots/s1" '{"description":"x"}'
expect_error 400 INVALID_ARGUMENT "a PATCH without updateMask"
aq_req PATCH "$P/volumes/v1/snapshots/s1?updateMask=state" '{"state":"READY"}'
expect_error 400 INVALID_ARGUMENT "a PATCH of an output-only field"
aq_mutate PATCH "$P/volumes/v1/snapshots/s1?updateMask=description,labels" '{"description":"renamed","labels":{"a":"b"}}'
expect_true '.done and .response.description == "renamed" and .response.labels == {"a":"b"}' "PATCH description and labels"
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_true '.description == "renamed" and .state == "READY"' "the PATCH is stored"

# --- volume fields -----------------------------------------------------------
aq_req PATCH "$P/volumes/v1?updateMask=snapReserve" '{"snapReserve":5}'
expect_error 400 INVALID_ARGUMENT "snapReserve 5 is refused"
expect_true '.error.message | test("snapReserve")' "the refusal names snapReserve"
aq_req PATCH "$P/volumes/v1?updateMask=snapshotPolicy" '{"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"hour":1}}}'
expect_error 400 INVALID_ARGUMENT "hour in an hourly schedule is refused"
expect_true '.error.message | test("snapshotPolicy.hourlySchedule.hour")' "the refusal names the field"
aq_req POST "$P/volumes?volumeId=bk" "$(vol bk ',"restoreParameters":{"sourceBackup":"projects/snap/locations/east/backupVaults/b/backups/x"}')"
expect_error 404 NOT_FOUND "a volume from a backup that does not exist is refused"
expect_true '.error.message | test("restoreParameters.sourceBackup")' "the refusal names restoreParameters.sourceBackup"
aq_req POST "$P/volumes?volumeId=cw" "$(vol cw ',"restoreParameters":{"sourceSnapshot":"projects/snap/locations/west/volumes/v1/snapshots/s1"}')"
expect_error 400 INVALID_ARGUMENT "a clone from another location is refused"
aq_req POST "$P/volumes?volumeId=cw" "$(vol cw ',"restoreParameters":{"sourceSnapshot":"projects/snap/locations/east/volumes/v1/snapshots/none"}')"
expect_error 404 NOT_FOUND "a clone from a snapshot that does not exist"
aq_mutate PATCH "$P/volumes/v1?updateMask=snapshotDirectory" '{"snapshotDirectory":true}'
expect_true '.done and (has("error") | not) and .response.snapshotDirectory == true' "snapshotDirectory true is accepted"

# --- revert: the old bytes, newer snapshots gone --------------------------------
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=before" '{}'
ok "v1 is changed after the snapshot" put v1/g.txt "two"
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=after" '{}'
expect_eq "the live volume has the new file" "two" "$(cat_ v1/g.txt)"
expect_eq "the snapshot has the old file (/.snapshot/before, snapshotDirectory true)" "one" "$(cat_ v1/.snapshot/before/f.txt)"
expect_eq "the snapshot lacks the newer file" "" "$(cat_ v1/.snapshot/before/g.txt)"
aq_req POST "$P/volumes/v1:revert" '{}'
expect_error 400 INVALID_ARGUMENT "a revert without snapshotId"
aq_req POST "$P/volumes/v1:revert" '{"snapshotId":"none"}'
expect_error 404 NOT_FOUND "a revert to a snapshot that does not exist"
aq_mutate POST "$P/volumes/v1:revert" '{"snapshotId":"before"}'
expect_true '.done and (has("error") | not) and .response.name == "projects/snap/locations/east/volumes/v1"' "the revert finishes with the volume"
expect_eq "after the revert the file has the snapshot's bytes" "one" "$(cat_ v1/f.txt)"
expect_eq "after the revert the newer file is gone" "" "$(cat_ v1/g.txt)"
aq_req GET "$P/volumes/v1"
expect_jq .state READY "the volume is READY again"
gone=0
for _ in $(seq 100); do
	aq_req GET "$P/volumes/v1/snapshots/after"
	[ "$STATUS" = 404 ] && { gone=1; break; }
	sleep 0.1
done
expect_eq "the snapshot newer than the revert's is deleted (GCNV)" 1 "$gone"
aq_req GET "$P/volumes/v1/snapshots/before"
expect_jq .state READY "the revert's snapshot stays"

# --- clone ---------------------------------------------------------------------
SRC=projects/snap/locations/east/volumes/v1/snapshots/before
aq_mutate POST "$P/volumes?volumeId=c1" "$(vol c1 ",\"restoreParameters\":{\"sourceSnapshot\":\"$SRC\"}")"
expect_true '.done and (has("error") | not)' "a clone is created"
expect_true ".response.cloneDetails.sourceSnapshot == \"$SRC\" and .response.cloneDetails.sourceVolume == \"projects/snap/locations/east/volumes/v1\" and (.response.cloneDetails.sharedSpaceGib | type) == \"string\"" "cloneDetails"
expect_eq "the clone has the snapshot's bytes" "one" "$(cat_ c1/f.txt)"
ok "the clone is writable" put c1/c.txt "clone"
expect_eq "the parent does not see the clone's writes" "" "$(cat_ v1/c.txt)"
ok "the parent is written" put v1/p.txt "three"
expect_eq "the clone does not see the parent's writes" "" "$(cat_ c1/p.txt)"
expect_eq "the clone reads its own write" "clone" "$(cat_ c1/c.txt)"
aq_req DELETE "$P/volumes/v1/snapshots/before"
expect_error 400 FAILED_PRECONDITION "the clone's source snapshot cannot be deleted"
expect_true '.error.message | test("volumes/c1")' "the refusal names the clone"
aq_req PATCH "$P/volumes/c1?updateMask=restoreParameters" '{}'
expect_error 400 INVALID_ARGUMENT "restoreParameters is immutable"

# --- delete ----------------------------------------------------------------------
aq_req DELETE "$P/volumes/v2"
expect_error 400 FAILED_PRECONDITION "a volume with snapshots needs force"
expect_true '.error.message | test("force=true")' "the refusal says force=true"
aq_mutate DELETE "$P/volumes/v2/snapshots/s1"
expect_true '.done and (has("error") | not) and .response["@type"] == "type.googleapis.com/google.protobuf.Empty"' "a snapshot delete finishes (Empty)"
aq_req GET "$P/volumes/v2/snapshots/s1"
expect_error 404 NOT_FOUND "the deleted snapshot is gone"
aq_mutate DELETE "$P/volumes/v2"
expect_true '.done and (has("error") | not)' "a volume without snapshots is deleted without force"
aq_mutate DELETE "$P2/volumes/v1?force=true"
expect_true '.done and (has("error") | not)' "force deletes a volume with its snapshots"
aq_req GET "$P2/volumes/v1/snapshots/s1"
expect_error 404 NOT_FOUND "its snapshots went with it"

# --- usedGib and metrics ---------------------------------------------------------
# (the bytes themselves are the agent's figures: tests/agent/snap; here the plumbing)
aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"
N=$(printf '%s' "$BODY" | jq '[.snapshots[] | select(.state != "DELETING")] | length')
SUM=$(printf '%s' "$BODY" | jq '[.snapshots[] | select(.state != "DELETING") | .usedBytes] | add')
curl -s "$AQ_URL/metrics" -H "Authorization: Bearer $TOK" >"$AQ_TMP/metrics.txt"
ok "/metrics counts v1's snapshots ($N)" grep -qE "^aquifer_volume_snapshots\\{project=\"snap\",location=\"east\",volume=\"v1\"\\} $N\$" "$AQ_TMP/metrics.txt"
ok "/metrics has v1's snapshot bytes (the sum of their usedBytes, $SUM)" awk -v s="$SUM" \
	'/^aquifer_volume_snapshot_bytes\{project="snap",location="east",volume="v1"\}/ { f = 1; exit !($2 == s) } END { if (!f) exit 1 }' "$AQ_TMP/metrics.txt"

# --- 255 per volume ------------------------------------------------------------------
aq_mutate POST "$P/volumes?volumeId=many" "$(vol many)"
for i in $(seq 1 255); do
	curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOK" -d '{}' "$AQ_URL$P/volumes/many/snapshots?snapshotId=s$i"
done
aq_req GET "$P/volumes/many/snapshots?pageSize=1000"
expect_jq '.snapshots | length' 255 "255 snapshots are taken"
aq_req POST "$P/volumes/many/snapshots?snapshotId=s256" '{}'
expect_error 429 RESOURCE_EXHAUSTED "the 256th is refused"
expect_true '.error.message | test("255")' "the refusal says the limit"
aq_mutate DELETE "$P/volumes/many?force=true"
expect_true '.done and (has("error") | not)' "the volume goes with its 255 snapshots"

aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
