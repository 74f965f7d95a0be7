#!/usr/bin/env bash
# test_vm_smb.sh: the Linux kernel SMB client (CIFS) against aquifer-agent (issue 25).
#
# aquiferd and one agent with --smb-listen on loopback; a pool, an SMB volume
# and an SMB user made through the API; then the test guest (tests/vm)
# mounts the share with `mount -t cifs //10.0.2.2/SHARE -o port=P,vers=3.1.1,
# username=U,password=W` (QEMU user networking: the host's 127.0.0.1) and
# runs tests/vm/guest/smb.sh, one TAP line each, counted here as
# test_vm_nfs3.sh counts them; the host checks what the guest cannot see:
# the bytes and the owner (the SMB user's uid) on the shelf, the guest's
# kernel log, the agent still serving.
#
# AQ_VM=0 skips (exit 77; tests/run_all.sh sets it for the ASan build), AQ_VM=1
# makes missing tools a failure instead of a skip (CI). AQ_VM_BIG_MIB (64),
# AQ_VM_STRESS_SECS (20) size the large-file and stress checks.
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"

vm_preflight
trap 'vm_cleanup; aq_cleanup' EXIT

t_start=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
t_image=$(($(date +%s) - t_start))
echo "# vm: image ready in ${t_image}s ($VM_ROOTFS)"

# --- aquiferd, one agent serving SMB, a pool, a volume, a user ----------------
aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=vmloc" '{}'
aq_req POST "/v1/projects?projectId=vmproj" '{}'
P=/v1/projects/vmproj/locations/vmloc
SMB=$(aq_pick_port)
AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
aq_agent_for vmloc || exit 1
SHELF=$AQ_TMP/shelf-vmloc
aq_req GET /v1/nodes/node-vmloc
if [ -z "$(printf '%s' "$BODY" | jq -r '.smbAddress // empty')" ]; then
	# as test_smb_e2e.sh: until the agent reports its smbAddress itself
	aq_req_as "$(jq -r .nodeToken "$AQ_TMP/srv/node-vmloc/state/credentials.json")" POST /v1/agent/status \
		"{\"appliedGeneration\":0,\"smbAddress\":\"127.0.0.1:$SMB\"}"
fi
aq_req POST "$P/storagePools?storagePoolId=vmpool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"10240","qosType":"MANUAL"}'
expect_jq .done true "pool vmpool created"
CAP_GIB=100
aq_req POST "$P/smbUsers?smbUserId=vmuser" '{"password":"Vm-Secret-1","uid":"1234","gid":"4321"}'
expect_status 200 "SMB user vmuser created"
before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=vmsmb" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"SMB\"],\"shareName\":\"vmsmb\",\"throughputMibps\":300,\"unixPermissions\":\"0777\"}"
expect_jq .response.state READY "SMB volume vmsmb READY"
expect_jq '.response.mountOptions[] | select(.protocol == "SMB") | .port' "$SMB" "its SMB mount entry has the agent's SMB port"
VOL_DIR=$SHELF/volumes/$(comm -13 <(printf '%s\n' "$before") <(ls "$SHELF/volumes" 2>/dev/null) | head -n1)
before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=vmntfs" '{"storagePool":"vmpool","capacityGib":"100","protocols":["SMB"],
	"shareName":"vmntfs","throughputMibps":100,"unixPermissions":"0777","securityStyle":"NTFS"}'
expect_jq .response.state READY "NTFS-style SMB volume vmntfs READY"
NTFS_DIR=$SHELF/volumes/$(comm -13 <(printf '%s\n' "$before") <(ls "$SHELF/volumes" 2>/dev/null) | head -n1)
INTENT=$AQ_TMP/srv/node-vmloc/state/intent.json
for _ in $(seq 100); do
	jq -e '[.smbUsers[].name] | index("vmuser")' "$INTENT" >/dev/null 2>&1 && break
	sleep 0.1
done
ok "the node got the SMB user" jq -e '[.smbUsers[].name] | index("vmuser")' "$INTENT"

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
mkdir -p "$S"
cp "$AQ_SRC"/tests/vm/guest/{lib.sh,fileops.sh,smb.sh,stress.py,ntsd.py} "$S/"
# A source tree of regular files and directories (SMB without POSIX extensions
# carries no symlinks, hard links, modes or owners).
T=$AQ_TMP/tree
mkdir -p "$T/extra/empty"
for d in agent api cli db server man; do
	[ -d "$AQ_SRC/$d" ] && cp -r "$AQ_SRC/$d" "$T/"
done
: >"$T/extra/empty-file"
tar --format=posix -C "$T" -cf "$S/src.tar" .
cat >"$S/env" <<EOF
PORT=$SMB
SHARE=vmsmb
SMBUSER=vmuser
SMBPASS=Vm-Secret-1
RW_CAP=$((CAP_GIB << 30))
BIG_MIB=${AQ_VM_BIG_MIB:-64}
STRESS_SECS=${AQ_VM_STRESS_SECS:-20}
CHECK_SECS=${AQ_VM_CHECK_SECS:-180}
NTFS_SHARE=vmntfs
NTFS_UID=1234
EOF
echo 'bash /aqvm/smb.sh' >"$S/cmd"
t_boot=$(date +%s)
vm_run "$S" "${AQ_VM_TIMEOUT:-2400}"
rc=$?
t_guest=$(($(date +%s) - t_boot))
echo "# vm: guest ran ${t_guest}s under $VM_ACCEL (up in ${VM_BOOT_SECS:-?}s), exit $rc"
expect_eq "the guest ran to its end (vm_run status 0 or 1)" ok "$([ $rc -le 1 ] && echo ok || echo "status $rc")"
vm_guest_results "$S"

# What only the host sees.
big=$(sed -n 's/^# big.sha256 //p' "$S/big.sha256" 2>/dev/null)
if [ -n "$big" ] && [ -f "$VOL_DIR/big" ]; then
	expect_eq "the large file on the shelf has the sha256 the guest wrote" "$big" "$(sha256sum <"$VOL_DIR/big" | cut -c1-64)"
	expect_eq "the files the guest made are the SMB user's on the shelf" 1234:4321 "$(stat -c %u:%g "$VOL_DIR/big")"
else
	aq_failed "the guest's large file reached the shelf" "sha256 '${big}', $VOL_DIR/big"
fi
# The NTFS share: the guest read its ACE back, and the file's
# descriptor on the shelf holds it (S-1-5-21-4242-4242-4242-1001 in binary:
# revision 1, 5 sub-authorities, authority 5, then 21, 4242 (0x1092) three
# times and 1001 (0x3e9), little-endian).
ok "the guest read the added ACE back" grep -q "^ACL:S-1-5-21-4242-4242-4242-1001:ALLOWED/0x0/0x120089$" "$S/ntfs.acl"
ok "the NTFS share's renamed file is on the shelf with the guest's bytes" \
	test "$(sha256sum <"$NTFS_DIR/d/moved.bin" | cut -c1-64)" = "$(awk '{ print $1 }' "$S/ntfs.sha256" 2>/dev/null)"
ok "... and its stored descriptor (trusted.aquifer.sd) holds the added SID" python3 -c '
import os, sys
v = os.getxattr(sys.argv[1], "trusted.aquifer.sd")
sid = bytes.fromhex("010500000000000515000000" + "92100000" * 3 + "e9030000")
sys.exit(0 if sid in v else 1)' "$NTFS_DIR/d/moved.bin"
# The CIFS client's complaints about the server: reconnects, bad answers,
# signing or decryption failures, hung requests; but for the refused logon
# of the wrong-password check (EACCES, -13).
vm_guest_dmesg "$S" 'CIFS: VFS|CIFS: .*(error|fail|reconnect)|Status code returned|bad (smb|SMB|response)|signature|Cancelling wait|has not responded' \
	'STATUS_LOGON_FAILURE|Send error in SessSetup = -13|cifs_mount failed w/return code = -13'
vm_agent_checks
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
