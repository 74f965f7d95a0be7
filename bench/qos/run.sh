#!/usr/bin/env bash
# bench/qos/run.sh [SECONDS]: QoS accuracy sweep (issue 5). Starts aquiferd and
# one aquifer-agent on loopback (tests/e2e/lib.sh), creates MANUAL volumes
# limited to 16, 64, 256 and 1024 MiB/s plus an unlimited baseline volume,
# and with bench/qos/qosload (libnfs, 1 MiB requests):
#   - accuracy: closed loop at depth 8, reads then writes, configured vs
#     measured (mean over SECONDS after a 1 s warm-up; target error <= 2%);
#   - latency added by waiting: paced reads offering 50% and 100% of the
#     limit (depth <= 8), p50/p99 against the same offered load on the
#     unlimited volume.
# Writes bench/qos/REPORT.md. Build first (make); needs libnfs, curl, jq.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$here/../.." && pwd)}
secs=${1:-8}
. "$AQ_BUILDDIR/tests/e2e/lib.sh"
QOSLOAD=$AQ_BUILDDIR/bench/qos/qosload
[ -x "$QOSLOAD" ] || { echo "build bench/qos/qosload first (make; needs libnfs)"; exit 1; }

D=$AQ_TMP/cluster
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 8000 || exit 1
NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"102400","qosType":"MANUAL"}'
mk() { # mk ID [MIBPS]
	local t=
	[ -n "${2:-}" ] && t=",\"throughputMibps\":$2"
	aq_req POST "$P/volumes?volumeId=$1" "{\"storagePool\":\"sp\",\"capacityGib\":\"2048\",\"protocols\":[\"NFSV3\"],
	  \"shareName\":\"$1\"$t,\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",
	  \"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
	[ "$STATUS" = 200 ] || { echo "create $1: HTTP $STATUS $BODY"; exit 1; }
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 30
}
limits="16 64 256 1024"
for l in $limits; do mk "b$l" "$l"; done
mk base 4608 # the baseline: the largest limit, far above what one client moves here
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
field() { awk -v f="$2" '$1 == "result" { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$1"; }
run() { # run OUT VOL ARGS...
	local out=$1 v=$2
	shift 2
	"$QOSLOAD" "$@" -w 1 -t "$secs" -s 1024 "$(url "$v")" "/bench.dat" >"$out" 2>&1 || { echo "qosload failed:"; cat "$out"; exit 1; }
}

acc="" lat=""
for l in $limits; do
	for m in read write; do
		run "$AQ_TMP/a.out" "b$l" -m "$m" -d 8
		mean=$(field "$AQ_TMP/a.out" mean_mibps)
		err=$(awk -v g="$mean" -v w="$l" 'BEGIN { printf "%+.2f", (g - w) * 100 / w }')
		ok=$(awk -v e="$err" 'BEGIN { print (e <= 2 && e >= -2) ? "yes" : "**no**" }')
		acc+="| $l | $m | $mean | $(field "$AQ_TMP/a.out" median_mibps) | $err% | $ok |"$'\n'
		echo "limit $l $m: mean $mean MiB/s ($err%)"
	done
	for pct in 50 100; do
		r=$((l * pct / 100))
		run "$AQ_TMP/l.out" "b$l" -m read -d 8 -r "$r"
		run "$AQ_TMP/u.out" base -m read -d 8 -r "$r"
		lp50=$(field "$AQ_TMP/l.out" lat_p50_us) lp99=$(field "$AQ_TMP/l.out" lat_p99_us)
		up50=$(field "$AQ_TMP/u.out" lat_p50_us) up99=$(field "$AQ_TMP/u.out" lat_p99_us)
		lat+="| $l | $pct% ($r MiB/s) | $(field "$AQ_TMP/l.out" mean_mibps) | $lp50 | $lp99 | $up50 | $up99 | $((lp50 - up50)) | $((lp99 - up99)) |"$'\n'
		echo "limit $l at $pct%: p50 $lp50 us (unlimited $up50), p99 $lp99 us (unlimited $up99)"
	done
done

{
	echo "# QoS accuracy and added latency (bench/qos/run.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(nproc) CPUs ($(uname -r)), aquiferd + one aquifer-agent and the clients on"
	echo "the same machine over loopback; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')."
	echo "bench/qos/qosload: libnfs async, one connection, 1 MiB requests; 1 s warm-up, then $secs s in 1 s windows."
	echo "The file is sparse (reads are served from the page cache: the limit, not the disk, is what is measured)."
	echo
	echo "## Configured vs measured (closed loop, depth 8; target error <= 2%)"
	echo
	echo "| limit MiB/s | op | mean MiB/s | median 1 s window | error | within 2% |"
	echo "|---|---|---|---|---|---|"
	printf '%s' "$acc"
	echo
	echo "## Latency added by waiting for tokens (paced reads, depth <= 8)"
	echo
	echo "Offered load at 50% and 100% of the limit; the same load on an unlimited volume is the baseline."
	echo "Latencies in microseconds."
	echo
	echo "| limit MiB/s | offered | delivered MiB/s | p50 limited | p99 limited | p50 unlimited | p99 unlimited | added p50 | added p99 |"
	echo "|---|---|---|---|---|---|---|---|---|"
	printf '%s' "$lat"
	echo
	echo "Buckets hold 100 ms of rate, so at 50% a paced client never waits; at 100% requests wait"
	echo "while the bucket refills from the debt of the previous one (at most one request's worth)."
} >"$here/REPORT.md"
echo "wrote $here/REPORT.md"
exit 0
