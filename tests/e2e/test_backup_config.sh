#!/usr/bin/env bash
# test_backup_config.sh: a volume's backupConfig (issue 21 step 3) with a
# real aquiferd and a joined agent:
#   - backupPolicies (at most one, existing, same project and location) and
#     backupVault (existing, same project and location, not CROSS_REGION,
#     required with a policy) on create and patch; each refusal names the
#     field and changes nothing; scheduledBackupEnabled true without a
#     policy is refused by name (the schedule is the policy's; the
#     scheduler itself: test_backup_schedule.sh)
#   - backupChainBytes is computed: the chainStorageBytes of the volume's
#     READY backups in its vault, whatever the client sent
#   - a policy's assignedVolumeCount counts the volumes naming it; a policy
#     or a vault a volume's backupConfig names is not deleted
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
for l in east west; do aq_req POST "/v1/locations?locationId=$l" '{}'; done
for p in pa pb; do aq_req POST "/v1/projects?projectId=$p" '{}'; done
P=/v1/projects/pa/locations/east
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
aq_agent_for east || exit 1
TOK=$(aq_token "$D" editor pa)
VV=projects/pa/locations/east/backupVaults
PP=projects/pa/locations/east/backupPolicies
for v in v1 v2; do aq_req POST "$P/backupVaults?backupVaultId=$v" '{}'; expect_status 200 "vault $v"; done
aq_req POST "$P/backupVaults?backupVaultId=vx" '{"backupVaultType":"CROSS_REGION","backupRegion":"west"}'
expect_status 200 "a CROSS_REGION vault vx"
for p in p1 p2; do aq_req POST "$P/backupPolicies?backupPolicyId=$p" '{"dailyBackupLimit":2}'; expect_status 200 "policy $p"; done

vol_body() { # SHARE BACKUPCONFIG
	printf '{"storagePool":"sp","capacityGib":"100","shareName":"%s","protocols":["NFSV3"],"backupConfig":%s}' "$1" "$2"
}
refused() { # FIELD DESC
	expect_error 400 INVALID_ARGUMENT "backupConfig refused: $2"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$1"*) aq_pass "the message names $1 ($2)" ;;
	*) aq_failed "the message names $1 ($2)" "$BODY" ;;
	esac
}
CASES="a vault that does not exist|{\"backupVault\":\"$VV/nope\"}|backupConfig.backupVault
a vault named by ID only|{\"backupVault\":\"v1\"}|backupConfig.backupVault
a vault of another location|{\"backupVault\":\"projects/pa/locations/west/backupVaults/v1\"}|backupConfig.backupVault
a vault of another project|{\"backupVault\":\"projects/pb/locations/east/backupVaults/v1\"}|backupConfig.backupVault
a CROSS_REGION vault|{\"backupVault\":\"$VV/vx\"}|backupConfig.backupVault
a policy that does not exist|{\"backupVault\":\"$VV/v1\",\"backupPolicies\":[\"$PP/nope\"]}|backupConfig.backupPolicies
a policy without a vault|{\"backupPolicies\":[\"$PP/p1\"]}|backupConfig.backupVault
two policies|{\"backupVault\":\"$VV/v1\",\"backupPolicies\":[\"$PP/p1\",\"$PP/p2\"]}|backupConfig.backupPolicies
a policy of another location|{\"backupVault\":\"$VV/v1\",\"backupPolicies\":[\"projects/pa/locations/west/backupPolicies/p1\"]}|backupConfig.backupPolicies
scheduled backups without a policy|{\"backupVault\":\"$VV/v1\",\"scheduledBackupEnabled\":true}|backupConfig.scheduledBackupEnabled"

# --- create --------------------------------------------------------------------
while IFS='|' read -r what bc field; do
	aq_req POST "$P/volumes?volumeId=bad" "$(vol_body bad "$bc")"
	refused "$field" "create: $what"
	aq_req GET "$P/volumes/bad"
	expect_error 404 NOT_FOUND "nothing created: $what"
done <<<"$CASES"
aq_mutate POST "$P/volumes?volumeId=bc1" "$(vol_body bc1 "{\"backupVault\":\"$VV/v1\",\"backupPolicies\":[\"$PP/p1\"],\"backupChainBytes\":\"99\"}")"
expect_true '.done and (has("error") | not)' "a volume with backupConfig (vault v1, policy p1)"
aq_req GET "$P/volumes/bc1"
expect_jq .backupConfig.backupVault "$VV/v1" "backupConfig.backupVault kept"
expect_jq '.backupConfig.backupPolicies | join(",")' "$PP/p1" "backupConfig.backupPolicies kept"
expect_jq .backupConfig.backupChainBytes 0 "backupChainBytes is computed (no backup yet), not what was sent"
aq_mutate POST "$P/volumes?volumeId=bc2" "$(vol_body bc2 "{\"backupVault\":\"$VV/v2\",\"backupPolicies\":[\"$PP/p1\"]}")"
expect_true '.done and (has("error") | not)' "a second volume naming p1 (vault v2)"
aq_mutate POST "$P/volumes?volumeId=bc3" "$(vol_body bc3 '{}')"
expect_true '.done and (has("error") | not)' "a volume without backup settings"
aq_req GET "$P/backupPolicies/p1"
expect_jq .assignedVolumeCount 2 "assignedVolumeCount of p1 counts both volumes"
aq_req GET "$P/backupPolicies/p2"
expect_jq .assignedVolumeCount 0 "assignedVolumeCount of p2 is 0"
aq_req GET "$P/backupPolicies"
expect_jq "[.backupPolicies[] | select(.name == \"$PP/p1\") | .assignedVolumeCount] | .[0]" 2 "assignedVolumeCount in the list"

# --- patch ---------------------------------------------------------------------
while IFS='|' read -r what bc field; do
	aq_req PATCH "$P/volumes/bc3?updateMask=backupConfig" "{\"backupConfig\":$bc}"
	refused "$field" "patch: $what"
done <<<"$CASES"
aq_req GET "$P/volumes/bc3"
expect_true '(.backupConfig.backupVault // "") == "" and ((.backupConfig.backupPolicies // []) | length) == 0' "the refused patches changed nothing"
aq_mutate PATCH "$P/volumes/bc3?updateMask=backupConfig.backupVault,backupConfig.backupPolicies" "{\"backupConfig\":{\"backupVault\":\"$VV/v2\",\"backupPolicies\":[\"$PP/p2\"]}}"
expect_true '.done and (has("error") | not)' "patch bc3's backupConfig (vault v2, policy p2)"
aq_req GET "$P/volumes/bc3"
expect_jq .backupConfig.backupVault "$VV/v2" "patched backupVault kept"
aq_req GET "$P/backupPolicies/p2"
expect_jq .assignedVolumeCount 1 "p2 is now assigned to bc3"

# --- backupChainBytes: a READY backup of bc1 in v1 -----------------------------
aq_req POST "$P/backupVaults/v1/backups?backupId=b1" "{\"sourceVolume\":\"projects/pa/locations/east/volumes/bc1\"}"
expect_status 200 "a manual backup of bc1 into v1"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_jq .response.state READY "b1 READY"
CHAIN=$(printf '%s' "$BODY" | jq -r .response.chainStorageBytes)
aq_req GET "$P/volumes/bc1"
expect_jq .backupConfig.backupChainBytes "$CHAIN" "bc1's backupChainBytes is b1's chainStorageBytes ($CHAIN)"
aq_req GET "$P/volumes"
expect_jq '.volumes[] | select(.name | endswith("/bc1")) | .backupConfig.backupChainBytes' "$CHAIN" "... in the list too"
aq_req GET "$P/volumes/bc2"
expect_jq .backupConfig.backupChainBytes 0 "bc2 (vault v2) has none"
# stored, not computed on read: a second backup, then the first deleted
aq_req POST "$P/backupVaults/v1/backups?backupId=b2" "{\"sourceVolume\":\"projects/pa/locations/east/volumes/bc1\"}"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_jq .response.state READY "b2 READY"
CHAIN2=$(printf '%s' "$BODY" | jq -r .response.chainStorageBytes)
ok "b2's chainStorageBytes ($CHAIN2) holds b1's and its own" test "$CHAIN2" -gt "$CHAIN"
aq_req GET "$P/backupVaults/v1/backups/b1"
expect_jq .chainStorageBytes "$CHAIN2" "b1's chainStorageBytes refreshed to the chain's ($CHAIN2)"
aq_req GET "$P/volumes/bc1"
expect_jq .backupConfig.backupChainBytes "$CHAIN2" "bc1's backupChainBytes follows b2 ($CHAIN2)"
aq_req DELETE "$P/backupVaults/v1/backups/b1"
expect_status 200 "delete b1"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_true '.done and (has("error") | not)' "b1 deleted"
aq_req GET "$P/backupVaults/v1/backups/b2"
expect_jq .chainStorageBytes "$((CHAIN2 - CHAIN))" "after b1's delete b2's chainStorageBytes is the chain left ($((CHAIN2 - CHAIN)))"
aq_req GET "$P/volumes/bc1"
expect_jq .backupConfig.backupChainBytes "$((CHAIN2 - CHAIN))" "after b1's delete bc1's backupChainBytes is the chain left"
aq_req GET "$P/volumes"
expect_jq '.volumes[] | select(.name | endswith("/bc1")) | .backupConfig.backupChainBytes' "$((CHAIN2 - CHAIN))" "... in the list too"
CHAIN=$((CHAIN2 - CHAIN))

# --- CLI: --backup-config as gcloud spells it ----------------------------------
AQUIFER=$AQ_BUILDDIR/aquifer
if [ -x "$AQUIFER" ]; then
	cli() { # WANT_RC DESC ARGS...
		local want=$1 desc=$2 rc
		shift 2
		XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=pa \
			AQUIFER_LOCATION=east AQUIFER_CA_FILE= timeout 120 "$AQUIFER" "$@" </dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
		rc=$?
		OUT=$(cat "$AQ_TMP/out") ERR=$(cat "$AQ_TMP/err")
		[ "$rc" = "$want" ] && aq_pass "$desc" || aq_failed "$desc: aquifer $* -> exit $rc, want $want" "$OUT" "$ERR"
	}
	cli 0 "cli: volumes create --backup-config" volumes create cv --storage-pool=sp --capacity=100 --protocols=nfsv3 \
		--share-name=cv --backup-config="backup-vault=$VV/v1,backup-policies=$PP/p2,enable-scheduled-backups=false"
	aq_req GET "$P/volumes/cv"
	expect_jq .backupConfig.backupVault "$VV/v1" "cli: backup-vault went through"
	expect_jq '.backupConfig.backupPolicies | join(",")' "$PP/p2" "cli: backup-policies went through"
	expect_jq .backupConfig.scheduledBackupEnabled false "cli: enable-scheduled-backups went through"
	cli 3 "cli: two policies are refused by the server (exit 3)" volumes update cv \
		--backup-config="backup-vault=$VV/v1,backup-policies=$PP/p1;$PP/p2"
	expect_contains "cli: the refusal names backupConfig.backupPolicies, two given (P1;P2 is a list)" "backupConfig.backupPolicies has more than 1 items" "$ERR"
	cli 0 "cli: volumes update --backup-config" volumes update cv --backup-config="backup-vault=$VV/v2"
	aq_req GET "$P/volumes/cv"
	expect_jq .backupConfig.backupVault "$VV/v2" "cli: the update set backupVault"
	expect_jq '.backupConfig.backupPolicies // [] | length' 0 "cli: --backup-config sets the whole backupConfig"
	cli 0 "cli: volumes delete" volumes delete cv --quiet
fi

# --- delete refusals -----------------------------------------------------------
aq_req DELETE "$P/backupPolicies/p1"
expect_error 400 FAILED_PRECONDITION "a policy volumes name is not deleted"
expect_jq '.error.message | test("assigned to 2 volumes")' true "the message says why"
aq_req GET "$P/backupPolicies/p1"
expect_status 200 "p1 is still there"
aq_req DELETE "$P/backupVaults/v2"
expect_error 400 FAILED_PRECONDITION "a vault volumes' backupConfig names is not deleted"
expect_jq '.error.message | test("backupConfig.backupVault of 2 volumes")' true "the message says why"
aq_mutate PATCH "$P/volumes/bc3?updateMask=backupConfig" '{"backupConfig":{}}'
expect_true '.done and (has("error") | not)' "clear bc3's backupConfig"
aq_req DELETE "$P/backupPolicies/p2"
expect_status 200 "a policy no volume names any more is deleted"
for v in bc1 bc2 bc3; do
	aq_mutate DELETE "$P/volumes/$v"
	expect_true '.done and (has("error") | not)' "delete volume $v"
done
aq_req GET "$P/backupPolicies/p1"
expect_jq .assignedVolumeCount 0 "assignedVolumeCount drops to 0 once the volumes are gone"
aq_req DELETE "$P/backupPolicies/p1"
expect_status 200 "then p1 is deleted"
aq_req DELETE "$P/backupVaults/v2"
expect_status 200 "and v2"
aq_sanitizer_clean "$D"
aq_finish
