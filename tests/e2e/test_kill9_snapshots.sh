#!/usr/bin/env bash
# test_kill9_snapshots.sh: kill -9 aquiferd while snapshot creates, a
# snapshot delete, a revert and a clone are in flight, restart it on the same
# database, and check that every acknowledged operation finishes with its
# effect, and that no snapshot is half-recorded: each one the API lists
# becomes READY (its node has it), none is stuck CREATING (issue 20).
. "$(dirname "$0")/lib.sh"

command -v nfs-cp >/dev/null || { echo "SKIP: nfs-cp missing (apt-get install libnfs-utils)"; exit 77; }
D=$AQ_TMP/srv
aq_start "$D" || exit 1
PORT=$AQ_PORT
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=k9" '{}'
P=/v1/projects/k9/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT
vol() { printf '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s"%s,
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "${2:-}"; }
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
put() { printf '%s' "$2" >"$AQ_TMP/put.txt"; nfs-cp "$AQ_TMP/put.txt" "$(url "$1")" >/dev/null 2>&1; }

for v in v1 v2; do aq_mutate POST "$P/volumes?volumeId=$v" "$(vol $v)"; done
put v1/f.txt one
put v2/f.txt one
for s in v1/keep v1/base v2/base; do aq_mutate POST "$P/volumes/${s%/*}/snapshots?snapshotId=${s#*/}" '{}'; done
put v2/g.txt two
expect_true '.done and .response.state == "READY"' "the snapshots to delete, revert to and clone are READY"

# post NAME METHOD PATH BODY: send; on 200 record "NAME OPERATION" in acks
post() {
	local out=$AQ_TMP/out.$BASHPID code
	code=$(curl -s -o "$out" -w '%{http_code}' --max-time 20 -X "$2" -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "$4" "$AQ_URL$3") || code=000
	[ "$code" = 200 ] && printf '%s %s\n' "$1" "$(jq -r .name "$out")" >>"$AQ_TMP/acks"
	return 0
}
burst() {
	for i in $(seq "$2" "$3"); do post "s$i" POST "$P/volumes/v1/snapshots?snapshotId=s$i" '{}'; done
}
burst 1 1 30 &
B1=$!
burst 2 31 60 &
B2=$!
post delete DELETE "$P/volumes/v1/snapshots/keep" ''
post revert POST "$P/volumes/v2:revert" '{"snapshotId":"base"}'
post clone POST "$P/volumes?volumeId=c1" "$(vol c1 ',"restoreParameters":{"sourceSnapshot":"projects/k9/locations/east/volumes/v1/snapshots/base"}')"
for _ in $(seq 200); do [ "$(grep -c '^s' "$AQ_TMP/acks" 2>/dev/null)" -ge 10 ] && break; sleep 0.02; done
aq_kill9 "$AQ_PID"
wait "$B1" "$B2"
ok "the kill came with creates acknowledged ($(grep -c '^s' "$AQ_TMP/acks") of 60)" test "$(grep -c '^s' "$AQ_TMP/acks")" -ge 1
aq_start "$D" "$PORT" || exit 1

# every acknowledged operation finishes, with its effect
while read -r what op; do
	aq_op_wait "$op" 60
	expect_true '.done and (has("error") | not)' "acknowledged $what finishes after the restart"
done <"$AQ_TMP/acks"
for what in delete revert clone; do
	ok "the $what was acknowledged before the kill" grep -q "^$what " "$AQ_TMP/acks"
done
aq_req GET "$P/volumes/v1/snapshots/keep"
expect_error 404 NOT_FOUND "the deleted snapshot is gone"
aq_req GET "$P/volumes/v2"
expect_jq .state READY "the reverted volume is READY"
expect_eq "the revert took effect" "" "$(nfs-cat "$(url v2/g.txt)" 2>/dev/null)"
aq_req GET "$P/volumes/c1"
expect_true '.state == "READY" and .cloneDetails.sourceSnapshot == "projects/k9/locations/east/volumes/v1/snapshots/base"' "the clone is READY"
# The clone must hold the snapshot's bytes once READY. It once came up empty
# (about 1 run in 5 under ASan): the reconciler built an intent, the clone's
# create committed, and its placement then took that intent's generation, so
# the node's report made it READY unserved and the next intent, no longer for
# a CREATING volume, carried no cloneSource (fixed in srv_reconcile_generation;
# tests/server/test_srv_reconcile's test_generation_race pins it down).
got=$(nfs-cat "$(url c1/f.txt)" 2>&1)
expect_eq "the clone has the snapshot's content" "one" "$got"
if [ "$got" != one ]; then # what made the clone, for a diagnosis
	grep -h -i "clone\|snapshot base\|c1\|gen-" "$D"/*/agent.log "$D/aquiferd.log" 2>/dev/null | tail -60 | sed 's/^/  | /'
	ls -la "$AQ_TMP"/shelf-east/volumes "$AQ_TMP"/shelf-east/.snapshots 2>/dev/null | sed 's/^/  | /'
	cp -r "$AQ_TMP" "${AQ_KEEP_DIR:-/tmp}/kill9-snap-fail.$$" 2>/dev/null
fi

# no snapshot half-recorded: each listed one gets READY, acknowledged or not
ready=0
for _ in $(seq 300); do
	aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"
	if [ "$(printf '%s' "$BODY" | jq '[.snapshots[] | select(.state != "READY")] | length')" = 0 ]; then ready=1; break; fi
	sleep 0.2
done
expect_eq "every snapshot v1 lists is READY (none stuck CREATING)" 1 "$ready"
listed=$(printf '%s' "$BODY" | jq -r '.snapshots[].name | split("/") | last' | sort)
missing=0
while read -r what op; do
	case $what in s*) printf '%s\n' "$listed" | grep -qx "$what" || missing=$((missing + 1)) ;; esac
done <"$AQ_TMP/acks"
expect_eq "every acknowledged snapshot is listed" 0 "$missing"
# an unacknowledged create that committed shows with its operation done
aq_req GET "$P/operations?pageSize=1000&filter=done%3Dfalse"
expect_jq '.operations // [] | length' 0 "no operation is left running"

aq_sanitizer_clean "$D"
aq_finish
