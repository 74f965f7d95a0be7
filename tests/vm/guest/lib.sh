#!/bin/bash
# tests/vm/guest/lib.sh: what every kernel-client suite in the test guest uses
# (sourced by nfs3.sh and smb.sh after /aqvm/env and the mount points M, M2):
# the check runner printing one TAP line per check, and the helpers the
# checks call (exported to each check's bash). A check runs in its own bash
# with errexit under a time bound; one that times out while the mount no
# longer answers stops the run ("Bail out!"), and the host counts every
# check it never saw as failed.
# The bound of one check (CHECK_SECS) and of those that move much data.
LONG=$((CHECK_SECS * 3))
n=0
failed=0

# --- helpers (exported to every check's bash) -------------------------------

# eq WHAT EXPECTED ACTUAL
eq() {
	[ "$2" = "$3" ] && return 0
	echo "$1: expected '$2', got '$3'"
	return 1
}

# fails_with MESSAGE CMD...: CMD fails and its stderr says MESSAGE (or one
# of MESSAGE's alternatives, separated by |).
fails_with() {
	local msg=$1 want=$1 err alt
	shift
	if err=$("$@" 2>&1 >/dev/null); then
		echo "'$*' succeeded; expected '$msg'"
		return 1
	fi
	while [ -n "$msg" ]; do
		alt=${msg%%|*}
		case $err in
		*"$alt"*) return 0 ;;
		esac
		[ "$alt" = "$msg" ] && break
		msg=${msg#*|}
	done
	echo "'$*' failed with '$err'; expected '$want'"
	return 1
}

# py CODE ARG...: python3 running CODE with ARG in sys.argv[1:]; an OSError
# ends it with the error's text on stderr (what coreutils would print).
cat >/usr/local/bin/py <<'PY'
#!/usr/bin/python3
import os, sys
code = sys.argv.pop(1)
try:
    exec(code)
except OSError as e:
    sys.exit(e.strerror)
PY
chmod 0755 /usr/local/bin/py

# as USER CMD...: CMD as USER with USER's groups.
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
}

sha() { sha256sum "$1" | cut -c1-64; }
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
mode() { stat -c %a "$1"; }
export -f eq fails_with as sha drop_caches mode

# check DESC FUNCTION [SECONDS]: run FUNCTION, print its TAP line.
check() {
	local desc=$1 fn=$2 secs=${3:-$CHECK_SECS} out rc t0 timed
	n=$((n + 1))
	t0=$(date +%s)
	out=$(timeout -k 5 "$secs" bash -e -c "$fn" 2>&1)
	rc=$?
	echo "$(($(date +%s) - t0)) $n $desc" >>/aqvm/timings
	if [ $rc -eq 0 ]; then
		echo "ok $n - $desc"
	else
		failed=$((failed + 1))
		timed=0
		[ $rc -eq 124 ] || [ $rc -eq 137 ] && timed=1
		[ $timed = 1 ] && out="$out
timed out after ${secs}s"
		echo "not ok $n - $desc"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/#   /'
		# A hard mount whose server stopped answering blocks every check
		# after this one: stop instead of timing out each of them.
		if [ $timed = 1 ] && ! timeout -k 2 15 stat -f $M >/dev/null 2>&1; then
			echo "Bail out! the server does not answer"
			exit 1
		fi
	fi
	return 0
}
