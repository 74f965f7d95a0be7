#!/usr/bin/env bash
# tests/tier/test_obj_s3lite.sh: the object-store suite (tests/agent/test_obj)
# against aq-s3lite (bench/tier/aq-s3lite) behind aq-latproxy, like
# test_obj_s3.sh does against s3rver. aq-s3lite verifies SigV4, so here the
# suite also proves the signatures are right: a wrong secret must give
# -EACCES (s3_wrong_secret_is_eacces) while every other case passes signed
# with the right one. A curl request without Authorization must get 403
# AccessDenied, and one signed with a wrong secret 403 SignatureDoesNotMatch.
set -u
AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -x "$AQ_BUILDDIR/tests/agent/test_obj" ] || AQ_BUILDDIR=$PWD
AQ_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export AQ_BUILDDIR AQ_SRC
# shellcheck source=s3.sh
. "$AQ_SRC/tests/tier/s3.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/aq-obj-s3lite.XXXXXX")
cleanup() {
	aq_s3_cleanup
	if [ "${AQ_KEEP:-0}" = 1 ]; then echo "# kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

aq_s3lite_start "$tmp/s3" || exit 99
aq_proxy_start "$AQ_S3_PORT" 0 "$tmp/requests.log" || { echo "aq-latproxy did not start" >&2; exit 99; }

fail=0
# curl --aws-sigv4 signs like the agent does; no signature / a wrong one are refused.
code() { # expected-status expected-code curl-args...
	local want=$1 wcode=$2 out st
	shift 2
	out=$(curl -s -w '\n%{http_code}' "$@") || { echo "not ok: curl $* failed"; fail=1; return; }
	st=${out##*$'\n'}
	if [ "$st" != "$want" ] || ! grep -q "<Code>$wcode</Code>" <<<"$out"; then
		echo "not ok: curl $* -> $st, want $want $wcode: $out"
		fail=1
	else
		echo "ok: $want $wcode"
	fi
}
code 403 AccessDenied "$AQ_S3_ENDPOINT/nobucket/k"
code 403 SignatureDoesNotMatch --aws-sigv4 aws:amz:us-east-1:s3 --user "$AQ_S3_ACCESS_KEY:wrong-secret" \
	"$AQ_S3_ENDPOINT/nobucket/k"
code 403 InvalidAccessKeyId --aws-sigv4 aws:amz:us-east-1:s3 --user "NOT-THE-KEY:$AQ_S3_SECRET_KEY" \
	"$AQ_S3_ENDPOINT/nobucket/k"
code 404 NoSuchBucket --aws-sigv4 aws:amz:us-east-1:s3 --user "$AQ_S3_ACCESS_KEY:$AQ_S3_SECRET_KEY" \
	-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
	"$AQ_S3_ENDPOINT/nobucket/k"

AQ_OBJ_S3=$AQ_PROXY_ENDPOINT AQ_OBJ_S3_PID=$AQ_S3_PID AQ_OBJ_PROXY_PID=$AQ_PROXY_PID \
	AQ_OBJ_PROXY_LOG=$tmp/requests.log AQ_OBJ_S3_ACCESS_KEY=$AQ_S3_ACCESS_KEY \
	AQ_OBJ_S3_SECRET_KEY=$AQ_S3_SECRET_KEY AQ_OBJ_S3_VERIFIES_SIGV4=1 \
	"$AQ_BUILDDIR/tests/agent/test_obj" || fail=1
exit $fail
