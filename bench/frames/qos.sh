#!/usr/bin/env bash
# bench/frames/qos.sh: does QoS hold with cross-file read-ahead on? (issue 23,
# acceptance 3: delivered throughput within 2% of the limit, prefetch counted)
#
#   [FRAMES_TEMPS="hot cold"] bench/frames/qos.sh [LIMIT_MIBPS=48] [SECS=30] [FRAME_MIB=2] [RUNS=2] [LATENCY_MS=10]
#
# One standalone aquifer-agent (tests/agent/tier/agent.sh drives it as
# aquiferd would) serves volume tv with throughputMibps LIMIT. One stream of
# frames (bench/frames/frames -q 64, so the player always has frames asked)
# is played at 1.5 x LIMIT for SECS seconds, read-ahead off, then on
# (CROSS_FILE_SEQUENTIAL, depthFiles 4), RUNS times interleaved; hot (the
# frames on the shelf, dropped from the page cache before each play) and,
# with "cold" in FRAMES_TEMPS, cold (every frame in aq-s3lite behind
# aq-latproxy LATENCY_MS away, retrievalPolicy NEVER, the agent restarted
# before each play).
#
# Two figures per play, both over the steady window from 5 s after the play
# starts to 2 s before it ends:
#   client: MiB/s the player received (frames whose last byte came in the
#           window, from frames -t), and its ratio to LIMIT;
#   agent:  MiB/s the volume's QoS bucket charged in the same window
#           (aquifer_agent_volume_qos_delivered_bytes_total less
#           ..._qos_refunded_bytes_total: client READs not served from
#           read-ahead, plus every prefetched byte, whether a client then
#           used it or not), and its ratio to LIMIT.
# QoS holds when the agent's ratio is at most 1.02; read-ahead costs the
# client nothing when the client's ratio is at least 0.98 with it on.
# Prints a markdown table; the prefetched MiB, hits and wasted MiB are the
# agent's read-ahead counters over the whole play.
set -u
here=$(cd "$(dirname "$0")" && pwd)
limit=${1:-48} secs=${2:-30} f=${3:-2} runs=${4:-2} lat=${5:-10}
export AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$here/../.." && pwd)}
# shellcheck source=../../tests/e2e/lib.sh
. "$here/../../tests/e2e/lib.sh"
AQ_RECORD=0
export AQ_S3LITE=${AQ_S3LITE:-$AQ_BUILDDIR/tests/fixtures/aq-s3lite}
export AQ_LATPROXY=${AQ_LATPROXY:-$AQ_BUILDDIR/tests/fixtures/aq-latproxy}
. "$AQ_SRC/tests/agent/tier/s3.sh"
. "$AQ_SRC/tests/agent/tier/agent.sh"
trap 'aq_s3_cleanup; aq_cleanup' EXIT
FRAMES=$AQ_BUILDDIR/bench/frames/frames
[ -x "$FRAMES" ] || { echo "no $FRAMES (needs libnfs)" >&2; exit 1; }
FSID=00000000000000f3
RA='{"mode":"CROSS_FILE_SEQUENTIAL","depthFiles":4}'
temps=${FRAMES_TEMPS:-hot cold}
# 1.5 x the limit, in whole frames per second; enough frames for the play
fps=$(awk -v l="$limit" -v f="$f" 'BEGIN { r = int(1.5 * l / f + 0.5); print r < 1 ? 1 : r }')
n=$((fps * secs))
w0=5 w1=$((secs - 2))
[ "$w1" -gt $((w0 + 5)) ] || { echo "SECS must be at least 13" >&2; exit 2; }

COLDSTORE=null
if [[ $temps == *cold* ]]; then
	aq_s3lite_start "$AQ_TMP/s3" || exit 1
	aq_proxy_start "$AQ_S3_PORT" "$lat" || exit 1
	COLDSTORE=$(jq -nc --arg e "$AQ_PROXY_ENDPOINT" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
		'{s3: {endpoint: $e, bucket: "qos", region: "us-east-1", accessKeyId: $k, secretAccessKey: $s}}')
fi
# set_vol ACTION RETRIEVAL READAHEAD
set_vol() {
	push "$(intent "$1" "$2" "$COLDSTORE" | jq -c --argjson ra "$3" --argjson l "$limit" '
	  .volumes[0] += {qos: {mibps: $l}} + (if $ra then {readAhead: $ra} else {} end)')"
}
uncache() { find "$SHELF" -name 'frame*.dpx' -exec dd if={} iflag=nocache count=0 status=none \; ; }
restart() {
	kill "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	agent_start qa
}
metric() { # metric NAME: the agent's sample of NAME for volume tv
	curl -s "http://127.0.0.1:$API/metrics" |
		awk -v m="$1" 'index($0, m "{") == 1 && index($0, "volumes/tv\"") { s = $NF } END { printf "%.0f\n", s + 0 }'
}
# charged: what the volume's bucket was charged so far (admitted less refunded)
charged() {
	echo $(($(metric aquifer_agent_volume_qos_delivered_bytes_total) - $(metric aquifer_agent_volume_qos_refunded_bytes_total)))
}
now() { date +%s.%N; }
ROWS=()
# play LABEL: one play, its row in ROWS
play() {
	local t0 b0 c0 c1 t1 b1 out rab rah raw
	b0=$(metric aquifer_agent_volume_read_ahead_bytes_total)
	rah=$(metric aquifer_agent_volume_read_ahead_hits_total)
	raw=$(metric aquifer_agent_volume_read_ahead_wasted_bytes_total)
	"$FRAMES" -n "$n" -f "$f" -r "$fps" -s 1 -q 64 -t "$AQ_TMP/$1.trace" "$(url '')" >"$AQ_TMP/$1.out" 2>&1 &
	local pid=$!
	t0=$(now)
	sleep "$w0"
	c0=$(charged) t1=$(now)
	sleep $((w1 - w0))
	c1=$(charged) b1=$(now)
	wait "$pid" || { echo "$1: frames failed: $(tail -2 "$AQ_TMP/$1.out")" >&2; exit 1; }
	rab=$(($(metric aquifer_agent_volume_read_ahead_bytes_total) - b0))
	rah=$(($(metric aquifer_agent_volume_read_ahead_hits_total) - rah))
	raw=$(($(metric aquifer_agent_volume_read_ahead_wasted_bytes_total) - raw))
	# the client's window, on the player's clock (its t0 is within ms of ours)
	local cl ag
	cl=$(awk -v a=$((w0 * 1000)) -v b=$((w1 * 1000)) -v f="$f" '
	  ($5 == "ok" || $5 == "late") && $3 + $4 >= a && $3 + $4 < b { n++ }
	  END { printf "%.2f", n * f / ((b - a) / 1000) }' "$AQ_TMP/$1.trace")
	ag=$(awk -v x="$c0" -v y="$c1" -v s="$t1" -v e="$b1" 'BEGIN { printf "%.2f", (y - x) / 1048576 / (e - s) }')
	ROWS+=("$(printf '| %s | %s | %.3f | %s | %.3f | %s | %s | %s | %s | %s |' "$1" "$cl" \
		"$(awk -v c="$cl" -v l="$limit" 'BEGIN { print c / l }')" "$ag" \
		"$(awk -v c="$ag" -v l="$limit" 'BEGIN { print c / l }')" "$((rab >> 20))" "$rah" "$((raw >> 20))" \
		"$(awk '$1 == "result" { print $5 }' "$AQ_TMP/$1.out")" "$(cut -d' ' -f1 /proc/loadavg)")")
	echo "# $1: client $cl MiB/s, agent $ag MiB/s (limit $limit), read ahead $((rab >> 20)) MiB, load $(cut -d' ' -f1 /proc/loadavg)"
	: "$t0"
}

agent_start qa
set_vol PAUSED DEFAULT null
"$FRAMES" -W -n "$n" -f "$f" -s 1 "$(url '')" || exit 1
for i in $(seq "$runs"); do
	[[ $temps == *hot* ]] || break
	set_vol PAUSED DEFAULT null
	uncache; play "hot-off-$i"
	set_vol PAUSED DEFAULT "$RA"
	uncache; play "hot-on-$i"
done
if [[ $temps == *cold* ]]; then
	set_vol ENABLED DEFAULT null
	wait_cold $((n * f * 1048576)) 600 || { echo "frames did not go cold: $(vstat coldBytes)" >&2; exit 1; }
	for i in $(seq "$runs"); do
		restart; set_vol PAUSED NEVER null; play "cold-off-$i"
		restart; set_vol PAUSED NEVER "$RA"; play "cold-on-$i"
	done
fi
echo
echo "\`bench/frames/qos.sh $limit $secs $f $runs $lat\` ($(date -u '+%Y-%m-%d %H:%M UTC')): limit $limit MiB/s,"
echo "one stream of $n frames of $f MiB asked at $fps fps ($((fps * f)) MiB/s), window ${w0}-${w1} s of each play."
echo
echo "| play | client MiB/s | client / limit | charged MiB/s | charged / limit | read ahead MiB | hits | wasted MiB | dropped | load (1 min) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
