#!/usr/bin/env bash
# tests/agent/tier/test_obj_s3.sh: the object-store suite (tests/agent/obj/test_obj)
# against a real S3-API server: s3rver on loopback behind aq-latproxy (no
# added latency, --log to check the SigV4 headers). The proxy's down mode
# and SIGSTOP of s3rver give the unreachable / hanging store cases.
set -u
AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
[ -x "$AQ_BUILDDIR/tests/agent/obj/test_obj" ] || AQ_BUILDDIR=$PWD
AQ_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export AQ_BUILDDIR AQ_SRC
# shellcheck source=s3.sh
. "$AQ_SRC/tests/agent/tier/s3.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-obj-s3.XXXXXX")
cleanup() {
	aq_s3_cleanup
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

aq_s3_setup
aq_s3_start "$tmp/s3" || exit 99
aq_proxy_start "$AQ_S3_PORT" 0 "$tmp/requests.log" || { echo "aq-latproxy did not start" >&2; exit 99; }

AQ_OBJ_S3=$AQ_PROXY_ENDPOINT AQ_OBJ_S3_PID=$AQ_S3_PID AQ_OBJ_PROXY_PID=$AQ_PROXY_PID \
	AQ_OBJ_PROXY_LOG=$tmp/requests.log "$AQ_BUILDDIR/tests/agent/obj/test_obj"
