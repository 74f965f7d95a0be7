#!/usr/bin/env bash
# bench/tier/obj.sh: obj_get_many throughput from an S3-API store, direct and
# behind aq-latproxy with a fixed added latency -- the object-store ceiling
# under the cold-tier benchmark (bench/tier). Run from the build tree after make.
#   bench/tier/obj.sh [LATENCY_MS=10] [SECONDS=5] [SIZE_MIB=256] [OBJECT_MIB=1] [STORES="s3lite s3rver"]
# STORES: s3lite (tests/fixtures/aq-s3lite, SigV4 verified) and/or s3rver (npm).
# For each store: fills SIZE_MIB in objects of OBJECT_MIB (1 = the tiering
# engine's chunk), then prints aq-objbench's lines for sequential 1 MiB
# reads (4 x parallel ranges per obj_get_many, parallel 8 = TIER_READAHEAD
# and 16) and random 4 KiB reads (128 ranges, parallel 32), each direct and
# through the proxy. Then, when wrk is installed, the server alone: wrk
# replays one request signed by curl --aws-sigv4 (4 KiB range, 32
# connections; 1 MiB range, 8 connections) -- what the store can serve
# when the client costs nothing.
set -eu
lat=${1:-10} secs=${2:-5} size=${3:-256} omib=${4:-1} stores=${5:-s3lite s3rver}
AQ_BUILDDIR=${AQ_BUILDDIR:-$PWD}
AQ_SRC=$(cd "$(dirname "$0")/../.." && pwd)
export AQ_BUILDDIR AQ_SRC
# the test fixtures aq-s3lite and aq-latproxy (tests/fixtures/)
export AQ_S3LITE=${AQ_S3LITE:-$AQ_BUILDDIR/tests/fixtures/aq-s3lite}
export AQ_LATPROXY=${AQ_LATPROXY:-$AQ_BUILDDIR/tests/fixtures/aq-latproxy}
. "$AQ_SRC/tests/agent/tier/s3.sh"
bench=$AQ_BUILDDIR/bench/tier/aq-objbench
[ -x "$bench" ] || { echo "no $bench: run make first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-objbench.XXXXXX")
trap 'aq_s3_cleanup; rm -rf "$tmp"' EXIT

run_store() { # s3lite | s3rver
	local name=$1 ep p
	case $name in
	s3lite) aq_s3lite_start "$tmp/$name" ;;
	s3rver) AQ_S3_ACCESS_KEY=S3RVER AQ_S3_SECRET_KEY=S3RVER; aq_s3_start "$tmp/$name" ;;  # after s3lite's
	*) echo "unknown store $name (s3lite, s3rver)" >&2; return 1 ;;
	esac
	aq_proxy_start "$AQ_S3_PORT" "$lat"
	local cred=(--access-key "$AQ_S3_ACCESS_KEY" --secret-key "$AQ_S3_SECRET_KEY")
	echo "# $name $AQ_S3_ENDPOINT, proxy +${lat} ms $AQ_PROXY_ENDPOINT, ${size} MiB in ${omib} MiB objects"
	"$bench" --s3 "$AQ_S3_ENDPOINT" "${cred[@]}" --size-mib "$size" --object-mib "$omib" --seconds 1 --batch 16 |
		grep fill
	for ep in "direct $AQ_S3_ENDPOINT" "proxy+${lat}ms $AQ_PROXY_ENDPOINT"; do
		set -- $ep
		for p in 8 16; do
			echo "$name $1 seq p$p: $("$bench" --s3 "$2" "${cred[@]}" --size-mib "$size" --object-mib "$omib" \
				--no-fill --seconds "$secs" --parallel $p --batch $((4 * p)))"
		done
		echo "$name $1 random: $("$bench" --s3 "$2" "${cred[@]}" --size-mib "$size" --object-mib "$omib" \
			--no-fill --seconds "$secs" --random --read-kib 4 --parallel 32 --batch 128)"
	done
	command -v wrk >/dev/null 2>&1 && server_only "$name"
	aq_s3_cleanup
	rm -rf "${tmp:?}/$name"
}

# server_only NAME: wrk replays one signed GET (a store that checks
# signatures accepts the same request again within its clock skew).
server_only() {
	local name=$1 range conns sig out
	local empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
	for spec in "4096-8191 32" "0-1048575 8"; do
		set -- $spec
		range=$1 conns=$2
		sig=$(curl -s -v -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 --user "$AQ_S3_ACCESS_KEY:$AQ_S3_SECRET_KEY" \
			-H "Range: bytes=$range" -H "x-amz-content-sha256: $empty" "$AQ_S3_ENDPOINT/aq-bench/bench/obj0000" 2>&1 |
			sed -n 's/^> \(Authorization: .*\|X-Amz-Date: .*\)\r$/\1/p')
		out=$(wrk -t2 -c"$conns" -d"${secs}s" -H "$(sed -n 1p <<<"$sig")" -H "$(sed -n 2p <<<"$sig")" \
			-H "Range: bytes=$range" -H "x-amz-content-sha256: $empty" "$AQ_S3_ENDPOINT/aq-bench/bench/obj0000")
		if grep -q 'Non-2xx' <<<"$out"; then
			echo "$name server-only range $range: wrong answers: $out" >&2
			return 1
		fi
		echo "$name server-only (wrk, range $range, $conns conns):" \
			"$(grep -E 'Requests/sec|Transfer/sec' <<<"$out" | tr -s ' ' | tr '\n' ' ')"
	done
}

for s in $stores; do
	run_store "$s"
done
