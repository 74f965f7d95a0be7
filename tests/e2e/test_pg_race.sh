#!/usr/bin/env bash
# tests/e2e/test_pg_race.sh: PostgreSQL credentials (a password file or the
# PG environment, never the URL), then two aquiferd replicas on one PostgreSQL
# database race for what only one create may take (issue 22): the last
# MiB/s of a manual-QoS pool, a shareName of the location, and the last
# TiB of the location's shelf capacity (issue 24). Each round
# sends one create to each replica at the same moment; exactly one must be
# created, and the other must get the refusal a single server gives for
# that create (measured first, one create after the other), never a second
# success. The replicas share the database and the state folder's signing
# key. Placement needs a READY node: one joins replica A. Node liveness is
# still each process's own (issue 22's leader item, not done), so replica B
# runs with --node-down-seconds 3600: it takes the node for live since its
# own start, as a restarted server does.
AQ_DB=postgres
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/race_lib.sh"

ROUNDS=${ROUNDS:-8}
D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "replica A starts"; aq_finish; }
A=$AQ_URL A_PID=$AQ_PID
mkdir -p "$AQ_TMP/b"
cp "$D/pg-url" "$D/aquiferd.key" "$AQ_TMP/b/"
AQ_SERVE_ARGS=(--node-down-seconds 3600)
aq_start "$AQ_TMP/b" || { aq_failed "replica B starts"; aq_finish; }
AQ_SERVE_ARGS=()
B=$AQ_URL
AQ_URL=$A
TOK=$(aq_token "$D" admin)
L=east
PL=/v1/projects/acme/locations/$L
aq_req POST "/v1/locations?locationId=$L" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
expect_status 200 "create project (on A)"
AQ_URL=$B aq_req GET "/v1/projects/acme"
expect_status 200 "replica B serves the project A created"
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }

# Credentials come from a password file or the PG environment, never from
# the URL: a role that must give a password (scram), a 0600 password file.
DBNAME=$(sed -e 's|^postgresql:///||' -e 's|?.*||' "$D/pg-url")
"$AQ_PG_BIN/psql" -q -h "$AQ_PG_SOCK" -U aquifer -d postgres -v ON_ERROR_STOP=1 \
	-c "CREATE ROLE aqpw SUPERUSER LOGIN PASSWORD 'pw-$$'" >/dev/null
hba=$AQ_PG_DIR/data/pg_hba.conf
{ echo "local all aqpw scram-sha-256"; cat "$hba"; } >"$hba.new" && cat "$hba.new" >"$hba"
aq_pg_as "$AQ_PG_BIN/pg_ctl" -D "$AQ_PG_DIR/data" reload >/dev/null
PW_URL="postgresql:///$DBNAME?host=$AQ_PG_SOCK&user=aqpw"
(umask 077 && echo "*:*:*:aqpw:pw-$$" >"$AQ_TMP/pgpass")
out=$(PGPASSFILE=/nonexistent "$AQUIFERD" token --db "$PW_URL" --state-dir "$D" --role admin 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q "passfile" <<<"$out" && aq_pass "no password anywhere: refused, pointing at the password file" \
	|| aq_failed "no password anywhere: refused, pointing at the password file" "exit $rc: $out"
out=$(PGPASSFILE=/nonexistent "$AQUIFERD" token --db "$PW_URL&passfile=$AQ_TMP/pgpass" --state-dir "$D" --role admin 2>&1)
[ $? = 0 ] && aq_pass "?passfile=FILE in the URL: connected" || aq_failed "?passfile=FILE in the URL: connected" "$out"
out=$(PGPASSFILE=$AQ_TMP/pgpass "$AQUIFERD" token --db "$PW_URL" --state-dir "$D" --role admin 2>&1)
[ $? = 0 ] && aq_pass "PGPASSFILE: connected" || aq_failed "PGPASSFILE: connected" "$out"
out=$("$AQUIFERD" token --db "postgresql://aqpw:pw-$$@/$DBNAME?host=$AQ_PG_SOCK" --state-dir "$D" --role admin 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q "carries a password" <<<"$out" && ! grep -q "pw-$$" <<<"$out" \
	&& aq_pass "a password in the URL is refused, and not echoed" \
	|| aq_failed "a password in the URL is refused, and not echoed" "exit $rc: $out"
out=$("$AQUIFERD" --db "$(cat "$D/pg-url")" 2>&1)
rc=$?
[ "$rc" = 2 ] && grep -q -- "--state-dir" <<<"$out" && aq_pass "a PostgreSQL --db without --state-dir: exit 2, asks for it" \
	|| aq_failed "a PostgreSQL --db without --state-dir: exit 2, asks for it" "exit $rc: $out"

aq_race_solo

# race KIND ROUND BODY_A BODY_B: both creates at once, one per replica
race() {
	local kind=$1 r=$2 go=$AQ_TMP/go.$1.$2 wins=0 codes=
	for side in A B; do
		(
			while [ ! -e "$go" ]; do sleep 0.01; done
			if [ $side = A ]; then AQ_URL=$A body=$3; else AQ_URL=$B body=$4; fi
			AQ_RECORD=0 aq_req POST "$PL/volumes?volumeId=$kind$r${side,,}" "$body"
			# a refused create: an error body; a create that failed later: an
			# operation with an error (that is no win either)
			echo "$STATUS:$(printf '%s' "$BODY" | jq -r '.error.status // (.error.message | select(.)) // "OK"')" \
				>"$AQ_TMP/res.$kind.$r.$side"
		) &
	done
	sleep 0.2
	touch "$go"
	wait_for_sides "$kind" "$r"
	for side in A B; do
		res=$(cat "$AQ_TMP/res.$kind.$r.$side" 2>/dev/null)
		codes="$codes $side=$res"
		case $res in
		200:OK) wins=$((wins + 1)) ;;
		*) [ "$res" = "$5" ] || { aq_failed "$kind round $r: the loser gets $5" "$side: $res"; }
		esac
	done
	[ "$wins" = 1 ] && aq_pass "$kind round $r: exactly one create of two went through ($codes)" \
		|| aq_failed "$kind round $r: exactly one create of two went through" "$codes"
}
wait_for_sides() {
	for _ in $(seq 600); do
		[ -e "$AQ_TMP/res.$1.$2.A" ] && [ -e "$AQ_TMP/res.$1.$2.B" ] && return 0
		sleep 0.05
	done
}

for r in $(seq "$ROUNDS"); do
	aq_race_pool "p$r"
	race budget "$r" "$(aq_race_vol "p$r" "ba$r" 100)" "$(aq_race_vol "p$r" "bb$r" 100)" "$BUDGET_NO"
	aq_race_pool "q$r"
	race share "$r" "$(aq_race_vol "p$r" "same$r" 1)" "$(aq_race_vol "q$r" "same$r" 1)" "$SHARE_NO"
done
# capacity (issue 24): the location's shelf has room for exactly one more
# 1 TiB volume; each replica asks for it in a pool of its own
for r in $(seq "$ROUNDS"); do
	aq_race_pool "ca$r"
	aq_race_pool "cb$r"
	aq_race_shelf_room 1024
	race capacity "$r" "$(aq_race_vol "ca$r" "capa$r" 1)" "$(aq_race_vol "cb$r" "capb$r" 1)" "429:RESOURCE_EXHAUSTED"
done
aq_race_tally '[ab]' "$(cat "$D/pg-url")"
aq_sanitizer_clean "$D"
aq_sanitizer_clean "$AQ_TMP/b"
aq_finish
