#!/usr/bin/env bash
# tests/agent/tier/test_obj_s3lite.sh: the object-store suite (tests/agent/obj/test_obj)
# against aq-s3lite (tests/fixtures/aq-s3lite) behind aq-latproxy, like
# test_obj_s3.sh does against s3rver. aq-s3lite verifies SigV4, so here the
# suite also proves the signatures are right: a wrong secret must give
# -EACCES (s3_wrong_secret_is_eacces) while every other case passes signed
# with the right one. A curl request without Authorization must get 403
# AccessDenied, and one signed with a wrong secret 403 SignatureDoesNotMatch;
# curl also checks the store's own answers: BadDigest, XAmzContentSHA256Mismatch
# (neither stores anything), 206/416 ranges, KeyConflict, bad keys, bucket
# life cycle, and the bounds (head > 16 KiB, body > 64 MiB, bad syntax).
# shellcheck source=obj_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/obj_lib.sh" aq-obj-s3lite

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

# The store's own checks, with requests signed by curl.
sign=(--aws-sigv4 aws:amz:us-east-1:s3 --user "$AQ_S3_ACCESS_KEY:$AQ_S3_SECRET_KEY")
ep=$AQ_S3_ENDPOINT
printf 'hello s3lite\n' >"$tmp/body"
sha=$(sha256sum "$tmp/body" | cut -d' ' -f1)
md5=$(openssl dgst -md5 -binary "$tmp/body" | base64)
md5hex=$(md5sum "$tmp/body" | cut -d' ' -f1)
e3=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
st() { # expected-status curl-args...: status only
	local want=$1 got
	shift
	got=$(curl -s -o "$tmp/out" -w '%{http_code}' "$@")
	if [ "$got" != "$want" ]; then echo "not ok: curl $* -> $got, want $want: $(head -c 300 "$tmp/out")"; fail=1
	else echo "ok: $want"; fi
}
st 200 "${sign[@]}" -H "x-amz-content-sha256: $e3" -X PUT "$ep/chk"
code 409 BucketAlreadyOwnedByYou "${sign[@]}" -H "x-amz-content-sha256: $e3" -X PUT "$ep/chk"
st 200 "${sign[@]}" -H "x-amz-content-sha256: $sha" -H "Content-MD5: $md5" -T "$tmp/body" "$ep/chk/d/obj"
grep -qi "^ETag: \"$md5hex\"" < <(curl -s -I "${sign[@]}" -H "x-amz-content-sha256: $e3" "$ep/chk/d/obj") ||
	{ echo "not ok: HEAD ETag is not the MD5 $md5hex"; fail=1; }
code 400 BadDigest "${sign[@]}" -H "x-amz-content-sha256: $sha" -H "Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg==" \
	-T "$tmp/body" "$ep/chk/d/obj2"
code 400 XAmzContentSHA256Mismatch "${sign[@]}" -H "x-amz-content-sha256: $e3" -T "$tmp/body" "$ep/chk/d/obj2"
code 404 NoSuchKey "${sign[@]}" -H "x-amz-content-sha256: $e3" "$ep/chk/d/obj2"  # neither bad PUT stored it
st 206 "${sign[@]}" -H "x-amz-content-sha256: $e3" -H "Range: bytes=6-11" "$ep/chk/d/obj"
[ "$(cat "$tmp/out")" = s3lite ] || { echo "not ok: range 6-11 gave '$(cat "$tmp/out")'"; fail=1; }
code 416 InvalidRange "${sign[@]}" -H "x-amz-content-sha256: $e3" -H "Range: bytes=13-" "$ep/chk/d/obj"
code 409 KeyConflict "${sign[@]}" -H "x-amz-content-sha256: $e3" -X PUT --data-binary '' "$ep/chk/d"
code 400 InvalidArgument --path-as-is "${sign[@]}" -H "x-amz-content-sha256: $e3" "$ep/chk/d/../../x"
code 409 BucketNotEmpty "${sign[@]}" -H "x-amz-content-sha256: $e3" -X DELETE "$ep/chk"
st 204 "${sign[@]}" -H "x-amz-content-sha256: $e3" -X DELETE "$ep/chk/d/obj"
st 204 "${sign[@]}" -H "x-amz-content-sha256: $e3" -X DELETE "$ep/chk/d/obj"  # missing: still 204
st 204 "${sign[@]}" -H "x-amz-content-sha256: $e3" -X DELETE "$ep/chk"       # emptied folders went too
# Bounds: a head over 16 KiB, a body over 64 MiB, a malformed request line.
st 431 -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" "$ep/chk/x"
raw() { # request -> first line of the answer
	exec 3<>"/dev/tcp/127.0.0.1/$AQ_S3_PORT"
	printf '%b' "$1" >&3
	head -1 <&3 | tr -d '\r'
	exec 3<&-
}
for r in "PUT /chk/k HTTP/1.1\r\nHost: x\r\nContent-Length: 67108865\r\n\r\n|HTTP/1.1 400 Bad Request" \
	"GARBAGE\r\n\r\n|HTTP/1.1 400 Bad Request" \
	"GET /chk/k HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n|HTTP/1.1 400 Bad Request"; do
	got=$(raw "${r%|*}")
	if [ "$got" = "${r#*|}" ]; then echo "ok: ${r#*|}"; else echo "not ok: '${r%|*}' -> '$got'"; fail=1; fi
done
# The signature covers the path, the query and the signed headers: a request
# signed by curl is accepted as is, and refused once any of them changes.
st 200 "${sign[@]}" -H "x-amz-content-sha256: $e3" -X PUT "$ep/sig"
sig=$(curl -s -v -o /dev/null "${sign[@]}" -H "x-amz-content-sha256: $e3" -H "Range: bytes=0-1" \
	"$ep/sig?list-type=2&prefix=a" 2>&1 | sed -n 's/^> \(Authorization: .*\|X-Amz-Date: .*\)\r$/\1/p')
auth=$(sed -n 1p <<<"$sig") date=$(sed -n 2p <<<"$sig")
replay() { curl -s -H "$auth" -H "$date" -H "x-amz-content-sha256: $e3" "$@"; }
for t in "200 ListBucketResult|-H|Range: bytes=0-1|$ep/sig?list-type=2&prefix=a" \
	"403 SignatureDoesNotMatch|-H|Range: bytes=0-1|$ep/sig?list-type=2&prefix=b" \
	"403 SignatureDoesNotMatch|-H|Range: bytes=0-2|$ep/sig?list-type=2&prefix=a" \
	"403 SignatureDoesNotMatch|-H|Range: bytes=0-1|$ep/sig2?list-type=2&prefix=a"; do
	IFS='|' read -r want h1 h2 url <<<"$t"
	out=$(replay "$h1" "$h2" -w '\n%{http_code}' "$url")
	if [ "${out##*$'\n'}" = "${want% *}" ] && grep -q "${want#* }" <<<"$out"; then echo "ok: replay $url $h2 -> $want"
	else echo "not ok: replay $url $h2 -> $out, want $want"; fail=1; fi
done
got=$(raw "GET /sig HTTP/1.1\r\nHost: x\r\nAuthorization: AWS4-HMAC-SHA256 Credential=$AQ_S3_ACCESS_KEY/20261130/us-east-1/s3/aws4_request, SignedHeaders=x-amz-date, Signature=$(printf '%064d' 0)\r\n\r\n")
if [ "$got" = "HTTP/1.1 400 Bad Request" ]; then echo "ok: host must be signed"
else echo "not ok: host unsigned -> $got"; fail=1; fi
kill -0 "$AQ_S3_PID" || { echo "not ok: aq-s3lite died"; fail=1; }

AQ_OBJ_S3=$AQ_PROXY_ENDPOINT AQ_OBJ_S3_PID=$AQ_S3_PID AQ_OBJ_PROXY_PID=$AQ_PROXY_PID \
	AQ_OBJ_PROXY_LOG=$tmp/requests.log AQ_OBJ_S3_ACCESS_KEY=$AQ_S3_ACCESS_KEY \
	AQ_OBJ_S3_SECRET_KEY=$AQ_S3_SECRET_KEY AQ_OBJ_S3_VERIFIES_SIGV4=1 \
	"$AQ_BUILDDIR/tests/agent/obj/test_obj" || fail=1
exit $fail
