#!/usr/bin/env bash
# test_vm_nfs3.sh: the Linux kernel NFSv3 client against aquifer-agent (issue 25).
#
# aquiferd and one agent on loopback; a pool and three volumes made through
# the API and the CLI (read-write, root-squashed, read-only), and a fourth
# served over NFSv3 and NFSv4.1 (MIX); then the test guest (tests/vm) mounts
# them with `mount -t nfs -o vers=3,port=P,mountport=P,tcp` (locks on: no
# nolock) from 10.0.2.100 and runs the checks of tests/vm/guest/nfs3.sh, one
# TAP line each. QEMU user networking's guestfwd rules send the guest's
# connections to 10.0.2.100 ports 111 and P to the agent's NFS port on the
# host's 127.0.0.1 (tests/vm/relay.py, once per connection): the guest's
# lock manager finds NLM through the portmapper on 111, as it would on a
# node that serves it there. The host's NFSv4.1 client
# (tests/agent/nfs4/nfs4_lock_tool) holds a lock on MIX while the guest's
# NLM lock is refused. Here every guest line counts
# as a pass or a failure, a check the guest never reported counts as failed,
# and the host checks what the guest cannot see: the bytes on the shelf, the
# squashed owner on disk, the guest's kernel log, the agent still serving.
#
# AQ_VM=0 skips (exit 77; tests/run_all.sh sets it for the ASan build), AQ_VM=1
# makes missing tools a failure instead of a skip (CI). AQ_VM_BIG_MIB (64),
# AQ_VM_STRESS_SECS (20) size the large-file and stress checks; the image
# cache and the accelerator are tests/vm/lib.sh's (see tests/vm/README.md).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
. "$AQ_SRC/tests/vm/nfs_host.sh"

vm_preflight
LOCK_TOOL=$AQ_BUILDDIR/tests/agent/nfs4/nfs4_lock_tool
HOLDER_PID=
trap '[ -n "$HOLDER_PID" ] && kill "$HOLDER_PID" 2>/dev/null; vm_cleanup; aq_cleanup' EXIT
[ -x "$LOCK_TOOL" ] || { aq_failed "tests/agent/nfs4/nfs4_lock_tool is built"; aq_finish; }
[ -x /usr/bin/python3 ] || { aq_failed "/usr/bin/python3 (guestfwd's relay.py) is installed"; aq_finish; }

t_start=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
t_image=$(($(date +%s) - t_start))
echo "# vm: image ready in ${t_image}s ($VM_ROOTFS)"

# --- aquiferd, one agent, a pool, four volumes --------------------------------
vm_nfs_start
vm_nfs_volumes vm3 NFSV3
before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=vm3mix" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"NFSV3\",\"NFSV4\"],\"shareName\":\"vm3mix\",\"throughputMibps\":300,\"unixPermissions\":\"0777\",
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\",\"nfsv3\":true,\"nfsv4\":true}]}}"
expect_jq .response.state READY "volume vm3mix (NFSV3 and NFSV4) READY"
MIX_DIR=$SHELF/volumes/$(vm_nfs_new_dir "$before")
echo "from the host" >"$MIX_DIR/hostlock"

# The guest's lock manager asks 10.0.2.100:111 (the portmapper of the address
# it mounted) for NLM: both that port and the NFS port go to the agent.
RELAY="/usr/bin/python3 $AQ_SRC/tests/vm/relay.py 127.0.0.1 $PORT"
VM_NET_ARGS=(-netdev "user,id=n0,guestfwd=tcp:10.0.2.100:111-cmd:$RELAY,guestfwd=tcp:10.0.2.100:$PORT-cmd:$RELAY"
	-device virtio-net-pci,netdev=n0,romfile=)

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
vm_nfs_share "$S" nfs3.sh
cat >"$S/env" <<EOF
PORT=$PORT
SRV=10.0.2.100
MIX=/vm3mix
RW=/vm3
RW_CAP=$((CAP_GIB << 30))
SQ=/vm3sq
RO=/vm3ro
RO_SHA=$RO_SHA
BIG_MIB=${AQ_VM_BIG_MIB:-64}
STRESS_SECS=${AQ_VM_STRESS_SECS:-20}
CHECK_SECS=${AQ_VM_CHECK_SECS:-180}
EOF
echo 'bash /aqvm/nfs3.sh' >"$S/cmd"

# The host's NFSv4.1 client holds a lock on /vm3mix/hostlock while the guest tries.
vm_nfs_hostlock_start "$S" /vm3mix/hostlock

vm_nfs_boot "$S"
vm_nfs_hostlock_end
# The guest's locks went to the agent's NLM: it recorded the guest's lock
# manager (its caller name in hex, seen from 127.0.0.1) for SM_NOTIFY.
ok "the agent recorded the guest's lock manager as an NLM host (state/nlm-hosts)" \
	grep -q '^host 127\.0\.0\.1 [0-9a-f][0-9a-f]*$' "$AQ_TMP/srv/node-vmloc/state/nlm-hosts"
vm_nfs_host_checks "$S"
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
