#!/usr/bin/env bash
# test_snapshot_tier.sh: snapshots of a tiered volume (issue 20, acceptance
# 4) with a standalone aquifer-agent (1-second tiering days) on a btrfs shelf
# (the portable fallback where a loop mount is not possible): data cold when
# the snapshot is made stays readable through /.snapshot after the live file
# is rewritten; an object goes from the store only when neither the live
# file nor a snapshot names it (the tier scan: no orphans, nothing missing,
# before and after the snapshot is deleted); a backup of the snapshot reads
# the cold chunks from the tier (issue 21).
. "$(dirname "$0")/lib.sh"
AQ_RECORD=0
. "$AQ_SRC/tests/agent/tier/agent.sh"
. "$AQ_SRC/tests/agent/snap/snap.sh"
TOOL=$AQ_BUILDDIR/tests/agent/snap/snap_tool
# snap_tool, bounded: a server gone (or wedged) fails the check, never hangs the suite
st() { timeout 600 "$TOOL" "$@"; }
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built (needs libnfs-dev)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (open_by_handle_at, loop mounts)"; exit 77; }
trap 'snap_cleanup; aq_cleanup' EXIT
MIB=1048576 SIZE=16
FSID=00000000000000a1 S1=1111111111111111

snap_shelf n1 1024
AGENT_ARGS=(--snapshot-usage-seconds 1)
agent_start n1
# tpush ACTION SNAPFIELDS: the tiered volume tv with its snapshot fields
tpush() { push "$(intent "$1" DEFAULT | jq -c --argjson s "$2" '.volumes[0] += $s')"; }
U="nfs://127.0.0.1/tv?version=3&nfsport=$NFS&mountport=$NFS"
scan_clean() { # DESC: no orphans, nothing missing
	local s
	s=$(scan)
	if printf '%s' "$s" | jq -e '.volumes[0] | .orphansCount == 0 and .missingCount == 0' >/dev/null; then
		aq_pass "$1"
	else
		aq_failed "$1" "scan: ${s:0:400}"
	fi
}
objects() { scan | jq -r '.volumes[0].objects'; }

tpush ENABLED '{"snapshotDirectory":true}'
ok "write $SIZE MiB over NFS" st big "$U" /big.bin $SIZE 1
BEFORE=$(st sum "$U" /)
ok "every chunk goes cold" wait_cold $((SIZE * MIB)) 40
expect_eq "$SIZE objects in the store" $SIZE "$(objects)"
tpush ENABLED "{\"snapshotDirectory\":true,\"snapshots\":$(snaps s1:$S1)}"
expect_eq "the snapshot of the tiered volume is READY" READY "$(vstat 'snapshots[0].state')"
expect_eq ".snapshot/s1 reads the cold data" "$BEFORE" "$(st sum "$U" /.snapshot/s1)"
# A backup of s1 (issue 21): the chunks cold at snapshot time are read from
# the tier, never backed up as zeros (the holes in the snapshot's file).
VKEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
BSTORE=.backups/00000000000000f1 BID=b100000000000001
BJOB=$(jq -nc --arg k "$VKEY" --arg p "$BSTORE" --arg id "$BID" '{op: "backup", id: $id,
	name: "projects/p/locations/l/backupVaults/bv/backups/b1", volume: "projects/p/locations/east/volumes/tv",
	snapshot: {id: "s1", uid: "1111111111111111"}, vault: {key: $k, store: {directory: {path: $p}}}}')
push "$(intent ENABLED DEFAULT | jq -c --argjson s "$(snaps s1:$S1)" --argjson j "$BJOB" \
	'.volumes[0] += {snapshotDirectory: true, snapshots: $s} | .backups = [$j]')"
bstate() { curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" |
	jq -r --arg id "$BID" '[.backups[]? | select(.id == $id)][0].state'; }
for _ in $(seq 300); do [ "$(bstate)" = READY ] || [ "$(bstate)" = ERROR ] && break; sleep 0.2; done
expect_eq "the backup of the tiered snapshot s1 is READY" READY "$(bstate)"
ok "the backup restores (bkp_tool)" "$AQ_BUILDDIR/tests/agent/bkp/bkp_tool" restore "$SHELF/$BSTORE" "$VKEY" "$BID" "$AQ_TMP/bkr"
ok "read .snapshot/s1/big.bin over NFS" sh -c "nfs-cat '${U%%\?*}/.snapshot/s1/big.bin?${U#*\?}' >'$AQ_TMP/s1big.bin'"
ok "the restored big.bin is the snapshot's (cold) data, not zeros" cmp -s "$AQ_TMP/s1big.bin" "$AQ_TMP/bkr/big.bin"
ok "... and it is not all zeros" sh -c "! cmp -s '$AQ_TMP/bkr/big.bin' /dev/zero -n $((SIZE * MIB))"
rm -rf "$AQ_TMP/bkr" "$AQ_TMP/s1big.bin"
ok "rewrite the live file (each write brings its chunk back, then changes it)" st big "$U" /big.bin $SIZE 2
AFTER=$(st sum "$U" /)
ok "the live file changed" test "$AFTER" != "$BEFORE"
expect_eq "the data cold at snapshot time still reads back through the snapshot" "$BEFORE" \
	"$(st sum "$U" /.snapshot/s1)"
expect_eq "the live volume reads the new data" "$AFTER" "$(st sum "$U" /)"
ok "the snapshot's objects stay in the store (the live file no longer names them)" test "$(objects)" -ge $SIZE
scan_clean "scan after the rewrite: no orphans, nothing missing"
ok "the rewritten live file goes cold again" wait_cold $((SIZE * MIB)) 40
expect_eq "store: the snapshot's objects and the live file's new ones" $((2 * SIZE)) "$(objects)"
scan_clean "scan with both cold: no orphans, nothing missing"
expect_eq "the snapshot still reads its data" "$BEFORE" "$(st sum "$U" /.snapshot/s1)"
expect_eq "the live volume still reads its data" "$AFTER" "$(st sum "$U" /)"
# the agent restarts (kill -9): the rows are in the tier map
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
agent_start n1
expect_eq "after kill -9 and restart: the snapshot reads its cold data" "$BEFORE" "$(st sum "$U" /.snapshot/s1)"
tpush ENABLED "{\"snapshotDirectory\":true,\"snapshotDeletes\":$(snaps s1:$S1)}"
expect_eq "the snapshot is gone" 0 "$(vstat 'snapshots | length')"
for _ in $(seq 100); do [ "$(objects)" = "$SIZE" ] && break; sleep 0.2; done
expect_eq "its objects went from the store; the live file's stay" $SIZE "$(objects)"
scan_clean "scan after the delete: no orphans, nothing missing"
expect_eq "the live volume reads its data" "$AFTER" "$(st sum "$U" /)"
# A clone of the tiered volume's snapshot (GCNV: restore to a new volume):
# the chunks cold at snapshot time come back from the store into the clone
# before it is attached, so it reads every byte and names no object.
tpush ENABLED "{\"snapshotDirectory\":true,\"snapshots\":$(snaps s2:2222222222222222)}"
expect_eq "snapshot s2 of the cold live file is READY" READY "$(vstat 'snapshots[0].state')"
CF=00000000000000c1
push "$(intent ENABLED DEFAULT | jq -c --argjson s "$(snaps s2:2222222222222222)" --argjson c "$(svol tc $CF \
	"{\"cloneSource\":{\"dir\":\"volumes/$FSID\",\"id\":\"s2\",\"uid\":\"2222222222222222\"}}")" \
	'.volumes[0] += {snapshotDirectory: true, snapshots: $s} | .volumes += [$c]')"
expect_eq "the clone of the tiered snapshot is served" LIVE "$(sstat tc .state)"
CU="nfs://127.0.0.1/tc?version=3&nfsport=$NFS&mountport=$NFS"
expect_eq "the clone reads the data that was cold at snapshot time" "$AFTER" "$(st sum "$CU" /)"
ok "the clone holds every byte on its own (no holes left where chunks were cold)" \
	test "$(du -B1 --apparent-size "$SHELF/volumes/$CF/big.bin" | cut -f1)" -le \
	"$(du -B1 "$SHELF/volumes/$CF/big.bin" | cut -f1)"
scan_clean "scan of the source after the clone: no orphans, nothing missing"

# A revert of the tiered volume to s2, with the live file rewritten and cold
# again (new objects): the tree comes back with the chunks cold at snapshot
# time filled in, the live rows go (their objects are deleted, s2's stay), and
# nothing stale is left in the tier map: after kill -9 and a restart the
# volume still reads s2's bytes, and it goes cold again as any volume.
S2SPEC=$(snaps s2:2222222222222222)
tpush ENABLED "{\"snapshotDirectory\":true,\"snapshots\":$S2SPEC}"
ok "rewrite the live file a third time" st big "$U" /big.bin $SIZE 3
THIRD=$(st sum "$U" /)
ok "the third content differs from s2's" test "$THIRD" != "$AFTER"
ok "the third content goes cold" wait_cold $((SIZE * MIB)) 40
expect_eq "store: s2's objects and the live file's" $((2 * SIZE)) "$(objects)"
tpush ENABLED "{\"snapshotDirectory\":true,\"snapshots\":$S2SPEC,\"revert\":{\"id\":\"s2\",\"uid\":\"2222222222222222\",\"seq\":1}}"
expect_eq "the revert of the tiered volume is applied" 1 "$(vstat revertSeq)"
expect_eq "the reverted volume reads s2's bytes (cold at snapshot time)" "$AFTER" "$(st sum "$U" /)"
for _ in $(seq 100); do [ "$(objects)" = "$SIZE" ] && break; sleep 0.2; done
expect_eq "the old tree's objects went; s2's stay" $SIZE "$(objects)"
scan_clean "scan after the revert: no orphans, nothing missing"
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
agent_start n1
expect_eq "after kill -9 and restart: the reverted volume reads s2's bytes" "$AFTER" "$(st sum "$U" /)"
ok "the reverted file goes cold again" wait_cold $((SIZE * MIB)) 40
expect_eq "cold again, it reads s2's bytes" "$AFTER" "$(st sum "$U" /)"
expect_eq ".snapshot/s2 still reads its bytes" "$AFTER" "$(st sum "$U" /.snapshot/s2)"
scan_clean "scan with the reverted file cold: no orphans, nothing missing"
echo "$AQ_PASS passed, $AQ_FAIL failed ($SNAP_FS shelf)"
[ "$AQ_FAIL" -eq 0 ]
