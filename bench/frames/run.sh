#!/usr/bin/env bash
# bench/frames/run.sh: frame playback with cross-file read-ahead off and on,
# on a hot volume and on one whose frames are on the cold tier (issue 23,
# acceptance 2).
#
#   [RA_WORKERS=N] [FRAMES_TRACE_DIR=DIR] bench/frames/run.sh [FRAMES=48] [FRAME_MIB=4] [FPS=24] \
#       [STREAMS=2] [LATENCY_MS=10] [PROTOS=nfs] [RUNS=1]
#
# RA_WORKERS: the agent's --read-ahead-workers (default: the agent's, 4).
# PROTOS: nfs, smb or "nfs smb": the front ends the films are played over
# (NFSv3 with libnfs; SMB3 with libsmbclient as user fr). RUNS: how many
# times each play is repeated, interleaved (off, on, off, on, ...).
# FRAMES_TRACE_DIR: keep each play's per-frame trace (frames -t) there.
# FRAMES_TEMPS: "hot cold" (default), hot or cold: which plays.
# FRAMES_REPORT: the report written (default bench/frames/REPORT.md).
# PREROLL: 1 (default) plays with frames -p: each stream starts its clock when
# its first frame is in, as a player does (that start-up time is the "first
# frame" column, not a drop); 0: every stream's clock starts with the play
# and the first frame has one 1/FPS slot like the others (counted in dropped).
#
# One standalone aquifer-agent (tests/agent/tier/agent.sh drives it as
# aquiferd would) serving volume tv over NFS and SMB; its cold store is
# aq-s3lite behind aq-latproxy LATENCY_MS away. bench/frames/frames writes
# STREAMS films of FRAMES frames of FRAME_MIB MiB, then plays them at FPS
# (each frame due within its 1/FPS slot):
#   hot:  tierAction PAUSED, every frame file dropped from the page cache
#         before each play (dd iflag=nocache), read-ahead off, then on
#         (CROSS_FILE_SEQUENTIAL, depthFiles 4);
#   cold: tiering ENABLED until every frame is in the store, then PAUSED
#         with retrievalPolicy NEVER (nothing rehydrates: every play reads
#         the store); the agent is restarted before each play so no cache
#         of a previous play helps; off, then on.
# Writes bench/frames/REPORT.md (keeping the notes below "<!-- notes -->").
set -u
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-48} f=${2:-4} r=${3:-24} s=${4:-2} lat=${5:-10} protos=${6:-nfs} runs=${7:-1}
export AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$here/../.." && pwd)}
# shellcheck source=../../tests/e2e/lib.sh
. "$here/../../tests/e2e/lib.sh"
AQ_RECORD=0
export AQ_S3LITE=${AQ_S3LITE:-$AQ_BUILDDIR/tests/fixtures/aq-s3lite}
export AQ_LATPROXY=${AQ_LATPROXY:-$AQ_BUILDDIR/tests/fixtures/aq-latproxy}
. "$AQ_SRC/tests/agent/tier/s3.sh"
. "$AQ_SRC/tests/agent/tier/agent.sh"
for p in $protos; do
	case $p in nfs | smb) ;; *) echo "PROTOS: nfs, smb or \"nfs smb\", not $p" >&2; exit 2 ;; esac
done
SMB=$(aq_pick_port)
AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
[ -n "${RA_WORKERS:-}" ] && AGENT_ARGS+=(--read-ahead-workers "$RA_WORKERS")
trap 'aq_s3_cleanup; aq_cleanup' EXIT
FRAMES=$AQ_BUILDDIR/bench/frames/frames
[ -x "$FRAMES" ] || { echo "no $FRAMES (needs libnfs)" >&2; exit 1; }
FSID=00000000000000f1
RA='{"mode":"CROSS_FILE_SEQUENTIAL","depthFiles":4}'
export FRAMES_SMB_USER=fr FRAMES_SMB_PASS=Frames-1
NTHASH=$(printf '%s' "$FRAMES_SMB_PASS" | iconv -t utf-16le | openssl dgst -md4 -provider legacy -provider default | sed 's/.*= //')

aq_s3lite_start "$AQ_TMP/s3" || exit 1
aq_proxy_start "$AQ_S3_PORT" "$lat" || exit 1
COLDSTORE=$(jq -nc --arg e "$AQ_PROXY_ENDPOINT" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
	'{s3: {endpoint: $e, bucket: "frames", region: "us-east-1", accessKeyId: $k, secretAccessKey: $s}}')

# set ACTION RETRIEVAL READAHEAD: push volume tv (NFSv3 and SMB, user fr) with them
set_vol() {
	push "$(intent "$1" "$2" "$COLDSTORE" | jq -c --argjson ra "$3" --arg h "$NTHASH" '
	  .volumes[0] += {protocols: ["NFSV3", "SMB"]} + (if $ra then {readAhead: $ra} else {} end)
	  | .smbUsers = [{project: "p", name: "fr", ntHash: $h, uid: 0, gid: 0}]')"
}
uncache() { find "$SHELF" -name 'frame*.dpx' -exec dd if={} iflag=nocache count=0 status=none \; ; }
restart() {
	kill "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	agent_start fr
}
# play PROTO LABEL: one play; its result line in $AQ_TMP/LABEL.out
play() {
	local where
	where=$(url '')
	[ "$1" = smb ] && where="smb://127.0.0.1:$SMB/tv"
	local ra0
	ra0=$(curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" |
		jq -r '.volumes[0] | "\(.readAheadBytes // 0) \(.readAheadHits // 0) \(.readAheadWastedBytes // 0)"')
	"$FRAMES" -P "$1" ${pre:+"$pre"} -n "$n" -f "$f" -r "$r" -s "$s" -t "$AQ_TMP/$2.trace" "$where" >"$AQ_TMP/$2.out" 2>&1
	echo "# $2: $(tail -1 "$AQ_TMP/$2.out") load $(cut -d' ' -f1 /proc/loadavg)"
	cut -d' ' -f1 /proc/loadavg >"$AQ_TMP/$2.load"
	curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" |
		jq -r --arg z "$ra0" '($z | split(" ") | map(tonumber)) as $z | .volumes[0]
		  | "\((.readAheadBytes // 0) - $z[0]) \((.readAheadHits // 0) - $z[1]) \((.readAheadWastedBytes // 0) - $z[2])"' \
			>"$AQ_TMP/$2.ra"
	[ -n "${FRAMES_TRACE_DIR:-}" ] && mkdir -p "$FRAMES_TRACE_DIR" && cp "$AQ_TMP/$2.trace" "$FRAMES_TRACE_DIR/"
	LABELS+=("$2")
}
LABELS=()
pre=
[ "${PREROLL:-1}" = 1 ] && pre=-p

agent_start fr
set_vol PAUSED DEFAULT null
"$FRAMES" -W -n "$n" -f "$f" -s "$s" "$(url '')" || exit 1
chmod -R a+rX "$SHELF"
temps=${FRAMES_TEMPS:-hot cold}
for i in $(seq "$runs"); do
	[[ $temps == *hot* ]] || break
	for p in $protos; do
		set_vol PAUSED DEFAULT null
		uncache; play "$p" "$p-hot-off-$i"
		set_vol PAUSED DEFAULT "$RA"
		uncache; play "$p" "$p-hot-on-$i"
	done
done
[[ $temps == *cold* ]] && set_vol ENABLED DEFAULT null
[[ $temps == *cold* ]] && { wait_cold $((n * s * f * 1048576)) 600 || { echo "frames did not go cold: $(vstat coldBytes)" >&2; exit 1; }; }
for i in $(seq "$runs"); do
	[[ $temps == *cold* ]] || break
	for p in $protos; do
		restart; set_vol PAUSED NEVER null; play "$p" "$p-cold-off-$i"
		restart; set_vol PAUSED NEVER "$RA"; play "$p" "$p-cold-on-$i"
	done
done

field() { awk -v k="$2" '$1 == "result" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$AQ_TMP/$1.out"; }
{
	echo "# bench/frames: frame playback with cross-file read-ahead (issue 23)"
	echo
	echo "\`PREROLL=${PREROLL:-1} bench/frames/run.sh $n $f $r $s $lat '$protos' $runs\` on $(date -u +%Y-%m-%d), $(nproc) cores shared with"
	echo "other sessions. $s streams (over NFS one connection each, over SMB 4 each) play their own film of $n frames of $f MiB"
	echo "at $r fps (demand $((s * f * r)) MiB/s); a frame is dropped when its last byte arrives after its"
	echo "1/$r s slot, or when 4 frames of its stream are already on their way. Cold: the store is"
	echo "aq-s3lite behind aq-latproxy $lat ms away, retrievalPolicy NEVER (every play reads the store)."
	echo "Read-ahead on: readAhead CROSS_FILE_SEQUENTIAL, depthFiles 4, ${RA_WORKERS:-4} prefetch workers."
	echo
	if [ -n "$pre" ]; then
		echo "Pre-roll (frames -p): each film's clock starts when its first frame is in, as a player's does;"
		echo "frame i >= 1 is then due i/$r s after that. First frame: that start-up time (the first frame of"
		echo "each film, which no prediction covers; read-ahead at open fetches its head); not a drop."
	else
		echo "First frame: the first frame of each film, which no prediction covers; counted in dropped too."
	fi
	echo "Start / steady: the dropped frames among frames 1-9 of each film / frames 10 and after (frames -t)."
	echo
	echo "| run | frames | dropped | p50 ms | p99 ms | first frame max ms | first dropped | start | steady | MiB/s | read ahead MiB | hits | wasted MiB | load (1 min) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for k in $(printf '%s\n' "${LABELS[@]}" | sort -t- -k1,1 -k2,2r -k3,3 -k4,4n); do
		read -r rb rh rw <"$AQ_TMP/$k.ra"
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$k" "$(field "$k" frames)" \
			"$(field "$k" dropped)" "$(field "$k" lat_p50_ms)" "$(field "$k" lat_p99_ms)" \
			"$(field "$k" first_max_ms)" "$(field "$k" first_dropped)" \
			"$(awk '$5 != "ok" && $2 >= 1 && $2 <= 9' "$AQ_TMP/$k.trace" 2>/dev/null | wc -l)" \
			"$(awk '$5 != "ok" && $2 >= 10' "$AQ_TMP/$k.trace" 2>/dev/null | wc -l)" "$(field "$k" mibps)"
		printf ' %s | %s | %s | %s |\n' \
			"$((rb >> 20))" "$rh" "$((rw >> 20))" "$(cat "$AQ_TMP/$k.load")"
	done
	echo
	echo "<!-- notes -->"
	[ -f "$here/REPORT.md" ] && sed -n '/^<!-- notes -->$/,$p' "$here/REPORT.md" | tail -n +2
} >"$AQ_TMP/REPORT.md"
mv "$AQ_TMP/REPORT.md" "${FRAMES_REPORT:-$here/REPORT.md}"
cat "${FRAMES_REPORT:-$here/REPORT.md}"
