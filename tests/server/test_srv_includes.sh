#!/usr/bin/env bash
# tests/server/test_srv_includes.sh: server/ has no include circle.
#
# A module is a file name without its extension (srv_node.c and srv_node.h
# are one module). Two graphs of who depends on whom, each ordered by
# tsort(1), which fails naming the modules of a cycle:
#  - the sources: module A depends on B when a file of A holds
#    `#include "server/B.h"` (every module declares its calls in its own
#    header, so this is the graph of who may call whom);
#  - the objects: A depends on B when srv_A.o uses a symbol srv_B.o defines
#    (nm over libaqsrv.a in the build folder), which no header can hide.
# Fails too when either graph is empty (a check of nothing).
SRC=${AQ_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LIB=${AQ_SRV_LIB:-$PWD/libaqsrv.a}
status=0

# check NAME: read "module dependency" pairs on stdin; false on a cycle
# (it runs at the end of a pipeline, so it answers by its status).
check() {
	local pairs edges out
	pairs=$(cat)
	edges=$(echo "$pairs" | awk 'NF == 2 && $1 != $2' | sort -u | wc -l)
	if [ "$edges" -eq 0 ]; then
		echo "FAIL: $1: no dependency found"
		return 1
	fi
	if ! out=$(echo "$pairs" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
		echo "FAIL: $1: circle among server modules:"
		echo "$out"
		return 1
	fi
	echo "ok: $1: $edges module dependencies, no circle"
}

shopt -s nullglob
files=("$SRC"/server/*.c "$SRC"/server/*.h)
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no server/*.c or server/*.h under $SRC"; exit 1; }
for f in "${files[@]}"; do
	m=$(basename "$f"); m=${m%.*}
	echo "$m $m"
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"server\/\([A-Za-z0-9_]*\)\.h".*/\1/p' "$f" |
		while read -r dep; do echo "$m $dep"; done
done | check "#include lines" || status=1

if [ -f "$LIB" ]; then
	nm -o "$LIB" | awk '{
		f = $1; sub(/^[^:]*:/, "", f); sub(/:.*/, "", f); sub(/^libaqsrv_a-/, "", f); sub(/\.o$/, "", f)
		if ($2 ~ /^[TDRB]$/) def[$3] = f; else if ($2 == "U") use[f] = use[f] " " $3
	} END {
		for (f in use) { n = split(use[f], u, " "); for (i = 1; i <= n; i++) if (u[i] in def) print f, def[u[i]] }
	}' | check "symbols of $(basename "$LIB")" || status=1
else
	echo "note: no $LIB, symbol graph not checked"
fi
exit $status
