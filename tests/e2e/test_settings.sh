#!/usr/bin/env bash
# test_settings.sh: accepted settings have their effect (issue 15, item 16).
# A field whose feature does not exist is refused with INVALID_ARGUMENT
# naming it (and the value) and stores nothing; its "off" value is accepted,
# on create and in a PATCH. The cheap ones work: restrictedActions DELETE
# blocks deletes; an export rule with nfsv3 false does not let NFSv3 clients
# in (libnfs's nfs-ls and nfs-cp over a real agent).
. "$(dirname "$0")/lib.sh"

for tool in nfs-ls nfs-cp; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done

aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=set" '{}'
P=/v1/projects/set/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT

BASE='{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"s",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
with() { jq -c --argjson x "$1" '. + $x' <<<"$BASE"; }
rule_with() { jq -c --argjson x "$1" '.exportPolicy.rules[0] += $x' <<<"$BASE"; }
url() { echo "nfs://127.0.0.1/$1${2:-}?version=3&nfsport=$NFS&mountport=$NFS"; }

# --- refused until implemented, each named ------------------------------------
refuse() { # refuse NEEDLE BODY
	aq_req POST "$P/volumes?volumeId=refused" "$2"
	expect_error 400 INVALID_ARGUMENT "$1 is refused"
	expect_true ".error.message | contains(\"$1\")" "the refusal names $1"
}
# issue 19: NFSv4.1 is served (agent/nfs4/): GCNV's sets with NFSV4 are taken
for ps in '["NFSV4"]' '["NFSV3","NFSV4"]' '["SMB","NFSV4"]'; do
	aq_req POST "$P/volumes?volumeId=v4&validateOnly=true" "$(with "{\"protocols\":$ps}")"
	expect_status 200 "protocols $ps are accepted"
done
refuse smbSettings "$(with '{"smbSettings":["BROWSABLE"]}')"
# issue 20: snapshots exist; a policy or snapshotDirectory is taken, a bad schedule refused
refuse snapshotPolicy.hourlySchedule.snapshotsToKeep "$(with '{"snapshotPolicy":{"enabled":true,"hourlySchedule":{"minute":5}}}')"
refuse backupConfig.backupVault "$(with '{"backupConfig":{"backupVault":"projects/set/locations/east/backupVaults/v"}}')"
refuse backupConfig.scheduledBackupEnabled "$(with '{"backupConfig":{"scheduledBackupEnabled":true}}')"
refuse snapReserve "$(with '{"snapReserve":20}')"
refuse "securityStyle: NTFS with protocols NFSV3" "$(with '{"securityStyle":"NTFS"}')" # issue 18: SMB only
refuse multipleEndpoints "$(with '{"multipleEndpoints":true}')"
for k in kerberos5ReadOnly kerberos5ReadWrite kerberos5iReadOnly kerberos5iReadWrite kerberos5pReadOnly kerberos5pReadWrite; do
	refuse "exportPolicy.rules[0].$k" "$(rule_with "{\"$k\":true}")"
done
refuse kerberosEnabled "$(with '{"kerberosEnabled":true}')"
aq_req GET "$P/volumes/refused"
expect_status 404 "no refused create stored anything"

# --- their "off" values are accepted -----------------------------------------
aq_req POST "$P/volumes?volumeId=off&validateOnly=true" "$(with '{"snapshotDirectory":false,"snapReserve":0,"smbSettings":[],
  "securityStyle":"UNIX","multipleEndpoints":false,"kerberosEnabled":false,"backupConfig":{"scheduledBackupEnabled":false},
  "snapshotPolicy":{"enabled":false,"dailySchedule":{"snapshotsToKeep":3,"hour":2}}}')"
expect_status 200 "the off values are accepted"
aq_mutate POST "$P/volumes?volumeId=plain" "$(with '{"shareName":"plain"}')"
aq_req GET "$P/volumes/plain"
expect_jq .snapshotDirectory false "an omitted snapshotDirectory reads false: there is none"
expect_jq .encryptionType SERVICE_MANAGED "encryptionType is SERVICE_MANAGED (the shelf's protection, see README)"
aq_mutate PATCH "$P/volumes/plain?updateMask=snapshotDirectory" '{"snapshotDirectory":true}'
expect_true '.done and (has("error") | not)' "a PATCH to snapshotDirectory true is taken (issue 20)"
aq_req PATCH "$P/volumes/plain?updateMask=snapReserve" '{"snapReserve":5}'
expect_error 400 INVALID_ARGUMENT "a PATCH to snapReserve 5 is refused"
aq_req PATCH "$P/volumes/plain?updateMask=exportPolicy" '{"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","kerberos5pReadOnly":true}]}}'
expect_error 400 INVALID_ARGUMENT "a PATCH of a rule with kerberos5pReadOnly is refused"
aq_mutate PATCH "$P/volumes/plain?updateMask=snapshotDirectory,description" '{"snapshotDirectory":false,"description":"d"}'
expect_true '.done and (has("error") | not)' "a PATCH with the off value is accepted"

# --- pools: activeDirectory, replicaZone, zone ---------------------------------
POOL='{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
for f in 'activeDirectory:{"activeDirectory":"projects/set/locations/east/activeDirectories/ad"}' \
	'replicaZone:{"replicaZone":"east-b"}' 'zone:{"zone":"east-a"}'; do
	aq_req POST "$P/storagePools?storagePoolId=p2" "$(jq -c --argjson x "${f#*:}" '. + $x' <<<"$POOL")"
	expect_error 400 INVALID_ARGUMENT "pool ${f%%:*} is refused"
	expect_true ".error.message | startswith(\"${f%%:*}\")" "the refusal names ${f%%:*}"
done
aq_req POST "$P/storagePools?storagePoolId=p2" "$(jq -c '. + {zone: "east"}' <<<"$POOL")"
expect_jq .done true "zone equal to the location is accepted"
aq_req PATCH "$P/storagePools/p2?updateMask=replicaZone" '{"replicaZone":"east-b"}'
expect_error 400 INVALID_ARGUMENT "a PATCH of replicaZone is refused"

# --- restrictedActions DELETE blocks deletes --------------------------------------
aq_mutate POST "$P/volumes?volumeId=keep" "$(with '{"shareName":"keep","restrictedActions":["DELETE"]}')"
expect_true '.done and (has("error") | not)' "a volume with restrictedActions DELETE is created"
aq_req DELETE "$P/volumes/keep"
expect_error 400 FAILED_PRECONDITION "its DELETE is refused"
expect_true '.error.message | contains("restrictedActions DELETE")' "the refusal names restrictedActions DELETE"
aq_req GET "$P/volumes/keep"
expect_jq .state READY "the volume is still there"
aq_mutate PATCH "$P/volumes/keep?updateMask=restrictedActions" '{"restrictedActions":[]}'
aq_mutate DELETE "$P/volumes/keep"
expect_true '.done and (has("error") | not)' "once DELETE is lifted the volume can be deleted"

# --- nfsv3: false keeps NFSv3 clients out through that rule -------------------------
aq_mutate POST "$P/volumes?volumeId=v4only" "$(jq -c '.shareName = "v4only" | .exportPolicy.rules[0] += {nfsv3: false, nfsv4: true}' <<<"$BASE")"
expect_true '.done and (has("error") | not)' "a volume whose only rule has nfsv3 false is created"
aq_req GET "$P/volumes/v4only"
expect_jq '.exportPolicy.rules[0].nfsv3' false "the rule keeps nfsv3 false"
ok "an NFSv3 MOUNT through it is denied" bash -c "! nfs-ls '$(url v4only)' >/dev/null 2>&1"
echo hello >"$AQ_TMP/f"
aq_mutate PATCH "$P/volumes/v4only?updateMask=exportPolicy" '{"exportPolicy":{"rules":[
  {"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH","nfsv3":false},
  {"allowedClients":"127.0.0.1","accessType":"READ_ONLY","squashMode":"NO_ROOT_SQUASH","nfsv3":true}]}}'
ok "with a second rule for NFSv3, the mount works" nfs-ls "$(url v4only)"
ok "and that rule decides: read-only" bash -c "! nfs-cp '$AQ_TMP/f' '$(url v4only /f)' >/dev/null 2>&1"
aq_mutate PATCH "$P/volumes/v4only?updateMask=exportPolicy" '{"exportPolicy":{"rules":[
  {"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH","nfsv3":true}]}}'
ok "with nfsv3 true the first rule lets NFSv3 write" nfs-cp "$AQ_TMP/f" "$(url v4only /f)"
aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
