#!/usr/bin/env bash
# test_metrics.sh: metrics for operators (issue 8).
#  1. NFS traffic (32 MiB in with nfs-cp, out with nfs-cat) shows up in the
#     volume's time series within 10%, with its limit and used bytes; pools and
#     nodes sum their volumes; windows and RBAC as for other project routes.
#  2. promtool accepts aquiferd's and the agent's /metrics, which carry the
#     per-volume series.
#  3. Headless chromium opens /ui/#token=... and finds the pool, the volume
#     and a chart with points; the screenshot is kept in tests/e2e/artifacts/.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ARTIFACTS=$SRC/tests/e2e/artifacts

for tool in nfs-cp nfs-cat; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils)"; exit 77; }
done
# promtool (Debian: prometheus) and chromium are in deploy/deps.sh's test list.
if ! command -v promtool >/dev/null || ! command -v chromium >/dev/null; then
	[ "$(id -u)" = 0 ] && bash "$SRC/deploy/deps.sh" test >/dev/null 2>&1
fi

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
VOL=projects/acme/locations/east/volumes/v1
POOL=projects/acme/locations/east/storagePools/sp
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_req POST "/v1/projects?projectId=other" '{}'
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 10000 || exit 1
AGENT_API=$AGENT_API_PORT N1_PID=$AGENT_PID
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"MANUAL"}'
expect_status 200 "create pool sp"
aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"1024","protocols":["NFSV3"],"shareName":"v1",
  "throughputMibps":200,"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .done true "create v1 (200 MiB/s) done"
aq_req GET "$P/volumes/v1"
NFS_PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
# no wait for a first report: the export's first report counts from zero (countersAgeMs)

# --- 1. NFS traffic shows in the series --------------------------------------
MIB32=$((32 << 20))
head -c $MIB32 /dev/urandom >"$AQ_TMP/in.bin"
URL="nfs://127.0.0.1/v1/data.bin?version=3&nfsport=$NFS_PORT&mountport=$NFS_PORT"
ok "nfs-cp writes 32 MiB to v1" nfs-cp "$AQ_TMP/in.bin" "$URL"
nfs-cat "$URL" >"$AQ_TMP/out.bin" 2>/dev/null
ok "nfs-cat reads the 32 MiB back" cmp -s "$AQ_TMP/in.bin" "$AQ_TMP/out.bin"

sums() { # the sums of the last BODY's points
	printf '%s' "$BODY" | jq -r '[.points[] | (.readBytes|tonumber)] | add // 0' | tr '\n' ' '
	printf '%s' "$BODY" | jq -r '[.points[] | (.writeBytes|tonumber)] | add // 0'
}
for _ in $(seq 100); do
	aq_req GET "$P/volumes/v1/metrics?window=15m"
	read -r RB WB <<<"$(sums)"
	[ "${RB:-0}" -ge $((MIB32 * 9 / 10)) ] && [ "${WB:-0}" -ge $((MIB32 * 9 / 10)) ] && break
	sleep 0.2
done
sleep 2.5 # one more report: nothing more may arrive
aq_req GET "$P/volumes/v1/metrics?window=15m"
expect_status 200 "GET volume metrics"
read -r RB WB <<<"$(sums)"
echo "# volume points: read $RB, write $WB bytes (moved $MIB32 each way)"
within10() { [ "$1" -ge $(($2 * 9 / 10)) ] && [ "$1" -le $(($2 * 11 / 10)) ]; }
ok "written bytes in the points are 32 MiB within 10% (got $WB)" within10 "$WB" $MIB32
ok "read bytes in the points are 32 MiB within 10% (got $RB)" within10 "$RB" $MIB32
expect_true '[.points[] | .writeOps | tonumber] | add > 0' "write operations counted"
expect_true '[.points[] | .readOps | tonumber] | add > 0' "read operations counted"
expect_jq '.points[-1].throughputLimitMibps' 200 "the points carry the volume's limit"
expect_jq '.points[-1].usedBytes' "$((MIB32 + 4096))" "the points carry the used bytes (data.bin and its name, 4 KiB)"
expect_true '[.points[] | select(.latencyP99Ms != null)] | length > 0 and all(.latencyP99Ms >= .latencyP50Ms)' \
	"p50 <= p99 latency where there were operations"
expect_true '.stepSeconds == 10 and .windowSeconds == 900 and (.points | length) <= 90' "window=15m: 10 s points"
expect_true '[.points[].time | test("^[0-9-]+T[0-9:]+Z$")] | all' "point times are RFC 3339"
expect_true '[.points[] | .time] == ([.points[] | .time] | sort)' "points oldest first"
aq_req GET "$P/volumes/v1/metrics"
expect_true '.windowSeconds == 3600' "the default window is 1h"
aq_req GET "$P/volumes/v1/metrics?window=2h"
expect_error 400 INVALID_ARGUMENT "a window past the hour kept is refused"
aq_req GET "$P/volumes/v1/metrics?window=soon"
expect_error 400 INVALID_ARGUMENT "a window that does not parse is refused"
aq_req GET "$P/volumes/nope/metrics"
expect_error 404 NOT_FOUND "metrics of a volume that does not exist"

# Pools and nodes sum their volumes.
aq_req GET "$P/storagePools/sp/metrics?window=15m"
expect_status 200 "GET pool metrics"
read -r PRB PWB <<<"$(sums)"
expect_eq "the pool's written bytes are its volume's" "$WB" "$PWB"
expect_eq "the pool's read bytes are its volume's" "$RB" "$PRB"
expect_jq '.points[-1].throughputLimitMibps' 200 "the pool's limit is the sum of its volumes'"
aq_req GET "/v1/nodes/n1/metrics?window=15m"
expect_status 200 "GET node metrics (cluster admin)"
read -r NRB NWB <<<"$(sums)"
expect_eq "the node's written bytes are its volume's" "$WB" "$NWB"
expect_jq '.points[-1].throughputLimitMibps' 10000 "the node's limit is its ceiling"

# RBAC as for other project routes.
VIEWER=$(aq_token "$D" viewer acme)
OTHER=$(aq_token "$D" viewer other)
aq_req_as "$VIEWER" GET "$P/volumes/v1/metrics?window=1m"
expect_status 200 "a viewer of the project reads volume metrics"
aq_req_as "$VIEWER" GET "$P/storagePools/sp/metrics"
expect_status 200 "a viewer of the project reads pool metrics"
aq_req_as "$OTHER" GET "$P/volumes/v1/metrics"
expect_error 403 PERMISSION_DENIED "a token of another project is refused"
aq_req_as "" GET "$P/volumes/v1/metrics"
expect_status 401 "no token, no metrics"
aq_req_as "$VIEWER" GET "/v1/nodes/n1/metrics"
expect_error 403 PERMISSION_DENIED "node metrics are for the cluster admin"

# The CLI verb.
CLI_OUT=$(AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=acme AQUIFER_LOCATION=east \
	"$AQ_BUILDDIR/aquifer" volumes metrics v1 --window=15m --format=json 2>&1)
ok "aquifer volumes metrics v1 --window=15m prints the points" \
	test "$(printf '%s' "$CLI_OUT" | jq -r '.windowSeconds' 2>/dev/null)" = 900

# --- 2. Prometheus text -----------------------------------------------------------
# metrics_auth (the default): a metrics token, as deploy/prometheus/prometheus.yml sends it
METRICS_TOK=$("$AQUIFERD" token --db "$D/aq.db" --role metrics 2>/dev/null | tail -n 1)
curl -s -H "Authorization: Bearer $METRICS_TOK" "$AQ_URL/metrics" >"$AQ_TMP/aquiferd.prom"
curl -s "http://127.0.0.1:$AGENT_API/metrics" >"$AQ_TMP/agent.prom"
LAB='project="acme",location="east",pool="sp",volume="v1"'
got=$(awk -v k="aquifer_volume_write_bytes_total{$LAB}" '$1 == k { print $2 }' "$AQ_TMP/aquiferd.prom")
ok "aquiferd /metrics: aquifer_volume_write_bytes_total{$LAB} is 32 MiB within 10% (got ${got:-none})" \
	within10 "${got:-0}" $MIB32
got=$(awk -v k="aquifer_volume_read_bytes_total{$LAB}" '$1 == k { print $2 }' "$AQ_TMP/aquiferd.prom")
ok "aquiferd /metrics: read bytes counter (got ${got:-none})" within10 "${got:-0}" $MIB32
got=$(awk -v k="aquifer_volume_throughput_limit_bytes_per_second{$LAB}" '$1 == k { print $2 }' "$AQ_TMP/aquiferd.prom")
expect_eq "aquiferd /metrics: the volume's limit in bytes/s" $((200 << 20)) "$got"
got=$(awk -v k="aquifer_volume_used_bytes{$LAB}" '$1 == k { print $2 }' "$AQ_TMP/aquiferd.prom")
expect_eq "aquiferd /metrics: the volume's used bytes" "$((MIB32 + 4096))" "$got"
ok "aquiferd /metrics: node series" grep -q '^aquifer_node_write_bytes_total{node="n1",location="east"} ' "$AQ_TMP/aquiferd.prom"
got=$(awk -v k="aquifer_agent_volume_write_bytes_total{node=\"n1\",volume=\"$VOL\"}" '$1 == k { print $2 }' "$AQ_TMP/agent.prom")
ok "agent /metrics: the volume's write counter (got ${got:-none})" within10 "${got:-0}" $MIB32
for m in aquifer_agent_tier_read_cached_declined_total aquifer_agent_tier_prefetch_evicted_unread_total; do
	ok "agent /metrics: the cold read path's $m{node}" grep -q "^$m{node=\"n1\"} [0-9]" "$AQ_TMP/agent.prom"
done
if command -v promtool >/dev/null; then
	for f in aquiferd agent; do
		if promtool check metrics <"$AQ_TMP/$f.prom" >"$AQ_TMP/$f.promtool" 2>&1; then
			aq_pass "promtool check metrics accepts $f's /metrics"
		else
			aq_failed "promtool check metrics accepts $f's /metrics" "$(head -20 "$AQ_TMP/$f.promtool")"
		fi
	done
	# the example as deployed: its token file holding a metrics token, its
	# targets this aquiferd and agent, scraping every second; this aquiferd
	# serves plain HTTP, so scheme and tls_config go, as the file's comment says
	# (tests/e2e/test_readme.sh scrapes the TLS quickstart with the file as it is)
	printf '%s\n' "$METRICS_TOK" >"$AQ_TMP/aquifer-metrics.token"
	sed -e "s|/etc/prometheus/aquifer-metrics.token|$AQ_TMP/aquifer-metrics.token|" \
		-e '/^ *scheme: https$/d' -e '/^ *tls_config:$/d' -e '/^ *ca_file: /d' \
		-e "s|'127.0.0.1:8080'|'127.0.0.1:$AQ_PORT'|" -e "s|'127.0.0.1:8081'|'127.0.0.1:$AGENT_API'|" \
		-e "s|scrape_interval: 15s|scrape_interval: 1s|" "$SRC/deploy/prometheus/prometheus.yml" >"$AQ_TMP/prometheus.yml"
	if promtool check config "$AQ_TMP/prometheus.yml" >"$AQ_TMP/config.promtool" 2>&1; then
		aq_pass "promtool check config accepts deploy/prometheus/prometheus.yml (with its token file)"
	else
		aq_failed "promtool check config accepts deploy/prometheus/prometheus.yml" "$(head -5 "$AQ_TMP/config.promtool")"
	fi
	if command -v prometheus >/dev/null; then
		expect_eq "Prometheus with deploy/prometheus/prometheus.yml scrapes aquiferd (with its bearer token) and the agent" \
			"aquifer-agent=up aquiferd=up" "$(aq_prom_targets "$AQ_TMP/prometheus.yml" "aquifer-agent=up aquiferd=up")"
	fi
else
	aq_failed "promtool is installed (deploy/deps.sh test installs prometheus)"
fi
# The Grafana dashboard uses only names the two /metrics serve.
missing=
for m in $(jq -r '.panels[].targets[].expr' "$SRC/deploy/grafana/aquifer.json" | grep -o 'aquifer_[a-z0-9_]*' | sort -u); do
	grep -q "^# TYPE $m " "$AQ_TMP/aquiferd.prom" "$AQ_TMP/agent.prom" || missing="$missing $m"
done
expect_eq "deploy/grafana/aquifer.json names only served metrics" "" "$missing"

# --- 3. The dashboard ------------------------------------------------------------
# "Delivered" is the last finished 10 s slot, never the one still filling:
# aquiferd marks that one partial, by its own clock, and the page's series()
# leaves it out even when the browser's clock is a minute behind.
if command -v node >/dev/null; then
	out=$(node -e '
const { series, latest, r2 } = require(process.argv[1]);
const slot = Math.floor(Date.now() / 10000) * 10000;
Date.now = () => slot - 60000;
const pt = (t, mibps, partial) => Object.assign({ time: new Date(t).toISOString(), readBytes: "0",
  writeBytes: String(mibps * 10 * 1048576), throughputLimitMibps: 100 }, partial ? { partial: true } : {});
const s = series({ stepSeconds: 10, points: [pt(slot - 20000, 50), pt(slot - 10000, 40), pt(slot, 1, true)] });
console.log(s.length, latest(s).mibps, latest(s).t === slot - 10000, r2(127.876953125), r2(0.123046875), r2(256));
' "$SRC/server/ui/app.js" 2>&1)
	expect_eq "the dashboard leaves out the partial slot whatever its clock says, and rounds for people" \
		"2 40 true 127.88 0.12 256" "$out"
fi
# the answer marks the slot still filling, and only that one: asked within one
# slot (by this clock), the last point of the current slot is partial
partial_ok=no
for _ in $(seq 20); do
	t0=$(( $(date +%s) / 10 * 10 ))
	aq_req GET "$P/volumes/v1/metrics?window=90s"
	t1=$(( $(date +%s) / 10 * 10 ))
	cur=$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)
	if [ "$t0" = "$t1" ] && printf '%s' "$BODY" | jq -e --arg c "$cur" '.points[-1].time == $c' >/dev/null; then
		partial_ok=$(printf '%s' "$BODY" | jq -r '(.points[-1].partial == true) and ([.points[:-1][] | select(.partial)] | length == 0)')
		break
	fi
	sleep 0.5
done
expect_eq "the metrics answer marks the current slot partial, and no finished one" true "$partial_ok"
code=$(curl -s -o "$AQ_TMP/ui.html" -w '%{http_code} %{content_type}' "$AQ_URL/ui/")
expect_eq "GET /ui/ serves the page without a token" "200 text/html; charset=utf-8" "$code"
ok "the page loads nothing from the network" \
	bash -c "! grep -Eiq '<(script|link|img|iframe)[^>]+(src|href)=\"(https?:)?//' '$AQ_TMP/ui.html'"
code=$(curl -s -o /dev/null -w '%{http_code}' "$AQ_URL/ui/app.js")
expect_eq "GET /ui/app.js" 200 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$AQ_URL/ui/nothing.js")
expect_eq "GET /ui/nothing.js is 404" 404 "$code"

if ! command -v chromium >/dev/null; then
	echo "$AQ_PASS passed, $AQ_FAIL failed before the browser part"
	[ "$AQ_FAIL" -eq 0 ] || exit 1
	echo "SKIP: chromium could not be installed (apt-get install chromium): no browser test of /ui/"
	exit 77
fi
CHROME=(chromium --no-sandbox --headless --disable-gpu --disable-background-networking
	--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage
	--user-data-dir="$AQ_TMP/chrome-profile" --window-size=1280,1800 --virtual-time-budget=20000)
# a volume whose limit has many decimals: the page shows two
aq_mutate POST "$P/volumes?volumeId=v2" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v2",
  "throughputMibps":0.123046875}'
expect_jq .done true "create v2 (0.123046875 MiB/s) done"
aq_req GET "$P/storagePools/sp"
BUDGET=$(printf '%s' "$BODY" | jq -r '.totalThroughputMibps | tonumber')
expect_jq .availableThroughputMibps 55.876953125 "sp has 55.876953125 MiB/s left (256 - 200 - 0.123046875)"
PAGE="$AQ_URL/ui/#token=$TOK"
timeout 120 "${CHROME[@]}" --dump-dom "$PAGE" >"$AQ_TMP/dom.html" 2>"$AQ_TMP/chrome.log"
ok "the dashboard lists pool sp" grep -q "data-pool=\"$POOL\"" "$AQ_TMP/dom.html"
ok "the dashboard lists volume v1" grep -q "data-volume=\"$VOL\"" "$AQ_TMP/dom.html"
ok "the dashboard lists node n1" grep -q 'data-node="nodes/n1"' "$AQ_TMP/dom.html"
ok "a chart of v1's throughput with points and its limit line" bash -c \
	"grep -o '<svg[^>]*data-kind=\"volume\"[^>]*data-name=\"$VOL\".*</svg>' '$AQ_TMP/dom.html' | head -1 |
	 grep -Eq 'class=\"limit\"[^>]*data-limit=\"200\".*<polyline[^>]*data-points=\"[1-9]'"
ok "the pool chart's limit line is the pool's throughput budget ($BUDGET), not the sum of its volumes' limits" bash -c \
	"grep -o '<svg[^>]*data-kind=\"pool\"[^>]*data-name=\"$POOL\".*</svg>' '$AQ_TMP/dom.html' | head -1 |
	 grep -Eq 'class=\"limit\"[^>]*data-limit=\"$BUDGET\"'"
ok "... and its caption says so" grep -q "pool sp: [0-9.]* MiB/s of $BUDGET MiB/s" "$AQ_TMP/dom.html"
ok "the pool row shows the budget and 55.88 MiB/s available" \
	grep -Eq "data-pool=\"$POOL\".*<td class=\"num\">$BUDGET</td><td class=\"num\">55.88</td>" "$AQ_TMP/dom.html"
ok "v2's limit shows as 0.12" grep -Eq 'data-volume="projects/acme/locations/east/volumes/v2".*<td class="num">0.12</td>' "$AQ_TMP/dom.html"
long=$(grep -oE '<td class="num">[^<]*</td>|<figcaption>[^<]*</figcaption>' "$AQ_TMP/dom.html" | grep -E '[0-9]\.[0-9]{3}')
expect_eq "no figure in a cell or caption has more than two decimals" "" "$long"
ok "v1 is served and n1 READY: nothing marked" bash -c "grep -q 'data-volume=\"$VOL\"[^>]*data-served=\"true\"' '$AQ_TMP/dom.html' &&
	grep -q 'data-node=\"nodes/n1\"[^>]*data-state=\"READY\" class=\"\"' '$AQ_TMP/dom.html' && ! grep -q 'class=\"alert\"' '$AQ_TMP/dom.html'"
ok "the page signed in (no error shown)" bash -c "grep -q 'id=\"status\" class=\"\"[^>]*>[0-9]* pools' '$AQ_TMP/dom.html'"
rm -rf "$AQ_TMP/chrome-profile"
timeout 120 "${CHROME[@]}" --screenshot="$AQ_TMP/dashboard.png" "$PAGE" >>"$AQ_TMP/chrome.log" 2>&1
ok "a screenshot of the dashboard was taken" test -s "$AQ_TMP/dashboard.png"
mkdir -p "$ARTIFACTS" && cp "$AQ_TMP/dashboard.png" "$ARTIFACTS/dashboard.png" && cp "$AQ_TMP/dom.html" "$ARTIFACTS/dashboard-dom.html"
echo "# screenshot: $ARTIFACTS/dashboard.png"
[ "$AQ_FAIL" -eq 0 ] || tail -5 "$AQ_TMP/chrome.log"

# A clean stop of both, then no sanitizer report in their logs (ASan builds).
aq_stop "$N1_PID"
aq_stop "$AQ_PID"
aq_sanitizer_clean "$D"
if grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' "$D/n1/agent.log" 2>/dev/null; then
	aq_failed "no sanitizer report in the agent's log" "$(grep -m3 -A12 -E 'Sanitizer|runtime error' "$D/n1/agent.log")"
else
	aq_pass "no sanitizer report in the agent's log"
fi
aq_finish
