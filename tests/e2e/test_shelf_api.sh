#!/usr/bin/env bash
# test_shelf_api.sh: /v1/shelves as a real resource (issue 24): create, get,
# list, patch and delete of directory and nvmeof shelves, bad input refused
# naming the field (changing nothing), a delete or a lowered ceiling refused
# while a location's volumes need the shelf, and the CLI's shelves commands.
# One aquiferd and one agent on a directory shelf; no VM.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_acme_start "$D"

# --- 1. create, get, list ----------------------------------------------------
NV='{"location":"east","backend":"nvmeof","transport":"rdma","nqn":"nqn.2026-12.io.aquifer:shelf-a",
     "addresses":["10.0.2.15:4420","[fd00::15]:4420"],"capacityGib":"2048","media":"QLC"}'
aq_req POST "/v1/shelves?shelfId=nv1" "$NV"
expect_status 200 "create an nvmeof shelf"
expect_jq '[.name,.backend,.transport,.nqn,(.addresses|join(" ")),.capacityGib,.media] | join("|")' \
	"shelves/nv1|nvmeof|rdma|nqn.2026-12.io.aquifer:shelf-a|10.0.2.15:4420 [fd00::15]:4420|2048|QLC" "the fields read back"
expect_jq '.writeThroughputMibps == (.readThroughputMibps / 4)' true "QLC: half the seed's write ceiling"
aq_req GET /v1/shelves/nv1
expect_jq '.nqn + " " + .transport' "nqn.2026-12.io.aquifer:shelf-a rdma" "get answers the stored shelf"
aq_req POST "/v1/shelves?shelfId=nv1" "$NV"
expect_error 409 ALREADY_EXISTS "a taken ID"
aq_req POST "/v1/shelves?shelfId=nv2&validateOnly=true" "$NV"
expect_status 200 "validateOnly answers the shelf"
aq_req GET /v1/shelves/nv2
expect_error 404 NOT_FOUND "validateOnly stored nothing"
aq_req GET /v1/shelves
expect_jq '[.shelves[].name] | sort | join(",")' "shelves/east-shelf-1,shelves/nv1" "list: the default shelf and nv1"
expect_jq '[.shelves[] | select(.name == "shelves/east-shelf-1") | .backend] | join(",")' directory "the default shelf is a directory"

# --- 2. bad input: refused by name, nothing stored -------------------------
bad() { # bad DESC NEEDLE BODY
	aq_req POST "/v1/shelves?shelfId=bad" "$3"
	expect_error 400 INVALID_ARGUMENT "$1"
	expect_contains "$1: the message names it" "$2" "$(printf '%s' "$BODY" | jq -r .error.message)"
}
bad "nvmeof without transport" transport '{"location":"east","backend":"nvmeof","nqn":"nqn.2026-12.x:y","addresses":["h:1"]}'
bad "nvmeof without nqn" nqn '{"location":"east","backend":"nvmeof","transport":"tcp","addresses":["h:1"]}'
bad "nvmeof without addresses" addresses '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y"}'
bad "an NQN without nqn." nqn '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"shelf1","addresses":["h:1"]}'
bad "an NQN with a comma" nqn '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.a,b","addresses":["h:1"]}'
bad "an NQN over 223 characters" nqn "{\"location\":\"east\",\"backend\":\"nvmeof\",\"transport\":\"tcp\",\"nqn\":\"nqn.$(printf 'a%.0s' $(seq 220))\",\"addresses\":[\"h:1\"]}"
bad "an address without port" "addresses[0]" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["10.0.0.1"]}'
bad "port 0" "addresses[1]" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["h:1","h:0"]}'
bad "port 65536" "addresses[0]" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["h:65536"]}'
bad "IPv6 without brackets" "addresses[0]" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["fd00::1:4420"]}'
bad "a repeated address" "repeats" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["h:1","h:1"]}'
bad "nine addresses" addresses '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.x:y","addresses":["a:1","b:1","c:1","d:1","e:1","f:1","g:1","h:1","i:1"]}'
bad "transport on a directory shelf" transport '{"location":"east","transport":"tcp"}'
bad "an unknown transport" transport '{"location":"east","backend":"nvmeof","transport":"fc","nqn":"nqn.2026-12.x:y","addresses":["h:1"]}'
bad "an unknown backend" backend '{"location":"east","backend":"iscsi"}'
bad "a zero read ceiling" readThroughputMibps '{"location":"east","readThroughputMibps":0}'
bad "a negative write ceiling" writeThroughputMibps '{"location":"east","writeThroughputMibps":-5}'
bad "capacity 0" capacityGib '{"location":"east","capacityGib":"0"}'
bad "a secret field" dhchapSecret '{"location":"east","dhchapSecret":"DHHC-1:00:abc:"}'
bad "no location" location '{"readThroughputMibps":10}'
aq_req POST "/v1/shelves?shelfId=bad" '{"location":"nowhere"}'
expect_error 404 NOT_FOUND "an unknown location"
aq_req GET /v1/shelves/bad
expect_error 404 NOT_FOUND "no refused create stored anything"

# --- 3. patch ------------------------------------------------------------------
aq_req PATCH "/v1/shelves/nv1?updateMask=addresses,capacityGib,readThroughputMibps" \
	'{"addresses":["10.0.2.16:4421"],"capacityGib":"4096","readThroughputMibps":5000}'
expect_status 200 "patch portals, capacity and read ceiling"
expect_jq '[(.addresses|join(" ")),.capacityGib,(.readThroughputMibps|tostring),(.updateTime != null|tostring)] | join("|")' \
	"10.0.2.16:4421|4096|5000|true" "the patch reads back"
aq_req PATCH "/v1/shelves/nv1?updateMask=nqn" '{"nqn":"nqn.2026-12.x:other"}'
expect_error 400 INVALID_ARGUMENT "nqn is immutable"
aq_req PATCH "/v1/shelves/nv1?updateMask=addresses" '{"addresses":[]}'
expect_error 400 INVALID_ARGUMENT "an nvmeof shelf keeps a portal"
aq_req PATCH "/v1/shelves/nv1?updateMask=capacityGib" '{"capacityGib":"-1"}'
expect_error 400 INVALID_ARGUMENT "a negative capacity"
aq_req GET /v1/shelves/nv1
expect_jq '[(.addresses|join(" ")),.capacityGib,.nqn] | join("|")' "10.0.2.16:4421|4096|nqn.2026-12.io.aquifer:shelf-a" "refused patches changed nothing"
aq_req PATCH "/v1/shelves/nope?updateMask=media" '{"media":"TLC"}'
expect_error 404 NOT_FOUND "patch of an unknown shelf"

# --- 4. in use: volumes of the location need the shelves' bandwidth --------
aq_agent_for east || exit 1
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"40960","qosType":"MANUAL"}'
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"v1","throughputMibps":2000}'
expect_status 200 "create v1"
aq_req GET "$P/volumes/v1"
expect_jq .state READY "a volume of 2000 MiB/s is placed in east"
# east's shelves: east-shelf-1 (seed, ~130k MiB/s) and nv1 (5000)
aq_req PATCH "/v1/shelves/east-shelf-1?updateMask=readThroughputMibps" '{"readThroughputMibps":100}'
expect_status 200 "lowering east-shelf-1 is fine while nv1 reads 5000"
aq_req PATCH "/v1/shelves/nv1?updateMask=readThroughputMibps" '{"readThroughputMibps":1000}'
expect_error 400 FAILED_PRECONDITION "lowering the location below what its volumes are promised"
expect_contains "the refusal says why" "promised 2000.0 MiB/s" "$(printf '%s' "$BODY" | jq -r .error.message)"
aq_req DELETE /v1/shelves/nv1
expect_error 400 FAILED_PRECONDITION "deleting the shelf the volumes' bandwidth needs"
aq_req GET /v1/shelves/nv1
expect_jq .readThroughputMibps 5000 "the refused patch and delete changed nothing"
aq_req PATCH "/v1/shelves/east-shelf-1?updateMask=readThroughputMibps" '{"readThroughputMibps":100000}'
aq_req DELETE /v1/shelves/nv1
expect_status 200 "with room on east-shelf-1, nv1 goes"
aq_req DELETE /v1/shelves/east-shelf-1
expect_error 400 FAILED_PRECONDITION "the last shelf of a location with volumes stays"
expect_contains "the refusal names the volumes" "holds 1 volumes" "$(printf '%s' "$BODY" | jq -r .error.message)"
aq_mutate DELETE "$P/volumes/v1"
aq_req DELETE /v1/shelves/east-shelf-1
expect_status 200 "without volumes the last shelf may go"
aq_req GET /v1/shelves
expect_jq '.shelves | length' 0 "no shelf left"

# --- 5. the CLI --------------------------------------------------------------
cli() { XDG_CONFIG_HOME=$AQ_TMP/cfg AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" --format=json "$@"; }
out=$(cli shelves create s2 --location=east --backend=nvmeof --transport=tcp --nqn=nqn.2026-12.io.aquifer:s2 \
	--addresses=10.0.0.9:4420,10.0.0.10:4420 --capacity=2TiB --read-throughput=8GiB 2>/dev/null)
expect_eq "cli: shelves create" "nvmeof tcp 2048 8192" "$(printf '%s' "$out" | jq -r '"\(.backend) \(.transport) \(.capacityGib) \(.readThroughputMibps)"' 2>&1)"
out=$(cli shelves update s2 --read-throughput=900 2>/dev/null)
expect_eq "cli: shelves update changes only what it names" "900 10.0.0.9:4420,10.0.0.10:4420" \
	"$(printf '%s' "$out" | jq -r '"\(.readThroughputMibps) \(.addresses|join(","))"' 2>&1)"
out=$(XDG_CONFIG_HOME=$AQ_TMP/cfg AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" shelves list 2>/dev/null)
expect_contains "cli: shelves list has a TRANSPORT column" "TRANSPORT" "$out"
expect_eq "cli: shelves list shows s2's backend, transport and capacity" "s2 east nvmeof tcp 2048" \
	"$(printf '%s\n' "$out" | awk '$1 == "s2" { print $1, $2, $3, $4, $6 }')"
out=$(cli shelves create s3 --location=east --transport=tcp 2>&1)
ok "cli: a refusal exits non-zero" test $? -ne 0
expect_contains "cli: the refusal names the field" "transport is for backend nvmeof only" "$out"
cli shelves delete s2 >/dev/null 2>&1
aq_req GET /v1/shelves/s2
expect_error 404 NOT_FOUND "cli: shelves delete"

aq_finish
