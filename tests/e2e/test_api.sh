#!/usr/bin/env bash
# tests/e2e/test_api.sh: drive a real aquiferd on loopback through the API,
# math points of issue 2 (bad input, auth, metrics and scans past one page
# are test_api_access.sh). Expected figures come from the
# issue and GCNV's published rates (shared/reference/gcnv.md §2), never from a
# previous run: Standard 16, Premium 64, Extreme 128 MiB/s per TiB, volume cap
# 4,608 MiB/s, FLEX custom 16 IOPS per MiB/s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"

# === healthz and metrics without auth =====================================
TOK=
aq_req GET /healthz
expect_status 200 "healthz without a token"
expect_jq .status ok "healthz body"
aq_req GET /v1/projects
expect_error 401 UNAUTHENTICATED "a /v1 call without a token"
TOK=$ADMIN

# === locations and projects ===============================================
aq_req POST "/v1/locations?locationId=$L" '{}'
expect_status 200 "cluster admin creates location $L"
expect_jq .name "locations/$L" "location name"
aq_req POST "/v1/locations?locationId=eu-west4"
expect_status 200 "cluster admin creates a second location without a body"
aq_req POST "/v1/locations?locationId=$L" '{}'
expect_error 409 ALREADY_EXISTS "duplicate location"
# Volumes are placed on storage nodes: one node per location, with a ceiling
# high enough that placement never limits what this test checks.
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }
aq_agent_for eu-west4 || { aq_failed "a storage node joins eu-west4"; aq_finish; }
aq_req GET /v1/locations
expect_status 200 "admin lists locations"
expect_jq '[.locations[].name] | sort | join(",")' "locations/eu-west4,locations/$L" "admin location list"
aq_req GET "/v1/locations/$L"
expect_status 200 "admin gets a location"
aq_req GET /v1/locations/nowhere
expect_error 404 NOT_FOUND "admin gets an unknown location"

aq_req POST "/v1/projects?projectId=$P" '{}'
expect_status 200 "create project $P"
expect_jq .name "projects/$P" "project name"
aq_req POST "/v1/projects?projectId=proj-b" '{}'
expect_status 200 "create project proj-b"
aq_req POST "/v1/projects?projectId=proj-empty"
expect_status 200 "create project proj-empty"
aq_req POST "/v1/projects?projectId=$P" '{}'
expect_error 409 ALREADY_EXISTS "duplicate project"
aq_req GET "/v1/projects/$P"
expect_status 200 "get project"
expect_jq .name "projects/$P" "get project name"
aq_req GET /v1/projects
expect_status 200 "list projects"
expect_jq '[.projects[].name] | sort | join(",")' "projects/$P,projects/proj-b,projects/proj-empty" "project list"
aq_req GET /v1/projects/nosuch
expect_error 404 NOT_FOUND "get unknown project (cluster admin)"

aq_req GET "/v1/projects/$P/locations"
expect_status 200 "list locations of a project"
expect_jq '[.locations[].name] | sort | join(",")' \
	"projects/$P/locations/eu-west4,projects/$P/locations/$L" "per-project location names"
aq_req GET "$PL"
expect_status 200 "get a location of a project"
expect_jq .name "projects/$P/locations/$L" "per-project location name"
aq_req GET "/v1/projects/$P/locations/nowhere"
expect_error 404 NOT_FOUND "get unknown location of a project"
for coll in volumes operations smbUsers backupVaults; do
	aq_req GET "/v1/projects/$P/locations/nowhere/$coll"
	expect_error 404 NOT_FOUND "list $coll in an unknown location"
done

aq_req POST "/v1/projects/$P/locations/nowhere/storagePools?storagePoolId=p1" "$(pool_body PREMIUM 2048)"
expect_error 404 NOT_FOUND "create a pool in an unknown location"
aq_req POST "/v1/projects/$P/locations/nowhere/volumes?volumeId=v1" "$(vol_body p1 100 s1)"
expect_error 404 NOT_FOUND "create a volume in an unknown location"
aq_req POST "/v1/projects/nosuch/locations/$L/storagePools?storagePoolId=p1" "$(pool_body PREMIUM 2048)"
expect_error 404 NOT_FOUND "create a pool in an unknown project"

# === pools: create, get, int64 as strings, operations =======================
aq_req POST "$PL/storagePools?storagePoolId=prem" "$(pool_body PREMIUM 2048 '"description":"first","labels":{"team":"a"}')"
expect_status 200 "create Premium 2 TiB pool"
expect_jq .done true "create returns a done operation"
expect_true '.name | test("^projects/proj-a/locations/us-east1/operations/[^/]+$")' "operation name under .../operations/"
expect_jq '.metadata["@type"]' type.googleapis.com/google.cloud.netapp.v1.OperationMetadata "operation metadata @type"
expect_jq .metadata.target "projects/$P/locations/$L/storagePools/prem" "operation target"
expect_jq .metadata.verb create "operation verb"
expect_jq .metadata.apiVersion v1 "operation apiVersion"
expect_true '.metadata | has("createTime") and has("endTime") and has("statusMessage") and (.requestedCancellation == false)' \
	"operation metadata has createTime, endTime, statusMessage, requestedCancellation"
expect_jq '.response.name' "projects/$P/locations/$L/storagePools/prem" "operation response is the pool"
expect_true 'has("error") | not' "a successful operation has no error"
OP_PREM=$(printf '%s' "$BODY" | jq -r .name)

aq_req GET "$PL/storagePools/prem"
expect_status 200 "get pool"
expect_jq .state READY "pool state"
expect_jq .serviceLevel PREMIUM "pool serviceLevel"
expect_jq '.capacityGib | type' string "int64 capacityGib is a JSON string"
expect_jq .capacityGib 2048 "pool capacityGib"
expect_jq '.volumeCapacityGib | type' string "int64 volumeCapacityGib is a JSON string"
expect_jq '.totalThroughputMibps | type' string "int64 totalThroughputMibps is a JSON string"
expect_jq .totalThroughputMibps 128 "Premium 2 TiB pool budget = 2 x 64"
expect_jq .volumeCount 0 "empty pool volumeCount"
expect_jq .qosType AUTO "qosType defaults to AUTO"
expect_jq .description first "pool description"
aq_req GET "$PL/storagePools/nosuch"
expect_error 404 NOT_FOUND "get unknown pool"

# === operations ============================================================
aq_req GET "/v1/$OP_PREM"
expect_status 200 "get operation by name"
expect_jq .done true "stored operation is done"
expect_jq .response.name "projects/$P/locations/$L/storagePools/prem" "stored operation response"
aq_req GET "$PL/operations"
expect_status 200 "list operations"
if printf '%s' "$BODY" | jq -e --arg n "$OP_PREM" '[.operations[].name] | index($n) != null' >/dev/null; then
	aq_pass "operation list holds the create operation"
else
	aq_failed "operation list holds the create operation"
fi
aq_req POST "/v1/$OP_PREM:cancel" '{}'
expect_error 400 FAILED_PRECONDITION "cancel of a done operation is refused"
expect_true '.error.message | test("already done.*nothing to cancel")' "the refusal says why"
aq_req GET "/v1/$OP_PREM"
expect_jq .done true "cancelled done operation stays done"
expect_true 'has("error") | not' "a done operation is not turned into an error by cancel"
aq_req GET "$PL/operations/operation-nosuch"
expect_error 404 NOT_FOUND "get unknown operation"
aq_req POST "$PL/operations/operation-nosuch:cancel" '{}'
expect_error 404 NOT_FOUND "cancel unknown operation"

aq_req POST "$PL/storagePools?storagePoolId=tmp-op" "$(pool_body PREMIUM 2048)"
OP_TMP=$(printf '%s' "$BODY" | jq -r .name)
aq_req DELETE "/v1/$OP_TMP"
expect_status 200 "delete an operation record"
aq_req GET "/v1/$OP_TMP"
expect_error 404 NOT_FOUND "deleted operation is gone"
aq_req GET "$PL/storagePools/tmp-op"
expect_status 200 "deleting the operation left its pool"
aq_req DELETE "$PL/storagePools/tmp-op"
expect_status 200 "delete an empty pool"
expect_jq '.response["@type"]' type.googleapis.com/google.protobuf.Empty "pool delete responds with Empty"
aq_req POST "$PL/storagePools?storagePoolId=tmp-op&validateOnly=maybe" "$(pool_body PREMIUM 2048)"
expect_error 400 INVALID_ARGUMENT "validateOnly must be true or false"

# === volumes and the worked numbers =======================================
aq_mutate POST "$PL/volumes?volumeId=v-prem?validateOnly=true" "$(vol_body prem 1500 s-prem)"
expect_error 400 INVALID_ARGUMENT "volumeId with a '?' in it"
n_before=$(count "$PL/volumes" volumes)
aq_mutate POST "$PL/volumes?volumeId=v-prem&validateOnly=true" "$(vol_body prem 1500 s-prem)"
expect_status 200 "validateOnly volume create"
expect_jq .response.throughputMibps 93.75 "validateOnly: Premium 1,500 GiB -> 93.75 MiB/s"
expect_jq .response.name "projects/$P/locations/$L/volumes/v-prem" "validateOnly: computed name"
expect_jq .response.serviceLevel PREMIUM "validateOnly: serviceLevel from the pool"
aq_req GET "$PL/volumes/v-prem"
expect_error 404 NOT_FOUND "validateOnly stored no volume"
expect_eq "validateOnly: volume list unchanged" "$n_before" "$(count "$PL/volumes" volumes)"

aq_mutate POST "$PL/volumes?volumeId=v-prem" "$(vol_body prem 1500 s-prem '"description":"d1","labels":{"k":"v"}')"
expect_status 200 "create Premium 1,500 GiB volume"
expect_jq .response.throughputMibps 93.75 "Premium 1,500 GiB -> 93.75 MiB/s"
OP_VPREM=$(printf '%s' "$BODY" | jq -r .name)
aq_req GET "$PL/volumes/v-prem"
expect_status 200 "get volume"
expect_jq .throughputMibps 93.75 "stored volume throughput 93.75"
expect_jq '.capacityGib | type' string "volume capacityGib is a JSON string"
expect_jq .capacityGib 1500 "volume capacityGib"
expect_jq .storagePool prem "volume storagePool is the pool ID"
expect_true '.state == "READY" or .state == "CREATING"' "volume state"
aq_req GET "$PL/storagePools/prem"
expect_jq .volumeCount 1 "pool volumeCount after one volume"
expect_jq .volumeCapacityGib 1500 "pool volumeCapacityGib after one volume"

aq_req POST "$PL/storagePools?storagePoolId=ext" "$(pool_body EXTREME 8192)"
expect_status 200 "create Extreme 8 TiB pool"
aq_mutate POST "$PL/volumes?volumeId=v-ext4" "$(vol_body ext 4096 s-ext4)"
expect_status 200 "create Extreme 4 TiB volume"
expect_jq .response.throughputMibps 512 "Extreme 4 TiB -> 512 MiB/s"

aq_req POST "$PL/storagePools?storagePoolId=ext-big" "$(pool_body EXTREME 204800)"
expect_status 200 "create Extreme 200 TiB pool"
aq_mutate POST "$PL/volumes?volumeId=v-ext100" "$(vol_body ext-big 102400 s-ext100)"
expect_status 200 "create Extreme 100 TiB volume"
expect_jq .response.throughputMibps 4608 "Extreme 100 TiB -> capped at 4,608 MiB/s"
aq_mutate POST "$PL/volumes?volumeId=v-too-big" "$(vol_body ext-big 102401 s-too-big)"
expect_error 400 INVALID_ARGUMENT "volume just over 100 TiB"
aq_mutate POST "$PL/volumes?volumeId=v-too-small" "$(vol_body ext-big 99 s-too-small)"
expect_error 400 INVALID_ARGUMENT "volume under 100 GiB"
aq_mutate POST "$PL/volumes?volumeId=v-overfill" "$(vol_body ext 4097 s-overfill)"
expect_error 400 INVALID_ARGUMENT "volumes in a pool beyond its capacity"
aq_mutate POST "$PL/volumes?volumeId=v-nopool" "$(vol_body nosuch 100 s-nopool)"
expect_error 404 NOT_FOUND "volume in an unknown pool"
aq_mutate POST "$PL/volumes?volumeId=v-auto-tp" "$(vol_body prem 100 s-auto-tp '"throughputMibps":10')"
expect_error 400 INVALID_ARGUMENT "throughputMibps on a volume in an AUTO pool"
aq_mutate POST "$PL/volumes?volumeId=v-dupshare" "$(vol_body prem 100 s-prem)"
expect_error 409 ALREADY_EXISTS "shareName already used in the location"

# === MANUAL QoS ============================================================
aq_req POST "$PL/storagePools?storagePoolId=man" "$(pool_body PREMIUM 40960 '"qosType":"MANUAL"')"
expect_status 200 "create MANUAL Premium 40 TiB pool"
expect_jq .response.totalThroughputMibps 2560 "MANUAL Premium 40 TiB pool -> totalThroughputMibps 2560"
aq_req GET "$PL/storagePools/man"
expect_jq .totalThroughputMibps 2560 "stored pool totalThroughputMibps 2560"
expect_jq .availableThroughputMibps 2560 "empty MANUAL pool: all 2560 MiB/s available"
aq_mutate POST "$PL/volumes?volumeId=v-man-none" "$(vol_body man 1024 s-man-none)"
expect_error 400 INVALID_ARGUMENT "MANUAL pool volume without throughputMibps"
aq_mutate POST "$PL/volumes?volumeId=v-man1" "$(vol_body man 1024 s-man1 '"throughputMibps":1000')"
expect_status 200 "MANUAL volume with 1000 MiB/s"
expect_jq .response.throughputMibps 1000 "MANUAL volume keeps its throughput"
aq_req GET "$PL/storagePools/man"
expect_jq .availableThroughputMibps 1560 "available drops to 2560 - 1000"
aq_mutate POST "$PL/volumes?volumeId=v-man2" "$(vol_body man 1024 s-man2 '"throughputMibps":1200')"
expect_status 200 "second MANUAL volume with 1200 MiB/s"
aq_req GET "$PL/storagePools/man"
expect_jq .availableThroughputMibps 360 "available drops to 2560 - 2200"
aq_mutate POST "$PL/volumes?volumeId=v-man3" "$(vol_body man 1024 s-man3 '"throughputMibps":361')"
expect_error 400 INVALID_ARGUMENT "MANUAL volume over the pool's remaining budget"
expect_true '.error.message | test("360")' "over-budget message names the 360 MiB/s available"
aq_req GET "$PL/volumes/v-man3"
expect_error 404 NOT_FOUND "refused over-budget volume was not stored"
aq_mutate POST "$PL/volumes?volumeId=v-man3" "$(vol_body man 1024 s-man3 '"throughputMibps":360')"
expect_status 200 "MANUAL volume taking exactly the remaining 360 MiB/s"
aq_req GET "$PL/storagePools/man"
expect_jq .availableThroughputMibps 0 "MANUAL pool fully allocated"
aq_mutate PATCH "$PL/volumes/v-man3?updateMask=throughputMibps" '{"throughputMibps":100}'
expect_status 200 "lower a MANUAL volume's throughput"
aq_req GET "$PL/storagePools/man"
expect_jq .availableThroughputMibps 260 "available back to 260 after lowering"
aq_mutate PATCH "$PL/volumes/v-man3?updateMask=throughputMibps" '{"throughputMibps":361}'
expect_error 400 INVALID_ARGUMENT "raise a MANUAL volume past the budget"
expect_true '.error.message | test("360")' "raise message names 360 MiB/s available to this volume"
aq_req PATCH "$PL/storagePools/man?updateMask=capacityGib" '{"capacityGib":"20480"}'
expect_error 400 INVALID_ARGUMENT "shrink a MANUAL pool below its volumes' throughput (20 TiB -> 1280 < 2300)"
aq_req GET "$PL/storagePools/man"
expect_jq .capacityGib 40960 "refused shrink left the pool as it was"
aq_req PATCH "$PL/storagePools/man?updateMask=qosType" '{"qosType":"AUTO"}'
expect_true '.error.status == "INVALID_ARGUMENT" or .error.status == "FAILED_PRECONDITION"' "MANUAL -> AUTO refused"
expect_status 400 "MANUAL -> AUTO refused"
aq_req GET "$PL/storagePools/man"
expect_jq .qosType MANUAL "pool still MANUAL"

# Concurrent MANUAL creates never overcommit the budget: 12 x 300 MiB/s into 2560.
aq_req POST "$PL/storagePools?storagePoolId=race" "$(pool_body PREMIUM 40960 '"qosType":"MANUAL"')"
expect_status 200 "create a second MANUAL Premium 40 TiB pool"
seq 12 | xargs -P 12 -I@ curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $ADMIN" \
	--data-binary "$(vol_body race 1024 s-race-@ '"throughputMibps":300')" "$AQ_URL$PL/volumes?volumeId=race-@" \
	>"$AQ_TMP/race"
expect_eq "exactly floor(2560 / 300) = 8 of 12 concurrent MANUAL creates fit" "8 4" \
	"$(grep -c '^200$' "$AQ_TMP/race") $(grep -c '^400$' "$AQ_TMP/race")"
aq_req GET "$PL/storagePools/race"
expect_jq .availableThroughputMibps 160 "race pool: 2560 - 8 x 300 = 160 left"
expect_jq .volumeCount 8 "race pool holds 8 volumes"

# AUTO -> MANUAL: volumes keep the limit they had.
aq_req POST "$PL/storagePools?storagePoolId=auto2man" "$(pool_body PREMIUM 2048)"
expect_status 200 "create AUTO Premium 2 TiB pool"
aq_mutate POST "$PL/volumes?volumeId=v-a2m" "$(vol_body auto2man 1024 s-a2m)"
expect_jq .response.throughputMibps 64 "AUTO Premium 1 TiB volume -> 64 MiB/s"
aq_req PATCH "$PL/storagePools/auto2man?updateMask=qosType" '{"qosType":"MANUAL"}'
expect_status 200 "AUTO -> MANUAL allowed"
aq_req GET "$PL/storagePools/auto2man"
expect_jq .qosType MANUAL "pool is MANUAL now"
expect_jq .availableThroughputMibps 64 "available = 128 - the volume's 64"
aq_req GET "$PL/volumes/v-a2m"
expect_jq .throughputMibps 64 "volume keeps 64 MiB/s after AUTO -> MANUAL"
aq_req PATCH "$PL/storagePools/auto2man?updateMask=qosType" '{"qosType":"AUTO"}'
expect_status 400 "MANUAL -> AUTO refused after the switch"

# === FLEX ==================================================================
aq_req POST "$PL/storagePools?storagePoolId=flex" \
	"$(pool_body FLEX 1024 '"customPerformanceEnabled":true,"totalThroughputMibps":"128"')"
expect_status 200 "create FLEX custom-performance pool at 128 MiB/s"
expect_jq .response.totalIops 2048 "FLEX custom 128 MiB/s -> totalIops 2048"
expect_jq '.response.totalIops | type' string "totalIops is a JSON string"
expect_jq .response.totalThroughputMibps 128 "FLEX custom totalThroughputMibps"
aq_req POST "$PL/storagePools?storagePoolId=flex-low" \
	"$(pool_body FLEX 1024 '"customPerformanceEnabled":true,"totalThroughputMibps":"63"')"
expect_error 400 INVALID_ARGUMENT "FLEX custom throughput under 64"
aq_req POST "$PL/storagePools?storagePoolId=flex-high" \
	"$(pool_body FLEX 1024 '"customPerformanceEnabled":true,"totalThroughputMibps":"5121"')"
expect_error 400 INVALID_ARGUMENT "FLEX custom throughput over 5120"
aq_req POST "$PL/storagePools?storagePoolId=flex-dflt" "$(pool_body FLEX 10240)"
expect_status 200 "create FLEX default pool of 10 TiB"
expect_jq .response.totalThroughputMibps 160 "FLEX default: 10 TiB x 16 = 160 MiB/s"
aq_req POST "$PL/storagePools?storagePoolId=std-small" "$(pool_body STANDARD 2047)"
expect_error 400 INVALID_ARGUMENT "Standard pool under 2 TiB"
aq_req POST "$PL/storagePools?storagePoolId=std-big" "$(pool_body STANDARD 204801)"
expect_error 400 INVALID_ARGUMENT "Standard pool over 200 TiB"

# FLEX default performance: 16 MiB/s per TiB capped at 1,600; IOPS 1,024 per TiB capped at 60,000.
aq_req POST "$PL/storagePools?storagePoolId=flex-huge" "$(pool_body FLEX 307200)"
expect_status 200 "create FLEX 300 TiB pool (largest Flex)"
expect_jq .response.totalThroughputMibps 1600 "FLEX 300 TiB: 4,800 capped at 1,600 MiB/s"
expect_jq .response.totalIops 60000 "FLEX 300 TiB: IOPS capped at 60,000"
aq_req POST "$PL/storagePools?storagePoolId=flex-over" "$(pool_body FLEX 307201)"
expect_error 400 INVALID_ARGUMENT "FLEX pool over 300 TiB"
aq_req PATCH "$PL/storagePools/flex-dflt?updateMask=capacityGib" '{"capacityGib":"9216"}'
expect_error 400 INVALID_ARGUMENT "FLEX pools only grow"
aq_req PATCH "$PL/storagePools/flex-dflt?updateMask=capacityGib" '{"capacityGib":"20480"}'
expect_status 200 "FLEX pool grows"
expect_jq .response.totalThroughputMibps 320 "FLEX default: 20 TiB x 16 = 320 MiB/s"
aq_mutate POST "$PL/volumes?volumeId=v-flex1" "$(vol_body flex-dflt 1 s-flex1)"
expect_status 200 "FLEX volume of 1 GiB"
aq_req POST "$PL/storagePools?storagePoolId=flex-iops" \
	"$(pool_body FLEX 1024 '"customPerformanceEnabled":true,"totalThroughputMibps":"5120","totalIops":"160001"')"
expect_error 400 INVALID_ARGUMENT "FLEX custom totalIops over 160,000"
aq_req POST "$PL/storagePools?storagePoolId=flex-max" \
	"$(pool_body FLEX 1024 '"customPerformanceEnabled":true,"totalThroughputMibps":"5120"')"
expect_status 200 "FLEX custom at the 5,120 MiB/s maximum"
expect_jq .response.totalIops 81920 "FLEX custom 5,120 MiB/s -> 16 x 5,120 = 81,920 IOPS"
aq_req POST "$PL/storagePools?storagePoolId=prem-custom" "$(pool_body PREMIUM 2048 '"customPerformanceEnabled":true,"totalThroughputMibps":"128"')"
expect_error 400 INVALID_ARGUMENT "custom performance outside FLEX"

# Standard: 16 MiB/s per TiB, volume cap 1,600 MiB/s.
aq_req POST "$PL/storagePools?storagePoolId=std" "$(pool_body STANDARD 204800)"
expect_status 200 "Standard 200 TiB pool"
aq_mutate POST "$PL/volumes?volumeId=v-std" "$(vol_body std 10240 s-std)"
expect_jq .response.throughputMibps 160 "Standard 10 TiB volume -> 160 MiB/s"
aq_req POST "$PL/storagePools?storagePoolId=std-tier" "$(pool_body STANDARD 2048 '"allowAutoTiering":true')"
expect_error 400 INVALID_ARGUMENT "auto-tiering on a Standard pool"
aq_mutate POST "$PL/volumes?volumeId=v-std-large" "$(vol_body std 20480 s-std-large '"largeCapacity":true')"
expect_error 400 INVALID_ARGUMENT "large-capacity volume in a Standard pool"

# Large-capacity volumes: 15 TiB-3 PiB, capped at 30,720 MiB/s.
aq_req POST "$PL/storagePools?storagePoolId=ext-huge" "$(pool_body EXTREME 307200)"
expect_status 200 "Extreme 300 TiB pool"
aq_mutate POST "$PL/volumes?volumeId=v-large" "$(vol_body ext-huge 256000 s-large '"largeCapacity":true')"
expect_status 200 "large-capacity Extreme volume of 250 TiB"
expect_jq .response.throughputMibps 30720 "large volume: 250 TiB x 128 = 32,000 capped at 30,720"
aq_mutate POST "$PL/volumes?volumeId=v-large-small" "$(vol_body ext-huge 15359 s-large-small '"largeCapacity":true')"
expect_error 400 INVALID_ARGUMENT "large-capacity volume under 15 TiB"
aq_mutate POST "$PL/volumes?volumeId=v-large-min" "$(vol_body ext-huge 15360 s-large-min '"largeCapacity":true')"
expect_status 200 "large-capacity volume of exactly 15 TiB"
expect_jq .response.throughputMibps 1920 "large volume 15 TiB x 128 = 1,920"

# Auto-tiering: only in pools with allowAutoTiering, which stays on; 2..183 days, default 31.
aq_mutate POST "$PL/volumes?volumeId=v-tier-no" "$(vol_body prem 100 s-tier-no '"tieringPolicy":{"tierAction":"ENABLED"}')"
expect_error 400 INVALID_ARGUMENT "tieringPolicy in a pool without allowAutoTiering"
aq_req POST "$PL/storagePools?storagePoolId=tier" "$(pool_body PREMIUM 4096 '"allowAutoTiering":true')"
expect_status 200 "Premium pool with allowAutoTiering"
aq_mutate POST "$PL/volumes?volumeId=v-tier" "$(vol_body tier 1024 s-tier '"tieringPolicy":{"tierAction":"ENABLED"}')"
expect_status 200 "volume with tiering enabled"
expect_jq .response.tieringPolicy.coolingThresholdDays 31 "coolingThresholdDays defaults to 31"
expect_jq .response.throughputMibps 64 "tiering volume with nothing cold: 1 TiB hot x 64"
aq_mutate POST "$PL/volumes?volumeId=v-tier1" "$(vol_body tier 100 s-tier1 '"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":1}')"
expect_error 400 INVALID_ARGUMENT "coolingThresholdDays 1"
aq_mutate POST "$PL/volumes?volumeId=v-tier184" "$(vol_body tier 100 s-tier184 '"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":184}')"
expect_error 400 INVALID_ARGUMENT "coolingThresholdDays 184"
aq_mutate POST "$PL/volumes?volumeId=v-tier183" "$(vol_body tier 100 s-tier183 '"tieringPolicy":{"tierAction":"PAUSED","coolingThresholdDays":183}')"
expect_status 200 "coolingThresholdDays 183"
aq_mutate PATCH "$PL/volumes/v-tier?updateMask=tieringPolicy.coolingThresholdDays" '{"tieringPolicy":{"coolingThresholdDays":2}}'
expect_status 200 "patch a nested mask path"
aq_req GET "$PL/volumes/v-tier"
expect_jq .tieringPolicy.coolingThresholdDays 2 "nested path changed"
expect_jq .tieringPolicy.tierAction ENABLED "sibling of the nested path untouched"
aq_req PATCH "$PL/storagePools/tier?updateMask=allowAutoTiering" '{"allowAutoTiering":false}'
expect_status 400 "allowAutoTiering cannot be switched off"
aq_req PATCH "$PL/storagePools/prem?updateMask=allowAutoTiering&validateOnly=true" '{"allowAutoTiering":true}'
expect_status 200 "allowAutoTiering can be switched on (validateOnly)"

# Volumes move between Premium and Extreme pools only.
aq_mutate PATCH "$PL/volumes/v-ext4?updateMask=storagePool" '{"storagePool":"ext-huge"}'
expect_status 200 "move a volume to another Extreme pool"
aq_mutate PATCH "$PL/volumes/v-ext4?updateMask=storagePool" '{"storagePool":"flex-dflt"}'
expect_error 400 INVALID_ARGUMENT "move a volume into a FLEX pool"
aq_req GET "$PL/volumes/v-ext4"
expect_jq .storagePool ext-huge "volume now in ext-huge"
aq_req GET "$PL/storagePools/ext"
expect_jq .volumeCount 0 "the pool it left is empty"

# validateOnly on the top-level resources
aq_req POST "/v1/projects?projectId=vo-proj&validateOnly=true" '{}'
expect_status 200 "validateOnly project create"
aq_req GET /v1/projects/vo-proj
expect_error 404 NOT_FOUND "validateOnly project create stored nothing"
aq_req POST "/v1/locations?locationId=vo-loc&validateOnly=true" '{}'
expect_status 200 "validateOnly location create"
aq_req GET /v1/locations/vo-loc
expect_error 404 NOT_FOUND "validateOnly location create stored nothing"
aq_req POST "/v1/projects?projectId=1bad" '{}'
expect_error 400 INVALID_ARGUMENT "bad project ID"
aq_req POST "/v1/locations?locationId=bad_loc" '{}'
expect_error 400 INVALID_ARGUMENT "bad location ID"

# === PATCH with updateMask =================================================
aq_req PATCH "$PL/storagePools/prem?updateMask=description" '{"description":"second","capacityGib":"4096","labels":{}}'
expect_status 200 "patch pool description (camelCase mask)"
aq_req GET "$PL/storagePools/prem"
expect_jq .description second "description changed"
expect_jq .capacityGib 2048 "capacityGib outside the mask untouched"
expect_jq .labels.team a "labels outside the mask untouched"
aq_req PATCH "$PL/storagePools/prem?updateMask=capacity_gib" '{"capacityGib":"4096"}'
expect_status 200 "patch pool capacity with snake_case mask capacity_gib"
expect_jq .response.capacityGib 4096 "operation response shows the new capacity"
aq_req GET "$PL/storagePools/prem"
expect_jq .capacityGib 4096 "pool capacity is 4096"
expect_jq .totalThroughputMibps 256 "budget follows capacity: 4 TiB x 64"
expect_jq .description second "description outside the mask untouched"
aq_req PATCH "$PL/storagePools/prem" '{"description":"x"}'
expect_error 400 INVALID_ARGUMENT "patch without updateMask"
aq_req PATCH "$PL/storagePools/prem?updateMask=serviceLevel" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME"}'
expect_error 400 INVALID_ARGUMENT "patch of immutable serviceLevel"
aq_req PATCH "$PL/storagePools/prem?updateMask=service_level" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME"}'
expect_error 400 INVALID_ARGUMENT "patch of immutable service_level (snake_case)"
aq_req PATCH "$PL/storagePools/prem?updateMask=noSuchField" '{"description":"x"}'
expect_error 400 INVALID_ARGUMENT "patch of an unknown mask path"
aq_req GET "$PL/storagePools/prem"
expect_jq .serviceLevel PREMIUM "serviceLevel unchanged"
expect_jq .description second "refused patches changed nothing"
aq_req PATCH "$PL/storagePools/nosuch?updateMask=description" '{"description":"x"}'
expect_error 404 NOT_FOUND "patch unknown pool"

aq_mutate PATCH "$PL/volumes/v-prem?updateMask=capacity_gib,description&validateOnly=true" '{"capacityGib":"2000","description":"d2"}'
expect_status 200 "validateOnly patch of a volume"
expect_jq .response.capacityGib 2000 "validateOnly patch: new capacity in the answer"
expect_jq .response.throughputMibps 125 "validateOnly patch: Premium 2,000 GiB -> 125 MiB/s"
aq_req GET "$PL/volumes/v-prem"
expect_jq .capacityGib 1500 "validateOnly patch stored nothing (capacity)"
expect_jq .description d1 "validateOnly patch stored nothing (description)"
aq_mutate PATCH "$PL/volumes/v-prem?updateMask=capacity_gib" '{"capacityGib":"2000","description":"ignored"}'
expect_status 200 "patch volume capacity (snake_case mask)"
aq_req GET "$PL/volumes/v-prem"
expect_jq .capacityGib 2000 "volume capacity changed"
expect_jq .throughputMibps 125 "AUTO volume throughput follows capacity: 2000/1024 x 64"
expect_jq .description d1 "description outside the mask untouched"
expect_jq .labels.k v "labels outside the mask untouched"
aq_mutate PATCH "$PL/volumes/v-prem?updateMask=shareName" '{"shareName":"other"}'
expect_error 400 INVALID_ARGUMENT "patch of immutable shareName"
aq_mutate PATCH "$PL/volumes/v-prem?updateMask=share_name" '{"shareName":"other"}'
expect_error 400 INVALID_ARGUMENT "patch of immutable share_name (snake_case)"
aq_mutate PATCH "$PL/volumes/v-prem" '{"description":"x"}'
expect_error 400 INVALID_ARGUMENT "volume patch without updateMask"
aq_req GET "$PL/volumes/v-prem"
expect_jq .shareName s-prem "shareName unchanged"

aq_req PATCH "$PL/storagePools/prem?updateMask=capacityGib&validateOnly=true" '{"capacityGib":"8192"}'
expect_status 200 "validateOnly pool patch"
expect_jq .response.totalThroughputMibps 512 "validateOnly pool patch: 8 TiB x 64 = 512"
aq_req GET "$PL/storagePools/prem"
expect_jq .capacityGib 4096 "validateOnly pool patch stored nothing"

n_pools=$(count "$PL/storagePools" storagePools)
aq_req POST "$PL/storagePools?storagePoolId=vo-pool&validateOnly=true" "$(pool_body EXTREME 4096)"
expect_status 200 "validateOnly pool create"
expect_jq .response.totalThroughputMibps 512 "validateOnly pool create: Extreme 4 TiB budget 512"
aq_req GET "$PL/storagePools/vo-pool"
expect_error 404 NOT_FOUND "validateOnly pool create stored nothing"
expect_eq "validateOnly pool create: list unchanged" "$n_pools" "$(count "$PL/storagePools" storagePools)"

# === paging, orderBy, filter ================================================
PG=/v1/projects/$P/locations/eu-west4
expected=""
for i in 1 2 3 4 5 6 7; do
	aq_req POST "$PG/storagePools?storagePoolId=pg-$i" "$(pool_body PREMIUM 2048)"
	[ "$STATUS" = 200 ] || aq_failed "create paging pool pg-$i"
	expected="$expected projects/$P/locations/eu-west4/storagePools/pg-$i"
done
aq_req POST "$PG/storagePools?storagePoolId=pg-x" "$(pool_body EXTREME 2048)"
expect_status 200 "create an Extreme pool among the Premium ones"
expected=$(echo $expected)

# page_through PATH PLURAL QUERY: sets GOT to the names over all pages of
# pageSize=3 (space-separated) and PAGES to the number of pages.
page_through() {
	local tok="" names="" q
	PAGES=0
	while :; do
		q="$3&pageSize=3"
		[ -n "$tok" ] && q="$q&pageToken=$(jq -rn --arg t "$tok" '$t|@uri')"
		aq_req GET "$1?$q"
		[ "$STATUS" = 200 ] || { GOT="HTTP $STATUS"; return; }
		PAGES=$((PAGES + 1))
		names="$names $(printf '%s' "$BODY" | jq -r --arg p "$2" '[.[$p][].name] | join(" ")')"
		[ "$(printf '%s' "$BODY" | jq --arg p "$2" '.[$p] | length')" -le 3 ] ||
			aq_failed "a page holds at most pageSize items"
		tok=$(printf '%s' "$BODY" | jq -r '.nextPageToken // ""')
		[ -n "$tok" ] || break
		[ $PAGES -lt 20 ] || break
	done
	GOT=$(echo $names)
}
page_through "$PG/storagePools" storagePools "filter=serviceLevel%3DPREMIUM"
got=$GOT
expect_eq "filter=serviceLevel=PREMIUM, pageSize=3: each of 7 pools once, in name order" "$expected" "$got"
page_through "$PG/storagePools" storagePools "filter=serviceLevel%3DPREMIUM&orderBy=name%20desc"
got=$GOT
expect_eq "orderBy=name desc: reversed" "$(echo "$expected" | tr ' ' '\n' | tac | xargs)" "$got"
aq_req GET "$PG/storagePools?filter=serviceLevel%3DEXTREME"
expect_jq '[.storagePools[].name] | join(",")' "projects/$P/locations/eu-west4/storagePools/pg-x" "filter=serviceLevel=EXTREME"
aq_req GET "$PG/storagePools?pageSize=3"
expect_jq '.storagePools | length' 3 "first page of 8 with pageSize=3"
expect_true 'has("nextPageToken")' "first page has a nextPageToken"
aq_req GET "$PG/storagePools?pageToken=garbage"
expect_error 400 INVALID_ARGUMENT "a forged pageToken"
aq_req GET "$PG/storagePools?orderBy=capacityGib"
expect_error 400 INVALID_ARGUMENT "orderBy on an unsupported field"
aq_req GET "$PG/storagePools?pageSize=-1"
expect_error 400 INVALID_ARGUMENT "negative pageSize"

# volumes: 7 in one pool, paged both ways
aq_req POST "$PG/storagePools?storagePoolId=vols" "$(pool_body PREMIUM 2048)"
expected=""
for i in 1 2 3 4 5 6 7; do
	aq_mutate POST "$PG/volumes?volumeId=vol-$i" "$(vol_body vols 100 pgs-$i)"
	[ "$STATUS" = 200 ] || aq_failed "create paging volume vol-$i"
	expected="$expected projects/$P/locations/eu-west4/volumes/vol-$i"
done
expected=$(echo $expected)
page_through "$PG/volumes" volumes ""
got=$GOT
expect_eq "volumes, pageSize=3: each of 7 once, in order" "$expected" "$got"
expect_eq "7 volumes in 3 pages" 3 "$PAGES"
page_through "$PG/volumes" volumes "orderBy=name%20desc"
got=$GOT
expect_eq "volumes orderBy=name desc: reversed" "$(echo "$expected" | tr ' ' '\n' | tac | xargs)" "$got"
aq_req GET "$PG/volumes?filter=shareName%3D%22pgs-4%22"
expect_jq '[.volumes[].name] | join(",")' "projects/$P/locations/eu-west4/volumes/vol-4" "volume filter shareName=\"pgs-4\""
page_through "$PG/operations" operations ""
got=$GOT
expect_eq "operations page through (9 pool + 7 volume creates)" 16 "$(echo "$got" | wc -w)"

# === delete ================================================================
aq_req DELETE "$PG/storagePools/vols"
expect_error 400 FAILED_PRECONDITION "delete a pool that holds volumes"
aq_mutate DELETE "$PG/volumes/vol-7?force=true"
expect_status 200 "delete a volume with force=true"
expect_jq .done true "delete operation done"
expect_jq .metadata.verb delete "delete operation verb"
OP_DEL=$(printf '%s' "$BODY" | jq -r .name)
aq_req GET "/v1/$OP_DEL"
expect_status 200 "delete operation is stored"
aq_req GET "$PG/volumes/vol-7"
expect_error 404 NOT_FOUND "deleted volume is gone"
aq_mutate DELETE "$PG/volumes/vol-7"
expect_error 404 NOT_FOUND "delete it again"
aq_mutate DELETE "$PG/volumes/vol-6?force=maybe"
expect_error 400 INVALID_ARGUMENT "force must be true or false"
aq_req GET "$PG/storagePools/vols"
expect_jq .volumeCount 6 "pool volumeCount after a delete"
expect_jq .volumeCapacityGib 600 "pool volumeCapacityGib after a delete"

# projects: delete refused while holding pools; an empty one goes
aq_req DELETE "/v1/projects/$P"
expect_error 400 FAILED_PRECONDITION "delete a project that holds pools"
aq_req GET "/v1/projects/$P"
expect_status 200 "refused project delete left it there"
aq_req DELETE /v1/projects/proj-empty
expect_status 200 "delete an empty project"
aq_req GET /v1/projects/proj-empty
expect_error 404 NOT_FOUND "deleted project is gone"
aq_req DELETE /v1/projects/proj-empty
expect_error 404 NOT_FOUND "delete a project twice"

# === unknown paths and methods =============================================
aq_req GET /v1/nothing-here
expect_error 404 NOT_FOUND "unknown path"
aq_req PUT "$PL/storagePools/prem" '{}'
ok "wrong method on a known path is 405" test "$STATUS" = 405

aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
aq_finish
