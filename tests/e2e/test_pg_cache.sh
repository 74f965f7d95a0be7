#!/usr/bin/env bash
# tests/e2e/test_pg_cache.sh: two aquiferd replicas on one PostgreSQL keep
# their document caches valid with LISTEN/NOTIFY (issue 22; db/db_watch.c):
#  - five times: a project deleted through replica A, then made again with
#    another displayName, is what replica B answers to the very next GET
#    (404, then the new displayName), though B had cached it (a project GET
#    is served from the document cache on the socket thread);
#  - B serves from memory: a change written into the database behind every
#    replica's back (triggers off, so no notification) is not seen by B
#    while its listener is up;
#  - B's listener connection killed (pg_terminate_backend): B drops its
#    whole cache at once, so its next GET answers what the database holds
#    (the change it never heard of), its log says so, it listens again
#    within 5 s, and from then on both hold again: A's writes read on B at
#    once, and B serves from memory.
AQ_DB=postgres
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "replica A starts"; aq_finish; }
A=$AQ_URL APID=$AQ_PID
mkdir -p "$AQ_TMP/b"
cp "$D/pg-url" "$D/aquiferd.key" "$AQ_TMP/b/"
aq_start "$AQ_TMP/b" || { aq_failed "replica B starts"; aq_finish; }
B=$AQ_URL BPID=$AQ_PID
TOK=$(aq_token "$D" admin)
PGURL=$(cat "$D/pg-url")
sql() { "$AQ_PG_BIN/psql" -qAt -v ON_ERROR_STOP=1 "$PGURL" -c "$1"; }
PROJ=projects/cp

# b_listeners: B's listener sessions (application_name aquiferd-watch-PID)
b_listeners() { sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'aquiferd-watch-$BPID'"; }
wait_listening() {
	for _ in $(seq 50); do [ "$(b_listeners)" = 1 ] && return 0; sleep 0.1; done
	return 1
}
# name URL: project cp's displayName as that replica answers it ("404": none)
name() {
	AQ_URL=$1 aq_req GET /v1/projects/cp
	if [ "$STATUS" = 404 ]; then echo 404; else printf '%s' "$BODY" | jq -r '.displayName // empty'; fi
}
# remake TEXT: on A, delete project cp (if any) and make it again named TEXT
remake() {
	AQ_URL=$A aq_mutate DELETE /v1/projects/cp
	AQ_URL=$A aq_mutate POST "/v1/projects?projectId=cp" "{\"displayName\":\"$1\"}"
	[ "$STATUS" = 200 ] || aq_failed "make project cp ($1) on A"
}
# behind_back TEXT: cp's displayName set in the database with every
# trigger off (session_replication_role replica): no replica is notified
behind_back() {
	sql "SET session_replication_role = replica; UPDATE resources SET doc = jsonb_set(doc::jsonb, '{displayName}', to_jsonb('$1'::text))::json WHERE name = '$PROJ'"
}

ok "B listens for invalidations" wait_listening
AQ_URL=$A aq_req POST "/v1/projects?projectId=cp" '{"displayName":"d0"}'
expect_status 200 "make project cp on A"
expect_eq "B reads the project A made" d0 "$(name "$B")"

stale=0
for i in $(seq 1 5); do
	name "$B" >/dev/null # B caches the current text
	AQ_URL=$A aq_mutate DELETE /v1/projects/cp
	got=$(name "$B")
	[ "$got" = 404 ] || { stale=$((stale + 1)); echo "# B answered '$got' right after A deleted cp"; }
	AQ_URL=$A aq_mutate POST "/v1/projects?projectId=cp" "{\"displayName\":\"d$i\"}"
	got=$(name "$B")
	[ "$got" = "d$i" ] || { stale=$((stale + 1)); echo "# B answered '$got' right after A made cp d$i"; }
done
expect_eq "each of 10 changes made on A is what B answers next" 0 "$stale"

# the cache is on: B answers from memory what it cached, not the database
name "$B" >/dev/null
expect_eq "B cached d5" d5 "$(name "$B")"
behind_back sneaky1
expect_eq "the database holds sneaky1 (written without notifications)" sneaky1 \
	"$(sql "SELECT doc::jsonb->>'displayName' FROM resources WHERE name = '$PROJ'")"
expect_eq "B serves d5 from memory: its cache is on" d5 "$(name "$B")"

# B's listener killed: its cache goes at once
expect_eq "B's listener session terminated" t \
	"$(sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'aquiferd-watch-$BPID'")"
expect_eq "B's next GET after its listener died answers the database (sneaky1), not its cache" sneaky1 "$(name "$B")"
ok "B listens again within 5 s" wait_listening
ok "B said it lost its listener and dropped the cache" grep -q 'lost the cache invalidation listener, cache dropped' "$AQ_TMP/b/aquiferd.log"

# and it works as before
for i in 6 7; do
	name "$B" >/dev/null
	remake "d$i"
	expect_eq "after B listens again: cp remade on A as d$i is read on B at once" "d$i" "$(name "$B")"
done
name "$B" >/dev/null
behind_back sneaky2
expect_eq "after B listens again, its cache is on again (d7 from memory)" d7 "$(name "$B")"
AQ_URL=$A aq_mutate DELETE /v1/projects/cp
expect_eq "cp deleted on A: B answers 404 at once" 404 "$(name "$B")"
expect_eq "and A too" 404 "$(name "$A")"
# a clean stop (the listener joined, the cache freed): no sanitizer report
aq_stop "$BPID"
aq_stop "$APID"
aq_sanitizer_clean "$AQ_TMP/b"
aq_sanitizer_clean "$D"
aq_finish
