#!/bin/bash
# tests/vm/guest/smb.sh: the SMB kernel-client (CIFS) checks, run as root in
# the test guest by tests/e2e/test_vm_smb.sh (which passes /aqvm/env).
#
# Mounts the volume the host created with `mount -t cifs ... vers=3.1.1` as
# an SMB user made through the API, twice (the second with nosharesock: its
# own connection and superblock, so no shared cache), and runs the checks of
# fileops.sh that hold on SMB without the POSIX extensions (large files,
# namespace, truncate, df, 10,000-file directories, close-to-open, stress,
# fio) plus SMB's own: times at SMB's 100 ns resolution, tar of a plain tree,
# the share's name case-insensitive. Not here, because SMB without POSIX
# extensions does not carry them: modes, owners, hard and symbolic links,
# special files, silly rename, per-user permissions (every access is the
# mounting SMB user's). TAP output as nfs3.sh's (lib.sh).
#
# /aqvm/env sets PORT (the agent's SMB port), SHARE, SMBUSER, SMBPASS,
# RW_CAP (bytes), BIG_MIB, STRESS_SECS, CHECK_SECS, and NTFS_SHARE and
# NTFS_UID for the NTFS-style share (t_ntfs).
set -u
. /aqvm/env
export PORT SHARE SMBUSER SMBPASS RW_CAP BIG_MIB STRESS_SECS NTFS_SHARE NTFS_UID
OPTS="port=$PORT,vers=3.1.1,username=$SMBUSER,password=$SMBPASS"
M=/mnt/rw M2=/mnt/rw2
export OPTS M M2
mkdir -p $M $M2
. /aqvm/lib.sh
. /aqvm/fileops.sh
# A directory's link count is not SMB's to give (the client fakes 2).
export DIR_NLINK=
# SMB under TCG runs several times slower than NFS (the signing and sealing
# crypto is emulated): a 2,000-file folder keeps the suite inside CI's time
export DIR_FILES=${DIR_FILES:-2000}

t_mount() {
	mount -t cifs "//10.0.2.2/$SHARE" $M -o "$OPTS"
	eq "fstype" cifs "$(findmnt -n -o FSTYPE $M)"
	findmnt -n -o OPTIONS $M | grep -q 'vers=3.1.1'
	mount -t cifs "//10.0.2.2/$SHARE" $M2 -o "$OPTS,nosharesock"
}
t_share_case() {
	mkdir /mnt/upper
	mount -t cifs "//10.0.2.2/${SHARE^^}" /mnt/upper -o "$OPTS,nosharesock"
	echo case >$M/case
	eq "the file through the upper-case share name" case "$(cat /mnt/upper/case)"
	umount /mnt/upper
}
t_bad_password() {
	mkdir /mnt/bad
	fails_with "Permission denied" mount -t cifs "//10.0.2.2/$SHARE" /mnt/bad -o "port=$PORT,vers=3.1.1,username=$SMBUSER,password=wrong-$SMBPASS,nosharesock"
	! findmnt -n /mnt/bad >/dev/null
}
export -f t_mount t_share_case t_bad_password
check "mount -t cifs //10.0.2.2/$SHARE -o port=$PORT,vers=3.1.1,username=$SMBUSER (and a second, nosharesock mount)" t_mount
if ! findmnt -n $M >/dev/null; then
	echo "Bail out! the share does not mount"
	exit 1
fi
echo "# mount options: $(findmnt -n -o OPTIONS $M | sed 's/password=[^,]*/password=*/')"
check "a wrong password is refused (EACCES), nothing mounted" t_bad_password
check "the share's name is case-insensitive" t_share_case

check "dd of $BIG_MIB MiB, read back after dropping caches: same sha256" t_dd $LONG
check "cp SMB to SMB, local to SMB and back: same sha256" t_cp $LONG
check "O_DIRECT write and read (dd oflag=direct, iflag=direct)" t_direct $LONG
check "sparse 1 GiB file: size, holes read as zeros, one block in the middle" t_sparse
check "appends (>>) land in order" t_append

check "mkdir -p, rmdir, rmdir of a non-empty directory (ENOTEMPTY), mkdir over one (EEXIST)" t_mkdir
check "rename across directories" t_rename_across
check "rename over an existing file" t_rename_over
check "rename a directory over an empty one; over a full one (ENOTEMPTY), into itself (EINVAL), over a file (ENOTDIR)" t_rename_dirs
check "ENOENT, a 255-byte name, ENAMETOOLONG at 256, UTF-8 names" t_names

# SMB carries times in 100 ns units: the last two digits of nanoseconds drop.
t_utimes_smb() {
	echo x >$M/attr
	touch -d '2001-02-03 04:05:06.1234567 UTC' $M/attr
	eq "mtime at 100 ns" "2001-02-03 04:05:06.123456700 +0000" "$(TZ=UTC stat -c %y $M/attr)"
	touch -a -d '1999-12-31 23:59:59.5 UTC' $M/attr
	eq "atime alone" "1999-12-31 23:59:59.500000000 +0000" "$(TZ=UTC stat -c %x $M/attr)"
	eq "mtime kept when only atime is set" "2001-02-03 04:05:06.123456700 +0000" "$(TZ=UTC stat -c %y $M/attr)"
	drop_caches
	eq "times seen by the other mount" "2001-02-03 04:05:06.123456700 +0000" "$(TZ=UTC stat -c %y $M2/attr)"
	echo more >>$M/attr
	now=$(date +%s)
	mt=$(stat -c %Y $M/attr)
	[ $((now - mt)) -lt 120 ] && [ $((mt - now)) -lt 120 ] || { echo "mtime after a write is $mt, now $now"; exit 1; }
}
# A tree of regular files and directories (what SMB carries), contents compared.
t_tar_smb() {
	mkdir $M/src
	tar -C $M/src --no-same-owner --no-same-permissions -xf /aqvm/src.tar
	drop_caches
	mkdir /tmp/orig
	tar -C /tmp/orig -xf /aqvm/src.tar
	diff -r /tmp/orig $M2/src
	tar -C $M/src -cf /tmp/out.tar .
	mkdir /tmp/out
	tar -C /tmp/out -xf /tmp/out.tar
	diff -r /tmp/orig /tmp/out
	eq "files" "$(tar -tf /aqvm/src.tar | sort | wc -l)" "$(tar -tf /tmp/out.tar | sort | wc -l)"
	rm -rf /tmp/out /tmp/orig /tmp/out.tar
}
export -f t_utimes_smb t_tar_smb
check "truncate: shrink, grow with zeros, O_TRUNC" t_truncate
check "utimes at SMB's 100 ns (touch -d, touch -a), mtime after a write" t_utimes_smb
check "df: size is the volume's capacity, used grows with a 32 MiB file" t_df
check "$DIR_FILES files: created, listed (ls, ls -l, find from the other mount), removed" t_bigdir $((LONG * 2))
check "tar of a source tree in, compared from the other mount, out again: identical contents" t_tar_smb $LONG

check "close-to-open between two mounts" t_cto
check "concurrent stress: writers and readers at random offsets, verified" t_stress $((STRESS_SECS + LONG))
check "fio random 4 KiB writes, O_DIRECT, two jobs, verified (crc32c)" t_fio $LONG

# An NTFS-style volume (securityStyle NTFS) on its own mount: the data path
# as on the UNIX-style one, and the Windows security descriptor each object
# keeps, read and changed through the kernel client's system.cifs_ntsd and
# system.cifs_acl attributes (QUERY_INFO and SET_INFO of the security class;
# ntsd.py says why not getcifsacl).
t_ntfs() {
	local f=/mnt/ntfs/d/moved.bin acl
	mkdir -p /mnt/ntfs
	mount -t cifs "//10.0.2.2/$NTFS_SHARE" /mnt/ntfs -o "$OPTS,nosharesock"
	dd if=/dev/urandom of=/tmp/ntfs.bin bs=1M count=8 status=none
	cp /tmp/ntfs.bin /mnt/ntfs/new.bin
	mkdir /mnt/ntfs/d
	mv /mnt/ntfs/new.bin $f
	drop_caches
	eq "sha256 through the NTFS share after a rename" "$(sha /tmp/ntfs.bin)" "$(sha $f)"
	sha /tmp/ntfs.bin >/aqvm/ntfs.sha256
	acl=$(python3 /aqvm/ntsd.py get $f)
	echo "$acl" | sed 's/^/# acl: /'
	echo "$acl" | grep -q "^OWNER:S-1-22-1-$NTFS_UID\$" || { echo "owner is not the SMB user's SID S-1-22-1-$NTFS_UID"; exit 1; }
	echo "$acl" | grep -Eq "^ACL:(S-1-22-1-$NTFS_UID|S-1-1-0):ALLOWED/" || { echo "no ACE allows the owner (or Everyone)"; exit 1; }
	! echo "$acl" | grep -q "^ACL:S-1-5-21-4242-" || { echo "the test SID is there before it was added"; exit 1; }
	python3 /aqvm/ntsd.py add $f S-1-5-21-4242-4242-4242-1001 0x120089
	drop_caches
	acl=$(python3 /aqvm/ntsd.py get $f)
	echo "$acl" | grep -q "^ACL:S-1-5-21-4242-4242-4242-1001:ALLOWED/0x0/0x120089\$" ||
		{ echo "the added ACE is not read back: $acl"; exit 1; }
	python3 /aqvm/ntsd.py get $f >/aqvm/ntfs.acl
	eq "the file still reads after its descriptor changed" "$(sha /tmp/ntfs.bin)" "$(sha $f)"
	cp $f /mnt/ntfs/d/copy
	rm /mnt/ntfs/d/copy
	[ ! -e /mnt/ntfs/d/copy ] || { echo "d/copy is still there after rm"; exit 1; }
	umount /mnt/ntfs
}
export -f t_ntfs
if [ -n "${NTFS_SHARE:-}" ]; then
	check "an NTFS-style share: 8 MiB copied in, renamed, same sha256; its descriptor shows the SMB user's SID as owner, allowed (itself or as Everyone); an ACE added reads back; cp and rm" t_ntfs $LONG
fi

t_umount() {
	sync
	umount $M2
	umount $M
}
export -f t_umount
check "umount of every mount" t_umount
echo "1..$n"
echo "# $failed of $n failed"
[ $failed -eq 0 ]
