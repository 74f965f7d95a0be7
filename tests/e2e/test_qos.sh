#!/usr/bin/env bash
# test_qos.sh: QoS enforced in the data path (issue 5), measured by real
# libnfs clients (bench/qos/qosload: 1 MiB requests at depth 8, 4 KiB random
# reads at depth 32) against aquiferd + one aquifer-agent:
#   40 and 160 MiB/s volumes, reads and writes, alone and concurrently: +-5%
#   two clients on one 100 MiB/s volume: 50 +- 15% each
#   PATCH 40 -> 80 MiB/s: 80 +- 5% on the same mount, no remount
#   FLEX custom pool with totalIops 1024: 1024 +- 5% ops/s
# Each measurement: 1 s warm-up, then the median of 1 s windows over 5 s
# (medians ride out a noisy shared machine; a concurrent pair that falls short
# of its band is measured again, up to 3 times; a wrong limit still fails).
. "$(dirname "$0")/lib.sh"

QOSLOAD=$AQ_BUILDDIR/bench/qos/qosload
[ -x "$QOSLOAD" ] || { echo "SKIP: $QOSLOAD not built (needs libnfs)"; exit 77; }

D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
aq_acme_start "$D"
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 4000 || exit 1
N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT

aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"40960","qosType":"MANUAL"}'
expect_status 200 "MANUAL pool"
vol() { # vol ID MIBPS POOL
	printf '{"storagePool":"%s","capacityGib":"1024","protocols":["NFSV3"],"shareName":"%s"%s,
	  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' \
		"${3:-sp}" "$1" "$( [ -n "$2" ] && printf ',"throughputMibps":%s' "$2")"
}
mkvol() { # mkvol ID MIBPS [POOL]
	aq_req POST "$P/volumes?volumeId=$1" "$(vol "$1" "$2" "${3:-}")"
	expect_status 200 "create $1"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 30
	expect_jq '.response.state' READY "$1 READY"
}
mkvol q40 40
mkvol q160 160
mkvol q100 100
mkvol qfree 2000
aq_req POST "$P/storagePools?storagePoolId=fx" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"FLEX","capacityGib":"1024","customPerformanceEnabled":true,
  "totalThroughputMibps":"64","totalIops":"1024"}'
expect_status 200 "FLEX custom pool"
aq_op_wait "$(printf '%s' "$BODY" | jq -r '.name // empty')" 30 >/dev/null 2>&1
mkvol fv "" fx

url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$N1_NFS&mountport=$N1_NFS"; }

# load NAME VOL MODE [BLOCK DEPTH]: run qosload in the background, output in $AQ_TMP/NAME.out
load() {
	"$QOSLOAD" -m "$3" -b "${4:-1048576}" -d "${5:-8}" -w 1 -t 5 -i 1000 -s 256 "$(url "$2")" "/$1.dat" \
		>"$AQ_TMP/$1.out" 2>&1 &
}
# median NAME FIELD: a field of qosload's result line
median() { awk -v f="$2" '$1 == "result" { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$AQ_TMP/$1.out"; }
# within NAME WANT TOLPCT FIELD DESC: the median is WANT +- TOLPCT%. When this
# machine cannot even move 1.2 x WANT through the volume unthrottled (a
# sanitizer build on a busy VM), only "not above the limit" can be checked.
within() {
	local got lo
	got=$(median "$1" "$4")
	lo=$(awk -v w="$2" -v t="$3" 'BEGIN { print w * (1 - t / 100) }')
	if [ "$4" = median_mibps ] && awk -v c="$CAPACITY" -v w="$2" 'BEGIN { exit !(c < 1.2 * w) }'; then
		lo=0
		echo "# $5: this machine moves only $CAPACITY MiB/s unthrottled; checking the upper bound"
	fi
	if [ -n "$got" ] && awk -v g="$got" -v l="$lo" -v w="$2" -v t="$3" 'BEGIN { exit !(g >= l && g <= w * (1 + t / 100)) }'; then
		aq_pass "$5: $got (want $2 +- $3%)"
		echo "# $5: $got (want $2 +- $3%)"
	else
		aq_failed "$5" "got: ${got:-nothing} (want $2 +- $3%)" "$(tail -8 "$AQ_TMP/$1.out")"
	fi
}

# short NAME WANT TOLPCT: the median fell under the band. Only a shortfall
# can be the machine (another process took the cores for a second); a result
# above the band is the limiter's fault and is never measured again.
short() {
	awk -v g="$(median "$1" median_mibps)" -v w="$2" -v t="$3" 'BEGIN { exit !(g + 0 < w * (1 - t / 100)) }'
}
# outside NAME WANT TOLPCT: the median is not within the band.
outside() {
	awk -v g="$(median "$1" median_mibps)" -v w="$2" -v t="$3" 'BEGIN { exit !(g + 0 < w * (1 - t / 100) || g + 0 > w * (1 + t / 100)) }'
}

# What this machine delivers without throttling (a 2000 MiB/s volume), the
# slower of write and read.
load cal-w qfree write; wait $!
load cal-r qfree read; wait $!
CAPACITY=$(awk -v a="$(median cal-w median_mibps)" -v b="$(median cal-r median_mibps)" 'BEGIN { print (a < b ? a : b) + 0 }')
echo "# unthrottled: $CAPACITY MiB/s"

# --- 1. 40 and 160 MiB/s, reads and writes, alone -------------------------
# A run that falls short (another process took the cores) is measured again,
# up to 3 times; one over the band is the limiter's fault and never is.
for m in read write; do
	for v in q40 q160; do
		i=1
		load "$v-$m" "$v" "$m"; wait $!
		while [ $i -lt 3 ] && short "$v-$m" "${v#q}" 5; do
			echo "# $v $m alone fell short ($(median "$v-$m" median_mibps)): measuring again"
			load "$v-$m" "$v" "$m"; wait $!
			i=$((i + 1))
		done
		within "$v-$m" "${v#q}" 5 median_mibps "$v $m alone (MiB/s)"
	done
done

# --- 2. concurrently ------------------------------------------------------
pair() { # NAME1 VOL1 MODE1 NAME2 VOL2 MODE2 [BLOCK2 DEPTH2]: two loads at once
	load "$1" "$2" "$3"; local p1=$!
	load "$4" "$5" "$6" "${7:-1048576}" "${8:-8}"; local p2=$!
	wait $p1 $p2
}
over() { # NAME CEILING: the median passed what its volume may deliver
	awk -v g="$(median "$1" median_mibps)" -v c="$2" 'BEGIN { exit !(g + 0 > c) }'
}
# again N NAME1 WANT1 CEIL1 NAME2 WANT2 CEIL2 TOL -- PAIR ARGS: run the pair
# until both are within WANT +- TOL%, N times at most, unless one went over
# its ceiling (the volume's limit: never measured again); the checks then
# judge the last run. Below the ceiling, one client above its share is the
# other starved by the machine (it takes what the other leaves).
again() {
	local n=$1 a=$2 wa=$3 ca=$4 b=$5 wb=$6 cb=$7 t=$8 i=1
	shift 9
	pair "$@"
	while [ $i -lt "$n" ] && ! over "$a" "$ca" && ! over "$b" "$cb" &&
		{ outside "$a" "$wa" "$t" || outside "$b" "$wb" "$t"; }; do
		echo "# $a/$b fell short ($(median "$a" median_mibps), $(median "$b" median_mibps)): measuring again"
		pair "$@"
		i=$((i + 1))
	done
}
again 3 c40r 40 42 c160w 160 168 5 -- c40r q40 read c160w q160 write
within c40r 40 5 median_mibps "q40 read while q160 writes (MiB/s)"
within c160w 160 5 median_mibps "q160 write while q40 reads (MiB/s)"
again 3 c40w 40 42 c160r 160 168 5 -- c40w q40 write c160r q160 read
within c40w 40 5 median_mibps "q40 write while q160 reads (MiB/s)"
within c160r 160 5 median_mibps "q160 read while q40 writes (MiB/s)"

# --- 3. two clients share one volume fairly --------------------------------
# a modest client (depth 2) next to depth 8. Either may take what the other
# leaves while the machine starves it, so only more than the volume's 100
# MiB/s stops a second measurement; starving B for A fails three times.
again 3 fa 50 105 fb 50 105 15 -- fa q100 read fb q100 read 1048576 2
within fa 50 15 median_mibps "client A on q100 (depth 8)"
within fb 50 15 median_mibps "client B on q100 (depth 2)"

# --- 4. PATCH 40 -> 80 MiB/s while a client keeps its mount ----------------
"$QOSLOAD" -m read -d 8 -w 1 -t 14 -i 1000 "$(url q40)" /patch.dat >"$AQ_TMP/patch.out" 2>&1 &
p1=$!
sleep 4
aq_req PATCH "$P/volumes/q40?updateMask=throughputMibps" '{"throughputMibps":80}'
expect_status 200 "PATCH throughputMibps 40 -> 80"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 30
wait $p1
# windows 0-2 before the change, 9-13 well after it (<= 5 s to apply)
before=$(awk '$1 == "window" && $2 <= 2 { print $3 }' "$AQ_TMP/patch.out" | sort -n | sed -n 2p)
after=$(awk '$1 == "window" && $2 >= 9 { print $3 }' "$AQ_TMP/patch.out" | sort -n | sed -n 3p)
printf 'result median_mibps %s\n' "$before" >"$AQ_TMP/pb.out"
printf 'result median_mibps %s\n' "$after" >"$AQ_TMP/pa.out"
within pb 40 5 median_mibps "before the PATCH, same mount (MiB/s)"
within pa 80 5 median_mibps "after the PATCH, same mount (MiB/s)"
ok "no I/O error across the limit change" grep -q "errors 0$" "$AQ_TMP/patch.out"

# --- 5. FLEX pool IOPS ----------------------------------------------------
load flex fv randread 4096 32; wait $!
within flex 1024 5 median_iops "FLEX pool totalIops 1024, 4 KiB random reads at depth 32 (ops/s)"

# --- 6. metrics -----------------------------------------------------------
M=$(curl -s "http://127.0.0.1:$N1_API/metrics")
ok "limit of q40 is 80 MiB/s on /metrics" grep -q \
	"^aquifer_agent_volume_qos_limit_bytes_per_second{node=\"n1\",volume=\"${P#/v1/}/volumes/q40\"} 83886080$" <<<"$M"
ok "FLEX pool budget on /metrics" grep -q \
	"^aquifer_agent_volume_qos_pool_limit_iops{node=\"n1\",volume=\"${P#/v1/}/volumes/fv\"} 1024$" <<<"$M"
ok "time spent waiting for tokens is counted" awk -v v="${P#/v1/}/volumes/q160" \
	'index($0, "aquifer_agent_volume_throttled_seconds_total{") == 1 && index($0, v "\"") && $2 > 0 { f = 1 } END { exit !f }' <<<"$M"
ok "delivered bytes are counted" awk -v v="${P#/v1/}/volumes/q160" \
	'index($0, "aquifer_agent_volume_qos_delivered_bytes_total{") == 1 && index($0, v "\"") && $2 > 1e9 { f = 1 } END { exit !f }' <<<"$M"
aq_finish
