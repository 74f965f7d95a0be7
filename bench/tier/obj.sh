#!/usr/bin/env bash
# bench/tier/obj.sh: obj_get_many throughput from s3rver, direct and behind
# aq-latproxy with a fixed added latency -- the object-store ceiling under
# the cold-tier benchmark (bench/tier). Run from the build tree after make.
#   bench/tier/obj.sh [LATENCY_MS=10] [SECONDS=5] [SIZE_MIB=256] [OBJECT_MIB=1]
# Fills SIZE_MIB in objects of OBJECT_MIB (1 = the tiering engine's chunk),
# then prints aq-objbench's lines for sequential 1 MiB reads (4 x parallel
# ranges per obj_get_many, parallel 8 = TIER_READAHEAD and 16) and random
# 4 KiB reads (128 ranges, parallel 32), each direct and through the proxy.
set -eu
lat=${1:-10} secs=${2:-5} size=${3:-256} omib=${4:-1}
AQ_BUILDDIR=${AQ_BUILDDIR:-$PWD}
AQ_SRC=$(cd "$(dirname "$0")/../.." && pwd)
export AQ_BUILDDIR AQ_SRC
. "$AQ_SRC/tests/tier/s3.sh"
bench=$AQ_BUILDDIR/bench/tier/aq-objbench
[ -x "$bench" ] || { echo "no $bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-objbench.XXXXXX")
trap 'aq_s3_cleanup; rm -rf "$tmp"' EXIT
aq_s3_start "$tmp/s3"
aq_proxy_start "$AQ_S3_PORT" "$lat"
echo "# s3rver $AQ_S3_ENDPOINT, proxy +${lat} ms $AQ_PROXY_ENDPOINT, ${size} MiB in ${omib} MiB objects"
"$bench" --s3 "$AQ_S3_ENDPOINT" --size-mib "$size" --object-mib "$omib" --seconds 1 --batch 16 | grep fill
for ep in "direct $AQ_S3_ENDPOINT" "proxy+${lat}ms $AQ_PROXY_ENDPOINT"; do
	set -- $ep
	for p in 8 16; do
		echo "$1 seq p$p: $("$bench" --s3 "$2" --size-mib "$size" --object-mib "$omib" --no-fill \
			--seconds "$secs" --parallel $p --batch $((4 * p)))"
	done
	echo "$1 random: $("$bench" --s3 "$2" --size-mib "$size" --object-mib "$omib" --no-fill --seconds "$secs" \
		--random --read-kib 4 --parallel 32 --batch 128)"
done
