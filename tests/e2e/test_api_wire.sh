#!/usr/bin/env bash
# tests/e2e/test_api_wire.sh: the wire habits of GCNV clients (issue 17, API),
# through a real aquiferd: lowercase IDs, Google's label rules, proto3 JSON
# input (proto field names, integer enums, *_UNSPECIFIED, int64 as number or
# string), error details (ErrorInfo, BadRequest.fieldViolations), 405 with a
# matching status, orderBy on volumes as a hint, fields= partial responses,
# pool.network as a required resource name.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
P=wire
L=west
PL=/v1/projects/$P/locations/$L
NET=projects/$P/global/networks/default
aq_req POST "/v1/projects?projectId=$P" '{}'
expect_status 200 "create project"
aq_req POST "/v1/locations?locationId=$L" '{}'
expect_status 200 "create location"
aq_agent_for "$L" || { aq_failed "a storage node joins $L"; aq_finish; }

pool() { # ID BODY: create a pool, leave the answer in BODY
	aq_mutate POST "$PL/storagePools?storagePoolId=$1" "$2"
}

# ---- IDs: ^[a-z]([-a-z0-9]*[a-z0-9])?$, 63 at most ------------------------
for id in Pool1 POOL pool_1 1pool pool- "$(printf 'a%.0s' $(seq 64))"; do
	pool "$id" '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'"}'
	expect_error 400 INVALID_ARGUMENT "storagePoolId \"${id:0:20}\" refused"
done
aq_req GET "$PL/storagePools"
expect_jq '.storagePools // [] | length' 0 "refused IDs created nothing"
pool "$(printf 'a%.0s' $(seq 63))" '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'"}'
expect_status 200 "a 63-character lowercase ID is accepted"
aq_req POST "/v1/projects?projectId=UpperProj" '{}'
expect_error 400 INVALID_ARGUMENT "projectId with uppercase refused"

# ---- labels: Google's key/value rules --------------------------------------
for l in '{"Env":"x"}' '{"1env":"x"}' '{"env":"Prod"}' '{"env":"a b"}' '{"":"x"}' '{"e.nv":"x"}'; do
	pool lp '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'","labels":'"$l"'}'
	expect_error 400 INVALID_ARGUMENT "labels $l refused"
done
pool lp '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'","labels":{"env":"prod","team_a-1":"","goog-terraform-provisioned":"true","\u00e9t\u00e9":"caf\u00e9"}}'
expect_status 200 "labels within the rules (and international characters) accepted"
aq_req GET "$PL/storagePools/lp"
expect_jq '.labels | keys | length' 4 "labels stored"

# ---- a wrong method: 405 with a status that matches ------------------------
aq_req PUT "$PL/storagePools/lp" '{}'
expect_eq "PUT on a pool -> HTTP 405" 405 "$STATUS"
expect_jq '.error.code' 405 "405: error.code is the HTTP code"
expect_jq '.error.status' UNIMPLEMENTED "405: status UNIMPLEMENTED (the google.rpc code a missing method has), not INVALID_ARGUMENT"

# ---- orderBy on volumes is a hint --------------------------------------------
aq_mutate POST "$PL/volumes?volumeId=va" '{"storagePool":"lp","capacityGib":"100","shareName":"va","protocols":["NFSV3"]}'
expect_status 200 "volume va"
aq_mutate POST "$PL/volumes?volumeId=vb" '{"storagePool":"lp","capacityGib":"100","shareName":"vb","protocols":["NFSV3"]}'
expect_status 200 "volume vb"
for ob in 'capacityGib' 'createTime%20desc' 'name%2CcapacityGib' 'bogus'; do
	aq_req GET "$PL/volumes?orderBy=$ob"
	expect_status 200 "volumes orderBy=$ob is a hint, not a 400"
	expect_jq '.volumes | length' 2 "volumes orderBy=$ob lists them all"
done
aq_req GET "$PL/volumes?orderBy=name%20desc"
expect_jq '[.volumes[].name | split("/") | last] | join(",")' "vb,va" "volumes orderBy=name desc is honoured"
aq_req GET "$PL/storagePools?orderBy=capacityGib"
expect_error 400 INVALID_ARGUMENT "pools: orderBy other than name stays a 400 (GCNV documents name, name desc)"

# ---- proto3 JSON: proto field names, enum numbers, *_UNSPECIFIED, int64 ------
# service_level 2 is EXTREME (common.proto ServiceLevel), qos_type 0 is
# QOS_TYPE_UNSPECIFIED (the default, AUTO), capacity_gib a JSON number.
pool pj '{"service_level":2,"capacity_gib":2048,"network":"'$NET'","qos_type":0,"allow_auto_tiering":true,"type":"STORAGE_POOL_TYPE_UNSPECIFIED","mode":0,"scale_type":"SCALE_TYPE_UNSPECIFIED"}'
expect_status 200 "pool in proto3 JSON (proto names, enum numbers, *_UNSPECIFIED, int64 number)"
aq_req GET "$PL/storagePools/pj"
expect_true '.serviceLevel == "EXTREME" and .capacityGib == "2048" and .qosType == "AUTO" and .allowAutoTiering == true and .type == "FILE"' "read back in camelCase with names and defaults"
expect_true '(has("service_level") or has("capacity_gib") or has("mode") or has("scaleType")) | not' "no proto names or unspecified values stored"
pool pj2 '{"serviceLevel":"SERVICE_LEVEL_UNSPECIFIED","capacityGib":"2048","network":"'$NET'"}'
expect_error 400 INVALID_ARGUMENT "SERVICE_LEVEL_UNSPECIFIED for the required serviceLevel refused"
pool pj2 '{"serviceLevel":9,"capacityGib":"2048","network":"'$NET'"}'
expect_error 400 INVALID_ARGUMENT "an enum number the proto does not have refused"
pool pj2 '{"serviceLevel":"STANDARD","capacityGib":"2048","capacity_gib":"4096","network":"'$NET'"}'
expect_error 400 INVALID_ARGUMENT "a field given twice (JSON and proto name) refused"
# A volume: protocols as numbers (1 = NFSV3), nested proto names, squash
# mode by number (2 = ROOT_SQUASH), int64 anon_uid as a string, tier action
# unspecified (the default, PAUSED).
aq_mutate POST "$PL/volumes?volumeId=vj" '{"storage_pool":"pj","capacity_gib":"100","share_name":"vj","protocols":[1],"export_policy":{"rules":[{"allowed_clients":"10.0.0.0/8","access_type":2,"squash_mode":2,"anon_uid":"65534"}]},"tiering_policy":{"tier_action":"TIER_ACTION_UNSPECIFIED","cooling_threshold_days":"10"},"security_style":0}'
expect_status 200 "volume in proto3 JSON"
aq_req GET "$PL/volumes/vj"
expect_true '.protocols == ["NFSV3"] and .exportPolicy.rules[0].accessType == "READ_WRITE" and .exportPolicy.rules[0].squashMode == "ROOT_SQUASH" and .exportPolicy.rules[0].anonUid == "65534" and .tieringPolicy.tierAction == "PAUSED" and .tieringPolicy.coolingThresholdDays == 10 and .securityStyle == "UNIX"' "volume read back with names, JSON names and defaults"
aq_mutate POST "$PL/volumes?volumeId=vj2" '{"storagePool":"pj","capacityGib":"100","shareName":"vj2","protocols":[0]}'
expect_error 400 INVALID_ARGUMENT "PROTOCOLS_UNSPECIFIED in protocols refused"
aq_mutate PATCH "$PL/storagePools/pj?updateMask=qos_type,description" '{"qos_type":"QOS_TYPE_UNSPECIFIED","description":"d"}'
expect_status 200 "PATCH with a proto-named, unspecified enum"
aq_req GET "$PL/storagePools/pj"
expect_true '.qosType == "AUTO" and .description == "d"' "unspecified in a PATCH restores the default"

# ---- error details: ErrorInfo, BadRequest.fieldViolations -------------------
pool pd '{"serviceLevel":"STANDARD","capacityGib":"lots","network":"'$NET'"}'
expect_error 400 INVALID_ARGUMENT "a bad int64"
expect_true '.error.details | any(."@type" == "type.googleapis.com/google.rpc.ErrorInfo" and .reason == "INVALID_ARGUMENT" and .domain == "netapp.googleapis.com")' "ErrorInfo with reason and domain"
expect_true '.error.details | any(."@type" == "type.googleapis.com/google.rpc.BadRequest" and .fieldViolations[0].field == "storagePool.capacityGib" and (.fieldViolations[0].description | length) > 0)' "BadRequest names the field"
pool pd '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'","exportPolicy":{}}'
expect_true '.error.details | any(.fieldViolations[0].field == "storagePool.exportPolicy")' "an unknown field is the violation"
aq_mutate POST "$PL/volumes?volumeId=vd" '{"storagePool":"pj","capacityGib":"100","shareName":"vd","protocols":["NFSV3"],"exportPolicy":{"rules":[{"allowedClients":"10.0.0.0/8","accessType":"READ_SOMETIMES"}]}}'
expect_true '.error.details | any(.fieldViolations[0].field == "volume.exportPolicy.rules[0].accessType")' "a nested field's path"
pool pd '{"capacityGib":"2048","network":"'$NET'"}'
expect_true '.error.details | any(.fieldViolations[0].field == "storagePool.serviceLevel")' "a missing required field"
aq_req PATCH "$PL/storagePools/pj?updateMask=nope" '{}'
expect_true '.error.details | any(.fieldViolations[0].field == "updateMask")' "a bad updateMask"
aq_req PATCH "$PL/storagePools/pj?updateMask=totalIops" '{"totalIops":"100"}'
expect_error 400 INVALID_ARGUMENT "a resource rule refused (totalIops without custom performance)"
expect_true '.error.details | any(.fieldViolations[0].field == "totalThroughputMibps" or .fieldViolations[0].field == "totalIops")' "the field a rule's message names"
aq_req GET "$PL/storagePools/missing"
expect_error 404 NOT_FOUND "unknown pool"
expect_true '.error.details | any(.reason == "RESOURCE_NOT_FOUND") and all(."@type" != "type.googleapis.com/google.rpc.BadRequest")' "404: ErrorInfo RESOURCE_NOT_FOUND, no field violation"
aq_req PUT "$PL/storagePools/pj" '{}'
expect_true '.error.details | any(.reason == "METHOD_NOT_ALLOWED")' "405: ErrorInfo METHOD_NOT_ALLOWED"
TOK= aq_req GET "$PL/storagePools"
expect_error 401 UNAUTHENTICATED "no token"

# A failed operation carries an ErrorInfo too: a volume in a location no
# node serves.
aq_req POST "/v1/locations?locationId=empty" '{}'
aq_mutate POST "/v1/projects/$P/locations/empty/storagePools?storagePoolId=pe" '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$NET'"}'
expect_status 200 "pool in a location without nodes"
aq_req POST "/v1/projects/$P/locations/empty/volumes?volumeId=ve" '{"storagePool":"pe","capacityGib":"100","shareName":"ve","protocols":["NFSV3"]}'
expect_true '.done == true and .error.code == 8 and (.error.details | any(."@type" == "type.googleapis.com/google.rpc.ErrorInfo" and .reason == "RESOURCE_EXHAUSTED" and .domain == "netapp.googleapis.com"))' "a failed operation's error has an ErrorInfo"

# ---- fields=: partial responses ----------------------------------------------
# (not recorded for the contract check: a partial answer lacks required members)
AQ_RECORD=0
aq_req GET "$PL/storagePools/pj?fields=name,serviceLevel"
expect_true '(keys | sort) == ["name","serviceLevel"] and .serviceLevel == "EXTREME"' "fields=name,serviceLevel: only those"
aq_req GET "$PL/volumes/vj?fields=name,tieringPolicy.tierAction,exportPolicy/rules(accessType)"
expect_true '(keys | sort) == ["exportPolicy","name","tieringPolicy"] and .tieringPolicy == {"tierAction":"PAUSED"} and .exportPolicy.rules == [{"accessType":"READ_WRITE"}]' "nested paths, '/' and a sub-selection"
aq_req GET "$PL/volumes?fields=volumes(name,state),nextPageToken"
expect_true '(keys == ["volumes"]) and (.volumes | length) > 0 and all(.volumes[]; (keys | sort) == ["name","state"])' "a list: every item selected through"
aq_req GET "$PL/volumes?fields=volumes.name"
expect_true 'all(.volumes[]; keys == ["name"])' "a list with a dotted path"
aq_req GET "$PL/storagePools/pj?fields=noSuchField"
expect_true '. == {}' "an unknown name selects nothing"
aq_req GET "$PL/storagePools/pj?fields=name,(state"
expect_error 400 INVALID_ARGUMENT "a selector that does not parse"
expect_true '.error.details | any(.fieldViolations[0].field == "fields")' "fields is the violation"
aq_req GET "$PL/storagePools/missing?fields=name"
expect_error 404 NOT_FOUND "errors are not filtered"
aq_mutate PATCH "$PL/storagePools/pj?updateMask=description&fields=name,done" '{"description":"e"}'
expect_true '(keys | sort) == ["done","name"]' "fields= on an operation answer"
AQ_RECORD=1

# ---- pool.network: a required VPC network name -------------------------------
pool pn '{"serviceLevel":"STANDARD","capacityGib":"2048"}'
expect_error 400 INVALID_ARGUMENT "a pool without network refused (required, as in GCNV)"
expect_true '.error.details | any(.fieldViolations[0].field == "storagePool.network")' "the violation names storagePool.network"
for n in default projects/p/networks/n projects//global/networks/n projects/p/global/networks/ projects/p/global/networks/a/b; do
	pool pn '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"'$n'"}'
	expect_error 400 INVALID_ARGUMENT "network \"$n\" is not a resource name: refused"
done
pool pn '{"serviceLevel":"STANDARD","capacityGib":"2048","network":"projects/vpc-host/global/networks/shared-vpc"}'
expect_status 200 "a network of another (Shared VPC host) project accepted"
aq_req GET "$PL/storagePools/pn"
expect_jq .network projects/vpc-host/global/networks/shared-vpc "network read back as sent"

aq_finish
