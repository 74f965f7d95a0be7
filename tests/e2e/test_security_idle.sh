#!/usr/bin/env bash
# test_security_idle.sh: unauthenticated exhaustion (issue 15, item 4).
#   - thousands of idle and half-open connections (nothing sent, a partial
#     request head, a partial RPC record; under TLS a partial ClientHello)
#     held against aquiferd, the agent API and the NFS port from 127.0.0.2..9
#     (Linux routes 127/8 locally; each address is its own client for the
#     per-IP caps), while a real client keeps working: curl with a token
#     against aquiferd, an authenticated push to the agent, nfs-ls/nfs-cat
#     against the NFS port, each within a few seconds;
#   - a 16 MiB body without (or with wrong) credentials is refused before
#     it is read: 40 such connections leave the agent's RSS small, and
#     aquiferd's too.
# The servers hold at most their per-address cap of each flooding address
# (the documented defaults: aquiferd 128, the agent API 32, NFS 64), and none
# of them once the header/first-call time-out (10 s) has passed.
# Only the servers' default limits are used, so that the same script shows
# the old code failing. The flood helper (tests/e2e/idle_flood) is bounded in
# count and time and stops by itself (the floods here are told to stop once
# their checks are done, the body floods run out their time).
# FLOOD_PER_ADDR (600) and FLOOD_HOLD (seconds, 120: the bound) size it.
. "$(dirname "$0")/lib.sh"

for tool in nfs-ls nfs-cat nfs-cp ss; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils iproute2)"; exit 77; }
done
FLOOD=${IDLE_FLOOD:-$AQ_BUILDDIR/tests/e2e/idle_flood}
[ -x "$FLOOD" ] || { echo "no $FLOOD (make check builds it)" >&2; exit 99; }
PER=${FLOOD_PER_ADDR:-600}
HOLD=${FLOOD_HOLD:-120}
IDLE_FROM=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5
HALF_FROM=127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9
FLOOD_PIDS=()
SRV_PER_IP=128 API_PER_IP=32 NFS_PER_IP=64
mkdir -p "$AQ_TMP/done"

# flood NAME PORT MODE FROM [ARGS...]: start the helper in the background,
# PER connections from each address of FROM for HOLD seconds; its output
# goes to $AQ_TMP/flood.NAME.
flood() {
	local name=$1 port=$2 mode=$3 from=$4
	shift 4
	"$FLOOD" --to "127.0.0.1:$port" --from "$from" --count "$PER" --hold "$HOLD" --mode "$mode" "$@" \
		>"$AQ_TMP/flood.$name" 2>&1 &
	FLOOD_PIDS+=($!)
	AQ_PIDS+=($!)
}

# floods_ready: every running flood has made its connections.
floods_ready() {
	local f
	for _ in $(seq 300); do
		for f in "$AQ_TMP"/flood.*; do grep -q ready "$f" || { sleep 0.1; continue 2; }; done
		return 0
	done
	return 1
}

# floods_end DESC [stop]: the helpers end (told to with stop, else by
# themselves when their time is up); each really held its connections
# (opened at least 3/4 of what it tried).
floods_end() {
	local pid f opened tried
	for pid in "${FLOOD_PIDS[@]}"; do
		[ "${2:-}" = stop ] && kill -TERM "$pid" 2>/dev/null
		for _ in $(seq $(((HOLD + 20) * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		ok "$1: flood helper $pid ended" sh -c "! kill -0 $pid 2>/dev/null"
		wait "$pid" 2>/dev/null
	done
	FLOOD_PIDS=()
	for f in "$AQ_TMP"/flood.*; do
		tried=$(sed -n 's/^tried \([0-9]*\) .*/\1/p' "$f")
		opened=$(sed -n 's/^tried [0-9]* opened \([0-9]*\) .*/\1/p' "$f")
		ok "$1: ${f##*/} opened ${opened:-0} of ${tried:-?} connections ($(tail -1 "$f"))" \
			test "${opened:-0}" -ge $((${tried:-1} * 3 / 4))
		mv "$f" "$AQ_TMP/done/"
	done
}

# within SECONDS DESC CMD...: CMD succeeds, and before SECONDS have passed
# (the commands bound themselves: curl --max-time, timeout for the NFS tools).
within() {
	local secs=$1 desc=$2 t0 ms
	shift 2
	t0=$(date +%s%N)
	if "$@" >/dev/null 2>"$AQ_TMP/within.err"; then
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [ "$ms" -le $((secs * 1000)) ]; then
			aq_pass "$desc (${ms} ms)"
		else
			aq_failed "$desc" "took ${ms} ms, more than ${secs} s: $*"
		fi
	else
		aq_failed "$desc" "failed after $((($(date +%s%N) - t0) / 1000000)) ms: $*" "$(head -c 300 "$AQ_TMP/within.err")"
	fi
}

# held PORT: established connections the server on PORT holds from the
# flooding addresses 127.0.0.2..9.
held() {
	ss -Htn state established "( sport = :$1 )" | awk '$4 ~ /^127\.0\.0\.[2-9]:/' | wc -l
}

# expect_held DESC PORT MAX: within 5 s (connections still in the accept
# queue count as established until the server took and closed them).
expect_held() {
	local n
	for _ in $(seq 25); do
		n=$(held "$2")
		[ "$n" -le "$3" ] && break
		sleep 0.2
	done
	if [ "$n" -le "$3" ]; then aq_pass "$1 ($n held, at most $3)"; else aq_failed "$1" "$n connections held, more than $3"; fi
}

# clean DIR NODE: no sanitizer report in aquiferd's log nor the agent's (ASan builds).
clean() {
	aq_sanitizer_clean "$1"
	if grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' "$1/$2/agent.log" 2>/dev/null; then
		aq_failed "no sanitizer report in the agent's log" "$(grep -m3 -A12 -E 'Sanitizer|runtime error' "$1/$2/agent.log")"
	else
		aq_pass "no sanitizer report in the agent's log"
	fi
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# ---- the cluster: aquiferd, one agent, a volume with a file ----------------------
D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
aq_start "$D" || exit 1
AQ_SRV_PID=$AQ_PID
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 1000 || exit 1
N1_PID=$AGENT_PID N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_mutate POST "$P/volumes?volumeId=demo" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"demo",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .response.state READY "volume demo READY"
head -c 100000 /dev/urandom >"$AQ_TMP/file.bin"
NFS_URL="nfs://127.0.0.1/demo?version=3&nfsport=$N1_NFS&mountport=$N1_NFS"
ok "nfs-cp writes a file to demo" nfs-cp "$AQ_TMP/file.bin" "nfs://127.0.0.1/demo/file.bin?version=3&nfsport=$N1_NFS&mountport=$N1_NFS"
SECRET=$(jq -r .pushSecret "$D/n1/state/credentials.json")
INTENT=$D/n1/state/intent.json
SUM=$(sha256sum <"$AQ_TMP/file.bin" | cut -c1-64)

api_get() { curl -fsS --max-time 5 "${AQ_CURL_OPTS[@]}" -H "Authorization: Bearer $TOK" "$AQ_URL$P/volumes/demo"; }
agent_push() { # a real push: the node's own intent again, with the push secret
	curl -fsS --max-time 5 "${AQ_CURL_OPTS[@]}" "${PUSH_OPTS[@]}" -X PUT -H "Authorization: Bearer $SECRET" \
		-H 'Content-Type: application/json' --data-binary "@$INTENT" "$AQ_SCHEME://127.0.0.1:$1/v1/intent"
}
agent_status() {
	curl -fsS --max-time 5 "${AQ_CURL_OPTS[@]}" "${PUSH_OPTS[@]}" -H "Authorization: Bearer $SECRET" \
		"$AQ_SCHEME://127.0.0.1:$1/v1/status"
}
nfs_read() { [ "$(timeout -k 1 10 nfs-cat "nfs://127.0.0.1/demo/file.bin?version=3&nfsport=$N1_NFS&mountport=$N1_NFS" | sha256sum | cut -c1-64)" = "$SUM" ]; }
nfs_list() { timeout -k 1 10 nfs-ls "$NFS_URL" | grep -q file.bin; }
PUSH_OPTS=()

# ---- 1. idle and half-open floods against all three ports -------------------------
flood srv-idle "$AQ_PORT" idle "$IDLE_FROM"
flood srv-http "$AQ_PORT" http "$HALF_FROM"
flood api-idle "$N1_API" idle "$IDLE_FROM"
flood api-http "$N1_API" http "$HALF_FROM"
flood nfs-idle "$N1_NFS" idle "$IDLE_FROM"
flood nfs-rpc "$N1_NFS" rpc "$HALF_FROM"
ok "the floods are up ($((PER * 8)) connections per port)" floods_ready
expect_held "aquiferd holds at most $SRV_PER_IP of each flooding address" "$AQ_PORT" $((SRV_PER_IP * 8))
expect_held "the agent API holds at most $API_PER_IP of each flooding address" "$N1_API" $((API_PER_IP * 8))
expect_held "the NFS port holds at most $NFS_PER_IP of each flooding address" "$N1_NFS" $((NFS_PER_IP * 8))
for round in "at once" "13 s later"; do
	if [ "$round" != "at once" ]; then
		sleep 13
		expect_held "aquiferd closed the idle and half-open connections" "$AQ_PORT" 0
		expect_held "the agent API closed the idle and half-open connections" "$N1_API" 0
		expect_held "the NFS port closed the idle and half-open connections" "$N1_NFS" 0
	fi
	within 5 "$round: aquiferd answers a token holder while flooded" api_get
	within 5 "$round: the agent takes an authenticated push while flooded" agent_push "$N1_API"
	within 5 "$round: the agent answers GET /v1/status while flooded" agent_status "$N1_API"
	within 10 "$round: nfs-ls lists the volume while flooded" nfs_list
	within 10 "$round: nfs-cat reads the file back while flooded" nfs_read
done
floods_end "plain" stop
ok "aquiferd survived the flood" kill -0 "$AQ_SRV_PID"
ok "the agent survived the flood" kill -0 "$N1_PID"

# ---- 2. bodies without credentials are not read --------------------------------------
# One request by curl: the answer comes before the body went (curl waits for
# 100 Continue, which an early answer never sends).
head -c $((16 << 20)) /dev/zero >"$AQ_TMP/big.bin"
out=$(curl -s -o /dev/null -w '%{http_code} %{size_upload}' --max-time 20 -X PUT -H "Authorization: Bearer wrong" \
	--data-binary "@$AQ_TMP/big.bin" "http://127.0.0.1:$N1_API/v1/intent")
expect_eq "a 16 MiB intent with a wrong secret is refused (401)" 401 "${out% *}"
ok "... before its body was sent (uploaded ${out#* } bytes)" test "${out#* }" -lt $((1 << 20))
out=$(curl -s -o /dev/null -w '%{http_code} %{size_upload}' --max-time 20 -X POST \
	--data-binary "@$AQ_TMP/big.bin" "$AQ_URL$P/storagePools?storagePoolId=x")
expect_eq "a 16 MiB create without a token is refused by aquiferd (401)" 401 "${out% *}"
ok "... before its body was sent (uploaded ${out#* } bytes)" test "${out#* }" -lt $((1 << 20))

# Connections that stream 16 MiB bodies without waiting for an answer: 40
# against the agent, 200 against aquiferd (whose cap is 1 MiB a request).
PER_SAVE=$PER HOLD_SAVE=$HOLD
PER=20 HOLD=8
api0=$(rss_kb "$N1_PID") srv0=$(rss_kb "$AQ_SRV_PID")
flood body-none "$N1_API" body 127.0.0.10
flood body-wrong "$N1_API" body 127.0.0.11 --auth "Authorization: Bearer not-the-secret"
PER=25 flood body-srv "$AQ_PORT" body 127.0.0.12,127.0.0.13,127.0.0.14,127.0.0.15,127.0.0.16,127.0.0.17,127.0.0.18,127.0.0.19 \
	--request "POST $P/storagePools?storagePoolId=x"
api_max=$api0 srv_max=$srv0
for _ in $(seq 16); do
	sleep 0.5
	r=$(rss_kb "$N1_PID"); [ "$r" -gt "$api_max" ] && api_max=$r
	r=$(rss_kb "$AQ_SRV_PID"); [ "$r" -gt "$srv_max" ] && srv_max=$r
done
ok "40 unauthenticated 16 MiB bodies grow the agent's RSS by less than 64 MiB ($(((api_max - api0) / 1024)) MiB)" \
	test $((api_max - api0)) -lt $((64 << 10))
ok "200 unauthenticated 16 MiB bodies grow aquiferd's RSS by less than 32 MiB ($(((srv_max - srv0) / 1024)) MiB)" \
	test $((srv_max - srv0)) -lt $((32 << 10))
floods_end "bodies"
within 5 "the agent still takes a push afterwards" agent_push "$N1_API"
PER=$PER_SAVE HOLD=$HOLD_SAVE
aq_stop "$N1_PID"
aq_stop "$AQ_SRV_PID"
clean "$D" n1

# ---- 3. under TLS: partial ClientHellos ----------------------------------------------
T=$AQ_TMP/tls
mkdir -p "$T"
ok "a cluster CA" "$AQUIFERD" ca init --db "$T/aq.db"
ok "a server certificate from it" "$AQUIFERD" ca issue --db "$T/aq.db" --dns localhost --ip 127.0.0.1
AQ_SCHEME=https
AQ_CURL_OPTS=(--cacert "$T/ca.crt")
AQ_SERVE_ARGS=(--tls-cert "$T/server.crt" --tls-key "$T/server.key")
AQ_AGENT_ARGS=(--ca-file "$T/ca.crt")
aq_start "$T" || exit 1
TOK=$(aq_token "$T" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_agent_start "$T" n1 east "$AQ_TMP/shelf-tls" "$(aq_join_token east)" 1000 || exit 1
N1_API=$AGENT_API_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_mutate POST "$P/volumes?volumeId=demo" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"demo"}'
SECRET=$(jq -r .pushSecret "$T/n1/state/credentials.json")
INTENT=$T/n1/state/intent.json
PUSH_OPTS=(--cert "$T/client.crt" --key "$T/client.key")
within 5 "over TLS: aquiferd answers before the flood" api_get
within 5 "over TLS: the agent takes a push (client certificate and secret) before the flood" agent_push "$N1_API"
flood tls-srv-idle "$AQ_PORT" idle "$IDLE_FROM"
flood tls-srv-hello "$AQ_PORT" tls "$HALF_FROM"
flood tls-api-idle "$N1_API" idle "$IDLE_FROM"
flood tls-api-hello "$N1_API" tls "$HALF_FROM"
ok "the TLS floods are up" floods_ready
expect_held "over TLS: aquiferd holds at most $SRV_PER_IP of each flooding address" "$AQ_PORT" $((SRV_PER_IP * 8))
expect_held "over TLS: the agent API holds at most $API_PER_IP of each flooding address" "$N1_API" $((API_PER_IP * 8))
for round in "at once" "13 s later"; do
	if [ "$round" != "at once" ]; then
		sleep 13
		expect_held "over TLS: aquiferd closed the idle and half-open handshakes" "$AQ_PORT" 0
		expect_held "over TLS: the agent API closed the idle and half-open handshakes" "$N1_API" 0
	fi
	within 5 "TLS, $round: aquiferd answers a token holder while flooded" api_get
	within 5 "TLS, $round: the agent takes an authenticated push while flooded" agent_push "$N1_API"
done
floods_end "TLS" stop
aq_stop "$AGENT_PID"
aq_stop "$AQ_PID"
clean "$T" n1

aq_finish
