#!/bin/bash
# tests/db/test_db_pg.sh: the whole db suite (tests/db/test_db,
# test_db_commit, test_db_usage, test_db_batch, test_db_dirty and
# test_db_group) on PostgreSQL: aq_pg_suites (tests/lib/pg.sh) starts its
# own server (initdb/pg_ctl in a temporary folder, unix socket only), runs
# each suite against it with AQ_TEST_PG_URL, stops the server by its PID
# and removes the folder. Skips (77) when the PostgreSQL binaries are
# missing, unless AQ_PG=1.
set -u

. "$(cd "$(dirname "$0")" && pwd)/../lib/pg.sh"
aq_pg_suites test_db_pg tests/db/test_db tests/db/test_db_commit tests/db/test_db_usage tests/db/test_db_batch \
	tests/db/test_db_dirty tests/db/test_db_group
