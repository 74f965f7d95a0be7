#!/usr/bin/env bash
# tests/agent/bkp/test_bkp_s3rver.sh: the backup engine against s3rver (the
# npm S3-API server of the cold-tier tests; issue 21, acceptance 7, the
# second peer beside aq-s3lite): the whole test_bkp suite with its vaults in
# s3rver buckets, then with bkp_tool a backup of a generated tree, a second
# one after a change, and both restored exactly (the tree listing of bkp_tool
# ls: content, modes, owners, times). s3rver does not verify signatures
# (aq-s3lite does: test_bkp_s3lite.sh).
# shellcheck source=../tier/obj_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tier/obj_lib.sh" aq-bkp-s3rver
tool=$AQ_BUILDDIR/tests/agent/bkp/bkp_tool
[ -x "$tool" ] || { echo "no $tool (make first)" >&2; exit 99; }

aq_s3_setup
aq_s3_start "$tmp/s3" || exit 99
export AQ_BKP_S3_ACCESS_KEY=$AQ_S3_ACCESS_KEY AQ_BKP_S3_SECRET_KEY=$AQ_S3_SECRET_KEY
fail=0
AQ_BKP_S3=$AQ_S3_ENDPOINT "$AQ_BUILDDIR/tests/agent/bkp/test_bkp" || fail=1

key=$(printf '3c%.0s' $(seq 32))
store=s3:$AQ_S3_ENDPOINT/bkp-s3rver
mkdir -p "$tmp/src"
"$tool" gen "$tmp/src" 16384 >/dev/null
for i in $(seq 1 8); do head -c 1048576 /dev/urandom >"$tmp/src/f$i"; done
"$tool" ls "$tmp/src" >"$tmp/want1.ls"
if "$tool" backup "$store" "$key" b1 "$tmp/src" "" 262144 >"$tmp/b1.out" 2>&1; then
	echo "ok: backup 1 into s3rver: $(tail -1 "$tmp/b1.out")"
else
	echo "not ok: backup 1 into s3rver: $(cat "$tmp/b1.out")"; fail=1
fi
head -c 65536 /dev/urandom | dd of="$tmp/src/f3" bs=65536 seek=3 conv=notrunc status=none
"$tool" ls "$tmp/src" >"$tmp/want2.ls"
if "$tool" backup "$store" "$key" b2 "$tmp/src" b1 262144 >"$tmp/b2.out" 2>&1; then
	echo "ok: backup 2 (incremental) into s3rver: $(tail -1 "$tmp/b2.out")"
else
	echo "not ok: backup 2 into s3rver: $(cat "$tmp/b2.out")"; fail=1
fi
for b in 1 2; do
	if "$tool" restore "$store" "$key" "b$b" "$tmp/r$b" >"$tmp/r$b.out" 2>&1 && "$tool" ls "$tmp/r$b" >"$tmp/got$b.ls" &&
		cmp -s "$tmp/want$b.ls" "$tmp/got$b.ls"; then
		echo "ok: backup $b restored from s3rver exactly"
	else
		echo "not ok: backup $b restored from s3rver: $(cat "$tmp/r$b.out")"; diff "$tmp/want$b.ls" "$tmp/got$b.ls" | head -5; fail=1
	fi
done
exit $fail
