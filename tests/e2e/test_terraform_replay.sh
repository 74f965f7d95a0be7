#!/usr/bin/env bash
# tests/e2e/test_terraform_replay.sh: replay the request sequence of the
# Terraform google provider's google_netapp_storage_pool and
# google_netapp_volume resources (shared/reference/gcnv.md §5) against a real
# aquiferd, with the provider's field names and JSON types: create with
# ?storagePoolId= / ?volumeId=, poll GET /v1/{operation.name} until done, read
# the resource, PATCH with the updateMask the provider builds, import by the
# three ID forms, delete (volumes with force=true). Every answer is recorded
# (tests/openapi/record.sh) and validated against openapi/openapi.yaml at the end.
# Snapshots: test_terraform_snapshots.sh replays them (issue 20).
. "$(dirname "$0")/../openapi/lib.sh"

aq_npm_setup
aq_start
export AQ_RECORD_DIR=$AQ_TMP/records
P=tf-proj
L=us-central1
V1=$AQ_URL/v1
admin=$(aq_token admin)
curl -fsS -X POST "$V1/projects?projectId=$P" -H "Authorization: Bearer $admin" -d '{}' >/dev/null || fail "setup: create project"
curl -fsS -X POST "$V1/locations?locationId=$L" -H "Authorization: Bearer $admin" -d '{}' >/dev/null || fail "setup: create location"
aq_agent_up "$L"
# The provider sends access_token as the bearer token.
tok=$(aq_token editor "$P")
H=(-H "Authorization: Bearer $tok" -H "Content-Type: application/json" -H "User-Agent: Terraform/1.9.0 terraform-provider-google/6.0.0")
BASE=projects/$P/locations/$L

# req METHOD PATH-UNDER-/v1/ [BODY]: one provider request; sets BODY and STATUS.
req() {
	local m=$1 p=$2
	if [ $# -ge 3 ]; then
		BODY=$(aq_curl_record "$m" "$V1/$p" "${H[@]}" --data-binary "$3")
	else
		BODY=$(aq_curl_record "$m" "$V1/$p" "${H[@]}")
	fi
	STATUS=$(aq_last_status)
}
# expect DESC STATUS [JQ-FILTER]: the last answer has STATUS and FILTER is true.
expect() {
	local desc=$1 st=$2 filter=${3:-true}
	if [ "$STATUS" != "$st" ]; then
		fail "$desc: HTTP $STATUS, want $st" "${BODY:0:400}"
	elif ! jq -e "$filter" >/dev/null 2>&1 <<<"$BODY"; then
		fail "$desc: answer does not satisfy $filter" "${BODY:0:600}"
	else
		ok "$desc"
	fi
}
# wait_op DESC: the provider's OpAsync waiter. GET <endpoint>/{op.name} until
# done; a 404 counts as "not done yet"; error -> "Error code N, message: ...".
wait_op() {
	local desc=$1 name i
	name=$(jq -r '.name // empty' <<<"$BODY")
	if [ -z "$name" ]; then fail "$desc: the answer has no operation name" "${BODY:0:300}"; return 1; fi
	for i in $(seq 50); do
		req GET "$name"
		if [ "$STATUS" = 200 ] && [ "$(jq -r .done <<<"$BODY")" = true ]; then
			if jq -e .error >/dev/null <<<"$BODY"; then
				fail "$desc: Error code $(jq -r .error.code <<<"$BODY"), message: $(jq -r .error.message <<<"$BODY")"
				return 1
			fi
			ok "$desc: operation done"
			return 0
		fi
		sleep 0.1
	done
	fail "$desc: operation $name not done after 50 polls (last HTTP $STATUS)"
	return 1
}
# import_path ID: the provider's import formats for a pool or volume ID.
#   projects/{{project}}/locations/{{location}}/{{collection}}/{{name}}
#   {{project}}/{{location}}/{{name}}
#   {{location}}/{{name}}          (project from the provider configuration)
import_path() {
	local coll=$1 id=$2 IFS=/
	local -a parts
	read -r -a parts <<<"$id"
	case ${#parts[@]} in
	6) echo "projects/${parts[1]}/locations/${parts[3]}/$coll/${parts[5]}" ;;
	3) echo "projects/${parts[0]}/locations/${parts[1]}/$coll/${parts[2]}" ;;
	2) echo "projects/$P/locations/${parts[0]}/$coll/${parts[1]}" ;;
	*) echo "bad-import-id" ;;
	esac
}

# ---- google_netapp_storage_pool -------------------------------------------
# Body as the provider builds it: capacity_gib is a String in the schema, so
# capacityGib is a JSON string; labels are effective_labels (with the
# provider's attribution label); false booleans are omitted.
POOL_BODY='{"serviceLevel":"PREMIUM","capacityGib":"2048","labels":{"env":"test","goog-terraform-provisioned":"true"},"description":"pool from terraform","network":"projects/tf-proj/global/networks/default","allowAutoTiering":true,"qosType":"AUTO"}'
req POST "$BASE/storagePools?storagePoolId=tf-pool&alt=json" "$POOL_BODY"
expect "pool create answers an operation" 200 '.name | startswith("projects/tf-proj/locations/us-central1/operations/")'
expect "pool create operation metadata" 200 '.metadata["@type"] == "type.googleapis.com/google.cloud.netapp.v1.OperationMetadata" and .metadata.verb == "create" and .metadata.target == "projects/tf-proj/locations/us-central1/storagePools/tf-pool"'
wait_op "pool create"
expect "pool create response is the pool" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.StoragePool"'
req GET "$BASE/storagePools/tf-pool?alt=json"
expect "pool read" 200 '.name == "projects/tf-proj/locations/us-central1/storagePools/tf-pool" and .state == "READY"'
expect "pool read: int64 fields are strings" 200 '(.capacityGib == "2048") and (.volumeCapacityGib | type == "string") and (.totalThroughputMibps | type == "string")'
expect "pool read: fields as sent" 200 '.serviceLevel == "PREMIUM" and .network == "projects/tf-proj/global/networks/default" and .description == "pool from terraform" and .labels.env == "test" and .labels["goog-terraform-provisioned"] == "true" and .allowAutoTiering == true and .qosType == "AUTO"'
expect "pool read: createTime is RFC 3339" 200 '.createTime | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")'

req POST "$BASE/storagePools?storagePoolId=tf-pool&alt=json" "$POOL_BODY"
expect "duplicate pool create -> 409 ALREADY_EXISTS" 409 '.error.code == 409 and .error.status == "ALREADY_EXISTS"'

# Output-only fields in a create body are ignored, as Google ignores them.
req POST "$BASE/storagePools?storagePoolId=tf-pool-2&alt=json" '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"projects/tf-proj/global/networks/default","zone":"us-central1","name":"projects/other/locations/x/storagePools/y","state":"ERROR","createTime":"1999-01-01T00:00:00Z","volumeCount":99,"encryptionType":"CLOUD_KMS"}'
expect "create with output-only fields (and zone = the location) accepted" 200 '.done == true'
# A zone inside the location, a replica zone or an Active Directory: refused, named.
for f in 'zone:{"zone":"us-central1-a"}' 'replicaZone:{"replicaZone":"us-central1-b"}' \
	'activeDirectory:{"activeDirectory":"projects/tf-proj/locations/us-central1/activeDirectories/ad"}'; do
	req POST "$BASE/storagePools?storagePoolId=tf-pool-3&alt=json" "$(jq -c --argjson x "${f#*:}" '. + $x' <<<"$POOL_BODY")"
	expect "pool create with ${f%%:*} set -> 400 naming it" 400 ".error.status == \"INVALID_ARGUMENT\" and (.error.message | startswith(\"${f%%:*}\"))"
done
req GET "$BASE/storagePools/tf-pool-2"
expect "output-only fields were ignored" 200 '.name == "projects/tf-proj/locations/us-central1/storagePools/tf-pool-2" and .state == "READY" and (.createTime | startswith("1999") | not) and .volumeCount == 0 and .encryptionType == "SERVICE_MANAGED"'

# Update: the provider sends every settable field it knows and a mask of the
# changed ones, in schema order.
req PATCH "$BASE/storagePools/tf-pool?updateMask=capacityGib%2Cdescription%2Clabels&alt=json" \
	'{"capacityGib":"3072","labels":{"env":"prod","goog-terraform-provisioned":"true"},"description":"resized","allowAutoTiering":true,"qosType":"AUTO"}'
expect "pool update answers an operation" 200 '.metadata.verb == "update"'
wait_op "pool update"
req GET "$BASE/storagePools/tf-pool"
expect "pool update applied" 200 '.capacityGib == "3072" and .description == "resized" and .labels.env == "prod" and .serviceLevel == "PREMIUM"'
for f in serviceLevel network; do
	req PATCH "$BASE/storagePools/tf-pool?updateMask=$f" '{"serviceLevel":"EXTREME","network":"projects/tf-proj/global/networks/other"}'
	expect "immutable $f in updateMask -> 400" 400 '.error.status == "INVALID_ARGUMENT"'
done
req PATCH "$BASE/storagePools/tf-pool?updateMask=service_level" '{"serviceLevel":"EXTREME"}'
expect "immutable service_level (snake_case) -> 400" 400 '.error.status == "INVALID_ARGUMENT"'
req GET "$BASE/storagePools/tf-pool"
expect "refused updates changed nothing" 200 '.serviceLevel == "PREMIUM" and .network == "projects/tf-proj/global/networks/default"'

for id in "projects/$P/locations/$L/storagePools/tf-pool" "$P/$L/tf-pool" "$L/tf-pool"; do
	p=$(import_path storagePools "$id")
	check "pool import id $id -> $BASE/storagePools/tf-pool" test "$p" = "$BASE/storagePools/tf-pool"
	req GET "$p"
	expect "pool import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/storagePools/tf-pool"'
done

# ---- google_netapp_volume ---------------------------------------------------
# storage_pool is the pool's short name in the provider's examples
# (storage_pool = google_netapp_storage_pool.default.name).
# The HCL sets neither snapshot_directory nor snapshot_policy, so the
# provider leaves both out, as it leaves out every unset optional field.
VOL_BODY='{"shareName":"tf-vol","storagePool":"tf-pool","capacityGib":"100","exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","hasRootAccess":"true","accessType":"READ_WRITE","nfsv3":true}]},"protocols":["NFSV3"],"labels":{"goog-terraform-provisioned":"true"},"description":"volume from terraform","tieringPolicy":{"coolingThresholdDays":31,"tierAction":"ENABLED"}}'
# Settings whose feature does not exist fail the apply with the field named
# (the provider prints "Error 400: <message>"), and change nothing.
# (snapshot_policy, snapshot_directory and snapshots: test_terraform_snapshots.sh, issue 20)
for f in 'protocols:{"protocols":["NFSV3","NFSV4"]}' \
	'smbSettings:{"smbSettings":["BROWSABLE"]}' 'kerberos5ReadWrite:{"exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","kerberos5ReadWrite":true}]}}'; do
	req POST "$BASE/volumes?volumeId=tf-vol&alt=json" "$(jq -c --argjson x "${f#*:}" '. + $x' <<<"$VOL_BODY")"
	expect "volume create with ${f%%:*} set -> 400 naming it" 400 ".error.status == \"INVALID_ARGUMENT\" and (.error.message | contains(\"${f%%:*}\"))"
done
req POST "$BASE/volumes?volumeId=tf-vol&alt=json" "$VOL_BODY"
expect "volume create answers an operation" 200 '.metadata.target == "projects/tf-proj/locations/us-central1/volumes/tf-vol"'
wait_op "volume create"
expect "volume create response is the volume" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.Volume"'
req GET "$BASE/volumes/tf-vol?alt=json"
expect "volume read" 200 '.name == "projects/tf-proj/locations/us-central1/volumes/tf-vol" and .state == "READY" and .shareName == "tf-vol"'
expect "volume read: int64 fields are strings" 200 '.capacityGib == "100" and (.usedGib | type == "string")'
expect "volume read: inherited fields" 200 '.serviceLevel == "PREMIUM" and .network == "projects/tf-proj/global/networks/default"'
expect "volume read: fields as sent" 200 '.protocols == ["NFSV3"] and .exportPolicy.rules[0].allowedClients == "10.0.0.0/8" and .exportPolicy.rules[0].hasRootAccess == "true" and .tieringPolicy.coolingThresholdDays == 31 and .tieringPolicy.tierAction == "ENABLED"'
expect "volume read: no .snapshot directory, and it says so" 200 '.snapshotDirectory == false and (has("snapshotPolicy") | not)'
# Known incompatibility: GCNV returns storagePool as the configured value (the
# pool ID); aquiferd returns the full resource name, so the provider sees a
# diff on every plan. Expected failure until the server changes.
SP_XFAIL=${SP_XFAIL:-0}
sp=$(jq -r .storagePool <<<"$BODY")
if [ "$sp" = tf-pool ]; then
	[ "$SP_XFAIL" = 1 ] && fail "volume storagePool now round-trips: set SP_XFAIL=0" || ok "volume storagePool round-trips"
elif [ "$SP_XFAIL" = 1 ]; then
	echo "XFAIL: volume storagePool sent as \"tf-pool\", read back as \"$sp\" (provider would show a permanent diff)"
	ok "volume storagePool (expected failure)"
else
	fail "volume storagePool sent as tf-pool, read back as $sp"
fi

req POST "$BASE/volumes?volumeId=tf-vol&alt=json" "$VOL_BODY"
expect "duplicate volume create -> 409 ALREADY_EXISTS" 409 '.error.status == "ALREADY_EXISTS"'

# Update with snake_case tiering paths (update_mask_fields in Volume.yaml) and
# the export policy as the provider's pre_update sends it (explicit nulls).
req PATCH "$BASE/volumes/tf-vol?updateMask=capacityGib%2CexportPolicy%2Clabels%2Cdescription%2Ctiering_policy.cooling_threshold_days%2Ctiering_policy.tier_action&alt=json" \
	'{"storagePool":"tf-pool","capacityGib":"200","exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","hasRootAccess":null,"accessType":"READ_WRITE","nfsv3":true,"squashMode":"ROOT_SQUASH","anonUid":65534}]},"labels":{"goog-terraform-provisioned":"true","tier":"gold"},"description":"bigger","snapshotDirectory":false,"tieringPolicy":{"coolingThresholdDays":45,"tierAction":"PAUSED"},"throughputMibps":12.8}'
expect "volume update answers an operation" 200 '.metadata.verb == "update"'
wait_op "volume update"
req GET "$BASE/volumes/tf-vol"
expect "volume update applied" 200 '.capacityGib == "200" and .description == "bigger" and .labels.tier == "gold" and .tieringPolicy.coolingThresholdDays == 45 and .tieringPolicy.tierAction == "PAUSED"'
expect "export rule: squashMode set, hasRootAccess cleared, anonUid int64 string" 200 '.exportPolicy.rules[0].squashMode == "ROOT_SQUASH" and (.exportPolicy.rules[0] | has("hasRootAccess") | not) and .exportPolicy.rules[0].anonUid == "65534"'
req PATCH "$BASE/volumes/tf-vol?updateMask=tieringPolicy.coolingThresholdDays" '{"tieringPolicy":{"coolingThresholdDays":60}}'
wait_op "volume update (camelCase nested path)"
req GET "$BASE/volumes/tf-vol"
expect "camelCase nested path applied" 200 '.tieringPolicy.coolingThresholdDays == 60 and .tieringPolicy.tierAction == "PAUSED"'
for f in shareName protocols share_name; do
	req PATCH "$BASE/volumes/tf-vol?updateMask=$f" '{"shareName":"other","protocols":["NFSV4"]}'
	expect "immutable $f in updateMask -> 400" 400 '.error.status == "INVALID_ARGUMENT"'
done

for id in "projects/$P/locations/$L/volumes/tf-vol" "$P/$L/tf-vol" "$L/tf-vol"; do
	p=$(import_path volumes "$id")
	check "volume import id $id -> $BASE/volumes/tf-vol" test "$p" = "$BASE/volumes/tf-vol"
	req GET "$p"
	expect "volume import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/volumes/tf-vol"'
done

req GET "$BASE/volumes"
expect "volume list" 200 '.volumes | length == 1'
req GET "$BASE/storagePools?pageSize=1"
expect "pool list page 1" 200 '(.storagePools | length == 1) and (.nextPageToken | type == "string")'
tokn=$(jq -r .nextPageToken <<<"$BODY")
req GET "$BASE/storagePools?pageSize=1&pageToken=$tokn"
expect "pool list page 2" 200 '.storagePools | length == 1'
req GET "$BASE/operations"
expect "operation list" 200 '.operations | length >= 4'

# Delete order: the pool still holds the volume.
req DELETE "$BASE/storagePools/tf-pool?alt=json"
expect "delete pool with volumes -> 400 FAILED_PRECONDITION" 400 '.error.status == "FAILED_PRECONDITION"'
req DELETE "$BASE/volumes/tf-vol?force=true&alt=json"
expect "volume delete (deletion_policy FORCE) answers an operation" 200 '.metadata.verb == "delete"'
wait_op "volume delete"
expect "volume delete response is Empty" 200 '.response["@type"] == "type.googleapis.com/google.protobuf.Empty"'
req GET "$BASE/volumes/tf-vol"
expect "deleted volume reads 404 (provider drops it from state)" 404 '.error.status == "NOT_FOUND"'
for pool in tf-pool tf-pool-2; do
	req DELETE "$BASE/storagePools/$pool?alt=json"
	expect "pool $pool delete answers an operation" 200 '.metadata.verb == "delete"'
	wait_op "pool $pool delete"
done
req GET "$BASE/storagePools/tf-pool"
expect "deleted pool reads 404" 404 '.error.code == 404 and .error.status == "NOT_FOUND"'

req GET "$BASE/operations/operation-0000000000000-0000000000000000"
expect "unknown operation -> 404 NOT_FOUND" 404 '.error.status == "NOT_FOUND"'
req GET "$BASE/operations/op:cancel"
expect "GET on the :cancel custom method -> 405" 405 '.error.code == 405'

# ---- issue 20: google_netapp_volume_snapshot, volumes with snapshot_policy and restore_parameters
# Bodies as the provider builds them (magic-modules VolumeSnapshot.yaml,
# Volume.yaml): the schedules' defaults (minute 0, hour 0, day "Sunday",
# daysOfMonth "1") are sent, enabled is sent even when false
# (send_empty_value), snapshotsToKeep is an Integer; a read must give each
# back as sent (no diff at the next plan). enabled is false here so that no
# scheduled snapshot (real clock) joins the replay's; the scheduler's own
# test is test_snapshot_schedule.sh.
req POST "$BASE/storagePools?storagePoolId=tf-snap-pool&alt=json" "$POOL_BODY"
wait_op "snapshot pool create"
SNAPVOL_BODY='{"shareName":"tf-snapvol","storagePool":"tf-snap-pool","capacityGib":"100","exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","hasRootAccess":"true","accessType":"READ_WRITE","nfsv3":true}]},"protocols":["NFSV3"],"labels":{"goog-terraform-provisioned":"true"},"snapshotDirectory":true,"snapshotPolicy":{"enabled":false,"hourlySchedule":{"snapshotsToKeep":3,"minute":0},"dailySchedule":{"snapshotsToKeep":2,"minute":30,"hour":2},"weeklySchedule":{"snapshotsToKeep":1,"minute":0,"hour":0,"day":"Sunday"},"monthlySchedule":{"snapshotsToKeep":1,"minute":0,"hour":0,"daysOfMonth":"1"}}}'
req POST "$BASE/volumes?volumeId=tf-snapvol&alt=json" "$SNAPVOL_BODY"
expect "volume with snapshot_policy: create answers an operation" 200 '.metadata.verb == "create"'
wait_op "volume with snapshot_policy create"
req GET "$BASE/volumes/tf-snapvol?alt=json"
expect "volume read: snapshot_policy as sent (no diff)" 200 "(.snapshotPolicy == ($SNAPVOL_BODY).snapshotPolicy) and .snapshotDirectory == true"
req PATCH "$BASE/volumes/tf-snapvol?updateMask=snapshotPolicy&alt=json" \
	'{"storagePool":"tf-snap-pool","capacityGib":"100","snapshotPolicy":{"enabled":false,"hourlySchedule":{"snapshotsToKeep":5,"minute":15}}}'
wait_op "volume update of snapshot_policy"
req GET "$BASE/volumes/tf-snapvol?alt=json"
expect "volume read: the updated snapshot_policy replaces the old" 200 '.snapshotPolicy == {"enabled":false,"hourlySchedule":{"snapshotsToKeep":5,"minute":15}}'
req PATCH "$BASE/volumes/tf-snapvol?updateMask=snapshotPolicy&alt=json" '{"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"minute":0,"hour":1}}}'
expect "snapshot_policy with a field of another schedule -> 400 naming it" 400 '.error.status == "INVALID_ARGUMENT" and (.error.message | contains("snapshotPolicy.hourlySchedule.hour"))'

# google_netapp_volume_snapshot: create ?snapshotId=, OpAsync, read, update, import, delete
SNAP_BODY='{"description":"snapshot from terraform","labels":{"goog-terraform-provisioned":"true","env":"test"}}'
req POST "$BASE/volumes/tf-snapvol/snapshots?snapshotId=tf-snap&alt=json" "$SNAP_BODY"
expect "snapshot create answers an operation" 200 '.metadata.verb == "create" and .metadata.target == "projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap"'
wait_op "snapshot create"
expect "snapshot create response is the snapshot" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.Snapshot" and .response.state == "READY"'
req GET "$BASE/volumes/tf-snapvol/snapshots/tf-snap?alt=json"
expect "snapshot read: fields as sent (no diff)" 200 ".name == \"projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap\" and .description == ($SNAP_BODY).description and .labels == ($SNAP_BODY).labels and .state == \"READY\" and (.usedBytes | type == \"number\")"
req POST "$BASE/volumes/tf-snapvol/snapshots?snapshotId=tf-snap&alt=json" "$SNAP_BODY"
expect "duplicate snapshot create -> 409 ALREADY_EXISTS" 409 '.error.status == "ALREADY_EXISTS"'
req PATCH "$BASE/volumes/tf-snapvol/snapshots/tf-snap?updateMask=description%2Clabels&alt=json" \
	'{"description":"changed","labels":{"goog-terraform-provisioned":"true","env":"prod"}}'
expect "snapshot update answers an operation" 200 '.metadata.verb == "update"'
wait_op "snapshot update"
req GET "$BASE/volumes/tf-snapvol/snapshots/tf-snap?alt=json"
expect "snapshot update applied (no diff)" 200 '.description == "changed" and .labels.env == "prod"'
for id in "projects/$P/locations/$L/volumes/tf-snapvol/snapshots/tf-snap" "$P/$L/tf-snapvol/tf-snap" "$L/tf-snapvol/tf-snap"; do
	IFS=/ read -r -a parts <<<"$id"
	case ${#parts[@]} in
	8) p="projects/${parts[1]}/locations/${parts[3]}/volumes/${parts[5]}/snapshots/${parts[7]}" ;;
	4) p="projects/${parts[0]}/locations/${parts[1]}/volumes/${parts[2]}/snapshots/${parts[3]}" ;;
	3) p="projects/$P/locations/${parts[0]}/volumes/${parts[1]}/snapshots/${parts[2]}" ;;
	*) p=bad-import-id ;;
	esac
	req GET "$p?alt=json"
	expect "snapshot import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap"'
done
req GET "$BASE/volumes/tf-snapvol/snapshots"
expect "snapshot list" 200 '[.snapshots[].name] == ["projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap"]'

# google_netapp_volume with restore_parameters (a clone; ignore_read: reads
# may give it back or not, the provider ignores it)
CLONE_BODY='{"shareName":"tf-clone","storagePool":"tf-snap-pool","capacityGib":"100","protocols":["NFSV3"],"labels":{"goog-terraform-provisioned":"true"},"restoreParameters":{"sourceSnapshot":"projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap"}}'
req POST "$BASE/volumes?volumeId=tf-clone&alt=json" "$CLONE_BODY"
expect "volume with restore_parameters: create answers an operation" 200 '.metadata.verb == "create"'
wait_op "clone create"
req GET "$BASE/volumes/tf-clone?alt=json"
expect "clone read: cloneDetails" 200 '.state == "READY" and .cloneDetails.sourceSnapshot == "projects/tf-proj/locations/us-central1/volumes/tf-snapvol/snapshots/tf-snap" and .cloneDetails.sourceVolume == "projects/tf-proj/locations/us-central1/volumes/tf-snapvol"'
req DELETE "$BASE/volumes/tf-snapvol/snapshots/tf-snap?alt=json"
expect "the clone's source snapshot cannot be deleted -> 400 FAILED_PRECONDITION" 400 '.error.status == "FAILED_PRECONDITION"'
req DELETE "$BASE/volumes/tf-clone?alt=json"
wait_op "clone delete"
req DELETE "$BASE/volumes/tf-snapvol?alt=json"
expect "volume with snapshots, deletion_policy DEFAULT -> 400 FAILED_PRECONDITION" 400 '.error.status == "FAILED_PRECONDITION" and (.error.message | contains("force=true"))'
req DELETE "$BASE/volumes/tf-snapvol/snapshots/tf-snap?alt=json"
expect "snapshot delete answers an operation" 200 '.metadata.verb == "delete"'
wait_op "snapshot delete"
expect "snapshot delete response is Empty" 200 '.response["@type"] == "type.googleapis.com/google.protobuf.Empty"'
req GET "$BASE/volumes/tf-snapvol/snapshots/tf-snap"
expect "deleted snapshot reads 404 (provider drops it from state)" 404 '.error.status == "NOT_FOUND"'
req DELETE "$BASE/volumes/tf-snapvol?alt=json"
wait_op "snapshot volume delete"
req DELETE "$BASE/storagePools/tf-snap-pool?alt=json"
wait_op "snapshot pool delete"

# Every answer above against the spec.
if node "$AQ_SRC/tests/openapi/validate.js" --spec "$AQ_SRC/openapi/openapi.yaml" "$AQ_RECORD_DIR" >"$AQ_TMP/validate.log" 2>&1; then
	ok "all $(ls "$AQ_RECORD_DIR" | wc -l) recorded answers match the spec"
else
	fail "recorded answers match the spec"
fi
tail -n 30 "$AQ_TMP/validate.log"
aq_finish
