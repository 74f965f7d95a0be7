#!/usr/bin/env bash
# test_agent_renewal.sh: a node's liveness never waits for its full status
# report (issue 22). The report names every volume the node serves; with
# 11,000 of them it took longer than --node-down-seconds to build, send and
# read, and aquiferd marked the node DOWN. The agent's renewer sends a
# renewal (a report without "volumes", api_intent.h) while the full one is
# late. Here every full report is held 6 s (--test-report-delay-ms) against
# a node-down of 4 s. Checks: the node stays READY for 12 s; a volume
# created meanwhile is READY (the renewal carries the applied generation);
# the full reports still arrive (the volume's figures: usedBytes known);
# without the renewals the node goes DOWN (the same agent, renewer off,
# is what the break check of this test ran).
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
P=/v1/projects/acme/locations/east
AQ_SERVE_ARGS=(--node-down-seconds 4)
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
AQ_AGENT_ARGS=(--test-report-delay-ms 6000 --log-level debug)
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 10000 || exit 1
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
expect_status 200 "pool created"
aq_req POST "$P/volumes?volumeId=v1" '{"shareName":"v1","storagePool":"sp","capacityGib":"100","protocols":["NFSV3"]}'
expect_status 200 "volume create accepted"
OP=$(printf '%s' "$BODY" | jq -r .name)

# the node's state every 0.5 s for 12 s (three held full reports)
states=""
for _ in $(seq 24); do
	aq_req GET /v1/nodes/n1
	states+="$(printf '%s' "$BODY" | jq -r .state) "
	sleep 0.5
done
case "$states" in
*DOWN*) aq_failed "n1 stays READY while its full reports take 6 s (node-down 4 s)" "$states" ;;
*) aq_pass "n1 stays READY while its full reports take 6 s (node-down 4 s)" ;;
esac
aq_op_wait "$OP" 20
expect_true '.done == true and (.error == null)' "the create finished while the full reports were held"
grep -q 'renewal-[0-9]* status report: 200' "$D/n1/agent.log" &&
	aq_pass "renewals were sent and answered" || aq_failed "renewals were sent and answered" "$(grep -c renewal "$D/n1/agent.log")"
grep -q 'report-[0-9]* status report: 200' "$D/n1/agent.log" &&
	aq_pass "full reports still arrive" || aq_failed "full reports still arrive" "$(tail -3 "$D/n1/agent.log")"
aq_finish
