#!/usr/bin/env bash
# test_reconcile_dirty.sh: the reconciler's passes are incremental (issue 22):
# it rebuilds only the nodes a committed write marked dirty (db.h, dirty
# marks kept by triggers in the write's transaction), with a slow sweep over
# every node as the safety net. Two fake nodes (bench/sim/fake_agents.py,
# light HTTP clients, not real agents) hold a volume each.
#   1. a volume changed on node A through the API: A's generation moves, B's
#      does not and B's intent is not even built again (debug log);
#   2. the same change written straight into the database, as another
#      replica would (no doorbell rung in this process): the trigger's mark
#      alone gets A rebuilt and pushed within a few seconds;
#   2b. a change of a pool (not a volume: no trigger sees it) rebuilds the
#      node of that pool's volume only (srv_mark.h), not the other node;
#   2c. scheduled snapshots of a volume on node A (the scheduler, not a
#      handler) rebuild node A only, not B (they mark A; before, they rang
#      for every node);
#   3. a change whose mark is lost (deleted in the same transaction): with
#      the sweep 600 s away nothing notices it;
#   4. restarted with --reconcile-sweep-seconds 3: a change with a lost mark
#      is repaired by the sweep.
# SQLite only (it writes the database behind aquiferd's back with sqlite3).
. "$(dirname "$0")/lib.sh"

[ "$AQ_DB" = sqlite ] || { echo "SKIP: writes SQLite directly"; exit 77; }
for tool in python3 sqlite3; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
done

D=$AQ_TMP/srv
P=/v1/projects/sim/locations/sim
# nothing else may visit every node during the checks: no failover (nodes
# DOWN after 60 s of silence) and no lost lease on a loaded machine (30 s)
STEADY=(--node-down-seconds 60 --leader-lease-seconds 30)
# a scheduled "hour" every 2 s (2c)
printf 'snapshot-schedule-period = 2\n' >"$AQ_TMP/aq.conf"
AQ_SERVE_ARGS=(--reconcile-sweep-seconds 600 --log-level debug --config "$AQ_TMP/aq.conf" "${STEADY[@]}")
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=sim" '{}'
aq_req POST "/v1/projects?projectId=sim" '{}'
aq_req POST "$P/storagePools?storagePoolId=p" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
expect_status 200 "pool created"
for _ in 1 2; do aq_join_token sim; done >"$AQ_TMP/joins"
FP=$(aq_pick_port)
python3 "$AQ_SRC/bench/sim/fake_agents.py" --server "$AQ_URL" --join-file "$AQ_TMP/joins" --location sim \
	--nodes 2 --port "$FP" --report-seconds 1 >"$AQ_TMP/fake.log" 2>&1 &
AQ_PIDS+=($!)
for _ in $(seq 100); do grep -q joined "$AQ_TMP/fake.log" && break; sleep 0.1; done
grep -q joined "$AQ_TMP/fake.log" || { aq_failed "fake nodes joined" "$(cat "$AQ_TMP/fake.log")"; aq_finish; }

# the pass after a node's visit clears the mark the visit saw (srv_pusher.h)
no_marks() { test "$(sql "SELECT COUNT(*) FROM dirty")" = 0; }
# check DESC CMD...: CMD succeeds
check() { local d=$1; shift; if "$@"; then aq_pass "$d"; else aq_failed "$d"; fi; }
sql() { sqlite3 -cmd '.timeout 10000' "$D/aq.db" "$1"; }
gen() { sql "SELECT json_extract(doc, '\$.generation') FROM resources WHERE name = 'nodes/$1'"; }
node_of() { sql "SELECT parent FROM resources WHERE name = 'placements/projects/sim/locations/sim/volumes/$1'"; }
builds() { grep -c "node nodes/$1: intent built" "$D/aquiferd.log"; }
cap() { sql "SELECT json_extract(doc, '\$.capacityGib') FROM resources WHERE name = 'projects/sim/locations/sim/volumes/$1'"; }
# gen_moves NODE FROM SECONDS: NODE's generation goes past FROM within SECONDS
gen_moves() {
	for _ in $(seq $(($3 * 10))); do
		[ "$(gen "$1")" -gt "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# a volume on each node: placement spreads them
VA= VB=
for i in 1 2 3 4 5 6; do
	aq_mutate POST "$P/volumes?volumeId=v$i" \
		"{\"storagePool\":\"p\",\"capacityGib\":\"100\",\"protocols\":[\"NFSV3\"],\"shareName\":\"v$i\"}"
	expect_jq '.done and (.error == null)' true "create v$i done"
	case $(node_of "v$i") in
	nodes/sim0) VA=${VA:-v$i} ;;
	nodes/sim1) VB=${VB:-v$i} ;;
	esac
	[ -n "$VA" ] && [ -n "$VB" ] && break
done
check "a volume on each fake node (sim0: $VA, sim1: $VB)" test -n "$VA" -a -n "$VB"
sleep 3 # the first passes settle

# --- 1. a change through the API rebuilds its node only ---------------------
ga=$(gen sim0) gb=$(gen sim1) bb=$(builds sim1) ba=$(builds sim0)
aq_mutate PATCH "$P/volumes/$VA?updateMask=capacityGib" '{"capacityGib":"200"}'
expect_jq '.done and (.error == null)' true "resize of $VA done"
sleep 2
check "node A's generation moved ($ga -> $(gen sim0))" test "$(gen sim0)" -gt "$ga"
check "node A's intent was built again ($ba -> $(builds sim0))" test "$(builds sim0)" -gt "$ba"
expect_eq "node B's generation did not move" "$gb" "$(gen sim1)"
expect_eq "node B's intent was not built again" "$bb" "$(builds sim1)"

# --- 2. a write by another process: the mark alone gets it pushed -----------
ga=$(gen sim0)
sql "UPDATE resources SET doc = json_set(doc, '\$.capacityGib', '300') WHERE name = 'projects/sim/locations/sim/volumes/$VA'"
check "a write behind aquiferd's back reaches node A by its mark ($ga -> $(gen sim0) or more)" gen_moves sim0 "$ga" 8
expect_eq "node B's intent still not built again" "$bb" "$(builds sim1)"
check "no mark left once the pass after the visit is done" aq_wait_until 5 no_marks

# --- 2b. a pool change rebuilds the nodes of that pool's volumes only -------
aq_req POST "$P/storagePools?storagePoolId=p2" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "a second pool p2"
aq_mutate POST "$P/volumes?volumeId=w1" '{"storagePool":"p2","capacityGib":"100","protocols":["NFSV3"],"shareName":"w1"}'
expect_jq '.done and (.error == null)' true "create w1 in p2 done"
NW=$(node_of w1)
NW=${NW#nodes/}
NO=sim1
[ "$NW" = sim1 ] && NO=sim0
sleep 2
gw=$(gen "$NW") go=$(gen "$NO") bw=$(builds "$NW") bo=$(builds "$NO")
aq_mutate PATCH "$P/storagePools/p2?updateMask=description" '{"description":"changed"}'
expect_status 200 "p2's description changed"
sleep 2
check "p2's node $NW was rebuilt ($bw -> $(builds "$NW"))" test "$(builds "$NW")" -gt "$bw"
expect_eq "the other node $NO was not rebuilt for p2's change" "$bo" "$(builds "$NO")"
expect_eq "the other node $NO's generation did not move" "$go" "$(gen "$NO")"
check "no mark left once the pass after the visit is done" aq_wait_until 5 no_marks

# --- 2c. scheduled snapshots rebuild their volume's node only ----------------
aq_mutate PATCH "$P/volumes/$VA?updateMask=snapshotPolicy" \
	'{"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":2,"minute":0}}}'
expect_jq '.done and (.error == null)' true "an hourly snapshot policy on $VA"
sleep 1
ba=$(builds sim0) bb=$(builds sim1)
snaps() { sql "SELECT COUNT(*) FROM resources WHERE kind = 'snapshot' AND name LIKE 'projects/sim/locations/sim/volumes/$VA/snapshots/hourly-%'"; }
has_snaps() { test "$(snaps)" -ge 1; }
check "the scheduler made snapshots of $VA" aq_wait_until 20 has_snaps
sleep 5 # two more "hours": snapshots made and trimmed
check "node A was rebuilt for its scheduled snapshots ($ba -> $(builds sim0))" test "$(builds sim0)" -gt "$ba"
expect_eq "node B was not rebuilt for A's scheduled snapshots" "$bb" "$(builds sim1)"
aq_mutate PATCH "$P/volumes/$VA?updateMask=snapshotPolicy" '{"snapshotPolicy":{"enabled":false}}'
expect_jq '.done and (.error == null)' true "the policy off again"

# --- 3. a lost mark goes unnoticed while the sweep is far away --------------
sleep 2
ga=$(gen sim0)
sql "BEGIN; UPDATE resources SET doc = json_set(doc, '\$.capacityGib', '400') WHERE name = 'projects/sim/locations/sim/volumes/$VA'; DELETE FROM dirty; COMMIT;"
sleep 4
expect_eq "a change without its mark waits for the sweep (600 s away)" "$ga" "$(gen sim0)"

# --- 4. the sweep repairs a lost mark ----------------------------------------
aq_stop "$AQ_PID"
AQ_SERVE_ARGS=(--reconcile-sweep-seconds 3 --log-level debug "${STEADY[@]}")
aq_start "$D" "$AQ_PORT" || exit 1
sleep 5 # the new leader's first full pass, the one that follows
ga=$(gen sim0)
sql "BEGIN; UPDATE resources SET doc = json_set(doc, '\$.capacityGib', '500') WHERE name = 'projects/sim/locations/sim/volumes/$VA'; DELETE FROM dirty; COMMIT;"
check "the sweep pushes a change whose mark was lost ($ga -> $(gen sim0) or more)" gen_moves sim0 "$ga" 8
expect_eq "the change stands" 500 "$(cap "$VA")"
# what the fake node holds is what it was pushed: its volumes
held=$(curl -s "http://127.0.0.1:$FP/stats" | jq .volumes)
check "the fake nodes hold their volumes ($held)" test "$held" -ge 2
aq_sanitizer_clean "$D"
aq_finish
