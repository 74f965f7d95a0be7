# tests/e2e/race_lib.sh: what the create-race suites share (sourced after
# lib.sh; test_race_sqlite.sh, test_pg_race.sh): two aquiferd processes on
# one database race creates only one may win. The suite sets L (the
# location), PL (its path under project acme), A and B (the two processes'
# URLs) and ROUNDS; the requests go to AQ_URL.

# aq_race_pool ID: a PREMIUM MANUAL pool ID of 2 TiB (128 MiB/s to share
# out), one check.
aq_race_pool() {
	aq_req POST "$PL/storagePools?storagePoolId=$1" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048","qosType":"MANUAL"}'
	expect_status 200 "create MANUAL pool $1"
}

# aq_race_vol POOL SHARE MIBPS: the body of a 1 TiB NFSv3 volume in POOL.
aq_race_vol() {
	printf '{"storagePool":"%s","capacityGib":"1024","protocols":["NFSV3"],"shareName":"%s","throughputMibps":%s}' "$1" "$2" "$3"
}

# aq_race_solo: what one server answers, one create after the other, when a
# MANUAL pool's budget or a shareName is taken: the refusal a racing loser
# must get, in BUDGET_NO and SHARE_NO (STATUS:error.status). Makes pool
# solo and volume solo1; four checks.
aq_race_solo() {
	aq_race_pool solo
	aq_req POST "$PL/volumes?volumeId=solo1" "$(aq_race_vol solo solo1 100)"
	expect_status 200 "solo: 100 of 128 MiB/s"
	aq_req POST "$PL/volumes?volumeId=solo2" "$(aq_race_vol solo solo2 100)"
	BUDGET_NO=$STATUS:$(printf '%s' "$BODY" | jq -r .error.status)
	[ "${STATUS:0:1}" = 4 ] && aq_pass "solo: a second 100 MiB/s is refused ($BUDGET_NO)" || aq_failed "solo: a second 100 MiB/s is refused" "$STATUS $BODY"
	aq_req POST "$PL/volumes?volumeId=solo3" "$(aq_race_vol solo solo1 10)"
	SHARE_NO=$STATUS:$(printf '%s' "$BODY" | jq -r .error.status)
	[ "${STATUS:0:1}" = 4 ] && aq_pass "solo: a taken shareName is refused ($SHARE_NO)" || aq_failed "solo: a taken shareName is refused" "$STATUS $BODY"
}

# aq_race_shelf_room GIB: set $L-shelf-1's capacityGib to what the volumes
# take + GIB, one check.
aq_race_shelf_room() {
	local used
	AQ_RECORD=0 aq_req GET "$PL/volumes?pageSize=1000"
	used=$(printf '%s' "$BODY" | jq '[.volumes[].capacityGib | tonumber] | add // 0')
	aq_req PATCH "/v1/shelves/$L-shelf-1?updateMask=capacityGib" "{\"capacityGib\":\"$((used + $1))\"}"
	expect_status 200 "shelf capacity: $used GiB taken + $1 free"
}

# aq_race_tally SUFFIX DB: after ROUNDS rounds of each race, where racer
# volumes are named <kind><round>SUFFIX (SUFFIX a regular expression):
# A lists one capacity volume per round, A and B each one budget and one
# share volume per round, and aquiferd db check --db DB finds the usage
# counters (db_usage.c, kept by triggers in each create's transaction)
# equal to what the volumes and placements add up to. Four checks.
aq_race_tally() {
	local n u out
	AQ_URL=$A aq_req GET "$PL/volumes?pageSize=1000"
	n=$(printf '%s' "$BODY" | jq "[.volumes[] | select(.name | test(\"/volumes/capacity[0-9]+$1\$\"))] | length")
	[ "$n" = "$ROUNDS" ] && aq_pass "one volume per capacity race ($n)" || aq_failed "one volume per capacity race" "$n of $ROUNDS"
	# what was acknowledged is what is there, seen from either process
	for u in "$A" "$B"; do
		AQ_URL=$u aq_req GET "$PL/volumes?pageSize=1000"
		n=$(printf '%s' "$BODY" | jq "[.volumes[] | select(.name | test(\"/volumes/(budget|share)[0-9]+$1\$\"))] | length")
		[ "$n" = $((2 * ROUNDS)) ] && aq_pass "$u lists one volume per race ($n)" || aq_failed "$u lists one volume per race" "$n of $((2 * ROUNDS))"
	done
	out=$("$AQUIFERD" db check --db "$2" 2>&1) && aq_pass "usage counters agree after the races ($out)" ||
		aq_failed "usage counters agree after the races" "$out"
}
