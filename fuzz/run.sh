#!/bin/sh
# fuzz/run.sh SECONDS: build every libFuzzer harness with clang
# (-fsanitize=fuzzer,address,undefined) and run each for SECONDS (default 30).
# Exits non-zero if a harness crashes; crash inputs stay in fuzz/out/.
set -eu
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${FUZZ_OUT:-$here/out}
cc=${CC_FUZZ:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "fuzz: $cc not found"; exit 77; }
mkdir -p "$out"
flags="-g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$top"
lib="$top/agent/xdr.c $top/agent/rpc.c $top/agent/vol.c $top/agent/nfs3.c $top/agent/nfs3_xdr.c \
 $top/agent/nfs3_attr.c $top/agent/nfs3_dir.c $top/agent/nfs3_io.c $top/agent/mnt.c $top/agent/nfs_srv.c"
crypto=$(pkg-config --libs openssl 2>/dev/null || echo -lcrypto)
rc=0
for h in rpc args fh; do
	echo "== fuzz_$h: building"
	# shellcheck disable=SC2086
	$cc $flags -o "$out/fuzz_$h" "$here/fuzz_$h.c" $lib $crypto -lpthread
	mkdir -p "$out/corpus_$h"
	echo "== fuzz_$h: running ${secs}s"
	if ! "$out/fuzz_$h" -max_total_time="$secs" -max_len=4096 -timeout=10 \
		-artifact_prefix="$out/crash_${h}_" "$out/corpus_$h" >"$out/fuzz_$h.log" 2>&1; then
		echo "== fuzz_$h: FAILED (see $out/fuzz_$h.log)"
		tail -30 "$out/fuzz_$h.log"
		rc=1
	else
		grep -E "^#[0-9]+.*(DONE|pulse)" "$out/fuzz_$h.log" | tail -1 || true
	fi
done
exit $rc
