#!/usr/bin/env bash
# tests/e2e/test_stop_busy.sh: SIGTERM aquiferd during a stream of creates
# (issue 22, a clean stop). Six clients, each on its own keep-alive
# connection, create projects one after another; once enough were
# acknowledged aquiferd gets SIGTERM. A clean stop lets the requests running
# finish and answers each as it committed, refuses what had not started
# with 503 UNAVAILABLE (a Google error body) and exits without hanging. So,
# after a restart on the same database: every create answered 200 exists,
# every other one got an error and does not exist (nothing committed
# without its answer), no request hung, and aquiferd exited within
# STOP_BOUND seconds. Runs on AQ_DB (sqlite by default; test_pg_e2e.sh runs
# it again with AQ_DB=postgres).
. "$(dirname "$0")/lib.sh"

CLIENTS=6
PER_CLIENT=400
STOP_AFTER=${STOP_AFTER:-40}   # acknowledged creates before the SIGTERM
STOP_BOUND=20                  # seconds from SIGTERM to exit: "nothing hangs"

command -v python3 >/dev/null || { echo "python3 is required"; exit 99; }
D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
port=$AQ_PORT

# The clients: one line per create to res.N: "ID STATUS GOOGLE-STATUS"
# (STATUS "conn" for a connection refused or closed before an answer,
# "timeout" for a request with no answer in 30 s).
cat >"$AQ_TMP/client.py" <<'PY'
import http.client, json, socket, sys
port, tok, n, per, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
hdr = {"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
conn, fails = None, 0
with open(out, "w", buffering=1) as f:
    for i in range(per):
        pid = "s%s-%d" % (n, i)
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/v1/projects?projectId=" + pid, body="{}", headers=hdr)
            r = conn.getresponse()
            body = r.read()
            st = ""
            if r.status != 200:
                try:
                    st = json.loads(body)["error"]["status"]
                except Exception:
                    st = "no-google-body"
            f.write("%s %d %s\n" % (pid, r.status, st))
            fails = 0
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except socket.timeout:
            f.write("%s timeout\n" % pid)
            break
        except (OSError, http.client.HTTPException):
            f.write("%s conn\n" % pid)
            conn = None
            fails += 1
            if fails >= 3:
                break
PY
CPIDS=()
for n in $(seq "$CLIENTS"); do
	python3 "$AQ_TMP/client.py" "$port" "$TOK" "$n" "$PER_CLIENT" "$AQ_TMP/res.$n" &
	CPIDS+=($!)
done
acked() { cat "$AQ_TMP"/res.* 2>/dev/null | awk '$2 == 200' | wc -l; }
for _ in $(seq 600); do
	[ "$(acked)" -ge "$STOP_AFTER" ] && break
	sleep 0.05
done
n_at_stop=$(acked)
t0=$(date +%s.%N)
kill -TERM "$AQ_PID"
exited=no
for _ in $(seq $((STOP_BOUND * 10))); do
	kill -0 "$AQ_PID" 2>/dev/null || { exited=yes; break; }
	sleep 0.1
done
stop_s=$(echo "$(date +%s.%N) - $t0" | bc)
expect_eq "aquiferd exits within ${STOP_BOUND} s of SIGTERM during the stream (took ${stop_s} s)" yes "$exited"
[ "$exited" = yes ] || kill -KILL "$AQ_PID" 2>/dev/null
wait "$AQ_PID" 2>/dev/null
rc=$?
expect_eq "aquiferd's exit status after SIGTERM" 0 "$rc"
for p in "${CPIDS[@]}"; do wait "$p"; done
cat "$AQ_TMP"/res.* >"$AQ_TMP/all"
n_ok=$(awk '$2 == 200' "$AQ_TMP/all" | wc -l)
n_503=$(awk '$2 == 503' "$AQ_TMP/all" | wc -l)
n_conn=$(awk '$2 == "conn"' "$AQ_TMP/all" | wc -l)
echo "# $n_at_stop acknowledged at SIGTERM; in all $n_ok answered 200, $n_503 answered 503, $n_conn refused at the connection; stop took $stop_s s"
ok "the stop came in the middle of the stream" test "$n_ok" -ge "$STOP_AFTER" -a "$n_ok" -lt $((CLIENTS * PER_CLIENT))
expect_eq "no request hung (no answer in 30 s)" "" "$(awk '$2 == "timeout"' "$AQ_TMP/all")"
expect_eq "every HTTP error is 503 UNAVAILABLE with a Google error body" "" \
	"$(awk '$2 != 200 && $2 != "conn" && $2 != "timeout" && !($2 == 503 && $3 == "UNAVAILABLE")' "$AQ_TMP/all")"
ok "writes that arrived while stopping were refused with 503 ($n_503)" test "$n_503" -gt 0

aq_start "$D" "$port" || { aq_failed "aquiferd restarts on the same db"; aq_finish; }
missing=0
ghosts=0
while read -r id st _; do
	aq_req GET "/v1/projects/$id"
	if [ "$st" = 200 ] && [ "$STATUS" != 200 ]; then
		missing=$((missing + 1))
		echo "  acknowledged $id is missing (HTTP $STATUS)"
	elif [ "$st" != 200 ] && [ "$STATUS" != 404 ]; then
		ghosts=$((ghosts + 1))
		echo "  $id answered $st but is there (HTTP $STATUS)"
	fi
done <"$AQ_TMP/all"
expect_eq "every create answered 200 exists after the restart" 0 "$missing"
expect_eq "no create that got an error exists after the restart (nothing committed without its answer)" 0 "$ghosts"
aq_req POST "/v1/projects?projectId=after-stop" '{}'
expect_status 200 "a create after the restart"
aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
AQ_RECORD=0 aq_finish
