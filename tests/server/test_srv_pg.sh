#!/bin/bash
# tests/server/test_srv_pg.sh: test_srv_volume (volume creates: their round
# trips, group commits, refusals) and test_srv_reconcile (the visits'
# writes: applied, generations, their batches and fences) on PostgreSQL:
# aq_pg_suites (tests/lib/pg.sh) starts its own server, runs the suites with
# AQ_TEST_PG_URL, stops the server by its PID and removes the folder. Skips
# (77) when the PostgreSQL binaries are missing, unless AQ_PG=1.
set -u

. "$(cd "$(dirname "$0")" && pwd)/../lib/pg.sh"
aq_pg_suites test_srv_pg tests/server/test_srv_volume tests/server/test_srv_reconcile
