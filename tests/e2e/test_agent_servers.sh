#!/usr/bin/env bash
# test_agent_servers.sh: an agent given several aquiferd URLs (replicas,
# issue 22): --server takes a comma-separated list, checked at start; the
# join and every status report go to the URL that answered last and, while
# it cannot be reached, to the next one. Here the first URL is dead at the
# join; then the aquiferd the agent reports to is killed and another one is
# started on the first URL over the same database: the agent reports there
# by itself, the node stays READY and a volume created through it is served;
# the CLI given both URLs reaches the live one.
. "$(dirname "$0")/lib.sh"

command -v nfs-cat >/dev/null || { echo "SKIP: nfs-cat missing (apt-get install libnfs-utils)"; exit 77; }
D=$AQ_TMP/srv

# --- the list is checked before anything starts ----------------------------
refused() { # refused WHAT SERVER-VALUE EXPECTED-TEXT
	local out rc=0
	out=$("$AQUIFER_AGENT" --server "$2" --token t --node n --location l --shelf "$AQ_TMP" --listen 127.0.0.1:0 \
		--nfs-listen 127.0.0.1:0 --state-dir "$AQ_TMP/bad" 2>&1) || rc=$?
	ok "$1 is refused at start (exit $rc)" test "$rc" -ne 0
	expect_contains "$1: the reason names it" "$3" "$out"
}
refused "an empty URL in the list" "https://127.0.0.1:1,,https://127.0.0.1:2" "an empty URL"
refused "a trailing comma" "https://127.0.0.1:1," "an empty URL"
refused "a URL without a scheme" "127.0.0.1:8080" "is not an http:// or https:// URL"
refused "a list mixing schemes" "https://127.0.0.1:1,http://127.0.0.1:2" "every URL takes the same scheme"
refused "nine URLs" "$(printf 'https://127.0.0.1:%d,' 1 2 3 4 5 6 7 8)https://127.0.0.1:9" "at most 8 URLs"

# --- the join goes to the URL that answers -------------------------------------
DEAD=$(aq_pick_port) || exit 1
aq_start "$D" || exit 1
FIRST_PID=$AQ_PID
LIVE_URL=$AQ_URL
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=rp" '{}'
P=/v1/projects/rp/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
AQ_AGENT_SERVER="$AQ_SCHEME://127.0.0.1:$DEAD, $LIVE_URL/" aq_agent_for east || exit 1
LOG=$D/node-east/agent.log
expect_contains "the agent says which URL answered the join" "aquiferd at $LIVE_URL answers (2 of 2 URLs)" "$(cat "$LOG")"
aq_req GET /v1/nodes/node-east
expect_jq .state READY "the node joined through the second URL is READY"

# --- the aquiferd it reports to goes; another answers on the first URL ---------
aq_kill9 "$FIRST_PID"
aq_start "$D" "$DEAD" || exit 1
for _ in $(seq 100); do
	grep -q "aquiferd at $AQ_SCHEME://127.0.0.1:$DEAD answers (1 of 2 URLs)" "$LOG" && break
	sleep 0.2
done
expect_contains "the agent moves its reports to the URL that answers" \
	"aquiferd at $AQ_SCHEME://127.0.0.1:$DEAD answers (1 of 2 URLs)" "$(cat "$LOG")"
# reportsDelivered: the agent's count of status reports aquiferd took
delivered() {
	curl -s "${AQ_CURL_OPTS[@]}" -H "Authorization: Bearer $(jq -r .pushSecret "$D/node-east/state/credentials.json")" \
		"$AQ_SCHEME://127.0.0.1:$AGENT_API_PORT/v1/status" | jq -r .reportsDelivered
}
r1=$(delivered)
sleep 5
r2=$(delivered)
ok "its reports reach the new aquiferd (reportsDelivered $r1 -> $r2)" test "$r2" -gt "$r1"
aq_req GET /v1/nodes/node-east
expect_jq .state READY "the node stays READY"
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_true '.done and .response.state == "READY"' "a volume created through the new aquiferd is READY"
printf 'hello' >"$AQ_TMP/h.txt"
nfs-cp "$AQ_TMP/h.txt" "nfs://127.0.0.1/v1/h.txt?version=3&nfsport=$AGENT_NFS_PORT&mountport=$AGENT_NFS_PORT" >/dev/null 2>&1
expect_eq "and served" hello "$(nfs-cat "nfs://127.0.0.1/v1/h.txt?version=3&nfsport=$AGENT_NFS_PORT&mountport=$AGENT_NFS_PORT" 2>&1)"
ok "at most one report failure logged for the whole outage" test "$(grep -c 'status report failed' "$LOG")" -le 1

# --- the CLI given both URLs: the first is down now -------------------------------
cli_out=$(AQUIFER_ENDPOINT="$LIVE_URL,$AQ_URL" AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" volumes list \
	--project=rp --location=east --format='value(name)' 2>&1)
expect_eq "aquifer --endpoint with replicas reaches the one that answers" "projects/rp/locations/east/volumes/v1" "$cli_out"
cli_out=$(AQUIFER_ENDPOINT="$LIVE_URL" AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" volumes list \
	--project=rp --location=east 2>&1)
expect_contains "with only the dead URL it says it cannot reach it" "cannot reach $LIVE_URL" "$cli_out"
cli_out=$(AQUIFER_ENDPOINT="$AQ_URL,,x" "$AQ_BUILDDIR/aquifer" volumes list --project=rp --location=east 2>&1)
expect_contains "an empty entry in the list is refused" "endpoint must be an http:// or https:// URL" "$cli_out"

aq_sanitizer_clean "$D"
aq_finish
