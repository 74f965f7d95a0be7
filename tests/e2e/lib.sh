# tests/e2e/lib.sh: shared helpers for the end-to-end scripts (sourced, not run).
#
# A script sources this file, starts one or more aquiferd processes with
# aq_start, talks to them with aq_req (curl), checks answers with the expect_*
# helpers and ends with aq_finish, which prints "N passed, M failed" and sets
# the exit status. Only the processes started here are ever killed (by PID),
# and the temporary directory is removed on exit (kept with AQ_KEEP=1).
#
# Environment: AQ_BUILDDIR (where aquiferd was built; default: two levels up
# from the script, or the current directory when make check runs from a
# separate build tree), AQ_KEEP=1 (keep the temp dir), AQ_VERBOSE=1 (print
# each passing check too), AQ_DB=postgres (every aquiferd runs on a
# PostgreSQL server the script starts for itself, one database per server
# folder, instead of DIR/aq.db; skips with 77 without PostgreSQL unless
# AQ_PG=1; see tests/lib/pg.sh).

set -u

AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ ! -x "$AQ_BUILDDIR/aquiferd" ] && [ -x "$PWD/aquiferd" ]; then
	AQ_BUILDDIR=$PWD
fi
AQUIFERD=$AQ_BUILDDIR/aquiferd
# the test fixtures (tests/fixtures/), for tests/agent/tier/s3.sh
export AQ_S3LITE=${AQ_S3LITE:-$AQ_BUILDDIR/tests/fixtures/aq-s3lite}
export AQ_LATPROXY=${AQ_LATPROXY:-$AQ_BUILDDIR/tests/fixtures/aq-latproxy}
AQ_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../lib/pg.sh
. "$AQ_SRC/tests/lib/pg.sh"
AQ_DB=${AQ_DB:-sqlite}

AQ_PASS=0
AQ_FAIL=0
AQ_PIDS=()
AQ_TMP=$(mktemp -d "${TMPDIR:-/tmp}/aq-e2e.XXXXXX")
# Every answer aq_req sees is recorded here and checked against the spec's
# schemas by aq_finish (tests/openapi/validate.js); AQ_RECORD=0 turns it off.
AQ_RECORD_DIR=$AQ_TMP/records
# Set by aq_req: the HTTP status and the body of the last answer.
STATUS=
BODY=
# TLS mode (test_tls.sh sets them; empty means plain HTTP as before): the
# scheme of AQ_URL and of agent URLs, extra curl options (--cacert FILE) for
# aq_req and the health checks, extra aquiferd arguments (--tls-cert F
# --tls-key F) for aq_start, extra agent arguments (--ca-file F) for
# aq_agent_start.
AQ_SCHEME=http
AQ_CURL_OPTS=()
AQ_SERVE_ARGS=()
AQ_AGENT_ARGS=()
# Set by aq_start: the last started server.
AQ_PID=
AQ_PORT=
AQ_URL=

for tool in curl jq; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$(basename "$0"): $tool is required (apt-get install -y curl jq)" >&2
		exit 99
	fi
done
if [ ! -x "$AQUIFERD" ]; then
	echo "$(basename "$0"): no aquiferd at $AQUIFERD (build first, or set AQ_BUILDDIR)" >&2
	exit 99
fi
case $AQ_DB in
sqlite) ;;
postgres) aq_pg_skip_or_fail "$(basename "$0")" ;;
*) echo "$(basename "$0"): AQ_DB must be sqlite or postgres, not \"$AQ_DB\"" >&2; exit 99 ;;
esac

aq_cleanup() {
	local pid
	for pid in "${AQ_PIDS[@]}"; do
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	done
	[ "$AQ_DB" = postgres ] && aq_pg_stop "$AQ_TMP"
	if [ "${AQ_KEEP:-0}" = 1 ]; then
		echo "# kept $AQ_TMP" >&2
	else
		rm -rf "$AQ_TMP"
	fi
}
trap aq_cleanup EXIT
trap 'exit 130' INT TERM

# --- assertions ---------------------------------------------------------

aq_pass() {
	AQ_PASS=$((AQ_PASS + 1))
	[ "${AQ_VERBOSE:-0}" = 1 ] && echo "ok: $1"
	return 0
}

# aq_failed DESC DETAIL...: count a failure and say what was wrong.
aq_failed() {
	local desc=$1
	shift
	AQ_FAIL=$((AQ_FAIL + 1))
	echo "FAIL: $desc"
	[ $# -gt 0 ] && printf '  %s\n' "$@"
	echo "  last answer: HTTP $STATUS ${BODY:0:400}"
	return 1
}

# ok DESC CMD...: passes when CMD succeeds.
ok() {
	local desc=$1
	shift
	if "$@"; then aq_pass "$desc"; else aq_failed "$desc" "command failed: $*"; fi
}

# expect_eq DESC EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then aq_pass "$1"; else aq_failed "$1" "expected: $2" "got:      $3"; fi
}

# expect_contains DESC NEEDLE TEXT: TEXT holds NEEDLE (a fixed string).
expect_contains() {
	case $3 in
	*"$2"*) aq_pass "$1" ;;
	*) aq_failed "$1" "expected to contain: $2" "got: ${3:0:400}" ;;
	esac
}

# expect_status CODE DESC: the last answer's HTTP status.
expect_status() {
	expect_eq "$2 (HTTP $1)" "$1" "$STATUS"
}

# expect_jq FILTER EXPECTED DESC: jq -r FILTER over the last body equals EXPECTED.
expect_jq() {
	local got
	got=$(printf '%s' "$BODY" | jq -r "$1" 2>&1) || got="(jq failed: $got)"
	expect_eq "$3 [$1]" "$2" "$got"
}

# expect_true FILTER DESC: jq -e FILTER over the last body is true.
expect_true() {
	if printf '%s' "$BODY" | jq -e "$1" >/dev/null 2>&1; then
		aq_pass "$2"
	else
		aq_failed "$2" "jq condition false: $1"
	fi
}

# expect_error CODE STATUSNAME DESC: a Google error body with that code and
# status, and a google.rpc.ErrorInfo in its details.
expect_error() {
	expect_eq "$3 (HTTP $1)" "$1" "$STATUS"
	if printf '%s' "$BODY" | jq -e --argjson c "$1" --arg s "$2" \
		'(.error | keys - ["details"] | sort) == ["code","message","status"] and .error.code == $c and
		 .error.status == $s and (.error.message | length) > 0 and
		 ([.error.details[]? | select(."@type" == "type.googleapis.com/google.rpc.ErrorInfo")] | length) == 1' >/dev/null 2>&1; then
		aq_pass "$3: error body {code:$1,status:$2,message}"
	else
		aq_failed "$3: error body {code:$1,status:$2,message}"
	fi
}

# aq_finish: the last line, exactly "N passed, M failed"; exit status 0 only
# when nothing failed and something passed.
aq_finish() {
	[ "${AQ_RECORD:-1}" = 1 ] && aq_check_records
	echo "$AQ_PASS passed, $AQ_FAIL failed"
	[ "$AQ_FAIL" -eq 0 ] && [ "$AQ_PASS" -gt 0 ]
	exit $?
}

# --- processes ----------------------------------------------------------

# aq_port_free PORT: nothing listens on 127.0.0.1:PORT.
aq_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

aq_pick_port() {
	local p
	for _ in $(seq 100); do
		p=$((10000 + RANDOM % 22000)) # below the ephemeral range (32768-60999): outgoing connections never take it
		if aq_port_free "$p"; then echo "$p"; return 0; fi
	done
	return 1
}

# aq_db_args DIR: AQ_DB_ARGS gets the --db (and --state-dir) arguments of
# the aquiferd whose folder is DIR: DIR/aq.db, or with AQ_DB=postgres a
# database of the script's PostgreSQL server (started on first use) made
# for DIR on first use, its URL kept in DIR/pg-url for restarts and tokens.
AQ_DB_ARGS=()
aq_db_args() {
	local dir=$1 name
	mkdir -p "$dir"
	if [ "$AQ_DB" != postgres ]; then
		AQ_DB_ARGS=(--db "$dir/aq.db")
		return 0
	fi
	if [ ! -s "$dir/pg-url" ]; then
		aq_pg_start "$AQ_TMP" || { echo "PostgreSQL did not start" >&2; return 1; }
		name=aq_$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
		aq_pg_createdb "$name" >"$dir/pg-url" || return 1
		echo "# $(basename "$dir"): on PostgreSQL database $name" >&2
	fi
	AQ_DB_ARGS=(--db "$(cat "$dir/pg-url")" --state-dir "$dir")
}

# aq_start DIR [PORT]: start aquiferd on PORT (default: a free port) with
# DIR/aq.db (DIR is created; AQ_DB=postgres: see aq_db_args), wait for /healthz. Sets AQ_PID, AQ_PORT, AQ_URL.
# The log is DIR/aquiferd.log. A restart keeps its port with PORT=$AQ_PORT, so
# that joined agents still find it.
aq_start() {
	local dir=$1 port=${2:-} tries
	aq_db_args "$dir" || return 1
	for tries in 1 2 3 4 5; do
		if [ -n "$port" ]; then
			AQ_PORT=$port
		else
			AQ_PORT=$(aq_pick_port) || { aq_failed "pick a free port"; return 1; }
		fi
		AQ_URL=$AQ_SCHEME://127.0.0.1:$AQ_PORT
		"$AQUIFERD" --listen "127.0.0.1:$AQ_PORT" "${AQ_DB_ARGS[@]}" "${AQ_SERVE_ARGS[@]}" >>"$dir/aquiferd.log" 2>&1 &
		AQ_PID=$!
		AQ_PIDS+=("$AQ_PID")
		for _ in $(seq 300); do
			if curl -s -o /dev/null --max-time 2 "${AQ_CURL_OPTS[@]}" "$AQ_URL/healthz"; then
				return 0
			fi
			kill -0 "$AQ_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$AQ_PID" 2>/dev/null
		wait "$AQ_PID" 2>/dev/null
	done
	echo "aquiferd did not come up; log:" >&2
	tail -20 "$dir/aquiferd.log" >&2
	return 1
}

# aq_stop PID: SIGTERM and wait (a clean exit is expected).
aq_stop() {
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# aq_kill9 PID
aq_kill9() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# aq_token DIR ROLE [PROJECT] [TTL]: a token for the aquiferd whose folder is DIR.
aq_token() {
	aq_db_args "$1" || return 1
	local args=(token "${AQ_DB_ARGS[@]}" --role "$2")
	[ -n "${3:-}" ] && args+=(--project "$3")
	[ -n "${4:-}" ] && args+=(--ttl "$4")
	"$AQUIFERD" "${args[@]}" 2>/dev/null | tail -n 1
}

# aq_cli_start DIR: aquiferd started in DIR (aq_start) for a test of the
# `aquifer` CLI: AQUIFER is the built CLI (exit 99 without it), TOK an admin
# token, and the CLI's environment points at that server with project acme
# and location east, a config folder of the test's own and no CA file.
aq_cli_start() {
	AQUIFER=$AQ_BUILDDIR/aquifer
	[ -x "$AQUIFER" ] || { echo "no $AQUIFER"; exit 99; }
	aq_start "$1" || exit 1
	TOK=$(aq_token "$1" admin)
	export XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK
	export AQUIFER_PROJECT=acme AQUIFER_LOCATION=east
	unset AQUIFER_CA_FILE
}

# aq_acme_start DIR: aquiferd started in DIR (aq_start; exit 1 when it
# does not come up), TOK an admin token, location east and project acme
# created, P their path (/v1/projects/acme/locations/east).
aq_acme_start() {
	aq_start "$1" || exit 1
	TOK=$(aq_token "$1" admin)
	P=/v1/projects/acme/locations/east
	aq_req POST "/v1/locations?locationId=east" '{}'
	aq_req POST "/v1/projects?projectId=acme" '{}'
}

# aq_cli WANT_RC DESC ARGS...: run $AQUIFER ARGS with stdin not a terminal
# (at most 120 s); stdout in $OUT and $AQ_TMP/out, stderr in $ERR and
# $AQ_TMP/err; passes DESC when the exit status is WANT_RC.
aq_cli() {
	local want=$1 desc=$2 rc
	shift 2
	timeout 120 "$AQUIFER" "$@" </dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
	rc=$?
	OUT=$(cat "$AQ_TMP/out")
	ERR=$(cat "$AQ_TMP/err")
	if [ "$rc" = "$want" ]; then
		aq_pass "$desc"
	else
		aq_failed "$desc: aquifer $* -> exit $rc, want $want" "stdout: ${OUT:0:400}" "stderr: ${ERR:0:400}"
	fi
}

# aq_sanitizer_clean DIR: no sanitizer report in DIR/aquiferd.log.
aq_sanitizer_clean() {
	if grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' "$1/aquiferd.log" 2>/dev/null; then
		aq_failed "no sanitizer report in $1/aquiferd.log" \
			"$(grep -m3 -A12 -E 'Sanitizer|runtime error' "$1/aquiferd.log")"
	else
		aq_pass "no sanitizer report in $1/aquiferd.log"
	fi
}

# --- HTTP ---------------------------------------------------------------

# TOK is the bearer token aq_req sends ("" sends none); AQ_URL the server.
TOK=

# aq_req METHOD PATH [BODY]: sets STATUS and BODY. A BODY starting with @ is a file.
aq_req() {
	local method=$1 path=$2 out=$AQ_TMP/resp.$BASHPID
	local args=(-s -o "$out" -w '%{http_code}' -X "$method" --max-time 30 "${AQ_CURL_OPTS[@]}")
	[ -n "$TOK" ] && args+=(-H "Authorization: Bearer $TOK")
	if [ $# -ge 3 ]; then
		args+=(-H 'Content-Type: application/json' --data-binary "$3")
	fi
	STATUS=$(curl "${args[@]}" "$AQ_URL$path") || STATUS="curl-error-$?"
	BODY=$(cat "$out" 2>/dev/null)
	[ "${AQ_RECORD:-1}" = 1 ] && aq_record "$method" "$path" "$out"
	rm -f "$out"
}

# aq_record METHOD PATH BODYFILE: one answer for the contract check, in
# tests/openapi/record.sh's format.
aq_record() {
	local p=${2%%\?*} q= file
	case $STATUS in [0-9][0-9][0-9]) ;; *) return 0 ;; esac
	[ "$p" != "$2" ] && q=${2#*\?}
	mkdir -p "$AQ_RECORD_DIR"
	file=$AQ_RECORD_DIR/$(date +%s%N)-$BASHPID.json
	if jq -e . "$3" >/dev/null 2>&1; then
		jq -n --arg m "$1" --arg p "$p" --arg q "$q" --argjson s "$STATUS" --slurpfile b "$3" \
			'{method: $m, path: $p, query: $q, status: $s, body: $b[0]}' >"$file"
	else
		jq -n --arg m "$1" --arg p "$p" --arg q "$q" --argjson s "$STATUS" --rawfile b "$3" \
			'{method: $m, path: $p, query: $q, status: $s, body: $b}' >"$file"
	fi
}

# aq_check_records: every recorded answer validates against openapi/openapi.yaml.
aq_check_records() {
	local n out
	n=$(find "$AQ_RECORD_DIR" -name '*.json' 2>/dev/null | wc -l)
	[ "$n" -gt 0 ] || return 0
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		echo "# contract check skipped: node/npm missing"
		return 0
	fi
	. "$AQ_SRC/tests/openapi/npm.sh"
	aq_npm_setup
	if out=$(node "$AQ_SRC/tests/openapi/validate.js" --spec "$AQ_SRC/openapi/openapi.yaml" "$AQ_RECORD_DIR" 2>&1); then
		aq_pass "$n recorded answers validate against openapi/openapi.yaml"
	else
		aq_failed "$n recorded answers validate against openapi/openapi.yaml" "$(printf '%s' "$out" | head -n 30)"
	fi
}

# aq_req_as TOKEN METHOD PATH [BODY]
aq_req_as() {
	local save=$TOK
	TOK=$1
	shift
	aq_req "$@"
	TOK=$save
}

# aq_list_all PATH PLURAL: every item of a collection, paging with pageSize=50;
# prints one compact JSON item per line. Fails if a page does not parse.
aq_list_all() {
	local path=$1 plural=$2 token="" sep q
	case $path in *\?*) sep='&' ;; *) sep='?' ;; esac
	while :; do
		q="${sep}pageSize=50"
		[ -n "$token" ] && q="$q&pageToken=$(jq -rn --arg t "$token" '$t|@uri')"
		aq_req GET "$path$q"
		[ "$STATUS" = 200 ] || return 1
		printf '%s' "$BODY" | jq -c --arg p "$plural" '.[$p] // [] | .[]' || return 1
		token=$(printf '%s' "$BODY" | jq -r '.nextPageToken // ""') || return 1
		[ -n "$token" ] || return 0
	done
}

# b64url: base64url without padding, of stdin.
b64url() {
	base64 -w0 | tr '+/' '-_' | tr -d '='
}

# --- storage nodes ------------------------------------------------------

AQUIFER_AGENT=$AQ_BUILDDIR/aquifer-agent
AGENT_PID=
AGENT_API_PORT=
AGENT_NFS_PORT=

# aq_agent_start DIR NODE LOCATION SHELF JOIN_TOKEN [CEILING_MIBPS]: start an
# aquifer-agent joined to $AQ_URL with its state in DIR/NODE; wait until the
# node is READY. The array AQ_AGENT_ARGS adds flags (--ca-file F, --tier-day-seconds N);
# AQ_AGENT_SERVER replaces --server (a list of replicas). Sets AGENT_PID, AGENT_API_PORT, AGENT_NFS_PORT.
aq_agent_start() {
	local dir=$1 node=$2 loc=$3 shelf=$4 join=$5 ceiling=${6:-}
	local args try
	mkdir -p "$dir/$node" "$shelf"
	# a port probed free can still be taken before the agent binds it: retry
	for try in 1 2 3 4 5; do
		AGENT_API_PORT=$(aq_pick_port) || return 1
		AGENT_NFS_PORT=$(aq_pick_port) || return 1
		if [ -f "$dir/$node/state/credentials.json" ]; then
			# the attempt joined before it died: its join token is spent and
			# the node registered the ports that failed; forget it (admin TOK)
			# and join again with a new token
			aq_req POST "/v1/nodes/$node:drain" '{}'
			aq_req DELETE "/v1/nodes/$node"
			join=$(aq_join_token "$loc")
		fi
		rm -rf "$dir/$node/state"
		args=(--server "${AQ_AGENT_SERVER:-$AQ_URL}" --token "$join" --node "$node" --location "$loc" --shelf "$shelf"
			--listen "127.0.0.1:$AGENT_API_PORT" --nfs-listen "127.0.0.1:$AGENT_NFS_PORT"
			--state-dir "$dir/$node/state" "${AQ_AGENT_ARGS[@]}")
		[ -n "$ceiling" ] && args+=(--throughput-mibps "$ceiling")
		"$AQUIFER_AGENT" "${args[@]}" >>"$dir/$node/agent.log" 2>&1 &
		AGENT_PID=$!
		AQ_PIDS+=("$AGENT_PID")
		for _ in $(seq 100); do
			kill -0 "$AGENT_PID" 2>/dev/null || break
			if curl -fs "${AQ_CURL_OPTS[@]}" "$AQ_SCHEME://127.0.0.1:$AGENT_API_PORT/healthz" >/dev/null 2>&1; then
				aq_agent_wait_ready "$node"
				return
			fi
			sleep 0.1
		done
		kill -KILL "$AGENT_PID" 2>/dev/null
		wait "$AGENT_PID" 2>/dev/null
	done
	aq_failed "agent $node started" "$(tail -3 "$dir/$node/agent.log")"
}

# aq_agent_restart DIR NODE: start the agent of NODE again from its state
# folder (no join token: it must use its saved credentials). Uses the
# AGENT_*_PORT values given in the environment.
aq_agent_restart() {
	local dir=$1 node=$2 loc=$3 shelf=$4 api=$5 nfs=$6
	"$AQUIFER_AGENT" --server "$AQ_URL" --node "$node" --location "$loc" --shelf "$shelf" \
		--listen "127.0.0.1:$api" --nfs-listen "127.0.0.1:$nfs" --state-dir "$dir/$node/state" \
		>>"$dir/$node/agent.log" 2>&1 &
	AGENT_PID=$!
	AQ_PIDS+=("$AGENT_PID")
}

# aq_agent_wait_ready NODE: the node shows READY in GET /v1/nodes/NODE (admin TOK).
aq_agent_wait_ready() {
	for _ in $(seq 100); do
		aq_req GET "/v1/nodes/$1"
		[ "$STATUS" = 200 ] && [ "$(printf '%s' "$BODY" | jq -r .state)" = READY ] && return 0
		sleep 0.1
	done
	aq_failed "node $1 becomes READY"
}

# aq_op_wait OPNAME [SECONDS]: poll GET /v1/OPNAME until done; BODY is the
# final operation. Fails the check when it is not done in time.
aq_op_wait() {
	local op=$1 secs=${2:-20}
	for _ in $(seq $((secs * 10))); do
		aq_req GET "/v1/$op"
		[ "$STATUS" = 200 ] && [ "$(printf '%s' "$BODY" | jq -r .done)" = true ] && return 0
		sleep 0.1
	done
	aq_failed "operation $op done within ${secs}s"
}

# aq_wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds; false
# when it never did within SECONDS.
aq_wait_until() {
	local secs=$1
	shift
	for _ in $(seq $((secs * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}

# aq_vol_is V JQ: GET volume V under the caller's $P (BODY) and jq -e JQ holds
# (for aq_wait_until).
aq_vol_is() { aq_req GET "$P/volumes/$1"; printf '%s' "$BODY" | jq -e "$2" >/dev/null 2>&1; }

# aq_join_token LOCATION: a join token for LOCATION (needs a cluster-admin TOK).
aq_join_token() {
	aq_req POST "/v1/locations/$1:joinToken" '{}'
	printf '%s' "$BODY" | jq -r .token
}

# aq_mutate METHOD PATH [BODY]: aq_req, then, when the answer is an operation
# that is not done yet (volumes wait for their node), poll it until done;
# BODY is then the finished operation. Refusals are left as they came.
aq_mutate() {
	local op
	aq_req "$@"
	[ "$STATUS" = 200 ] || return 0
	op=$(printf '%s' "$BODY" | jq -r 'select(.done == false) | .name // empty' 2>/dev/null)
	[ -n "$op" ] && aq_op_wait "$op" 60
	return 0
}

# aq_agent_for LOCATION: join one storage node (ceiling high enough never to
# limit placement) to LOCATION of the server in $AQ_TMP/srv, with its own shelf.
aq_agent_for() {
	local join
	join=$(aq_join_token "$1")
	aq_agent_start "$AQ_TMP/srv" "node-$1" "$1" "$AQ_TMP/shelf-$1" "$join" 100000000
}

# aq_mutate_as TOKEN METHOD PATH [BODY]
aq_mutate_as() {
	local save=$TOK
	TOK=$1
	shift
	aq_mutate "$@"
	TOK=$save
}

# --- Prometheus ---------------------------------------------------------

# aq_prom_targets CONFIG WANT: run prometheus with CONFIG on a free port until
# its targets' health reads WANT ("job=health ...", sorted; 60 s at most), then
# stop it; prints what it last read (and each target's lastError if not WANT).
aq_prom_targets() {
	local port pid health=
	port=$(aq_pick_port) || return 1
	prometheus --config.file="$1" --storage.tsdb.path="$AQ_TMP/prom-data.$port" \
		--web.listen-address="127.0.0.1:$port" >"$AQ_TMP/prometheus.$port.log" 2>&1 &
	pid=$!
	AQ_PIDS+=("$pid")
	for _ in $(seq 600); do
		health=$(curl -s "http://127.0.0.1:$port/api/v1/targets" 2>/dev/null |
			jq -r '[.data.activeTargets[] | .labels.job + "=" + .health] | sort | join(" ")' 2>/dev/null)
		[ "$health" = "$2" ] && break
		sleep 0.1
	done
	[ "$health" = "$2" ] || curl -s "http://127.0.0.1:$port/api/v1/targets" |
		jq -c '.data.activeTargets[] | {job: .labels.job, lastError}' >&2
	aq_stop "$pid"
	printf '%s\n' "$health"
}
