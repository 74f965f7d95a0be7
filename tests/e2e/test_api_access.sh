#!/usr/bin/env bash
# tests/e2e/test_api_access.sh: what a real aquiferd refuses and who may call
# it (issue 2): bad input gets the Google error body and changes nothing,
# auth and project isolation, the metrics those requests leave, and server
# scans past the first page of a collection (split from test_api.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"

# === what the checks below need: the state test_api.sh reaches ===========
# Two locations with a node each, projects proj-a and proj-b, Premium pool
# prem of 4 TiB in proj-a's $L holding volume v-prem of 2,000 GiB.
aq_req POST "/v1/locations?locationId=$L" '{}'
expect_status 200 "cluster admin creates location $L"
aq_req POST "/v1/locations?locationId=eu-west4" '{}'
expect_status 200 "cluster admin creates location eu-west4"
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }
aq_agent_for eu-west4 || { aq_failed "a storage node joins eu-west4"; aq_finish; }
for p in "$P" proj-b; do
	aq_req POST "/v1/projects?projectId=$p" '{}'
	expect_status 200 "create project $p"
done
aq_req POST "$PL/storagePools?storagePoolId=prem" "$(pool_body PREMIUM 4096)"
expect_status 200 "create Premium 4 TiB pool prem"
aq_mutate POST "$PL/volumes?volumeId=v-prem" "$(vol_body prem 2000 s-prem)"
expect_status 200 "create Premium 2,000 GiB volume v-prem"

# === bad input: each class gets the Google error body and changes nothing ===
bad_pool() { # DESC HTTP STATUSNAME QUERY BODY
	local before after
	before=$(count "$PL/storagePools" storagePools)
	aq_req POST "$PL/storagePools?$4" "$5"
	expect_error "$2" "$3" "$1"
	after=$(count "$PL/storagePools" storagePools)
	expect_eq "$1: pool list unchanged" "$before" "$after"
}
bad_pool "broken JSON" 400 INVALID_ARGUMENT storagePoolId=bad1 '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":'
bad_pool "JSON that is not an object" 400 INVALID_ARGUMENT storagePoolId=bad1 '["PREMIUM"]'
bad_pool "unknown field" 400 INVALID_ARGUMENT storagePoolId=bad1 "$(pool_body PREMIUM 2048 '"colour":"blue"')"
bad_pool "wrong type (capacityGib true)" 400 INVALID_ARGUMENT storagePoolId=bad1 '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":true}'
bad_pool "wrong type (capacityGib \"lots\")" 400 INVALID_ARGUMENT storagePoolId=bad1 '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"lots"}'
bad_pool "wrong type (description 5)" 400 INVALID_ARGUMENT storagePoolId=bad1 "$(pool_body PREMIUM 2048 '"description":5')"
bad_pool "unknown enum value" 400 INVALID_ARGUMENT storagePoolId=bad1 "$(pool_body GOLD 2048)"
bad_pool "unknown qosType" 400 INVALID_ARGUMENT storagePoolId=bad1 "$(pool_body PREMIUM 2048 '"qosType":"FAST"')"
bad_pool "missing required serviceLevel" 400 INVALID_ARGUMENT storagePoolId=bad1 '{"capacityGib":"2048"}'
bad_pool "duplicate keys" 400 INVALID_ARGUMENT storagePoolId=bad1 '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048","capacityGib":"4096"}'
bad_pool "bad ID 1abc (starts with a digit)" 400 INVALID_ARGUMENT storagePoolId=1abc "$(pool_body PREMIUM 2048)"
bad_pool "bad ID a_b (underscore)" 400 INVALID_ARGUMENT storagePoolId=a_b "$(pool_body PREMIUM 2048)"
bad_pool "bad ID ending in a hyphen" 400 INVALID_ARGUMENT storagePoolId=abc- "$(pool_body PREMIUM 2048)"
bad_pool "bad ID of 64 characters" 400 INVALID_ARGUMENT "storagePoolId=a$(printf '%063d' 0)" "$(pool_body PREMIUM 2048)"
bad_pool "missing ID" 400 INVALID_ARGUMENT "" "$(pool_body PREMIUM 2048)"
bad_pool "empty ID" 400 INVALID_ARGUMENT "storagePoolId=" "$(pool_body PREMIUM 2048)"
bad_pool "duplicate ID" 409 ALREADY_EXISTS storagePoolId=prem "$(pool_body PREMIUM 2048)"
aq_req GET "$PL/storagePools/prem"
expect_jq .capacityGib 4096 "duplicate create left the existing pool as it was"
# AIP-203: output-only fields sent in a request are ignored, not refused.
aq_req POST "$PL/storagePools?storagePoolId=out-only" "$(pool_body PREMIUM 2048 '"state":"ERROR","volumeCount":7')"
expect_status 200 "output-only fields in a create are ignored"
aq_req GET "$PL/storagePools/out-only"
expect_jq .state READY "output-only state was not taken from the request"
expect_jq .volumeCount 0 "output-only volumeCount was not taken from the request"
aq_req POST "$PL/storagePools?storagePoolId=a$(printf '%062d' 0)" "$(pool_body PREMIUM 2048)"
expect_status 200 "an ID of exactly 63 characters is fine"

# body over 1 MiB -> 413
head -c $((1024 * 1024 + 16)) /dev/zero | tr '\0' ' ' >"$AQ_TMP/big.json"
printf '%s' "$(pool_body PREMIUM 2048)" >>"$AQ_TMP/big.json"
before=$(count "$PL/storagePools" storagePools)
aq_req POST "$PL/storagePools?storagePoolId=big" "@$AQ_TMP/big.json"
expect_eq "body over 1 MiB (HTTP 413)" 413 "$STATUS"
expect_true '.error.code == 413 and (.error.status | length) > 0 and (.error.message | length) > 0' "413 has the Google error body"
expect_eq "body over 1 MiB: pool list unchanged" "$before" "$(count "$PL/storagePools" storagePools)"
aq_req GET "$PL/storagePools/big"
expect_error 404 NOT_FOUND "the oversized create stored nothing"

# exactly 1 MiB is within the cap
body=$(pool_body PREMIUM 2048)
head -c $((1024 * 1024 - ${#body})) /dev/zero | tr '\0' ' ' >"$AQ_TMP/max.json"
printf '%s' "$body" >>"$AQ_TMP/max.json"
ok "the boundary body is exactly 1 MiB" test "$(stat -c %s "$AQ_TMP/max.json")" = 1048576
aq_req POST "$PL/storagePools?storagePoolId=max-body" "@$AQ_TMP/max.json"
expect_status 200 "a body of exactly 1 MiB is accepted"

bad_vol() { # DESC HTTP STATUSNAME QUERY BODY
	local before after
	before=$(count "$PL/volumes" volumes)
	aq_mutate POST "$PL/volumes?$4" "$5"
	expect_error "$2" "$3" "$1"
	after=$(count "$PL/volumes" volumes)
	expect_eq "$1: volume list unchanged" "$before" "$after"
}
bad_vol "volume: broken JSON" 400 INVALID_ARGUMENT volumeId=bv '{"storagePool":'
bad_vol "volume: unknown field" 400 INVALID_ARGUMENT volumeId=bv "$(vol_body prem 100 s-bv '"size":1')"
bad_vol "volume: wrong type (protocols a string)" 400 INVALID_ARGUMENT volumeId=bv \
	'{"storagePool":"prem","capacityGib":"100","shareName":"s-bv","protocols":"NFSV3"}'
bad_vol "volume: unknown protocol enum" 400 INVALID_ARGUMENT volumeId=bv \
	'{"storagePool":"prem","capacityGib":"100","shareName":"s-bv","protocols":["NFSV5"]}'
bad_vol "volume: bad ID 1abc" 400 INVALID_ARGUMENT volumeId=1abc "$(vol_body prem 100 s-bv)"
bad_vol "volume: bad ID a_b" 400 INVALID_ARGUMENT volumeId=a_b "$(vol_body prem 100 s-bv)"
bad_vol "volume: bad ID of 64 characters" 400 INVALID_ARGUMENT "volumeId=v$(printf '%063d' 0)" "$(vol_body prem 100 s-bv)"
bad_vol "volume: duplicate ID" 409 ALREADY_EXISTS volumeId=v-prem "$(vol_body prem 100 s-bv)"
aq_mutate PATCH "$PL/volumes/v-prem?updateMask=capacityGib" '{"capacityGib":'
expect_error 400 INVALID_ARGUMENT "patch with broken JSON"
aq_mutate PATCH "$PL/volumes/v-prem?updateMask=capacityGib" '{"capacityGib":"2000","bogus":1}'
expect_error 400 INVALID_ARGUMENT "patch with an unknown field"
aq_req PATCH "$PL/storagePools/prem?updateMask=qosType" '{"qosType":"SLOW"}'
expect_error 400 INVALID_ARGUMENT "patch with an unknown enum"
aq_req GET "$PL/volumes/v-prem"
expect_jq .capacityGib 2000 "bad patches changed nothing"

# === auth ===================================================================
EDITOR=$(aq_token "$D" editor "$P")
VIEWER=$(aq_token "$D" viewer "$P")
PADMIN_B=$(aq_token "$D" admin proj-b)
SHORT=$(aq_token "$D" admin "" 1)
OTHER_D=$AQ_TMP/other
mkdir -p "$OTHER_D"
FOREIGN=$(aq_token "$OTHER_D" admin)
now=$(date +%s)
NONE_TOKEN="$(printf '{"alg":"none","typ":"JWT"}' | b64url).$(printf '{"iss":"aquiferd","sub":"x","role":"admin","iat":%d,"exp":%d}' "$now" $((now + 3600)) | b64url)."
# A valid admin token with its payload swapped for one naming another project.
IFS=. read -r h _ s <<<"$EDITOR"
FORGED="$h.$(printf '{"iss":"aquiferd","sub":"cli","role":"admin","iat":%d,"exp":%d}' "$now" $((now + 3600)) | b64url).$s"

unauth() { # DESC TOKEN-or-HEADER
	local desc=$1
	STATUS=$(curl -s -o "$AQ_TMP/auth.out" -w '%{http_code}' -H "$2" "$AQ_URL$PL/storagePools")
	BODY=$(cat "$AQ_TMP/auth.out")
	expect_error 401 UNAUTHENTICATED "$desc"
}
unauth "no Authorization header" "X-Nothing: 1"
unauth "empty bearer" "Authorization: Bearer "
unauth "Basic instead of Bearer" "Authorization: Basic $(printf 'admin:admin' | base64)"
unauth "malformed token" "Authorization: Bearer not.a.jwt"
unauth "garbage token" "Authorization: Bearer abc"
unauth "alg: none token" "Authorization: Bearer $NONE_TOKEN"
unauth "tampered payload (cluster admin claim on an editor signature)" "Authorization: Bearer $FORGED"
unauth "token signed with another aquiferd's key" "Authorization: Bearer $FOREIGN"
ok "a token from the other key is well formed (3 parts)" test "$(echo "$FOREIGN" | tr -cd . | wc -c)" = 2
sleep 2
unauth "expired token (--ttl 1, 2 s later)" "Authorization: Bearer $SHORT"
aq_req_as "$ADMIN" GET "$PL/storagePools"
expect_status 200 "the real admin token still works"

aq_req_as "$VIEWER" GET "$PL/storagePools"
expect_status 200 "viewer lists pools"
aq_req_as "$VIEWER" GET "$PL/volumes/v-prem"
expect_status 200 "viewer gets a volume"
aq_req_as "$VIEWER" GET "$PL/operations"
expect_status 200 "viewer lists operations"
aq_req_as "$VIEWER" POST "$PL/storagePools?storagePoolId=by-viewer" "$(pool_body PREMIUM 2048)"
expect_error 403 PERMISSION_DENIED "viewer cannot create a pool"
aq_mutate_as "$VIEWER" PATCH "$PL/volumes/v-prem?updateMask=description" '{"description":"v"}'
expect_error 403 PERMISSION_DENIED "viewer cannot patch a volume"
aq_mutate_as "$VIEWER" DELETE "$PL/volumes/v-prem"
expect_error 403 PERMISSION_DENIED "viewer cannot delete a volume"
aq_req GET "$PL/storagePools/by-viewer"
expect_error 404 NOT_FOUND "viewer's refused create stored nothing"
aq_req_as "$EDITOR" POST "$PL/storagePools?storagePoolId=by-editor" "$(pool_body PREMIUM 2048)"
expect_status 200 "editor creates a pool"
aq_mutate_as "$EDITOR" POST "$PL/volumes?volumeId=by-editor" "$(vol_body by-editor 100 s-by-editor)"
expect_status 200 "editor creates a volume"
aq_req_as "$EDITOR" POST "/v1/projects?projectId=by-editor" '{}'
expect_error 403 PERMISSION_DENIED "editor cannot create a project"
aq_req_as "$EDITOR" POST "/v1/locations?locationId=by-editor" '{}'
expect_error 403 PERMISSION_DENIED "editor cannot create a location"
aq_req_as "$EDITOR" GET /v1/locations
expect_error 403 PERMISSION_DENIED "editor cannot list cluster locations"
aq_req_as "$EDITOR" GET /v1/projects
expect_status 200 "editor lists projects"
expect_jq '[.projects[].name] | join(",")' "projects/$P" "a project token sees only its project"

# project isolation: proj-a's token learns nothing of proj-b (same answer as for a missing project)
isolation() { # METHOD PATH-TEMPLATE(with @P@) [BODY]
	local m=$1 t=$2 s_real b_real s_none b_none
	aq_req_as "$EDITOR" "$m" "${t//@P@/proj-b}" ${3:+"$3"}
	s_real=$STATUS
	b_real=$(printf '%s' "$BODY" | sed 's/proj-b/@P@/g')
	expect_error 403 PERMISSION_DENIED "proj-a token: $m ${t//@P@/proj-b}"
	aq_req_as "$EDITOR" "$m" "${t//@P@/proj-zz}" ${3:+"$3"}
	s_none=$STATUS
	b_none=$(printf '%s' "$BODY" | sed 's/proj-zz/@P@/g')
	expect_eq "same answer for an existing and a missing project: $m $t" "$s_real $b_real" "$s_none $b_none"
}
aq_req_as "$PADMIN_B" POST "/v1/projects/proj-b/locations/$L/storagePools?storagePoolId=secret" "$(pool_body PREMIUM 2048)"
expect_status 200 "proj-b admin creates a pool in proj-b"
isolation GET "/v1/projects/@P@"
isolation GET "/v1/projects/@P@/locations"
isolation GET "/v1/projects/@P@/locations/$L/storagePools"
isolation GET "/v1/projects/@P@/locations/$L/storagePools/secret"
isolation GET "/v1/projects/@P@/locations/$L/volumes"
isolation GET "/v1/projects/@P@/locations/$L/operations"
isolation POST "/v1/projects/@P@/locations/$L/storagePools?storagePoolId=x" "$(pool_body PREMIUM 2048)"
isolation DELETE "/v1/projects/@P@/locations/$L/storagePools/secret"
aq_req_as "$PADMIN_B" GET "$PL/storagePools"
expect_error 403 PERMISSION_DENIED "proj-b admin cannot read proj-a"
aq_req_as "$PADMIN_B" GET "/v1/projects/proj-b/locations/$L/storagePools/secret"
expect_status 200 "proj-b's pool is still there"

# A volume cannot name another project's pool, and learns nothing from trying.
aq_mutate_as "$EDITOR" POST "$PL/volumes?volumeId=x-proj" "$(vol_body "projects/proj-b/locations/$L/storagePools/secret" 100 s-x-proj)"
x_real="$STATUS $(printf '%s' "$BODY" | sed 's/secret/@POOL@/g')"
expect_status 400 "volume naming a pool of another project"
aq_mutate_as "$EDITOR" POST "$PL/volumes?volumeId=x-proj" "$(vol_body "projects/proj-b/locations/$L/storagePools/nothere" 100 s-x-proj)"
expect_eq "same answer whether the other project's pool exists or not" "$x_real" \
	"$STATUS $(printf '%s' "$BODY" | sed 's/nothere/@POOL@/g')"
NODE=$("$AQUIFERD" token --db "$D/aq.db" --role node --location "$L" 2>/dev/null | tail -n 1) # a join token
aq_req_as "$NODE" GET "$PL/storagePools"
expect_error 403 PERMISSION_DENIED "a node token cannot read a project"
aq_req_as "$NODE" GET /v1/projects
expect_error 403 PERMISSION_DENIED "a node token cannot list projects"

# === metrics ================================================================
# Resource counts, from what the API lists (projects: proj-a, proj-b).
n_pool=0
n_vol=0
for pl in "/v1/projects/$P/locations/$L" "/v1/projects/$P/locations/eu-west4" \
	"/v1/projects/proj-b/locations/$L" "/v1/projects/proj-b/locations/eu-west4"; do
	n_pool=$((n_pool + $(count "$pl/storagePools" storagePools)))
	n_vol=$((n_vol + $(count "$pl/volumes" volumes)))
done
TOK=
aq_req GET /metrics
expect_error 401 UNAUTHENTICATED "metrics without a token (metrics_auth defaults to true)"
TOK=$ADMIN
aq_req GET /metrics
expect_status 200 "metrics with the cluster admin's token"
metric() { printf '%s\n' "$BODY" | awk -v k="$1" '$1 == k { print $2 }'; }
# pool creates answered 200 above: prem, out-only, the 63-character ID,
# max-body, by-editor and proj-b's secret
ok "metrics: request count for pool creates with 200" \
	test "$(metric 'aquifer_http_requests_total{method="POST",route="/v1/projects/*/locations/*/storagePools",code="200"}')" -ge 6
ok "metrics: request count for pool creates with 400" \
	test "$(metric 'aquifer_http_requests_total{method="POST",route="/v1/projects/*/locations/*/storagePools",code="400"}')" -ge 15
ok "metrics: request count for 401s" \
	test "$(metric 'aquifer_http_requests_total{method="GET",route="/v1/projects/*/locations/*/storagePools",code="401"}')" -ge 9
ok "metrics: request count for 409s" \
	test "$(metric 'aquifer_http_requests_total{method="POST",route="/v1/projects/*/locations/*/storagePools",code="409"}')" -ge 1
ok "metrics: request count for 413" \
	test "$(metric 'aquifer_http_requests_total{method="POST",route="/v1/projects/*/locations/*/storagePools",code="413"}')" -ge 1
ok "metrics: request count for healthz" \
	test "$(metric 'aquifer_http_requests_total{method="GET",route="/healthz",code="200"}')" -ge 1
ok "metrics: latency histogram" grep -q '^aquifer_http_request_duration_seconds_bucket{method="GET",route="/v1/projects/\*/locations/\*/volumes/\*",le="+Inf"}' <<<"$BODY"
# the db layer's round trips: one per statement at most (PostgreSQL's
# pipelined reads, db_reads, are one for several; SQLite's equal them)
rt=$(metric aquifer_db_round_trips_total) st=$(metric aquifer_db_statements_total)
ok "metrics: db round trips ($rt) counted, at most the statements ($st)" test "${rt:-0}" -ge 1 -a "${rt:-0}" -le "${st:-0}"
expect_eq "metrics: pool count" "$n_pool" "$(metric 'aquifer_resources{kind="pool"}')"
expect_eq "metrics: volume count" "$n_vol" "$(metric 'aquifer_resources{kind="volume"}')"
expect_eq "metrics: project count" 2 "$(metric 'aquifer_resources{kind="project"}')"
expect_eq "metrics: location count" 2 "$(metric 'aquifer_resources{kind="location"}')"
if grep -qE '^aquifer_resources\{kind="(locsecret|coldsecret|placement|join)"' <<<"$BODY"; then
	aq_failed "metrics: no internal kinds (secrets, placements, spent join tokens)" "$(grep '^aquifer_resources' <<<"$BODY")"
else
	aq_pass "metrics: no internal kinds (secrets, placements, spent join tokens)"
fi

# === beyond one page: more than 1,000 pools and volumes ======================
# Server-side scans that read only the first page of a collection miss what
# lies past it. Eight concurrent clients also check that no create is refused
# because another one holds the database.
MANY=1001
burst() { # URL-PREFIX BODY-TEMPLATE (@N@ is the item number) -> prints "HTTP-status count" lines
	seq "$MANY" | xargs -P 8 -I@N@ curl -s -o /dev/null -w '%{http_code}\n' --max-time 120 -X POST \
		-H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
		--data-binary "$2" "$1" | sort | uniq -c | awk '{print $2 "x" $1}' | xargs
}
aq_req POST "/v1/projects?projectId=aa-many" '{}'
expect_status 200 "create project aa-many"
aq_req POST "/v1/projects?projectId=zz-last" '{}'
expect_status 200 "create project zz-last"
AM=/v1/projects/aa-many/locations/$L
expect_eq "$MANY concurrent pool creates all succeed" "200x$MANY" \
	"$(burst "$AQ_URL$AM/storagePools?storagePoolId=p-@N@" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"STANDARD","capacityGib":"2048"}')"
aq_req POST "$AM/storagePools?storagePoolId=flex-many" "$(pool_body FLEX 1024)"
expect_jq .response.totalThroughputMibps 16 "FLEX 1 TiB pool: 16 MiB/s"
expect_eq "$MANY concurrent volume creates all succeed" "200x$MANY" \
	"$(burst "$AQ_URL$AM/volumes?volumeId=v-@N@" '{"storagePool":"flex-many","capacityGib":"1","shareName":"many-@N@","protocols":["NFSV3"]}')"
aq_req GET "$AM/storagePools/flex-many"
expect_jq .volumeCount "$MANY" "pool counts all $MANY volumes"
expect_jq .volumeCapacityGib "$MANY" "pool sums all $MANY volumes' capacity"
aq_req PATCH "$AM/storagePools/flex-many?updateMask=capacityGib" '{"capacityGib":"2048"}'
expect_status 200 "grow the FLEX pool to 2 TiB"
expect_eq "every FLEX volume follows the pool to 32 MiB/s (2 TiB x 16)" "32x$MANY" \
	"$(aq_list_all "$AM/volumes" volumes | jq -r .throughputMibps | sort | uniq -c | awk '{print $2 "x" $1}' | xargs)"
aq_req POST "/v1/projects/zz-last/locations/$L/storagePools?storagePoolId=mine" "$(pool_body STANDARD 2048)"
expect_status 200 "a pool in project zz-last (sorted after $MANY other pools)"
aq_req DELETE /v1/projects/zz-last
expect_error 400 FAILED_PRECONDITION "delete a project whose pool sorts past the first 1,000"
aq_req GET /v1/projects/zz-last/locations/$L/storagePools/mine
expect_status 200 "its pool is still there"
aq_req DELETE /v1/locations/eu-west4
expect_error 400 FAILED_PRECONDITION "delete a location whose pools sort past the first 1,000"
aq_req POST "/v1/locations?locationId=empty-loc" '{}'
aq_req DELETE /v1/locations/empty-loc
expect_status 200 "delete an empty location"
aq_req GET /v1/locations/empty-loc
expect_error 404 NOT_FOUND "deleted location is gone"

aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
aq_finish
