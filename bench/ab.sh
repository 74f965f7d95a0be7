#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2317,SC2034
# The *_round functions are called by name, and AQUIFERD, AGENT, FSID, COLDSTORE, AQ_RECORD are
# read by the sourced test helpers.
# bench/ab.sh: A/B comparison of two commits on the api, nfs, qos and tier benches.
#
# Builds both commits at -O2 without debug (git archive into a temporary
# folder, autoreconf, ./configure CFLAGS=-O2, make -j2), then:
#   1. wall clock, interleaved (A,B then B,A in the next round, ROUNDS rounds),
#      with the benches' own load generators:
#        api:  bench/api/get.lua and create.lua under wrk against aquiferd with
#              one joined agent (as bench/api/run.sh does);
#        nfs:  bench/nfs/loadgen -p WSwrF against tests/agent/nfs/nfs_serve
#              (as bench/nfs/run.sh does);
#        qos:  bench/qos/qosload, closed loop at depth 8, on a MANUAL volume
#              limited to 64 MiB/s and on an unlimited one (bench/qos/run.sh);
#        tier: a standalone agent (tests/agent/tier/agent.sh) whose cold store
#              is aq-s3lite LATENCY_MS away: hot and cold sequential reads,
#              cold random reads (NEVER) and the time a file takes to go cold
#              (bench/tier/run.sh);
#   2. instructions (valgrind --tool=callgrind, which does not depend on the
#      machine's load) of each server for a fixed workload, per operation:
#        api:  N authenticated GETs of a volume, M volume creates (curl, one
#              keep-alive connection), the interval zeroed and dumped with
#              callgrind_control;
#        nfs:  nfs_serve for each loadgen phase (1 MiB sequential WRITE and
#              READ, 4 KiB random WRITE and READ, small files) and N GETATTR
#              (bench/nfs/ab_getattr);
#        qos:  bench/qos/ab_qos: qos_submit / qos_poll with a fake clock;
#        tier: the agent while a file goes cold (per 1 MiB chunk moved), then
#              cold sequential reads (per MiB) and cold random reads.
# Prints per metric the median of A and B, B/A and the spread (min-max) of
# each, and the load average (1 min) over the run. The clients (wrk, loadgen,
# qosload, ab_getattr, aq-s3lite) are the same binaries for A and B: only the
# servers differ. A manual bench: not part of make check or CI.
#
#   bench/ab.sh [--rounds N] [--quick] [--old REV] [--new REV] [--only LIST]
#               [--no-wall] [--no-instr] [--reuse DIR] [--keep]
#
# --old REV (default 61850f9, main before issue 16's restructure), --new REV
# (default HEAD); --rounds N (default 5) wall-clock rounds; --quick: 2 rounds
# and smaller workloads; --only "api nfs qos tier" (a subset); --reuse DIR:
# DIR/A and DIR/B are already built trees of the two commits (nothing is
# built or removed); --keep: keep the temporary folder. Needs wrk, curl, jq,
# valgrind, cc, pkg-config and libnfs-dev. Only the processes started here
# are stopped, by PID.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OLD=61850f9 NEW=HEAD ROUNDS=5 QUICK=0 ONLY="api nfs qos tier" WALL=1 INSTR=1 REUSE="" KEEP=0

usage() { sed -n '/^# bench/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--quick) QUICK=1 ;;
	--old) OLD=$2; shift ;;
	--new) NEW=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--no-wall) WALL=0 ;;
	--no-instr) INSTR=0 ;;
	--reuse) REUSE=$2; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "ab.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
if [ "$QUICK" = 1 ]; then
	[ "$ROUNDS" = 5 ] && ROUNDS=2
	DURATION=2 NFS_MIB=16 NFS_OPS=1000 QOS_SECS=2 TIER_MIB=8 TIER_OPS=200
	CG_GETS=300 CG_CREATES=30 CG_MIB=8 CG_OPS=500 CG_QOS=20000 CG_TIER_MIB=4 CG_TIER_OPS=100
else
	DURATION=5 NFS_MIB=64 NFS_OPS=4000 QOS_SECS=3 TIER_MIB=32 TIER_OPS=500
	CG_GETS=2000 CG_CREATES=200 CG_MIB=16 CG_OPS=2000 CG_QOS=100000 CG_TIER_MIB=16 CG_TIER_OPS=200
fi
LATENCY_MS=${LATENCY_MS:-10}
want() { [[ " $ONLY " = *" $1 "* ]]; }
log() { printf 'ab: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

for tool in wrk curl jq cc pkg-config git autoreconf; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
[ "$INSTR" = 0 ] || command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
pkg-config --exists libnfs || die "libnfs-dev is missing"
OLD_ID=$(git -C "$TOP" rev-parse --short "$OLD") || die "no commit $OLD"
NEW_ID=$(git -C "$TOP" rev-parse --short "$NEW") || die "no commit $NEW"

# --- builds ------------------------------------------------------------------
if [ -n "$REUSE" ]; then
	BUILDS=$(cd "$REUSE" && pwd)
else
	BUILDS=$(mktemp -d /tmp/aq-ab-build.XXXXXX)
fi
build() { # NAME REV: the tree of REV in $BUILDS/NAME, built at -O2
	local d=$BUILDS/$1
	mkdir -p "$d"
	git -C "$TOP" archive "$2" | tar -x -C "$d" || return 1
	log "building $1 ($2) in $d"
	(cd "$d" && autoreconf -fi && ./configure CFLAGS=-O2 && make -j2) >"$d/ab-build.log" 2>&1 ||
		{ tail -20 "$d/ab-build.log" >&2; return 1; }
}
if [ -z "$REUSE" ]; then
	if ! build A "$OLD_ID" || ! build B "$NEW_ID"; then
		rm -rf "$BUILDS"
		die "build failed"
	fi
fi
A=$BUILDS/A B=$BUILDS/B # read as ${!side}
for s in A B; do
	d=${!s}
	[ -x "$d/aquiferd" ] || die "$d: not built"
done
nfs_serve_of() { find "$1/tests/agent" -name nfs_serve -type f -perm -u+x | head -1; }

# --- the helpers of the e2e and tier tests (from this tree) ---------------------
export AQ_BUILDDIR=$B
AQ_RECORD=0
# shellcheck source=../tests/e2e/lib.sh
. "$TOP/tests/e2e/lib.sh"
# shellcheck source=../tests/agent/tier/s3.sh
. "$TOP/tests/agent/tier/s3.sh"
# shellcheck source=../tests/agent/tier/agent.sh
. "$TOP/tests/agent/tier/agent.sh"
ab_cleanup() {
	# an agent stopped while aquiferd's instructions were counted must see the TERM
	[ ${#AQ_PIDS[@]} = 0 ] || kill -CONT "${AQ_PIDS[@]}" 2>/dev/null
	aq_s3_cleanup
	KEEP_TMP=$AQ_TMP
	AQ_KEEP=$KEEP aq_cleanup
	[ -n "$REUSE" ] || [ "$KEEP" = 1 ] || rm -rf "$BUILDS"
	[ "$KEEP" = 1 ] && log "kept $KEEP_TMP and $BUILDS"
	return 0
}
trap ab_cleanup EXIT
W=$AQ_TMP
RES=$W/res
mkdir -p "$RES" "$W/cg"

# the clients, one binary for both sides
NFSFLAGS=$(pkg-config --cflags --libs libnfs)
# shellcheck disable=SC2086 # pkg-config's flags, split on purpose
{
	cc -O2 -o "$W/loadgen" "$TOP/bench/nfs/loadgen.c" $NFSFLAGS &&
		cc -O2 -o "$W/qosload" "$TOP/bench/qos/qosload.c" $NFSFLAGS &&
		cc -O2 -o "$W/ab_getattr" "$TOP/bench/nfs/ab_getattr.c" $NFSFLAGS
} || die "building the clients failed"
# the QoS driver, against each tree's own header and library
for s in A B; do
	d=${!s}
	h=$(dirname "$(find "$d/agent" -name vol_qos.h | head -1)")
	cc -O2 -std=gnu11 -I"$d" -I"$h" -o "$W/ab_qos_$s" "$TOP/bench/qos/ab_qos.c" \
		-Wl,--start-group "$d"/*.a -Wl,--end-group -lpthread -lm || die "building ab_qos ($s) failed"
done
export AQ_S3LITE=$B/tests/fixtures/aq-s3lite
LOADS=()
load_mark() { LOADS+=("$(cut -d' ' -f1 /proc/loadavg)"); }

# rec METRIC SIDE VALUE: one measurement
rec() { echo "$3" >>"$RES/$1.$2"; }

# --- api: aquiferd + one joined agent, a MANUAL pool for the QoS volumes -------
PARENT=projects/bench/locations/loc1
api_stack() { # SIDE [AQUIFERD]: sets API_URL_<SIDE>, TOK_<SIDE>, QNFS_<SIDE>
	local s=$1 d=${!1} dir=$W/api-$1${2:+-cg}
	AQUIFERD=${2:-$d/aquiferd} AQUIFER_AGENT=$d/aquifer-agent
	aq_start "$dir" || return 1
	TOK=$(AQUIFERD=$d/aquiferd aq_token "$dir" admin "" 86400)
	aq_req POST "/v1/locations?locationId=loc1" '{}'
	aq_req POST "/v1/projects?projectId=bench" '{}'
	aq_agent_start "$dir" "n$s" loc1 "$dir/shelf" "$(aq_join_token loc1)" || return 1
	aq_req POST "/v1/$PARENT/storagePools?storagePoolId=pool1" \
		'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"10485760","description":"bench pool"}'
	aq_req POST "/v1/$PARENT/storagePools?storagePoolId=sp" \
		'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"102400","qosType":"MANUAL"}'
	aq_mutate POST "/v1/$PARENT/volumes?volumeId=vol1" \
		'{"shareName":"vol1","storagePool":"pool1","capacityGib":"1500","protocols":["NFSV3"],
		  "exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","accessType":"READ_WRITE",
		  "nfsv3":true,"hasRootAccess":"true","squashMode":"NO_ROOT_SQUASH"}]},
		  "unixPermissions":"0770","labels":{"env":"bench","team":"storage"},
		  "description":"benchmark volume"}'
	local v t
	for v in q64:64 qbase:4608; do
		t=${v#*:}
		aq_mutate POST "/v1/$PARENT/volumes?volumeId=${v%%:*}" "{\"storagePool\":\"sp\",\"capacityGib\":\"2048\",
		  \"protocols\":[\"NFSV3\"],\"shareName\":\"${v%%:*}\",\"throughputMibps\":$t,\"exportPolicy\":{\"rules\":[
		  {\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
		[ "$STATUS" = 200 ] || { log "$s: create ${v%%:*}: $STATUS $BODY"; return 1; }
	done
	printf -v "API_URL_$s" %s "$AQ_URL"
	printf -v "TOK_$s" %s "$TOK"
	printf -v "QNFS_$s" %s "$AGENT_NFS_PORT"
	printf -v "APID_$s" %s "${AQ_PID:?}"
	printf -v "AGPID_$s" %s "${AGENT_PID:?}"
}

wrk_field() { # FILE rps|p50|p99|ok
	case $2 in
	rps) awk '/^Requests\/sec:/ { print $2 }' "$1" ;;
	p50 | p99) awk -v p="${2#p}%" '$1 == p { v = $2
		if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) sub(/ms$/, "", v)
		else { sub(/s$/, "", v); v *= 1000 }
		printf "%.3f\n", v }' "$1" ;;
	esac
}
api_round() { # SIDE ROUND
	local s=$1 url tok f
	url=API_URL_$s tok=TOK_$s
	url=${!url} tok=${!tok}
	f=$W/get-$s-$2.txt
	AQ_TOKEN=$tok wrk -t2 -c32 -d"${DURATION}s" --latency -s "$TOP/bench/api/get.lua" \
		"$url/v1/$PARENT/volumes/vol1" >"$f" 2>&1
	grep -q 'Non-2xx\|Socket errors' "$f" && log "$s: GET errors: $(grep -E 'Non-2xx|Socket errors' "$f")"
	rec api.get_rps "$s" "$(wrk_field "$f" rps)"
	rec api.get_p50_ms "$s" "$(wrk_field "$f" p50)"
	rec api.get_p99_ms "$s" "$(wrk_field "$f" p99)"
	f=$W/create-$s-$2.txt
	AQ_TOKEN=$tok AQ_PARENT=$PARENT AQ_POOL=pool1 AQ_RUN=${s,,}$2 wrk -t2 -c8 -d"${DURATION}s" --latency \
		-s "$TOP/bench/api/create.lua" "$url/" >"$f" 2>&1
	grep -q "Non-2xx" "$f" && log "$s: create errors: $(grep Non-2xx "$f")"
	rec api.create_rps "$s" "$(wrk_field "$f" rps)"
}

# --- nfs: nfs_serve of each tree ---------------------------------------------------
KEYHEX=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
nfs_start() { # SIDE DIR [WRAPPER...]: prints the port
	local s=$1 dir=$2
	shift 2
	mkdir -p "$dir/export"
	rm -f "$dir/port"
	"$@" "$(nfs_serve_of "${!s}")" --listen 127.0.0.1:0 --port-file "$dir/port" --workers 8 --key "$KEYHEX" \
		--export "/export=$dir/export" 2>>"$dir/serve.log" &
	NFS_PID=$!
	AQ_PIDS+=("$NFS_PID")
	for _ in $(seq 600); do [ -s "$dir/port" ] && break; sleep 0.1; done
	[ -s "$dir/port" ] || { tail -5 "$dir/serve.log" >&2; return 1; }
}
nfs_url() { echo "nfs://127.0.0.1/export?nfsport=$1&mountport=$1"; }
nfs_round() { # SIDE ROUND
	local s=$1 port out=$W/nfs-$1-$2.out
	port=NFSPORT_$s
	"$W/loadgen" -p WSwrF -s "$NFS_MIB" -n "$NFS_OPS" "$(nfs_url "${!port}")" "ab-$2.dat" >"$out" 2>&1 ||
		{ log "$s: loadgen failed: $(tail -3 "$out")"; return 0; }
	rec nfs.seq_write_mibps "$s" "$(awk '$1 == "seq-write" { print $2 }' "$out")"
	rec nfs.seq_read_mibps "$s" "$(awk '$1 == "seq-read" { print $2 }' "$out")"
	rec nfs.rand_write_ops "$s" "$(awk '$1 == "rand-write" { print $4 }' "$out")"
	rec nfs.rand_read_ops "$s" "$(awk '$1 == "rand-read" { print $4 }' "$out")"
	rec nfs.small_file_ops "$s" "$(awk '$1 == "small-file" { print $4 }' "$out")"
}

# --- qos: the limited and the unlimited volume of the api stack -------------------
qos_round() { # SIDE ROUND
	local s=$1 port out=$W/qos.out m v
	port=QNFS_$s
	for v in q64 qbase; do
		for m in read write; do
			[ "$v" = qbase ] && [ "$m" = write ] && continue
			"$W/qosload" -m "$m" -d 8 -w 1 -t "$QOS_SECS" -s 1024 \
				"nfs://127.0.0.1/$v?version=3&nfsport=${!port}&mountport=${!port}" /ab.dat >"$out" 2>&1 ||
				{ log "$s: qosload failed: $(tail -2 "$out")"; continue; }
			rec "qos.${v}_${m}_mibps" "$s" "$(awk '$1 == "result" { for (i = 2; i < NF; i += 2)
				if ($i == "mean_mibps") print $(i + 1) }' "$out")"
		done
	done
}

# --- tier: a standalone agent per side, one aq-s3lite for both ----------------------
# Switch the agent.sh globals to SIDE's agent.
tier_use() { local v; for v in API NFS NODE SHELF AGENT_PID; do local n=T${v}_$1; printf -v "$v" %s "${!n}"; done; }
tier_keep() { local v; for v in API NFS NODE SHELF AGENT_PID; do printf -v "T${v}_$1" %s "${!v}"; done; }
tier_stack() { # SIDE [AGENT-PROGRAM]
	AGENT=${2:-${!1}/aquifer-agent}
	FSID=00000000000000c1
	COLDSTORE=$(jq -nc --arg e "$AQ_S3_ENDPOINT" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
		--arg b "ab-${1,,}-$RANDOM" '{s3: {endpoint: $e, bucket: $b, region: "us-east-1", accessKeyId: $k,
		secretAccessKey: $s}}')
	agent_start "tier$1${2:+cg}" || return 1
	policy PAUSED DEFAULT
	tier_keep "$1"
}
secs_now() { date +%s.%N; }
tier_round() { # SIDE ROUND
	local s=$1 out=$W/tier.out t0 t1
	tier_use "$s"
	policy PAUSED ON_READ
	"$W/loadgen" -p S -k -s "$TIER_MIB" "$(url '')" ab.dat >/dev/null 2>&1 # rehydrate what is cold
	[ "$(vstat coldBytes)" = 0 ] || log "$s: not all hot: $(vstat coldBytes)"
	"$W/loadgen" -p S -k -s "$TIER_MIB" "$(url '')" ab.dat >"$out" 2>&1 &&
		rec tier.hot_seq_mibps "$s" "$(awk '$1 == "seq-read" { print $2 }' "$out")"
	t0=$(secs_now)
	policy ENABLED DEFAULT
	wait_cold $((TIER_MIB << 20)) 300 || { log "$s: did not go cold: $(vstat coldBytes)"; return 0; }
	t1=$(secs_now)
	rec tier.cooling_s "$s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
	policy PAUSED DEFAULT
	"$W/loadgen" -p S -k -s "$TIER_MIB" "$(url '')" ab.dat >"$out" 2>&1 &&
		rec tier.cold_seq_mibps "$s" "$(awk '$1 == "seq-read" { print $2 }' "$out")"
	policy PAUSED NEVER
	"$W/loadgen" -p r -k -s "$TIER_MIB" -n "$TIER_OPS" "$(url '')" ab.dat >"$out" 2>&1 &&
		rec tier.cold_rand_never_ops "$s" "$(awk '$1 == "rand-read" { print $4 }' "$out")"
}

# --- summary helpers -------------------------------------------------------------------
stat_of() { # FILE: "median min max"
	sort -g "$1" | awk '{ a[NR] = $1 } END { if (!NR) { print "- - -"; exit }
		m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%g %g %g\n", m, a[1], a[NR] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == 0 || b == "-") print "-"; else printf "%.3f", b / a }'; }

# --- 1. wall clock ----------------------------------------------------------------------
START=$(date -u '+%Y-%m-%d %H:%M UTC')
load_mark
if [ "$WALL" = 1 ]; then
	if want api || want qos; then
		for s in A B; do api_stack "$s" || die "$s: api stack did not come up"; done
	fi
	if want nfs; then
		for s in A B; do
			nfs_start "$s" "$W/nfs-$s" || die "$s: nfs_serve did not start"
			printf -v "NFSPORT_$s" %s "$(cat "$W/nfs-$s/port")"
		done
	fi
	if want tier; then
		AQ_S3LITE_ARGS="--latency-ms $LATENCY_MS" aq_s3lite_start "$W/s3" || die "aq-s3lite did not start"
		for s in A B; do
			tier_stack "$s" || die "$s: tier agent did not start"
			"$W/loadgen" -p W -k -s "$TIER_MIB" "$(url '')" ab.dat >/dev/null || die "$s: tier write failed"
		done
	fi
	for r in $(seq "$ROUNDS"); do
		order="A B"
		[ $((r % 2)) = 0 ] && order="B A"
		for bench in api nfs qos tier; do
			want "$bench" || continue
			for s in $order; do
				log "round $r/$ROUNDS: $bench $s (load $(cut -d' ' -f1 /proc/loadavg))"
				"${bench}_round" "$s" "$r"
			done
		done
		load_mark
	done
fi

# --- 2. instructions ---------------------------------------------------------------------
# cg_wrap SIDE NAME PROGRAM: a script that runs PROGRAM with its arguments under callgrind,
# dumps in $W/cg/NAME-SIDE.PID*
cg_wrap() {
	local f=$W/cg/run-$2-$1.sh
	printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s %s "$@"\n' "$W/cg/$2-$1.%p" "$3" >"$f"
	chmod +x "$f"
	echo "$f"
}
cg_zero() { callgrind_control -z "$1" >/dev/null 2>&1; }
# cg_calls FILE FUNCTION: how many calls of FUNCTION the callgrind FILE records
cg_calls() {
	awk -v fn="$2" '
		/^c?fn=\(/ { id = $1; sub(/^c?fn=/, "", id); nm = substr($0, index($0, ")") + 2)
			if (nm != "") name[id] = nm
			if ($0 ~ /^cfn=/) cur = name[id] }
		/^calls=/ && cur == fn { split($1, a, "="); n += a[2] }
		END { print n + 0 }' "$1"
}
# cg_dump PID FIGURE PER UNIT [FUNCTION]: dump the counters since the last zero and record
# instructions / PER as one repetition of FIGURE (and the calls of FUNCTION per PER)
cg_dump() {
	local file ir calls=-
	callgrind_control -d "$1" >/dev/null 2>&1
	file=$(find "$W/cg" -name "*.$1.*" -printf '%T@ %p\n' | sort -n | tail -1 | cut -d' ' -f2)
	ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$file")
	[ -n "${5:-}" ] && calls=$(awk -v c="$(cg_calls "$file" "$5")" -v n="$3" 'BEGIN { printf "%.2f", c / n }')
	echo "$(awk -v t="$ir" -v n="$3" 'BEGIN { printf "%.0f", t / n }') $4 $calls $file" >>"$RES/ir.$2"
}
CG_REPS=2
if [ "$INSTR" = 1 ]; then
	for s in A B; do
		if want api; then
			log "instructions: api $s"
			wrapper=$(cg_wrap "$s" aquiferd "${!s}/aquiferd")
			# the node stays READY while its agent is stopped (below)
			AQ_SERVE_ARGS=(--node-down-seconds 3600)
			api_stack "$s" "$wrapper" || die "$s: api stack under callgrind did not come up"
			AQ_SERVE_ARGS=()
			pid=APID_$s pid=${!pid} agent=AGPID_$s agent=${!agent}
			url=API_URL_$s url=${!url} tok=TOK_$s tok=${!tok}
			for i in $(seq "$CG_GETS"); do echo "url = \"$url/v1/$PARENT/volumes/vol1\""; echo "output = /dev/null"; done >"$W/gets.cfg"
			for rep in $(seq "$CG_REPS"); do
				for i in $(seq "$CG_CREATES"); do # one group per create: data would add up otherwise
					id=cg${s,,}$rep-$i
					[ "$i" = 1 ] || echo next
					echo "header = \"Authorization: Bearer $tok\""
					echo "header = \"Content-Type: application/json\""
					echo "url = \"$url/v1/$PARENT/volumes?volumeId=$id\""
					jq -nc --arg id "$id" '{shareName: $id, storagePool: "pool1", capacityGib: "100",
						protocols: ["NFSV3"]}' | jq -R '"data = " + tojson' -r
					echo "output = /dev/null"
				done >"$W/creates.cfg"
				# The agent's status reports would count in aquiferd's figures as often as
				# the machine's load stretches a phase: it is stopped while one runs (the
				# reconciler's passes over the node still count: they are part of a create).
				kill -STOP "$agent"
				sleep 3 # a report it sent just before is done
				cg_zero "$pid"
				curl -s -f -H "Authorization: Bearer $tok" -K "$W/gets.cfg" || log "$s: a GET failed"
				cg_dump "$pid" "api.get.$s" "$CG_GETS" request
				cg_zero "$pid"
				curl -s -f -K "$W/creates.cfg" || log "$s: a create failed"
				cg_dump "$pid" "api.create.$s" "$CG_CREATES" create
				kill -CONT "$agent"
			done
		fi
		if want nfs; then
			log "instructions: nfs $s"
			nfs_start "$s" "$W/cgnfs-$s" valgrind --tool=callgrind --callgrind-out-file="$W/cg/nfs-$s.%p" ||
				die "$s: nfs_serve under callgrind did not start"
			pid=$NFS_PID u=$(nfs_url "$(cat "$W/cgnfs-$s/port")")
			for rep in $(seq "$CG_REPS"); do
				for ph in W:seq_write:"$CG_MIB":MiB S:seq_read:"$CG_MIB":MiB w:rand_write:"$CG_OPS":op \
					r:rand_read:"$CG_OPS":op F:small_file:$((CG_OPS / 10)):file; do
					IFS=: read -r p name per unit <<<"$ph"
					cg_zero "$pid"
					"$W/loadgen" -p "$p" -k -s "$CG_MIB" -n "$CG_OPS" "$u" cg.dat >/dev/null 2>&1 ||
						log "$s: loadgen -p $p failed"
					cg_dump "$pid" "nfs.$name.$s" "$per" "$unit"
				done
				cg_zero "$pid"
				"$W/ab_getattr" "$CG_OPS" "$u" cg.dat >/dev/null || log "$s: ab_getattr failed"
				cg_dump "$pid" "nfs.getattr.$s" "$CG_OPS" call
			done
		fi
		if want qos; then
			log "instructions: qos $s"
			valgrind --tool=callgrind --callgrind-out-file="$W/cg/qos-$s.out" "$W/ab_qos_$s" "$CG_QOS" \
				>"$W/qos-$s.txt" 2>&1 || log "$s: ab_qos failed"
			ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$W/cg/qos-$s.out")
			# deterministic (no threads, a fake clock): one run; 3 x N requests
			echo "$(awk -v t="$ir" -v n="$CG_QOS" 'BEGIN { printf "%.0f", t / (3 * n) }') request - $W/cg/qos-$s.out" \
				>>"$RES/ir.qos.admit.$s"
		fi
		if want tier; then
			log "instructions: tier $s"
			[ -n "${AQ_S3_PID:-}" ] || aq_s3lite_start "$W/s3" || die "aq-s3lite did not start"
			wrapper=$(cg_wrap "$s" agent "${!s}/aquifer-agent")
			tier_stack "$s" "$wrapper" || die "$s: tier agent under callgrind did not start"
			pid=$AGENT_PID
			"$W/loadgen" -p W -k -s "$CG_TIER_MIB" "$(url '')" cg.dat >/dev/null || log "$s: tier write failed"
			for rep in $(seq "$CG_REPS"); do
				policy PAUSED ON_READ
				"$W/loadgen" -p S -k -s "$CG_TIER_MIB" "$(url '')" cg.dat >/dev/null 2>&1 # all hot again
				cg_zero "$pid"
				policy ENABLED DEFAULT
				wait_cold $((CG_TIER_MIB << 20)) 600 || log "$s: did not go cold under callgrind"
				cg_dump "$pid" "tier.cool.$s" "$CG_TIER_MIB" chunk obj_put
				policy PAUSED DEFAULT
				cg_zero "$pid"
				"$W/loadgen" -p S -k -s "$CG_TIER_MIB" "$(url '')" cg.dat >/dev/null 2>&1 || log "$s: cold read failed"
				cg_dump "$pid" "tier.cold_seq.$s" "$CG_TIER_MIB" MiB obj_get
				policy PAUSED NEVER
				cg_zero "$pid"
				"$W/loadgen" -p r -k -s "$CG_TIER_MIB" -n "$CG_TIER_OPS" "$(url '')" cg.dat >/dev/null 2>&1 ||
					log "$s: cold random read failed"
				cg_dump "$pid" "tier.cold_rand.$s" "$CG_TIER_OPS" read obj_get
			done
		fi
	done
fi
load_mark

# --- report -------------------------------------------------------------------------------
echo "A/B: A = $OLD_ID, B = $NEW_ID; $START; $(nproc) cores; bench/ab.sh --rounds $ROUNDS$([ "$QUICK" = 1 ] && echo " --quick")"
echo "load average (1 min) at start, after each round and at the end: ${LOADS[*]}"
if [ "$WALL" = 1 ]; then
	echo
	echo "| metric | median A | median B | B/A | spread A (min-max) | spread B (min-max) |"
	echo "|---|---|---|---|---|---|"
	for f in "$RES"/*.A; do
		[ -e "$f" ] || continue
		m=$(basename "$f" .A)
		[[ $m = ir.* ]] && continue
		read -r ma mina maxa < <(stat_of "$f")
		read -r mb minb maxb < <(stat_of "$RES/$m.B" 2>/dev/null || echo "- - -")
		echo "| $m | $ma | $mb | $(ratio "$ma" "$mb") | $mina-$maxa | $minb-$maxb |"
	done
fi
if [ "$INSTR" = 1 ]; then
	echo
	echo "Instructions (callgrind) per unit of work: the lowest of $CG_REPS repetitions (the others in"
	echo "parentheses; background threads add to some); store calls: obj_put/obj_get per unit (tier)."
	echo
	echo "| workload | per | A | B | B/A | store calls A | store calls B |"
	echo "|---|---|---|---|---|---|---|"
	for f in "$RES"/ir.*.A; do
		[ -e "$f" ] || continue
		m=$(basename "$f" .A)
		row() { # FILE: "min (others)" and the store calls of the lowest
			sort -n "$1" | awk '{ v[NR] = $1; c[NR] = $3 } END { o = ""
				for (i = 2; i <= NR; i++) o = o (o == "" ? "" : ", ") v[i]
				printf "%s%s\t%s\t%s\n", v[1], (o == "" ? "" : " (" o ")"), v[1], c[1] }'
		}
		IFS=$'\t' read -r ta ia ca < <(row "$f")
		IFS=$'\t' read -r tb ib cb < <(row "$RES/$m.B" 2>/dev/null || printf -- '-\t-\t-\n')
		echo "| ${m#ir.} | $(awk '{ print $2; exit }' "$f") | $ta | $tb | $(ratio "$ia" "$ib") | $ca | $cb |"
	done
	[ "$KEEP" = 1 ] && echo "callgrind files: $W/cg (callgrind_annotate FILE)"
fi
exit 0
