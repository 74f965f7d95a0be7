#!/usr/bin/env bash
# test_agent_report_size.sh: a node's status report names every volume it
# serves, so a node with a few thousand volumes sends more than the API's
# 1 MiB body cap; POST /v1/agent/status takes up to the intent contract's
# cap (API_INTENT_BODY_MAX, 16 MiB, what the agent takes for an intent).
# Before, such reports got 413 and the node went DOWN under bench/api's
# creates (issue 22). Checks: a 2.5 MiB report is taken (200) and keeps the
# node READY; a report past 16 MiB is 413 with the Google error body; every
# other route keeps the 1 MiB cap.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
J=$(aq_join_token east)
aq_req_as "$J" POST /v1/agent/join '{"node":"n1","location":"east","address":"http://127.0.0.1:9","nfsAddress":"127.0.0.1:2049"}'
expect_status 200 "n1 joins (no agent behind it: the report is sent by hand)"
NTOK=$(printf '%s' "$BODY" | jq -r .nodeToken)

# report N: a status report naming N volumes (no such volumes: only the size counts)
report() {
	python3 - "$1" <<'PY'
import json, sys
n = int(sys.argv[1])
vols = [{"name": "projects/acme/locations/east/volumes/v%06d" % i, "usedGib": "1", "coldTierSizeGib": "0",
         "hotTierSizeUsedGib": "1", "readBytes": "123456789", "writeBytes": "987654321", "readOps": "1000",
         "writeOps": "2000", "snapshots": [], "pad": "x" * 600} for i in range(n)]
print(json.dumps({"node": "n1", "appliedGeneration": 0, "volumes": vols}))
PY
}
post_file() { # token path file
	STATUS=$(curl -s -o "$AQ_TMP/resp" -w '%{http_code}' --max-time 60 -X POST -H "Authorization: Bearer $1" \
		-H 'Content-Type: application/json' --data-binary "@$3" "$AQ_URL$2") || STATUS=curl-error
	BODY=$(cat "$AQ_TMP/resp" 2>/dev/null)
}

report 3000 >"$AQ_TMP/big.json"
SIZE=$(stat -c %s "$AQ_TMP/big.json")
[ "$SIZE" -gt 2000000 ] && aq_pass "the report is over 1 MiB ($SIZE bytes)" || aq_failed "the report is over 1 MiB" "$SIZE"
post_file "$NTOK" /v1/agent/status "$AQ_TMP/big.json"
expect_status 200 "a $SIZE-byte status report is taken"
aq_req GET /v1/nodes/n1
expect_true '.state == "READY"' "n1 is READY after it"

report 26000 >"$AQ_TMP/huge.json"
SIZE=$(stat -c %s "$AQ_TMP/huge.json")
post_file "$NTOK" /v1/agent/status "$AQ_TMP/huge.json"
expect_eq "a $SIZE-byte report (over 16 MiB) is refused with 413" 413 "$STATUS"
expect_true '.error.code == 413 and (.error.message | test("larger than 16777216 bytes"))' "... naming the 16 MiB cap"

# other routes keep the API's 1 MiB
post_file "$TOK" "/v1/projects/acme/locations/east/storagePools?storagePoolId=p1" "$AQ_TMP/big.json"
expect_eq "a 2.5 MiB body to another route is still 413" 413 "$STATUS"
expect_true '.error.message | test("larger than 1048576 bytes")' "... naming the 1 MiB cap"
aq_finish
