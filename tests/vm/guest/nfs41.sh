#!/bin/bash
# tests/vm/guest/nfs41.sh: the NFSv4.1 kernel-client checks, run as root in
# the test guest by tests/e2e/test_vm_nfs41.sh (which passes /aqvm/env).
#
# Mounts the volumes with `mount -t nfs -o vers=4.1,port=P` (one port: no
# MOUNT, no portmapper, no lockd) and runs the checks every NFS version
# passes (nfs_checks.sh, with fileops.sh's), then what v4.1 adds: the
# session's byte-range locks (fcntl through python3's fcntl.lockf, and flock,
# which the Linux v4 client sends as whole-file locks) excluding between two
# mounts, against SMB byte-range locks (the CIFS client) on a volume that
# speaks both, and between the guest and a second client on the host
# (LOCKHOLD: the host holds a lock on that file of the volume while the
# guest tries), and an nconnect=8 mount with parallel writers. TAP lines and
# the plan last, as nfs3.sh.
#
# /aqvm/env sets PORT (the agent's NFS port), RW, RW_CAP (bytes), SQ, RO
# (export paths under the pseudo root), RO_SHA, BIG_MIB, STRESS_SECS,
# CHECK_SECS, and HOSTLOCK (a file on RW the host's client locks on demand:
# the guest creates /aqvm/hostlock.want, the host answers
# /aqvm/hostlock.held and drops the lock at /aqvm/hostlock.done), MIX (an
# export of a volume also served over SMB on SMBPORT to SMBUSER/SMBPASS).
set -u
. /aqvm/env
export PORT RW RW_CAP SQ RO RO_SHA BIG_MIB STRESS_SECS HOSTLOCK MIX SMBPORT SMBUSER SMBPASS
OPTS="vers=4.1,port=$PORT,tcp"
M=/mnt/rw M2=/mnt/rw2 MS=/mnt/sq MR=/mnt/ro MN=/mnt/nconnect
export OPTS M M2 MS MR MN
mkdir -p $M $M2 $MS $MR $MN
. /aqvm/lib.sh
. /aqvm/fileops.sh
. /aqvm/nfs_checks.sh

# --- mounts -------------------------------------------------------------------

t_mount() {
	mount -t nfs -o "$OPTS" "10.0.2.2:$RW" $M
	eq "fstype" nfs4 "$(findmnt -n -o FSTYPE $M)"
	findmnt -n -o OPTIONS $M | grep -q 'vers=4.1' || { findmnt -n -o OPTIONS $M; exit 1; }
	mount -t nfs -o "$OPTS,nosharecache" "10.0.2.2:$RW" $M2
}
t_pseudo() {
	mkdir -p /mnt/root
	mount -t nfs -o "$OPTS" 10.0.2.2:/ /mnt/root
	ls /mnt/root >/tmp/root.ls
	umount /mnt/root
	grep -qx "${RW#/}" /tmp/root.ls || { echo "the pseudo root lists: $(paste -sd' ' /tmp/root.ls)"; exit 1; }
	grep -qx "${RO#/}" /tmp/root.ls
}
export -f t_mount t_pseudo
check "mount -t nfs -o $OPTS 10.0.2.2:$RW (and a second, nosharecache mount)" t_mount
if ! findmnt -n $M >/dev/null; then
	echo "Bail out! the volume does not mount"
	exit 1
fi
echo "# mount options: $(findmnt -n -o OPTIONS $M)"
check "the pseudo root (10.0.2.2:/) lists the exports" t_pseudo

nfs_checks

# --- locks --------------------------------------------------------------------

# locks.sh (shared with nfs3.sh): fcntl and flock between the two mounts, a
# blocked lock, and against the lock the host's client holds on RW/HOSTLOCK.
HOSTLOCK_FILE=$M/$HOSTLOCK
export HOSTLOCK_FILE
. /aqvm/locks.sh

# The volume MIX over NFSv4.1 and over SMB (CIFS, byte-range locks sent
# to the server): each protocol's lock refuses the other's on the same range.
t_lock_smb() {
	mkdir -p /mnt/mix /mnt/smb
	mount -t nfs -o "$OPTS" "10.0.2.2:$MIX" /mnt/mix
	mount -t cifs "//10.0.2.2/${MIX#/}" /mnt/smb -o "port=$SMBPORT,vers=3.1.1,username=$SMBUSER,password=$SMBPASS"
	echo shared >/mnt/smb/both
	hold /mnt/smb/both lockf 0 100
	got=$(trylock /mnt/mix/both lockf 50 10)
	eq "a v4.1 lock against an SMB lock on the range" EAGAIN "$got"
	eq "a v4.1 lock after the SMB lock's range" locked "$(trylock /mnt/mix/both lockf 100 10)"
	stop_hold
	eq "the v4.1 lock once the SMB lock went" locked "$(trylock /mnt/mix/both lockf 50 10)"
	hold /mnt/mix/both lockf 0 100
	got=$(trylock /mnt/smb/both lockf 50 10 | sed 's/EACCES/EAGAIN/')
	eq "an SMB lock against a v4.1 lock on the range" EAGAIN "$got"
	stop_hold
	eq "the SMB lock once the v4.1 lock went" locked "$(trylock /mnt/smb/both lockf 50 10)"
	umount /mnt/smb
	umount /mnt/mix
}
export -f t_lock_smb
lock_checks
check "mixed protocols: a v4.1 lock and an SMB (CIFS) byte-range lock on one range exclude each other" t_lock_smb

t_umount() {
	sync
	umount $M2
	umount $M
	umount $MS
	umount $MR
}
# nconnect=8 on its own: connections belong to the client of a server
# address, so no other mount of 10.0.2.2 is up meanwhile.
t_nconnect() {
	mount -t nfs -o "$OPTS,nconnect=8" "10.0.2.2:$RW" $MN
	findmnt -n -o OPTIONS $MN | grep -q 'nconnect=8' || { findmnt -n -o OPTIONS $MN; exit 1; }
	mkdir -p $MN/par
	for i in $(seq 8); do
		dd if=/tmp/big of=$MN/par/f$i bs=1M count=16 skip=$i conv=fsync status=none &
	done
	wait
	drop_caches
	for i in $(seq 8); do
		cmp $MN/par/f$i <(dd if=/tmp/big bs=1M count=16 skip=$i status=none) &
	done
	fail=0
	for j in $(jobs -p); do wait "$j" || fail=1; done
	[ $fail = 0 ] || { echo "a parallel file differs"; exit 1; }
	conns=$(ss -Htn state established "dst 10.0.2.2:$PORT" | wc -l)
	echo "# nconnect: $conns connections"
	[ "$conns" -ge 2 ] || { echo "$conns connection(s) to the server with nconnect=8"; exit 1; }
	rm -rf $MN/par
	umount $MN
}
export -f t_umount t_nconnect
check "umount of every mount" t_umount
check "nconnect=8: 8 parallel writers of 16 MiB, read back, over several connections" t_nconnect $LONG
echo "1..$n"
echo "# $failed of $n failed"
[ $failed -eq 0 ]
