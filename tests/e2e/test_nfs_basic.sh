#!/bin/sh
# test_nfs_basic: nfs_serve on a free loopback port, then the stock libnfs
# tools: nfs-ls (of the export and of a subdirectory URL), nfs-cp of a 64 MiB
# random file in and out (same sha256), nfs-cat. Stops only the PID it started. Skips (77) without libnfs-utils.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${AQ_BUILDDIR:-$here/../..}
[ -x "$top/tests/agent/nfs/nfs_serve" ] || top=$(pwd)
serve=$top/tests/agent/nfs/nfs_serve
for t in nfs-ls nfs-cp nfs-cat; do
	command -v $t >/dev/null 2>&1 || { echo "skip: $t missing"; exit 77; }
done
[ -x "$serve" ] || { echo "missing $serve"; exit 1; }

dir=$(mktemp -d /tmp/aqnfs-e2e-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$dir/export/sub/deeper" "$dir/local"
echo "hello from aquifer" > "$dir/export/hello.txt"
echo "below the export" > "$dir/export/sub/deeper/inner.txt"
"$serve" --listen 127.0.0.1:0 --port-file "$dir/port" \
	--key 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef \
	--export "/vol=$dir/export" 2>"$dir/serve.log" &
pid=$!
i=0
while [ ! -s "$dir/port" ]; do
	i=$((i + 1)); [ $i -gt 100 ] && fail "server did not start: $(cat "$dir/serve.log")"
	sleep 0.05
done
port=$(cat "$dir/port")
url() { echo "nfs://127.0.0.1/vol$1?nfsport=$port&mountport=$port"; }

nfs-ls "$(url '')" > "$dir/ls.out" || fail "nfs-ls"
grep -q hello.txt "$dir/ls.out" || fail "nfs-ls does not list hello.txt"
[ "$(nfs-cat "$(url /hello.txt)")" = "hello from aquifer" ] || fail "nfs-cat"
# a subdirectory of the export mounts too (issue 15 item 20): nfs-ls MNTs the whole path
nfs-ls "$(url /sub/deeper)" > "$dir/ls-sub.out" || fail "nfs-ls of a subdirectory"
grep -q inner.txt "$dir/ls-sub.out" || fail "nfs-ls of a subdirectory does not list inner.txt"
[ "$(nfs-cat "$(url /sub/deeper/inner.txt)")" = "below the export" ] || fail "nfs-cat below a subdirectory mount"
nfs-ls "$(url /sub/..)" >/dev/null 2>&1 && fail "a '..' mount path must be refused"

head -c 67108864 /dev/urandom > "$dir/local/in.bin"
nfs-cp "$dir/local/in.bin" "$(url /big.bin)" >/dev/null || fail "nfs-cp in"
nfs-cp "$(url /big.bin)" "$dir/local/out.bin" >/dev/null || fail "nfs-cp out"
a=$(sha256sum < "$dir/local/in.bin" | cut -d' ' -f1)
b=$(sha256sum < "$dir/local/out.bin" | cut -d' ' -f1)
c=$(sha256sum < "$dir/export/big.bin" | cut -d' ' -f1)
[ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "checksums differ: $a $b $c"
nfs-ls "$(url '')" | grep -q big.bin || fail "nfs-ls after copy"
kill -0 "$pid" || fail "server died"
echo "ok: nfs-ls (export and subdirectory), nfs-cat, 64 MiB nfs-cp in/out ($a)"
exit 0
