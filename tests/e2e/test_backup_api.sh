#!/usr/bin/env bash
# tests/e2e/test_backup_api.sh: backup vaults and backup policies (issue 21,
# phase 1) through a real aquiferd and the CLI:
#   - backupVaults CRUD (create ?backupVaultId= with {} = IN_REGION, get,
#     list, patch with updateMask, delete), CROSS_REGION with backupRegion
#     (an existing other location), retention policy rules;
#   - each vault's random 32-byte key is stored server-side (a secret
#     document) and appears in no answer, operation or log line;
#   - a vault that holds backups is not deleted (FAILED_PRECONDITION);
#   - backupPolicies CRUD, enabled defaulting to true, assignedVolumeCount 0;
#   - validation errors name the field and change nothing;
#   - another project's token sees and touches nothing; the project and the
#     location are not deleted while they hold vaults or policies;
#   - (a volume's backupConfig: test_backup_config.sh, volumes need an agent)
#   - what has no effect stays refused by name (scheduledBackupEnabled
#     without a policy, kmsConfig; a sourceBackup that does not exist:
#     NOT_FOUND);
#   - `aquifer backup-vaults` and `aquifer backup-policies`.
. "$(dirname "$0")/lib.sh"
AQUIFER=$AQ_BUILDDIR/aquifer
sh_true() { # DESC SHELL-CONDITION
	if eval "$2"; then aq_pass "$1"; else aq_failed "$1" "false: $2"; fi
}

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
ADMIN=$(aq_token "$D" admin)
TOK=$ADMIN
aq_req POST "/v1/projects?projectId=pa" '{}'
aq_req POST "/v1/projects?projectId=pb" '{}'
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/locations?locationId=west" '{}'
expect_status 200 "location west"
EDITOR=$(aq_token "$D" editor pa)
OTHER=$(aq_token "$D" editor pb)
VIEWER=$(aq_token "$D" viewer pa)
PE=/v1/projects/pa/locations/east
V=$PE/backupVaults
BP=$PE/backupPolicies

# === vaults ====================================================================
TOK=$EDITOR
aq_req POST "$V?backupVaultId=v1" '{}'
expect_status 200 "create vault v1 with {}"
expect_jq .done true "the create answers a done operation"
expect_jq .response.name "projects/pa/locations/east/backupVaults/v1" "vault name"
expect_jq .response.backupVaultType IN_REGION "backupVaultType defaults to IN_REGION"
expect_jq .response.state READY "state READY"
aq_req GET "$V/v1"
expect_status 200 "GET v1"
expect_jq '.createTime | test("^[0-9]{4}-")' true "createTime set"
aq_req POST "$V?backupVaultId=v1" '{}'
expect_error 409 ALREADY_EXISTS "v1 again"
aq_req POST "$V?backupVaultId=v2&validateOnly=true" '{"description":"x"}'
expect_status 200 "validateOnly create answers"
aq_req GET "$V/v2"
expect_error 404 NOT_FOUND "validateOnly created nothing"
aq_req POST "$V?backupVaultId=v2" '{"description":"second","labels":{"team":"a"},"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":7,"manualBackupImmutable":true}}'
expect_status 200 "create v2 with a retention policy"
expect_jq .response.backupRetentionPolicy.backupMinimumEnforcedRetentionDays 7 "retention days kept"
aq_req POST "$V?backupVaultId=vx" '{"backupVaultType":"CROSS_REGION","backupRegion":"west"}'
expect_status 200 "create a CROSS_REGION vault stored in west"
expect_jq .response.backupRegion west "backupRegion kept"
expect_jq .response.sourceRegion east "sourceRegion is the vault's own location"
aq_req GET "$V"
expect_status 200 "list vaults"
expect_jq '.backupVaults | length' 3 "three vaults"

# patch
aq_req PATCH "$V/v2?updateMask=description,backupRetentionPolicy" '{"description":"changed","backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":30,"dailyBackupImmutable":true}}'
expect_status 200 "patch v2"
aq_req GET "$V/v2"
expect_jq .description changed "description patched"
expect_jq .backupRetentionPolicy.backupMinimumEnforcedRetentionDays 30 "retention patched"
expect_jq .labels.team a "labels untouched (not in the mask)"
aq_req PATCH "$V/v2?updateMask=backupVaultType" '{"backupVaultType":"CROSS_REGION"}'
expect_error 400 INVALID_ARGUMENT "backupVaultType is immutable"
aq_req PATCH "$V/v2?updateMask=backupRetentionPolicy" '{"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":5}}'
expect_error 400 INVALID_ARGUMENT "a patch breaking the immutability rule is refused"
aq_req GET "$V/v2"
expect_jq .backupRetentionPolicy.backupMinimumEnforcedRetentionDays 30 "the refused patch changed nothing"

# validation: INVALID_ARGUMENT naming the field, nothing created
while IFS='|' read -r what id body field; do
	[ -n "$what" ] || continue
	aq_req POST "$V?backupVaultId=$id" "$body"
	expect_error 400 INVALID_ARGUMENT "vault refused: $what"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$field"*) aq_pass "the message names $field ($what)" ;;
	*) aq_failed "the message names $field ($what)" "$BODY" ;;
	esac
	aq_req GET "$V/$id"
	{ [ "$STATUS" = 404 ] || [ "$STATUS" = 400 ]; } && aq_pass "nothing created: $what" || aq_failed "nothing created: $what" "$BODY"
done <<'CASES'
a bad ID|Bad_ID|{}|backupVaultId
an unknown type|bad1|{"backupVaultType":"NEARBY"}|backupVaultType
CROSS_REGION without backupRegion|bad2|{"backupVaultType":"CROSS_REGION"}|backupRegion
CROSS_REGION to a location that does not exist|bad3|{"backupVaultType":"CROSS_REGION","backupRegion":"mars"}|backupRegion
CROSS_REGION to its own location|bad4|{"backupVaultType":"CROSS_REGION","backupRegion":"east"}|backupRegion
backupRegion on an IN_REGION vault|bad5|{"backupRegion":"west"}|backupRegion
kmsConfig|bad6|{"kmsConfig":"projects/pa/locations/east/kmsConfigs/k"}|kmsConfig
retention without days|bad7|{"backupRetentionPolicy":{"manualBackupImmutable":true}}|backupMinimumEnforcedRetentionDays
retention days with no immutable kind|bad8|{"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":3}}|dailyBackupImmutable
negative retention days|bad9|{"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":-1,"manualBackupImmutable":true}}|backupMinimumEnforcedRetentionDays
an unknown field|bad10|{"key":"00"}|key
CASES

# the key: stored (a secret document), never shown
if [ "${AQ_DB:-sqlite}" != postgres ]; then
	KEY=$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.key') FROM resources WHERE kind='bvsecret' AND name='bvsecrets/projects/pa/locations/east/backupVaults/v1'")
	sh_true "v1 has a 32-byte key stored server-side" "[ \"\${#KEY}\" = 64 ]"
	KEY2=$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.key') FROM resources WHERE kind='bvsecret' AND name='bvsecrets/projects/pa/locations/east/backupVaults/v2'")
	sh_true "each vault has its own key" "[ -n \"$KEY2\" ] && [ \"$KEY\" != \"$KEY2\" ]"
	STORE=$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.store.directory.path') || ' ' || json_extract(doc,'\$.location') FROM resources WHERE kind='bvsecret' AND name='bvsecrets/projects/pa/locations/east/backupVaults/vx'")
	sh_true "the CROSS_REGION vault's store is .backups/<uid> on west's shelf ($STORE)" "echo '$STORE' | grep -Eq '^\.backups/[0-9a-f]{16} west$'"
	aq_req GET "$PE/operations"
	leak=0
	for k in "$KEY" "$KEY2"; do
		grep -rlq -- "$k" "$AQ_RECORD_DIR" 2>/dev/null && leak=1
		grep -q -- "$k" "$D/aquiferd.log" && leak=1
		printf '%s' "$BODY" | grep -q -- "$k" && leak=1
	done
	expect_eq "no answer, operation or server log line holds a vault key" 0 "$leak"
	aq_req GET "$V/v1"
	expect_jq '[paths | map(tostring) | join(".")] | map(select(test("key|secret|store|uid"; "i"))) | length' 0 "GET shows no key, store or uid"

	# a vault holding a backup is not deleted (a backup row, as phase 2 will write it)
	sqlite3 "$D/aq.db" "INSERT INTO resources(name,kind,parent,seq,doc) VALUES('$V/v1/backups/b1','backup','projects/pa/locations/east/backupVaults/v1',(SELECT COALESCE(MAX(seq),0)+1 FROM resources),'{}')" 2>/dev/null ||
		sqlite3 "$D/aq.db" "INSERT INTO resources(name,kind,parent,seq,doc) VALUES('projects/pa/locations/east/backupVaults/v1/backups/b1','backup','projects/pa/locations/east/backupVaults/v1',1,'{}')"
	aq_req DELETE "$V/v1"
	expect_error 400 FAILED_PRECONDITION "a vault with backups refuses delete"
	expect_jq '.error.message | test("holds 1 backups")' true "the message says why"
	aq_req GET "$V/v1"
	expect_status 200 "the vault is still there"
	sqlite3 "$D/aq.db" "DELETE FROM resources WHERE kind='backup'"
fi

# another project's token: nothing seen, nothing touched
aq_req_as "$OTHER" GET "$V"
sh_true "project pb cannot list pa's vaults ($STATUS)" "[ $STATUS = 403 ] || [ $STATUS = 404 ]"
aq_req_as "$OTHER" GET "$V/v1"
sh_true "project pb cannot read pa's vault ($STATUS)" "[ $STATUS = 403 ] || [ $STATUS = 404 ]"
aq_req_as "$OTHER" DELETE "$V/v1"
sh_true "project pb cannot delete pa's vault ($STATUS)" "[ $STATUS = 403 ] || [ $STATUS = 404 ]"
aq_req_as "$OTHER" GET "/v1/projects/pb/locations/east/backupVaults"
expect_jq '.backupVaults | length' 0 "project pb's own list is empty"
aq_req_as "$VIEWER" POST "$V?backupVaultId=vv" '{}'
expect_error 403 PERMISSION_DENIED "a viewer cannot create a vault"

# === policies ==================================================================
aq_req POST "$BP?backupPolicyId=p1" '{"dailyBackupLimit":2,"weeklyBackupLimit":1,"monthlyBackupLimit":1,"description":"d"}'
expect_status 200 "create policy p1"
expect_jq .response.enabled true "enabled defaults to true"
expect_jq .response.assignedVolumeCount 0 "assignedVolumeCount 0"
expect_jq .response.state READY "policy READY"
aq_req GET "$BP/p1"
expect_jq .dailyBackupLimit 2 "daily limit kept"
aq_req PATCH "$BP/p1?updateMask=dailyBackupLimit,enabled" '{"dailyBackupLimit":7,"enabled":false}'
expect_status 200 "patch p1"
aq_req GET "$BP/p1"
expect_jq .dailyBackupLimit 7 "daily limit patched"
expect_jq .enabled false "enabled patched"
aq_req PATCH "$BP/p1?updateMask=dailyBackupLimit" '{"dailyBackupLimit":1}'
expect_error 400 INVALID_ARGUMENT "dailyBackupLimit 1 refused on patch"
aq_req GET "$BP"
expect_jq '.backupPolicies | length' 1 "one policy"
while IFS='|' read -r what id body field; do
	[ -n "$what" ] || continue
	aq_req POST "$BP?backupPolicyId=$id" "$body"
	expect_error 400 INVALID_ARGUMENT "policy refused: $what"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$field"*) aq_pass "the message names $field ($what)" ;;
	*) aq_failed "the message names $field ($what)" "$BODY" ;;
	esac
	aq_req GET "$BP/$id"
	{ [ "$STATUS" = 404 ] || [ "$STATUS" = 400 ]; } && aq_pass "nothing created: $what" || aq_failed "nothing created: $what" "$BODY"
done <<'CASES'
daily limit 1|q1|{"dailyBackupLimit":1}|dailyBackupLimit
no limits|q2|{}|dailyBackupLimit
a limit too large|q3|{"weeklyBackupLimit":5000}|weeklyBackupLimit
a limit not a number|q4|{"monthlyBackupLimit":"x"}|monthlyBackupLimit
CASES
aq_req_as "$OTHER" GET "$BP/p1"
sh_true "project pb cannot read pa's policy ($STATUS)" "[ $STATUS = 403 ] || [ $STATUS = 404 ]"

# === what has no effect stays refused by name =================================
aq_req POST "$PE/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_req POST "$PE/volumes?volumeId=vol1" '{"storagePool":"sp","capacityGib":"100","shareName":"vol1","protocols":["NFSV3"],"backupConfig":{"backupVault":"projects/pa/locations/east/backupVaults/v1","scheduledBackupEnabled":true}}'
expect_error 400 INVALID_ARGUMENT "backupConfig.scheduledBackupEnabled true without a policy is refused"
expect_jq '.error.message | test("backupConfig.scheduledBackupEnabled")' true "the message names backupConfig.scheduledBackupEnabled"

aq_req POST "$PE/volumes?volumeId=vol2" '{"storagePool":"sp","capacityGib":"100","shareName":"vol2","protocols":["NFSV3"],"restoreParameters":{"sourceBackup":"projects/pa/locations/east/backupVaults/v1/backups/b1"}}'
expect_error 404 NOT_FOUND "restoreParameters.sourceBackup of a backup that does not exist is refused"
expect_jq '.error.message | test("sourceBackup")' true "the message names sourceBackup"
aq_req GET "$V/v1/backups"
expect_status 200 "the backups of v1 are listed (test_backup_e2e.sh makes them)"
expect_jq '.backups // [] | length' 0 "v1 holds none"

# === the project and the location keep what holds vaults =======================
TOK=$ADMIN
aq_req DELETE "/v1/projects/pa"
expect_error 400 FAILED_PRECONDITION "project pa with vaults is not deleted"
aq_req DELETE "/v1/locations/west"
expect_error 400 FAILED_PRECONDITION "location west holding vx's store is not deleted"
expect_jq '.error.message | test("backup vault")' true "the message names the vaults"

# === CLI =======================================================================
if [ -x "$AQUIFER" ]; then
	export XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$EDITOR
	export AQUIFER_PROJECT=pa AQUIFER_LOCATION=east
	unset AQUIFER_CA_FILE
	cli() { # WANT_RC DESC ARGS...
		local want=$1 desc=$2 rc
		shift 2
		timeout 60 "$AQUIFER" "$@" </dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
		rc=$?
		OUT=$(cat "$AQ_TMP/out") ERR=$(cat "$AQ_TMP/err")
		[ "$rc" = "$want" ] && aq_pass "$desc" || aq_failed "$desc: aquifer $* -> exit $rc, want $want" "$OUT" "$ERR"
	}
	cli 0 "cli: backup-vaults create" backup-vaults create cv --description=cli \
		--backup-retention-policy=backup-minimum-enforced-retention-days=2,manual-backup-immutable=true
	cli 0 "cli: backup-vaults describe" backup-vaults describe cv --format=json
	expect_eq "cli: the retention policy went through" 2 "$(printf '%s' "$OUT" | jq -r .backupRetentionPolicy.backupMinimumEnforcedRetentionDays)"
	cli 0 "cli: backup-vaults update" backup-vaults update cv --description=new
	cli 0 "cli: backup-vaults list" backup-vaults list --format='value(name.basename(),description)'
	expect_contains "cli: list shows the update" "cv	new" "$OUT"
	cli 0 "cli: backup-vaults create CROSS_REGION" backup-vaults create cx --backup-vault-type=cross_region --backup-region=west
	cli 3 "cli: a bad retention policy is refused by the server (exit 3)" backup-vaults create cy --backup-retention-policy=backup-minimum-enforced-retention-days=3
	cli 0 "cli: backup-vaults delete" backup-vaults delete cv --quiet
	cli 0 "cli: backup-policies create" backup-policies create cp --daily-backup-limit=3 --weekly-backup-limit=2
	cli 0 "cli: backup-policies update --no-enabled" backup-policies update cp --no-enabled
	cli 0 "cli: backup-policies describe" backup-policies describe cp --format=json
	expect_eq "cli: enabled is false" false "$(printf '%s' "$OUT" | jq -r .enabled)"
	cli 0 "cli: backup-policies list" backup-policies list
	expect_contains "cli: the list shows cp" "cp" "$OUT"
	cli 0 "cli: backup-policies delete" backup-policies delete cp --quiet
fi

# === delete ====================================================================
TOK=$EDITOR
for v in v1 v2 vx cx; do
	aq_req DELETE "$V/$v"
	expect_status 200 "delete vault $v"
done
aq_req GET "$V/v1"
expect_error 404 NOT_FOUND "v1 gone"
if [ "${AQ_DB:-sqlite}" != postgres ]; then
	expect_eq "no vault secret is left" 0 "$(sqlite3 "$D/aq.db" "SELECT COUNT(*) FROM resources WHERE kind='bvsecret'")"
fi
aq_req DELETE "$BP/p1"
expect_status 200 "delete policy p1"
aq_req DELETE "$PE/storagePools/sp"
TOK=$ADMIN
aq_req DELETE "/v1/locations/west"
expect_status 200 "location west deleted once no vault stores there"
aq_sanitizer_clean "$D"
aq_finish
