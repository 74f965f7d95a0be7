#!/usr/bin/env bash
# tests/e2e/test_kill9.sh: kill -9 aquiferd in the middle of a burst of
# creates, restart it on the same database, and check that every
# acknowledged resource and operation is there and nothing is half-written.
#
# Four concurrent loops create 50 volumes each (200 in all) in one pool, plus
# a fifth loop creating pools; each loop records the resource and operation
# names of every create answered 200. aquiferd is killed with SIGKILL once a
# fair share of the burst has been acknowledged, while requests are in flight.
. "$(dirname "$0")/lib.sh"

LOOPS=4
PER_LOOP=50
POOL_CREATES=40
KILL_AFTER=${KILL_AFTER:-60}   # acknowledged creates before the kill

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
P=burst
L=loc1
PL=/v1/projects/$P/locations/$L

aq_req POST "/v1/locations?locationId=$L" '{}'
expect_status 200 "create location"
aq_req POST "/v1/projects?projectId=$P" '{}'
expect_status 200 "create project"
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }
# 200 volumes of 100 GiB need 20,000 GiB; a Premium pool of 20 TiB holds them.
aq_req POST "$PL/storagePools?storagePoolId=big" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
expect_status 200 "create the pool for the burst"

# burst_volumes N: create volumes b<N>-1..b<N>-PER_LOOP; ack lines "vol OP" to ack.N
burst_volumes() {
	local n=$1 i code out=$AQ_TMP/out.$1
	for i in $(seq "$PER_LOOP"); do
		code=$(curl -s -o "$out" -w '%{http_code}' --max-time 20 -X POST \
			-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
			--data-binary "{\"storagePool\":\"big\",\"capacityGib\":\"100\",\"shareName\":\"sh-$n-$i\",\"protocols\":[\"NFSV3\"]}" \
			"$AQ_URL$PL/volumes?volumeId=b$n-$i") || code=000
		if [ "$code" = 200 ]; then
			jq -r '[.metadata.target, .name] | join(" ")' "$out" >>"$AQ_TMP/ack.$n"
		elif [ "$code" = 000 ]; then
			break   # the server is gone
		else
			echo "b$n-$i: HTTP $code $(head -c 200 "$out")" >>"$AQ_TMP/refused"
		fi
	done
}
burst_pools() {
	local i code out=$AQ_TMP/out.pools
	for i in $(seq "$POOL_CREATES"); do
		code=$(curl -s -o "$out" -w '%{http_code}' --max-time 20 -X POST \
			-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
			--data-binary '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"STANDARD","capacityGib":"2048"}' \
			"$AQ_URL$PL/storagePools?storagePoolId=bp-$i") || code=000
		if [ "$code" = 200 ]; then
			jq -r '[.metadata.target, .name] | join(" ")' "$out" >>"$AQ_TMP/ack.pools"
		elif [ "$code" = 000 ]; then
			break
		else
			echo "bp-$i: HTTP $code $(head -c 200 "$out")" >>"$AQ_TMP/refused"
		fi
	done
}

acked() { cat "$AQ_TMP"/ack.* 2>/dev/null | wc -l; }

LOOP_PIDS=()
for n in $(seq "$LOOPS"); do
	burst_volumes "$n" &
	LOOP_PIDS+=($!)
done
burst_pools &
LOOP_PIDS+=($!)
for _ in $(seq 600); do
	[ "$(acked)" -ge "$KILL_AFTER" ] && break
	sleep 0.05
done
n_at_kill=$(acked)
aq_kill9 "$AQ_PID"
for pid in "${LOOP_PIDS[@]}"; do wait "$pid"; done
n_acked=$(acked)
echo "# killed aquiferd after $n_at_kill acknowledged creates; $n_acked acknowledged in all"
ok "the kill came in the middle of the burst ($n_acked of $((LOOPS * PER_LOOP + POOL_CREATES)) acknowledged)" \
	test "$n_acked" -ge "$KILL_AFTER" -a "$n_acked" -lt $((LOOPS * PER_LOOP + POOL_CREATES))

expect_eq "no create was refused while the server was up" "" "$(cat "$AQ_TMP/refused" 2>/dev/null)"

# Restart on the same database and port (the node keeps serving meanwhile).
aq_start "$D" "$AQ_PORT" || { aq_failed "aquiferd restarts on the same db"; aq_finish; }
aq_pass "aquiferd restarts on the same db after kill -9"

# Operations acknowledged before the kill may still wait for the node: they
# must finish after the restart. Wait until no operation is pending.
for _ in $(seq 600); do
	pending=$(aq_list_all "$PL/operations" operations | jq -r 'select(.done != true) | .name' | wc -l)
	[ "$pending" = 0 ] && break
	sleep 0.1
done
expect_eq "every pending operation finishes after the restart" 0 "$pending"

# Every acknowledged resource and operation is there.
missing=0
bad_ops=0
while read -r res op; do
	aq_req GET "/v1/$res"
	if [ "$STATUS" != 200 ]; then
		missing=$((missing + 1))
		echo "  missing resource $res (HTTP $STATUS)"
	fi
	aq_req GET "/v1/$op"
	if [ "$STATUS" != 200 ] ||
		! printf '%s' "$BODY" | jq -e --arg r "$res" \
			'.done == true and .response.name == $r and .metadata.target == $r and .metadata.verb == "create"' >/dev/null; then
		bad_ops=$((bad_ops + 1))
		echo "  operation $op for $res: HTTP $STATUS ${BODY:0:200}"
	fi
done < <(cat "$AQ_TMP"/ack.* 2>/dev/null)
expect_eq "every acknowledged resource is there after restart" 0 "$missing"
expect_eq "every acknowledged operation is there, done, naming its resource" 0 "$bad_ops"

# Nothing half-written: lists parse, every listed volume and pool has its
# create operation, and the pool's counters agree with its volumes.
if aq_list_all "$PL/volumes" volumes >"$AQ_TMP/vols"; then aq_pass "volume list parses"; else aq_failed "volume list parses"; fi
if aq_list_all "$PL/storagePools" storagePools >"$AQ_TMP/pools"; then aq_pass "pool list parses"; else aq_failed "pool list parses"; fi
if aq_list_all "$PL/operations" operations >"$AQ_TMP/ops"; then aq_pass "operation list parses"; else aq_failed "operation list parses"; fi
n_vols=$(wc -l <"$AQ_TMP/vols")
n_pools=$(wc -l <"$AQ_TMP/pools")
n_ops=$(wc -l <"$AQ_TMP/ops")
echo "# after restart: $n_vols volumes, $n_pools pools, $n_ops operations"

ok "volumes listed once each" test "$(jq -r .name "$AQ_TMP/vols" | sort | uniq -d | wc -l)" = 0
ok "every acknowledged volume is listed" \
	test "$(cat "$AQ_TMP"/ack.[0-9]* 2>/dev/null | awk '{print $1}' | sort | comm -23 - <(jq -r .name "$AQ_TMP/vols" | sort) | wc -l)" = 0
jq -r 'select(.metadata.verb == "create" and .done == true) | .metadata.target' "$AQ_TMP/ops" | sort -u >"$AQ_TMP/op_targets"
orphans=$(cat <(jq -r .name "$AQ_TMP/vols") <(jq -r .name "$AQ_TMP/pools") | sort | comm -23 - "$AQ_TMP/op_targets")
expect_eq "every listed volume and pool has its done create operation" "" "$orphans"
ghosts=$(jq -r 'select(.metadata.verb == "create") | .metadata.target' "$AQ_TMP/ops" | sort -u |
	comm -23 - <(cat <(jq -r .name "$AQ_TMP/vols") <(jq -r .name "$AQ_TMP/pools") | sort))
expect_eq "every create operation's resource exists (nothing was deleted)" "" "$ghosts"
ok "every volume is complete and READY (name, pool, capacity, share, throughput 100/1024 x 64)" \
	test "$(jq -c 'select((.name|type) != "string" or .storagePool != "big" or .capacityGib != "100" or (.shareName|type) != "string" or .throughputMibps != 6.25 or .state != "READY")' "$AQ_TMP/vols" | wc -l)" = 0
ok "every operation is done with a response" \
	test "$(jq -c 'select(.done != true or (has("response") | not) or has("error"))' "$AQ_TMP/ops" | wc -l)" = 0
expect_eq "one create operation per resource (plus none extra)" "$((n_vols + n_pools))" "$n_ops"

aq_req GET "$PL/storagePools/big"
expect_status 200 "get the burst pool"
expect_jq .volumeCount "$n_vols" "pool volumeCount equals the volumes listed"
expect_jq .volumeCapacityGib "$((n_vols * 100))" "pool volumeCapacityGib equals 100 GiB x volumes listed"

aq_req GET /metrics # the cluster admin's token (metrics_auth)
metric() { printf '%s\n' "$BODY" | awk -v k="$1" '$1 == k { print $2 }'; }
expect_eq "metrics volume count equals the volumes listed" "$n_vols" "$(metric 'aquifer_resources{kind="volume"}')"
expect_eq "metrics pool count equals the pools listed" "$n_pools" "$(metric 'aquifer_resources{kind="pool"}')"

# The store still takes writes, and IDs taken before the crash stay taken.
aq_req POST "$PL/volumes?volumeId=after-restart" \
	'{"storagePool":"big","capacityGib":"100","shareName":"after-restart","protocols":["NFSV3"]}'
expect_status 200 "a create after the restart"
first=$(head -n 1 "$AQ_TMP/vols" | jq -r .name)
if [ -n "$first" ]; then
	aq_req POST "$PL/volumes?volumeId=${first##*/}" \
		'{"storagePool":"big","capacityGib":"100","shareName":"dup-after","protocols":["NFSV3"]}'
	expect_error 409 ALREADY_EXISTS "a volume created before the kill still holds its ID"
fi

aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
aq_finish
