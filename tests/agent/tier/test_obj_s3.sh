#!/usr/bin/env bash
# tests/agent/tier/test_obj_s3.sh: the object-store suite (tests/agent/obj/test_obj)
# against a real S3-API server: s3rver on loopback behind aq-latproxy (no
# added latency, --log to check the SigV4 headers). The proxy's down mode
# and SIGSTOP of s3rver give the unreachable / hanging store cases.
# shellcheck source=obj_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/obj_lib.sh" aq-obj-s3

aq_s3_setup
aq_s3_start "$tmp/s3" || exit 99
aq_proxy_start "$AQ_S3_PORT" 0 "$tmp/requests.log" || { echo "aq-latproxy did not start" >&2; exit 99; }

AQ_OBJ_S3=$AQ_PROXY_ENDPOINT AQ_OBJ_S3_PID=$AQ_S3_PID AQ_OBJ_PROXY_PID=$AQ_PROXY_PID \
	AQ_OBJ_PROXY_LOG=$tmp/requests.log "$AQ_BUILDDIR/tests/agent/obj/test_obj"
