#!/usr/bin/env bash
# test_vm_nfs3.sh: the Linux kernel NFSv3 client against aquifer-agent (issue 25).
#
# aquiferd and one agent on loopback; a pool and three volumes made through
# the API and the CLI (read-write, root-squashed, read-only); then the test
# guest (tests/vm) mounts them with `mount -t nfs -o vers=3,nolock,...` from
# 10.0.2.2 (QEMU user networking: the host's 127.0.0.1) and runs the checks
# of tests/vm/guest/nfs3.sh, one TAP line each. Here every guest line counts
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
trap 'vm_cleanup; aq_cleanup' EXIT

t_start=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
t_image=$(($(date +%s) - t_start))
echo "# vm: image ready in ${t_image}s ($VM_ROOTFS)"

# --- aquiferd, one agent, a pool, three volumes -------------------------------
vm_nfs_start
vm_nfs_volumes vm3 NFSV3

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
vm_nfs_share "$S" nfs3.sh
cat >"$S/env" <<EOF
PORT=$PORT
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
vm_nfs_boot "$S"
vm_nfs_host_checks "$S"
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
