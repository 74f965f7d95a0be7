#!/usr/bin/env bash
# tests/e2e/test_terraform_replay.sh: replay the request sequence of the
# Terraform google provider's google_netapp_storage_pool and
# google_netapp_volume resources (shared/reference/gcnv.md §5) against a real
# aquiferd, with the provider's field names and JSON types: create with
# ?storagePoolId= / ?volumeId=, poll GET /v1/{operation.name} until done, read
# the resource, PATCH with the updateMask the provider builds, import by the
# three ID forms, delete (volumes with force=true). Every answer is recorded
# (tests/openapi/record.sh) and validated against openapi/openapi.yaml at the end.
# Then the provider's own acceptance samples (magic-modules
# Storage_pool_create and resource_netapp_{storage_pool,volume}_test:
# basic, full, update), with the exact bodies its generated code sends, and
# after each apply the read-back compared field by field with what was sent
# (the empty plan the acceptance tests require), import by ID and destroy.
# Snapshots: the google_netapp_volume_snapshot block below replays them;
# backup vaults, policies and backups: the google_netapp_backup_vault,
# google_netapp_backup_policy and google_netapp_backup blocks after it.
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
	for i in $(seq 600); do
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
	fail "$desc: operation $name not done after 600 polls (last HTTP $STATUS)"
	return 1
}
# import_path COLL ID: the provider's import formats for the ID of a
# resource of collection COLL (a pool, volume, backup vault or policy).
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
# import_path_sub PARENT COLL ID: the same for a resource under another
# (a snapshot under its volume, a backup under its vault).
#   projects/{{project}}/locations/{{location}}/{{parent}}/{{p}}/{{collection}}/{{name}}
#   {{project}}/{{location}}/{{p}}/{{name}}
#   {{location}}/{{p}}/{{name}}
import_path_sub() {
	local parent=$1 coll=$2 id=$3 IFS=/
	local -a parts
	read -r -a parts <<<"$id"
	case ${#parts[@]} in
	8) echo "projects/${parts[1]}/locations/${parts[3]}/$parent/${parts[5]}/$coll/${parts[7]}" ;;
	4) echo "projects/${parts[0]}/locations/${parts[1]}/$parent/${parts[2]}/$coll/${parts[3]}" ;;
	3) echo "projects/$P/locations/${parts[0]}/$parent/${parts[1]}/$coll/${parts[2]}" ;;
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
# (snapshot_policy, snapshot_directory and snapshots: the google_netapp_volume_snapshot block below)
# (protocols NFSV3+NFSV4 are served since issue 19)
for f in 'smbSettings:{"smbSettings":["BROWSABLE"]}' 'kerberos5ReadWrite:{"exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","kerberos5ReadWrite":true}]}}'; do
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
expect "volume read: storagePool as sent (the pool's ID)" 200 '.storagePool == "tf-pool"'

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

# ---- the provider's acceptance samples, as its generated code sends them ---
# no_diff DESC SENT FIELDS DEFAULTED: the plan after an apply. The provider
# reads the resource (the last answer) and compares every field it knows with
# the configuration it sent: FIELDS always, DEFAULTED (default_from_api) only
# when the configuration sets them. A zero value (false, "", [], {}) is the
# same as an absent one; numbers and int64 strings compare as text.
no_diff() {
	local desc=$1 sent=$2 fields=$3 dfl=$4 d
	d=$(jq -nc --argjson s "$sent" --argjson r "$BODY" --argjson f "$fields" --argjson df "$dfl" '
		def zero: . == null or . == false or . == "" or . == [] or . == {};
		def z: walk(if type == "object" then with_entries(select(.value | zero | not))
			    elif type == "number" then tostring else . end) | if zero then null else . end;
		[($f[] | select(($s[.] | z) != ($r[.] | z))), ($df[] as $k | select($s | has($k)) | $k | select(($s[.] | z) != ($r[.] | z)))]
		| map({field: ., sent: $s[.], read: $r[.]})' 2>&1)
	if [ "$d" = "[]" ]; then ok "$desc: read back as sent (empty plan)"; else fail "$desc: the plan would show a diff" "$d"; fi
}
# StoragePool.yaml: what the provider reads into state (output-only and
# ignore_read fields aside), and its default_from_api fields.
POOL_READ='["serviceLevel","capacityGib","description","labels","network","activeDirectory","kmsConfig","ldapEnabled","replicaZone","allowAutoTiering","hotTierSizeGib"]'
POOL_DFL='["zone","customPerformanceEnabled","totalThroughputMibps","totalIops","qosType","type","scaleType","mode"]'
# Volume.yaml, likewise (restoreParameters is ignore_read).
VOL_READ='["shareName","storagePool","capacityGib","exportPolicy","protocols","labels","description","snapshotDirectory","kerberosEnabled","restrictedActions","snapshotPolicy","backupConfig","tieringPolicy","largeCapacity","multipleEndpoints"]'
VOL_DFL='["smbSettings","unixPermissions","securityStyle","throughputMibps"]'
NET=projects/$P/global/networks/tf-net
TFL='{"goog-terraform-provisioned":"true"}'
# apply DESC METHOD PATH BODY NAME READ DFL: one apply: the request, the
# operation, the read, the plan after it.
apply() {
	local desc=$1 m=$2 p=$3 body=$4 name=$5 fields=$6 dfl=$7
	req "$m" "$p" "$body"
	expect "$desc: answers an operation" 200 '.name | contains("/operations/")'
	wait_op "$desc" || return 1
	req GET "$name"
	expect "$desc: read" 200 '.state == "READY"'
	no_diff "$desc" "$body" "$fields" "$dfl"
}
# import NAME FIELDS: terraform import by ID (GET), then ImportStateVerify:
# the imported state equals the applied one.
import_verify() {
	local name=$1 fields=$2 applied=$BODY
	req GET "$name"
	expect "import $name" 200 '.name == "'"$name"'"'
	no_diff "import $name (ImportStateVerify)" "$applied" "$fields" '[]'
}

# Storage_pool_create (basic): network = google_compute_network.x.id; the
# provider adds its attribution label on create.
SP_BASIC=$(jq -nc --arg n "$NET" --argjson l "$TFL" '{serviceLevel:"PREMIUM",capacityGib:"2048",network:$n,labels:$l}')
apply "pool basic" POST "$BASE/storagePools?storagePoolId=tf-sp-basic&alt=json" "$SP_BASIC" "$BASE/storagePools/tf-sp-basic" "$POOL_READ" "$POOL_DFL"
import_verify "$BASE/storagePools/tf-sp-basic" "$POOL_READ"
# enable_hot_tier_auto_resize = false in a PREMIUM pool's config: the field is
# send_empty_value, so the provider sends the false; it is ignore_read.
apply "pool with enable_hot_tier_auto_resize = false" POST "$BASE/storagePools?storagePoolId=tf-sp-hot&alt=json" \
	"$(jq -c '. + {enableHotTierAutoResize:false}' <<<"$SP_BASIC")" "$BASE/storagePools/tf-sp-hot" "$POOL_READ" "$POOL_DFL"
req POST "$BASE/storagePools?storagePoolId=tf-sp-hot2&alt=json" "$(jq -c '. + {enableHotTierAutoResize:true}' <<<"$SP_BASIC")"
expect "enableHotTierAutoResize true on a PREMIUM pool -> 400 naming it" 400 '.error.status == "INVALID_ARGUMENT" and (.error.message | contains("enableHotTierAutoResize"))'
# resource_netapp_storage_pool_test: full, then update (capacity and
# description change). active_directory = "", kms_config = "" and
# ldap_enabled = false are empty values the provider leaves out.
SP_FULL=$(jq -nc --arg n "$NET" --argjson l "$TFL" '{serviceLevel:"PREMIUM",capacityGib:"2048",description:"this is a test description",network:$n,labels:($l + {key:"test",value:"pool"})}')
apply "pool full" POST "$BASE/storagePools?storagePoolId=tf-sp-full&alt=json" "$SP_FULL" "$BASE/storagePools/tf-sp-full" "$POOL_READ" "$POOL_DFL"
import_verify "$BASE/storagePools/tf-sp-full" "$POOL_READ"
# The update body carries every updatable field from the state (the
# default_from_api ones as read), the mask only the changed ones.
SP_UPD=$(jq -c '{capacityGib:"4096",description:"this is test",labels,totalThroughputMibps,qosType}' <<<"$BODY")
apply "pool update" PATCH "$BASE/storagePools/tf-sp-full?updateMask=capacityGib%2Cdescription&alt=json" "$SP_UPD" \
	"$BASE/storagePools/tf-sp-full" '["capacityGib","description","labels"]' '["qosType"]'
no_diff "pool update: the rest of the full config" "$SP_FULL" '["serviceLevel","network","activeDirectory","kmsConfig","ldapEnabled","allowAutoTiering"]' '[]'
import_verify "$BASE/storagePools/tf-sp-full" "$POOL_READ"

# resource_netapp_volume_test, TestAccNetappVolume_NetappVolumeBasicExample_update:
# two pools (PREMIUM, EXTREME), the basic volume, then full, then update
# (which moves it to the EXTREME pool).
apply "volume test pool" POST "$BASE/storagePools?storagePoolId=tf-vp&alt=json" "$SP_BASIC" "$BASE/storagePools/tf-vp" "$POOL_READ" "$POOL_DFL"
apply "volume test pool 2" POST "$BASE/storagePools?storagePoolId=tf-vp2&alt=json" "$(jq -c '.serviceLevel = "EXTREME"' <<<"$SP_BASIC")" \
	"$BASE/storagePools/tf-vp2" "$POOL_READ" "$POOL_DFL"
VN=$BASE/volumes/tf-test-volume
# basic: storage_pool = google_netapp_storage_pool.default.name;
# kerberos_enabled's default false is an empty value, left out.
V_BASIC=$(jq -nc --argjson l "$TFL" '{shareName:"tf-test-volume",storagePool:"tf-vp",capacityGib:"100",protocols:["NFSV3"],labels:$l}')
apply "volume basic" POST "$BASE/volumes?volumeId=tf-test-volume&alt=json" "$V_BASIC" "$VN" "$VOL_READ" "$VOL_DFL"
check "volume basic: no .snapshot directory unless asked (snapshotDirectory false)" test "$(jq -r '.snapshotDirectory // false' <<<"$BODY")" = false
import_verify "$VN" "$VOL_READ"
# full: the update body carries every updatable field of the config (false
# and empty values left out, squashMode sent as an explicit null by the
# provider's pre_update), the mask the changed ones. The sample's
# snapshot_policy (enabled, schedules) is sent on its own below, read back as
# sent, then dropped as the update sample drops it (the scheduler runs on the
# real clock here, so no scheduled snapshot joins the replay;
# test_snapshot_schedule.sh tests the scheduler on a test clock).
TPUT=$(jq -c '.throughputMibps' <<<"$BODY")
V_FULL=$(jq -nc --argjson l "$TFL" --argjson t "$TPUT" '{storagePool:"tf-vp",capacityGib:"100",
	exportPolicy:{rules:[{allowedClients:"0.0.0.0/0",hasRootAccess:"false",accessType:"READ_ONLY",nfsv3:true,squashMode:null},
			     {allowedClients:"10.2.3.4,10.2.3.5",hasRootAccess:"true",accessType:"READ_WRITE",nfsv3:true,squashMode:null}]},
	unixPermissions:"0770",labels:($l + {key:"test",value:"pool"}),description:"This is a test description",securityStyle:"UNIX",throughputMibps:$t}')
apply "volume full" PATCH "$VN?updateMask=exportPolicy%2CunixPermissions%2Clabels%2Cdescription&alt=json" "$V_FULL" "$VN" \
	"$(jq -c '. - ["shareName","protocols"]' <<<"$VOL_READ")" '["unixPermissions","securityStyle"]'
SP='{"dailySchedule":{"snapshotsToKeep":2},"enabled":true,"hourlySchedule":{"snapshotsToKeep":2},"monthlySchedule":{"snapshotsToKeep":4},"weeklySchedule":{"snapshotsToKeep":2}}'
req PATCH "$VN?updateMask=snapshotPolicy&alt=json" "{\"snapshotPolicy\":$SP}"
expect "volume full: snapshot_policy answers an operation" 200 '.metadata.verb == "update"'
wait_op "volume full: snapshot_policy"
req GET "$VN"
expect "volume full: snapshot_policy reads back as sent (no diff)" 200 "[.snapshotPolicy | (.enabled, .hourlySchedule.snapshotsToKeep, .dailySchedule.snapshotsToKeep, .weeklySchedule.snapshotsToKeep, .monthlySchedule.snapshotsToKeep)] == [true, 2, 2, 2, 4]"
# The update sample drops the block: the provider names it in the mask with
# no value, which removes the policy (and stops its schedules).
req PATCH "$VN?updateMask=snapshotPolicy&alt=json" '{}'
wait_op "volume full: snapshot_policy dropped from the config"
req GET "$VN"
expect "volume: a dropped snapshot_policy reads back absent (no diff, no schedule)" 200 'has("snapshotPolicy") | not'
req GET "$VN"
import_verify "$VN" "$VOL_READ"
# The provider plans snapshot_directory true -> false when a config drops it:
# updateMask=snapshotDirectory with no value, which is false (its proto default).
req PATCH "$VN?updateMask=snapshotDirectory&alt=json" "$(jq -c 'del(.snapshotDirectory)' <<<"$V_FULL")"
wait_op "snapshotDirectory named in the mask without a value"
req GET "$VN"
expect "snapshotDirectory named without a value reads back false, not a default true" 200 '(.snapshotDirectory // false) == false'
# update: capacity 200, moved to default2 (EXTREME), one rule, labels {} and
# description "" (left out of the body, named in the mask: cleared).
TPUT=$(jq -c '.throughputMibps' <<<"$BODY")
V_UPD=$(jq -nc --argjson l "$TFL" --argjson t "$TPUT" '{storagePool:"tf-vp2",capacityGib:"200",
	exportPolicy:{rules:[{allowedClients:"0.0.0.0/0",hasRootAccess:"true",accessType:"READ_WRITE",nfsv3:true,squashMode:null}]},
	unixPermissions:"0740",labels:$l,securityStyle:"UNIX",throughputMibps:$t}')
apply "volume update" PATCH "$VN?updateMask=storagePool%2CcapacityGib%2CexportPolicy%2CunixPermissions%2Clabels%2Cdescription&alt=json" "$V_UPD" "$VN" \
	"$(jq -c '. - ["shareName","protocols"]' <<<"$VOL_READ")" '["unixPermissions","securityStyle"]'
expect "volume update: moved to the EXTREME pool" 200 '.serviceLevel == "EXTREME"'
import_verify "$VN" "$VOL_READ"
# The sample's snapshot_directory = true: a .snapshot directory needs
# snapshots; until the volume has them it is refused with its name, and once
# snapshots exist it must read back true.
req PATCH "$VN?updateMask=snapshotDirectory&alt=json" '{"snapshotDirectory":true}'
if [ "$STATUS" = 400 ]; then
	expect "snapshot_directory = true refused, named" 400 '.error.message | contains("snapshotDirectory")'
else
	wait_op "snapshot_directory = true"
	req GET "$VN"
	expect "snapshot_directory = true reads back true" 200 '.snapshotDirectory == true'
fi
# storage_pool = google_netapp_storage_pool.default2.id (the full name): read
# back as sent, and the pool counts the volume.
SPFULL=projects/$P/locations/$L/storagePools/tf-vp2
apply "volume with storage_pool = pool.id" POST "$BASE/volumes?volumeId=tf-vol-id&alt=json" \
	"$(jq -nc --arg sp "$SPFULL" --argjson l "$TFL" '{shareName:"tf-vol-id",storagePool:$sp,capacityGib:"100",protocols:["NFSV3"],labels:$l}')" \
	"$BASE/volumes/tf-vol-id" "$VOL_READ" "$VOL_DFL"
import_verify "$BASE/volumes/tf-vol-id" "$VOL_READ"
req GET "$BASE/storagePools/tf-vp2"
expect "the pool counts volumes named by ID and by full name" 200 '.volumeCount == 2 and .volumeCapacityGib == "300"'
req DELETE "$BASE/storagePools/tf-vp2?alt=json"
expect "pool holding a volume named by its full name -> 400 FAILED_PRECONDITION" 400 '.error.status == "FAILED_PRECONDITION"'

# destroy: volumes (deletion_policy = "FORCE"), then the pools; each reads 404.
for v in tf-test-volume tf-vol-id; do
	req DELETE "$BASE/volumes/$v?force=true&alt=json"
	expect "destroy volume $v" 200 '.metadata.verb == "delete"'
	wait_op "destroy volume $v"
	req GET "$BASE/volumes/$v"
	expect "destroyed volume $v reads 404" 404 '.error.status == "NOT_FOUND"'
done
for pool in tf-sp-basic tf-sp-hot tf-sp-full tf-vp tf-vp2; do
	req DELETE "$BASE/storagePools/$pool?alt=json"
	expect "destroy pool $pool" 200 '.metadata.verb == "delete"'
	wait_op "destroy pool $pool"
	req GET "$BASE/storagePools/$pool"
	expect "destroyed pool $pool reads 404" 404 '.error.status == "NOT_FOUND"'
done

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
	p=$(import_path_sub volumes snapshots "$id")
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

# google_netapp_backup_vault (magic-modules BackupVault.yaml): create
# ?backupVaultId=, OpAsync, read (backup_vault_type default_from_api),
# update with the mask of the changed fields, import by the three ID forms,
# delete. The bodies are those the generated code sends (labels with
# goog-terraform-provisioned; retention days an integer).
BV_BODY='{"description":"Terraform created vault","labels":{"goog-terraform-provisioned":"true","creator":"testuser"},"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":2,"dailyBackupImmutable":true,"weeklyBackupImmutable":false,"monthlyBackupImmutable":false,"manualBackupImmutable":false}}'
req POST "$BASE/backupVaults?backupVaultId=tf-vault&alt=json" "$BV_BODY"
expect "backup vault create answers an operation" 200 '.metadata.verb == "create" and .metadata.target == "projects/tf-proj/locations/us-central1/backupVaults/tf-vault"'
wait_op "backup vault create"
expect "backup vault create response is the vault" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.BackupVault" and .response.state == "READY"'
req GET "$BASE/backupVaults/tf-vault?alt=json"
expect "backup vault read: fields as sent (no diff), type from the API" 200 ".description == ($BV_BODY).description and .labels == ($BV_BODY).labels and .backupRetentionPolicy == ($BV_BODY).backupRetentionPolicy and .backupVaultType == \"IN_REGION\" and (.createTime | length > 0)"
req PATCH "$BASE/backupVaults/tf-vault?updateMask=description%2Clabels%2CbackupRetentionPolicy&alt=json" \
	'{"description":"changed","labels":{"goog-terraform-provisioned":"true","creator":"testuser2"},"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":4,"dailyBackupImmutable":true,"weeklyBackupImmutable":true,"monthlyBackupImmutable":false,"manualBackupImmutable":false}}'
expect "backup vault update answers an operation" 200 '.metadata.verb == "update"'
wait_op "backup vault update"
req GET "$BASE/backupVaults/tf-vault?alt=json"
expect "backup vault update applied (no diff)" 200 '.description == "changed" and .labels.creator == "testuser2" and .backupRetentionPolicy.backupMinimumEnforcedRetentionDays == 4 and .backupRetentionPolicy.weeklyBackupImmutable == true'
for id in "projects/$P/locations/$L/backupVaults/tf-vault" "$P/$L/tf-vault" "$L/tf-vault"; do
	p=$(import_path backupVaults "$id")
	req GET "$p?alt=json"
	expect "backup vault import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/backupVaults/tf-vault"'
done
req POST "$BASE/backupVaults?backupVaultId=tf-vault&alt=json" "$BV_BODY"
expect "duplicate backup vault create -> 409 ALREADY_EXISTS" 409 '.error.status == "ALREADY_EXISTS"'

# google_netapp_backup_policy (BackupPolicy.yaml)
BPOL_BODY='{"dailyBackupLimit":2,"weeklyBackupLimit":1,"monthlyBackupLimit":1,"description":"TF test backup schedule","enabled":true,"labels":{"goog-terraform-provisioned":"true","foo":"bar"}}'
req POST "$BASE/backupPolicies?backupPolicyId=tf-policy&alt=json" "$BPOL_BODY"
expect "backup policy create answers an operation" 200 '.metadata.verb == "create"'
wait_op "backup policy create"
expect "backup policy create response is the policy" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.BackupPolicy"'
req GET "$BASE/backupPolicies/tf-policy?alt=json"
expect "backup policy read: fields as sent (no diff)" 200 "[.dailyBackupLimit, .weeklyBackupLimit, .monthlyBackupLimit, .description, .enabled, .labels] == [($BPOL_BODY) | .dailyBackupLimit, .weeklyBackupLimit, .monthlyBackupLimit, .description, .enabled, .labels] and .assignedVolumeCount == 0 and .state == \"READY\""
req PATCH "$BASE/backupPolicies/tf-policy?updateMask=dailyBackupLimit%2CweeklyBackupLimit%2CmonthlyBackupLimit%2Cenabled&alt=json" \
	'{"dailyBackupLimit":6,"weeklyBackupLimit":2,"monthlyBackupLimit":3,"enabled":false}'
wait_op "backup policy update"
req GET "$BASE/backupPolicies/tf-policy?alt=json"
expect "backup policy update applied (no diff)" 200 '[.dailyBackupLimit, .weeklyBackupLimit, .monthlyBackupLimit, .enabled] == [6, 2, 3, false]'
for id in "projects/$P/locations/$L/backupPolicies/tf-policy" "$P/$L/tf-policy" "$L/tf-policy"; do
	p=$(import_path backupPolicies "$id")
	req GET "$p?alt=json"
	expect "backup policy import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/backupPolicies/tf-policy"'
done
req DELETE "$BASE/backupPolicies/tf-policy?alt=json"
wait_op "backup policy delete"
expect "backup policy delete response is Empty" 200 '.response["@type"] == "type.googleapis.com/google.protobuf.Empty"'
req GET "$BASE/backupPolicies/tf-policy"
expect "deleted backup policy reads 404" 404 '.error.status == "NOT_FOUND"'
# google_netapp_backup (magic-modules Backup.yaml, sample netapp_backup):
# a volume, a backup of it into the vault (source_volume = the volume's id),
# OpAsync until READY, read, update (description, labels), import by the
# three ID forms, delete; then the volume and its pool. The vault holds the
# backup meanwhile: deleting it is refused.
req POST "$BASE/storagePools?storagePoolId=tf-bk-pool&alt=json" "$POOL_BODY"
wait_op "backup: pool create"
# the volume carries backup_config { backup_policies, backup_vault,
# scheduled_backup_enabled = true } (magic-modules Volume.yaml), read back
# without a diff; then an update turns the schedule off (the real clock's
# next daily slot is hours away: nothing is scheduled meanwhile)
req POST "$BASE/backupPolicies?backupPolicyId=tf-bk-policy&alt=json" "$BPOL_BODY"
wait_op "backup: policy create"
BC='{"backupPolicies":["projects/tf-proj/locations/us-central1/backupPolicies/tf-bk-policy"],"backupVault":"projects/tf-proj/locations/us-central1/backupVaults/tf-vault","scheduledBackupEnabled":true}'
req POST "$BASE/volumes?volumeId=tf-bkvol&alt=json" "{\"shareName\":\"tf-bkvol\",\"storagePool\":\"tf-bk-pool\",\"capacityGib\":\"100\",\"protocols\":[\"NFSV3\"],\"labels\":{\"goog-terraform-provisioned\":\"true\"},\"backupConfig\":$BC}"
wait_op "backup: volume create with backup_config"
expect "volume with backup_config { scheduled_backup_enabled = true } is created" 200 '.done and (has("error") | not)'
req GET "$BASE/volumes/tf-bkvol?alt=json"
expect "volume backup_config read: as sent (no diff), backupChainBytes output" 200 "(.backupConfig | del(.backupChainBytes)) == $BC and .backupConfig.backupChainBytes == \"0\""
req GET "$BASE/backupPolicies/tf-bk-policy?alt=json"
expect "the policy counts the volume (assigned_volume_count)" 200 '.assignedVolumeCount == 1'
req PATCH "$BASE/volumes/tf-bkvol?updateMask=backupConfig.scheduledBackupEnabled&alt=json" '{"backupConfig":{"scheduledBackupEnabled":false}}'
wait_op "backup: volume update backup_config"
req GET "$BASE/volumes/tf-bkvol?alt=json"
expect "volume backup_config update applied (no diff)" 200 '.backupConfig.scheduledBackupEnabled == false and (.backupConfig.backupPolicies | length) == 1'
BK_BODY='{"description":"Terraform created backup","labels":{"goog-terraform-provisioned":"true","creator":"testuser"},"sourceVolume":"projects/tf-proj/locations/us-central1/volumes/tf-bkvol"}'
req POST "$BASE/backupVaults/tf-vault/backups?backupId=tf-backup&alt=json" "$BK_BODY"
expect "backup create answers an operation" 200 '.metadata.verb == "create" and .metadata.target == "projects/tf-proj/locations/us-central1/backupVaults/tf-vault/backups/tf-backup"'
wait_op "backup create"
expect "backup create response is the READY backup" 200 '.response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.Backup" and .response.state == "READY"'
req GET "$BASE/backupVaults/tf-vault/backups/tf-backup?alt=json"
expect "backup read: fields as sent (no diff), outputs set" 200 ".description == ($BK_BODY).description and .labels == ($BK_BODY).labels and .sourceVolume == ($BK_BODY).sourceVolume and .backupType == \"MANUAL\" and (.volumeUsageBytes | test(\"^[0-9]+$\")) and (.chainStorageBytes | test(\"^[0-9]+$\")) and (.createTime | length > 0)"
req PATCH "$BASE/backupVaults/tf-vault/backups/tf-backup?updateMask=description%2Clabels&alt=json" \
	'{"description":"changed","labels":{"goog-terraform-provisioned":"true","creator":"testuser2"}}'
expect "backup update answers an operation" 200 '.metadata.verb == "update"'
wait_op "backup update"
req GET "$BASE/backupVaults/tf-vault/backups/tf-backup?alt=json"
expect "backup update applied (no diff)" 200 '.description == "changed" and .labels.creator == "testuser2"'
CH=$(jq -r .chainStorageBytes <<<"$BODY")
req GET "$BASE/volumes/tf-bkvol?alt=json"
expect "the volume's backup_config.backup_chain_bytes is its chain's ($CH)" 200 ".backupConfig.backupChainBytes == \"$CH\""
for id in "projects/$P/locations/$L/backupVaults/tf-vault/backups/tf-backup" "$P/$L/tf-vault/tf-backup" "$L/tf-vault/tf-backup"; do
	p=$(import_path_sub backupVaults backups "$id")
	req GET "$p?alt=json"
	expect "backup import read ($id)" 200 '.name == "projects/tf-proj/locations/us-central1/backupVaults/tf-vault/backups/tf-backup"'
done
req DELETE "$BASE/backupVaults/tf-vault?alt=json"
expect "a vault holding a backup is not deleted" 400 '.error.status == "FAILED_PRECONDITION"'
req DELETE "$BASE/backupVaults/tf-vault/backups/tf-backup?alt=json"
wait_op "backup delete"
expect "backup delete response is Empty" 200 '.response["@type"] == "type.googleapis.com/google.protobuf.Empty"'
req GET "$BASE/backupVaults/tf-vault/backups/tf-backup"
expect "deleted backup reads 404" 404 '.error.status == "NOT_FOUND"'
# scheduled_backup_enabled = true without a policy has no effect: refused
# by name, never accepted without it.
req POST "$BASE/volumes?volumeId=tf-bkvol2&alt=json" '{"shareName":"tf-bkvol2","storagePool":"tf-bk-pool","capacityGib":"100","protocols":["NFSV3"],"backupConfig":{"scheduledBackupEnabled":true}}'
expect "volume with backup_config { scheduled_backup_enabled = true } and no policy -> 400 naming it" 400 '.error.status == "INVALID_ARGUMENT" and (.error.message | contains("backupConfig.scheduledBackupEnabled"))'
req DELETE "$BASE/volumes/tf-bkvol?alt=json"
wait_op "backup: volume delete"
req DELETE "$BASE/backupPolicies/tf-bk-policy?alt=json"
wait_op "backup: policy delete"
req DELETE "$BASE/storagePools/tf-bk-pool?alt=json"
wait_op "backup: pool delete"
req DELETE "$BASE/backupVaults/tf-vault?alt=json"
wait_op "backup vault delete"
expect "backup vault delete response is Empty" 200 '.response["@type"] == "type.googleapis.com/google.protobuf.Empty"'
req GET "$BASE/backupVaults/tf-vault"
expect "deleted backup vault reads 404" 404 '.error.status == "NOT_FOUND"'

# Every answer above against the spec.
if node "$AQ_SRC/tests/openapi/validate.js" --spec "$AQ_SRC/openapi/openapi.yaml" "$AQ_RECORD_DIR" >"$AQ_TMP/validate.log" 2>&1; then
	ok "all $(ls "$AQ_RECORD_DIR" | wc -l) recorded answers match the spec"
else
	fail "recorded answers match the spec"
fi
tail -n 30 "$AQ_TMP/validate.log"
aq_finish
