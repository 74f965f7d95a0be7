#!/usr/bin/env bash
# tests/e2e/test_pg_leader.sh: three aquiferd replicas on one PostgreSQL
# database, exactly one leader (issue 22; server/srv_lead.h):
#  - /healthz of every replica names the same epoch and leader URL, and
#    exactly one says leader (and aquifer_leader 1 in its /metrics);
#  - the storage node reports to a follower, and stays READY past
#    --node-down-seconds, also with reports that change nothing: the leader
#    judges liveness by what the follower makes durable;
#  - a snapshot policy on the scheduler's test clock (an hour lasts 2 s)
#    makes one snapshot per slot, each made by the leader (its log says
#    "scheduled snapshot ID made"; no other replica's does);
#  - kill -9 of the leader: one of the two others leads within 10 s at a
#    higher epoch, a volume created through a survivor meanwhile becomes
#    READY (the new leader reconciled and pushed it to the agent), the
#    node stays READY, the schedule goes on, made by the new leader only;
#  - the new leader frozen (SIGSTOP) past its lease: the last replica takes
#    over; thawed, the stale leader says at once it does not lead and makes
#    no snapshot more.
# The replicas share the database and the state folder's key. Lease 6 s,
# renewed every 2 s (the defaults).
AQ_DB=postgres
. "$(dirname "$0")/lib.sh"

PERIOD=2
printf 'snapshot-schedule-period = %s\n' "$PERIOD" >"$AQ_TMP/aq.conf"
AQ_SERVE_ARGS=(--config "$AQ_TMP/aq.conf")
D=$AQ_TMP/srv
declare -a URL PID DIR
aq_start "$D" || { aq_failed "replica 0 starts"; aq_finish; }
URL[0]=$AQ_URL PID[0]=$AQ_PID DIR[0]=$D
for i in 1 2; do
	mkdir -p "$AQ_TMP/r$i"
	cp "$D/pg-url" "$D/aquiferd.key" "$AQ_TMP/r$i/"
	aq_start "$AQ_TMP/r$i" || { aq_failed "replica $i starts"; aq_finish; }
	URL[$i]=$AQ_URL PID[$i]=$AQ_PID DIR[$i]=$AQ_TMP/r$i
done
TOK=$(aq_token "$D" admin)

# health I: /healthz of replica I (leader, leaderEpoch, leaderUrl)
health() { curl -s --max-time 2 "${AQ_CURL_OPTS[@]}" "${URL[$1]}/healthz"; }
# leaders I...: the replicas among I... that say they lead
leaders() {
	local i
	for i in "$@"; do
		[ "$(health "$i" | jq -r .leader)" = true ] && echo "$i"
	done
}
# wait_leader SECONDS I...: until exactly one of I... leads; LEAD is it
wait_leader() {
	local end=$(($(date +%s%N) / 1000000 + $1 * 1000)) l
	while [ $(($(date +%s%N) / 1000000)) -lt $end ]; do
		mapfile -t l < <(leaders "${@:2}")
		if [ ${#l[@]} = 1 ]; then LEAD=${l[0]}; return 0; fi
		sleep 0.1
	done
	return 1
}

ok "one of the three leads within 10 s" wait_leader 10 0 1 2
sleep 3 # a few renewals: still exactly one
mapfile -t l < <(leaders 0 1 2)
expect_eq "exactly one replica says leader after some renewals" 1 "${#l[@]}"
LEAD=${l[0]:-0}
EPOCH=$(health "$LEAD" | jq -r .leaderEpoch)
for i in 0 1 2; do
	h=$(health "$i")
	expect_eq "replica $i: leaderEpoch $EPOCH, leaderUrl the leader's" "$EPOCH ${URL[$LEAD]}" \
		"$(jq -r '"\(.leaderEpoch) \(.leaderUrl)"' <<<"$h")"
	AQ_URL=${URL[$i]} aq_req GET /metrics
	want=0
	[ "$i" = "$LEAD" ] && want=1
	expect_eq "replica $i: aquifer_leader $want" "$want" "$(printf '%s' "$BODY" | awk '$1 == "aquifer_leader" { print $2 }')"
done

# the node joins a follower and reports to it
F=$(((LEAD + 1) % 3))
OTHER=$(((LEAD + 2) % 3))
AQ_URL=${URL[$F]}
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
P=/v1/projects/acme/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
expect_status 200 "create a pool (on follower $F)"
# the agent is given every replica's URL (follower F first: it reports there)
AQ_AGENT_SERVER="${URL[$F]},${URL[$LEAD]},${URL[$OTHER]}" aq_agent_for east || { aq_failed "a node joins follower $F"; aq_finish; }
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1",
	"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"minute":0}}}'
expect_true '.done and (has("error") | not)' "a volume with an hourly policy, created on follower $F, is READY"

# made_by I: the snapshot IDs replica I's log says it made
made_by() { grep -o 'scheduled snapshot [a-z0-9-]* made' "${DIR[$1]}/aquiferd.log" | awk '{ print $3 }' | sort; }
# the schedule runs for 6 slots; meanwhile the node outlives node-down-seconds (10)
sleep $((PERIOD * 6 + 1))
aq_req GET /v1/nodes/node-east
expect_jq .state READY "the node reporting to follower $F is still READY after 13 s (the leader reads its liveness)"
mapfile -t seen < <(aq_req GET "$P/volumes/v1/snapshots?pageSize=1000"; printf '%s' "$BODY" | jq -r '.snapshots[]? | select(.state != "DELETING") | .name | split("/") | last')
mapfile -t by_lead < <(made_by "$LEAD")
others=$( (made_by "$F"; made_by "$OTHER") | wc -l)
ok "the leader made scheduled snapshots (${#by_lead[@]}: ${by_lead[*]})" test "${#by_lead[@]}" -ge 3
expect_eq "no follower made one" 0 "$others"
expect_eq "each slot's snapshot made once" "${#by_lead[@]}" "$(printf '%s\n' "${by_lead[@]}" | sort -u | wc -l)"
ok "3 kept (${seen[*]})" test "${#seen[@]}" = 3

# quiet reports (the policy off: nothing in them changes) past node-down-seconds:
# only the follower's durable lastSeenMs tells the leader the node is alive
aq_mutate PATCH "$P/volumes/v1?updateMask=snapshotPolicy" '{}'
expect_true '.done and (has("error") | not)' "the policy is taken off v1"
sleep 16
aq_req GET /v1/nodes/node-east
expect_jq .state READY "after 16 s of unchanged reports to follower $F, the leader still counts the node READY"
# (a DOWN would heal at the next report: the leader's log would say it)
expect_eq "no replica took the node for DOWN" 0 "$(cat "${DIR[@]/%//aquiferd.log}" | grep -c 'silent for')"
aq_mutate PATCH "$P/volumes/v1?updateMask=snapshotPolicy" '{"snapshotPolicy":{"enabled":true,"hourlySchedule":{"snapshotsToKeep":3,"minute":0}}}'
expect_true '.done and (has("error") | not)' "the policy is back on v1"

# only the leader reconciles: the followers count no pass
for i in 0 1 2; do
	AQ_URL=${URL[$i]} aq_req GET /metrics
	n=$(printf '%s' "$BODY" | awk '$1 == "aquifer_reconcile_passes_total" { print $2 }')
	if [ "$i" = "$LEAD" ]; then
		ok "the leader ($i) ran reconciler passes ($n)" test "${n:-0}" -gt 0
	else
		expect_eq "follower $i ran no reconciler pass" 0 "$n"
	fi
done
AQ_URL=${URL[$F]} aq_req GET /healthz
expect_true '.status == "ok" and .leader == false' "GET /healthz of a follower (recorded, checked against the spec)"

# --- kill -9 of the leader ----------------------------------------------------
aq_kill9 "${PID[$LEAD]}"
t0=$(date +%s%N)
aq_req POST "$P/volumes?volumeId=v2" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v2"}'
expect_status 200 "a create through follower $F while no replica leads"
op=$(printf '%s' "$BODY" | jq -r .name)
OLD=$LEAD
if wait_leader 10 "$F" "$OTHER"; then
	FAILOVER_MS=$((($(date +%s%N) - t0) / 1000000))
	NEW=$LEAD LEAD=$OLD
	aq_pass "leader $LEAD killed: replica $NEW leads $FAILOVER_MS ms later (within 10 s)"
else
	aq_failed "after kill -9 of the leader, one of the two others leads within 10 s" "$(for i in $F $OTHER; do health "$i"; done)"
	aq_finish
fi
echo "# failover: replica $NEW leads $FAILOVER_MS ms after kill -9 of replica $LEAD" >&2
NEPOCH=$(health "$NEW" | jq -r .leaderEpoch)
ok "the new leader's epoch ($NEPOCH) is above the old one's ($EPOCH)" test "$NEPOCH" -gt "$EPOCH"
aq_op_wait "$op" 30
READY_MS=$((($(date +%s%N) - t0) / 1000000))
echo "# the volume created through a survivor at the kill: done $READY_MS ms after it" >&2
expect_true '.done and (has("error") | not)' "the volume created at the kill is done (new leader $NEW pushed it; $READY_MS ms)"
aq_req GET "$P/volumes/v2"
expect_jq .state READY "v2 is READY"
ok "the new leader reconciled within 10 s of taking over" test $((READY_MS - FAILOVER_MS)) -le 10000
# a create through the other survivor once the new leader leads
t1=$(date +%s%N)
AQ_URL=${URL[$OTHER]} aq_mutate POST "$P/volumes?volumeId=v3" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v3"}'
expect_true '.done and (has("error") | not)' "a volume created through replica $OTHER after the failover is READY"
echo "# v3, created through replica $OTHER (leader $NEW): done $((($(date +%s%N) - t1) / 1000000)) ms after its create" >&2

before=$(made_by "$NEW" | wc -l)
sleep $((PERIOD * 4 + 1))
after=$(made_by "$NEW" | wc -l)
ok "the new leader runs the schedule ($before then $after made)" test "$after" -ge $((before + 2))
survivor_other=$F
[ "$NEW" = "$F" ] && survivor_other=$OTHER
expect_eq "the survivor that does not lead made none" 0 "$(made_by "$survivor_other" | wc -l)"
all=$( (made_by "$LEAD"; made_by "$NEW") | sort)
expect_eq "over both leaders, each slot's snapshot made once" "$(wc -l <<<"$all")" "$(sort -u <<<"$all" | wc -l)"
AQ_URL=${URL[$F]} aq_req GET /v1/nodes/node-east
expect_jq .state READY "the node is still READY after the failover"
expect_eq "no replica took the node for DOWN, before or after the failover" 0 "$(cat "${DIR[@]/%//aquiferd.log}" | grep -c 'silent for')"
# --- a leader frozen past its lease (SIGSTOP): the other takes over; thawed,
# the stale one stops leading at once (its own clock) and makes nothing more
REST=$F
[ "$NEW" = "$F" ] && REST=$OTHER
kill -STOP "${PID[$NEW]}"
t2=$(date +%s%N)
ok "leader $NEW frozen: replica $REST leads within 10 s" wait_leader 10 "$REST"
LEAD=$OLD # (wait_leader set it)
echo "# frozen leader $NEW: replica $REST leads $((($(date +%s%N) - t2) / 1000000)) ms after SIGSTOP" >&2
frozen_made=$(made_by "$NEW" | wc -l)
kill -CONT "${PID[$NEW]}"
h=$(health "$NEW")
expect_eq "the thawed stale leader says at once that it does not lead" false "$(jq -r .leader <<<"$h")"
sleep $((PERIOD * 2 + 1))
mapfile -t l < <(leaders "$F" "$OTHER")
expect_eq "after the thaw exactly one replica leads, replica $REST" "$REST" "${l[*]}"
expect_eq "the stale leader made no snapshot after its thaw" "$frozen_made" "$(made_by "$NEW" | wc -l)"
ok "its replacement runs the schedule" test "$(made_by "$REST" | wc -l)" -ge 1
all=$( (made_by "$LEAD"; made_by "$NEW"; made_by "$REST") | sort)
expect_eq "over three leaders, each slot's snapshot made once" "$(wc -l <<<"$all")" "$(sort -u <<<"$all" | wc -l)"
# --- the replica the agent reports to goes: it reports to the next URL ---------
# (its list: F, the first leader, killed above, then OTHER)
for i in $F $OTHER; do aq_sanitizer_clean "${DIR[$i]}"; done
aq_kill9 "${PID[$F]}"
ok "replica $OTHER leads once follower $F is gone too" wait_leader 10 "$OTHER"
sleep 12 # past node-down-seconds (10)
AQ_URL=${URL[$OTHER]} aq_req GET /v1/nodes/node-east
expect_jq .state READY "the node is READY past node-down-seconds after the replica it reported to was killed"
expect_contains "its agent reports to the third URL of its list" "aquiferd at ${URL[$OTHER]} answers (3 of 3 URLs)" \
	"$(cat "$AQ_TMP/srv/node-east/agent.log")"
AQ_URL=${URL[$OTHER]} aq_mutate POST "$P/volumes?volumeId=v4" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v4"}'
expect_true '.done and (has("error") | not)' "a volume created on the last replica is READY"
aq_sanitizer_clean "${DIR[$OTHER]}"
aq_finish
