#!/usr/bin/env bash
# test_cli_snapshots.sh: the snapshot verbs of the aquifer CLI, spelled as
# gcloud's, against a real aquiferd and agent (issue 20):
#   aquifer volumes snapshots create|list|describe|update|delete NAME --volume=V
#   aquifer volumes revert V --snapshot=S
#   aquifer volumes create|update --source-snapshot, --snapshot-hourly/-daily/
#     -weekly/-monthly (key=value), --snapshot-directory
# Each verb's request is checked through the API afterwards, and the usage
# errors (no --volume, no --snapshot, an unknown key) exit 2 sending nothing.
. "$(dirname "$0")/lib.sh"

AQUIFER=$AQ_BUILDDIR/aquifer
aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=cs" '{}'
P=/v1/projects/cs/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1

export XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=cs AQUIFER_LOCATION=east
unset AQUIFER_CA_FILE
# cli WANT ARGS...: run aquifer; stdout in $AQ_TMP/out, stderr in $AQ_TMP/err.
cli() {
	local want=$1 rc
	shift
	timeout 120 "$AQUIFER" "$@" </dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
	rc=$?
	if [ "$rc" = "$want" ]; then aq_pass "aquifer $* -> exit $want"; else
		aq_failed "aquifer $* -> exit $want" "got exit $rc" "$(head -5 "$AQ_TMP/err")"
	fi
}
EXPORT='--export-policy=allowed-clients=127.0.0.1,access-type=READ_WRITE,squash-mode=NO_ROOT_SQUASH'

# --- volumes create with the snapshot flags ------------------------------------
cli 0 volumes create v1 --storage-pool=pool --capacity=100 --protocols=nfsv3 --share-name=v1 "$EXPORT" \
	--snapshot-directory=true --snapshot-hourly=snapshots-to-keep=3,minute=5 \
	--snapshot-daily=snapshots-to-keep=2,hour=1,minute=30 --snapshot-weekly=snapshots-to-keep=1,day=Monday,hour=2 \
	--snapshot-monthly=snapshots-to-keep=1,day=15
aq_req GET "$P/volumes/v1"
expect_true '.snapshotDirectory == true' "--snapshot-directory=true"
expect_true '.snapshotPolicy == {"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"minute":5},
	"dailySchedule":{"snapshotsToKeep":2,"hour":1,"minute":30},"weeklySchedule":{"snapshotsToKeep":1,"day":"Monday","hour":2},
	"monthlySchedule":{"snapshotsToKeep":1,"daysOfMonth":"15"}}' "--snapshot-* set the policy, enabled, monthly day= as daysOfMonth"
cli 2 volumes create v9 --storage-pool=pool --capacity=100 --protocols=nfsv3 --share-name=v9 --snapshot-hourly=keep=3
expect_true 'true' "an unknown key of --snapshot-hourly is a usage error"
cli 0 volumes update v1 --snapshot-hourly=snapshots-to-keep=4 --snapshot-directory=false
aq_req GET "$P/volumes/v1"
expect_true '.snapshotPolicy == {"enabled":true,"hourlySchedule":{"snapshotsToKeep":4}} and .snapshotDirectory == false' \
	"volumes update: the schedules given replace the policy (gcloud), --snapshot-directory=false"
cli 3 volumes update v1 --snapshot-daily=snapshots-to-keep=2,hour=25
grep -q 'snapshotPolicy.dailySchedule.hour' "$AQ_TMP/err" && aq_pass "the server's refusal names the field" ||
	aq_failed "the server's refusal names the field" "$(cat "$AQ_TMP/err")"

# --- volumes snapshots ------------------------------------------------------------
cli 2 volumes snapshots create s1
grep -q -- '--volume' "$AQ_TMP/err" && aq_pass "create without --volume says so" || aq_failed "create without --volume says so" "$(cat "$AQ_TMP/err")"
cli 0 volumes snapshots create s1 --volume=v1 --description=first --labels=k=v
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_true '.state == "READY" and .description == "first" and .labels == {"k":"v"}' "snapshots create waited for READY, sent description and labels"
cli 0 volumes snapshots create s2 --volume=v1 --async
grep -q 'operations/' "$AQ_TMP/out" && aq_pass "--async prints the operation" || aq_failed "--async prints the operation" "$(cat "$AQ_TMP/out")"
cli 0 volumes snapshots list --volume=v1
grep -q '^NAME' "$AQ_TMP/out" && grep -q '^s1 ' "$AQ_TMP/out" && grep -q '^s2 ' "$AQ_TMP/out" &&
	aq_pass "snapshots list shows a table of s1 and s2" || aq_failed "snapshots list shows a table of s1 and s2" "$(cat "$AQ_TMP/out")"
cli 0 volumes snapshots list --volume=v1 --format='value(name.basename())' --filter='description=first'
expect_eq "snapshots list --filter" "s1" "$(cat "$AQ_TMP/out")"
cli 0 volumes snapshots describe s1 --volume=v1 --format=json
expect_eq "snapshots describe" "projects/cs/locations/east/volumes/v1/snapshots/s1" "$(jq -r .name "$AQ_TMP/out")"
cli 0 volumes snapshots describe projects/cs/locations/east/volumes/v1/snapshots/s1 --format='value(state)'
expect_eq "snapshots describe by full name" "READY" "$(cat "$AQ_TMP/out")"
cli 0 volumes snapshots update s1 --volume=v1 --description=renamed --update-labels=a=b
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_true '.description == "renamed" and .labels == {"k":"v","a":"b"}' "snapshots update: description, labels merged"
cli 0 volumes snapshots update s1 --volume=v1 --remove-labels=k
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_true '.labels == {"a":"b"}' "snapshots update --remove-labels"

# --- revert and clone --------------------------------------------------------------
cli 2 volumes revert v1
grep -q -- '--snapshot' "$AQ_TMP/err" && aq_pass "revert without --snapshot says so" || aq_failed "revert without --snapshot says so" "$(cat "$AQ_TMP/err")"
for _ in $(seq 100); do
	aq_req GET "$P/volumes/v1/snapshots/s2"
	[ "$(printf '%s' "$BODY" | jq -r .state)" = READY ] && break
	sleep 0.1
done
cli 0 volumes revert v1 --snapshot=s1
aq_req GET "$P/volumes/v1"
expect_jq .state READY "volumes revert waited for the revert"
aq_req GET "$P/operations?filter=metadata.verb%3Drevert"
expect_true '[.operations[] | select(.done and (has("error") | not))] | length == 1' "one revert operation, done"
gone=0
for _ in $(seq 100); do
	aq_req GET "$P/volumes/v1/snapshots/s2"
	[ "$STATUS" = 404 ] && { gone=1; break; }
	sleep 0.1
done
expect_eq "the revert deleted the newer snapshot s2" 1 "$gone"
cli 0 volumes create c1 --storage-pool=pool --capacity=100 --protocols=nfsv3 --share-name=c1 "$EXPORT" \
	--source-snapshot=projects/cs/locations/east/volumes/v1/snapshots/s1
aq_req GET "$P/volumes/c1"
expect_true '.state == "READY" and .cloneDetails.sourceSnapshot == "projects/cs/locations/east/volumes/v1/snapshots/s1"' "--source-snapshot makes a clone"
cli 3 volumes snapshots delete s1 --volume=v1 --quiet
grep -q 'clone' "$AQ_TMP/err" && aq_pass "deleting the clone's source says why" || aq_failed "deleting the clone's source says why" "$(cat "$AQ_TMP/err")"
cli 0 volumes delete c1 --quiet

# --- delete ----------------------------------------------------------------------------
cli 3 volumes delete v1 --quiet
grep -q 'force' "$AQ_TMP/err" && aq_pass "a volume with snapshots needs --force" || aq_failed "a volume with snapshots needs --force" "$(cat "$AQ_TMP/err")"
cli 0 volumes snapshots delete s1 --volume=v1 --quiet
aq_req GET "$P/volumes/v1/snapshots/s1"
expect_error 404 NOT_FOUND "snapshots delete waited until it was gone"
cli 0 volumes snapshots create s3 --volume=v1
cli 0 volumes delete v1 --force --quiet
aq_req GET "$P/volumes/v1"
expect_error 404 NOT_FOUND "volumes delete --force deletes a volume with snapshots"

# --- help and completion --------------------------------------------------------------
cli 0 volumes snapshots --help
grep -q 'create' "$AQ_TMP/out" && aq_pass "volumes snapshots --help lists the verbs" || aq_failed "volumes snapshots --help lists the verbs"
cli 0 completion bash
cp "$AQ_TMP/out" "$AQ_TMP/comp.sh"
got=$(bash -c 'source "$1"; COMP_WORDS=(aquifer volumes snapshots cr); COMP_CWORD=3; _aquifer 2>/dev/null; echo "${COMPREPLY[*]}"' _ "$AQ_TMP/comp.sh")
expect_eq "completion: volumes snapshots cr" "create" "$got"
got=$(bash -c 'source "$1"; COMP_WORDS=(aquifer volumes sn); COMP_CWORD=2; _aquifer 2>/dev/null; echo "${COMPREPLY[*]}"' _ "$AQ_TMP/comp.sh")
expect_eq "completion: volumes sn" "snapshots" "$got"

aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
