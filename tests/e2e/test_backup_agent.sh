#!/usr/bin/env bash
# test_backup_agent.sh: backups in the data path (issue 21 phase 2, agent
# side), with a standalone aquifer-agent driven by intents as aquiferd will
# drive it (the backups route is not routed yet: nothing else sends jobs).
#   1. files written over NFS (libnfs nfs-cp), snapshot s1, a backup job of it:
#      READY with plausible byte counts, no plaintext of a known file in the
#      vault's store folder
#   2. a small change, snapshot s2, a backup with prevId: uploads little
#   3. a job without a snapshot, or of a snapshot that does not exist: ERROR
#      naming it; a job that does not decode is left out, the intent applies
#   4. kill -9 of the agent mid-backup (a 192 MiB file): after the restart the same job ends
#      READY (the intent is applied again, the engine is idempotent)
#   5. a delete job: DELETED, the manifest gone
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/agent/tier/agent.sh"
. "$AQ_SRC/tests/agent/snap/snap.sh"

command -v nfs-cp >/dev/null || { echo "SKIP: nfs-cp missing (libnfs-utils)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (open_by_handle_at)"; exit 77; }
trap 'snap_cleanup; aq_cleanup' EXIT
AQ_SNAP_SHELF=${AQ_SNAP_SHELF:-plain}
snap_shelf n1
AGENT_ARGS=(--snapshot-usage-seconds 1)
agent_start n1
FA=00000000000000a1
S1=1111111111111111 S2=2222222222222222 S3=3333333333333333
B1=b100000000000001 B2=b200000000000002 B3=b300000000000003
VKEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
STORE=.backups/00000000000000f1
VAULT=$(jq -nc --arg k "$VKEY" --arg p "$STORE" '{key: $k, store: {directory: {path: $p}}}')
VNAME=projects/p/locations/east/volumes/va
sd() { jq -nc --argjson s "$1" '{snapshotDirectory: true, snapshots: $s}'; }
# job OP ID [SNAPID:UID] [PREV]: one job of the intent's "backups"
job() {
	jq -nc --arg op "$1" --arg id "$2" --arg s "${3:-}" --arg prev "${4:-}" --arg vol "$VNAME" --argjson v "$VAULT" '
	  {op: $op, id: $id, name: ("projects/p/locations/east/backupVaults/bv/backups/x" + $id), vault: $v}
	  + (if $op == "backup" then {volume: $vol} else {} end)
	  + (if $s != "" then {snapshot: {id: ($s | split(":")[0]), uid: ($s | split(":")[1])}} else {} end)
	  + (if $prev != "" then {prevId: $prev} else {} end)'
}
# bpush SNAPS JOB...: the volume with SNAPS and the jobs
bpush() {
	local s=$1 j jobs=
	shift
	for j in "$@"; do jobs="$jobs${jobs:+,}$j"; done
	SPUSH_EXTRA="{\"backups\":[$jobs]}" spush "$(svol va $FA "$(sd "$s")")"
}
bstat() { # bstat ID FILTER: jq FILTER over that job's report
	curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" |
		jq -r --arg id "$1" "[.backups[]? | select(.id == \$id)][0] | $2"
}
bwait() { # bwait ID STATE [SECS]
	local i
	for i in $(seq $((${3:-60} * 5))); do
		[ "$(bstat "$1" .state)" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}
U=$(surl va "")

# --- 1. a backup of s1 ------------------------------------------------------
spush "$(svol va $FA "$(sd "[]")")"
MARK="aquifer-backup-plaintext-marker-$$-$RANDOM"
{ for i in $(seq 2000); do echo "$MARK line $i"; done; } >"$AQ_TMP/known.txt"
head -c $((8 << 20)) /dev/urandom >"$AQ_TMP/big.bin"
ok "write a known text file over NFS (nfs-cp)" nfs-cp "$AQ_TMP/known.txt" "$(surl va /known.txt)"
ok "write an 8 MiB file over NFS (nfs-cp)" nfs-cp "$AQ_TMP/big.bin" "$(surl va /big.bin)"
bpush "$(snaps s1:$S1)"
expect_eq "snapshot s1 READY" READY "$(sstat va '.snapshots[0].state')"
bpush "$(snaps s1:$S1)" "$(job backup $B1 s1:$S1)"
ok "backup 1 of s1 ends READY" bwait $B1 READY
LB=$(bstat $B1 .logicalBytes) UP=$(bstat $B1 .uploadedBytes)
echo "# backup 1: logicalBytes $LB, uploadedBytes $UP"
ok "logicalBytes counts the files (>= 8 MiB, < 9 MiB)" test "$LB" -ge $((8 << 20)) -a "$LB" -lt $((9 << 20))
ok "uploadedBytes is the data once (>= 8 MiB random data, < 10 MiB)" test "$UP" -ge $((8 << 20)) -a "$UP" -lt $((10 << 20))
expect_eq "bytesDone reached bytesTotal" "$(bstat $B1 .bytesTotal)" "$(bstat $B1 .bytesDone)"
ok "the vault's store folder holds objects" test "$(find "$SHELF/$STORE" -type f | wc -l)" -gt 2
ok "no plaintext of the known file in the store" sh -c "! grep -rqa '$MARK' '$SHELF/$STORE'"

# --- 2. a small change, an incremental backup --------------------------------
printf 'a small change\n' >"$AQ_TMP/small.txt"
ok "write a small file over NFS" nfs-cp "$AQ_TMP/small.txt" "$(surl va /small.txt)"
bpush "$(snaps s1:$S1 s2:$S2)" "$(job backup $B1 s1:$S1)"
bpush "$(snaps s1:$S1 s2:$S2)" "$(job backup $B1 s1:$S1)" "$(job backup $B2 s2:$S2 $B1)"
ok "backup 2 of s2 (prevId backup 1) ends READY" bwait $B2 READY
UP2=$(bstat $B2 .uploadedBytes)
echo "# backup 2: logicalBytes $(bstat $B2 .logicalBytes), uploadedBytes $UP2"
ok "backup 2 uploads little (< 256 KiB)" test "$UP2" -lt $((256 << 10))
expect_eq "backup 1 is not run again (still READY, same upload count)" "READY $UP" "$(bstat $B1 '"\(.state) \(.uploadedBytes)"')"

# --- 3. jobs that cannot run ---------------------------------------------------
BAD=$(jq -nc --argjson v "$VAULT" '{op: "backup", id: "nothex", name: "x", vault: $v}')
bpush "$(snaps s1:$S1 s2:$S2)" "$(job backup $B1 s1:$S1)" "$(job backup $B2 s2:$S2 $B1)" \
	"$(job backup c100000000000001)" "$(job backup c200000000000002 s9:9999999999999999)" "$BAD"
ok "a job without a snapshot ends ERROR" bwait c100000000000001 ERROR
ok "... naming the missing sourceSnapshot" sh -c "curl -s -H 'Authorization: Bearer $SECRET' http://127.0.0.1:$API/v1/status | jq -r '.backups[] | select(.id == \"c100000000000001\") | .stateDetails' | grep -q sourceSnapshot"
ok "a job of a snapshot that does not exist ends ERROR" bwait c200000000000002 ERROR
ok "... naming the snapshot" sh -c "curl -s -H 'Authorization: Bearer $SECRET' http://127.0.0.1:$API/v1/status | jq -r '.backups[] | select(.id == \"c200000000000002\") | .stateDetails' | grep -q s9"
ok "a job that does not decode is left out and logged, the intent applied" grep -q "backup job 4 left out" "$AQ_TMP/n1/agent.log"

# --- 4. kill -9 mid-backup -----------------------------------------------------
# (written on the shelf directly: a backup of it takes seconds, so the kill
# lands mid-upload; 192 MiB over NFS would take the suite's time)
ok "write a 192 MiB file on the shelf" sh -c "head -c $((192 << 20)) /dev/urandom >'$SHELF/volumes/$FA/big3.bin'"
bpush "$(snaps s1:$S1 s2:$S2 s3:$S3)" "$(job backup $B2 s2:$S2 $B1)"
bpush "$(snaps s1:$S1 s2:$S2 s3:$S3)" "$(job backup $B2 s2:$S2 $B1)" "$(job backup $B3 s3:$S3 $B2)"
for _ in $(seq 200); do
	[ "$(bstat $B3 .bytesDone)" -gt $((16 << 20)) ] 2>/dev/null && break
	sleep 0.05
done
AT=$(bstat $B3 '"\(.state) \(.bytesDone)/\(.bytesTotal)"')
aq_kill9 "$AGENT_PID"
echo "# backup 3 at the kill: $AT"
ok "backup 3 was not READY at the kill" test "${AT%% *}" != READY
agent_start n1
ok "after the restart backup 3 ends READY" bwait $B3 READY 120
ok "backup 3 holds the 192 MiB file (logicalBytes >= 200 MiB)" test "$(bstat $B3 .logicalBytes)" -ge $((200 << 20))

# --- 5. delete -----------------------------------------------------------------
bpush "$(snaps s1:$S1 s2:$S2 s3:$S3)" "$(job backup $B2 s2:$S2 $B1)" "$(job backup $B3 s3:$S3 $B2)" "$(job delete $B1)"
ok "the delete of backup 1 ends DELETED" bwait $B1 DELETED
ok "backup 3 stays READY" test "$(bstat $B3 .state)" = READY
ok "the agent log never holds the vault key" sh -c "! grep -q '$VKEY' '$AQ_TMP/n1/agent.log'"

echo "$AQ_PASS passed, $AQ_FAIL failed ($SNAP_FS shelf)"
[ "$AQ_FAIL" -eq 0 ]
