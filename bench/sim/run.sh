#!/usr/bin/env bash
# bench/sim/run.sh: aquiferd with many fake agents (bench/sim/fake_agents.py,
# light HTTP clients, not real agents), sharded over SHARDS processes.
# Joins NODES nodes (default 1000), creates VOLUMES volumes (default 1000)
# through the API with CONC keep-alive clients (bench/sim/load.py), and
# measures
#   - join time (every shard's nodes joined),
#   - creates/s and their latency,
#   - time from the last create to all READY, and each create's own time to
#     done (its operation's createTime to endTime: max and p99),
#   - GET volume p99 (paced, 100/s, one connection) on the idle server
#     (nodes joined and reporting, before the creates) and during the creates,
#   - the reconciler's steady-state pass (incremental: dirty nodes only) and
#     its full sweep over every node (--reconcile-sweep-seconds SWEEP),
#   - where the nodes' visits spent their time (mean / max ms of each phase:
#     wait from the doorbell to a pusher, build, generation, push, applied;
#     server/srv_pusher.h),
#   - the process's commits, and the writes (visits, status reports) that
#     shared group transactions (db.h db_group_run) over those transactions.
#   - FAILOVER=1 (issue 22): once all is READY, the node holding the most
#     volumes goes silent (fake_agents.py POST /silence); printed: the time
#     from its silence to all its volumes moved, the nodes wrongly taken for
#     DOWN meanwhile (DOWN nodes but that one), status reports/s over the
#     failover (the other nodes keep reporting), the slowest report's wait
#     for its commit in the live lane, and the full pass the failover made.
#     NODE_DOWN sets --node-down-seconds (default 60).
# SHELVES: the location's shelves (default: enough for VOLUMES' throughput).
# AQ_ARGS adds aquiferd flags (e.g. --push-workers 1: one visit at a time).
# ENGINE=sqlite (default) or postgres (a throwaway server, tests/lib/pg.sh).
# Prints one markdown table row (appended to RESULTS when set). Exit status 0
# only when every volume became READY and the fake nodes hold them all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
top=${AQ_BUILDDIR:-$src}
NODES=${NODES:-1000}
VOLUMES=${VOLUMES:-1000}
CONC=${CONC:-8}
SHARDS=${SHARDS:-4}
ENGINE=${ENGINE:-sqlite}
SWEEP=${SWEEP:-20}
REPORT_SECONDS=${REPORT_SECONDS:-2}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	[ "$ENGINE" = postgres ] && aq_pg_stop
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
if [ "$ENGINE" = postgres ]; then
	. "$src/tests/lib/pg.sh"
	aq_pg_start "$tmp" >/dev/null || { echo "PostgreSQL did not start"; exit 1; }
	DB=$AQ_PG_URL
	dbq() { "$AQ_PG_BIN/psql" -qAt -F ' ' "$DB" -c "$1"; }
	J() { echo "(doc #>> '{$(echo "$1" | tr . ,)}')"; }
	DBARGS=(--db "$DB" --state-dir "$tmp")
else
	DB=$tmp/aq.db
	dbq() { sqlite3 -separator ' ' -cmd '.timeout 10000' "$DB" "$1"; }
	J() { echo "json_extract(doc, '\$.$1')"; }
	DBARGS=(--db "$DB")
fi
AP=$(port)
B=http://127.0.0.1:$AP
"$top/aquiferd" --listen 127.0.0.1:$AP "${DBARGS[@]}" --node-down-seconds "${NODE_DOWN:-60}" --reconcile-sweep-seconds "$SWEEP" \
	--max-connections-per-ip 1024 ${AQ_ARGS:-} >"$tmp/aquiferd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -fs "$B/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
T=$("$top/aquiferd" token "${DBARGS[@]}" --role admin | tail -1)
H="Authorization: Bearer $T"
curl -fs -XPOST -H "$H" "$B/v1/locations?locationId=sim" >/dev/null
curl -fs -XPOST -H "$H" "$B/v1/projects?projectId=sim" >/dev/null
cap=$(( ((VOLUMES + 1) * 100 + 2047) / 1024 * 1024 ))
[ $cap -lt 2048 ] && cap=2048
curl -fs -XPOST -H "$H" "$B/v1/projects/sim/locations/sim/storagePools?storagePoolId=p" \
	-d "{\"network\":\"projects/vpc-host/global/networks/default\",\"serviceLevel\":\"PREMIUM\",\"capacityGib\":\"$cap\"}" >/dev/null
# shelves enough for every volume's throughput (100 GiB PREMIUM: 6.25 MiB/s
# each) with 5% to spare: the location's default shelf takes 133,514 MiB/s
# (the seed's 140 GB/s), i.e. about 21,000 of these volumes; the others are
# added (SHELVES overrides)
SHELVES=${SHELVES:-$(awk -v v="$VOLUMES" 'BEGIN { n = (v + 1) * 6.25 * 1.05 / 133514; print (n == int(n) ? n : int(n) + 1) }')}
for s in $(seq 2 "$SHELVES"); do
	curl -fs -XPOST -H "$H" "$B/v1/shelves?shelfId=sim-shelf-$s" -d '{"location":"sim"}' >/dev/null
done
# a join token joins one node, once: one per fake node
seq "$NODES" | xargs -P 4 -I@ curl -fs -XPOST -H "$H" "$B/v1/locations/sim:joinToken?ttl=3600" -d '{}' |
	jq -r .token >"$tmp/joins"
per=$(( (NODES + SHARDS - 1) / SHARDS ))
fports=()
t0=$(date +%s.%N)
for s in $(seq 0 $((SHARDS - 1))); do
	first=$((s * per)); n=$per
	[ $((first + n)) -gt "$NODES" ] && n=$((NODES - first))
	[ "$n" -le 0 ] && break
	fp=$(port); fports+=("$fp")
	python3 "$here/fake_agents.py" --server "$B" --join-file "$tmp/joins" --location sim --first "$first" \
		--nodes "$n" --port "$fp" --report-seconds "$REPORT_SECONDS" >"$tmp/fake$s.log" 2>&1 &
	pids+=($!)
done
for _ in $(seq 1200); do
	[ "$(cat "$tmp"/fake*.log | grep -c '^joined')" -ge "${#fports[@]}" ] && break
	sleep 0.1
done
[ "$(cat "$tmp"/fake*.log | grep -c '^joined')" -ge "${#fports[@]}" ] || { echo "fake agents did not join"; tail "$tmp"/fake*.log; exit 1; }
t_join=$(echo "$(date +%s.%N) - $t0" | bc)
stats() { for fp in "${fports[@]}"; do curl -fs "http://127.0.0.1:$fp/stats"; done | jq -s "map(.$1) | add"; }

# the probe volume for GETs, and the idle figure
python3 "$here/load.py" create --server "$B" --token "$T" --parent projects/sim/locations/sim --pool p \
	--first 0 --count 1 --conc 1 >/dev/null
sleep 5
idle=$(python3 "$here/load.py" get --server "$B" --token "$T" --name projects/sim/locations/sim/volumes/v0 --seconds 10)
# creates, with GETs alongside
python3 "$here/load.py" get --server "$B" --token "$T" --name projects/sim/locations/sim/volumes/v0 --seconds 100000 \
	--until "$tmp/created" >"$tmp/busy.json" &
gpid=$!
t1=$(date +%s.%N)
cr=$(python3 "$here/load.py" create --server "$B" --token "$T" --parent projects/sim/locations/sim --pool p \
	--first 1 --count "$VOLUMES" --conc "$CONC")
t2=$(date +%s.%N)
touch "$tmp/created"
wait $gpid
busy=$(cat "$tmp/busy.json")
want=$((VOLUMES + 1))
ready=0
for _ in $(seq 6000); do
	ready=$(dbq "SELECT COUNT(*) FROM resources WHERE kind = 'volume' AND $(J state) = 'READY'" 2>/dev/null || echo 0)
	[ "$ready" -ge "$want" ] && break
	sleep 0.2
done
t3=$(date +%s.%N)
# each create's own time to done, from its operation
dbq "SELECT $(J metadata.createTime), $(J metadata.endTime) FROM resources WHERE kind = 'operation'
     AND $(J metadata.verb) = 'create' AND $(J metadata.target) LIKE '%/volumes/v%'" >"$tmp/ops"
opt=$(python3 - "$tmp/ops" <<'PY'
import sys, datetime
def t(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
d = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 2:
        d.append((t(p[1]) - t(p[0])).total_seconds())
d.sort()
print("%.3f %.3f %d" % (d[min(len(d) - 1, int(0.99 * len(d)))], d[-1], len(d)) if d else "0 0 0")
PY
)
# steady state: incremental passes for a while, and one full sweep after the
# creates were all done
sleep $((SWEEP + 3))
passes=()
for _ in 1 2 3 4 5; do
	m=$(curl -fs -H "$H" "$B/metrics")
	passes+=("$(echo "$m" | awk '/^aquifer_reconcile_last_pass_seconds/{print $2}')/$(echo "$m" | awk '/^aquifer_reconcile_last_pass_nodes/{print $2}')")
	sleep 1
done
full=$(echo "$m" | awk '/^aquifer_reconcile_last_full_pass_seconds/{print $2}')
# where a visit's time went (srv_pusher.h): mean / max ms of each phase
phases=$(echo "$m" | awk '
	/^aquifer_reconcile_visit_phase_seconds_sum/ { split($1, a, "\""); sum[a[2]] = $2 }
	/^aquifer_reconcile_visit_phase_seconds_count/ { split($1, a, "\""); cnt[a[2]] = $2 }
	/^aquifer_reconcile_visit_phase_max_seconds/ { split($1, a, "\""); mx[a[2]] = $2 }
	END { n = split("wait build generation push applied", ph, " ")
	      for (i = 1; i <= n; i++) { p = ph[i]
		printf "%s%s %.0f/%.0f", (i > 1 ? ", " : ""), p, (cnt[p] > 0 ? 1000 * sum[p] / cnt[p] : 0), 1000 * mx[p] } }')
# commits in all, and the writes that shared group transactions (db.h
# db_group_run: visits and status reports) over those transactions
commits=$(echo "$m" | awk '
	/^aquifer_db_commits_total/ { c = $2 }
	/^aquifer_db_group_transactions_total/ { t = $2 }
	/^aquifer_db_group_bodies_total/ { b = $2 }
	END { if (t > 0) printf "%d; %d in %d (%.1f a commit)", c, b, t, b / t; else printf "%d; -", c }')
# the failover of one node (FAILOVER=1)
fo="-"
if [ "${FAILOVER:-0}" = 1 ]; then
	big=$(dbq "SELECT $(J node), COUNT(*) FROM resources WHERE kind = 'placement' GROUP BY 1 ORDER BY 2 DESC LIMIT 1")
	bnode=${big%% *}; bvols=${big##* }
	idx=${bnode#nodes/sim}
	fp=${fports[$((idx / per))]}
	r0=$(stats reports)
	down0=$(dbq "SELECT COUNT(*) FROM resources WHERE kind = 'node' AND $(J state) = 'DOWN'")
	t4=$(date +%s.%N)
	curl -fs -XPOST "http://127.0.0.1:$fp/silence/${bnode#nodes/}" >/dev/null
	left=$bvols
	for _ in $(seq 3000); do
		left=$(dbq "SELECT COUNT(*) FROM resources WHERE kind = 'placement' AND parent = '$bnode'")
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	t5=$(date +%s.%N)
	sleep 5 # the passes after it, where a starved report would show
	r1=$(stats reports)
	t6=$(date +%s.%N)
	downs=$(dbq "SELECT COUNT(*) FROM resources WHERE kind = 'node' AND $(J state) = 'DOWN' AND name <> '$bnode'")
	m=$(curl -fs -H "$H" "$B/metrics")
	lw=$(echo "$m" | awk '/^aquifer_db_group_lane_wait_max_seconds\{lane="live"\}/{printf "%.0f", 1000 * $2}')
	fo="$bnode ($bvols volumes, $down0 DOWN before): moved in $(printf %.1f "$(echo "$t5 - $t4" | bc)") s (node-down ${NODE_DOWN:-60} s), $left left; $downs others DOWN; $(printf %.0f "$(echo "($r1 - $r0) / ($t6 - $t4)" | bc -l)") reports/s; live wait max ${lw:--} ms; full pass $(echo "$m" | awk '/^aquifer_reconcile_last_full_pass_seconds/{print $2}') s"
fi
held=$(stats volumes)
rep_err=$(stats report_errors)
reports=$(stats reports)
create_s=$(echo "$t2 - $t1" | bc)
after=$(echo "$t3 - $t2" | bc)
load=$(cut -d' ' -f1-3 /proc/loadavg)
row="| $ENGINE | $NODES | $VOLUMES | $(printf %.1f "$t_join") s | $(echo "$cr" | jq -r '"\(.ok) in \(.seconds) s: \(.rate)/s (p50 \(.p50_ms) ms, p99 \(.p99_ms) ms)"') | $(printf %.1f "$after") s | $(echo "$opt" | awk '{print $1" / "$2}') s | $(echo "$idle" | jq -r .p99_ms) / $(echo "$busy" | jq -r .p99_ms) ms | ${passes[*]} | $full s | $ready ready, $held held | $reports / $rep_err | $phases | $commits | $fo | $load |"
echo "| engine | nodes | volumes | join | creates | last create to all READY | create to done p99 / max | GET p99 idle / during | steady passes (s/nodes visited) | full sweep | volumes | reports / errors | visit phases mean/max ms | db commits; grouped writes in group commits | failover of one node | load 1/5/15 |"
echo "$row"
echo "creates: $cr"
[ -n "${RESULTS:-}" ] && echo "$row" >>"$RESULTS"
[ "$ready" -ge "$want" ] && [ "$held" -ge "$want" ]
