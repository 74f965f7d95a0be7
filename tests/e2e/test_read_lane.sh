#!/usr/bin/env bash
# tests/e2e/test_read_lane.sh: GETs have their own workers (--read-workers,
# server/srv_http.h), so they never queue behind writes that wait for the
# database (issue 22: on PostgreSQL, GET p99 went from 24 ms to 1.45 s
# during a create storm, queued behind creates and status reports).
# Another process holds SQLite's write lock for a few seconds while six
# project creates arrive: every write worker (--workers 2) waits for it.
#  - default (2 read workers): a pool list and a pool GET answer within
#    2 s meanwhile, and every create then completes once the lock is gone;
#  - --read-workers 0 (GETs share the write workers, as before): the same
#    list waits for the lock (no answer within 2 s): the flag has its effect;
#  - --read-workers 300 is refused by name.
. "$(dirname "$0")/lib.sh"

P=/v1/projects/acme/locations/east
D=$AQ_TMP/srv
HOLD=6

# storm: hold the write lock HOLD s, send 6 creates (named PREFIX1..6)
# meanwhile, then time a pool list and a pool GET (each at most 2 s)
storm() {
	local prefix=$1 i
	(echo ".timeout 5000"; echo "BEGIN IMMEDIATE;"; sleep "$HOLD"; echo "ROLLBACK;") |
		sqlite3 "$D/aq.db" &
	LOCKPID=$!
	sleep 0.5 # the lock is taken
	CREATES=()
	for i in 1 2 3 4 5 6; do
		curl -s -o "$AQ_TMP/c-$prefix$i" -w '%{http_code}' --max-time 60 -XPOST -H "Authorization: Bearer $TOK" \
			"$AQ_URL/v1/projects?projectId=$prefix$i" -d '{}' >"$AQ_TMP/s-$prefix$i" &
		CREATES+=($!)
	done
	sleep 0.5 # the creates hold every write worker
	LIST=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Authorization: Bearer $TOK" "$AQ_URL$P/storagePools") || LIST=timeout
	GET=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Authorization: Bearer $TOK" "$AQ_URL$P/storagePools/pool") || GET=timeout
	LOCKED=no
	kill -0 "$LOCKPID" 2>/dev/null && LOCKED=yes
	wait "$LOCKPID"
	for i in "${CREATES[@]}"; do wait "$i"; done
}

AQ_SERVE_ARGS=(--workers 2)
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "create a pool"

storm a
expect_eq "the write lock was still held when the GETs were answered" yes "$LOCKED"
expect_eq "a pool list answers within 2 s while every write worker waits for the lock" 200 "$LIST"
expect_eq "a pool GET answers within 2 s meanwhile" 200 "$GET"
done_ok=0
for i in 1 2 3 4 5 6; do [ "$(cat "$AQ_TMP/s-a$i")" = 200 ] && done_ok=$((done_ok + 1)); done
expect_eq "all 6 creates sent during the lock completed after it" 6 "$done_ok"
aq_req GET "/v1/projects?pageSize=100"
expect_eq "the 6 projects are there" 6 "$(printf '%s' "$BODY" | jq '[.projects[] | select(.name | test("^projects/a[0-9]$"))] | length')"

# GETs in the write lane (--read-workers 0): the list queues behind the writes
kill -TERM "$AQ_PID"; wait "$AQ_PID" 2>/dev/null
AQ_SERVE_ARGS=(--workers 2 --read-workers 0)
aq_start "$D" || { aq_failed "aquiferd restarts with --read-workers 0"; aq_finish; }
ok "its log says 0 read workers" grep -q '2 workers, 0 read workers' "$D/aquiferd.log"
storm b
expect_eq "with --read-workers 0 the write lock was still held when the GETs gave up" yes "$LOCKED"
expect_eq "with --read-workers 0 the pool list waits behind the writes (no answer within 2 s)" timeout "$LIST"
done_ok=0
for i in 1 2 3 4 5 6; do [ "$(cat "$AQ_TMP/s-b$i")" = 200 ] && done_ok=$((done_ok + 1)); done
expect_eq "all 6 creates completed after the lock" 6 "$done_ok"
aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"

out=$("$AQUIFERD" --listen 127.0.0.1:1 --db "$D/aq.db" --read-workers 300 2>&1)
expect_contains "--read-workers 300 is refused by name" "read-workers must be an integer within 0..256" "$out"
aq_finish
