#!/usr/bin/env bash
# bench/backup/run.sh: the backup engine (agent/bkp/) on a directory store:
# backup and restore MiB/s, first and incremental, next to the same store's
# raw PUT / GET rate (1 MiB objects through obj_put / obj_get: write, fsync,
# rename, like a chunk) measured in the same run. Prints one line per step.
# Data: BIG files of BIG_MIB each plus SMALL files of SMALL_KIB (random,
# incompressible); the change, about 1% of the bytes: 1% of the small files
# rewritten, and one 1 MiB run rewritten in place in as many big files as
# make up the rest of the 1%; then one byte inserted at the front of one big
# file (what fixed-size chunks pay for a shift). Every restore is compared with its source (bkp_tool ls: content
# sha256, modes, owners, ns times, links).
#
# STORE=dir (default), s3lite (tests/fixtures/aq-s3lite, which verifies
# SigV4) or s3rver (npm): the vaults and the raw rates in that store,
# started on loopback for the run (acceptance 7 of issue 21).
#
#   [STORE=dir|s3lite|s3rver] [BIG=64] [BIG_MIB=4] [SMALL=4096] [SMALL_KIB=16] [CHUNK=1048576] bench/backup/run.sh [BUILDDIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
b=${1:-${AQ_BUILDDIR:-$here/../../_b}}
tool=$b/tests/agent/bkp/bkp_tool
BIG=${BIG:-64} BIG_MIB=${BIG_MIB:-4} SMALL=${SMALL:-4096} SMALL_KIB=${SMALL_KIB:-16} CHUNK=${CHUNK:-1048576}
sb=$((SMALL_KIB * 1024))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-bench-bkp.XXXXXX")
STORE=${STORE:-dir}
st=$tmp # where vaults live: a folder, or s3:ENDPOINT (a bucket per vault)
if [ "$STORE" != dir ]; then
	AQ_SRC=$(cd "$here/../.." && pwd) AQ_BUILDDIR=$b
	export AQ_SRC AQ_BUILDDIR
	# shellcheck source=../../tests/agent/tier/s3.sh
	. "$AQ_SRC/tests/agent/tier/s3.sh"
	trap 'aq_s3_cleanup; rm -rf "$tmp"' EXIT
	case $STORE in
	s3lite) aq_s3lite_start "$tmp/s3" ;;
	s3rver) aq_s3_setup; aq_s3_start "$tmp/s3" ;;
	*) echo "STORE must be dir, s3lite or s3rver" >&2; exit 2 ;;
	esac
	export AQ_BKP_S3_ACCESS_KEY=$AQ_S3_ACCESS_KEY AQ_BKP_S3_SECRET_KEY=$AQ_S3_SECRET_KEY
	st=s3:$AQ_S3_ENDPOINT
else
	trap 'rm -rf "$tmp"' EXIT
fi
key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
mib() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1048576 / s }'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
report() { # what line
	local l=$2 logical secs
	logical=$(field logical "$l") secs=$(field secs "$l")
	echo "$1: $(mib "$logical" "$secs") MiB/s (logical $(mib "$logical" 1) MiB in ${secs} s; read $(field read "$l") B, uploaded $(field uploaded "$l") B, chunks $(field chunks "$l"), new $(field new "$l"), unchanged files $(field unchanged "$l"), manifest $(field manifest "$l") B)"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $BIG x $BIG_MIB MiB + $SMALL x $SMALL_KIB KiB, chunk $CHUNK B; store: $STORE on $(df -T "$tmp" | awk 'NR==2 { print $2 }')"
mkdir -p "$tmp/src/big" "$tmp/src/small"
for i in $(seq 1 "$BIG"); do head -c $((BIG_MIB << 20)) /dev/urandom >"$tmp/src/big/$i"; done
head -c $((SMALL * $sb)) /dev/urandom | split -b $sb -a 5 - "$tmp/src/small/s"
total=$(( (BIG * BIG_MIB << 20) + SMALL * $sb ))
sync
# (backup 1 and restore 1 run twice: one put / file at a time, then the default 4)
# the store's own rates, for objects of a big file's chunk and of a small file
big_n=$(( BIG * BIG_MIB * 1048576 / CHUNK ))
l=$("$tool" rawput "$st/raw" "$big_n" $((CHUNK / 1024))); echo "raw store PUT: $(mib $((big_n * CHUNK)) "$(field secs "$l")") MiB/s ($big_n x $((CHUNK / 1024)) KiB objects, ${l##*secs=} s)"
l=$("$tool" rawget "$st/raw" "$big_n" $((CHUNK / 1024))); echo "raw store GET: $(mib $((big_n * CHUNK)) "$(field secs "$l")") MiB/s (${l##*secs=} s)"
rm -rf "$tmp/raw"
l=$("$tool" rawput "$st/raw2" "$SMALL" "$SMALL_KIB"); echo "raw store PUT: $(mib $((SMALL * sb)) "$(field secs "$l")") MiB/s ($SMALL x $SMALL_KIB KiB objects, ${l##*secs=} s: $(awk -v n="$SMALL" -v s="$(field secs "$l")" 'BEGIN { printf "%.0f", n / s }') objects/s)"
l=$("$tool" rawget "$st/raw2" "$SMALL" "$SMALL_KIB"); echo "raw store GET: $(mib $((SMALL * sb)) "$(field secs "$l")") MiB/s (${l##*secs=} s)"
rm -rf "$tmp/raw"
"$tool" ls "$tmp/src" >"$tmp/l1"
# the same first backup with one put at a time, into a vault of its own (then dropped)
report "backup 1 (first, parallel 1)" "$(AQ_BKP_PARALLEL=1 "$tool" backup "$st/vault1" "$key" b1 "$tmp/src" "" "$CHUNK")"
[ "$STORE" != dir ] || rm -rf "$st/vault1"
report "backup 1 (first, parallel 4)" "$("$tool" backup "$st/vault" "$key" b1 "$tmp/src" "" "$CHUNK")"
# the ~1% change
nb=$(( (total / 100 - SMALL * $sb / 100) >> 20 )) ns=$(( (SMALL + 99) / 100 )) changed=0
[ "$nb" -ge 1 ] || nb=1
for i in $(seq 1 "$nb"); do
	dd if=/dev/urandom of="$tmp/src/big/$i" bs=1M count=1 seek=1 conv=notrunc status=none
	changed=$((changed + 1048576))
done
for f in $(ls "$tmp/src/small" | head -n "$ns"); do head -c $sb /dev/urandom >"$tmp/src/small/$f"; changed=$((changed + $sb)); done
echo "change: $changed B of $total B ($(awk -v c=$changed -v t=$total 'BEGIN { printf "%.2f", 100 * c / t }')%)"
"$tool" ls "$tmp/src" >"$tmp/l2"
report "backup 2 (incremental, 1% changed)" "$("$tool" backup "$st/vault" "$key" b2 "$tmp/src" b1 "$CHUNK")"
report "backup 3 (incremental, nothing changed)" "$("$tool" backup "$st/vault" "$key" b3 "$tmp/src" b2 "$CHUNK")"
{ printf 'x'; cat "$tmp/src/big/$BIG"; } >"$tmp/shifted" && mv "$tmp/shifted" "$tmp/src/big/$BIG"
report "backup 4 (one byte inserted at the front of one $BIG_MIB MiB file)" "$("$tool" backup "$st/vault" "$key" b4 "$tmp/src" b3 "$CHUNK")"
sync
report "restore 1 (first, parallel 1)" "$(AQ_BKP_PARALLEL=1 "$tool" restore "$st/vault" "$key" b1 "$tmp/r1")"
"$tool" ls "$tmp/r1" | diff -q - "$tmp/l1" >/dev/null && echo "restore 1 (parallel 1) equals its source" || { echo "restore 1 (parallel 1) DIFFERS"; exit 1; }
rm -rf "$tmp/r1"
sync
report "restore 1 (first, parallel 4)" "$("$tool" restore "$st/vault" "$key" b1 "$tmp/r1")"
report "restore 2 (incremental)" "$("$tool" restore "$st/vault" "$key" b2 "$tmp/r2")"
"$tool" ls "$tmp/r1" | diff -q - "$tmp/l1" >/dev/null && echo "restore 1 equals its source" || { echo "restore 1 DIFFERS"; exit 1; }
"$tool" ls "$tmp/r2" | diff -q - "$tmp/l2" >/dev/null && echo "restore 2 equals its source" || { echo "restore 2 DIFFERS"; exit 1; }
"$tool" delete "$st/vault" "$key" b1
echo "delete b1 + $("$tool" gc "$st/vault" "$key")"
[ "$STORE" != dir ] || echo "vault: $(du -sb "$st/vault" | cut -f1) B for $(find "$st/vault/c" -type f | wc -l) chunks"
