#!/usr/bin/env bash
# test_shelf_metrics.sh: per-shelf I/O (issue 24). One agent on a directory
# shelf; NFS writes and reads through it show up, from the agent's status
# reports, in the shelf resource's ioStats and in /metrics as per-shelf
# counters; shelves the node is not on (an nvmeof shelf of its location,
# another location's shelf) show none.
. "$(dirname "$0")/lib.sh"

for tool in nfs-cp nfs-cat; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/locations?locationId=west" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_req POST "/v1/shelves?shelfId=nv" '{"location":"east","backend":"nvmeof","transport":"tcp","nqn":"nqn.2026-12.io.aquifer:nv","addresses":["10.0.2.15:4420"]}'
expect_status 200 "an nvmeof shelf in east too"
aq_agent_for east || exit 1

aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"AUTO"}'
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"v1",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
aq_req GET "$P/volumes/v1"
expect_jq .state READY "v1 READY"
URL=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].libnfsUrl' | sed 's|?|/data.bin?|')

# --- the shelf's figures before any volume I/O: present (the node reports), zero writes
aq_wait_until 20 sh -c "curl -s -H 'Authorization: Bearer $TOK' '$AQ_URL/v1/shelves/east-shelf-1' | jq -e '.ioStats.nodes == [\"nodes/node-east\"]' >/dev/null"
aq_req GET /v1/shelves/east-shelf-1
expect_jq '.ioStats.nodes | join(",")' nodes/node-east "the node reports its shelf"
expect_jq .ioStats.writeBytes 0 "no write yet"

# --- 8 MiB written and read back over NFS
head -c $((8 << 20)) /dev/urandom >"$AQ_TMP/data.bin"
ok "nfs-cp writes 8 MiB" nfs-cp "$AQ_TMP/data.bin" "$URL"
nfs-cat "$URL" >"$AQ_TMP/back.bin" 2>/dev/null
expect_eq "nfs-cat reads the same bytes" "$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)" "$(sha256sum <"$AQ_TMP/back.bin" | cut -c1-64)"
io_has() { # io_has JQ: the shelf's ioStats pass JQ within 20 s
	aq_wait_until 20 sh -c "curl -s -H 'Authorization: Bearer $TOK' '$AQ_URL/v1/shelves/east-shelf-1' | jq -e '.ioStats | $1' >/dev/null"
}
ok "ioStats count the 8 MiB written" io_has '(.writeBytes | tonumber) >= 8388608 and (.writeOps | tonumber) >= 8'
ok "ioStats count the 8 MiB read" io_has '(.readBytes | tonumber) >= 8388608 and (.readOps | tonumber) >= 8'
aq_req GET /v1/shelves/east-shelf-1
echo "# east-shelf-1 ioStats: $(printf '%s' "$BODY" | jq -c .ioStats)"
expect_true '.ioStats.writeBytes | tonumber <= 8388608 + 1048576' "no more written than the file (and small metadata)"
aq_req GET /v1/shelves
expect_true '[.shelves[] | select(.name == "shelves/nv" or .name == "shelves/west-shelf-1") | has("ioStats")] == [false, false]' \
	"shelves the node is not on have no ioStats"
expect_true '[.shelves[] | select(.name == "shelves/east-shelf-1") | .ioStats.writeBytes | tonumber >= 8388608] == [true]' \
	"the list answers ioStats too"

# --- /metrics: per-shelf counters and ceilings
M=$(curl -s -H "Authorization: Bearer $TOK" "$AQ_URL/metrics")
wb=$(printf '%s\n' "$M" | awk '/^aquifer_shelf_write_bytes_total\{shelf="east-shelf-1",location="east",node="node-east",backend="directory"\}/ {print $2}')
ok "/metrics: aquifer_shelf_write_bytes_total of east-shelf-1 >= 8 MiB ($wb)" awk -v v="${wb:-0}" 'BEGIN { exit !(v >= 8388608) }'
rb=$(printf '%s\n' "$M" | awk '/^aquifer_shelf_read_bytes_total\{shelf="east-shelf-1"/ {print $2}')
ok "/metrics: aquifer_shelf_read_bytes_total of east-shelf-1 >= 8 MiB ($rb)" awk -v v="${rb:-0}" 'BEGIN { exit !(v >= 8388608) }'
wl=$(printf '%s\n' "$M" | awk '/^aquifer_shelf_write_latency_seconds_total\{shelf="east-shelf-1"/ {print $2}')
ok "/metrics: write latency summed ($wl s)" awk -v v="${wl:-0}" 'BEGIN { exit !(v > 0) }'
expect_contains "/metrics: the nvmeof shelf's ceiling" 'aquifer_shelf_read_ceiling_mibps{shelf="nv",location="east"}' "$M"
ok "/metrics: no I/O counted on shelves the node is not on" sh -c "! printf '%s\n' \"\$1\" | grep -E '^aquifer_shelf_(read|write)_bytes_total\\{shelf=\"(nv|west-shelf-1)\"'" _ "$M"

aq_finish
