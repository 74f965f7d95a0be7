#!/usr/bin/env bash
# test_snapshot_agent.sh: snapshots in the data path (issue 20), with a
# standalone aquifer-agent driven by intents as aquiferd drives it, on a
# btrfs shelf (a loop image made here; the portable fallback when it cannot
# be mounted, or with AQ_SNAP_SHELF=plain: the same checks either way).
#   1. a data set (SNAP_BIG_MIB MiB in one file + SNAP_FILES small files,
#      written over NFS), snapshot, change half: .snapshot/<id> reads the old
#      bytes exactly, the live volume the new ones; creation time and space
#      reported; snapshot objects are read-only (NFS3ERR_ROFS)
#   2. revert brings the exact tree back (open handles go STALE, never the
#      wrong file); a clone is writable and independent of its parent
#   3. snapshotDirectory false: no .snapshot; a forged snapshot handle into
#      another volume's snapshots is STALE
#   4. usedBytes: 0 for an unchanged snapshot, grows when the live data
#      changes, the space comes back when the snapshot goes
#   5. kill -9 of the agent during create, delete, revert and clone: each
#      snapshot whole or absent, the live volume intact
# Full sizes (1 GiB, 100,000 files): bench/snap/run.sh (SNAP_BENCH=1: parts 1
# and 4 only).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/agent/tier/agent.sh"
. "$AQ_SRC/tests/agent/snap/snap.sh"

TOOL=$AQ_BUILDDIR/tests/agent/snap/snap_tool
# snap_tool, bounded: a server gone (or wedged) fails the check, never hangs the suite
st() { timeout "${SNAP_TOOL_SECS:-600}" "$TOOL" "$@"; }
FH=$AQ_BUILDDIR/tests/agent/nfs/nfs_fh_tool
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built (needs libnfs-dev)"; exit 77; }
command -v nfs-cat >/dev/null || { echo "SKIP: nfs-cat missing (libnfs-utils)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (open_by_handle_at, loop mounts)"; exit 77; }
trap 'snap_cleanup; aq_cleanup' EXIT
BIG=${SNAP_BIG_MIB:-64}
FILES=${SNAP_FILES:-1000}

snap_shelf n1 $((BIG * 4 + 1024))
AGENT_ARGS=(--snapshot-usage-seconds 1)
agent_start n1
FA=00000000000000a1 FB=00000000000000b2 FC=00000000000000c3
S1=1111111111111111 S2=2222222222222222 S3=3333333333333333
vol_a() { svol va $FA "$1"; }
sd() { jq -nc --argjson s "${1:-[]}" --argjson d "${2:-[]}" --argjson x "${3:-{\}}" \
	'{snapshotDirectory: true, snapshots: $s, snapshotDeletes: $d} + $x'; }
U=$(surl va "")
sum() { st sum "$U" "$1"; }
# pfill URL DIR N SEED [EVERY]: N small files in DIR/p0..p<W-1>, W writers
# at once (SNAP_WRITERS, default 4: each new name is made stable before its
# reply, and one writer would wait for every directory sync alone)
W=${SNAP_WRITERS:-4}
pfill() {
	local k pids=() rc=0
	for k in $(seq 0 $((W - 1))); do
		st fill "$1" "$2/p$k" $(($3 / W)) 4096 "$4" "${5:-1}" &
		pids+=($!)
	done
	for k in "${pids[@]}"; do wait "$k" || rc=1; done
	return $rc
}
now_ms() { date +%s%3N; }
# shelf_used: bytes the shelf uses: the loop file system's own count on btrfs
# (it knows shared extents), du of the shelf on the plain one (shared with
# the rest of the machine: df would count everybody's files)
shelf_used() {
	if [ "$SNAP_FS" = btrfs ]; then sync; df -B1 --output=used "$SHELF" | tail -1; else du -sxB1 "$SHELF" | cut -f1; fi
}

# --- 1. snapshot a data set, change half ------------------------------------
# lfill ROOT PASS: with SNAP_SEED=local (bench/snap/run.sh), the data set is
# written on the shelf directly (pass 1) and half of it rewritten (pass 2):
# 100,000 creates over NFS take half an hour here (each name is made stable
# before its reply); everything is still read back, and summed, over NFS.
lfill() {
	python3 - "$1" "$BIG" "$FILES" "$W" "$2" <<'PY'
import os, random, sys
root, big, files, w, npass = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = random.Random(npass)
with open(os.path.join(root, "big.bin"), "r+b" if npass > 1 else "wb") as f:
    for i in range(big):
        if npass == 1 or i % 2 == 0:
            f.seek(i << 20)
            f.write(r.randbytes(1 << 20))
    f.flush(); os.fsync(f.fileno())
for k in range(w):
    d = os.path.join(root, "small", "p%d" % k)
    os.makedirs(d, exist_ok=True)
    for i in range(files // w):
        if npass == 1 or i % 2 == 0:
            with open(os.path.join(d, "f%06d" % i), "wb") as f:
                f.write(r.randbytes(4096))
os.sync()
PY
}
spush "$(vol_a "$(sd)")"
if [ "${SNAP_SEED:-nfs}" = local ]; then
	ok "write ${BIG} MiB in one file and $FILES small files on the shelf (SNAP_SEED=local)" \
		lfill "$SHELF/volumes/$FA" 1
else
	ok "write ${BIG} MiB in one file over NFS" st big "$U" /big.bin "$BIG" 1
	st fill "$U" /small 0 0 0 >/dev/null
	ok "write $FILES small files over NFS" pfill "$U" /small "$FILES" 1
fi
BEFORE=$(sum /)
USED0=$(shelf_used)
T0=$(now_ms)
spush "$(vol_a "$(sd "$(snaps s1:$S1)")")"
T1=$(now_ms)
expect_eq "the snapshot is READY once the intent is applied" READY "$(sstat va '.snapshots[0].state')"
grep -o "snapshot s1 made in [0-9.]* s" "$AQ_TMP/n1/agent.log" | tail -1 | sed "s/^/# $SNAP_FS: ${BIG} MiB + $FILES files: /"
echo "# $SNAP_FS: the push that made it took $((T1 - T0)) ms"
USED1=$(shelf_used)
echo "# $SNAP_FS: shelf space used by the snapshot: $(((USED1 - USED0) / 1024)) KiB"
expect_eq ".snapshot/s1 reads the data set as it was" "$BEFORE" "$(sum /.snapshot/s1)"
if [ "${SNAP_SEED:-nfs}" = local ]; then
	ok "rewrite half of the big file and of the small files on the shelf" lfill "$SHELF/volumes/$FA" 2
else
	ok "rewrite half of the big file" st big "$U" /big.bin "$BIG" 2 2
	ok "rewrite half of the small files" pfill "$U" /small "$FILES" 2 2
fi
AFTER=$(sum /)
ok "the live volume changed" test "$AFTER" != "$BEFORE"
expect_eq ".snapshot/s1 still reads the old bytes exactly" "$BEFORE" "$(sum /.snapshot/s1)"
expect_eq "the live volume reads the new bytes" "$AFTER" "$(sum /)"
USED2=$(shelf_used)
echo "# $SNAP_FS: shelf used: before the snapshot $((USED0 >> 20)) MiB, after it $((USED1 >> 20)) MiB, after the changes $((USED2 >> 20)) MiB"
expect_eq "the snapshot folder lists the snapshot" s1 "$(nfs-ls "$(surl va /.snapshot)" | awk '{print $NF}')"
printf x >"$AQ_TMP/x"
nfs-cp "$AQ_TMP/x" "$(surl va /.snapshot/s1/new)" 2>"$AQ_TMP/err"
ok "a create in a snapshot is NFS3ERR_ROFS" grep -q NFS3ERR_ROFS "$AQ_TMP/err"
nfs-cp "$AQ_TMP/x" "$(surl va /.snapshot/new)" 2>"$AQ_TMP/err"
ok "a create in .snapshot itself is NFS3ERR_ROFS" grep -q NFS3ERR_ROFS "$AQ_TMP/err"
nfs-cp "$AQ_TMP/x" "$(surl va /.snapshot)" 2>"$AQ_TMP/err"
ok "a file named .snapshot cannot be made in the root" grep -q "NFS3ERR_EXIST\|NFS3ERR_ROFS\|NFS3ERR_ISDIR" "$AQ_TMP/err"
if [ -x "$FH" ]; then
	SFH=$("$FH" lookup --port "$NFS" --export /va .snapshot)
	expect_eq "SETATTR on .snapshot is NFS3ERR_ROFS (30), GETATTR works" "getattr=0 setattr=30" \
		"$("$FH" use --port "$NFS" --fh "$SFH" | grep -o 'getattr=[0-9]*') $("$FH" use --port "$NFS" --fh "$SFH" | grep -o 'setattr=[0-9]*')"
fi

# --- 4. usedBytes ------------------------------------------------------------
for _ in $(seq 100); do [ "$(sstat va '.snapshots[0].usedBytes')" -gt 0 ] 2>/dev/null && break; sleep 0.2; done
UB=$(sstat va '.snapshots[0].usedBytes')
# (the big file's old half stays in extents the live file still shares
# part of: btrfs frees whole extents, so FIEMAP rightly calls them shared)
ok "usedBytes of s1 counts what the changes left to it alone ($UB bytes: at least the rewritten small files)" \
	test "$UB" -ge $((FILES / 2 * 4096))
expect_eq "snapshotBytes sums the volume's snapshots" "$UB" "$(sstat va .snapshotBytes)"
METRICS=$(curl -s "http://127.0.0.1:$API/metrics")
expect_eq "/metrics: the volume's snapshot count and bytes" "1 $UB" \
	"$(printf '%s\n' "$METRICS" | awk '/^aquifer_agent_volume_snapshots\{.*volumes\/va"\}/ {c=$2} /^aquifer_agent_volume_snapshot_bytes\{.*volumes\/va"\}/ {b=$2} END {print c, b}')"
spush "$(vol_a "$(sd "$(snaps s2:$S2)")")"
for _ in $(seq 100); do [ "$(sstat va '[.snapshots[] | select(.id == "s2")][0].state')" = READY ] && break; sleep 0.2; done
sleep 1.5
if [ "$SNAP_FS" = btrfs ]; then
	expect_eq "an unchanged snapshot holds nothing alone (btrfs shares every extent)" 0 \
		"$(sstat va '[.snapshots[] | select(.id == "s2")][0].usedBytes')"
fi

if [ "${SNAP_BENCH:-0}" = 1 ]; then # bench/snap/run.sh: the data set part only
	echo "$AQ_PASS passed, $AQ_FAIL failed ($SNAP_FS shelf)"
	[ "$AQ_FAIL" -eq 0 ]
	exit
fi

# --- 2. revert, clone ---------------------------------------------------------
ok "keep a handle to a file (nfs_fh_tool lookup)" sh -c "\"$FH\" lookup --port $NFS --export /va big.bin >$AQ_TMP/big.fh"
spush "$(vol_a "$(sd "$(snaps s2:$S2)" "$(snaps s1:$S1)" "{\"revert\":{\"id\":\"s2\",\"uid\":\"$S2\",\"seq\":1}}")")"
expect_eq "s1 deleted, s2 kept" s2 "$(sstat va '[.snapshots[].id] | join(",")')"
ok "write after s2 (to be reverted)" st fill "$U" /later 10 100 7
spush "$(vol_a "$(sd "$(snaps s2:$S2)" "[]" "{\"revert\":{\"id\":\"s2\",\"uid\":\"$S2\",\"seq\":2}}")")"
expect_eq "revertSeq is the seq applied" 2 "$(sstat va .revertSeq)"
expect_eq "the reverted volume is s2's tree exactly" "$AFTER" "$(sum /)"
expect_eq "a handle kept across the revert is NFS3ERR_STALE (70), never another file" "getattr=70" \
	"$("$FH" use --port "$NFS" --fh "$(cat "$AQ_TMP/big.fh")" | grep -o 'getattr=[0-9]*')"
spush "$(vol_a "$(sd "$(snaps s2:$S2)" "[]" "{\"revert\":{\"id\":\"s2\",\"uid\":\"$S2\",\"seq\":2}}")")"
ok "a revert seq is applied once (a later write survives the same intent again)" st fill "$U" /later 1 100 8
spush "$(vol_a "$(sd "$(snaps s2:$S2)" "[]" "{\"revert\":{\"id\":\"s2\",\"uid\":\"$S2\",\"seq\":2}}")")"
ok "... and is still there" test "$(nfs-ls "$(surl va /later)" | wc -l)" -eq 1
CLONE="{\"cloneSource\":{\"dir\":\"volumes/$FA\",\"id\":\"s2\",\"uid\":\"$S2\"}}"
spush "$(vol_a "$(sd "$(snaps s2:$S2)")")" "$(svol vc $FC "$CLONE")"
UC=$(surl vc "")
expect_eq "the clone holds s2's tree" "$AFTER" "$(st sum "$UC" /)"
ok "the clone is writable" st fill "$UC" /small/p0 4 4096 9
ok "the parent is written too" st fill "$U" /small/p0 4 4096 10 3
CL=$(st sum "$UC" /)
ok "the clone's writes are its own" test "$CL" != "$AFTER"
expect_eq "the parent's snapshot is unaffected by the clone's writes" "$AFTER" "$(sum /.snapshot/s2)"
ok "the parent's writes do not reach the clone" test "$(st sum "$UC" /)" = "$CL"

# --- 3. .snapshot off; forged handles ------------------------------------------
spush "$(svol va $FA '{"snapshotDirectory":false}')" "$(svol vc $FC "$CLONE")"
nfs-cat "$(surl va /.snapshot/s2/big.bin)" >/dev/null 2>"$AQ_TMP/err"
ok "snapshotDirectory false: /.snapshot does not exist" grep -q "NOENT" "$AQ_TMP/err"
expect_eq "snapshotDirectory false: the snapshot still exists" s2 "$(sstat va '[.snapshots[].id] | join(",")')"
if [ -x "$FH" ]; then
	KEYHEX=$KEY
	FILE_B=$(ls -d "$SHELF/.snapshots/$FA/s2/big.bin")
	spush "$(vol_a "$(sd "$(snaps s2:$S2)")")" "$(svol vc $FC "$(jq -nc --argjson c "$CLONE" '$c + {snapshotDirectory: true}')")"
	OWN=$("$FH" forge --key "$KEYHEX" --fsid $FA --snap "$FILE_B")
	expect_eq "a snapshot handle of va's own snapshot file works" "getattr=0" \
		"$("$FH" use --port "$NFS" --fh "$OWN" | grep -o 'getattr=[0-9]*')"
	HOSTILE=$("$FH" forge --key "$KEYHEX" --fsid $FC --snap "$FILE_B")
	expect_eq "vc's snapshot handle into va's snapshots is NFS3ERR_STALE (70)" "getattr=70 read=70" \
		"$("$FH" use --port "$NFS" --fh "$HOSTILE" | grep -o 'getattr=[0-9]* read=[0-9]*')"
	LIVE=$("$FH" forge --key "$KEYHEX" --fsid $FA "$FILE_B")
	expect_eq "a live handle of va into its own snapshot is NFS3ERR_STALE (70)" "getattr=70" \
		"$("$FH" use --port "$NFS" --fh "$LIVE" | grep -o 'getattr=[0-9]*')"
	INTO_LIVE=$("$FH" forge --key "$KEYHEX" --fsid $FA --snap "$SHELF/volumes/$FA/big.bin")
	expect_eq "a snapshot handle of va into its live tree is NFS3ERR_STALE (70)" "getattr=70" \
		"$("$FH" use --port "$NFS" --fh "$INTO_LIVE" | grep -o 'getattr=[0-9]*')"
fi

# --- 5. kill -9 during create, delete, revert, clone ---------------------------
LIVE_SUM=$(sum /)
S2_SUM=$(sum /.snapshot/s2)
seq_no=10
for round in 1 2 3 4; do
	for op in create delete revert clone; do
		seq_no=$((seq_no + 1))
		case $op in
		create) body="$(vol_a "$(sd "$(snaps s2:$S2 s3:$S3)")")" ;;
		delete) body="$(vol_a "$(sd "$(snaps s2:$S2)" "$(snaps s3:$S3)")")" ;;
		revert) body="$(vol_a "$(sd "$(snaps s2:$S2)" "[]" "{\"revert\":{\"id\":\"s2\",\"uid\":\"$S2\",\"seq\":$seq_no}}")")" ;;
		clone) body="$(svol "vk$round" "00000000000000e$round" "{\"cloneSource\":{\"dir\":\"volumes/$FA\",\"id\":\"s2\",\"uid\":\"$S2\"}}")" ;;
		esac
		GEN=$((GEN + 1))
		jq -nc --arg node "$NODE" --argjson v "[$body]" --argjson g $GEN '{node: $node, volumes: $v, generation: $g}' |
			curl -s -m 5 -X PUT -H "Authorization: Bearer $SECRET" --data-binary @- \
				"http://127.0.0.1:$API/v1/intent" >/dev/null 2>&1 &
		CURL=$!
		sleep "0.0$((round * 2))"
		kill -9 "$AGENT_PID"
		wait "$AGENT_PID" 2>/dev/null
		wait "$CURL" 2>/dev/null
		agent_start n1
		# whatever the kill cut short: each snapshot whole or absent
		spush "$(vol_a "$(sd "$(snaps s2:$S2)" "$(snaps s3:$S3)")")"
		expect_eq "kill -9 during $op ($round): s2 whole" "$S2_SUM" "$(sum /.snapshot/s2)"
		NOW=$(sum /)
		if [ $op = revert ]; then # the old tree or the reverted one, whole
			ok "kill -9 during revert ($round): the live volume is whole (old or reverted)" \
				test "$NOW" = "$LIVE_SUM" -o "$NOW" = "$S2_SUM"
			LIVE_SUM=$NOW
		else
			expect_eq "kill -9 during $op ($round): the live volume is whole" "$LIVE_SUM" "$NOW"
		fi
		ok "kill -9 during $op ($round): no half-made snapshot left" \
			test "$(nfs-ls "$(surl va /.snapshot)" | awk '{print $NF}' | tr '\n' ,)" = "s2,"
		if [ $op = clone ]; then
			spush "$(vol_a "$(sd "$(snaps s2:$S2)")")" "$(svol "vk$round" "00000000000000e$round" \
				"{\"cloneSource\":{\"dir\":\"volumes/$FA\",\"id\":\"s2\",\"uid\":\"$S2\"}}")"
			expect_eq "kill -9 during clone ($round): the clone is s2's tree, whole" "$S2_SUM" \
				"$(st sum "$(surl "vk$round" "")" /)"
		fi
	done
done
ok "nothing is left in .snapshots/.work after the restarts" test -z "$(ls -A "$SHELF/.snapshots/.work")"
# deleting the volume takes its snapshots
spush "$(svol vc $FC "$CLONE")"
push "$(jq -nc --arg node "$NODE" --arg fsid $FA --argjson v "[$(svol vc $FC "$CLONE")]" \
	'{node: $node, volumes: $v, deletes: [{name: "projects/p/locations/east/volumes/va", fsid: $fsid, dir: ("volumes/" + $fsid)}]}')"
ok "a deleted volume's snapshots go with it" test ! -e "$SHELF/.snapshots/$FA" -a ! -e "$SHELF/.snapshots/$FA.meta"

echo "$AQ_PASS passed, $AQ_FAIL failed ($SNAP_FS shelf)"
[ "$AQ_FAIL" -eq 0 ]
