#!/usr/bin/env bash
# test_server_log.sh: aquiferd's log (util/ut_log, issue 16).
#   - one record a line: RFC 3339 UTC time with milliseconds, level, source,
#     req=ID, message; the start-up line is info from srv_main;
#   - every HTTP answer carries X-Request-Id, and at debug the answer's record
#     carries the same id (req=ID) with the method, path and status;
#   - --log-level and the config key log-level filter (info keeps no debug
#     record, error keeps no info record; the flag wins over the key);
#   - a bad level is refused: exit 2 for the flag, FILE:LINE: for the key,
#     both with ut_log_level_parse's message.
. "$(dirname "$0")/lib.sh"
d=$AQ_TMP
REC='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (error|warn|info|debug) [A-Za-z0-9_]+ req=[^ ]+ '

# ---- default level (info): the format, no debug record
aq_start "$d/info" || exit 1
aq_req GET /healthz
expect_eq "healthz answers" 200 "$STATUS"
aq_stop "$AQ_PID"
log=$d/info/aquiferd.log
ok "every line of the log is one record (time level source req= message)" \
	bash -c '[ -s "$1" ] && ! grep -vqE "$2" "$1"' _ "$log" "$REC"
ok "the start-up record is info from srv_main, without a request id" \
	grep -qE "^[^ ]+ info srv_main req=- aquiferd .*: serving http://127.0.0.1:$AQ_PORT .*log level info" "$log"
ok "the stop is logged at info" grep -qE ' info srv_main req=- signal 15, stopping' "$log"
ok "info keeps no debug record" bash -c '! grep -q " debug " "$1"' _ "$log"

# ---- --log-level debug: the answer's record carries the X-Request-Id
AQ_SERVE_ARGS=(--log-level debug)
aq_start "$d/debug" || exit 1
hdr=$(curl -s -D - -o /dev/null "$AQ_URL/v1/projects/p/locations/nowhere/volumes")
rid=$(tr -d '\r' <<<"$hdr" | sed -n 's/^X-Request-Id: //Ip')
ok "the answer carries an X-Request-Id" test -n "$rid"
hdr2=$(curl -s -D - -o /dev/null "$AQ_URL/healthz")
rid2=$(tr -d '\r' <<<"$hdr2" | sed -n 's/^X-Request-Id: //Ip')
ok "two requests get two ids" test -n "$rid2" -a "$rid2" != "$rid"
for _ in $(seq 50); do grep -q "req=$rid2 " "$d/debug/aquiferd.log" && break; sleep 0.1; done
aq_stop "$AQ_PID"
log=$d/debug/aquiferd.log
ok "at debug, the answer's record has its request id, method, path and status (401: no token)" \
	grep -qE "^[^ ]+ debug srv_http req=$rid GET /v1/projects/p/locations/nowhere/volumes 401 [0-9.]+ ms$" "$log"
ok "at debug, the healthz answer has its own record" grep -qE " debug srv_http req=$rid2 GET /healthz 200 " "$log"
ok "the debug log is still one record a line" bash -c '! grep -vqE "$2" "$1"' _ "$log" "$REC"

# ---- config key log-level = error: no info record; the flag wins over it
printf 'log-level = error\n' >"$d/error.conf"
AQ_SERVE_ARGS=(--config "$d/error.conf")
aq_start "$d/error" || exit 1
aq_req GET /healthz
aq_stop "$AQ_PID"
ok "log-level = error in the config keeps no info record (not even the start-up line)" \
	bash -c '! grep -qE " (info|debug) " "$1"' _ "$d/error/aquiferd.log"
AQ_SERVE_ARGS=(--config "$d/error.conf" --log-level info)
aq_start "$d/flagwins" || exit 1
aq_stop "$AQ_PID"
ok "--log-level info wins over log-level = error" grep -q ' info srv_main req=- aquiferd ' "$d/flagwins/aquiferd.log"
AQ_SERVE_ARGS=()

# ---- bad levels are refused before anything starts
err=$(timeout 10 "$AQUIFERD" --listen 127.0.0.1:1 --db "$d/bad.db" --log-level loud 2>&1 >/dev/null); rc=$?
expect_eq "--log-level loud exits 2" 2 "$rc"
ok "--log-level loud says what it takes" \
	grep -qF 'log-level must be one of error, warn, info, debug, got "loud"' <<<"$err"
printf '# levels\nlog-level = verbose\n' >"$d/bad.conf"
err=$(timeout 10 "$AQUIFERD" --config "$d/bad.conf" --listen 127.0.0.1:1 --db "$d/bad.db" 2>&1 >/dev/null); rc=$?
ok "log-level = verbose in the config is refused (status $rc)" test "$rc" != 0 -a "$rc" != 124
ok "... with FILE:LINE: and the message" \
	grep -qF "$d/bad.conf:2: log-level must be one of error, warn, info, debug, got \"verbose\"" <<<"$err"
ok "nothing was created by the refused starts" test ! -e "$d/bad.db"
aq_sanitizer_clean "$d/debug"
aq_finish
