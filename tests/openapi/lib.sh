# tests/openapi/lib.sh: helpers for test_openapi.sh and test_terraform_replay.sh
# (sourced). Finds the source and build trees, installs the npm tools into a
# cache keyed by openapi/package-lock.json (never into the source tree),
# starts aquiferd on a free loopback port with a temporary database and
# stops only the processes it started, by PID.
#
# Environment: srcdir (set by `make check`), AQ_BUILDDIR (where aquiferd is),
# AQ_NPM_CACHE (default ~/.cache/aquifer-npm), AQ_KEEP=1 (keep the temp dir).

set -u
AQ_SRC=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
[ -f "$AQ_SRC/openapi/openapi.yaml" ] || AQ_SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${AQ_BUILDDIR:-}" ]; then
	if [ -x "$PWD/aquiferd" ]; then AQ_BUILDDIR=$PWD; else AQ_BUILDDIR=$AQ_SRC; fi
fi
AQUIFERD=$AQ_BUILDDIR/aquiferd
AQ_TMP=$(mktemp -d "${TMPDIR:-/tmp}/aq-openapi.XXXXXX")
export AQ_RECORD_STATUS_FILE=$AQ_TMP/last-status
AQ_PIDS=()
AQ_PASS=0
AQ_FAIL=0

. "$AQ_SRC/tests/openapi/record.sh"

for tool in curl jq node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$(basename "$0"): $tool is required (bash deploy/deps.sh test)" >&2
		exit 99
	fi
done
if [ ! -x "$AQUIFERD" ]; then
	echo "$(basename "$0"): no aquiferd at $AQUIFERD (build first, or set AQ_BUILDDIR)" >&2
	exit 99
fi

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
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $AQ_TMP" >&2; else rm -rf "$AQ_TMP"; fi
}
trap aq_cleanup EXIT
trap 'exit 130' INT TERM

ok() { AQ_PASS=$((AQ_PASS + 1)); [ "${AQ_VERBOSE:-0}" = 1 ] && echo "ok: $1"; return 0; }
fail() { AQ_FAIL=$((AQ_FAIL + 1)); echo "FAIL: $*"; return 1; }
# check DESC COMMAND...: run COMMAND, count it as a pass or a failure.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}
aq_finish() {
	echo "$(basename "$0" .sh): $AQ_PASS passed, $AQ_FAIL failed"
	[ "$AQ_FAIL" -eq 0 ]
	exit $?
}

. "$AQ_SRC/tests/openapi/npm.sh"

# aq_start: start aquiferd on a free loopback port; sets AQ_URL, AQ_DB, AQ_PID.
aq_start() {
	local port try
	AQ_DB=$AQ_TMP/aquifer.db
	for try in $(seq 20); do
		port=$((10000 + RANDOM % 22000)) # below the ephemeral range
		"$AQUIFERD" serve --listen "127.0.0.1:$port" --db "$AQ_DB" >"$AQ_TMP/aquiferd.$try.log" 2>&1 &
		AQ_PID=$!
		AQ_PIDS+=("$AQ_PID")
		for _ in $(seq 100); do
			if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
				AQ_URL=http://127.0.0.1:$port
				return 0
			fi
			kill -0 "$AQ_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -TERM "$AQ_PID" 2>/dev/null
		wait "$AQ_PID" 2>/dev/null
	done
	echo "$(basename "$0"): aquiferd did not start:" >&2
	cat "$AQ_TMP"/aquiferd.*.log >&2
	exit 99
}

# aq_agent_up LOCATION: join one aquifer-agent (shelf and state under
# AQ_TMP) to LOCATION and wait until it serves, so volumes can be placed.
# Ports are probed free first; a start that loses a port race is retried.
aq_free_port() {
	local p
	for _ in $(seq 100); do
		p=$((10000 + RANDOM % 22000)) # below the ephemeral range
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}
aq_agent_up() {
	local admin api nfs join pid
	admin=$(aq_token admin)
	join=$(curl -fsS -X POST "$AQ_URL/v1/locations/$1:joinToken" -H "Authorization: Bearer $admin" -d '{}' | jq -r .token)
	mkdir -p "$AQ_TMP/shelf"
	for _ in 1 2 3 4 5; do
		api=$(aq_free_port) && nfs=$(aq_free_port) || break
		rm -rf "$AQ_TMP/agent-$1"
		"$AQ_BUILDDIR/aquifer-agent" --server "$AQ_URL" --token "$join" --node "node-$1" --location "$1" \
			--shelf "$AQ_TMP/shelf" --listen "127.0.0.1:$api" --nfs-listen "127.0.0.1:$nfs" \
			--state-dir "$AQ_TMP/agent-$1" >>"$AQ_TMP/agent-$1.log" 2>&1 &
		pid=$!
		AQ_PIDS+=("$pid")
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			curl -fsS "http://127.0.0.1:$api/healthz" >/dev/null 2>&1 && return 0
			sleep 0.1
		done
	done
	echo "$(basename "$0"): agent for $1 did not come up:" >&2
	cat "$AQ_TMP/agent-$1.log" >&2
	exit 99
}

# aq_token ROLE [PROJECT]: print a bearer token.
aq_token() {
	local args=(token --db "$AQ_DB" --role "$1" --subject "test-$1")
	[ $# -ge 2 ] && args+=(--project "$2")
	"$AQUIFERD" "${args[@]}" | tail -n1
}
