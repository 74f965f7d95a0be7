#!/usr/bin/env bash
# tests/e2e/test_pg_e2e.sh: the API, agent, kill -9 and clean-stop suites once
# more, on PostgreSQL (issue 22): each of test_api.sh, test_agent.sh,
# test_kill9.sh and test_stop_busy.sh runs again with AQ_DB=postgres, so that every aquiferd it
# starts serves a database of a PostgreSQL server the suite starts for
# itself (tests/lib/pg.sh) rather than a SQLite file. One check per suite:
# it passed, with its own "N passed, M failed" line, on PostgreSQL.
# Skips (77) without the PostgreSQL binaries unless AQ_PG=1.
. "$(dirname "$0")/lib.sh"

aq_pg_skip_or_fail test_pg_e2e
here=$(cd "$(dirname "$0")" && pwd)
for t in test_api test_agent test_kill9 test_stop_busy; do
	log=$AQ_TMP/$t.log
	AQ_DB=postgres AQ_KEEP=0 bash "$here/$t.sh" >"$log" 2>&1
	rc=$?
	last=$(tail -n 1 "$log")
	# the suite really ran on PostgreSQL: its servers said so in their logs
	if [ "$rc" = 0 ] && grep -q "passed, 0 failed" <<<"$last" && grep -q "on PostgreSQL database" "$log"; then
		aq_pass "$t on PostgreSQL: $last"
	else
		aq_failed "$t on PostgreSQL (exit $rc): $last" "$(grep -E 'FAIL|not ok|error' "$log" | head -20)"
	fi
done
AQ_RECORD=0 aq_finish
