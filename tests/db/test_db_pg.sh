#!/bin/bash
# tests/db/test_db_pg.sh: the whole db suite (tests/db/test_db,
# test_db_commit, test_db_usage, test_db_batch, test_db_dirty and
# test_db_group) on
# PostgreSQL. Starts its own server (tests/lib/pg.sh: initdb/pg_ctl in a
# temporary folder, unix socket only), runs every test of test_db against it
# with AQ_TEST_PG_URL, stops the server by its PID and removes the folder.
# Skips (77) when the PostgreSQL binaries are missing, unless AQ_PG=1.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/pg.sh"
build=${AQ_BUILDDIR:-$PWD}
[ -x "$build/tests/db/test_db" ] || build=$(cd "$here/../.." && pwd)
if [ ! -x "$build/tests/db/test_db" ]; then
	echo "test_db_pg: no tests/db/test_db (build first, or set AQ_BUILDDIR)" >&2
	exit 99
fi
aq_pg_skip_or_fail test_db_pg

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-db-pg.XXXXXX")
cleanup() {
	aq_pg_stop
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

aq_pg_start "$tmp" || { echo "test_db_pg: PostgreSQL did not start" >&2; exit 99; }
AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db" &&
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db_commit" &&
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db_usage" &&
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db_batch" &&
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db_dirty" &&
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/db/test_db_group"
