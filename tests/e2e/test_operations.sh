#!/usr/bin/env bash
# test_operations.sh: every operation finishes (issue 15, item 15).
# One change at a time per volume: a PATCH or DELETE while another operation
# on the volume runs is refused with FAILED_PRECONDITION naming it (GCNV
# refuses concurrent mutations), so no operation is overwritten and left
# done:false; a DELETE is never lost (a later PATCH cannot revive the
# volume). operations:cancel rolls a running create back (CANCELLED, the
# volume gone) and refuses the rest with the reason; the CLI says which.
# The agent is frozen (SIGSTOP) to hold operations open.
. "$(dirname "$0")/lib.sh"

command -v nfs-ls >/dev/null || { echo "SKIP: nfs-ls missing (apt-get install libnfs-utils)"; exit 77; }
AQUIFER=$AQ_BUILDDIR/aquifer

AQ_SERVE_ARGS=(--node-down-seconds 120) # a frozen agent stays READY
aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=ops" '{}'
P=/v1/projects/ops/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1
AGENT=$AGENT_PID NFS=$AGENT_NFS_PORT

vol() { printf '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1"; }
opname() { printf '%s' "$BODY" | jq -r '.name // empty'; }
freeze() { kill -STOP "$AGENT"; }
thaw() { kill -CONT "$AGENT"; }
# refused DESC NEEDLE: the last answer is FAILED_PRECONDITION whose message matches NEEDLE
refused() {
	expect_error 400 FAILED_PRECONDITION "$1"
	expect_true ".error.message | test(\"$2\")" "$1: the message says why"
}

aq_mutate POST "$P/volumes?volumeId=v1" "$(vol v1)"
expect_true '.done and (has("error") | not)' "v1 created"

# --- a PATCH while a PATCH runs ---------------------------------------------
freeze
aq_req PATCH "$P/volumes/v1?updateMask=capacityGib" '{"capacityGib":"200"}'
OP1=$(opname)
expect_jq .done false "the first PATCH runs (the node is frozen)"
aq_req PATCH "$P/volumes/v1?updateMask=capacityGib" '{"capacityGib":"300"}'
refused "a second PATCH while it runs is refused" "is UPDATING \\\\(operation $OP1\\\\)"
aq_req DELETE "$P/volumes/v1"
refused "a DELETE while it runs is refused" "is UPDATING"
aq_req POST "/v1/$OP1:cancel" '{}'
refused "an update cannot be cancelled" "cannot be cancelled: the change may already be in effect"
thaw
aq_op_wait "$OP1" 30
expect_jq '.response.capacityGib' 200 "the first PATCH finishes with its own change"
aq_req GET "$P/volumes/v1"
expect_jq .capacityGib 200 "the refused PATCH changed nothing"

# two PATCHes sent at once: each is refused or finishes, none hangs
racers=()
for c in 400 500; do
	curl -s -o "$AQ_TMP/race.$c" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $TOK" \
		-d "{\"capacityGib\":\"$c\"}" "$AQ_URL$P/volumes/v1?updateMask=capacityGib" >"$AQ_TMP/race.$c.st" &
	racers+=($!)
done
wait "${racers[@]}"
n_ok=0
for c in 400 500; do
	st=$(cat "$AQ_TMP/race.$c.st")
	if [ "$st" = 200 ]; then
		n_ok=$((n_ok + 1))
		aq_op_wait "$(jq -r .name "$AQ_TMP/race.$c")" 30
		expect_jq ".response.capacityGib" "$c" "racing PATCH to $c finishes with its change"
	else
		BODY=$(cat "$AQ_TMP/race.$c") STATUS=$st
		refused "racing PATCH to $c is refused" "one change at a time"
	fi
done
ok "at least one racing PATCH was taken" test "$n_ok" -ge 1

# --- PATCH and DELETE during CREATING ---------------------------------------
freeze
aq_req POST "$P/volumes?volumeId=v2" "$(vol v2)"
OP2=$(opname)
aq_req PATCH "$P/volumes/v2?updateMask=capacityGib" '{"capacityGib":"200"}'
refused "a PATCH during CREATING is refused" "is CREATING \\\\(operation $OP2\\\\).*or cancel it"
aq_req DELETE "$P/volumes/v2"
refused "a DELETE during CREATING is refused" "is CREATING"
thaw
aq_op_wait "$OP2" 30
expect_jq .response.state READY "the create finishes"

# --- DELETE, then PATCH: the delete is never lost ---------------------------
freeze
aq_req DELETE "$P/volumes/v2"
OPD=$(opname)
expect_jq .done false "the DELETE runs"
aq_req PATCH "$P/volumes/v2?updateMask=capacityGib" '{"capacityGib":"300"}'
refused "a PATCH after the DELETE is refused" "is already being deleted \\\\(operation $OPD\\\\)"
aq_req DELETE "$P/volumes/v2"
refused "a second DELETE is refused" "already being deleted"
aq_req POST "/v1/$OPD:cancel" '{}'
refused "a delete cannot be cancelled" "an accepted delete always completes"
thaw
aq_op_wait "$OPD" 30
expect_jq '.response["@type"]' type.googleapis.com/google.protobuf.Empty "the DELETE finishes"
aq_req GET "$P/volumes/v2"
expect_status 404 "the volume is gone, not revived"

# --- cancel a pending create --------------------------------------------------
freeze
aq_req POST "$P/volumes?volumeId=v3" "$(vol v3)"
OP3=$(opname)
aq_req POST "/v1/$OP3:cancel" '{}'
expect_status 200 "cancel of a running create"
aq_req GET "/v1/$OP3"
expect_jq .done true "the cancelled operation is done at once"
expect_jq .error.code 1 "it ends CANCELLED (code 1)"
expect_jq .metadata.requestedCancellation true "requestedCancellation is recorded"
expect_true '.error.message | test("rolled back")' "its message says the create was rolled back"
aq_req GET "$P/volumes/v3"
expect_status 404 "the volume is gone"
aq_req POST "/v1/$OP3:cancel" '{}'
refused "cancelling it again is refused" "already done"
thaw
# the name is free again once the node has dropped what it was given
for _ in $(seq 100); do
	aq_req POST "$P/volumes?volumeId=v3" "$(vol v3)"
	[ "$STATUS" = 409 ] || break
	sleep 0.2
done
expect_status 200 "the name can be used again"
aq_op_wait "$(opname)" 30
ok "the new v3 is served" nfs-ls "nfs://127.0.0.1/v3?version=3&nfsport=$NFS&mountport=$NFS"
aq_req POST "/v1/$(opname):cancel" '{}'
refused "cancel of a done operation is refused" "already done \\\\(create .* succeeded\\\\); there is nothing to cancel"
aq_req POST "$P/operations/operation-nosuch:cancel" '{}'
expect_error 404 NOT_FOUND "cancel of an unknown operation"

# --- the CLI says what happened -----------------------------------------------
export AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=ops AQUIFER_LOCATION=east
freeze
"$AQUIFER" volumes create v4 --storage-pool=pool --capacity=100 --protocols=nfsv3 --share-name=v4 --async \
	--format='value(name)' >"$AQ_TMP/op4" 2>"$AQ_TMP/cli.err"
OP4=$(cat "$AQ_TMP/op4")
ok "the CLI started a create" test -n "$OP4"
"$AQUIFER" operations cancel "$OP4" >"$AQ_TMP/cancel.out" 2>"$AQ_TMP/cancel.err"
expect_eq "aquifer operations cancel exits 0" 0 $?
ok "it says it cancelled the operation" grep -q "Cancelling operation .*done\." "$AQ_TMP/cancel.err"
ok "it prints the operation, ended CANCELLED" sh -c "grep -q 'code: 1' '$AQ_TMP/cancel.out' && grep -q 'rolled back' '$AQ_TMP/cancel.out'"
"$AQUIFER" operations cancel "$OP4" >/dev/null 2>"$AQ_TMP/cancel2.err"
expect_eq "cancelling it again exits 3 (API error)" 3 $?
ok "and says why" grep -q "FAILED_PRECONDITION: operation .* is already done" "$AQ_TMP/cancel2.err"
thaw

# --- nothing is left running ---------------------------------------------------
sleep 1
aq_req GET "$P/operations"
expect_jq '[.operations[] | select(.done != true)] | length' 0 "every operation of the location is done"
aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
