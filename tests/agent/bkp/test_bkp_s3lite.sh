#!/usr/bin/env bash
# tests/agent/bkp/test_bkp_s3lite.sh: the backup engine against aq-s3lite
# (tests/fixtures/aq-s3lite, which verifies SigV4): the whole test_bkp suite
# with its vaults in S3 buckets, then, with bkp_tool, the store stopped in the
# middle of a backup's upload: the backup fails (-EAGAIN, exit 1), leaves no
# manifest and no lock; the store comes back on the same data, the same
# backup runs again, skips the chunks stored before the stop, and restores
# exactly (the tree listing of bkp_tool ls: content, modes, owners, times).
# shellcheck source=../tier/obj_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tier/obj_lib.sh" aq-bkp-s3lite
tool=$AQ_BUILDDIR/tests/agent/bkp/bkp_tool
[ -x "$tool" ] || { echo "no $tool (make first)" >&2; exit 99; }

aq_s3lite_start "$tmp/s3" || exit 99
export AQ_BKP_S3_ACCESS_KEY=$AQ_S3_ACCESS_KEY AQ_BKP_S3_SECRET_KEY=$AQ_S3_SECRET_KEY
fail=0
AQ_BKP_S3=$AQ_S3_ENDPOINT "$AQ_BUILDDIR/tests/agent/bkp/test_bkp" || fail=1

key=$(printf '5a%.0s' $(seq 32))
store=s3:$AQ_S3_ENDPOINT/bkp-stop
port=$AQ_S3_PORT
mkdir -p "$tmp/src"
"$tool" gen "$tmp/src" 65536 >/dev/null
for i in $(seq 1 48); do head -c 1048576 /dev/urandom >"$tmp/src/f$i"; done
"$tool" ls "$tmp/src" >"$tmp/want.ls"
"$tool" backup "$store" "$key" b1 "$tmp/src" "" 262144 >"$tmp/b1.out" 2>"$tmp/b1.err" &
bk=$!
# stop the store once some chunks are in
for _ in $(seq 1 400); do
	n=$(find "$tmp/s3/data/bkp-stop/c" -type f 2>/dev/null | wc -l)
	[ "$n" -ge 8 ] && break
	sleep 0.05
done
aq_s3_stop
if wait "$bk"; then
	echo "not ok: the backup finished although the store stopped (after $n chunks; raise the data size)"
	fail=1
else
	echo "ok: backup failed with the store down: $(cat "$tmp/b1.err")"
	grep -q "unreachable\|timed out" "$tmp/b1.err" || { echo "not ok: not an -EAGAIN reason"; fail=1; }
fi
before=$(find "$tmp/s3/data/bkp-stop/c" -type f | wc -l)
if [ -n "$(find "$tmp/s3/data/bkp-stop" -path '*/m/*' -type f)" ]; then
	echo "not ok: a manifest was left behind"; fail=1
else
	echo "ok: no manifest; $before chunks stored before the stop"
fi
"$tool" ls "$tmp/src" >"$tmp/want.ls" # the failed run's readlink set the symlinks' atimes
aq_s3lite_start "$tmp/s3" "$port" || exit 99
"$tool" backup "$store" "$key" b1 "$tmp/src" "" 262144 >"$tmp/b1.out" || { echo "not ok: re-run failed"; fail=1; }
cat "$tmp/b1.out"
new=$(sed -n 's/.* new=\([0-9]*\).*/\1/p' "$tmp/b1.out") chunks=$(sed -n 's/.* chunks=\([0-9]*\).*/\1/p' "$tmp/b1.out")
if [ -n "$new" ] && [ "$new" -eq $((chunks - before)) ]; then echo "ok: the re-run put $new of $chunks chunks"
else echo "not ok: re-run put $new of $chunks chunks, $before were there"; fail=1; fi
if [ -n "$(find "$tmp/s3/data/bkp-stop" -path '*/l/*' -type f)" ]; then
	echo "not ok: a lock is left after the re-run"; fail=1
else
	echo "ok: the re-run took the failed run's lock over and removed it"
fi
"$tool" restore "$store" "$key" b1 "$tmp/dst" >/dev/null || { echo "not ok: restore failed"; fail=1; }
"$tool" ls "$tmp/dst" >"$tmp/got.ls"
if diff "$tmp/want.ls" "$tmp/got.ls" >/dev/null; then echo "ok: restore equals the source"
else echo "not ok: restore differs:"; diff "$tmp/want.ls" "$tmp/got.ls" | head; fail=1; fi
exit $fail
