#!/usr/bin/env bash
# test_vm_nfs41.sh: the Linux kernel NFSv4.1 client against aquifer-agent (issue 19).
#
# As test_vm_nfs3.sh (tests/vm/nfs_host.sh does the host side both share):
# aquiferd and one agent on loopback, three volumes with protocols ["NFSV4"]
# (read-write, root-squashed through the CLI, read-only); the test guest
# (tests/vm) mounts them with `mount -t nfs -o vers=4.1,port=P` from 10.0.2.2
# (the agent's NFS port, the only one v4 needs) and runs
# tests/vm/guest/nfs41.sh: the checks every NFS version passes, byte-range
# locks between two mounts, and an nconnect=8 mount. Meanwhile the host
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

# --- aquiferd, one agent, a pool, three NFSv4.1 volumes -----------------------
vm_nfs_start
vm_nfs_volumes vm41 NFSV4

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
EOF2
echo 'bash /aqvm/nfs41.sh' >"$S/cmd"
echo "from the host" >"$RW_DIR/hostlock"

# The host's client: when the guest asks (hostlock.want), lock the whole of
# /vm41/hostlock, say so (hostlock.held), keep it until the guest has tried
# (hostlock.done), then unlock and say so (hostlock.released).
(
	for _ in $(seq 36000); do [ -e "$S/hostlock.want" ] && break; sleep 0.1; done
	[ -e "$S/hostlock.want" ] || exit 0
	"$LOCK_TOOL" "$PORT" /vm41/hostlock "$S/hostlock.held" "$S/hostlock.done" >"$AQ_TMP/lock_tool.out" 2>&1
	echo "exit $?" >>"$AQ_TMP/lock_tool.out"
	: >"$S/hostlock.released"
) &
HOLDER_PID=$!

vm_nfs_boot "$S"
ok "the host's client held its lock while the guest tried" grep -q '^exit 0$' "$AQ_TMP/lock_tool.out"
sed 's/^/  lock tool: /' "$AQ_TMP/lock_tool.out" 2>/dev/null | head -n 10
kill "$HOLDER_PID" 2>/dev/null
wait "$HOLDER_PID" 2>/dev/null
HOLDER_PID=
vm_nfs_host_checks "$S"
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
