#!/usr/bin/env bash
# test_vm_nfs41.sh: the Linux kernel NFSv4.1 client against aquifer-agent (issue 19).
#
# As test_vm_nfs3.sh (tests/vm/nfs_host.sh does the host side both share):
# aquiferd and one agent on loopback, three volumes with protocols ["NFSV4"]
# (read-write, root-squashed through the CLI, read-only); the test guest
# (tests/vm) mounts them with `mount -t nfs -o vers=4.1,port=P` from 10.0.2.2
# (the agent's NFS port, the only one v4 needs) and runs
# tests/vm/guest/nfs41.sh: the checks every NFS version passes, byte-range
# locks between two mounts and against SMB locks on a volume that speaks
# both (the guest's CIFS client), and an nconnect=8 mount. Meanwhile the host
# plays a second NFSv4.1 client (tests/agent/nfs4/nfs4_lock_tool, on the
# suite's own client) that holds a lock on one file when the guest asks, so
# the guest's lock on it must fail. Every guest TAP line counts here; the
# host checks the shelf, the guest's kernel log, the agent still serving.
#
# AQ_VM=0 skips, AQ_VM=1 makes missing tools a failure (vm_preflight);
# AQ_VM_BIG_MIB (64), AQ_VM_STRESS_SECS (20) size the large-file and stress
# checks; the image cache and the accelerator are tests/vm/lib.sh's.
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
. "$AQ_SRC/tests/vm/nfs_host.sh"

vm_preflight
LOCK_TOOL=$AQ_BUILDDIR/tests/agent/nfs4/nfs4_lock_tool
HOLDER_PID=
trap '[ -n "$HOLDER_PID" ] && kill "$HOLDER_PID" 2>/dev/null; vm_cleanup; aq_cleanup' EXIT

t_start=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
t_image=$(($(date +%s) - t_start))
echo "# vm: image ready in ${t_image}s ($VM_ROOTFS)"

# --- aquiferd, one agent (with SMB), a pool, three NFSv4.1 volumes -----------
SMB=$(aq_pick_port)
AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
vm_nfs_start
vm_nfs_volumes vm41 NFSV4

# A volume on both NFSv4.1 and SMB, and an SMB user: a v4.1 lock and an SMB
# byte-range lock on the same range exclude each other (the store's one
# lock table).
aq_req GET /v1/nodes/node-vmloc
if [ -z "$(printf '%s' "$BODY" | jq -r '.smbAddress // empty')" ]; then
	aq_req_as "$(jq -r .nodeToken "$AQ_TMP/srv/node-vmloc/state/credentials.json")" POST /v1/agent/status \
		"{\"appliedGeneration\":0,\"smbAddress\":\"127.0.0.1:$SMB\"}"
fi
aq_req POST "$P/smbUsers?smbUserId=vmuser" '{"password":"Vm-Secret-1","uid":"1234","gid":"4321"}'
expect_status 200 "SMB user vmuser created"
aq_mutate POST "$P/volumes?volumeId=vm41mix" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"NFSV4\",\"SMB\"],\"shareName\":\"vm41mix\",\"throughputMibps\":300,\"unixPermissions\":\"0777\",
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
expect_jq .response.state READY "volume vm41mix (NFSV4 and SMB) READY"
INTENT=$AQ_TMP/srv/node-vmloc/state/intent.json
for _ in $(seq 100); do
	jq -e '[.smbUsers[].name] | index("vmuser")' "$INTENT" >/dev/null 2>&1 && break
	sleep 0.1
done

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
vm_nfs_share "$S" nfs41.sh
cat >"$S/env" <<EOF2
PORT=$PORT
RW=/vm41
RW_CAP=$((CAP_GIB << 30))
SQ=/vm41sq
RO=/vm41ro
RO_SHA=$RO_SHA
BIG_MIB=${AQ_VM_BIG_MIB:-64}
STRESS_SECS=${AQ_VM_STRESS_SECS:-20}
CHECK_SECS=${AQ_VM_CHECK_SECS:-180}
HOSTLOCK=hostlock
MIX=/vm41mix
SMBPORT=$SMB
SMBUSER=vmuser
SMBPASS=Vm-Secret-1
EOF2
echo 'bash /aqvm/nfs41.sh' >"$S/cmd"
echo "from the host" >"$RW_DIR/hostlock"

# The host's NFSv4.1 client holds a lock on /vm41/hostlock while the guest tries.
vm_nfs_hostlock_start "$S" /vm41/hostlock

vm_nfs_boot "$S"
vm_nfs_hostlock_end
vm_nfs_host_checks "$S"
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
