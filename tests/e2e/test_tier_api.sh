#!/usr/bin/env bash
# tests/e2e/test_tier_api.sh: the control-plane side of the cold tier (issue 11,
# notes/tier-contract.md sections 2 and 3) through a real aquiferd:
#   - a location's coldStore (cluster admin): create, PATCH, validation errors
#     that change nothing, validateOnly, the S3 secret never in any answer,
#     FAILED_PRECONDITION for a store change that would strand cold data;
#   - the intent a real agent receives carries the coldStore with its secret;
#   - tiering rules of GCNV (tieringPolicy cannot be removed, 2-183 days,
#     hot-tier bypass on FLEX only, allowAutoTiering one way);
#   - sizes, QoS and stateDetails from status reports: a stand-in node posts
#     reports with hotBytes/coldBytes/coldReadBytes/coldWriteBytes/tierState
#     itself (with its node token) and the volume and pool answers, the
#     pushed QoS limit, the time series and /metrics follow.
# Expected figures come from GCNV's rates (Premium 64 MiB/s per TiB; cold
# GiB at 2 KiB/s, shared/reference/gcnv.md section 3), not from a run.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
ADMIN=$(aq_token "$D" admin)
TOK=$ADMIN
GIB=1073741824
SECRET=sEcReT-e2e-$RANDOM-$RANDOM
SECRET2=rOtAtEd-e2e-$RANDOM-$RANDOM

s3_store() { # BUCKET [ACCESS_KEY] [SECRET]: a coldStore object
	printf '{"s3":{"endpoint":"http://127.0.0.1:9000","bucket":"%s","accessKeyId":"%s"%s}}' \
		"$1" "${2:-AKIDE2E}" "${3:+,\"secretAccessKey\":\"$3\"}"
}

# === coldStore on create ===================================================
aq_req POST "/v1/locations?locationId=east" "{\"coldStore\":$(s3_store cold-east AKIDE2E "$SECRET")}"
expect_status 200 "create location east with an S3 cold store"
expect_jq .coldStore.s3.bucket cold-east "the answer names the bucket"
expect_jq .coldStore.s3.region us-east-1 "region defaults to us-east-1"
expect_jq '.coldStore.s3 | has("secretAccessKey")' false "the answer carries no secretAccessKey"
aq_req GET /v1/locations/east
expect_jq .coldStore.s3.endpoint http://127.0.0.1:9000 "GET shows the endpoint"
expect_jq '.coldStore.s3 | has("secretAccessKey")' false "GET carries no secretAccessKey"
aq_req POST "/v1/locations?locationId=dirloc" '{"coldStore":{"directory":{"path":"/srv/aquifer/cold"}}}'
expect_status 200 "create a location with a directory cold store"
expect_jq .coldStore.directory.path /srv/aquifer/cold "directory path kept"

# validateOnly creates nothing
aq_req POST "/v1/locations?locationId=preview&validateOnly=true" "{\"coldStore\":$(s3_store cold-p AK "$SECRET")}"
expect_status 200 "validateOnly create answers"
aq_req GET /v1/locations/preview
expect_error 404 NOT_FOUND "validateOnly created nothing"

# bad stores: 400 INVALID_ARGUMENT, nothing created
bad=0
while IFS='|' read -r what store; do
	[ -n "$what" ] || continue
	bad=$((bad + 1))
	aq_req POST "/v1/locations?locationId=bad$bad" "{\"coldStore\":$store}"
	expect_error 400 INVALID_ARGUMENT "coldStore refused: $what"
	aq_req GET "/v1/locations/bad$bad"
	expect_status 404 "nothing created for: $what"
done <<EOF
both s3 and directory|{"s3":{"endpoint":"http://h:1","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"},"directory":{"path":"/x"}}
neither|{}
endpoint with a blank|{"s3":{"endpoint":"http://h st:9000","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"}}
endpoint without host|{"s3":{"endpoint":"http://:9000","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"}}
endpoint bad port|{"s3":{"endpoint":"http://h:99999","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"}}
endpoint with credentials|{"s3":{"endpoint":"http://u:p@h:9000","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"}}
upper-case bucket|{"s3":{"endpoint":"http://h:9000","bucket":"Cold","accessKeyId":"a","secretAccessKey":"s"}}
short bucket|{"s3":{"endpoint":"http://h:9000","bucket":"ab","accessKeyId":"a","secretAccessKey":"s"}}
IP bucket|{"s3":{"endpoint":"http://h:9000","bucket":"10.1.2.3","accessKeyId":"a","secretAccessKey":"s"}}
bucket with ..|{"s3":{"endpoint":"http://h:9000","bucket":"a..b","accessKeyId":"a","secretAccessKey":"s"}}
missing secret|{"s3":{"endpoint":"http://h:9000","bucket":"abc","accessKeyId":"a"}}
missing access key|{"s3":{"endpoint":"http://h:9000","bucket":"abc","secretAccessKey":"s"}}
unknown s3 field|{"s3":{"endpoint":"http://h:9000","bucket":"abc","accessKeyId":"a","secretAccessKey":"s","token":"t"}}
overlong access key|{"s3":{"endpoint":"http://h:9000","bucket":"abc","accessKeyId":"$(printf 'k%.0s' $(seq 300))","secretAccessKey":"s"}}
bad region|{"s3":{"endpoint":"http://h:9000","bucket":"abc","region":"us east","accessKeyId":"a","secretAccessKey":"s"}}
relative path|{"directory":{"path":"cold/here"}}
path with ..|{"directory":{"path":"/srv/../etc"}}
empty directory|{"directory":{}}
EOF
aq_req POST "/v1/locations?locationId=badftp" '{"coldStore":{"s3":{"endpoint":"ftp://h:21","bucket":"abc","accessKeyId":"a","secretAccessKey":"s"}}}'
expect_error 400 INVALID_ARGUMENT "coldStore refused: ftp endpoint"

# only the cluster admin sees and sets it
aq_req POST "/v1/projects?projectId=pa" '{}'
EDITOR=$(aq_token "$D" editor pa)
VIEWER=$(aq_token "$D" viewer pa)
aq_req_as "$EDITOR" PATCH "/v1/locations/east?updateMask=coldStore" '{"coldStore":{"directory":{"path":"/x"}}}'
expect_error 403 PERMISSION_DENIED "a project editor cannot set a cold store"
aq_req_as "$VIEWER" GET /v1/projects/pa/locations/east
expect_status 200 "a project viewer sees the location"
expect_jq 'has("coldStore")' false "the per-project view leaves the cold store out"

# === PATCH ===================================================================
aq_req PATCH "/v1/locations/east?updateMask=coldStore" '{"coldStore":{"s3":{"endpoint":"http://127.0.0.1:9000","bucket":"other","accessKeyId":"AKIDE2E"}}}'
expect_error 400 INVALID_ARGUMENT "another bucket without a secret is refused"
aq_req PATCH "/v1/locations/east?updateMask=coldStore" '{"coldStore":{"s3":{"endpoint":"http://127.0.0.1:9000","bucket":"cold-east","accessKeyId":"AKNEW"}}}'
expect_error 400 INVALID_ARGUMENT "another access key without a secret is refused"
aq_req PATCH "/v1/locations/east?updateMask=coldStore" '{"coldStore":{"s3":{"endpoint":"http://127.0.0.1:9000","bucket":"B A D","accessKeyId":"AKIDE2E","secretAccessKey":"x"}}}'
expect_error 400 INVALID_ARGUMENT "a bad bucket in a PATCH is refused"
aq_req PATCH "/v1/locations/east?updateMask=coldStore&validateOnly=true" '{"coldStore":{"directory":{"path":"/preview"}}}'
expect_status 200 "validateOnly PATCH answers"
expect_jq .coldStore.directory.path /preview "validateOnly shows the result"
aq_req GET /v1/locations/east
expect_jq .coldStore.s3.bucket cold-east "refused and validateOnly PATCHes changed nothing"
aq_req PATCH "/v1/locations/east?updateMask=coldStore,displayName" "{\"displayName\":\"East\",\"coldStore\":$(s3_store cold-east AKIDE2E)}"
expect_status 200 "same store and key without a secret: accepted (secret kept)"
expect_jq .displayName East "displayName changed"
aq_req PATCH "/v1/locations/nowhere?updateMask=displayName" '{"displayName":"x"}'
expect_error 404 NOT_FOUND "PATCH of an unknown location"
aq_req PATCH "/v1/locations/east?updateMask=locationId" '{}'
expect_error 400 INVALID_ARGUMENT "output-only field in the mask"

# === the intent carries the cold store =====================================
aq_agent_for east || { aq_failed "a storage node joins east"; aq_finish; }
INTENT=$D/node-east/state/intent.json
intent_has() { # JQ_FILTER: poll the agent's stored intent until the filter holds
	for _ in $(seq 100); do
		[ -f "$INTENT" ] && jq -e "$1" "$INTENT" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
ok "the intent carries the S3 cold store with its secret (kept across the PATCH)" \
	intent_has ".coldStore.s3.bucket == \"cold-east\" and .coldStore.s3.secretAccessKey == \"$SECRET\" and .coldStore.s3.accessKeyId == \"AKIDE2E\" and .coldStore.s3.region == \"us-east-1\""
gen1=$(jq -r .generation "$INTENT")
aq_req PATCH "/v1/locations/east?updateMask=coldStore" "{\"coldStore\":$(s3_store cold-east AKROT "$SECRET2")}"
expect_status 200 "rotate the access key (same store)"
expect_jq '.coldStore.s3.accessKeyId' AKROT "new access key shown"
ok "a changed cold store is pushed at once (new generation, new secret)" \
	intent_has ".coldStore.s3.secretAccessKey == \"$SECRET2\" and .generation > $gen1"
aq_req PATCH "/v1/locations/east?updateMask=coldStore" '{}'
expect_status 200 "remove the cold store of a location without tiered volumes"
ok "without a store the intent has no coldStore (the agent's default)" intent_has 'has("coldStore") | not'
aq_req PATCH "/v1/locations/east?updateMask=coldStore" '{"coldStore":{"directory":{"path":"/srv/cold-east"}}}'
expect_status 200 "set a directory store"
ok "the intent carries the directory store" intent_has '.coldStore.directory.path == "/srv/cold-east" and (.coldStore | has("s3") | not)'

# === a stand-in node in location west ========================================
aq_req POST "/v1/locations?locationId=west" '{"coldStore":{"directory":{"path":"/srv/cold-west"}}}'
expect_status 200 "create location west"
JOIN=$(aq_join_token west)
aq_req_as "$JOIN" POST /v1/agent/join '{"node":"fake-west","location":"west","address":"http://127.0.0.1:9","nfsAddress":"127.0.0.1:2049","agentVersion":"e2e-fake"}'
expect_status 200 "a stand-in node joins west"
NODE_TOK=$(printf '%s' "$BODY" | jq -r .nodeToken)
# report every desired generation as applied, in the background (killed by lib.sh)
(
	g=0
	while :; do
		out=$(curl -s -H "Authorization: Bearer $NODE_TOK" -X POST "$AQ_URL/v1/agent/status" \
			-d "{\"appliedGeneration\":$g}")
		n=$(printf '%s' "$out" | jq -r '.generation // empty' 2>/dev/null)
		[ -n "$n" ] && g=$n
		sleep 0.1
	done
) &
AQ_PIDS+=("$!")
report() { # VOLUME_ENTRIES_JSON: one status report of the stand-in node
	aq_req_as "$NODE_TOK" POST /v1/agent/status "{\"appliedGeneration\":0,\"volumes\":$1}"
}
vol_entry() { # VOLUME USED HOT COLD CREAD CWRITE [TIERSTATE] [DETAILS]
	printf '{"name":"projects/pa/locations/west/volumes/%s","usedBytes":%s,"hotBytes":%s,"coldBytes":%s,"coldReadBytes":%s,"coldWriteBytes":%s,"readBytes":0,"writeBytes":0,"tierState":"%s","tierDetails":"%s"}' \
		"$1" "$2" "$3" "$4" "$5" "$6" "${7:-ACTIVE}" "${8:-}"
}

PW=/v1/projects/pa/locations/west
aq_req POST "$PW/storagePools?storagePoolId=plain" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "a pool without allowAutoTiering"
aq_req POST "$PW/storagePools?storagePoolId=tp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","allowAutoTiering":true}'
expect_status 200 "a PREMIUM pool with allowAutoTiering"

# === tiering rules =========================================================
vol() { # SHARE CAPACITY POOL [extra members]
	printf '{"storagePool":"%s","capacityGib":"%s","shareName":"%s","protocols":["NFSV3"]%s}' "$3" "$2" "$1" "${4:+,$4}"
}
aq_req POST "$PW/volumes?volumeId=nt" "$(vol nt 100 plain '"tieringPolicy":{"tierAction":"ENABLED"}')"
expect_error 400 INVALID_ARGUMENT "tiering in a pool without allowAutoTiering"
aq_req POST "$PW/volumes?volumeId=d1" "$(vol d1 100 tp '"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":1}')"
expect_error 400 INVALID_ARGUMENT "coolingThresholdDays 1 (below 2)"
aq_req POST "$PW/volumes?volumeId=d1" "$(vol d1 100 tp '"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":184}')"
expect_error 400 INVALID_ARGUMENT "coolingThresholdDays 184 (above 183)"
aq_req POST "$PW/volumes?volumeId=d1" "$(vol d1 100 tp '"tieringPolicy":{"tierAction":"ENABLED","hotTierBypassModeEnabled":true}')"
expect_error 400 INVALID_ARGUMENT "hotTierBypassModeEnabled outside FLEX"
aq_req POST "$PW/volumes?volumeId=d1" "$(vol d1 100 tp '"tieringPolicy":{"tierAction":"ENABLED","retrievalPolicy":"SOMETIMES"}')"
expect_error 400 INVALID_ARGUMENT "unknown retrievalPolicy"
aq_req PATCH "$PW/storagePools/tp?updateMask=allowAutoTiering" '{"allowAutoTiering":false}'
expect_error 400 INVALID_ARGUMENT "allowAutoTiering cannot be turned off"

aq_mutate POST "$PW/volumes?volumeId=v1" "$(vol v1 1024 tp '"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":2,"retrievalPolicy":"ON_READ"}')"
expect_jq .response.state READY "volume v1 (1 TiB, tiering ENABLED) is READY"
expect_jq .response.tieringPolicy.retrievalPolicy ON_READ "retrievalPolicy kept"
expect_jq .response.coldTierSizeGib 0 "a new volume has no cold data"
expect_jq .response.throughputMibps 64 "1 TiB PREMIUM AUTO: 64 MiB/s"
aq_mutate POST "$PW/volumes?volumeId=v2" "$(vol v2 512 tp '"tieringPolicy":{"tierAction":"PAUSED"}')"
expect_jq .response.state READY "volume v2 (tiering PAUSED) is READY"
expect_jq .response.tieringPolicy.coolingThresholdDays 31 "coolingThresholdDays defaults to 31"

aq_req PATCH "$PW/volumes/v1?updateMask=tieringPolicy" '{}'
expect_error 400 INVALID_ARGUMENT "tieringPolicy cannot be removed once on"
aq_req PATCH "$PW/volumes/v1?updateMask=tieringPolicy.coolingThresholdDays" '{"tieringPolicy":{"coolingThresholdDays":200}}'
expect_error 400 INVALID_ARGUMENT "PATCH to 200 days refused"
aq_req GET "$PW/volumes/v1"
expect_jq .tieringPolicy.coolingThresholdDays 2 "refused PATCHes changed nothing"

# === a store change that would strand cold data ============================
aq_req PATCH "/v1/locations/west?updateMask=coldStore" '{"coldStore":{"directory":{"path":"/srv/elsewhere"}}}'
expect_error 400 FAILED_PRECONDITION "another store while a volume has tiering ENABLED"
aq_req PATCH "/v1/locations/west?updateMask=coldStore" '{}'
expect_error 400 FAILED_PRECONDITION "removing the store while a volume has tiering ENABLED"
aq_req PATCH "/v1/locations/west?updateMask=displayName,coldStore" '{"displayName":"West","coldStore":{"directory":{"path":"/srv/cold-west"}}}'
expect_status 200 "the same store with another displayName is fine"
aq_req GET /v1/locations/west
expect_jq .coldStore.directory.path /srv/cold-west "the refused changes left the store alone"

# === sizes and QoS from reports =============================================
gen_before=$(aq_req GET /v1/nodes/fake-west; printf '%s' "$BODY" | jq -r .generation)
report "[$(vol_entry v1 $((3 * GIB + 1)) $((GIB + 1)) $((2 * GIB)) 1000 7000)]"
expect_status 200 "a report with hot and cold bytes"
aq_req GET "$PW/volumes/v1"
expect_jq .coldTierSizeGib 2 "coldTierSizeGib: 2 GiB cold"
expect_jq .hotTierSizeUsedGib 2 "hotTierSizeUsedGib: 1 GiB + 1 byte rounds up to 2"
expect_jq .usedGib 4 "usedGib: 3 GiB + 1 byte rounds up to 4"
# (1024 - 2) GiB x 64 MiB/s per TiB + 2 GiB x 2 KiB/s = 63.875 + 0.00390625
expect_jq .throughputMibps 63.87890625 "QoS: hot GiB at 64 MiB/s per TiB, cold GiB at 2 KiB/s"
expect_jq .state READY "the volume stays READY"
for _ in $(seq 50); do
	aq_req GET /v1/nodes/fake-west
	[ "$(printf '%s' "$BODY" | jq -r .generation)" -gt "$gen_before" ] && break
	sleep 0.1
done
gen_after=$(printf '%s' "$BODY" | jq -r .generation)
ok "the new QoS limit is pushed (generation $gen_before -> $gen_after)" test "$gen_after" -gt "$gen_before"
report "[$(vol_entry v1 $((3 * GIB + 1)) $((GIB + 1)) $((2 * GIB - 4096)) 5000 9000)]"
sleep 1.5
aq_req GET /v1/nodes/fake-west
expect_jq .generation "$gen_after" "the same GiB figures push nothing new"
report "[$(vol_entry v2 $((5 * GIB)) 0 $((5 * GIB)) 0 0 PAUSED)]"
aq_req GET "$PW/volumes/v2"
expect_jq .coldTierSizeGib 5 "v2: 5 GiB cold"
expect_jq .throughputMibps 32 "a PAUSED volume keeps the hot rate (512 GiB x 64 MiB/s per TiB)"
aq_req GET "$PW/storagePools/tp"
expect_jq .coldTierSizeUsedGib 7 "pool coldTierSizeUsedGib = 2 + 5"
expect_jq .hotTierSizeUsedGib 2 "pool hotTierSizeUsedGib = 2 + 0"
aq_req GET "$PW/storagePools"
expect_jq '.storagePools[] | select(.name | endswith("/tp")) | .coldTierSizeUsedGib' 7 "the pool list sums too"

# === stateDetails from the report ==========================================
report "[$(vol_entry v1 $((3 * GIB + 1)) $((GIB + 1)) $((2 * GIB)) 5000 9000 STORE_UNAVAILABLE 'cold store /srv/cold-west unreachable since 01:02:03 UTC: no such file; tiering paused, cold reads retry')]"
aq_req GET "$PW/volumes/v1"
expect_jq .state READY "the volume stays READY while the store is down"
expect_true '.stateDetails | contains("cold store /srv/cold-west unreachable")' "stateDetails says why"
report "[$(vol_entry v1 $((3 * GIB + 1)) $((GIB + 1)) $((2 * GIB)) 5000 9000 ACTIVE)]"
aq_req GET "$PW/volumes/v1"
expect_jq .stateDetails "" "stateDetails cleared once the store is back"

# === metrics: JSON series and Prometheus ===================================
# v2 again, with the same figures, in the same report as v1: a pool's point sums
# the volumes reported in its 10 s slot, and on a loaded machine the steps since
# v2's last report can cross a slot boundary
report "[$(vol_entry v1 $((3 * GIB + 1)) $((GIB + 1)) $((2 * GIB)) 12000 9500),$(vol_entry v2 $((5 * GIB)) 0 $((5 * GIB)) 0 0 PAUSED)]"
aq_req GET "$PW/volumes/v1/metrics?window=5m"
expect_status 200 "volume time series"
expect_jq '.points[-1].tieredBytes' "$((2 * GIB))" "tieredBytes of the last point"
# baseline 1000/7000 at the first report, then 5000, 5000, 5000, 12000 / 9000.., 9500
expect_jq '[.points[].coldTierReadByteCount | tonumber] | add' 11000 "coldTierReadByteCount sums the deltas (12000 - 1000)"
expect_jq '[.points[].coldTierWriteByteCount | tonumber] | add' 2500 "coldTierWriteByteCount sums the deltas (9500 - 7000)"
aq_req GET "$PW/storagePools/tp/metrics?window=5m"
expect_jq '.points[-1].tieredBytes' "$((7 * GIB))" "pool series: tiered bytes of its volumes"
aq_req GET /metrics # the cluster admin's token (metrics_auth)
prom() { printf '%s\n' "$BODY" | awk -v m="$1" -v l="$2" 'index($0, m "{") == 1 && index($0, l) { print $2 }'; }
expect_eq "aquifer_volume_auto_tiering_tiered_bytes of v1" "$((2 * GIB))" "$(prom aquifer_volume_auto_tiering_tiered_bytes 'volume="v1"')"
expect_eq "aquifer_volume_auto_tiering_cold_tier_read_bytes_total of v1" 11000 "$(prom aquifer_volume_auto_tiering_cold_tier_read_bytes_total 'volume="v1"')"
expect_eq "aquifer_volume_auto_tiering_cold_tier_write_bytes_total of v1" 2500 "$(prom aquifer_volume_auto_tiering_cold_tier_write_bytes_total 'volume="v1"')"
expect_eq "aquifer_pool_auto_tiering_tiered_bytes of pool tp" "$((7 * GIB))" "$(prom aquifer_pool_auto_tiering_tiered_bytes 'pool="tp"')"
expect_eq "aquifer_pool_auto_tiering_cold_tier_read_bytes_total of pool tp" 11000 "$(prom aquifer_pool_auto_tiering_cold_tier_read_bytes_total 'pool="tp"')"
if command -v promtool >/dev/null 2>&1; then
	ok "promtool check metrics accepts the text" sh -c "printf '%s\n' \"\$1\" | promtool check metrics" _ "$BODY"
fi

# === tiering ENABLED -> PAUSED, and the store may change once nothing is cold
aq_mutate PATCH "$PW/volumes/v1?updateMask=tieringPolicy.tierAction" '{"tieringPolicy":{"tierAction":"PAUSED"}}'
expect_jq .response.tieringPolicy.tierAction PAUSED "ENABLED -> PAUSED is allowed"
aq_req PATCH "/v1/locations/west?updateMask=coldStore" '{"coldStore":{"directory":{"path":"/srv/elsewhere"}}}'
expect_error 400 FAILED_PRECONDITION "still refused while volumes hold cold data"
report "[$(vol_entry v1 $GIB $GIB 0 12000 9500 PAUSED), $(vol_entry v2 0 0 0 0 0 PAUSED)]"
aq_req GET "$PW/volumes/v1"
expect_jq .coldTierSizeGib 0 "v1 reports no cold data any more"
expect_jq .throughputMibps 64 "v1 is back at the full hot rate"
aq_req PATCH "/v1/locations/west?updateMask=coldStore" '{"coldStore":{"directory":{"path":"/srv/elsewhere"}}}'
expect_status 200 "no volume tiering or cold: the store may change"
aq_mutate PATCH "$PW/volumes/v1?updateMask=tieringPolicy.tierAction" '{"tieringPolicy":{"tierAction":"ENABLED"}}'
expect_jq .response.tieringPolicy.tierAction ENABLED "PAUSED -> ENABLED is allowed"

# === the shelf's resize (issue 24): a failed growth shows in stateDetails; a
# shrink below what the volume uses is refused by name ========================
report "[$(vol_entry v1 $((150 * GIB)) $((150 * GIB)) 0 12000 9500 ACTIVE | jq -c '. + {shelfDetails: "namespace 0011 holds 1099511627776 bytes, less than 2199023255552: grow it on the shelf (no provision= program)"}')]"
aq_req GET "$PW/volumes/v1"
expect_jq '[.state,.stateDetails]|join(" ")' "READY shelf: namespace 0011 holds 1099511627776 bytes, less than 2199023255552: grow it on the shelf (no provision= program)" \
	"a resize the shelf could not make: READY at the old size, stateDetails says why"
expect_jq .usedGib 150 "usedGib from the report"
aq_req PATCH "$PW/volumes/v1?updateMask=capacityGib" '{"capacityGib":"120"}'
expect_error 400 FAILED_PRECONDITION "a shrink below usedGib is refused"
expect_contains "the refusal names usedGib" "capacityGib 120 is below what volume" "$BODY"
aq_req GET "$PW/volumes/v1"
expect_jq .capacityGib 1024 "the refused shrink changed nothing"
report "[$(vol_entry v1 $GIB $GIB 0 12000 9500 ACTIVE)]"
aq_req GET "$PW/volumes/v1"
expect_jq .stateDetails "" "stateDetails cleared once the shelf holds the capacity"

# === the secret never left the server ========================================
leaks=$(grep -rl -e "$SECRET" -e "$SECRET2" "$AQ_RECORD_DIR" 2>/dev/null | wc -l)
expect_eq "no recorded answer carries a secretAccessKey" 0 "$leaks"
aq_req GET /v1/locations
expect_true '[.locations[].coldStore.s3? | select(. != null) | has("secretAccessKey")] | any | not' "the location list carries no secret"

aq_sanitizer_clean "$D"
aq_finish
