#!/usr/bin/env bash
# test_tier_agent.sh: the cold tier at agent level (issue 11). A real
# aquifer-agent with 1-second "days" is driven by intents pushed to its API
# (as aquiferd would), NFS traffic comes from libnfs (nfs-cp and
# bench/nfs/loadgen, which checks every 4 KiB page it reads).
#   A. embedded directory store: a 256 MiB write goes cold (hot bytes fall,
#      objects appear, holes punched), reads back identical; DEFAULT,
#      NEVER and ON_READ after random 4 KiB reads and a whole-file read;
#      kill -9 during rehydration and during a tiering pass, restart: data
#      identical and the scan finds no orphans and nothing missing; delete.
#   B. s3rver behind aq-latproxy: the same write goes cold as SigV4-signed
#      objects and reads back identical; store down: hot reads unaffected,
#      cold reads answer JUKEBOX and succeed (retried) once it is back, the
#      status says why meanwhile; deleting the volume deletes its objects.
. "$(dirname "$0")/lib.sh"
AQ_RECORD=0

. "$AQ_SRC/tests/agent/tier/agent.sh"
tier_test_setup nfs-cp nfs-cat sha256sum node
MIB=1048576

sha() { sha256sum <"$1" | cut -d' ' -f1; }

# read_big: whole-file sequential read of big.bin over NFS, same bytes?
read_big() {
	rm -f "$AQ_TMP/big.out"
	nfs-cp "$(url /big.bin)" "$AQ_TMP/big.out" >/dev/null && [ "$(sha "$AQ_TMP/big.out")" = "$BIG_SHA" ]
}

# rand_reads N: N random 4 KiB reads of pat.bin at depth 32, every page checked.
rand_reads() { "$LG" -p r -k -s "$PAT_MIB" -n "$1" "$(url '')" pat.bin >"$AQ_TMP/lg.out" 2>&1; }

scan_clean() { # scan_clean DESC: zero orphans, zero missing, records = objects
	local s
	s=$(scan)
	if printf '%s' "$s" | jq -e '.volumes[0] | .orphansCount == 0 and .missingCount == 0 and
		.objects == .records and .records > 0' >/dev/null; then
		aq_pass "$1"
	else
		aq_failed "$1" "scan: ${s:0:400}"
	fi
}

head -c $((256 * MIB)) /dev/urandom >"$AQ_TMP/big.in"
BIG_SHA=$(sha "$AQ_TMP/big.in")
echo "a small file stays hot" >"$AQ_TMP/small.in"

# ==== A. the embedded directory store ========================================
FSID=00000000000000a1
PAT_MIB=32
FULL=$(((256 + PAT_MIB) * MIB))
agent_start n1
policy ENABLED DEFAULT
ok "256 MiB written over NFS" nfs-cp "$AQ_TMP/big.in" "$(url /big.bin)"
ok "patterned file written" "$LG" -p W -k -s $PAT_MIB "$(url '')" pat.bin
ok "small file written" nfs-cp "$AQ_TMP/small.in" "$(url /small.txt)"
expect_eq "tierState ACTIVE" ACTIVE "$(vstat tierState)"
ok "after a few 1-second days every whole chunk is cold" wait_cold $FULL 40
HOT=$(vstat hotBytes)
ok "hotBytes fell to the tails and small files ($HOT)" test "$HOT" -lt $((2 * MIB))
expect_eq "usedBytes stays the logical size (and 4 KiB per name)" \
	$((FULL + $(stat -c %s "$AQ_TMP/small.in") + 3 * 4096)) "$(vstat usedBytes)"
COLDDIR=$SHELF/.aquifer-cold/east/east/$FSID
expect_eq "objects appear in the directory store" 288 "$(find "$COLDDIR" -type f ! -name "~tmp.*" | wc -l)"
BLK=$(stat -c %b "$SHELF/volumes/$FSID/big.bin")
ok "holes punched in the shelf file ($BLK blocks)" test "$BLK" -lt 2048
ok "coldWriteBytes counted" test "$(vstat coldWriteBytes)" -ge $FULL
ok "the tier map is outside the export" test -f "$SHELF/.aquifer-tier/$FSID/tier.db"
scan_clean "scan: every object recorded, every record has its object"

# --- retrieval policies (PAUSED: no new tiering while we look) ---
policy PAUSED DEFAULT
expect_eq "tierState PAUSED" PAUSED "$(vstat tierState)"
ok "DEFAULT: whole-file read gives identical bytes" read_big
expect_eq "DEFAULT: a sequential read streams from cold (nothing rehydrated)" $FULL "$(vstat coldBytes)"
ok "coldReadBytes counted" test "$(vstat coldReadBytes)" -ge $((256 * MIB))
ok "DEFAULT: random 4 KiB reads give the right pages" rand_reads 200
C=$(vstat coldBytes)
ok "DEFAULT: random reads rehydrate the chunks they touch ($C < $FULL)" test "$C" -lt $FULL
ok "... but only those (big.bin stays cold)" test "$C" -ge $((256 * MIB))

policy ENABLED NEVER
ok "cooled again" wait_cold $FULL 30
policy PAUSED NEVER
ok "NEVER: random 4 KiB reads give the right pages" rand_reads 200
expect_eq "NEVER: random reads rehydrate nothing" $FULL "$(vstat coldBytes)"
ok "NEVER: whole-file read gives identical bytes" read_big
expect_eq "NEVER: sequential reads rehydrate nothing" $FULL "$(vstat coldBytes)"

policy PAUSED ON_READ
ok "ON_READ: random 4 KiB reads give the right pages" rand_reads 200
C=$(vstat coldBytes)
ok "ON_READ: random reads rehydrate ($C < $FULL)" test "$C" -lt $FULL
ok "ON_READ: whole-file read gives identical bytes" read_big
C2=$(vstat coldBytes)
ok "ON_READ: a sequential read rehydrates too ($C2 <= $C - 256 MiB)" test "$C2" -le $((C - 256 * MIB))
ok "hot again: the shelf file holds its blocks" test "$(stat -c %b "$SHELF/volumes/$FSID/big.bin")" -ge $((256 * MIB / 512))

# --- kill -9 during rehydration ---
policy ENABLED ON_READ
ok "cooled again" wait_cold $FULL 30
policy PAUSED ON_READ
nfs-cp "$(url /big.bin)" "$AQ_TMP/partial.out" >/dev/null 2>&1 &
CP=$!
for _ in $(seq 200); do [ "$(vstat coldBytes)" -le $((FULL - 8 * MIB)) ] && break; sleep 0.02; done
C=$(vstat coldBytes)
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
kill "$CP" 2>/dev/null
wait "$CP" 2>/dev/null
ok "killed mid-rehydration ($C cold of $FULL)" test "$C" -lt $FULL -a "$C" -gt $((PAT_MIB * MIB))
agent_start n1
ok "restarted: whole-file read identical" read_big
scan_clean "after kill -9 during rehydration: no orphans, nothing missing"

# --- kill -9 during a tiering pass ---
C0=$(vstat coldBytes)
policy ENABLED DEFAULT
for _ in $(seq 400); do [ "$(vstat coldBytes)" -ge $((C0 + 16 * MIB)) ] && break; sleep 0.02; done
C=$(vstat coldBytes)
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
ok "killed mid-pass ($C cold of $FULL)" test "$C" -lt $FULL -a "$C" -gt "$C0"
agent_start n1
ok "restarted: the pass completes" wait_cold $FULL 30
policy PAUSED NEVER
ok "after kill -9 during a pass: whole-file read identical" read_big
ok "... and every page of the patterned file right" "$LG" -p S -k -s $PAT_MIB "$(url '')" pat.bin
scan_clean "after kill -9 during a pass: no orphans, nothing missing"

# --- deleting the volume deletes its objects and tier map ---
push "$(jq -nc --arg node "$NODE" --arg fsid "$FSID" '{node: $node, volumes: [],
	deletes: [{name: "projects/p/locations/east/volumes/tv", fsid: $fsid, dir: ("volumes/" + $fsid)}]}')"
expect_eq "delete: no objects left" 0 "$(find "$COLDDIR" -type f ! -name '~tmp.*' 2>/dev/null | wc -l)"
ok "delete: the tier map is gone" test ! -e "$SHELF/.aquifer-tier/$FSID"
kill "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null

# ==== B. s3rver behind aq-latproxy ===========================================
FSID=00000000000000b1
PAT_MIB=16
FULL=$(((256 + PAT_MIB) * MIB))
aq_s3_start "$AQ_TMP/s3" || exit 1
aq_proxy_start "$AQ_S3_PORT" 2 "$AQ_TMP/proxy.log" || exit 1
COLDSTORE=$(jq -nc --arg e "$AQ_PROXY_ENDPOINT" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
	'{s3: {endpoint: $e, bucket: "aqcold", region: "us-east-1", accessKeyId: $k, secretAccessKey: $s}}')
agent_start n2
policy ENABLED DEFAULT
ok "S3: 256 MiB written over NFS" nfs-cp "$AQ_TMP/big.in" "$(url /big.bin)"
ok "S3: patterned file written" "$LG" -p W -k -s $PAT_MIB "$(url '')" pat.bin
ok "S3: small file written" nfs-cp "$AQ_TMP/small.in" "$(url /small.txt)"
ok "S3: every whole chunk goes cold" wait_cold $FULL 90
ok "S3: hotBytes fell" test "$(vstat hotBytes)" -lt $((2 * MIB))
expect_eq "S3: objects appear in the store" 272 "$(scan | jq .volumes[0].objects)"
scan_clean "S3: scan clean"
ok "S3: requests carry SigV4 Authorization headers" \
	grep -q "^PUT /aqcold/east/$FSID/.* AWS4-HMAC-SHA256 Credential=$AQ_S3_ACCESS_KEY/[0-9]*/us-east-1/s3/aws4_request" "$AQ_TMP/proxy.log"
ok "S3: no unsigned object requests" test "$(grep -c " /aqcold/east/[^ ]* - conn=" "$AQ_TMP/proxy.log")" = 0
policy PAUSED DEFAULT
ok "S3: whole-file read gives identical bytes" read_big
expect_eq "S3: DEFAULT streams without rehydrating" $FULL "$(vstat coldBytes)"

# --- the store goes away ---
policy PAUSED NEVER
aq_proxy_down
T0=$(date +%s%N)
ok "store down: hot reads unaffected" test "$(nfs-cat "$(url /small.txt)")" = "$(cat "$AQ_TMP/small.in")"
T1=$(date +%s%N)
ok "store down: hot read fast ($(((T1 - T0) / 1000000)) ms)" test $(((T1 - T0) / 1000000)) -lt 2000
"$LG" -p r -k -s $PAT_MIB -n 64 -R 30 "$(url '')" pat.bin >"$AQ_TMP/lg-down.out" 2>&1 &
LGP=$!
sleep 4
expect_eq "store down: tierState" STORE_UNAVAILABLE "$(vstat tierState)"
DET=$(vstat tierDetails)
ok "store down: tierDetails explains ($DET)" grep -q "unreachable" <<<"$DET"
ok "store down: cold reads still waiting (retrying)" kill -0 $LGP
aq_proxy_up
wait $LGP
RC=$?
expect_eq "store back: the cold reads finish with the right pages" 0 "$RC"
ok "cold reads were answered JUKEBOX and retried: $(tail -1 "$AQ_TMP/lg-down.out")" \
	grep -Eq "retries [1-9]" "$AQ_TMP/lg-down.out"
for _ in $(seq 50); do [ "$(vstat tierState)" = PAUSED ] && break; sleep 0.1; done
expect_eq "store back: tierState recovers by itself" PAUSED "$(vstat tierState)"
expect_eq "store back: tierDetails cleared" "" "$(vstat tierDetails)"

# --- the cold store cannot change under cold data ---
push "$(intent PAUSED NEVER "$(jq -nc --arg p "$AQ_TMP/other-store" '{directory: {path: $p}}')")"
LASTERR=$(curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" | jq -r .lastError)
ok "a cold store change is refused while data is cold ($LASTERR)" grep -q refused <<<"$LASTERR"
ok "... and the cold data stays readable" read_big
policy PAUSED NEVER

# --- deleting the volume deletes its objects ---
push "$(jq -nc --arg node "$NODE" --arg fsid "$FSID" --argjson cs "$COLDSTORE" '{node: $node, volumes: [],
	coldStore: $cs, deletes: [{name: "projects/p/locations/east/volumes/tv", fsid: $fsid, dir: ("volumes/" + $fsid)}]}')"
LEFT=$(curl -s "$AQ_S3_ENDPOINT/aqcold?list-type=2&prefix=east/$FSID/" -H "Authorization: AWS4-HMAC-SHA256 Credential=S3RVER/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0" | grep -c "<Key>")
expect_eq "S3 delete: no objects left under the volume's prefix" 0 "$LEFT"
aq_s3_cleanup
aq_finish
