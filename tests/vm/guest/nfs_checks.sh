#!/bin/bash
# tests/vm/guest/nfs_checks.sh: the checks every NFS version's kernel-client
# suite runs (nfs3.sh, nfs41.sh source it after lib.sh and fileops.sh, and
# call nfs_checks once their mounts M and M2 are up): large files, the
# namespace, attributes, df, a 10,000-file directory, tar of a source tree,
# permissions as non-root users, special files, root squash (SQ mounted on
# MS), a read-only export (RO on MR), close-to-open and a stress. Mounts use
# mount -t nfs -o "$OPTS" ${SRV:-10.0.2.2}:EXPORT, so each suite's OPTS (and SRV) decide the
# version. Users in the image: aqu (1000, also in group aqshare 1100), aqv
# (1001), aqw (1002, primary group 0).

# --- large files ----------------------------------------------------------------

t_silly() {
	echo "still here" >$M/silly
	exec 3<$M/silly
	rm $M/silly
	eq "an unlinked open file still reads" "still here" "$(cat <&3)"
	ls -A $M | grep -q '^\.nfs' || { echo "no .nfs* silly-rename file while open"; exit 1; }
	exec 3<&-
	for _ in $(seq 50); do ls -A $M | grep -q '^\.nfs' || break; sleep 0.1; done
	if ls -A $M | grep -q '^\.nfs'; then echo "the .nfs* file stays after close"; exit 1; fi
	eq "the name is gone" "" "$(ls $M | grep -x silly || true)"
}
export -f t_silly

# --- namespace ------------------------------------------------------------------

t_link() {
	echo linked >$M/ns/l1
	ln $M/ns/l1 $M/ns/l2
	eq "nlink" 2 "$(stat -c %h $M/ns/l1)"
	eq "same inode" "$(stat -c %i $M/ns/l1)" "$(stat -c %i $M/ns/l2)"
	echo more >>$M/ns/l2
	eq "a write through one name shows through the other" "linked more" "$(paste -sd' ' $M/ns/l1)"
	rm $M/ns/l1
	eq "nlink after removing one name" 1 "$(stat -c %h $M/ns/l2)"
	fails_with "File exists" ln $M/ns/l2 $M/ns/y/target
}
t_symlink() {
	ln -s l2 $M/ns/s1
	eq readlink l2 "$(readlink $M/ns/s1)"
	eq "type" "symbolic link" "$(stat -c %F $M/ns/s1)"
	eq "followed" "linked more" "$(paste -sd' ' $M/ns/s1)"
	ln -s ../ns/d2 $M/ns/sdir
	eq "a symlink to a directory" file "$(ls $M/ns/sdir/sub)"
	ln -s does-not-exist $M/ns/dangling
	fails_with "No such file or directory" cat $M/ns/dangling
	long=$(printf 'p%.0s' $(seq 1000))
	ln -s "$long" $M/ns/slong
	eq "a 1000-byte target" "$long" "$(readlink $M/ns/slong)"
	drop_caches
	eq "readlink after dropping caches" l2 "$(readlink $M2/ns/s1)"
}
export -f t_link t_symlink

# --- attributes -----------------------------------------------------------------

t_chmod() {
	echo x >$M/attr
	chmod 0640 $M/attr
	eq "mode" 640 "$(mode $M/attr)"
	chmod 1777 $M/ns
	eq "sticky directory mode" 1777 "$(mode $M/ns)"
	drop_caches
	eq "mode seen by the other mount" 640 "$(mode $M2/attr)"
	chmod 0755 $M/ns
}
t_chown() {
	chown 1000:1100 $M/attr
	eq "owner" 1000:1100 "$(stat -c %u:%g $M/attr)"
	chgrp 1001 $M/attr
	eq "group" 1000:1001 "$(stat -c %u:%g $M/attr)"
	chown -h 1001 $M/ns/s1
	eq "a symlink's owner (chown -h)" 1001 "$(stat -c %u $M/ns/s1)"
	eq "its target's owner unchanged" 0 "$(stat -c %u $M/ns/l2)"
}
t_utimes() {
	touch -d '2001-02-03 04:05:06.123456789 UTC' $M/attr
	eq "mtime with nanoseconds" "2001-02-03 04:05:06.123456789 +0000" "$(TZ=UTC stat -c %y $M/attr)"
	touch -a -d '1999-12-31 23:59:59.5 UTC' $M/attr
	eq "atime alone" "1999-12-31 23:59:59.500000000 +0000" "$(TZ=UTC stat -c %x $M/attr)"
	eq "mtime kept when only atime is set" "2001-02-03 04:05:06.123456789 +0000" "$(TZ=UTC stat -c %y $M/attr)"
	drop_caches
	eq "times seen by the other mount" "2001-02-03 04:05:06.123456789 +0000" "$(TZ=UTC stat -c %y $M2/attr)"
	before=$(stat -c %Z $M/attr)
	echo more >>$M/attr
	now=$(date +%s)
	mt=$(stat -c %Y $M/attr)
	[ $((now - mt)) -lt 120 ] && [ $((mt - now)) -lt 120 ] || { echo "mtime after a write is $mt, now $now"; exit 1; }
	[ "$(stat -c %Z $M/attr)" -ge "$before" ]
}
export -f t_chmod t_chown t_utimes

# --- tar of a source tree in and out --------------------------------------------

t_tar() {
	mkdir $M/src
	tar -C $M/src -xpf /aqvm/src.tar
	tar -C $M/src -df /aqvm/src.tar
	drop_caches
	tar -C $M2/src -df /aqvm/src.tar
	tar -C $M/src -cf /tmp/out.tar .
	mkdir /tmp/out /tmp/orig
	tar -C /tmp/out -xpf /tmp/out.tar
	tar -C /tmp/orig -xpf /aqvm/src.tar
	diff -r --no-dereference /tmp/orig /tmp/out
	tar -C /tmp/orig -df /tmp/out.tar
	eq "files" "$(tar -tf /aqvm/src.tar | wc -l)" "$(tar -tf /tmp/out.tar | wc -l)"
	rm -rf /tmp/out /tmp/orig /tmp/out.tar
}
export -f t_tar

# --- permissions as non-root users ----------------------------------------------

t_perm_setup() {
	mkdir -p $M/perm/closed $M/perm/pub
	chmod 0755 $M/perm/closed
	chmod 1777 $M/perm/pub
	echo secret >$M/perm/secret
	chmod 0600 $M/perm/secret
	echo shared >$M/perm/group
	chown 0:1100 $M/perm/group
	chmod 0640 $M/perm/group
}
t_perm_create() {
	fails_with "Permission denied" as aqu touch $M/perm/closed/f
	as aqu sh -c "echo mine >$M/perm/pub/u"
	eq "owner of a file aqu created" 1000:1000 "$(stat -c %u:%g $M/perm/pub/u)"
	eq "aqv reads a 0644 file" mine "$(as aqv cat $M/perm/pub/u)"
	fails_with "Permission denied" as aqv sh -c "echo theirs >>$M/perm/pub/u"
}
t_perm_read() {
	fails_with "Permission denied" as aqu cat $M/perm/secret
	eq "root reads it" secret "$(cat $M/perm/secret)"
	eq "a group member reads a 0640 file" shared "$(as aqu cat $M/perm/group)"
	fails_with "Permission denied" as aqv cat $M/perm/group
}
t_perm_owner() {
	fails_with "Operation not permitted" as aqu chmod 0666 $M/perm/secret
	fails_with "Operation not permitted" as aqu chown 1001 $M/perm/pub/u
	as aqu chgrp aqshare $M/perm/pub/u
	eq "aqu gives its file to a group it is in" 1000:1100 "$(stat -c %u:%g $M/perm/pub/u)"
	fails_with "Operation not permitted" as aqu chgrp aqv $M/perm/pub/u
	fails_with "Operation not permitted" as aqu py 'os.utime(sys.argv[1], (978307200, 978307200))' $M/perm/secret
}
t_perm_sticky() {
	fails_with "Operation not permitted" as aqv rm -f $M/perm/pub/u
	fails_with "Operation not permitted" as aqv mv $M/perm/pub/u $M/perm/pub/v
	as aqu mkdir $M/perm/pub/private
	as aqu chmod 0700 $M/perm/pub/private
	fails_with "Permission denied" as aqv ls $M/perm/pub/private
	as aqu sh -c "printf '#!/bin/sh\necho ran\n' >$M/perm/pub/run.sh; chmod 0755 $M/perm/pub/run.sh"
	eq "aqv runs a 0755 script" ran "$(as aqv $M/perm/pub/run.sh)"
	as aqu chmod 0644 $M/perm/pub/run.sh
	fails_with "Permission denied" as aqv $M/perm/pub/run.sh
	as aqu rm $M/perm/pub/run.sh
}
export -f t_perm_setup t_perm_create t_perm_read t_perm_owner t_perm_sticky

# --- what non-root users and special files need ---------------------------------

t_ln_user() {
	as aqu sh -c "echo l >$M/perm/pub/ln1 && ln $M/perm/pub/ln1 $M/perm/pub/ln2"
	eq "nlink" 2 "$(stat -c %h $M/perm/pub/ln1)"
	as aqu ln -s ln1 $M/perm/pub/ln3
	eq "aqu's symlink is aqu's" 1000 "$(stat -c %u $M/perm/pub/ln3)"
}
t_fifo() {
	mkfifo $M/ns/fifo
	eq "type" fifo "$(stat -c %F $M/ns/fifo)"
	(echo through >$M/ns/fifo &)
	eq "data through the fifo" through "$(cat $M/ns/fifo)"
	as aqu mkfifo $M/perm/pub/ufifo
	eq "aqu's fifo" 1000:fifo "$(stat -c %u:%F $M/perm/pub/ufifo)"
}
# Device nodes are refused with EPERM, what knfsd answers a caller without
# CAP_MKNOD: no caller of a shared volume gets to put devices on the shelf
# (agent/nfs/nfs.md, "MKNOD").
t_mknod() {
	fails_with "Operation not permitted" mknod $M/ns/null c 1 3
	fails_with "Operation not permitted" mknod $M/ns/blk b 7 0
	[ ! -e $M/ns/null ] && [ ! -e $M/ns/blk ] || { echo "a device node was made"; exit 1; }
}
t_socket() {
	py 'import socket; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' $M/ns/sock
	eq "type" socket "$(stat -c %F $M/ns/sock)"
}
t_suid_write() {
	echo x >$M/perm/pub/suid
	chmod 6777 $M/perm/pub/suid
	eq "set up" 6777 "$(mode $M/perm/pub/suid)"
	as aqu sh -c "echo y >>$M/perm/pub/suid"
	drop_caches
	eq "set-uid and set-gid after a write by another user" 777 "$(mode $M/perm/pub/suid)"
}
t_suid_trunc() {
	echo x >$M/perm/pub/suid2
	chmod 4777 $M/perm/pub/suid2
	as aqu truncate -s 1 $M/perm/pub/suid2
	drop_caches
	eq "set-uid after a truncation by another user" 777 "$(mode $M/perm/pub/suid2)"
}
t_suid_owner() {
	as aqu sh -c "echo x >$M/perm/pub/suid3 && chmod 4755 $M/perm/pub/suid3 && echo y >>$M/perm/pub/suid3"
	drop_caches
	eq "set-uid after a write by the owner (no CAP_FSETID)" 755 "$(mode $M/perm/pub/suid3)"
}
t_touch_h() {
	touch -h -d '2000-01-01 00:00:00 UTC' $M/ns/s1
	eq "the symlink's mtime" 946684800 "$(stat -c %Y $M/ns/s1)"
	[ "$(stat -L -c %Y $M/ns/s1)" != 946684800 ] || { echo "the target's mtime changed instead"; exit 1; }
}
t_huge_truncate() {
	echo keep >$M/huge
	if err=$(truncate -s 999999999999999 $M/huge 2>&1); then
		eq "size" 999999999999999 "$(stat -c %s $M/huge)"
		eq "first bytes" keep "$(head -c 4 $M/huge)"
	else
		case $err in
		*"File too large"*) eq "the file is unchanged" 5 "$(stat -c %s $M/huge)" ;;
		*) echo "truncate -s 999999999999999: '$err'; expected success or EFBIG"; exit 1 ;;
		esac
	fi
	rm $M/huge
}
export -f t_ln_user t_fifo t_mknod t_socket t_suid_write t_suid_trunc t_suid_owner t_touch_h t_huge_truncate

# --- root squash ------------------------------------------------------------------

t_squash() {
	mount -t nfs -o "$OPTS" "${SRV:-10.0.2.2}:$SQ" $MS
	echo root >$MS/byroot
	eq "a file root creates" 65534:65534 "$(stat -c %u:%g $MS/byroot)"
	fails_with "Operation not permitted" chown 0 $MS/byroot
	mkdir $MS/pub
	chmod 1777 $MS/pub
	as aqu sh -c "echo mine >$MS/pub/u && chmod 0600 $MS/pub/u"
	eq "aqu's file" 1000:1000 "$(stat -c %u:%g $MS/pub/u)"
	fails_with "Permission denied" cat $MS/pub/u
	eq "aqu reads it" mine "$(as aqu cat $MS/pub/u)"
	echo "# squash.owner $(stat -c %u:%g $MS/byroot)"
}
t_squash_gid() {
	as aqw sh -c "echo w >$MS/pub/w"
	eq "a file created by uid 1002 with group 0" 1002:65534 "$(stat -c %u:%g $MS/pub/w)"
}
export -f t_squash t_squash_gid

# --- read-only export -------------------------------------------------------------

t_ro() {
	mount -t nfs -o "$OPTS" "${SRV:-10.0.2.2}:$RO" $MR
	eq "the host's file reads back" "$RO_SHA" "$(sha $MR/ro.bin)"
	fails_with "Read-only file system" touch $MR/new
	fails_with "Read-only file system" mkdir $MR/dir
	fails_with "Read-only file system" rm $MR/ro.bin
	fails_with "Read-only file system" chmod 0600 $MR/ro.bin
	# Opening for write is refused by the client after ACCESS, as with knfsd.
	fails_with "Read-only file system|Permission denied" sh -c "echo x >>$MR/ro.bin"
	eq "unchanged" "$RO_SHA" "$(sha $MR/ro.bin)"
}
export -f t_ro

# nfs_checks: run them all in order, one TAP line each.
nfs_checks() {
	# large files
	check "dd of $BIG_MIB MiB, read back after dropping caches: same sha256" t_dd $LONG
	check "cp NFS to NFS, local to NFS and back: same sha256" t_cp $LONG
	check "O_DIRECT write and read (dd oflag=direct, iflag=direct)" t_direct $LONG
	check "sparse 1 GiB file: size, holes read as zeros, one block in the middle" t_sparse
	check "appends (>>) land in order" t_append
	check "silly rename: an open file removed still reads, its .nfs* file goes on close" t_silly
	# namespace
	check "mkdir -p, rmdir, rmdir of a non-empty directory (ENOTEMPTY), mkdir over one (EEXIST)" t_mkdir
	check "rename across directories" t_rename_across
	check "rename over an existing file" t_rename_over
	check "rename a directory over an empty one; over a full one (ENOTEMPTY), into itself (EINVAL), over a file (ENOTDIR)" t_rename_dirs
	check "hard links: nlink, same inode, shared content" t_link
	check "symlink, readlink, dangling and 1000-byte targets, a link to a directory" t_symlink
	check "ENOENT, a 255-byte name, ENAMETOOLONG at 256, UTF-8 names" t_names
	# attributes
	check "chmod (0640, 1777), seen by the other mount" t_chmod
	check "chown, chgrp, chown -h of a symlink" t_chown
	check "truncate: shrink, grow with zeros, O_TRUNC" t_truncate
	check "utimes with nanoseconds (touch -d, touch -a), mtime/ctime after a write" t_utimes
	check "df: size is the volume's capacity, used grows with a 32 MiB file" t_df
	# a 10,000-file directory
	check "10,000 files: created, listed (ls, ls -l, find from the other mount), removed" t_bigdir $((LONG * 2))
	# tar of a source tree in and out
	check "tar of a source tree in, compared (tar -d) from both mounts, out again: identical" t_tar $LONG
	# permissions as non-root users
	check "permissions: set up (root)" t_perm_setup
	check "as aqu: no create in a 0755 root directory; in a 1777 one the file is aqu's; aqv cannot write it" t_perm_create
	check "as aqu/aqv: a 0600 root file is not readable, a 0640 group file only by the group" t_perm_read
	check "as aqu: no chmod of root's file, no chown, chgrp only to its own groups, no utimes of another's file" t_perm_owner
	check "as aqv: the sticky bit protects aqu's file; a 0700 directory; exec bits" t_perm_sticky
	# what non-root users and special files need
	check "ln and ln -s as a non-root user" t_ln_user
	check "mkfifo (root and aqu), data through the fifo" t_fifo
	check "mknod of character and block devices is refused (EPERM)" t_mknod
	check "bind of a unix socket" t_socket
	check "a write by another user clears set-uid and set-gid (6777 -> 0777)" t_suid_write
	check "a truncation by another user clears set-uid (4777 -> 0777)" t_suid_trunc
	check "a write by the non-root owner clears set-uid (4755 -> 0755)" t_suid_owner
	check "touch -h sets a symlink's own mtime" t_touch_h
	check "truncate -s 999999999999999: succeeds sparse or EFBIG, never EDQUOT" t_huge_truncate
	# root squash
	check "root squash: root's files are 65534's, root cannot chown nor read aqu's 0600 file" t_squash
	check "root squash maps group 0 too (a user whose group is 0)" t_squash_gid
	# read-only export
	check "read-only export: reads, and EROFS for create, mkdir, remove, chmod, write" t_ro
	# close-to-open and concurrency
	check "close-to-open between two mounts" t_cto
	check "concurrent stress: writers and readers at random offsets, verified" t_stress $((STRESS_SECS + LONG))
	check "fio random 4 KiB writes, O_DIRECT, two jobs, verified (crc32c)" t_fio $LONG
}
