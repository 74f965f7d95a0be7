#!/usr/bin/env bash
# test_cli_routes.sh: the CLI's command table and the server's route table
# name the same routes (issue 6, acceptance 3). A route the server serves
# without a CLI verb, or a verb whose route the server lacks, fails.
#
# Left out of the comparison: /healthz, /metrics, agent-only routes under
# /v1/agent/, documentation routes and the dashboard (/ui/). PENDING lists routes the CLI has
# ahead of the server (announced, not yet served); once the server serves
# one, the test says to drop it from the list. Neither table may be empty,
# and neither may name a route twice (the lists are sorted, not
# deduplicated, so a duplicate row cannot hide behind its twin).
AQUIFER=${AQUIFER:-$PWD/aquifer}
AQUIFERD=${AQUIFERD:-$PWD/aquiferd}
PENDING="
"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aq-e2e-routes.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

[ -x "$AQUIFER" ] || { echo "no $AQUIFER"; exit 99; }
"$AQUIFER" __routes >"$TMP/cli.raw" || { echo "aquifer __routes failed"; exit 1; }
LC_ALL=C sort "$TMP/cli.raw" >"$TMP/cli"
if ! "$AQUIFERD" routes >"$TMP/srv.raw" 2>"$TMP/srv.err"; then
	echo "aquiferd routes is not available yet:"
	cat "$TMP/srv.err"
	exit 1
fi
grep -v -E '^[A-Z]+ (/healthz|/metrics|/v1/agent/|/openapi|/docs|/ui/|/v1/openapi)' "$TMP/srv.raw" |
	LC_ALL=C sort >"$TMP/srv"
echo "$PENDING" | { grep -v '^$' || true; } | LC_ALL=C sort -u >"$TMP/pending"

status=0
for t in cli srv; do
	if [ ! -s "$TMP/$t" ]; then
		echo "FAIL: the $t route table is empty"
		status=1
	fi
	LC_ALL=C uniq -d "$TMP/$t" >"$TMP/$t.dup"
	if [ -s "$TMP/$t.dup" ]; then
		echo "FAIL: routes the $t table names twice:"
		sed 's/^/  /' "$TMP/$t.dup"
		status=1
	fi
done
# Served, but no CLI verb.
LC_ALL=C comm -13 "$TMP/cli" "$TMP/srv" >"$TMP/no_verb"
if [ -s "$TMP/no_verb" ]; then
	echo "FAIL: routes the server serves without a CLI verb:"
	sed 's/^/  /' "$TMP/no_verb"
	status=1
fi
# CLI verb, but not served (and not announced as pending).
LC_ALL=C comm -23 "$TMP/cli" "$TMP/srv" | LC_ALL=C comm -23 - "$TMP/pending" >"$TMP/no_route"
if [ -s "$TMP/no_route" ]; then
	echo "FAIL: CLI verbs whose route the server does not serve:"
	sed 's/^/  /' "$TMP/no_route"
	status=1
fi
# Pending routes must still be CLI verbs; served ones should leave the list.
LC_ALL=C comm -23 "$TMP/pending" "$TMP/cli" >"$TMP/stale"
if [ -s "$TMP/stale" ]; then
	echo "FAIL: PENDING routes without a CLI verb:"
	sed 's/^/  /' "$TMP/stale"
	status=1
fi
LC_ALL=C comm -12 "$TMP/pending" "$TMP/srv" >"$TMP/served"
if [ -s "$TMP/served" ]; then
	echo "NOTE: now served, drop from PENDING in $0:"
	sed 's/^/  /' "$TMP/served"
fi
echo "$(wc -l <"$TMP/cli") CLI routes, $(wc -l <"$TMP/srv") server routes, $(wc -l <"$TMP/pending") pending"
exit $status
