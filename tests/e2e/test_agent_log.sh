#!/usr/bin/env bash
# test_agent_log.sh: the agent's levelled log (issue 16, shared helpers).
#  1. --log-level debug: every record of the agent is one line
#     "TIME LEVEL SOURCE req=ID MESSAGE"; the debug records carry their
#     request id (agent HTTP: http-N, status reports: report-N, an intent:
#     gen-N, NFS: the xid as 8 hex digits).
#  2. log-level = debug in --config and --log-level warn: the flag wins, no
#     debug or info record is written.
#  3. A bad level, by flag or in the file, exits 2 with ut_log's message.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_acme_start "$D"
AQ_AGENT_ARGS=(--log-level debug)
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" || exit 1
AQ_AGENT_ARGS=()
API=$AGENT_API_PORT NFS=$AGENT_NFS_PORT
LOG=$D/n1/agent.log
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "create pool sp"
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .done true "create v1 done"

# --- 1. debug: the line format and the request ids -----------------------------
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'
REC="^$TS (error|warn|info|debug) [!-~]+ req=[!-~]+ "
if command -v nfs-ls >/dev/null; then
	nfs-ls "nfs://127.0.0.1/v1?version=3&nfsport=$NFS&mountport=$NFS" >/dev/null 2>&1
	for _ in $(seq 50); do grep -qE "debug nfs_dispatch req=[0-9a-f]{8} NFSv3 procedure" "$LOG" && break; sleep 0.1; done
	ok "an NFS call is a debug record with its xid as 8 hex digits" \
		grep -qE "^$TS debug nfs_dispatch req=[0-9a-f]{8} NFSv3 procedure [0-9]+: status 0$" "$LOG"
fi
for _ in $(seq 50); do grep -q "agent_ctl req=report-" "$LOG" && break; sleep 0.1; done
ok "the start is an info record of agent_main without a request id" \
	grep -qE "^$TS info agent_main req=- aquifer-agent [^ ]+: node n1 in east, API 127\.0\.0\.1:$API" "$LOG"
ok "aquiferd's push is a debug record of agent_http with its request id" \
	grep -qE "^$TS debug agent_http req=http-[0-9]+ PUT /v1/intent: 200$" "$LOG"
ok "a status report is a debug record with its report number" \
	grep -qE "^$TS debug agent_ctl req=report-[0-9]+ status report: 200$" "$LOG"
ok "an applied intent is an info record with its generation" \
	grep -qE "^$TS info agent_apply req=gen-[0-9]+ applied: 1 volumes served, 0 not$" "$LOG"
# every line the agent wrote is a record (MHD and sanitizers aside: none here)
BAD=$(grep -cvE "$REC" "$LOG")
expect_eq "every line of the debug log is one record" 0 "$BAD"

# --- 2. the flag wins over the file: warn writes no debug or info -------------
aq_stop "$AGENT_PID"
printf 'log-level = debug\n' >"$AQ_TMP/agent.conf"
WLOG=$D/n1/agent-warn.log
"$AQUIFER_AGENT" --server "$AQ_URL" --node n1 --location east --shelf "$AQ_TMP/shelf" \
	--listen "127.0.0.1:$API" --nfs-listen "127.0.0.1:$NFS" --state-dir "$D/n1/state" \
	--config "$AQ_TMP/agent.conf" --log-level warn >"$WLOG" 2>&1 &
WPID=$!
AQ_PIDS+=("$WPID")
for _ in $(seq 100); do curl -fs "${AQ_CURL_OPTS[@]}" "$AQ_SCHEME://127.0.0.1:$API/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
ok "the agent serves at warn" curl -fs "${AQ_CURL_OPTS[@]}" "$AQ_SCHEME://127.0.0.1:$API/healthz" -o /dev/null
sleep 4.5 # two status reports and a push at least
aq_req GET "/v1/nodes/n1"
expect_jq .state READY "the node is READY again (its reports reach aquiferd)"
ok "no debug record at warn (though the file says debug)" bash -c '! grep -q " debug " "$1"' _ "$WLOG"
ok "no info record at warn" bash -c '! grep -q " info " "$1"' _ "$WLOG"
aq_stop "$WPID"

# --- 3. a bad level exits 2 with ut_log's message ----------------------------
OUT=$("$AQUIFER_AGENT" --log-level loud 2>&1)
expect_eq "--log-level loud exits 2" 2 "$?"
ok "--log-level loud: the message names the levels" \
	grep -q -- '--log-level must be one of error, warn, info, debug, got "loud"' <<<"$OUT"
printf '# levels\nlog_level = verbose\n' >"$AQ_TMP/bad.conf"
OUT=$("$AQUIFER_AGENT" --config "$AQ_TMP/bad.conf" 2>&1)
expect_eq "log_level = verbose in the file exits 2" 2 "$?"
ok "the file's bad level is named with FILE:LINE" \
	grep -q "$AQ_TMP/bad.conf:2: log-level must be one of error, warn, info, debug, got \"verbose\"" <<<"$OUT"
aq_finish
