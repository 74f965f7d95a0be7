#!/bin/bash
# tests/vm/guest/nfs3.sh: the NFSv3 kernel-client checks, run as root in the
# test guest by tests/e2e/test_vm_nfs3.sh (which passes /aqvm/env).
#
# Mounts the volumes the host created with the Linux NFS client and does what
# users do: large files with dd and cp, namespace operations, attributes, df,
# a 10,000-file directory, tar in and out, permissions as non-root users, root
# squash, a read-only export, special files, and a concurrent stress. Each
# check prints one TAP line ("ok N - what" / "not ok N - what", diagnostics
# as "# ..."), and the plan "1..N" comes last, so the host can tell a guest
# that stopped early. The runner and helpers are lib.sh's; the checks any
# mount passes (large files, namespace, truncate, df, big directories,
# close-to-open, stress, fio) are fileops.sh's, shared with smb.sh; the
# checks every NFS version passes are nfs_checks.sh's, shared with nfs41.sh.
#
# Locks: the mounts do not say nolock, so fcntl and flock locks go to the
# server over NLM v4. The guest's lock manager asks the portmapper on port
# 111 of the server's address for NLM; the host runs the guest with QEMU
# guestfwd rules that send SRV (10.0.2.100) ports 111 and PORT to the agent's
# NFS port, where PORTMAP answers NLM and NSM with that port. The guest's own
# rpcbind and rpc.statd run first (lockd registers with the first, the
# kernel asks the second to monitor the server). locks.sh has the checks:
# between the two mounts and against a lock the host's NFSv4.1 client holds
# on MIX (a volume served over NFSv3 and NFSv4.1).
#
# Users in the image: aqu (1000, also in group aqshare 1100), aqv (1001),
# aqw (1002, primary group 0). /aqvm/env sets PORT (the volumes' NFS and
# MOUNT port), SRV (the server's address), RW, RW_CAP (bytes), SQ, RO, MIX
# (export paths), RO_SHA (sha256 of the file ro.bin the host put on the
# read-only volume), BIG_MIB, STRESS_SECS, CHECK_SECS (a check's time bound;
# three times that for the ones that move much data, six for the
# 10,000-file directory).
set -u
. /aqvm/env
export PORT SRV RW RW_CAP SQ RO MIX RO_SHA BIG_MIB STRESS_SECS
OPTS="vers=3,port=$PORT,mountport=$PORT,tcp"
M=/mnt/rw M2=/mnt/rw2 MS=/mnt/sq MR=/mnt/ro MX=/mnt/mix
HOSTLOCK_FILE=$MX/hostlock
export OPTS M M2 MS MR MX HOSTLOCK_FILE
mkdir -p $M $M2 $MS $MR $MX
. /aqvm/lib.sh
. /aqvm/fileops.sh
. /aqvm/nfs_checks.sh
. /aqvm/locks.sh

# The guest's portmapper and status monitor, which NFSv3 locking needs.
rpcbind -w 2>/dev/null || rpcbind
rpc.statd --no-notify 2>/dev/null || echo "# rpc.statd did not start"

# --- mounts -------------------------------------------------------------------

t_mount() {
	mount -t nfs -o "$OPTS" "$SRV:$RW" $M
	eq "fstype" nfs "$(findmnt -n -o FSTYPE $M)"
	findmnt -n -o OPTIONS $M | grep -q 'vers=3'
	# A second superblock of the same export (no shared cache): what one
	# client writes another sees after close and open.
	mount -t nfs -o "$OPTS,nosharecache" "$SRV:$RW" $M2
}
export -f t_mount
check "mount -t nfs -o $OPTS $SRV:$RW (and a second, nosharecache mount)" t_mount
if ! findmnt -n $M >/dev/null; then
	echo "Bail out! the volume does not mount"
	exit 1
fi
echo "# mount options: $(findmnt -n -o OPTIONS $M)"

nfs_checks

t_mount_mix() {
	mount -t nfs -o "$OPTS" "$SRV:$MIX" $MX
	findmnt -n -o OPTIONS $MX | grep -vq nolock
}
export -f t_mount_mix
check "mount -t nfs -o $OPTS $SRV:$MIX (served over NFSv3 and NFSv4.1), with locks" t_mount_mix
lock_checks

t_umount() {
	sync
	umount $M2
	umount $M
	umount $MS
	umount $MR
	umount $MX
}
export -f t_umount
check "umount of every mount" t_umount
echo "1..$n"
echo "# $failed of $n failed"
[ $failed -eq 0 ]
