#!/usr/bin/env bash
# bench/api/run.sh: how fast is aquiferd's API next to bare libmicrohttpd?
#
# Builds aquiferd and aq-bare-mhd optimised (-O2) in a scratch copy of the
# tree (the worktree may be configured with --enable-debug, i.e. -O0), starts
# aquiferd on a temporary database and a free loopback port, creates a
# location, project, pool and volume, mints an admin token, then runs wrk:
#   1. authenticated GET of the volume against aquiferd, and the same against
#      aq-bare-mhd serving the identical body, RUNS times each, interleaved;
#   2. the same GET over HTTPS (keep-alive): a second aquiferd on the same
#      database with --tls-cert/--tls-key from its cluster CA, against
#      aq-bare-mhd with the same certificate, RUNS times each, interleaved;
#   3. on each engine of ENGINES (sqlite, postgres: a throwaway server as
#      tests/lib/pg.sh starts one), a fresh aquiferd with FILL volumes, then
#      RUNS rounds of the engine's own single-row commit rate
#      (aq-commit-rate) and volume creates (POST, unique ids) at
#      CREATE_CONNS connections.
# Writes bench/api/REPORT.md with the medians. If the GET ratio is below 0.8
# and perf is available, profiles a second aquiferd (same database) in one
# extra GET run and one extra create run and adds the top symbols. Stops only the processes it started.
#
# Environment: DURATION (s, default 10), RUNS (3), THREADS (wrk threads,
# min(4, nproc)), CONNS (32), CREATE_CONNS (8), CREATE_NODES (8 agents: a
# node holds at most 2,500 volumes, api_intent.h), FILL (1000), ENGINES
# ("sqlite postgres"), PROFILE_CREATES (1: one extra create run per engine
# under perf), REPORT (output path),
# AQ_BENCH_BUILD=tree (use the worktree's binaries as built instead),
# AQ_BENCH_BUILD_DIR (scratch build, default /tmp/aq-bench-build), PROFILE=0/1
# (default: only when the ratio is below 0.8).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${DURATION:-10}
RUNS=${RUNS:-3}
NPROC=$(nproc)
THREADS=${THREADS:-$((NPROC < 4 ? NPROC : 4))}
CONNS=${CONNS:-32}
CREATE_CONNS=${CREATE_CONNS:-8}
CREATE_NODES=${CREATE_NODES:-8}
REPORT=${REPORT:-$TOP/bench/api/REPORT.md}
BUILD=${AQ_BENCH_BUILD:-optimized}
BUILD_DIR=${AQ_BENCH_BUILD_DIR:-/tmp/aq-bench-build}
PROFILE=${PROFILE:-auto}
FILL=${FILL:-1000}
PROFILE_CREATES=${PROFILE_CREATES:-1}
LAYER_THREADS=${LAYER_THREADS:-8}
ENGINES=${ENGINES:-sqlite postgres}
PG_DESC=""
WORK=$(mktemp -d /tmp/aq-bench.XXXXXX)
PIDS=()

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	[ -n "${AQ_PG_DIR:-}" ] && aq_pg_stop
	rm -rf "$WORK"
}
trap cleanup EXIT

command -v wrk >/dev/null || die "wrk not found (apt-get install wrk)"
command -v curl >/dev/null || die "curl not found (apt-get install curl)"

# --- build -----------------------------------------------------------------
if [ "$BUILD" = tree ]; then
	BIN=$TOP
	[ -x "$BIN/aquiferd" ] && [ -x "$BIN/bench/api/aq-bare-mhd" ] && [ -x "$BIN/bench/api/aq-commit-rate" ] ||
		make -C "$TOP" aquiferd aquifer-agent bench/api/aq-bare-mhd bench/api/aq-commit-rate >&2
	BUILD_DESC="the worktree's own build ($(grep -o "\\$ ./configure.*" "$TOP/config.log" | head -1))"
else
	mkdir -p "$BUILD_DIR"
	# Copy tracked and new source files; tar keeps mtimes so make stays incremental.
	(cd "$TOP" && git ls-files -co --exclude-standard -z) |
		(cd "$TOP" && tar --null -T - -cf -) | (cd "$BUILD_DIR" && tar -xf -)
	if [ ! -f "$BUILD_DIR/Makefile" ]; then
		log "configuring an optimised build in $BUILD_DIR"
		(cd "$BUILD_DIR" && autoreconf -fi && ./configure CFLAGS="-O2 -g") >"$WORK/build.log" 2>&1 ||
			{ cat "$WORK/build.log" >&2; die "configure failed"; }
	fi
	make -C "$BUILD_DIR" -j"$NPROC" aquiferd aquifer-agent bench/api/aq-bare-mhd bench/api/aq-commit-rate >"$WORK/build.log" 2>&1 ||
		{ tail -30 "$WORK/build.log" >&2; die "build failed"; }
	BIN=$BUILD_DIR
	BUILD_DESC="optimised copy of the tree: ./configure CFLAGS=\"-O2 -g\" && make (in $BUILD_DIR)"
fi
AQUIFERD=$BIN/aquiferd
BARE=$BIN/bench/api/aq-bare-mhd
COMMIT_RATE=$BIN/bench/api/aq-commit-rate

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_http() { # url [curl options]
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "${@:2}" "$1" && return 0
		sleep 0.05
	done
	die "nothing answers at $1"
}

# --- aquiferd with a volume ------------------------------------------------
AQ_PORT=$(free_port)
AQ_URL=http://127.0.0.1:$AQ_PORT
"$AQUIFERD" --listen "127.0.0.1:$AQ_PORT" --db "$WORK/aquifer.db" >"$WORK/aquiferd.log" 2>&1 &
AQ_PID=$!
PIDS+=("$AQ_PID")
wait_http "$AQ_URL/healthz"
AQ_TOKEN=$("$AQUIFERD" token --db "$WORK/aquifer.db" --role admin --ttl 86400 | tail -1)
export AQ_TOKEN

api() { # method path [body]; fails on HTTP >= 400
	curl -sS -f -X "$1" -H "Authorization: Bearer $AQ_TOKEN" -H "Content-Type: application/json" \
		${3:+--data "$3"} "$AQ_URL$2"
}
PARENT=projects/bench/locations/loc1
api POST "/v1/locations?locationId=loc1" '{}' >/dev/null
api POST "/v1/projects?projectId=bench" '{}' >/dev/null
# one storage node, so volumes can be placed (an operation finishes when its node applied it)
JOIN=$(api POST "/v1/locations/loc1:joinToken" '{}' | jq -r .token)
AGENT_PORT=$(free_port)
NFS_PORT=$(free_port)
mkdir -p "$WORK/shelf"
"$(dirname "$AQUIFERD")/aquifer-agent" --server "$AQ_URL" --token "$JOIN" --node bench1 --location loc1 \
	--shelf "$WORK/shelf" --listen "127.0.0.1:$AGENT_PORT" --nfs-listen "127.0.0.1:$NFS_PORT" \
	--state-dir "$WORK/agent" >"$WORK/agent.log" 2>&1 &
PIDS+=("$!")
wait_http "http://127.0.0.1:$AGENT_PORT/healthz"
api POST "/v1/$PARENT/storagePools?storagePoolId=pool1" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"10485760","description":"bench pool"}' >/dev/null
api POST "/v1/$PARENT/volumes?volumeId=vol1" \
	'{"shareName":"vol1","storagePool":"pool1","capacityGib":"1500","protocols":["NFSV3"],
	  "exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","accessType":"READ_WRITE",
	  "nfsv3":true,"hasRootAccess":"true","squashMode":"NO_ROOT_SQUASH"}]},
	  "unixPermissions":"0770","labels":{"env":"bench","team":"storage"},
	  "description":"benchmark volume"}' >/dev/null
GET_PATH=/v1/$PARENT/volumes/vol1
for _ in $(seq 100); do
	[ "$(api GET "$GET_PATH" 2>/dev/null | jq -r .state)" = READY ] && break
	sleep 0.1
done
api GET "$GET_PATH" >"$WORK/volume.json"
BODY_BYTES=$(wc -c <"$WORK/volume.json")

# --- bare MHD with the same body --------------------------------------------
BARE_PORT=$(free_port)
BARE_URL=http://127.0.0.1:$BARE_PORT
"$BARE" --listen "127.0.0.1:$BARE_PORT" --body "$WORK/volume.json" >"$WORK/bare.log" 2>&1 &
BARE_PID=$!
PIDS+=("$BARE_PID")
wait_http "$BARE_URL/healthz"
[ "$(curl -s "$BARE_URL$GET_PATH" | wc -c)" = "$BODY_BYTES" ] || die "bare body size differs"

# --- wrk output parsing -----------------------------------------------------
to_ms() { # "1.23ms" / "850.00us" / "1.02s" -> ms
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f\n", v / 1000 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f\n", v }
		else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f\n", v * 60000 }
		else { sub(/s$/, "", v); printf "%.3f\n", v * 1000 } }'
}
rps() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
pct() { to_ms "$(awk -v p="$2%" '$1 == p { print $2 }' "$1")"; }
non2xx() { awk '/Non-2xx or 3xx responses:/ { print $5 } END { }' "$1" | tail -1; }
errs() { # socket errors + non-2xx
	local e n
	e=$(awk '/Socket errors:/ { s = 0; for (i = 3; i <= NF; i += 2) s += $(i + 1); print s }' "$1")
	n=$(non2xx "$1")
	echo $(( ${e:-0} + ${n:-0} ))
}
total_reqs() { awk '/requests in/ { print $1 }' "$1"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

WRK_GET=(wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency -s "$TOP/bench/api/get.lua")
WRK_CREATE=(wrk -t"$((THREADS < CREATE_CONNS ? THREADS : CREATE_CONNS))" -c"$CREATE_CONNS"
	-d"${DURATION}s" --latency -s "$TOP/bench/api/create.lua")

# --- GET: interleaved runs ---------------------------------------------------
for i in $(seq 1 "$RUNS"); do
	log "GET run $i/$RUNS: aquiferd"
	"${WRK_GET[@]}" "$AQ_URL$GET_PATH" >"$WORK/get-aq-$i.txt"
	log "GET run $i/$RUNS: bare MHD"
	"${WRK_GET[@]}" "$BARE_URL$GET_PATH" >"$WORK/get-bare-$i.txt"
	for k in aq bare; do
		f=$WORK/get-$k-$i.txt
		[ "$(errs "$f")" = 0 ] || { cat "$f" >&2; die "GET run $i ($k) had errors"; }
		log "GET run $i ($k): $(rps "$f") req/s"
	done
done
# --- GET over HTTPS: interleaved runs ------------------------------------------------
"$AQUIFERD" ca init --db "$WORK/aquifer.db" >/dev/null
"$AQUIFERD" ca issue --db "$WORK/aquifer.db" --dns localhost --ip 127.0.0.1 >/dev/null
AQS_PORT=$(free_port)
AQS_URL=https://127.0.0.1:$AQS_PORT
"$AQUIFERD" --listen "127.0.0.1:$AQS_PORT" --db "$WORK/aquifer.db" --tls-cert "$WORK/server.crt" \
	--tls-key "$WORK/server.key" >"$WORK/aquiferd-tls.log" 2>&1 &
PIDS+=("$!")
wait_http "$AQS_URL/healthz" --cacert "$WORK/ca.crt"
BARES_PORT=$(free_port)
BARES_URL=https://127.0.0.1:$BARES_PORT
"$BARE" --listen "127.0.0.1:$BARES_PORT" --body "$WORK/volume.json" --tls-cert "$WORK/server.crt" \
	--tls-key "$WORK/server.key" --tls-trust "$WORK/ca.crt" >"$WORK/bare-tls.log" 2>&1 &
PIDS+=("$!")
wait_http "$BARES_URL/healthz" --cacert "$WORK/ca.crt"
TLS_DESC=$(openssl s_client -connect "127.0.0.1:$AQS_PORT" -CAfile "$WORK/ca.crt" </dev/null 2>/dev/null |
	awk '/^New, / { print $2, $NF; exit }')
for i in $(seq 1 "$RUNS"); do
	log "HTTPS GET run $i/$RUNS: aquiferd"
	"${WRK_GET[@]}" "$AQS_URL$GET_PATH" >"$WORK/get-aqs-$i.txt"
	log "HTTPS GET run $i/$RUNS: bare MHD"
	"${WRK_GET[@]}" "$BARES_URL$GET_PATH" >"$WORK/get-bares-$i.txt"
	for k in aqs bares; do
		f=$WORK/get-$k-$i.txt
		[ "$(errs "$f")" = 0 ] || { cat "$f" >&2; die "HTTPS GET run $i ($k) had errors"; }
		log "HTTPS GET run $i ($k): $(rps "$f") req/s"
	done
done
summ() { # kind metric
	for i in $(seq 1 "$RUNS"); do
		case $2 in
		rps) rps "$WORK/get-$1-$i.txt" ;;
		p50) pct "$WORK/get-$1-$i.txt" 50 ;;
		p99) pct "$WORK/get-$1-$i.txt" 99 ;;
		esac
	done | median
}
AQ_RPS=$(summ aq rps) AQ_P50=$(summ aq p50) AQ_P99=$(summ aq p99)
BARE_RPS=$(summ bare rps) BARE_P50=$(summ bare p50) BARE_P99=$(summ bare p99)
RATIO=$(awk -v a="$AQ_RPS" -v b="$BARE_RPS" 'BEGIN { printf "%.3f", a / b }')
AQS_RPS=$(summ aqs rps) AQS_P50=$(summ aqs p50) AQS_P99=$(summ aqs p99)
BARES_RPS=$(summ bares rps) BARES_P50=$(summ bares p50) BARES_P99=$(summ bares p99)
RATIO_TLS=$(awk -v a="$AQS_RPS" -v b="$BARES_RPS" 'BEGIN { printf "%.3f", a / b }')
TLS_COST=$(awk -v a="$AQS_RPS" -v b="$AQ_RPS" 'BEGIN { printf "%.3f", a / b }')
runs_list() { for i in $(seq 1 "$RUNS"); do rps "$WORK/get-$1-$i.txt"; done | paste -sd' '; }
AQ_RUNS=$(runs_list aq) BARE_RUNS=$(runs_list bare) AQS_RUNS=$(runs_list aqs) BARES_RUNS=$(runs_list bares)

# --- creates, on each engine, next to the engine's own commit rate ----------------
# For each engine of ENGINES: a fresh aquiferd (SQLite file in $WORK, or a
# throwaway PostgreSQL server as tests/lib/pg.sh starts one) with one storage
# node and a pool, FILL volumes created first (the location filling up), then
# RUNS rounds of: aq-commit-rate (one connection committing one row per
# transaction for DURATION s, same file system / same server, durable
# commits) and wrk creating volumes for DURATION s at CREATE_CONNS connections.
failedops() { # wrk output -> 200 answers whose Operation already failed (create.lua's done())
	awk '/^failed operations:/ { n = $3 } END { print n + 0 }' "$1"
}
total_ok() { # wrk output -> acknowledged creates (2xx, operation not failed)
	echo $(( $(total_reqs "$1") - $(errs "$1") - $(failedops "$1") ))
}
wrk_secs() { awk '/requests in/ { v = $4; sub(/,$/, "", v); print v }' "$1"; }
engine_start() { # engine dir -> sets E_URL E_PID E_DB E_TOKEN_ARGS E_RATE_DB
	local eng=$1 dir=$2 port
	mkdir -p "$dir"
	if [ "$eng" = postgres ]; then
		E_DB=$(aq_pg_createdb "aqbench") || die "createdb failed"
		E_RATE_DB=$(aq_pg_createdb "aqrate") || die "createdb failed"
		E_LAYER_DB=$(aq_pg_createdb "aqlayer") || die "createdb failed"
		E_ARGS=(--db "$E_DB" --state-dir "$dir")
	else
		E_DB=$dir/aquifer.db
		E_RATE_DB=$dir/commit-rate.db
		E_LAYER_DB=$dir/commit-layer.db
		E_ARGS=(--db "$E_DB")
	fi
	port=$(free_port)
	E_URL=http://127.0.0.1:$port
	"$AQUIFERD" --listen "127.0.0.1:$port" "${E_ARGS[@]}" >"$dir/aquiferd.log" 2>&1 &
	E_PID=$!
	PIDS+=("$E_PID")
	wait_http "$E_URL/healthz"
	E_TOKEN=$("$AQUIFERD" token "${E_ARGS[@]}" --role admin --ttl 86400 | tail -1)
}
eapi() { # method path [body]
	curl -sS -f -X "$1" -H "Authorization: Bearer $E_TOKEN" -H "Content-Type: application/json" \
		${3:+--data "$3"} "$E_URL$2"
}
engine_creates() { # engine
	local eng=$1 dir=$WORK/creates-$1 join ap np i f m0 m1 rates=() p50=() p99=() crates=() cp50=() cp99=() lrates=() lp50=() lsync=() errt=0
	engine_start "$eng" "$dir"
	eapi POST "/v1/locations?locationId=loc1" '{}' >/dev/null
	eapi POST "/v1/projects?projectId=bench" '{}' >/dev/null
	join=$(eapi POST "/v1/locations/loc1:joinToken" '{}' | jq -r .token)
	mkdir -p "$dir/shelf"
	# CREATE_NODES agents on the one shelf: a node holds at most
	# API_NODE_VOLUMES_MAX (2,500) volumes, and the runs create ~1,000/s.
	# Node ceilings far above the default (33,379 MiB/s, about 5,300 of these
	# 6.25 MiB/s volumes), so that creates are not refused for headroom
	# within the runs; the shelf's 140 GB/s still bounds placement
	E_AGENTS=()
	for k in $(seq 1 "$CREATE_NODES"); do
		[ "$k" = 1 ] || join=$(eapi POST "/v1/locations/loc1:joinToken" '{}' | jq -r .token)
		ap=$(free_port) np=$(free_port)
		"$(dirname "$AQUIFERD")/aquifer-agent" --server "$E_URL" --token "$join" --node "bench$k" --location loc1 \
			--throughput-mibps 10000000 \
			--shelf "$dir/shelf" --listen "127.0.0.1:$ap" --nfs-listen "127.0.0.1:$np" \
			--state-dir "$dir/agent$k" >"$dir/agent$k.log" 2>&1 &
		E_AGENTS+=("$!")
		PIDS+=("$!")
		wait_http "http://127.0.0.1:$ap/healthz"
	done
	eapi POST "/v1/$PARENT/storagePools?storagePoolId=pool1" \
		'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"10485760"}' >/dev/null
	log "$eng: filling the location with $FILL volumes"
	seq "$FILL" | xargs -P 8 -I{} curl -s -o /dev/null -X POST -H "Authorization: Bearer $E_TOKEN" \
		-H "Content-Type: application/json" \
		--data '{"shareName":"fill{}","storagePool":"pool1","capacityGib":"100","protocols":["NFSV3"]}' \
		"$E_URL/v1/$PARENT/volumes?volumeId=fill{}"
	m0=$(curl -s -H "Authorization: Bearer $E_TOKEN" "$E_URL/metrics" | awk '$1 == "aquifer_db_commits_total" { c = $2 } $1 == "aquifer_db_syncs_total" { s = $2 } $1 == "aquifer_db_statements_total" { t = $2 } $1 == "aquifer_db_group_lane_commits_total{lane=\"api\"}" { g = $2 } $1 == "aquifer_db_group_lane_bodies_total{lane=\"api\"}" { b = $2 } $1 == "aquifer_db_round_trips_total" { r = $2 } END { print c + 0, s + 0, t + 0, g + 0, b + 0, r + 0 }')
	for i in $(seq 1 "$RUNS"); do
		log "$eng: commit-rate run $i/$RUNS"
		"$COMMIT_RATE" --db "$E_RATE_DB" --seconds "$DURATION" >"$WORK/rate-$eng-$i.txt"
		crates+=("$(sed -n 's/.*commits\/s=\([0-9.]*\).*/\1/p' "$WORK/rate-$eng-$i.txt")")
		cp50+=("$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' "$WORK/rate-$eng-$i.txt")")
		cp99+=("$(sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p' "$WORK/rate-$eng-$i.txt")")
		"$COMMIT_RATE" --db "$E_LAYER_DB" --via-db "$LAYER_THREADS" --seconds "$DURATION" >"$WORK/layer-$eng-$i.txt"
		lrates+=("$(sed -n 's/.*commits\/s=\([0-9.]*\).*/\1/p' "$WORK/layer-$eng-$i.txt")")
		lp50+=("$(sed -n 's/.*p50_ms=\([0-9.]*\).*/\1/p' "$WORK/layer-$eng-$i.txt")")
		lsync+=("$(sed -n 's/.*n=\([0-9]*\).*fsyncs=\([0-9]*\).*/\1 \2/p' "$WORK/layer-$eng-$i.txt" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else printf "n/a" }')")
		log "$eng: create run $i/$RUNS"
		f=$WORK/create-$eng-$i.txt
		AQ_TOKEN=$E_TOKEN AQ_RUN=$i "${WRK_CREATE[@]}" "$E_URL/" >"$f" 2>"$WORK/create-$eng-$i.err"
		rates+=("$(to_ms "$(wrk_secs "$f")" | awk -v ok="$(total_ok "$f")" '{ printf "%.1f", ok / ($1 / 1000) }')")
		p50+=("$(pct "$f" 50)")
		p99+=("$(pct "$f" 99)")
		errt=$((errt + $(errs "$f") + $(failedops "$f")))
		head -3 "$WORK/create-$eng-$i.err" >>"$WORK/create-errors.txt"
		log "$eng: ${rates[-1]} creates/s; engine ${crates[-1]} commits/s"
	done
	m1=$(curl -s -H "Authorization: Bearer $E_TOKEN" "$E_URL/metrics" | awk '$1 == "aquifer_db_commits_total" { c = $2 } $1 == "aquifer_db_syncs_total" { s = $2 } $1 == "aquifer_db_statements_total" { t = $2 } $1 == "aquifer_db_group_lane_commits_total{lane=\"api\"}" { g = $2 } $1 == "aquifer_db_group_lane_bodies_total{lane=\"api\"}" { b = $2 } $1 == "aquifer_db_round_trips_total" { r = $2 } END { print c + 0, s + 0, t + 0, g + 0, b + 0, r + 0 }')
	CREATE_RUNS+="- $eng: aquiferd's commits during the create runs (creates, the reconciler, agent reports): $(awk -v a="$m0" -v b="$m1" 'BEGIN { split(a, x, " "); split(b, y, " "); c = y[1] - x[1]; s = y[2] - x[2]; if (s > 0) printf "%d in %d fsyncs of the WAL (%.2f commits per fsync)", c, s, c / s; else printf "%d (each one WAL flush of PostgreSQL)", c; g = y[4] - x[4]; b = y[5] - x[5]; if (g > 0) printf "; creates in group transactions (db_group_run, api lane): %d in %d commits (%.2f per commit); statements given to the engine: %d", b, g, b / g, y[3] - x[3]; if (y[6] > x[6]) printf " in %d round trips", y[6] - x[6] }')"$'\n'
	E_RPS=$(printf '%s\n' "${rates[@]}" | median)
	E_P50=$(printf '%s\n' "${p50[@]}" | median)
	E_P99=$(printf '%s\n' "${p99[@]}" | median)
	E_CRPS=$(printf '%s\n' "${crates[@]}" | median)
	E_CP50=$(printf '%s\n' "${cp50[@]}" | median)
	E_CP99=$(printf '%s\n' "${cp99[@]}" | median)
	E_LRPS=$(printf '%s\n' "${lrates[@]}" | median)
	E_LP50=$(printf '%s\n' "${lp50[@]}" | median)
	E_VOLS=$(eapi GET "/v1/$PARENT/storagePools/pool1" | jq -r .volumeCount)
	CREATE_RUNS+="- $eng: operations failed at once (200 with an error: no node could take the volume) per run: $(for i in $(seq 1 "$RUNS"); do failedops "$WORK/create-$eng-$i.txt"; done | paste -sd' '); nodes after the runs: $(for k in $(seq 1 "$CREATE_NODES"); do eapi GET "/v1/nodes/bench$k" | jq -c '{name, state, stateDetails}'; done | paste -sd' ')"$'\n'
	eapi GET "/v1/$PARENT/operations?pageSize=1000&filter=done=true" | jq -r '[.operations[] | select(.error) | .error.message] | group_by(.) | map("\(length)x \(.[0])") | .[]' 2>/dev/null | head -3 >>"$WORK/create-errors.txt" || true
	CREATE_ROWS+="| $eng | $E_RPS | $E_P50 | $E_P99 | $errt | $E_VOLS | $E_CRPS | $E_CP50 | $E_CP99 | $(awk -v a="$E_RPS" -v b="$E_CRPS" 'BEGIN { printf "%.3f", a / b }') | $E_LRPS | $E_LP50 |"$'\n'
	CREATE_RUNS+="- $eng: creates/s ${rates[*]}; engine commits/s ${crates[*]}; db layer ($LAYER_THREADS threads) commits/s ${lrates[*]}, commits per fsync ${lsync[*]}"$'\n'
	log "$eng: creates $E_RPS/s (p50 $E_P50 ms, p99 $E_P99 ms); engine $E_CRPS commits/s"
	create_profile "$eng"
	kill "$E_PID" "${E_AGENTS[@]}" 2>/dev/null || true
}
# One extra create run under perf (DWARF call graphs, attached to the running
# aquiferd): the inclusive share of aquiferd's own functions and the threads'.
create_profile() { # engine
	local eng=$1 data=$WORK/perf-create-$1.data
	[ "$PROFILE_CREATES" = 1 ] && command -v perf >/dev/null || return 0
	log "$eng: profiling one more create run"
	AQ_TOKEN=$E_TOKEN AQ_RUN=prof "${WRK_CREATE[@]}" "$E_URL/" >"$WORK/create-$eng-prof.txt" 2>&1 &
	local w=$!
	sleep 1
	timeout "$((DURATION > 3 ? DURATION - 2 : 2))" perf record -q --call-graph dwarf,16384 -F 199 -p "$E_PID" \
		-o "$data" >/dev/null 2>&1 || true
	wait "$w" || true
	{
		printf '### %s (%s creates/s during the profiled run)\n\n```\n' "$eng" "$(rps "$WORK/create-$eng-prof.txt")"
		perf report -i "$data" --children --sort symbol --stdio -g none 2>/dev/null |
			grep -E '%' | grep -E '\] (srv_|db_|sq_|pg_|vol_|rec_|place|intent|json_|sqlite3_step|sqlite3_prepare|PQ)' |
			awk '{ printf "%8s  %s\n", $1, $4 }' | head -28 || true
		printf '```\n\n'
	} >>"$WORK/profiles.md"
}
export AQ_PARENT=$PARENT AQ_POOL=pool1
CREATE_ROWS="" CREATE_RUNS=""
: >"$WORK/create-errors.txt"
for eng in $ENGINES; do
	if [ "$eng" = postgres ]; then
		. "$TOP/tests/lib/pg.sh"
		mkdir -p "$WORK/pgsrv"
		chmod 755 "$WORK" # as root the server runs as "postgres" and must reach its folder
		aq_pg_start "$WORK/pgsrv" || die "PostgreSQL did not start"
		PG_DESC="PostgreSQL $("$AQ_PG_BIN/postgres" --version | awk '{ print $3 }') (initdb defaults: fsync on, synchronous_commit on, commit_delay 0)"
	fi
	engine_creates "$eng"
done

# --- profile when below target ----------------------------------------------------
PERF_GET="" PERF_CREATE=""
want_profile=$PROFILE
if [ "$PROFILE" = auto ]; then
	want_profile=$(awk -v r="$RATIO" 'BEGIN { print (r < 0.8) ? 1 : 0 }')
fi
perf_top() { # data file
	perf report -i "$1" --no-children -g none --sort dso,symbol --stdio 2>/dev/null |
		grep -v '^#' | grep -v '^$' | grep '%' | head -15
}
# perf cannot attach to a running process here (-p gets no samples in this VM),
# so each profile runs a second aquiferd on the same database under perf.
profile_run() { # out.data wrk-args...
	local data=$1 port pid child
	shift
	port=$(free_port)
	perf record -g -o "$data" -- "$AQUIFERD" --listen "127.0.0.1:$port" --db "$WORK/aquifer.db" \
		>"$WORK/perf.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	wait_http "http://127.0.0.1:$port/healthz"
	"$@" "http://127.0.0.1:$port" >/dev/null 2>&1 || true
	child=$(pgrep -P "$pid" || true)
	[ -n "$child" ] && kill "$child"
	wait "$pid" || true
}
if [ "$want_profile" = 1 ] && command -v perf >/dev/null; then
	log "profiling aquiferd (GET)"
	profile_run "$WORK/perf-get.data" sh -c '"$@"$0' "$GET_PATH" "${WRK_GET[@]}"
	PERF_GET=$(perf_top "$WORK/perf-get.data" || true)
	log "profiling aquiferd (creates)"
	AQ_RUN=p profile_run "$WORK/perf-create.data" sh -c '"$@"$0' "/" "${WRK_CREATE[@]}"
	PERF_CREATE=$(perf_top "$WORK/perf-create.data" || true)
fi

# --- report ---------------------------------------------------------------------
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
COMMIT=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git -C "$TOP" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
{
	cat <<EOF
# bench/api: aquiferd against bare libmicrohttpd

Written by \`bench/api/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') at commit $COMMIT$DIRTY.

- Machine: $NPROC CPUs, $CPU; $(uname -sr); $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)
- Build: $BUILD_DESC
- wrk, aquiferd and aq-bare-mhd share the machine's $NPROC CPUs.
- aquiferd: default settings (one MHD epoll thread + 4 workers), SQLite WAL, synchronous=NORMAL with group commit (db/db.c: a commit is answered only after an fsync of the WAL covers it).
- aq-bare-mhd: one MHD epoll thread (\`MHD_USE_EPOLL_INTERNAL_THREAD\`, as aquiferd), answering the
  same $BODY_BYTES-byte body aquiferd returns for the volume.

## Authenticated GET volume ($RUNS runs of ${DURATION}s each, interleaved; medians)

| server | requests/s | p50 ms | p99 ms | runs (requests/s) |
|---|---:|---:|---:|---|
| aquiferd | $AQ_RPS | $AQ_P50 | $AQ_P99 | $AQ_RUNS |
| bare MHD | $BARE_RPS | $BARE_P50 | $BARE_P99 | $BARE_RUNS |

**Ratio aquiferd / bare: $RATIO** (target >= 0.8: $(awk -v r="$RATIO" 'BEGIN { print (r >= 0.8) ? "met" : "NOT met" }')).

## The same GET over HTTPS, keep-alive ($RUNS runs of ${DURATION}s each, interleaved; medians)

A second aquiferd on the same database with \`--tls-cert/--tls-key\` (ECDSA P-256 certificate from its
cluster CA, \`aquiferd ca init\` + \`ca issue\`; it asks clients for a certificate, wrk sends none),
against aq-bare-mhd with the same certificate and trust. Session: ${TLS_DESC:-unknown}.

| server | requests/s | p50 ms | p99 ms | runs (requests/s) |
|---|---:|---:|---:|---|
| aquiferd HTTPS | $AQS_RPS | $AQS_P50 | $AQS_P99 | $AQS_RUNS |
| bare MHD HTTPS | $BARES_RPS | $BARES_P50 | $BARES_P99 | $BARES_RUNS |

**Ratio aquiferd / bare over HTTPS: $RATIO_TLS**; aquiferd HTTPS / aquiferd plain HTTP: $TLS_COST.

## Volume creates on each engine, next to the engine's own commit rate ($RUNS runs of ${DURATION}s interleaved; medians)

Each engine gets a fresh aquiferd (default settings: 4 workers) with one storage node (its
placement ceiling raised with \`--throughput-mibps 10000000\`, so the runs' creates fit; the
shelf's read throughput still bounds placement) and one pool;
$FILL volumes are created first, then each run measures the engine's own single-row commit rate
(\`aq-commit-rate\`: one connection, one row per transaction, for ${DURATION}s; SQLite WAL with
synchronous=FULL, i.e. one fsync per commit, on the same file system as aquiferd's database;
PostgreSQL the same server aquiferd uses, synchronous_commit on) and then volume creates with wrk
at $CREATE_CONNS connections. A create is acknowledged (200) only after its transaction (checks,
volume, operation, placement) is durable: on SQLite by group commit (db/db.c: WAL with
synchronous=NORMAL, one fsync of the WAL shared by every commit written before it), on PostgreSQL
the same way (db/db_pg.c: aquiferd's sessions commit with synchronous_commit off, then one WAL
flush, pg_sync, is shared by every commit written before it); on both, the creates that queue while another write holds the
process's writer mutex share one transaction and its commit (db_group_run, api lane). PostgreSQL: ${PG_DESC:-not run}. "db layer" is aquiferd's db.h
without the API: $LAYER_THREADS threads, each its own connection, committing one volume-sized
document per transaction (db_begin/db_put/db_commit; \`aq-commit-rate --via-db $LAYER_THREADS\`): with
group commit its commits share fsyncs (WAL flushes on PostgreSQL); the single-connection figure is also the ceiling
of aquiferd before group commit (one fsync per commit under the writer mutex).

| engine | creates/s | p50 ms | p99 ms | failed (all runs: HTTP errors, timeouts, operations failed at once) | volumes in pool after | engine commits/s (1 row, 1 connection) | its p50 ms | its p99 ms | creates / engine commits | db layer commits/s ($LAYER_THREADS threads) | its p50 ms |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
$CREATE_ROWS
Per run:
$CREATE_RUNS
First failures, if any:
\`\`\`
$(head -6 "$WORK/create-errors.txt" 2>/dev/null | cut -c1-300)
\`\`\`
The machine is shared (2 CPUs, other engineers' builds and tests run at the same time): the
figures move by 2x between runs; read the per-run values with the medians.

## What limits creates (read with the profile below)

- **Not the fsync on this machine.** The engine's own rate above says what one durable commit
  costs here; a create costs far more. Group commit (SQLite) takes the fsync out of the writer
  mutex and shares it, which lifts the ceiling of one create per fsync on a disk whose fsync
  takes milliseconds; on this VM's disk fsync is short, so it changes little here.
- **What a create does under the process's writer mutex** (db.c): its checks read O(1) rows
  (the pool's and the nodes' usage counters, kept by triggers in every volume and placement
  write's transaction, db/db_usage.c; the share-name index), and it writes the volume, its
  operation and its placement; the statements are prepared once per connection (SQLite and
  PostgreSQL). The reconciler builds a node's intent without the write lock (its volumes in one
  query) and its generation's transaction touches only the node and the placements that wait;
  an agent's status report writes under the lock only the volumes whose report changed them.
  What is left grows with the location outside the lock: each reconciler pass rebuilds and
  pushes the node's whole intent (O(volumes on the node), JSON both ways), and each status
  report (every 2 s) names every volume of the node.
- **PostgreSQL**: a create's own statements take 5 round trips (tests/server/test_srv_volume on
  PostgreSQL: BEGIN and COMMIT shared by a group of creates, its reads in one pipeline, its
  inserts in one), and the writer mutex (db.c) lets one transaction of a process run at a time;
  its COMMIT no longer waits for the WAL flush (synchronous_commit off): one flush after it
  (pg_sync) serves every commit written before, as SQLite's group fsync. The statements the
  reconciler's intent rebuilds and the agents' status reports give PostgreSQL, about a hundred
  per create at this fill, cost far more on 2 loaded CPUs than the create's own.

## Where a create's time goes (perf record --call-graph dwarf -p aquiferd, one extra create run per engine)

Inclusive share of samples (all of aquiferd's threads: the 4 workers running creates, the
reconciler building each node's intent, the handler of the agent's status reports) for aquiferd's
own functions and the engine calls under them.

$(cat "$WORK/profiles.md" 2>/dev/null || echo "(perf not available or PROFILE_CREATES=0)")

## Commands

\`\`\`
DURATION=$DURATION RUNS=$RUNS THREADS=$THREADS CONNS=$CONNS CREATE_CONNS=$CREATE_CONNS bench/api/run.sh
$AQUIFERD --listen 127.0.0.1:$AQ_PORT --db \$TMP/aquifer.db
$AQUIFERD token --db \$TMP/aquifer.db --role admin --ttl 86400
$BARE --listen 127.0.0.1:$BARE_PORT --body \$TMP/volume.json
AQ_TOKEN=... ${WRK_GET[*]} $AQ_URL$GET_PATH
AQ_TOKEN=... ${WRK_GET[*]} $BARE_URL$GET_PATH
$AQUIFERD ca init --db \$TMP/aquifer.db; $AQUIFERD ca issue --db \$TMP/aquifer.db --dns localhost --ip 127.0.0.1
$AQUIFERD --listen 127.0.0.1:$AQS_PORT --db \$TMP/aquifer.db --tls-cert \$TMP/server.crt --tls-key \$TMP/server.key
$BARE --listen 127.0.0.1:$BARES_PORT --body \$TMP/volume.json --tls-cert \$TMP/server.crt --tls-key \$TMP/server.key --tls-trust \$TMP/ca.crt
AQ_TOKEN=... ${WRK_GET[*]} $AQS_URL$GET_PATH
AQ_TOKEN=... ${WRK_GET[*]} $BARES_URL$GET_PATH
FILL=$FILL ENGINES="$ENGINES"; per engine: aquiferd --db \$TMP/creates-ENGINE/aquifer.db (or --db postgresql:///aqbench?host=... --state-dir ...)
$COMMIT_RATE --db \$TMP/creates-sqlite/commit-rate.db --seconds $DURATION
$COMMIT_RATE --db \$TMP/creates-sqlite/commit-layer.db --via-db $LAYER_THREADS --seconds $DURATION
$COMMIT_RATE --db 'postgresql:///aqrate?host=\$TMP/pgsrv/pg&user=aquifer' --seconds $DURATION
AQ_TOKEN=... AQ_PARENT=$PARENT AQ_POOL=pool1 AQ_RUN=<n> ${WRK_CREATE[*]} http://127.0.0.1:PORT/
\`\`\`
EOF
	if [ -n "$PERF_GET" ]; then
		cat <<EOF

## Profile of aquiferd (perf record -g -- aquiferd ..., one extra run each; self time, top symbols)

GET volume:

\`\`\`
$PERF_GET
\`\`\`

Creates:

\`\`\`
$PERF_CREATE
\`\`\`
EOF
	fi
} >"$REPORT"
log "GET aquiferd $AQ_RPS req/s, bare $BARE_RPS req/s, ratio $RATIO"
log "HTTPS GET aquiferd $AQS_RPS req/s, bare $BARES_RPS req/s, ratio $RATIO_TLS (HTTPS/HTTP $TLS_COST)"
log "report: $REPORT"
