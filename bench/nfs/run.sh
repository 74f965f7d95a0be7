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
# Writes bench/nfs/REPORT.md (AQ_BENCH_REPORT to write elsewhere). Only PIDs started here are
# stopped. AQ_BUILDDIR: the build to measure (an optimised one: ./configure CFLAGS='-O2 -g').
#
#   bench/nfs/run.sh [RUNS=3] [SIZE_MIB=256] [OPS=20000]
set -u
runs=${1:-3}
mib=${2:-256}
ops=${3:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
export AQ_BUILDDIR=${AQ_BUILDDIR:-$TOP}
AQ_RECORD=0
# shellcheck source=../../tests/e2e/lib.sh
. "$TOP/tests/e2e/lib.sh"
AQUIFER_AGENT=$AQ_BUILDDIR/aquifer-agent
REPORT=${AQ_BENCH_REPORT:-$HERE/REPORT.md}
LIMIT=${AQ_BENCH_MIBPS:-4608} # the most a volume takes (EXTREME); above what this machine moves
CONNS=${AQ_BENCH_CONNS:-"1 8"}
W=$AQ_TMP
die() { echo "bench/nfs: $*" >&2; exit 1; }
trap aq_cleanup EXIT
trap 'exit 130' INT TERM
[ -x "$AQUIFER_AGENT" ] || die "no aquifer-agent in $AQ_BUILDDIR (build first, or set AQ_BUILDDIR)"
command -v ganesha.nfsd >/dev/null 2>&1 || die "ganesha.nfsd missing: deploy/deps.sh bench"
cc -O2 -o "$W/loadgen" "$HERE/loadgen.c" $(pkg-config --cflags --libs libnfs) || die "building loadgen failed"

# --- aquifer: the agent through the API ---
P=/v1/projects/bench/locations/loc1
aq_start "$W/cluster" || die "aquiferd did not start"
TOK=$(aq_token "$W/cluster" admin "" 86400)
aq_req POST "/v1/locations?locationId=loc1" '{}'
aq_req POST "/v1/projects?projectId=bench" '{}'
aq_agent_start "$W/cluster" n1 loc1 "$W/shelf" "$(aq_join_token loc1)" || die "agent did not start"
aq_req POST "$P/storagePools?storagePoolId=sp" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"1048576","qosType":"MANUAL"}'
[ "$STATUS" = 200 ] || die "pool: $STATUS $BODY"
aq_op_wait "$(printf '%s' "$BODY" | jq -r '.name // empty')" 60 >/dev/null 2>&1
aq_req POST "$P/volumes?volumeId=bench" "{\"storagePool\":\"sp\",\"capacityGib\":\"2048\",
  \"protocols\":[\"NFSV3\"],\"shareName\":\"bench\",\"throughputMibps\":$LIMIT,\"exportPolicy\":{\"rules\":[
  {\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
[ "$STATUS" = 200 ] || die "volume: $STATUS $BODY"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 60 >/dev/null
[ "$(printf '%s' "$BODY" | jq -r .response.state)" = READY ] || die "volume not READY: $BODY"
AGENT_BENCH_PID=$AGENT_PID
aq_url="nfs://127.0.0.1/bench?version=3&nfsport=$AGENT_NFS_PORT&mountport=$AGENT_NFS_PORT"

# --- NFS-Ganesha on free ports ---
gdir=$W/ganesha
mkdir -p "$gdir/export"
gport=$(aq_pick_port) gmnt=$(aq_pick_port) gnlm=$(aq_pick_port) grq=$(aq_pick_port)
cat >"$gdir/ganesha.conf" <<CONF
NFS_CORE_PARAM {
    Bind_Addr = 127.0.0.1;
    NFS_Port = $gport;  MNT_Port = $gmnt;  NLM_Port = $gnlm;  Rquota_Port = $grq;
    Enable_NLM = false;  Enable_RQUOTA = false;  Enable_UDP = false;
    Mount_Path_Pseudo = true;
    Protocols = 3, 4;
    Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha;
}
NFSV4 { Graceless = true; RecoveryBackend = fs; Only_Numeric_Owners = true; }
NFS_KRB5 { Active_krb5 = false; }
EXPORT {
    Export_Id = 1; Path = $gdir/export; Pseudo = /export;
    Access_Type = RW; Squash = No_Root_Squash; Protocols = 3, 4; Transports = TCP;
    Attr_Expiration_Time = 0;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
CONF
unshare -n sh -c 'ip link set lo up; exec rpcbind -f' &
AQ_PIDS+=("$!")
sleep 0.5
ganesha.nfsd -F -L "$gdir/ganesha.log" -p "$gdir/ganesha.pid" -f "$gdir/ganesha.conf" &
GANESHA_PID=$!
AQ_PIDS+=("$GANESHA_PID")
for _ in $(seq 300); do grep -q 'NFS SERVER INITIALIZED' "$gdir/ganesha.log" 2>/dev/null && break; sleep 0.1; done
grep -q 'NFS SERVER INITIALIZED' "$gdir/ganesha.log" || die "ganesha did not start: $(tail -5 "$gdir/ganesha.log")"
gn_url="nfs://127.0.0.1/export?version=3&nfsport=$gport&mountport=$gmnt"

# --- the loopback TCP ceiling: one stream of 2 GiB through 127.0.0.1 (bench/nfs/tcpceil.c) ---
cc -O2 -o "$W/tcpceil" "$HERE/tcpceil.c" || die "building tcpceil failed"
tcp_ceiling() { "$W/tcpceil" 2048 | awk '{ print $2 }'; }

# --- rounds ---
cell() { # SERVER CONNS ROUND
	local url=$aq_url phases=WSwr out=$W/$1.c$2.r$3.out
	[ "$1" = ganesha ] && url=$gn_url
	[ "$2" = 1 ] && phases=WSwrF
	"$W/loadgen" -c "$2" -p "$phases" -s "$mib" -n "$ops" "$url" "bench-c$2-r$3.dat" >"$out" 2>&1 ||
		die "loadgen failed against $1 ($2 connections): $(tail -3 "$out")"
	cut -d' ' -f1 /proc/loadavg >"$out.load"
}
LOADS=()
CEIL=()
for r in $(seq "$runs"); do
	CEIL+=("$(tcp_ceiling)")
	for c in $CONNS; do
		if [ $((r % 2)) = 1 ]; then order="aquifer ganesha"; else order="ganesha aquifer"; fi
		for s in $order; do
			cell "$s" "$c" "$r"
			LOADS+=("$(cat "$W/$s.c$c.r$r.out.load")")
		done
	done
	echo "# round $r of $runs done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
kill -0 "$AGENT_BENCH_PID" 2>/dev/null || die "the agent died during the runs"

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
	echo "| conns | phase | aquifer | ganesha | ratio (of medians) | ratio range (per round) |"
	echo "|---|---|---|---|---|---|"
	for c in $CONNS; do
		for ph in seq-write:2:MiB/s seq-read:2:MiB/s rand-write:4:ops/s rand-read:4:ops/s small-file:4:ops/s; do
			p=${ph%%:*} rest=${ph#*:}
			col=${rest%%:*} unit=${rest#*:}
			[ "$p" = small-file ] && [ "$c" != 1 ] && continue
			read -r am alo ahi < <(values aquifer "$c" "$p" "$col" | stats)
			read -r gm glo ghi < <(values ganesha "$c" "$p" "$col" | stats)
			ratio=$(awk -v a="$am" -v g="$gm" 'BEGIN { printf "%.2fx", (g > 0) ? a / g : 0 }')
			rr=$(for r in $(seq "$runs"); do
				a=$(awk -v p="$p" -v k="$col" '$1 == p { print $k }' "$W/aquifer.c$c.r$r.out")
				g=$(awk -v p="$p" -v k="$col" '$1 == p { print $k }' "$W/ganesha.c$c.r$r.out")
				awk -v a="$a" -v g="$g" 'BEGIN { if (g > 0) printf "%.2f\n", a / g }'
			done | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
			echo "| $c | $p | $am $unit ($alo-$ahi) | $gm $unit ($glo-$ghi) | $ratio | $rr |"
		done
	done
	echo
	echo "Targets (issue 25): >= 1.5x Ganesha on sequential read and write, >= 2x on 4 KiB random;"
	echo "sequential reads >= 0.7x of the loopback TCP ceiling."
	echo
	echo "Raw runs (phase MiB/s ops/s seconds; load at the end of the cell):"
	echo
	echo '```'
	for f in "$W"/*.out; do echo "== $(basename "$f" .out) (load $(cat "$f.load"))"; cat "$f"; done
	echo '```'
} >"$REPORT"
cat "$REPORT"
