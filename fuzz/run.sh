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
	hex2bin "0700$(printf '%08x' $((len + 2147483648)))$call" > "$out/corpus_rpc/seed$i" # chunk 7, fed once
	i=$((i + 1))
done
# a 192 KiB record (its body the input fed 1021 times): room taken ahead of bytes
hex2bin "00ff80030000$(hdr 100003 3 0)$(printf '%0600d' 0)" > "$out/corpus_rpc/seed_large"
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
tlslib="$top/tls/tls.c $top/util/ut_file.c $top/api/api_error.c"
ssl=$(pkg-config --libs libssl libcrypto 2>/dev/null || echo "-lssl -lcrypto")

rc=0
# fuzz_intent: an intent volume entry as aquiferd sends it.
mkdir -p "$out/corpus_intent"
printf '%s' '{"name":"projects/p/locations/l/volumes/v","fsid":"0123456789abcdef","shareName":"v","dir":"volumes/0123456789abcdef","capacityBytes":1073741824,"throughputMibps":6.25,"unixPermissions":"0770","exportRules":[{"allowedClients":"10.0.0.0/8,127.0.0.1","accessType":"READ_WRITE","squashMode":"ROOT_SQUASH","anonUid":65534,"nfsv3":true,"nfsv4":false}],"qos":{"mibps":6.25,"iops":0,"sharedPool":"p","sharedMibps":32.0,"sharedIops":1024},"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":31,"hotTierBypassModeEnabled":false,"retrievalPolicy":"DEFAULT"}}' \
	> "$out/corpus_intent/seed_volume"
# issue 23: readAhead, both modes that carry something
printf '%s' '{"name":"v","fsid":"0123456789abcdef","shareName":"v","dir":"d","readAhead":{"mode":"CROSS_FILE_SEQUENTIAL","depthFiles":16}}' \
	> "$out/corpus_intent/seed_read_ahead"
printf '%s' '{"name":"v","fsid":"0123456789abcdef","shareName":"v","dir":"d","readAhead":{"mode":"AGGRESSIVE"}}' \
	> "$out/corpus_intent/seed_read_ahead_aggressive"
# issue 21: a volume restored from a backup (restoreSource), a backup job
printf '%s' '{"name":"v","fsid":"0123456789abcdef","shareName":"v","dir":"d","snapshots":[],"restoreSource":{"op":"restore","id":"0123456789abcdef","name":"b","vault":{"key":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","store":{"directory":{"path":".backups/0011223344556677"}}}}}' \
	> "$out/corpus_intent/seed_restore"
printf '%s' '{"op":"backup","id":"0123456789abcdef","name":"b","volume":"v","prevId":"1111111111111111","snapshot":{"id":"s1","uid":"fedcba9876543210"},"vault":{"key":"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff","store":{"directory":{"path":".backups/0011223344556677"}}}}' \
	> "$out/corpus_intent/seed_backup_job"
# ... and one the decoder refuses (its message once dereferenced a NULL msg)
printf '%s' '{"name":"v","fsid":"0123456789abcdef","shareName":"v","dir":"d","readAhead":{"mode":"CROSS_FILE_SEQUENTIAL","depthFiles":32}}' \
	> "$out/corpus_intent/seed_read_ahead_refused"
apilib="$top/api/api_intent.c $top/api/api_intent_backup.c $top/api/api_intent_clients.c $top/api/api_error.c $top/api/api_schema.c $top/api/api_pool.c $top/api/api_math.c $top/api/api_id.c"
jansson=$(pkg-config --libs jansson 2>/dev/null || echo -ljansson)

# fuzz_ut_conf, fuzz_ut_hostport: util/'s config reader and HOST:PORT parser.
mkdir -p "$out/corpus_ut_conf" "$out/corpus_ut_hostport"
printf '# aquiferd\nlisten = 127.0.0.1:8080\r\ndb=/var/lib/aq.db\n  tier_day_seconds =\t86400\nbad line\n' \
	> "$out/corpus_ut_conf/seed_conf"
printf '[fe80::1]:2049' > "$out/corpus_ut_hostport/seed_v6"
printf 'node-1.example:8080' > "$out/corpus_ut_hostport/seed_name"
utillib="$top/util/ut_conf.c $top/util/ut_file.c $top/util/ut_hostport.c $top/api/api_error.c"
# The agent's sub-libraries call util/ (issue 16, shared helpers).
lib="$lib $(echo "$top"/util/*.c)"

# The SMB protocol modules (issue 18): agent/smb/, seeded with the Windows
# messages of tests/agent/smb/smb_vectors.h.
smblib="$top/agent/smb/smb_wire.c $top/agent/smb/smb_wire_neg.c $top/agent/smb/smb_wire_create.c \
 $top/agent/smb/smb_wire_file.c $top/agent/smb/smb_crypto.c $top/agent/smb/smb_ntlm.c $top/agent/smb/smb_spnego.c $top/agent/smb/smb_sd.c $top/agent/smb/smb_ea.c"
smb_seeds() { # corpus macro... -> one seed per macro of smb_vectors.h
	d=$out/corpus_$1
	shift
	mkdir -p "$d"
	for v in "$@"; do
		hex=$(sed -n "/#define $v\\b/,/^\$\\|^#/p" "$top/tests/agent/smb/smb_vectors.h" |
			grep -o '"[0-9A-Fa-f]*"' | tr -d '"\n')
		[ -n "$hex" ] && hex2bin "$hex" > "$d/$v"
	done
}
smb_seeds smb_wire SMB_VEC_NEG_REQ SMB_VEC_SS_REQ1 SMB_VEC_SS_REQ2
# A LOCK of two elements (exclusive and shared, both FAIL_IMMEDIATELY), and
# an unlock: the byte-range lock decoder (smb_lock.c).
lockhdr=fe534d4240000000000000000a000100000000000000000005000000000000000000000001000000010000000000000000000000000000000000000000000000
hex2bin "${lockhdr}300002000000000001000000000000000100000000000000000000000000000010000000000000001200000000000000000100000000000010000000000000001100000000000000" \
	> "$out/corpus_smb_wire/seed_lock"
hex2bin "${lockhdr}300001000000000001000000000000000100000000000000000000000000000010000000000000000400000000000000" > "$out/corpus_smb_wire/seed_unlock"
# A CHANGE_NOTIFY (issue 18, smb_notify.c): WATCH_TREE, OutputBufferLength
# 4096, FileId 1/1, CompletionFilter FILE_NAME|DIR_NAME|ATTRIBUTES|LAST_WRITE.
notifyhdr=$(printf '%s' "$lockhdr" | sed 's/^\(.\{24\}\)0a00/\10f00/')
hex2bin "${notifyhdr}2000010000100000010000000000000001000000000000001700000000000000" \
	> "$out/corpus_smb_wire/seed_notify"
# A SET_INFO FileLinkInformation (issue 18, smb_info_name.c): FileId 1/1,
# ReplaceIfExists 0, RootDirectory 0, the name "b" (the rename's layout).
setinfohdr=$(printf '%s' "$lockhdr" | sed 's/^\(.\{24\}\)0a00/\11100/')
hex2bin "${setinfohdr}2100010b1600000060000000000000000100000000000000010000000000000000000000000000000000000000000000020000006200" \
	> "$out/corpus_smb_wire/seed_set_link"
# A CREATE of "a.txt" with MxAc, QFid, AlSi (4096), SecD (O:BAD:(A;;0xf01ff;;;WD)) and ExtA
# contexts: the context chain and smb_ctx_check (agent/smb/smb_ctx.c).
hex2bin "fe534d424000000000000000050001000000000000000000050000000000000000000000010000000100000000000000000000000000000000000000000000003900000002000000000000000000000000000000000000009f0112000000000007000000020000004000000078000a0088000000d000000061002e00740078007400000000000000180000001000040000000000000000004d7841630000000018000000100004000000000000000000514669640000000020000000100004000000180008000000416c536900000000001000000000000058000000100004000000180040000000536563440000000001000480140000000000000000000000240000000102000000000005200000002002000002001c000100000000001400ff010f000101000000000001000000000000000010000400000018000c000000457874410000000000000000000101004100620000000000" \
	> "$out/corpus_smb_wire/seed_create_ctx"
# SPNEGO and NTLMSSP seeds: the security blobs inside those messages.
smb_seeds smb_blob SMB_VEC_SS_REQ1 SMB_VEC_SS_REQ2
mkdir -p "$out/corpus_smb_spnego" "$out/corpus_smb_ntlm"
dd if="$out/corpus_smb_blob/SMB_VEC_SS_REQ1" of="$out/corpus_smb_spnego/init" bs=1 skip=88 2>/dev/null
dd if="$out/corpus_smb_blob/SMB_VEC_SS_REQ2" of="$out/corpus_smb_spnego/resp" bs=1 skip=88 2>/dev/null
dd if="$out/corpus_smb_blob/SMB_VEC_SS_REQ2" of="$out/corpus_smb_ntlm/auth" bs=1 skip=109 2>/dev/null
# A descriptor as Samba writes one: O:BAD:(A;;0xf01ff;;;WD)
# The server's harness takes direct-TCP frames: NEGOTIATE then SESSION_SETUP.
mkdir -p "$out/corpus_smb_srv"
for v in SMB_VEC_NEG_REQ SMB_VEC_SS_REQ1 SMB_VEC_SS_REQ2; do
	n=$(wc -c <"$out/corpus_smb_wire/$v")
	hex2bin "00$(printf '%06x' "$n")"
	cat "$out/corpus_smb_wire/$v"
done >"$out/corpus_smb_srv/exchange"
# ... then an SMB2 CANCEL (async form, AsyncId 1) and a sync one (MessageId 2): no responses.
cancel_async=fe534d4240000000000000000c00000002000000000000000000000000000000010000000000000000000000000000000000000000000000000000000000000004000000
cancel_sync=fe534d4240000000000000000c00000000000000000000000200000000000000000000000000000000000000000000000000000000000000000000000000000004000000
hex2bin "$cancel_async" >"$out/corpus_smb_wire/seed_cancel"
{ cat "$out/corpus_smb_srv/exchange"
  for h in "$cancel_async" "$cancel_sync"; do hex2bin "00000044$h"; done
} >"$out/corpus_smb_srv/exchange_cancel"
# ... and a CHANGE_NOTIFY (no open behind it: the refusal path; the unit suite drives the rest)
{ cat "$out/corpus_smb_srv/exchange"
  n=$(wc -c <"$out/corpus_smb_wire/seed_notify"); hex2bin "00$(printf '%06x' "$n")"; cat "$out/corpus_smb_wire/seed_notify"
} >"$out/corpus_smb_srv/exchange_notify"
# fuzz_smb_ea: a FILE_FULL_EA_INFORMATION list of two ("EAONE"=VALUE1; "SECONDEA"=ValueTwo, FILE_NEED_EA)
mkdir -p "$out/corpus_smb_ea"
hex2bin 140000000005060045414f4e450056414c55453100000000800808005345434f4e4445410056616c756554776f > "$out/corpus_smb_ea/two"
mkdir -p "$out/corpus_smb_sd"
hex2bin 010004801400000000000000000000002400000001020000000000052000000020020000\
02001c000100000000001400ff010f00010100000000000100000000 > "$out/corpus_smb_sd/samba"
# fuzz_cli_hint (issue 17): the CLI reads the message of aquiferd's errors.
mkdir -p "$out/corpus_cli_hint"
printf '%s' 'node "n1" is READY and holds 2 volumes; drain it (POST /v1/nodes/n1:drain) or stop its agent first' \
	> "$out/corpus_cli_hint/seed_drain"
printf '%s' 'not found (create it with POST /v1/locations?locationId=ID); see DELETE /v1/nodes/NAME.' \
	> "$out/corpus_cli_hint/seed_create"
# the hint module reads the command table, which pulls in the whole CLI library
clilib="$(ls "$top"/cli/*.c | grep -v "/cli/main\\.c$") $(ls "$top"/api/*.c) $(ls "$top"/util/*.c)"
curl=$(pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
# fuzz_api_fields (issue 17): the ?fields= partial-response selector.
mkdir -p "$out/corpus_api_fields"
printf '%s' 'name,volumes(name,state),a.b/c,nextPageToken' > "$out/corpus_api_fields/seed"
# fuzz_nfs4_compound (issue 19): a PUTROOTFH, LOOKUP "vol", GETATTR after the harness's SEQUENCE.
mkdir -p "$out/corpus_nfs4_compound"
hex2bin "0801000000180000000f00000003766f6c0000000009000000020000001f00000002" > "$out/corpus_nfs4_compound/seed_lookup"
# OPEN (create "lk"), LOCK 0+100 under its stateid (a new lock owner), LOCKT 0+10.
hex2bin "0c01000000180000000f00000003766f6c00000000120000000000000003000000000000000000000000000000016f0000000000000100000000000000000000000000000000000000026c6b00000000000c000000020000000000000000000000000000000000000064000000010000000000000001000000000000000000000000000000000000000000000000000000016c0000000000000d000000020000000000000000000000000000000a0000000000000000000000016d000000" > "$out/corpus_nfs4_compound/seed_lock"
# OPEN (create "sh", access both, deny read), OPEN_DOWNGRADE of the current stateid to read
# and no deny, VERIFY and NVERIFY of size 0.
hex2bin "0e01000000180000000f00000003766f6c00000000120000000000000003000000010000000000000000000000016f0000000000000100000000000000000000000000000000000000027368000000000015000000010000000000000000000000000000000000000100000000000000250000000100000010000000080000000000000000000000110000000100000010000000080000000000000000" > "$out/corpus_nfs4_compound/seed_share"
# fuzz_bkp_manifest (issue 21): a manifest as bkp_tool writes one (a small
# tree with every kind of entry), decrypted.
mkdir -p "$out/corpus_bkp_manifest"
hex2bin "$(cat "$here/seed_bkp_manifest.hex")" > "$out/corpus_bkp_manifest/seed_tree"
# and a version 2 one (issue 18): folders and files with SMB's EA list and DOS attributes
hex2bin "$(cat "$here/seed_bkp_manifest_v2.hex")" > "$out/corpus_bkp_manifest/seed_xattrs"
bkplib="$top/agent/bkp/bkp_mf.c $top/util/ut_buf.c $top/api/api_error.c"
# fuzz_nlm (issue 19): byte 0 the procedure (bit 7: NSM), byte 1 bit 0 puts the
# harness's cookie, words, caller "h" and its file's handle first.
mkdir -p "$out/corpus_nlm"
# LOCK block exclusive, oh "o", svid 7, 0+100, reclaim 0, state 1; then TEST and UNLOCK of it
hex2bin "02050000000100000001000000016f00000000000007000000000000000000000000000000640000000000000001" \
	> "$out/corpus_nlm/seed_lock"
hex2bin "010300000001000000016f0000000000000700000000000000000000000000000064" > "$out/corpus_nlm/seed_test_head"
hex2bin "0401000000016f000000000000070000000000000000000000000000000a" > "$out/corpus_nlm/seed_unlock"
# SHARE (mode DW, access RW), FREE_ALL "h", NSM NOTIFY "h" state 3
hex2bin "1401000000016f000000000000020000000300000000" > "$out/corpus_nlm/seed_share"
hex2bin "1700000000016800000000000003" > "$out/corpus_nlm/seed_free_all"
hex2bin "8600000000016800000000000003" > "$out/corpus_nlm/seed_notify"
# fuzz_vol_grace (issue 19): a volume's lock holder records, one line and a whole file.
mkdir -p "$out/corpus_vol_grace"
printf 'aquifer-lock-holders 1\nnlm 127.0.0.1 686f73742d61\nnfs4 - 636c69656e742d78\nnlm ::1 68\n' \
	> "$out/corpus_vol_grace/seed_holders"
# fuzz_agent_nvme (issue 24): a Reservation Report holding one registrant that holds it, the
# kernel's connect answer, a sysfs address, an NGUID, a --shelf spec (the first byte picks).
mkdir -p "$out/corpus_agent_nvme"
hex2bin "0007000000010100$(printf '%0114d' 0)010001$(printf '%010d' 0)efcdab8967452301$(printf '%0096d' 0)" \
	> "$out/corpus_agent_nvme/seed_report"
printf '\001instance=3,cntlid=1\n' > "$out/corpus_agent_nvme/seed_connect"
# fuzz_api_shelf: a /v1/shelves body of each backend
mkdir -p "$out/corpus_api_shelf"
printf '{"location":"east","backend":"nvmeof","transport":"rdma","nqn":"nqn.2026-01.io.aquifer:shelf1","addresses":["10.0.2.15:4420","[fe80::1]:4421"],"capacityGib":"1024","media":"QLC"}' \
	> "$out/corpus_api_shelf/seed_nvmeof"
printf '{"location":"east","readThroughputMibps":1000,"writeThroughputMibps":500}' > "$out/corpus_api_shelf/seed_dir"
printf '\002traddr=10.0.2.15,trsvcid=4420,src_addr=10.0.2.16\n' > "$out/corpus_agent_nvme/seed_address"
printf '\00341514652-0001-0000-0123-456789abcdef\n' > "$out/corpus_agent_nvme/seed_nguid"
printf '\004nvmeof:rdma:[fd00::1]:4420:nqn.2026-01.org.aquifer:s,fence=none,provision=/p' \
	> "$out/corpus_agent_nvme/seed_spec"
# ...and (5) a lease record of fence=lease (owner 0xa1 "node", generation 2, the fuzzer's volume id;
# its FNV-1a checksum computed here), (6) an ext4 superblock of 256 blocks of 4 KiB.
fnv_hex() { # hex bytes -> FNV-1a 32 as 8 hex digits
	h=$1 x=2166136261
	while [ -n "$h" ]; do
		b=${h%"${h#??}"}; h=${h#??}
		x=$(( ((x ^ 0x$b) * 16777619) & 0xffffffff ))
	done
	printf '%08x' "$x"
}
rec="41514c4541534531""00000001""00000001""00000000000000a1""0000000000000002""0000000000000005"
rec="${rec}0000000000000000""00002710""00000004"
rec="${rec}6e6f6465$(printf '%0120d' 0)41514652000100000000000000000000$(printf '%0744d' 0)"
hex2bin "05${rec}$(fnv_hex "$rec")" > "$out/corpus_agent_nvme/seed_lease"
hex2bin "06$(printf '%08d' 0)00010000$(printf '%032d' 0)02000000$(printf '%056d' 0)53ef$(printf '%01932d' 0)" \
	> "$out/corpus_agent_nvme/seed_ext4"
# fuzz_nfs4_cb (issue 19): a CB_COMPOUND reply: CB_SEQUENCE and CB_RECALL answered NFS4_OK.
mkdir -p "$out/corpus_nfs4_cb"
hex2bin "0000004d00000001000000000000000000000000000000000000000000000000000000020000000b0000000001020300000000000000000000000000000000050000000000000000000000000000000400000000" \
	> "$out/corpus_nfs4_cb/seed_recall"
# a CB_GETATTR answered with change 5 and size 1234,
hex2bin "0000004e00000001000000000000000000000000000000000000000000000000000000020000000b0000000000000000000000000000000000000000000000010000000000000000000000000000000300000000000000010000001800000010000000000000000500000000000004d2" \
	> "$out/corpus_nfs4_cb/seed_getattr"
# and the accepted reply to a CB_NULL probe (xid 9).
hex2bin "000000090000000100000000000000000000000000000000" > "$out/corpus_nfs4_cb/seed_null"
# FUZZ_ONLY="h1 h2" runs only those harnesses.
for h in ${FUZZ_ONLY:-rpc args fh csr obj_xml s3lite_req intent ut_conf ut_hostport \
	smb_wire smb_ntlm smb_spnego smb_sd smb_ea smb_srv cli_hint api_fields nfs4_compound nfs4_cb bkp_manifest nlm vol_grace agent_nvme api_shelf}; do
	echo "== fuzz_$h: building"
	hlib="$lib $crypto"
	case $h in
	csr) hlib="$tlslib $ssl" ;;
	obj_xml) hlib="$top/agent/obj/obj_xml.c $top/util/ut_hex.c $crypto" ;;
	s3lite_req) hlib="$top/tests/fixtures/s3lite_req.c $top/util/ut_hex.c $crypto" ;;
	intent) hlib="$apilib $jansson -lm" ;;
	ut_conf | ut_hostport) hlib="$utillib" ;;
	smb_srv) hlib="$smblib $(echo "$top"/agent/smb/smb_srv.c "$top"/agent/smb/smb_dispatch.c "$top"/agent/smb/smb_admit.c "$top"/agent/smb/smb_sess.c \
		"$top"/agent/smb/smb_tree.c "$top"/agent/smb/smb_iface.c "$top"/agent/smb/smb_open.c "$top"/agent/smb/smb_alloc.c "$top"/agent/smb/smb_info.c "$top"/agent/smb/smb_info_name.c "$top"/agent/smb/smb_prev.c "$top"/agent/smb/smb_ctx.c "$top"/agent/smb/smb_ctx_open.c \
		"$top"/agent/smb/smb_lock.c "$top"/agent/smb/smb_async.c "$top"/agent/smb/smb_read.c "$top"/agent/smb/smb_frame.c "$top"/agent/smb/smb_notify.c "$top"/agent/smb/smb_lease.c \
		"$top"/agent/smb/smb_durable.c "$top"/agent/smb/smb_copy.c "$top"/agent/smb/smb_clone.c "$top"/agent/smb/smb_sparse.c "$top"/agent/smb/smb_info_ea.c "$top"/agent/smb/smb_info_sec.c "$top"/agent/smb/smb_acl.c "$top"/agent/smb/smb_acl_open.c) $lib \
		$crypto" ;;
	smb_wire) hlib="$smblib $top/agent/smb/smb_ctx.c $top/util/ut_buf.c $crypto" ;;
	smb_*) hlib="$smblib $top/util/ut_buf.c $crypto" ;;
	cli_hint) hlib="-DAQ_VERSION=\"fuzz\" $clilib $curl $jansson -lm" ;;
	api_fields) hlib="$top/api/api_fields.c $top/api/api_error.c $jansson" ;;
	nfs4_compound | nfs4_cb) hlib="$(echo "$top"/agent/nfs4/*.c) $lib $crypto" ;;
	bkp_manifest) hlib="$bkplib" ;;
	agent_nvme) hlib="$top/agent/agent_nvme.c $top/agent/agent_lease.c $top/util/ut_hex.c $apilib $top/api/api_shelf.c $jansson -lm" ;;
	api_shelf) hlib="$apilib $top/api/api_shelf.c $jansson -lm" ;;
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
