# shellcheck shell=bash
# bench/lib.sh: the start the benchmarks over tests/e2e/lib.sh make alike (bench/smb/run.sh,
# bench/nfs/run.sh, bench/nfs/profile.sh), sourced (not run) before anything else, BENCH set to
# the script's name for its messages:
#
#   BENCH=bench/smb
#   . "$(dirname "$0")/../lib.sh"
#
# AQ_BUILDDIR, the build to measure, defaults to the source tree and is exported (the agent
# helpers read it); BENCH_BUILDDIR keeps it as asked (tests/e2e/lib.sh takes $PWD instead when
# it has no aquiferd: an agent-only build). tests/e2e/lib.sh is sourced with AQ_RECORD=0 (a
# benchmark's answers are not checked against the spec). TOP: the source tree; W: the run's
# temporary folder (AQ_TMP, removed on exit). die MSG: "BENCH: MSG" on stderr, exit 1. The exit
# traps are tests/e2e/lib.sh's: aq_cleanup stops the PIDs started here, and only those, and INT
# and TERM exit 130 so that it runs; a script with more to stop sets its own EXIT trap after this.
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export AQ_BUILDDIR=${AQ_BUILDDIR:-$TOP}
BENCH_BUILDDIR=$AQ_BUILDDIR
# shellcheck disable=SC2034 # read by tests/e2e/lib.sh
AQ_RECORD=0
# shellcheck source=../tests/e2e/lib.sh
. "$TOP/tests/e2e/lib.sh"
W=$AQ_TMP
die() {
	echo "${BENCH:-bench}: $*" >&2
	exit 1
}
