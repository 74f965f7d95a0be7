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
# Users in the image: aqu (1000, also in group aqshare 1100), aqv (1001),
# aqw (1002, primary group 0). /aqvm/env sets PORT (the volumes' NFS and
# MOUNT port), RW, RW_CAP (bytes), SQ, RO (export paths), RO_SHA (sha256 of
# the file ro.bin the host put on the read-only volume), BIG_MIB,
# STRESS_SECS, CHECK_SECS (a check's time bound; three times that for the
# ones that move much data, six for the 10,000-file directory).
set -u
. /aqvm/env
export PORT RW RW_CAP SQ RO RO_SHA BIG_MIB STRESS_SECS
OPTS="vers=3,nolock,port=$PORT,mountport=$PORT,tcp"
M=/mnt/rw M2=/mnt/rw2 MS=/mnt/sq MR=/mnt/ro
export OPTS M M2 MS MR
mkdir -p $M $M2 $MS $MR
. /aqvm/lib.sh
. /aqvm/fileops.sh
. /aqvm/nfs_checks.sh

# --- mounts -------------------------------------------------------------------

t_mount() {
	mount -t nfs -o "$OPTS" "10.0.2.2:$RW" $M
	eq "fstype" nfs "$(findmnt -n -o FSTYPE $M)"
	findmnt -n -o OPTIONS $M | grep -q 'vers=3'
	# A second superblock of the same export (no shared cache): what one
	# client writes another sees after close and open.
	mount -t nfs -o "$OPTS,nosharecache" "10.0.2.2:$RW" $M2
}
export -f t_mount
check "mount -t nfs -o $OPTS 10.0.2.2:$RW (and a second, nosharecache mount)" t_mount
if ! findmnt -n $M >/dev/null; then
	echo "Bail out! the volume does not mount"
	exit 1
fi
echo "# mount options: $(findmnt -n -o OPTIONS $M)"

nfs_checks

t_umount() {
	sync
	umount $M2
	umount $M
	umount $MS
	umount $MR
}
export -f t_umount
check "umount of every mount" t_umount
echo "1..$n"
echo "# $failed of $n failed"
[ $failed -eq 0 ]
