# tests/agent/tier/obj_lib.sh: the preamble of the scripts that run the
# object-store suite (tests/agent/obj/test_obj) against an S3-API server
# (test_obj_s3.sh: s3rver, test_obj_s3lite.sh: aq-s3lite). Sourced with the
# temporary folder's name as its argument:
#     . "$(dirname "${BASH_SOURCE[0]}")/obj_lib.sh" aq-obj-s3
# Sets AQ_BUILDDIR (where test_obj was built: the top build tree or the
# current folder) and AQ_SRC, sources s3.sh, makes $tmp, and removes it and
# stops the servers on exit (AQ_KEEP=1 keeps $tmp).
set -u
AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
[ -x "$AQ_BUILDDIR/tests/agent/obj/test_obj" ] || AQ_BUILDDIR=$PWD
AQ_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export AQ_BUILDDIR AQ_SRC
# shellcheck source=s3.sh
. "$AQ_SRC/tests/agent/tier/s3.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/${1:-aq-obj}.XXXXXX")
cleanup() {
	aq_s3_cleanup
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
