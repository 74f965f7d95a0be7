#!/bin/bash
# tests/server/test_srv_pg.sh: test_srv_volume (volume creates: their round
# trips, group commits, refusals) and test_srv_reconcile (the visits'
# writes: applied, generations, their batches and fences) on PostgreSQL. Starts its own server
# (tests/lib/pg.sh), runs the suite with AQ_TEST_PG_URL, stops the server
# by its PID and removes the folder. Skips (77) when the PostgreSQL
# binaries are missing, unless AQ_PG=1.
set -u

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/pg.sh"
build=${AQ_BUILDDIR:-$PWD}
[ -x "$build/tests/server/test_srv_volume" ] || build=$(cd "$here/../.." && pwd)
for t in test_srv_volume test_srv_reconcile; do
	if [ ! -x "$build/tests/server/$t" ]; then
		echo "test_srv_pg: no tests/server/$t (build first, or set AQ_BUILDDIR)" >&2
		exit 99
	fi
done
aq_pg_skip_or_fail test_srv_pg

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-srv-pg.XXXXXX")
cleanup() {
	aq_pg_stop
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

aq_pg_start "$tmp" || { echo "test_srv_pg: PostgreSQL did not start" >&2; exit 99; }
rc=0
for t in test_srv_volume test_srv_reconcile; do
	AQ_TEST_PG_URL=$AQ_PG_URL "$build/tests/server/$t" || rc=1
done
exit $rc
