#!/usr/bin/env bash
# test_tier_coldpool.sh: cold READs do not hold NFS workers (issue 11,
# acceptance 5). The agent serves NFS with 8 workers; a READ of cold data
# is deferred to the server's cold pool, so 32 concurrent 4 KiB reads of
# cold data (retrievalPolicy NEVER: every read goes to the store) take
# about one store round trip, not 32 / 8 = 4 of them. The store is
# aq-s3lite behind aq-latproxy adding LAT ms to every request. A hot read
# issued while the cold ones wait must not wait for them either.
. "$(dirname "$0")/lib.sh"
AQ_RECORD=0

. "$AQ_SRC/tests/agent/tier/agent.sh"
tier_test_setup jq curl
MIB=1048576 LAT=300 FILE_MIB=32

aq_s3lite_start "$AQ_TMP/s3" || { aq_failed "aq-s3lite started"; exit 1; }
aq_proxy_start "$AQ_S3_PORT" "$LAT" || { aq_failed "aq-latproxy started"; exit 1; }
COLDSTORE=$(jq -nc --arg e "$AQ_PROXY_ENDPOINT" --arg k "$AQ_S3_ACCESS_KEY" --arg s "$AQ_S3_SECRET_KEY" \
	'{s3: {endpoint: $e, bucket: "aqpool", region: "us-east-1", accessKeyId: $k, secretAccessKey: $s}}')
FSID=00000000000000d1
agent_start pool
policy PAUSED NEVER
"$LG" -p W -k -s "$FILE_MIB" "$(url '')" pat.bin >/dev/null || { aq_failed "pattern file written"; exit 1; }
policy ENABLED NEVER
if wait_cold $((FILE_MIB * MIB)) 120; then
	aq_pass "the $FILE_MIB MiB file went cold"
else
	aq_failed "the $FILE_MIB MiB file went cold" "coldBytes $(vstat coldBytes)"
	exit 1
fi
policy PAUSED NEVER # nothing moves while we measure; hot.bin stays hot
"$LG" -p W -k -s 2 "$(url '')" hot.bin >/dev/null || { aq_failed "hot file written"; exit 1; }
cold0=$(vstat coldBytes)

# cold32: seconds loadgen took for 32 random 4 KiB reads at depth 32 (every
# page checked; the file stays cold under NEVER, so every read asks the store).
cold32() {
	"$LG" -p r -k -s "$FILE_MIB" -n 32 "$(url '')" pat.bin >"$AQ_TMP/lg.out" 2>&1 || return 1
	awk '/^rand-read/ {print $6}' "$AQ_TMP/lg.out"
}
cold32 >/dev/null || { aq_failed "cold reads" "$(cat "$AQ_TMP/lg.out")"; exit 1; } # connections warm
best=
for _ in 1 2 3; do
	s=$(cold32) || { aq_failed "32 cold reads" "$(cat "$AQ_TMP/lg.out")"; exit 1; }
	best=$(awk -v a="$s" -v b="${best:-$s}" 'BEGIN {print (a < b ? a : b)}')
done
cold=$(vstat coldBytes)
[ "$cold" = "$cold0" ] || aq_failed "NEVER kept the file cold" "coldBytes $cold"
# One round trip is LAT ms; 8 blocking workers would need 4 (1.2 s).
if awk -v s="$best" -v l="$LAT" 'BEGIN {exit !(s < 2 * l / 1000)}'; then
	aq_pass "32 concurrent cold reads took ${best}s (< 2 round trips of ${LAT} ms; 8 workers blocking need 4)"
else
	aq_failed "32 concurrent cold reads in < 2 round trips of ${LAT} ms" "best ${best}s"
fi

# Hot reads while 32 cold ones wait on the store: they finish long before.
"$LG" -p r -k -s "$FILE_MIB" -n 96 "$(url '')" pat.bin >"$AQ_TMP/lg.cold" 2>&1 &
coldpid=$!
sleep 0.1
"$LG" -p r -k -s 2 -n 200 "$(url '')" hot.bin >"$AQ_TMP/lg.hot" 2>&1 || aq_failed "hot reads" "$(cat "$AQ_TMP/lg.hot")"
hot=$(awk '/^rand-read/ {print $6}' "$AQ_TMP/lg.hot")
kill -0 "$coldpid" 2>/dev/null && still=1 || still=0
wait "$coldpid" || aq_failed "cold reads during the hot ones" "$(cat "$AQ_TMP/lg.cold")"
if [ "$still" = 1 ] && awk -v s="$hot" -v l="$LAT" 'BEGIN {exit !(s < l / 1000)}'; then
	aq_pass "200 hot reads took ${hot}s while cold reads waited on the store"
else
	aq_failed "hot reads do not wait behind cold ones" "hot ${hot}s, cold still running: $still"
fi
aq_finish
