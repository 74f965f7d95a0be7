#!/usr/bin/env bash
# bench/tier/run.sh: hot vs cold read throughput over NFS (issue 11, acceptance 5).
#
#   [LATENCY="netem|server|proxy ..."] [STORES="aq-s3lite s3rver"] \
#   bench/tier/run.sh [RUNS=3] [SIZE_MIB=256] [OPS=4000] [LATENCY_MS=10]
#
# Per S3 server in STORES (OBJ's multithreaded aq-s3lite, s3rver from npm)
# one aquifer-agent (built tree; tests/agent/tier/agent.sh drives it) whose cold
# store is that server LATENCY_MS away (every request to the store waits that
# long), by each mode in LATENCY:
#   netem:  aq-s3lite runs in a network namespace this script creates
#           (aqtier<PID>), joined to the host by a veth pair (aqtv<PID>a/b,
#           169.254.<N>.1/.2, link-local: not the host's network) with
#           `tc qdisc ... netem delay LATENCY_MS/2` on both ends: one request
#           = one round trip, no process copies the bytes. Needs root, `ip
#           netns` and the kernel's sch_netem; both are removed at exit.
#   server: aq-s3lite --latency-ms LATENCY_MS (each request waits once its
#           head arrived; connections wait independently), on loopback.
#   proxy:  aq-latproxy --latency-ms LATENCY_MS in front of the server (two
#           more user-space copies of every byte, on the same cores).
# Default: netem when it can be set up, else server. s3rver has no delay of
# its own: it always sits behind aq-latproxy. bench/nfs/loadgen (libnfs async, one
# connection, every page checked) writes a SIZE_MIB file, then:
#   hot:  tierAction PAUSED, nothing cold: sequential 1 MiB reads at depth 8
#         and random 4 KiB reads at depth 32;
#   cold: tiering ENABLED until every whole chunk is in the store, then
#         PAUSED (nothing moves while we measure) with retrievalPolicy
#         DEFAULT for the sequential reads (streamed, not rehydrated) and
#         NEVER for the random ones (each served from the store, so every
#         run measures cold data; DEFAULT would rehydrate it);
#   cold DEFAULT random: then retrievalPolicy DEFAULT on the still fully
#         cold file: the first OPS random reads (each first touch of a chunk
#         brings the whole 1 MiB chunk back, later reads of it are hot), the
#         cold bytes left, then the same OPS reads again (loadgen's offsets
#         repeat: the rehydrated rate).
# Medians of RUNS runs, alternating hot and cold; writes bench/tier/REPORT.md
# (keeping the hand-written notes below its "<!-- notes -->" line).
set -u
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3} mib=${2:-256} ops=${3:-4000} lat=${4:-10}
export AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$here/../.." && pwd)}
# shellcheck source=../../tests/e2e/lib.sh
. "$here/../../tests/e2e/lib.sh"
AQ_RECORD=0
# the test fixtures aq-s3lite and aq-latproxy (tests/fixtures/)
export AQ_S3LITE=${AQ_S3LITE:-$AQ_BUILDDIR/tests/fixtures/aq-s3lite}
export AQ_LATPROXY=${AQ_LATPROXY:-$AQ_BUILDDIR/tests/fixtures/aq-latproxy}
. "$AQ_SRC/tests/agent/tier/s3.sh"
. "$AQ_SRC/tests/agent/tier/agent.sh"
LATENCY=${LATENCY:-} STORES=${STORES:-aq-s3lite s3rver}
NS=aqtier$$ VETH=aqtv$$ NETA=169.254.$(($$ % 250 + 1))
netem_cleanup() {
	ip link del "${VETH}a" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	return 0
}
trap 'aq_s3_cleanup; netem_cleanup; aq_cleanup' EXIT

# netem_setup: the namespace, the veth pair and half the delay on each end.
netem_setup() {
	local half
	half=$(awk -v l="$lat" 'BEGIN {printf "%gms", l / 2}')
	[ "$(id -u)" = 0 ] && command -v tc >/dev/null && command -v ip >/dev/null || return 1
	ip netns add "$NS" && ip link add "${VETH}a" type veth peer name "${VETH}b" &&
		ip link set "${VETH}b" netns "$NS" && ip addr add "$NETA.1/30" dev "${VETH}a" &&
		ip link set "${VETH}a" up && ip -n "$NS" addr add "$NETA.2/30" dev "${VETH}b" &&
		ip -n "$NS" link set "${VETH}b" up && ip -n "$NS" link set lo up &&
		tc qdisc add dev "${VETH}a" root netem delay "$half" &&
		ip netns exec "$NS" tc qdisc add dev "${VETH}b" root netem delay "$half" && return 0
	netem_cleanup
	return 1
}
if [ -z "$LATENCY" ]; then
	if netem_setup 2>/dev/null; then LATENCY=netem; else LATENCY=server; fi
elif [[ " $LATENCY " = *" netem "* ]]; then
	netem_setup || { echo "netem: cannot set up $NS / ${VETH}a with tc netem (root, ip netns, sch_netem?)" >&2; exit 1; }
fi
for m in $LATENCY; do
	case $m in netem | server | proxy) ;; *) echo "LATENCY: netem, server or proxy, not $m" >&2; exit 2 ;; esac
done
echo "latency: $LATENCY ($lat ms per request); stores: $STORES"

# s3lite_ns_start DIR: aq-s3lite inside the namespace on $NETA.2:9000.
s3lite_ns_start() {
	local bin=$AQ_S3LITE
	mkdir -p "$1/data"
	export AQ_S3_ACCESS_KEY=AQ-S3LITE-KEY AQ_S3_SECRET_KEY=aq-s3lite-secret/Only+For+Loopback
	ip netns exec "$NS" "$bin" --listen "$NETA.2:9000" --root "$1/data" --access-key "$AQ_S3_ACCESS_KEY" \
		--secret-key "$AQ_S3_SECRET_KEY" >>"$1/s3lite.log" 2>&1 &
	AQ_S3_PID=$! AQ_S3_PORT=9000 AQ_S3_ENDPOINT=http://$NETA.2:9000
	_aq_wait_http "$AQ_S3_ENDPOINT/" "$AQ_S3_PID" || { tail -5 "$1/s3lite.log" >&2; return 1; }
}

LG=$AQ_TMP/loadgen
cc -O2 -o "$LG" "$AQ_SRC/bench/nfs/loadgen.c" $(pkg-config --cflags --libs libnfs) || exit 1
MIB=1048576

# measure PHASE(S|r): prints MiB/s or ops/s of one loadgen run (page errors fail).
measure() {
	local out
	out=$("$LG" -p "$1" -k -s "$mib" -n "$ops" "$(url '')" bench.dat) || { echo "loadgen failed: $out" >&2; exit 1; }
	case $1 in
	S) awk '/^seq-read/ {print $2}' <<<"$out" ;;
	r) awk '/^rand-read/ {print $4}' <<<"$out" ;;
	esac
}

cool() {
	policy ENABLED DEFAULT
	wait_cold $((mib * MIB)) 600 || { echo "data did not go cold: $(vstat coldBytes)"; exit 1; }
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pct() { awk -v c="$1" -v h="$2" 'BEGIN {printf "%.0f", 100 * c / h}'; }

# bench_store NAME MODE: an agent whose cold store is the S3 server NAME, $lat
# ms away as MODE says; RUNS rounds of hot and cold reads; appends table
# rows to $ROWS and run lines to $RUNLOG.
bench_store() {
	local name=$1 mode=$2 i hs=() hr=() cs=() cr=() df=() dl=() ds=() HS HR CS CR ep
	FSID=00000000000000c1
	[ "$name" = s3rver ] && mode=proxy
	case $name/$mode in
	s3rver/*) # s3rver's account, even after aq-s3lite exported its own
		AQ_S3_ACCESS_KEY=S3RVER AQ_S3_SECRET_KEY=S3RVER
		aq_s3_start "$AQ_TMP/$name" ;;
	*/netem) s3lite_ns_start "$AQ_TMP/$name" ;;
	*/server) AQ_S3LITE_ARGS="--latency-ms $lat" aq_s3lite_start "$AQ_TMP/$name" ;;
	*) aq_s3lite_start "$AQ_TMP/$name" ;;
	esac || exit 1
	ep=$AQ_S3_ENDPOINT
	if [ "$mode" = proxy ]; then
		aq_proxy_start "$AQ_S3_PORT" "$lat" || exit 1
		ep=$AQ_PROXY_ENDPOINT
	fi
	COLDSTORE=$(jq -nc --arg e "$ep" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
		'{s3: {endpoint: $e, bucket: "aqbench", region: "us-east-1", accessKeyId: $k, secretAccessKey: $s}}')
	agent_start "bench-$name"
	policy PAUSED DEFAULT
	"$LG" -p W -k -s "$mib" "$(url '')" bench.dat >/dev/null || { echo "write failed"; exit 1; }
	for i in $(seq "$runs"); do
		policy PAUSED ON_READ
		"$LG" -p S -k -s "$mib" "$(url '')" bench.dat >/dev/null # rehydrate anything cold
		[ "$(vstat coldBytes)" = 0 ] || { echo "not all hot: $(vstat coldBytes)"; exit 1; }
		hs+=("$(measure S)")
		hr+=("$(measure r)")
		cool
		policy PAUSED DEFAULT
		cs+=("$(measure S)")
		[ "$(vstat coldBytes)" = $((mib * MIB)) ] || { echo "a sequential read rehydrated"; exit 1; }
		policy PAUSED NEVER
		cr+=("$(measure r)")
		policy PAUSED DEFAULT
		df+=("$(measure r)")
		dl+=("$(($(vstat coldBytes) / MIB))")
		ds+=("$(measure r)")
		echo "- $name ($mode) run $i: hot ${hs[-1]} MiB/s, ${hr[-1]} ops/s; cold ${cs[-1]} MiB/s," \
			"NEVER ${cr[-1]} ops/s; DEFAULT first $ops ${df[-1]} ops/s (${dl[-1]} MiB left cold)," \
			"again ${ds[-1]} ops/s" | tee -a "$RUNLOG"
	done
	kill "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	aq_s3_cleanup
	HS=$(median "${hs[@]}") HR=$(median "${hr[@]}") CS=$(median "${cs[@]}") CR=$(median "${cr[@]}")
	DF=$(median "${df[@]}") DS=$(median "${ds[@]}")
	echo "| $name | $mode | sequential 1 MiB, depth 8 (MiB/s) | $HS | $CS | $(pct "$CS" "$HS")% | >= 75% | 52% |" >>"$ROWS"
	echo "| $name | $mode | random 4 KiB, depth 32, NEVER (ops/s) | $HR | $CR | $(pct "$CR" "$HR")% | >= 25% | 11% |" >>"$ROWS"
	echo "| $name | $mode | random, DEFAULT, first $ops reads of the cold file (ops/s) | $HR | $DF | $(pct "$DF" "$HR")% | | |" >>"$ROWS"
	echo "| $name | $mode | random, DEFAULT, the same $ops reads again (ops/s) | $HR | $DS | $(pct "$DS" "$HR")% | | |" >>"$ROWS"
}

ROWS=$AQ_TMP/rows RUNLOG=$AQ_TMP/runs
: >"$ROWS"
: >"$RUNLOG"
for st in $STORES; do
	case $st in
	aq-s3lite) for m in $LATENCY; do bench_store "$st" "$m"; done ;;
	s3rver) bench_store "$st" proxy ;;
	*) echo "unknown store $st (aq-s3lite, s3rver)" >&2; exit 2 ;;
	esac
done
{
	echo "# bench/tier: hot vs cold reads over NFS"
	echo
	echo "Generated by \`LATENCY=\"$LATENCY\" STORES=\"$STORES\" bench/tier/run.sh $runs $mib $ops $lat\` on"
	echo "$(date -u +%Y-%m-%d) ($(nproc) cores; client, agent and S3 server on one machine). Cold store: an"
	echo "S3 server $lat ms away per request (latency column: netem = tc netem on a veth pair to a network"
	echo "namespace, server = aq-s3lite --latency-ms, proxy = aq-latproxy in front): aq-s3lite (C,"
	echo "multithreaded, checks SigV4) and/or s3rver (npm, Node.js; always behind aq-latproxy)."
	echo "Client: bench/nfs/loadgen (libnfs async, one connection, every 4 KiB page checked). File: $mib MiB"
	echo "($mib chunks of 1 MiB). Sequential: 1 MiB reads at depth 8 (whole file; cold: DEFAULT, streamed,"
	echo "not rehydrated). Random: $ops 4 KiB reads at depth 32; cold NEVER: each served from the store"
	echo "(this is the row compared with the >= 25% target); cold DEFAULT: the first $ops random reads of the"
	echo "freshly cold file (each first touch of a chunk rehydrates it), then the same $ops reads again (now"
	echo "hot). Medians of $runs runs, hot and cold alternating."
	echo
	echo "| store | latency | reads | hot | cold | cold/hot | target | ANF published |"
	echo "|---|---|---|---|---|---|---|---|"
	cat "$ROWS"
	echo
	echo "Runs:"
	cat "$RUNLOG"
	# Notes written by hand below the marker survive a re-run.
	echo
	if grep -q '^<!-- notes -->' "$here/REPORT.md" 2>/dev/null; then
		sed -n '/^<!-- notes -->/,$p' "$here/REPORT.md"
	else
		echo '<!-- notes -->'
	fi
} >"$here/REPORT.md.new"
mv "$here/REPORT.md.new" "$here/REPORT.md"
cat "$ROWS"
