# tests/lib/pg.sh: a throwaway PostgreSQL server for a test (sourced, not run).
#
# aq_pg_start DIR starts one with initdb/pg_ctl in DIR/pg, listening only on
# a unix socket in DIR/pg (no TCP port), trust authentication for the local
# user "aquifer" (the test's own server: nothing else can reach the socket's
# folder). initdb refuses to run as root: as root, the server runs as the
# "postgres" system user (Debian's postgresql-common creates it) and DIR/pg
# belongs to it. aq_pg_stop stops it by the PID in its postmaster.pid.
# aq_pg_createdb NAME makes a database and prints its URL. A second
# aq_pg_start on the same DIR (from a subshell, say) finds the running server
# by DIR/pg/url.
#
# Sets AQ_PG_DIR, AQ_PG_SOCK, AQ_PG_URL (the "aquifer" database). The binaries
# come from PATH or the newest /usr/lib/postgresql/*/bin. aq_pg_have tells
# whether they are there; a test skips (77) without them unless AQ_PG=1,
# where their absence is a failure (CI installs them: deploy/deps.sh).

AQ_PG_BIN=
AQ_PG_DIR=
AQ_PG_SOCK=
AQ_PG_URL=

aq_pg_have() {
	local d
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		AQ_PG_BIN=$(dirname "$(readlink -f "$(command -v pg_ctl)")")
		return 0
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			AQ_PG_BIN=$d
			return 0
		fi
	done
	return 1
}

# aq_pg_skip_or_fail NAME: exit 77 (skipped) when there is no PostgreSQL and
# AQ_PG is not 1, else 99 (a hard error).
aq_pg_skip_or_fail() {
	if aq_pg_have; then
		return 0
	fi
	if [ "${AQ_PG:-0}" = 1 ]; then
		echo "$1: AQ_PG=1 but no initdb/pg_ctl (apt-get install postgresql-15)" >&2
		exit 99
	fi
	echo "$1: no initdb/pg_ctl (postgresql-15): skipped" >&2
	exit 77
}

# Run a PostgreSQL binary as the server's user.
aq_pg_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

aq_pg_start() {
	local dir=$1
	aq_pg_have || return 1
	AQ_PG_DIR=$dir/pg
	AQ_PG_SOCK=$AQ_PG_DIR
	if [ -s "$AQ_PG_DIR/url" ]; then
		AQ_PG_URL=$(cat "$AQ_PG_DIR/url")
		return 0
	fi
	mkdir -p "$AQ_PG_DIR"
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || { echo "aq_pg_start: running as root, but there is no postgres user" >&2; return 1; }
		chown postgres: "$AQ_PG_DIR"
		chmod 755 "$dir" # the server's user reaches its folder
	fi
	aq_pg_as "$AQ_PG_BIN/initdb" -D "$AQ_PG_DIR/data" -U aquifer --auth=trust -E UTF8 --no-locale \
		>"$AQ_PG_DIR/initdb.log" 2>&1 || { cat "$AQ_PG_DIR/initdb.log" >&2; return 1; }
	# fsync stays on: kill -9 tests rely on a commit being durable
	aq_pg_as "$AQ_PG_BIN/pg_ctl" -D "$AQ_PG_DIR/data" -l "$AQ_PG_DIR/server.log" -w -t 60 \
		-o "-c listen_addresses= -c unix_socket_directories=$AQ_PG_SOCK -c max_connections=200" \
		start >/dev/null 2>&1 || { tail -20 "$AQ_PG_DIR/server.log" >&2; return 1; }
	AQ_PG_URL=$(aq_pg_createdb aquifer) || return 1
	echo "$AQ_PG_URL" >"$AQ_PG_DIR/url"
}

# aq_pg_createdb NAME: a new database NAME; prints its URL.
aq_pg_createdb() {
	"$AQ_PG_BIN/psql" -q -h "$AQ_PG_SOCK" -U aquifer -d postgres -v ON_ERROR_STOP=1 \
		-c "CREATE DATABASE \"$1\"" >/dev/null || return 1
	echo "postgresql:///$1?host=$AQ_PG_SOCK&user=aquifer"
}

# aq_pg_stop [DIR]: stop the server aq_pg_start DIR started (default: the
# last one started here).
aq_pg_stop() {
	local pid
	[ -n "${1:-}" ] && AQ_PG_DIR=$1/pg
	[ -n "$AQ_PG_DIR" ] && [ -f "$AQ_PG_DIR/data/postmaster.pid" ] || return 0
	pid=$(head -n 1 "$AQ_PG_DIR/data/postmaster.pid")
	case $pid in '' | *[!0-9]*) return 0 ;; esac
	kill -INT "$pid" 2>/dev/null # fast shutdown: the test is over
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -QUIT "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
}

# aq_pg_suites NAME SUITE...: the whole of a script that runs Check suites
# on PostgreSQL (tests/db/test_db_pg.sh, tests/server/test_srv_pg.sh): a
# server aq_pg_start makes in a new temporary folder, each SUITE (a path
# below the build folder: $AQ_BUILDDIR, else the current folder, else the
# tree this file is in) run in turn with AQ_TEST_PG_URL naming its
# "aquifer" database, stopping at the first that fails; on exit the server
# stopped by its PID and the folder removed (kept with AQ_KEEP=1). Exits 99
# when the first SUITE is not built or the server does not start, 77 as
# aq_pg_skip_or_fail NAME; else returns the status of the last suite run.
aq_pg_suites() {
	local name=$1 build s
	shift
	build=${AQ_BUILDDIR:-$PWD}
	[ -x "$build/$1" ] || build=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	if [ ! -x "$build/$1" ]; then
		echo "$name: no $1 (build first, or set AQ_BUILDDIR)" >&2
		exit 99
	fi
	aq_pg_skip_or_fail "$name"
	AQ_PG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/aq-$name.XXXXXX")
	trap aq_pg_suites_cleanup EXIT
	trap 'exit 130' INT TERM
	aq_pg_start "$AQ_PG_TMP" || { echo "$name: PostgreSQL did not start" >&2; exit 99; }
	for s in "$@"; do
		AQ_TEST_PG_URL=$AQ_PG_URL "$build/$s" || return
	done
}

# aq_pg_suites_cleanup: aq_pg_suites's exit trap.
aq_pg_suites_cleanup() {
	aq_pg_stop
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $AQ_PG_TMP" >&2; else rm -rf "$AQ_PG_TMP"; fi
}
