#!/usr/bin/env bash
# bench/nfs/run.sh: the NFSv3 data path users run, against NFS-Ganesha in the same run.
#
# aquifer: aquiferd + one aquifer-agent started through the API (tests/e2e/lib.sh), a MANUAL
# pool and a volume whose QoS limit (throughputMibps, AQ_BENCH_MIBPS) is above what this machine
# moves, so the limiter runs on every request without holding any back.
# ganesha: Debian's nfs-ganesha with the VFS FSAL on 127.0.0.1, free ports picked here, serving
# a directory beside the agent's shelf (same file system); its rpcbind runs in a private network
# namespace (peers.md), so nothing listens on the host's port 111.
# client: bench/nfs/loadgen (libnfs, independent of the server code), with 1 connection and
# with 8 (-c 8: the Linux client's nconnect pattern, each connection at the phase's depth):
# sequential 1 MiB writes (with the final COMMIT) and reads at depth 8, random 4 KiB writes and
# reads at depth 32, every page verified; the small-file cycle on 1 connection.
#
# RUNS rounds; each round runs every (connections, server) cell once, the server order
# alternating per round, so the ratios compare runs made seconds apart. Reports the median,
# min and max of each cell, the ratio of the medians and the range of the per-round ratios,
# and the loopback TCP ceiling of each round (bench/nfs/tcpceil: one stream of 2 GiB).
# Writes its own section of bench/nfs/REPORT.md (AQ_BENCH_REPORT: another file), between the
# lines "<!-- bench/nfs/run.sh: begin -->" and "<!-- bench/nfs/run.sh: end -->" (appended when
# the report has none); the rest of the report is kept. Only PIDs started here are
# stopped. AQ_BUILDDIR: the build to measure (an optimised one: ./configure CFLAGS='-O2 -g');
# AQ_BENCH_B=DIR adds a second stack of DIR's aquiferd and agent to every round (an A/B of two
# builds in one invocation: B/A columns); with perf installed, the agents' CPU time and context
# switches per cell are reported too. AQ_BENCH_CONNS ("1 8"), AQ_BENCH_MIBPS (4608).
#
#   bench/nfs/run.sh [RUNS=3] [SIZE_MIB=256] [OPS=20000]
set -u
runs=${1:-3}
mib=${2:-256}
ops=${3:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=bench/nfs
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
AQUIFER_AGENT=$AQ_BUILDDIR/aquifer-agent
REPORT=${AQ_BENCH_REPORT:-$HERE/REPORT.md}
LIMIT=${AQ_BENCH_MIBPS:-4608} # the most a volume takes (EXTREME); above what this machine moves
CONNS=${AQ_BENCH_CONNS:-"1 8"}
[ -x "$AQUIFER_AGENT" ] || die "no aquifer-agent in $AQ_BUILDDIR (build first, or set AQ_BUILDDIR)"
command -v ganesha.nfsd >/dev/null 2>&1 || die "ganesha.nfsd missing: deploy/deps.sh bench"
cc -O2 -o "$W/loadgen" "$HERE/loadgen.c" $(pkg-config --cflags --libs libnfs) || die "building loadgen failed"

# --- aquifer: the agent through the API ---
# stack NAME BUILDDIR: aquiferd + agent of BUILDDIR in $W/NAME, a MANUAL pool, the volume;
# sets URL_<NAME> and APID_<NAME> (the agent's PID).
P=/v1/projects/bench/locations/loc1
stack() {
	local n=$1
	AQUIFERD=$2/aquiferd AQUIFER_AGENT=$2/aquifer-agent
	[ -x "$AQUIFER_AGENT" ] || die "no aquifer-agent in $2 (build first, or set AQ_BUILDDIR)"
	aq_start "$W/$n" || die "$n: aquiferd did not start"
	TOK=$(aq_token "$W/$n" admin "" 86400)
	aq_req POST "/v1/locations?locationId=loc1" '{}'
	aq_req POST "/v1/projects?projectId=bench" '{}'
	aq_agent_start "$W/$n" n1 loc1 "$W/$n-shelf" "$(aq_join_token loc1)" || die "$n: agent did not start"
	aq_req POST "$P/storagePools?storagePoolId=sp" \
		'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"1048576","qosType":"MANUAL"}'
	[ "$STATUS" = 200 ] || die "$n: pool: $STATUS $BODY"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r '.name // empty')" 60 >/dev/null 2>&1
	aq_req POST "$P/volumes?volumeId=bench" "{\"storagePool\":\"sp\",\"capacityGib\":\"2048\",
	  \"protocols\":[\"NFSV3\"],\"shareName\":\"bench\",\"throughputMibps\":$LIMIT,\"exportPolicy\":{\"rules\":[
	  {\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
	[ "$STATUS" = 200 ] || die "$n: volume: $STATUS $BODY"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 60 >/dev/null
	[ "$(printf '%s' "$BODY" | jq -r .response.state)" = READY ] || die "$n: volume not READY: $BODY"
	printf -v "APID_$n" %s "$AGENT_PID"
	printf -v "URL_$n" %s "nfs://127.0.0.1/bench?version=3&nfsport=$AGENT_NFS_PORT&mountport=$AGENT_NFS_PORT"
}
SERVERS="aquifer ganesha"
stack aquifer "$AQ_BUILDDIR"
if [ -n "${AQ_BENCH_B:-}" ]; then
	stack aquiferB "$AQ_BENCH_B"
	SERVERS="aquifer ganesha aquiferB"
fi

# --- NFS-Ganesha on free ports (bench/nfs/lib.sh) ---
bench_ganesha "$W/ganesha" v3 || die "ganesha did not start"
gport=$GANESHA_PORT gmnt=$GANESHA_MNT_PORT
URL_ganesha="nfs://127.0.0.1/export?version=3&nfsport=$gport&mountport=$gmnt"

# --- the loopback TCP ceiling: one stream of 2 GiB through 127.0.0.1 (bench/nfs/tcpceil.c) ---
cc -O2 -o "$W/tcpceil" "$HERE/tcpceil.c" || die "building tcpceil failed"
tcp_ceiling() { "$W/tcpceil" 2048 | awk '{ print $2 }'; }

# --- rounds ---
cell() { # SERVER CONNS ROUND
	local url=URL_$1 pid=APID_$1 phases=WSwr out=$W/$1.c$2.r$3.out ppid= spid
	url=${!url}
	spid=${!pid:-}
	[ "$1" = ganesha ] && spid=$GANESHA_PID # per-phase cost of the server process (loadgen -P)
	[ "$2" = 1 ] && phases=WSwrF
	# the agent's CPU time and context switches over the cell (perf stat, when it runs here)
	if [ -n "${!pid:-}" ] && [ -n "$PERF" ]; then
		perf stat -x, -e task-clock,context-switches -p "${!pid}" -o "$out.perf" &
		ppid=$!
	fi
	"$W/loadgen" -c "$2" -p "$phases" -s "$mib" -n "$ops" ${spid:+-P "$spid"} "$url" "bench-c$2-r$3.dat" >"$out" 2>&1 ||
		die "loadgen failed against $1 ($2 connections): $(tail -3 "$out")"
	if [ -n "$ppid" ]; then
		kill -INT "$ppid" 2>/dev/null
		wait "$ppid" 2>/dev/null
	fi
	cut -d' ' -f1 /proc/loadavg >"$out.load"
}
PERF=
perf stat -e task-clock true >/dev/null 2>&1 && PERF=perf
LOADS=()
CEIL=()
for r in $(seq "$runs"); do
	CEIL+=("$(tcp_ceiling)")
	for c in $CONNS; do
		if [ $((r % 2)) = 1 ]; then order=$SERVERS; else order=$(printf '%s\n' $SERVERS | tac | paste -sd' '); fi
		for s in $order; do
			cell "$s" "$c" "$r"
			LOADS+=("$(cat "$W/$s.c$c.r$r.out.load")")
		done
	done
	echo "# round $r of $runs done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
kill -0 "$APID_aquifer" 2>/dev/null || die "the agent died during the runs"

# --- report ---
stats() { sort -n | awk '{a[NR]=$1} END { if (!NR) { print "n/a n/a n/a"; exit }
	m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; print m, a[1], a[NR] }'; }
values() { # SERVER CONNS PHASE COLUMN
	local f
	for f in "$W/$1.c$2".r*.out; do awk -v p="$3" -v c="$4" '$1 == p { print $c }' "$f"; done
}
minmax() { printf '%s' "$1" | tr ' ' '\n' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
{
	echo "# NFSv3 benchmark: aquifer-agent (through the API) vs NFS-Ganesha"
	echo
	echo "Generated by \`bench/nfs/run.sh $runs $mib $ops\` on $(date -u +%Y-%m-%d) ($(nproc) cores shared"
	echo "with other work, loopback, clients and servers on one machine; build: \`$AQ_BUILDDIR\`)."
	echo "aquifer: aquiferd + aquifer-agent, a MANUAL pool, the volume's QoS limit $LIMIT MiB/s."
	echo "ganesha: nfs-ganesha $(dpkg-query -W -f='${Version}' nfs-ganesha 2>/dev/null), VFS FSAL, a directory on the"
	echo "same file system. loadgen (libnfs): 1 MiB sequential writes (+COMMIT) and reads at depth 8"
	echo "over a $mib MiB file, $ops random 4 KiB writes and reads at depth 32, every page verified;"
	echo "with 8 connections each connection runs at that depth. small-file: $((ops / 10)) files"
	echo "created, written 4 KiB, closed, then removed, on one connection (ops = creates + removes)."
	echo "$runs interleaved rounds (server order alternating per round); median (min-max)."
	echo "Load average (1 min) at the end of each cell: $(minmax "${LOADS[*]}")."
	echo "Loopback TCP ceiling (bench/nfs/tcpceil, one stream of 1 MiB writes), per round: ${CEIL[*]} MiB/s."
	echo
	# ratios X/Y of one phase: of the medians, and the range of the per-round ratios
	ratios() { # X Y CONNS PHASE COLUMN
		local xm ym r a g
		xm=$(values "$1" "$3" "$4" "$5" | stats | cut -d' ' -f1)
		ym=$(values "$2" "$3" "$4" "$5" | stats | cut -d' ' -f1)
		printf '%s | ' "$(awk -v a="$xm" -v g="$ym" 'BEGIN { printf "%.2fx", (g > 0) ? a / g : 0 }')"
		for r in $(seq "$runs"); do
			a=$(awk -v p="$4" -v k="$5" '$1 == p { print $k }' "$W/$1.c$3.r$r.out")
			g=$(awk -v p="$4" -v k="$5" '$1 == p { print $k }' "$W/$2.c$3.r$r.out")
			awk -v a="$a" -v g="$g" 'BEGIN { if (g > 0) printf "%.2f\n", a / g }'
		done | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'
	}
	hb=
	[ -n "${AQ_BENCH_B:-}" ] && hb=" aquiferB | B/A (medians) | B/A range |"
	echo "| conns | phase | aquifer | ganesha | ratio (of medians) | ratio range (per round) |$hb"
	echo "|---|---|---|---|---|---|${hb:+---|---|---|}"
	for c in $CONNS; do
		for ph in seq-write:2:MiB/s seq-read:2:MiB/s rand-write:4:ops/s rand-read:4:ops/s small-file:4:ops/s; do
			p=${ph%%:*} rest=${ph#*:}
			col=${rest%%:*} unit=${rest#*:}
			[ "$p" = small-file ] && [ "$c" != 1 ] && continue
			line="| $c | $p"
			for sv in aquifer ganesha; do
				read -r m lo hi < <(values "$sv" "$c" "$p" "$col" | stats)
				line="$line | $m $unit ($lo-$hi)"
			done
			line="$line | $(ratios aquifer ganesha "$c" "$p" "$col") |"
			if [ -n "$hb" ]; then
				read -r m lo hi < <(values aquiferB "$c" "$p" "$col" | stats)
				line="$line $m $unit ($lo-$hi) | $(ratios aquiferB aquifer "$c" "$p" "$col") |"
			fi
			echo "$line"
		done
	done
	# what a call costs the server (loadgen -P: the server process's counters read right before a
	# phase's first call and after its last reply): per 1,000 calls, median of the runs (min-max)
	percall() { # SERVER CONNS PHASE COLUMN (of loadgen's line; $9 is the phase's calls)
		local f
		for f in "$W/$1.c$2".r*.out; do
			awk -v p="$3" -v c="$4" '$1 == p && $9 > 0 && $c >= 0 { printf "%.1f\n", 1000 * $c / $9 }' "$f"
		done
	}
	echo
	echo "What 1,000 calls cost each server process (all its threads; loadgen -P reads /proc/PID/task/*"
	echo "and tracepoint counters right before a phase's first call and after its last reply): context"
	echo "switches (cs: voluntary + involuntary; vcs: voluntary, a thread waited), CPU ms, futex calls,"
	echo "system calls. Median (min-max) of the"
	echo "runs; ratio = aquifer / ganesha of the medians (lower is cheaper). Calls: READs or WRITEs"
	echo "(+ the COMMIT in seq-write); small-file: creates + removes, each several calls."
	echo
	echo "| conns | phase | figure | aquifer | ganesha | ratio |${hb:+ aquiferB | B/A |}"
	echo "|---|---|---|---|---|---|${hb:+---|---|}"
	for c in $CONNS; do
		for p in seq-write seq-read rand-write rand-read small-file; do
			[ "$p" = small-file ] && [ "$c" != 1 ] && continue
			for fig in cs:11 vcs:19 cpu-ms:13 futex:15 syscalls:17; do
				n=${fig%%:*} col=${fig#*:}
				line="| $c | $p | $n"
				for sv in aquifer ganesha ${hb:+aquiferB}; do
					if [ "$n" = cpu-ms ]; then
						read -r m lo hi < <(percall "$sv" "$c" "$p" "$col" | awk '{ printf "%.1f\n", $1 / 1000 }' | stats)
					else
						read -r m lo hi < <(percall "$sv" "$c" "$p" "$col" | stats)
					fi
					line="$line | $m ($lo-$hi)"
					printf -v "M_$sv" %s "$m"
				done
				rat() { awk -v a="$1" -v g="$2" 'BEGIN { if (g + 0 > 0) printf "%.2fx", a / g; else print "n/a" }'; }
				if [ -n "$hb" ]; then
					line="${line% | *} | $(rat "$M_aquifer" "$M_ganesha") | ${line##* | } | $(rat "$M_aquiferB" "$M_aquifer") |"
				else
					line="$line | $(rat "$M_aquifer" "$M_ganesha") |"
				fi
				echo "$line"
			done
		done
	done
	if [ -n "$PERF" ]; then
		echo
		echo "The agent's CPU time and context switches per cell (perf stat -p; the whole loadgen run"
		echo "of the cell: every phase above), median (min-max):"
		echo
		echo "| conns | agent | CPU s | context switches |"
		echo "|---|---|---|---|"
		for c in $CONNS; do
			for sv in aquifer ${hb:+aquiferB}; do
				read -r cm clo chi < <(for f in "$W/$sv.c$c".r*.out.perf; do
					awk -F, '$3 == "task-clock" { printf "%.2f\n", $1 / 1000 }' "$f"; done | stats)
				read -r sm slo shi < <(for f in "$W/$sv.c$c".r*.out.perf; do
					awk -F, '$3 == "context-switches" { print $1 }' "$f"; done | stats)
				echo "| $c | $sv | $cm ($clo-$chi) | $sm ($slo-$shi) |"
			done
		done
	fi
	echo
	echo "Targets (issue 25): >= 1.5x Ganesha on sequential read and write, >= 2x on 4 KiB random;"
	echo "sequential reads >= 0.7x of the loopback TCP ceiling."
	echo
	echo "Raw runs (phase MiB/s ops/s seconds; load at the end of the cell):"
	echo
	echo '```'
	for f in "$W"/*.r*.out; do echo "== $(basename "$f" .out) (load $(cat "$f.load"))"; cat "$f"; done
	echo '```'
} >"$W/report.md"
bench_report_section "$REPORT" bench/nfs/run.sh <"$W/report.md"
cat "$W/report.md"
