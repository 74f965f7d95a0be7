#!/usr/bin/env bash
# test_shelf_capacity.sh: placement counts shelf capacity (issue 24): a
# location's volumes, in any pool, fit what its shelves hold (capacityGib);
# a create or a growth past it is refused with RESOURCE_EXHAUSTED naming the
# shelf and changes nothing (validateOnly too); a shrink is never refused; a
# shelf PATCH or DELETE that would leave less than the volumes take is
# refused (FAILED_PRECONDITION); a shelf without capacityGib bounds nothing.
# One aquiferd and one agent on a directory shelf; no VM.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/west
aq_req POST "/v1/locations?locationId=west" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_agent_for west || exit 1
pool() {
	aq_req POST "$P/storagePools?storagePoolId=$1" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"40960"}'
	expect_status 200 "create pool $1"
}
vol() { # vol POOL NAME GIB
	printf '{"storagePool":"%s","capacityGib":"%s","protocols":["NFSV3"],"shareName":"%s"}' "$1" "$3" "$2"
}
pool sp1
pool sp2

# --- 1. no capacityGib on the location's shelf: nothing counted ---------------
aq_mutate POST "$P/volumes?volumeId=v1" "$(vol sp1 v1 1024)"
expect_status 200 "a 1 TiB volume on a shelf without capacityGib"
# --- 2. the shelf holds 1500 GiB: 476 are free ---------------------------------
aq_req PATCH "/v1/shelves/west-shelf-1?updateMask=capacityGib" '{"capacityGib":"1000"}'
expect_error 400 FAILED_PRECONDITION "a shelf capacity below what the volumes take is refused"
expect_contains "the refusal says what the volumes take" "volumes take 1024 GiB" "$BODY"
aq_req PATCH "/v1/shelves/west-shelf-1?updateMask=capacityGib" '{"capacityGib":"1500"}'
expect_status 200 "shelf capacity 1500 GiB"
aq_req POST "$P/volumes?volumeId=v2&validateOnly=true" "$(vol sp2 v2 477)"
expect_error 429 RESOURCE_EXHAUSTED "validateOnly: 477 GiB in another pool does not fit the shelf"
aq_req POST "$P/volumes?volumeId=v2" "$(vol sp2 v2 477)"
expect_error 429 RESOURCE_EXHAUSTED "a create past the shelf's free capacity"
expect_contains "the refusal names the shelf and what is free" "(west-shelf-1) hold 1500 GiB with 476 GiB free; the volume needs 477 GiB more" "$BODY"
aq_req GET "$P/volumes/v2"
expect_error 404 NOT_FOUND "the refused create stored nothing"
aq_mutate POST "$P/volumes?volumeId=v2" "$(vol sp2 v2 476)"
expect_status 200 "exactly the free 476 GiB fits"
aq_req GET "$P/volumes/v2"
expect_jq .state READY "v2 is served"
# --- 3. growth refused the same way; a shrink always fits -----------------------
aq_req PATCH "$P/volumes/v1?updateMask=capacityGib" '{"capacityGib":"1025"}'
expect_error 429 RESOURCE_EXHAUSTED "growing a volume past the shelf"
expect_contains "the growth refusal names the shelf" "west-shelf-1" "$BODY"
aq_req GET "$P/volumes/v1"
expect_jq .capacityGib 1024 "the refused growth changed nothing"
aq_mutate PATCH "$P/volumes/v1?updateMask=capacityGib" '{"capacityGib":"1000"}'
expect_status 200 "a shrink on a full shelf"
aq_mutate PATCH "$P/volumes/v2?updateMask=capacityGib" '{"capacityGib":"500"}'
expect_status 200 "the freed 24 GiB go to v2"
aq_req GET "$P/volumes/v2"
expect_jq '[.capacityGib,.state]|join(" ")' "500 READY" "v2 grew"
# --- 4. a second shelf adds its capacity; its delete is refused while needed ---
aq_req POST "/v1/shelves?shelfId=w2" '{"location":"west","capacityGib":"100"}'
expect_status 200 "a second shelf of 100 GiB"
aq_mutate POST "$P/volumes?volumeId=v3" "$(vol sp2 v3 100)"
expect_status 200 "the second shelf's 100 GiB are placed"
aq_req POST "$P/volumes?volumeId=v4" "$(vol sp1 v4 100)"
expect_error 429 RESOURCE_EXHAUSTED "then the location is full"
expect_contains "the refusal names both shelves" "(w2, west-shelf-1)" "$BODY"
aq_req DELETE /v1/shelves/w2
expect_error 400 FAILED_PRECONDITION "deleting a shelf whose capacity the volumes take"
aq_req GET /v1/shelves/w2
expect_status 200 "the refused delete kept the shelf"
# --- 5. a shelf without capacityGib unbounds the location again ------------------
aq_req PATCH "/v1/shelves/w2?updateMask=capacityGib" '{}'
expect_status 200 "w2's capacityGib cleared"
aq_mutate POST "$P/volumes?volumeId=v4" "$(vol sp1 v4 100)"
expect_status 200 "unbounded: the create goes through"
aq_finish
