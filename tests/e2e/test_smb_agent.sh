#!/usr/bin/env bash
# test_smb_agent.sh: the agent's SMB server (issue 18) driven by Debian's
# smbclient. aquiferd joins one agent; the intent with an SMB volume and the
# smbUsers (the control plane's side comes with its own branch) is put into
# the agent's --state-dir with a generation above aquiferd's, and the agent
# restarted with --smb-listen serves it (aquiferd stopped: its pushes
# would replace it). Checks: put/get of a 256 MiB random
# file with identical sha256 at SMB2_10, SMB3_00 and SMB3_11 with signing
# required, with and without encryption; ls, mkdir, rename, delete, allinfo;
# wrong password, unknown user and another project's user refused; an
# ENCRYPT_DATA share refusing a client that does not encrypt; NFS refusing
# an SMB-only volume; garbage, truncated, oversized frames and a slow client
# never stopping service for another client.
. "$(dirname "$0")/lib.sh"

command -v smbclient >/dev/null || { echo "SKIP: smbclient missing (apt-get install smbclient)"; exit 77; }
command -v nfs-ls >/dev/null || { echo "SKIP: nfs-ls missing (apt-get install libnfs-utils)"; exit 77; }
nthash() { printf '%s' "$1" | iconv -t utf-16le | openssl dgst -md4 -provider legacy -provider default 2>/dev/null | sed 's/.*= //'; }
[ -n "$(nthash x)" ] || { echo "SKIP: openssl without MD4 (legacy provider)"; exit 77; }

D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
aq_acme_start "$D"
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 1000 || exit 1
API=$AGENT_API_PORT NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"40960","qosType":"MANUAL"}'
v() { printf '{"storagePool":"sp","capacityGib":"%s","protocols":["NFSV3"],"shareName":"%s","throughputMibps":100,
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$2" "$1"; }
for s in docs sealed tiny; do
	aq_req POST "$P/volumes?volumeId=$s" "$(v $s 100)"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 30
done
aq_req GET "$P/volumes/docs"
expect_jq .state READY "the volumes are READY"

# The SMB side of the intent, as the control plane will push it.
# aquiferd goes away (the agent serves its last applied state meanwhile), so
# that its own pushes, which know no SMB yet, do not replace this one.
STATE=$D/n1/state
kill -TERM "$AGENT_PID" "$AQ_PID"
wait "$AGENT_PID" "$AQ_PID" 2>/dev/null
jq --arg alice "$(nthash 'Secret-1')" --arg bob "$(nthash 'Other-2')" '
  .generation = 1000000000
  | .volumes |= map(
      if .shareName == "docs" then .protocols = ["SMB"]
      elif .shareName == "sealed" then .protocols = ["NFSV3", "SMB"] | .smbSettings = ["ENCRYPT_DATA"]
      else .protocols = ["NFSV3", "SMB"] | .capacityBytes = 314572800 end)
  | .smbUsers = [
      {project: "acme", name: "alice", ntHash: $alice, uid: 1234, gid: 4321},
      {project: "other", name: "bob", ntHash: $bob, uid: 2000, gid: 2000}]' \
  "$STATE/intent.json" >"$STATE/intent.new" && mv "$STATE/intent.new" "$STATE/intent.json"
# the volumes' roots are root's (0770): let the SMB users (and NFS as them) in
for dir in $(jq -r '.volumes[].dir' "$STATE/intent.json"); do chmod 0777 "$SHELF/$dir"; done
SMB=$(aq_pick_port)
AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
"$AQUIFER_AGENT" --server "$AQ_URL" --node n1 --location east --shelf "$SHELF" --listen "127.0.0.1:$API" \
	--nfs-listen "127.0.0.1:$NFS" --smb-listen "127.0.0.1:$SMB" --state-dir "$STATE" >>"$D/n1/agent.log" 2>&1 &
AGENT_PID=$!
AQ_PIDS+=("$AGENT_PID")
for _ in $(seq 100); do
	(exec 3<>"/dev/tcp/127.0.0.1/$SMB") 2>/dev/null && break
	sleep 0.1
done

S() { # S PROTO SHARE USER%PASS COMMANDS [extra options]
	local proto=$1 share=$2 cred=$3 cmds=$4
	shift 4
	timeout 120 smbclient "//127.0.0.1/$share" -p "$SMB" -U "$cred" -m "$proto" \
		--option='client signing=required' --option='client min protocol=SMB2_02' "$@" -c "$cmds" 2>&1
}
A='alice%Secret-1'

out=$(S SMB3_11 docs "$A" 'mkdir d1; ls')
ok "smbclient lists the share (SMB3_11, signed)" grep -q ' d1 *D' <<<"$out"
[ $AQ_FAIL -gt 0 ] && printf '%s\n' "$out" | tail -5
head -c $((256 << 20)) /dev/urandom >"$AQ_TMP/big.bin"
SUM=$(sha256sum <"$AQ_TMP/big.bin" | cut -c1-64)
i=0
for proto in SMB2_10 SMB3_00 SMB3_11; do
	for enc in off required; do
		i=$((i + 1))
		rm -f "$AQ_TMP/back.bin"
		out=$(cd "$AQ_TMP" && S $proto docs "$A" "put big.bin f$i.bin; get f$i.bin back.bin" --option="client smb encrypt=$enc")
		[ $proto = SMB2_10 ] && [ $enc = required ] && {
			# 2.1 has no encryption: the client refuses to go on
			ok "SMB2_10 with encryption required does not connect" test ! -f "$AQ_TMP/back.bin"
			continue
		}
		got=$( [ -f "$AQ_TMP/back.bin" ] && sha256sum <"$AQ_TMP/back.bin" | cut -c1-64)
		expect_eq "256 MiB put/get at $proto, encryption $enc: same sha256" "$SUM" "$got"
		[ "$SUM" = "$got" ] || printf '%s\n' "$out" | tail -5
	done
done
rm -f "$AQ_TMP/back.bin"

out=$(S SMB3_11 docs "$A" 'rename f1.bin renamed.bin; ls')
ok "rename" bash -c 'grep -q "renamed.bin" <<<"$1" && ! grep -q " f1.bin" <<<"$1"' _ "$out"
out=$(S SMB3_11 docs "$A" 'allinfo renamed.bin')
ok "allinfo shows the size and times" bash -c 'grep -q "write_time:" <<<"$1" && grep -qi "stream.*268435456\|268435456" <<<"$1"' _ "$out"
out=$(S SMB3_11 docs "$A" 'del renamed.bin; rmdir d1; ls')
ok "del and rmdir" bash -c '! grep -q "renamed.bin\| d1 " <<<"$1" && grep -q "f3.bin" <<<"$1"' _ "$out"
OWN=$(stat -c %u:%g "$(find "$SHELF" -name f3.bin | head -1)")
expect_eq "files belong to the user's uid/gid (what NFS shows)" "1234:4321" "$OWN"

out=$(S SMB3_11 docs 'alice%wrong' 'ls')
ok "a wrong password is refused" grep -q 'NT_STATUS_LOGON_FAILURE' <<<"$out"
out=$(S SMB3_11 docs 'mallory%Secret-1' 'ls')
ok "an unknown user is refused" grep -q 'NT_STATUS_LOGON_FAILURE' <<<"$out"
out=$(S SMB3_11 docs '%' 'ls' -N)
ok "anonymous is refused" grep -q 'NT_STATUS_LOGON_FAILURE\|NT_STATUS_ACCESS_DENIED' <<<"$out"
out=$(S SMB3_11 docs 'bob%Other-2' 'ls')
ok "a user of another project does not reach the share" grep -q 'NT_STATUS_BAD_NETWORK_NAME' <<<"$out"

out=$(S SMB2_10 sealed "$A" 'ls')
ok "an ENCRYPT_DATA share refuses a client that cannot encrypt" grep -q 'NT_STATUS_ACCESS_DENIED' <<<"$out"
out=$(S SMB3_11 sealed "$A" 'mkdir x; ls')
ok "an ENCRYPT_DATA share serves a 3.1.1 client (encrypted)" grep -q ' x *D' <<<"$out"

out=$(cd "$AQ_TMP" && S SMB3_11 tiny "$A" 'put big.bin a1; put big.bin a2')
ok "a full volume answers STATUS_DISK_FULL" grep -q 'NT_STATUS_DISK_FULL' <<<"$out"

# NFS: the SMB-only volume is not served over NFS; the dual one is.
ok "MOUNT refuses an SMB-only volume" sh -c "! nfs-ls 'nfs://127.0.0.1/docs?version=3&nfsport=$NFS&mountport=$NFS' >/dev/null 2>&1"
ok "a dual-protocol volume is served over NFS" sh -c "nfs-ls 'nfs://127.0.0.1/sealed?version=3&nfsport=$NFS&mountport=$NFS' | grep -q x"

# Hostile peers never stop service for another client.
python3 - "$SMB" <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
def conn():
    s = socket.create_connection(("127.0.0.1", port)); return s
slow = conn(); slow.sendall(b"\x00\x00\x01")            # a slow client: 3 bytes, then silence
for payload in (b"\x00\x00\x00\x10" + b"\xfeSMB" + b"\x00" * 12,   # truncated SMB2 header
                b"\x00\xff\xff\xff" + b"A" * 64,                    # oversized frame
                b"\x05garbage garbage garbage",                     # not a frame
                b"\x00\x00\x00\x40" + bytes(range(64))):            # garbage of the right length
    s = conn(); s.sendall(payload)
    try: s.settimeout(2); s.recv(100)
    except Exception: pass
    s.close()
time.sleep(4); slow.close()
PY
HOSTILE=$!
sleep 0.5
out=$(S SMB3_11 docs "$A" 'ls')
ok "a client is served while hostile and slow peers are connected" grep -q 'f3.bin' <<<"$out"
wait $HOSTILE
ok "the agent survived" kill -0 "$AGENT_PID"
aq_finish
