#!/usr/bin/env bash
# tests/e2e/test_tier.sh: issue 11, acceptance 1, through the real programs.
# aquiferd and one aquifer-agent per location with 1-second days
# (--tier-day-seconds 1); one location's coldStore is an S3-API server on
# loopback (s3rver, behind aq-latproxy so the test sees each request's
# Authorization header: SigV4), the other's a directory. A PREMIUM pool with
# allowAutoTiering, a volume with tieringPolicy ENABLED and a 2-day
# threshold; 256 MiB written over NFS (libnfs nfs-cp). After a few "days"
# the volume's hotTierSizeUsedGib falls, coldTierSizeGib > 0, objects appear
# in the store, the metrics show the tiered bytes, and nfs-cat reads back
# identical bytes. With the S3 store down, the volume stays READY and its
# stateDetails says why until the store is back.
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/agent/tier/s3.sh"
trap 'aq_s3_cleanup; aq_cleanup' EXIT

for tool in nfs-cp nfs-cat sha256sum; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done
TIMEOUT=${AQ_TIER_TIMEOUT:-60}
MIB=1048576

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/projects?projectId=acme" '{}'

aq_s3_setup
aq_s3_start "$AQ_TMP/s3" || { aq_failed "s3rver starts"; aq_finish; }
aq_proxy_start "$AQ_S3_PORT" 0 "$AQ_TMP/s3-requests.log" || { aq_failed "aq-latproxy starts"; aq_finish; }
BUCKET=aquifer-cold
curl -s -o /dev/null -w '%{http_code}' -X PUT "$AQ_S3_ENDPOINT/$BUCKET" >"$AQ_TMP/mb.code"
ok "bucket $BUCKET created in s3rver" grep -q '^200$' "$AQ_TMP/mb.code"

head -c $((256 * MIB)) /dev/urandom >"$AQ_TMP/data.bin"
SUM=$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)

# s3_objects: how many objects the bucket holds (s3rver's ListObjectsV2 over
# the proxy-free endpoint, unsigned: s3rver serves anonymous reads).
s3_objects() {
	curl -s "$AQ_S3_ENDPOINT/$BUCKET?list-type=2&max-keys=1000" | grep -o '<Key>' | wc -l
}

# tier_case LOCATION COLDSTORE_JSON OBJECTS_CMD: the whole acceptance in one location.
tier_case() {
	local loc=$1 store=$2 objects=$3 PL=/v1/projects/acme/locations/$1 join port v hot0 hot cold url n t0
	aq_req POST "/v1/locations?locationId=$loc" "{\"coldStore\":$store}"
	expect_status 200 "$loc: location with its coldStore"
	join=$(aq_join_token "$loc")
	AQ_AGENT_ARGS=(--tier-day-seconds 1)
	aq_agent_start "$D" "node-$loc" "$loc" "$AQ_TMP/shelf-$loc" "$join" 100000 ||
		{ aq_failed "$loc: agent starts"; return 1; }
	aq_req POST "$PL/storagePools?storagePoolId=tp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048","allowAutoTiering":true}'
	expect_status 200 "$loc: PREMIUM pool with allowAutoTiering"
	aq_mutate POST "$PL/volumes?volumeId=tv" '{"storagePool":"tp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"tv",
		"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":2},
		"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
	expect_jq .response.state READY "$loc: volume tv (tiering ENABLED, 2 days) READY"
	port=$(printf '%s' "$BODY" | jq -r '.response.mountOptions[0].port')
	url="nfs://127.0.0.1/tv/data.bin?version=3&nfsport=$port&mountport=$port"
	ok "$loc: nfs-cp writes 256 MiB" nfs-cp "$AQ_TMP/data.bin" "$url"
	# the write shows as hot data first
	for _ in $(seq 100); do
		aq_req GET "$PL/volumes/tv"
		hot0=$(printf '%s' "$BODY" | jq -r .hotTierSizeUsedGib)
		[ "${hot0:-0}" -gt 0 ] && break
		sleep 0.1
	done
	ok "$loc: the written data is reported hot first (hotTierSizeUsedGib $hot0)" test "${hot0:-0}" -gt 0
	# a few 1-second days later the data has moved
	t0=$(date +%s.%N)
	for _ in $(seq $((TIMEOUT * 5))); do
		aq_req GET "$PL/volumes/tv"
		hot=$(printf '%s' "$BODY" | jq -r .hotTierSizeUsedGib)
		cold=$(printf '%s' "$BODY" | jq -r .coldTierSizeGib)
		[ "${cold:-0}" -gt 0 ] && [ "${hot:-0}" -lt "$hot0" ] && break
		sleep 0.2
	done
	echo "# $loc: the API showed the data cold after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
	ok "$loc: within ${TIMEOUT}s coldTierSizeGib > 0 ($cold)" test "${cold:-0}" -gt 0
	ok "$loc: hotTierSizeUsedGib fell ($hot0 -> $hot)" test "${hot:-0}" -lt "$hot0"
	expect_jq .state READY "$loc: the volume stays READY"
	aq_req GET "$PL/storagePools/tp"
	expect_jq .coldTierSizeUsedGib "$cold" "$loc: the pool's coldTierSizeUsedGib sums it"
	n=$($objects)
	ok "$loc: objects appear in the cold store ($n)" test "${n:-0}" -gt 0
	aq_req GET "$PL/volumes/tv/metrics?window=5m"
	v=$(printf '%s' "$BODY" | jq -r '.points[-1].tieredBytes // "0"')
	ok "$loc: the time series shows most of the file tiered ($v bytes)" test "$v" -ge $((200 * MIB))
	aq_req GET /metrics # the cluster admin's token (metrics_auth)
	v=$(printf '%s\n' "$BODY" | awk -v l="location=\"$loc\"" 'index($0, "aquifer_volume_auto_tiering_tiered_bytes{") == 1 && index($0, l) { print $2 }')
	ok "$loc: /metrics aquifer_volume_auto_tiering_tiered_bytes ($v)" awk -v v="${v:-0}" -v m=$((200 * MIB)) 'BEGIN { exit !(v + 0 >= m) }'
	nfs-cat "$url" >"$AQ_TMP/back-$loc.bin" 2>/dev/null
	expect_eq "$loc: reading back over NFS gives identical bytes" "$SUM" "$(sha256sum <"$AQ_TMP/back-$loc.bin" | cut -c1-64)"
	rm -f "$AQ_TMP/back-$loc.bin"
}

tier_case s3loc "{\"s3\":{\"endpoint\":\"$AQ_PROXY_ENDPOINT\",\"bucket\":\"$BUCKET\",\"accessKeyId\":\"$AQ_S3_ACCESS_KEY\",\"secretAccessKey\":\"$AQ_S3_SECRET_KEY\"}}" s3_objects
ok "the agent's S3 requests carry SigV4 Authorization headers" \
	grep -q "AWS4-HMAC-SHA256 Credential=$AQ_S3_ACCESS_KEY/[0-9]\{8\}/us-east-1/s3/aws4_request" "$AQ_TMP/s3-requests.log"
ok "no S3 request went unsigned" sh -c "! grep -E '^(PUT|GET|HEAD|DELETE|POST) ' '$AQ_TMP/s3-requests.log' | grep -qE ' -( conn=[0-9]+)?\$'"

# The store goes away (acceptance 4, the control plane's part): the volume
# stays READY and its stateDetails says why until the store is back.
PL=/v1/projects/acme/locations/s3loc
aq_req GET "$PL/volumes/tv"
port=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
aq_proxy_down
# a cold read meets the dead store (it waits, the client retries: bounded here)
timeout 20 nfs-cat "nfs://127.0.0.1/tv/data.bin?version=3&nfsport=$port&mountport=$port" >/dev/null 2>&1 &
READER=$!
AQ_PIDS+=("$READER")
details=
for _ in $(seq 150); do
	aq_req GET "$PL/volumes/tv"
	details=$(printf '%s' "$BODY" | jq -r '.stateDetails // ""')
	[ -n "$details" ] && break
	sleep 0.2
done
ok "store down: the volume's stateDetails says why ($details)" test -n "$details"
expect_jq .state READY "store down: the volume stays READY"
aq_proxy_up
for _ in $(seq 150); do
	aq_req GET "$PL/volumes/tv"
	details=$(printf '%s' "$BODY" | jq -r '.stateDetails // ""')
	[ -z "$details" ] && break
	sleep 0.2
done
expect_eq "store back: stateDetails cleared" "" "$details"
wait "$READER" 2>/dev/null

COLD_DIR=$AQ_TMP/cold-dir
dir_objects() { find "$COLD_DIR" -type f 2>/dev/null | wc -l; }
tier_case dirloc "{\"directory\":{\"path\":\"$COLD_DIR\"}}" dir_objects

aq_sanitizer_clean "$D"
aq_finish
