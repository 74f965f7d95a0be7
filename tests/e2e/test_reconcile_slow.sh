#!/usr/bin/env bash
# test_reconcile_slow.sh: the reconciler pushes to several nodes at once
# (server/srv_pusher.h, issue 22): a slow node never holds up another
# node's READY. Three stuck fake nodes (bench/sim/fake_agents.py
# --push-delay 3: each push takes 3 s to answer and is never applied, so
# they stay behind and are pushed to again every pass) and one healthy node
# that placement picks (the stuck ones have a ceiling of 1 MiB/s).
#   1. creates on the healthy node are done (READY) within 5 s each; one
#      pusher visiting nodes one after another would make each wait for
#      the three stuck pushes first (9 s or more);
#   2. the stuck nodes are still pushed to (their answers are awaited, in
#      their own pushers), and the healthy node holds what it was pushed;
#   3. /metrics shows each phase of the visits (wait, build, generation,
#      push, applied);
#   4. --push-workers outside 1..64 is refused by name.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

D=$AQ_TMP/srv
P=/v1/projects/sim/locations/sim
# no failover (nodes DOWN after 60 s of silence) and no lost lease on a
# loaded machine: nothing else visits every node during the checks
AQ_SERVE_ARGS=(--reconcile-sweep-seconds 600 --node-down-seconds 60 --leader-lease-seconds 30)
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=sim" '{}'
aq_req POST "/v1/projects?projectId=sim" '{}'
aq_req POST "$P/storagePools?storagePoolId=p" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
expect_status 200 "pool created"
for _ in 1 2 3 4; do aq_join_token sim; done >"$AQ_TMP/joins"
SP=$(aq_pick_port)
python3 "$AQ_SRC/bench/sim/fake_agents.py" --server "$AQ_URL" --join-file "$AQ_TMP/joins" --location sim \
	--first 0 --nodes 3 --ceiling 1 --push-delay 3 --port "$SP" --report-seconds 1 >"$AQ_TMP/slow.log" 2>&1 &
AQ_PIDS+=($!)
FP=$(aq_pick_port)
python3 "$AQ_SRC/bench/sim/fake_agents.py" --server "$AQ_URL" --join-file "$AQ_TMP/joins" --location sim \
	--first 3 --nodes 1 --port "$FP" --report-seconds 1 >"$AQ_TMP/fast.log" 2>&1 &
AQ_PIDS+=($!)
for _ in $(seq 200); do grep -q joined "$AQ_TMP/slow.log" && grep -q joined "$AQ_TMP/fast.log" && break; sleep 0.1; done
grep -q joined "$AQ_TMP/slow.log" && grep -q joined "$AQ_TMP/fast.log" ||
	{ aq_failed "fake nodes joined" "$(cat "$AQ_TMP"/*.log)"; aq_finish; }

stat() { curl -s "http://127.0.0.1:$1/stats" | jq -r ".$2"; }
# at_least PORT FIELD N: the fake process's FIELD is N or more
at_least() { test "$(stat "$1" "$2")" -ge "$3"; }
# the stuck nodes took their first push and did not apply it
aq_wait_until 30 at_least "$SP" pushes 3
expect_eq "the stuck nodes applied nothing" '{"sim0":0,"sim1":0,"sim2":0}' "$(stat "$SP" generations | jq -c .)"

# --- 1. creates on the healthy node do not wait for the stuck ones ----------
worst=0
for i in 1 2 3; do
	t0=$(date +%s%N)
	aq_req POST "$P/volumes?volumeId=v$i" \
		"{\"storagePool\":\"p\",\"capacityGib\":\"100\",\"protocols\":[\"NFSV3\"],\"shareName\":\"v$i\"}"
	expect_status 200 "create v$i accepted"
	op=$(printf '%s' "$BODY" | jq -r .name)
	aq_op_wait "$op" 60
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$worst" ] && worst=$ms
	aq_req GET "$P/volumes/v$i"
	expect_jq .state READY "v$i READY"
done
check() { local d=$1; shift; if "$@"; then aq_pass "$d"; else aq_failed "$d"; fi; }
check "every create READY within 5 s while three nodes take 3 s a push (worst ${worst} ms)" test "$worst" -lt 5000

# --- 2. the stuck nodes are still pushed to; the healthy node holds its volumes
p0=$(stat "$SP" pushes)
check "the stuck nodes are pushed to again (pushes $p0 -> more)" aq_wait_until 20 at_least "$SP" pushes $((p0 + 1))
check "the healthy node holds the three volumes" aq_wait_until 10 at_least "$FP" volumes 3
aq_req GET "$P/volumes/v1"
expect_jq '.mountOptions | length' 1 "v1 has its mount options"

# --- 3. the phases of a visit in /metrics ------------------------------------
aq_req GET /metrics
for ph in wait build generation push applied; do
	n=$(printf '%s\n' "$BODY" | awk -v p="aquifer_reconcile_visit_phase_seconds_count{phase=\"$ph\"}" '$1 == p {print $2}')
	check "metrics: visits that reached phase $ph ($n)" test "${n:-0}" -gt 0
done
n=$(printf '%s\n' "$BODY" | awk '$1 == "aquifer_reconcile_pushes_total" {print $2}')
check "metrics: pushes counted ($n)" test "${n:-0}" -ge 4

# --- 4. the flag's bounds ----------------------------------------------------
for bad in 0 65 x; do
	out=$("$AQUIFERD" --push-workers "$bad" --db "$AQ_TMP/none.db" --listen 127.0.0.1:1 2>&1)
	rc=$?
	check "--push-workers $bad refused (exit $rc): $out" test "$rc" = 2 -a -n "$(printf '%s' "$out" | grep -F -- '--push-workers')"
done
aq_sanitizer_clean "$D"
aq_finish
