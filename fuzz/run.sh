#!/bin/sh
# fuzz/run.sh SECONDS: build every libFuzzer harness with clang
# (-fsanitize=fuzzer,address,undefined) and run each for SECONDS (default 30).
# Exits non-zero if a harness crashes; crash inputs stay in fuzz/out/.
set -eu
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${FUZZ_OUT:-$here/out}
cc=${CC_FUZZ:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "fuzz: $cc not found"; exit 77; }
mkdir -p "$out"
flags="-g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$top"
# The NFS front end and the volume store it serves, as whole sub-libraries.
lib="$(echo "$top"/agent/nfs/*.c "$top"/agent/vol/*.c) $top/api/api_intent_clients.c $top/api/api_error.c"
crypto=$(pkg-config --libs openssl 2>/dev/null || echo -lcrypto)
# Seeds: valid records so the fuzzers start past the header checks.
hex2bin() { # hex string -> bytes
	h=$1
	while [ -n "$h" ]; do
		b=${h%"${h#??}"}; h=${h#??}
		# shellcheck disable=SC2059
		printf "\\$(printf %o "0x$b")"
	done
}
hdr() { # prog vers proc -> call header with AUTH_SYS uid 0 (hex)
	printf '0000002a0000000000000002%08x%08x%08x0000000100000014000000000000000000000000000000000000000000000000' "$1" "$2" "$3"
}
mkdir -p "$out/corpus_rpc" "$out/corpus_args"
fh=0000002601080000000100000000000000070102030405060708aabbccddeeff00112233445566778899
i=0
for call in "$(hdr 100003 3 0)" "$(hdr 100003 3 1)$fh" "$(hdr 100005 3 1)000000022f610000" \
	"$(hdr 100003 3 3)${fh}0000000568656c6c6f000000" "$(hdr 100000 2 3)000186a30000000300000006" \
	"$(hdr 100003 3 7)${fh}00000000000000000000000400000002000000046461746100"; do
	len=$(( ${#call} / 2 ))
	hex2bin "07$(printf '%08x' $((len + 2147483648)))$call" > "$out/corpus_rpc/seed$i"
	i=$((i + 1))
done
hex2bin "03$fh" > "$out/corpus_args/seed_getattr"
hex2bin "09${fh}0000000568656c6c6f000000" > "$out/corpus_args/seed_lookup"
hex2bin "04000000022f6100" > "$out/corpus_args/seed_mnt"
mkdir -p "$out/corpus_obj_xml"
cat > "$out/corpus_obj_xml/seed_list" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>a/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken><Contents><Key>a/b&amp;c&#x41;&#66;</Key><LastModified>2026-11-30T01:00:00.000Z</LastModified><ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>a/d</Key><Size>0</Size></Contents><!-- c --></ListBucketResult>
XML
cat > "$out/corpus_obj_xml/seed_error" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SlowDown</Code><Message>Please reduce your request rate &lt;now&gt;.</Message><RequestId>x</RequestId></Error>
XML
mkdir -p "$out/corpus_s3lite_req"
printf 'GET /bkt/a/b%%2Fc?list-type=2&prefix=a%%2F&max-keys=10 HTTP/1.1\r\nHost: 127.0.0.1:9000\r\nRange: bytes=10-20\r\nx-amz-date: 20261130T010000Z\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AK/20261130/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\n\r\n' \
	> "$out/corpus_s3lite_req/seed_get"
printf 'PUT /bkt/k HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\nConnection: close\r\nContent-MD5: kAFQmDzST7DWlj99KOF/cg==\r\n\r\nabc' \
	> "$out/corpus_s3lite_req/seed_put"

# fuzz_csr: a valid CSR and a valid certificate to start from.
mkdir -p "$out/corpus_csr"
if command -v openssl >/dev/null 2>&1; then
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=n1 \
		-keyout "$out/csr_seed.key" -out "$out/corpus_csr/seed_csr" 2>/dev/null || true
	openssl req -x509 -key "$out/csr_seed.key" -subj /CN=n1 -days 1 -outform DER \
		-out "$out/corpus_csr/seed_der" 2>/dev/null || true
fi
tlslib="$top/tls/tls.c $top/api/api_error.c"
ssl=$(pkg-config --libs libssl libcrypto 2>/dev/null || echo "-lssl -lcrypto")

rc=0
# fuzz_intent: an intent volume entry as aquiferd sends it.
mkdir -p "$out/corpus_intent"
printf '%s' '{"name":"projects/p/locations/l/volumes/v","fsid":"0123456789abcdef","shareName":"v","dir":"volumes/0123456789abcdef","capacityBytes":1073741824,"throughputMibps":6.25,"unixPermissions":"0770","exportRules":[{"allowedClients":"10.0.0.0/8,127.0.0.1","accessType":"READ_WRITE","squashMode":"ROOT_SQUASH","anonUid":65534,"nfsv3":true,"nfsv4":false}],"qos":{"mibps":6.25,"iops":0,"sharedPool":"p","sharedMibps":32.0,"sharedIops":1024},"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":31,"hotTierBypassModeEnabled":false,"retrievalPolicy":"DEFAULT"}}' \
	> "$out/corpus_intent/seed_volume"
apilib="$top/api/api_intent.c $top/api/api_intent_clients.c $top/api/api_error.c $top/api/api_schema.c $top/api/api_pool.c $top/api/api_math.c"
jansson=$(pkg-config --libs jansson 2>/dev/null || echo -ljansson)

for h in rpc args fh csr obj_xml s3lite_req intent; do
	echo "== fuzz_$h: building"
	hlib="$lib $crypto"
	case $h in
	csr) hlib="$tlslib $ssl" ;;
	obj_xml) hlib="$top/agent/obj/obj_xml.c $crypto" ;;
	s3lite_req) hlib="$top/bench/tier/s3lite_req.c $crypto" ;;
	intent) hlib="$apilib $jansson -lm" ;;
	esac
	# shellcheck disable=SC2086
	$cc $flags -o "$out/fuzz_$h" "$here/fuzz_$h.c" $hlib -lpthread
	mkdir -p "$out/corpus_$h"
	echo "== fuzz_$h: running ${secs}s"
	if ! "$out/fuzz_$h" -max_total_time="$secs" -max_len=4096 -timeout=10 \
		-artifact_prefix="$out/crash_${h}_" "$out/corpus_$h" >"$out/fuzz_$h.log" 2>&1; then
		echo "== fuzz_$h: FAILED (see $out/fuzz_$h.log)"
		tail -30 "$out/fuzz_$h.log"
		rc=1
	else
		grep -E "^#[0-9]+.*(DONE|pulse)" "$out/fuzz_$h.log" | tail -1 || true
	fi
done
exit $rc
