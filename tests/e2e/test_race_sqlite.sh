#!/usr/bin/env bash
# tests/e2e/test_race_sqlite.sh: test_pg_race's races on SQLite, through
# group commit (db.c: many transactions share one fsync of the WAL). Two
# aquiferd processes on one SQLite file (A with 8 workers, B beside it),
# and each round sends RACERS creates at the same moment, half to each:
#   budget: each asks 100 of a MANUAL pool's 128 MiB/s: exactly one wins;
#   share:  each asks the same shareName (in different pools): exactly one;
#   capacity: each asks 1 TiB (each in its own pool) where the location's
#   shelf has 1 TiB free: exactly one, the others RESOURCE_EXHAUSTED.
# Every loser gets the refusal a single server gives for that create
# (measured first, one create after the other), never a second success;
# afterwards both processes list exactly the winners, and aquiferd db check
# finds the usage counters equal to what the volumes add up to.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/race_lib.sh"

ROUNDS=${ROUNDS:-4}
RACERS=${RACERS:-8}
D=$AQ_TMP/srv
AQ_SERVE_ARGS=(--workers 8)
aq_start "$D" || { aq_failed "aquiferd A starts"; aq_finish; }
AQ_SERVE_ARGS=()
A=$AQ_URL
TOK=$(aq_token "$D" admin)
L=east
PL=/v1/projects/acme/locations/$L
aq_req POST "/v1/locations?locationId=$L" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
expect_status 200 "create project"
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }

# B: a second process on the same file (its own group commit), started by
# hand so that it keeps A's database; it takes the node for live
B_PORT=$(aq_pick_port) || { aq_failed "pick a port for B"; aq_finish; }
B=http://127.0.0.1:$B_PORT
"$AQUIFERD" --listen "127.0.0.1:$B_PORT" --db "$D/aq.db" --node-down-seconds 3600 >>"$AQ_TMP/b.log" 2>&1 &
AQ_PIDS+=("$!")
for _ in $(seq 300); do curl -s -o /dev/null --max-time 2 "$B/healthz" && break; sleep 0.1; done
AQ_URL=$B aq_req GET "/v1/projects/acme"
expect_status 200 "B serves the project A created"

aq_race_solo

# race KIND ROUND LOSER_ANSWER: RACERS creates at once (body from racer_body)
race() {
	local kind=$1 r=$2 go=$AQ_TMP/go.$1.$2 wins=0 codes= i res pids=()
	for i in $(seq "$RACERS"); do
		(
			while [ ! -e "$go" ]; do sleep 0.01; done
			if [ $((i % 2)) = 0 ]; then AQ_URL=$A; else AQ_URL=$B; fi
			AQ_RECORD=0 aq_req POST "$PL/volumes?volumeId=$kind$r-$i" "$(racer_body "$kind" "$r" "$i")"
			echo "$STATUS:$(printf '%s' "$BODY" | jq -r '.error.status // (.error.message | select(.)) // "OK"')" \
				>"$AQ_TMP/res.$kind.$r.$i.tmp"
			mv "$AQ_TMP/res.$kind.$r.$i.tmp" "$AQ_TMP/res.$kind.$r.$i"
		) &
		pids+=("$!")
	done
	sleep 0.3
	touch "$go"
	wait "${pids[@]}" # the racers only: the servers are children too
	for i in $(seq "$RACERS"); do
		res=$(cat "$AQ_TMP/res.$kind.$r.$i" 2>/dev/null)
		codes="$codes $i=$res"
		case $res in
		200:OK) wins=$((wins + 1)) ;;
		*) [ "$res" = "$3" ] || aq_failed "$kind round $r: every loser gets $3" "racer $i: $res" ;;
		esac
	done
	[ "$wins" = 1 ] && aq_pass "$kind round $r: exactly one create of $RACERS went through" \
		|| aq_failed "$kind round $r: exactly one create of $RACERS went through" "$codes"
}
racer_body() { # KIND ROUND I
	if [ "$1" = capacity ]; then
		aq_race_vol "c$2-$3" "cap$2-$3" 1
	elif [ "$1" = budget ]; then
		aq_race_vol "p$2" "b$2-$3" 100
	else
		aq_race_vol "q$2-$3" "same$2" 1
	fi
}

for r in $(seq "$ROUNDS"); do
	aq_race_pool "p$r"
	race budget "$r" "$BUDGET_NO"
	for i in $(seq "$RACERS"); do AQ_RECORD=0 aq_req POST "$PL/storagePools?storagePoolId=q$r-$i" \
		'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048","qosType":"MANUAL"}'; done
	race share "$r" "$SHARE_NO"
done
# capacity: the location's shelf has room for exactly one more 1 TiB
# volume; each racer asks for it in a pool of its own (issue 24)
for r in $(seq "$ROUNDS"); do
	for i in $(seq "$RACERS"); do aq_race_pool "c$r-$i" >/dev/null; done
	aq_race_shelf_room 1024
	race capacity "$r" "429:RESOURCE_EXHAUSTED"
done
aq_race_tally '-[0-9]+' "$D/aq.db"
aq_sanitizer_clean "$D"
aq_finish
