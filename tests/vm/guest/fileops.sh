#!/bin/bash
# tests/vm/guest/fileops.sh: the file-operation checks that hold on any
# kernel client mount (NFS or SMB), as functions over the mount M and a
# second mount M2 of the same volume (no shared cache); nfs3.sh and smb.sh
# source it after lib.sh and run the ones they need with `check`. Each
# function is one check's body (errexit); protocol-specific checks stay in
# the protocol's script. BIG_MIB, STRESS_SECS come from /aqvm/env, DIR_NLINK
# (default 3; empty: not checked) from the caller; /tmp/big (made by t_dd)
# is the data the later checks reuse.

t_dd() {
	dd if=/dev/urandom of=/tmp/big bs=1M count="$BIG_MIB" status=none
	dd if=/tmp/big of=$M/big bs=1M conv=fsync status=none
	eq "size" $((BIG_MIB << 20)) "$(stat -c %s $M/big)"
	drop_caches
	eq "sha256 read back after dropping caches" "$(sha /tmp/big)" "$(sha $M/big)"
	echo "# big.sha256 $(sha /tmp/big)" >/aqvm/big.sha256
}

t_cp() {
	mkdir $M/copies
	cp $M/big $M/copies/big.1
	cp /tmp/big $M/copies/big.2
	drop_caches
	eq "cp NFS to NFS" "$(sha /tmp/big)" "$(sha $M/copies/big.1)"
	eq "cp local to NFS" "$(sha /tmp/big)" "$(sha $M/copies/big.2)"
	cp $M/copies/big.1 /tmp/big.back
	cmp /tmp/big /tmp/big.back
	rm -f /tmp/big.back
}

t_direct() {
	dd if=/tmp/big of=$M/direct bs=1M count=16 oflag=direct status=none
	dd if=$M/direct of=/tmp/direct bs=1M iflag=direct status=none
	cmp /tmp/direct <(head -c $((16 << 20)) /tmp/big)
	rm -f /tmp/direct
}

t_sparse() {
	truncate -s 1G $M/sparse
	dd if=/tmp/big of=$M/sparse bs=4096 count=1 seek=$((512 << 8)) conv=notrunc,fsync status=none
	eq "size" $((1 << 30)) "$(stat -c %s $M/sparse)"
	drop_caches
	eq "a hole reads as zeros" "$(head -c 65536 /dev/zero | sha256sum | cut -c1-64)" \
		"$(dd if=$M/sparse bs=65536 count=1 status=none | sha256sum | cut -c1-64)"
	eq "the block written into the hole" "$(head -c 4096 /tmp/big | sha256sum | cut -c1-64)" \
		"$(dd if=$M/sparse bs=4096 skip=$((512 << 8)) count=1 status=none | sha256sum | cut -c1-64)"
	blocks=$(stat -c %b $M/sparse)
	[ "$blocks" -lt 4096 ] || { echo "1 GiB sparse file allocates $blocks blocks"; exit 1; }
	rm $M/sparse
}

t_append() {
	for i in 1 2 3; do echo "line $i" >>$M/append; done
	drop_caches
	eq "appended lines" "line 1,line 2,line 3" "$(paste -sd, $M/append)"
}

t_mkdir() {
	mkdir -p $M/ns/a/b/c
	rmdir $M/ns/a/b/c
	fails_with "Directory not empty" rmdir $M/ns/a
	fails_with "File exists" mkdir $M/ns/a
	# DIR_NLINK empty: the protocol has no directory link count to check
	[ -z "${DIR_NLINK-3}" ] || eq "nlink of a directory with one subdirectory" "${DIR_NLINK-3}" "$(stat -c %h $M/ns/a)"
	rmdir $M/ns/a/b $M/ns/a
	[ ! -e $M/ns/a ]
}

t_rename_across() {
	mkdir -p $M/ns/x $M/ns/y
	echo across >$M/ns/x/f
	mv $M/ns/x/f $M/ns/y/f
	[ ! -e $M/ns/x/f ] || { echo "the source is still there"; exit 1; }
	eq "moved content" across "$(cat $M/ns/y/f)"
	eq "seen from the other mount" across "$(cat $M2/ns/y/f)"
}

t_rename_over() {
	echo old >$M/ns/y/target
	echo new >$M/ns/x/src
	ino=$(stat -c %i $M/ns/x/src)
	mv -f $M/ns/x/src $M/ns/y/target
	eq "replaced content" new "$(cat $M/ns/y/target)"
	eq "the target is the source's inode" "$ino" "$(stat -c %i $M/ns/y/target)"
	[ ! -e $M/ns/x/src ]
}

t_rename_dirs() {
	mkdir -p $M/ns/d1/sub $M/ns/d2 $M/ns/full/keep
	echo inside >$M/ns/d1/sub/file
	mv -T $M/ns/d1 $M/ns/d2
	eq "a directory renamed over an empty one" inside "$(cat $M/ns/d2/sub/file)"
	[ ! -e $M/ns/d1 ]
	fails_with "Directory not empty" mv -T $M/ns/d2 $M/ns/full
	# (mv refuses this itself; rename(2) asks the kernel)
	fails_with "Invalid argument" py 'os.rename(sys.argv[1], sys.argv[2])' $M/ns/d2 $M/ns/d2/sub/d2
	fails_with "Not a directory" py 'os.rename(sys.argv[1], sys.argv[2])' $M/ns/d2 $M/ns/y/target
}

t_names() {
	fails_with "No such file or directory" stat $M/ns/nope
	n255=$(printf 'n%.0s' $(seq 255))
	echo ok >"$M/ns/$n255"
	eq "a 255-byte name" ok "$(cat "$M/ns/$n255")"
	fails_with "File name too long" touch "$M/ns/${n255}x"
	echo utf8 >"$M/ns/é ñ 文件 with spaces"
	eq "a UTF-8 name with spaces" utf8 "$(cat "$M2/ns/é ñ 文件 with spaces")"
}

t_truncate() {
	head -c 10000 /tmp/big >$M/trunc
	truncate -s 100 $M/trunc
	eq "shrunk size" 100 "$(stat -c %s $M/trunc)"
	truncate -s 5000 $M/trunc
	drop_caches
	eq "kept bytes" "$(head -c 100 /tmp/big | sha256sum)" "$(head -c 100 $M/trunc | sha256sum)"
	eq "grown tail reads as zeros" "$(head -c 4900 /dev/zero | sha256sum)" "$(tail -c 4900 $M/trunc | sha256sum)"
	: >$M/trunc
	eq "truncated to 0 by O_TRUNC" 0 "$(stat -c %s $M/trunc)"
}

t_df() {
	eq "df size is the volume's capacity" "$RW_CAP" "$(df -B1 --output=size $M | tail -n1 | tr -d ' ')"
	used0=$(df -B1 --output=used $M | tail -n1 | tr -d ' ')
	head -c $((32 << 20)) /tmp/big >$M/dfgrow
	sync
	used1=$(df -B1 --output=used $M | tail -n1 | tr -d ' ')
	delta=$((used1 - used0))
	[ $delta -ge $((32 << 20)) ] && [ $delta -le $((33 << 20)) ] ||
		{ echo "used grew by $delta bytes for a 32 MiB file"; exit 1; }
	rm $M/dfgrow
}

# DIR_FILES (10,000 unless the protocol's script says less) files in one folder
t_bigdir() {
	mkdir $M/many
	cd $M/many
	seq -f 'f%05g' 1 "${DIR_FILES:-10000}" | xargs touch
	eq "ls counts" "${DIR_FILES:-10000}" "$(ls | wc -l)"
	ls | cmp - <(seq -f 'f%05g' 1 "${DIR_FILES:-10000}")
	eq "ls -l (READDIRPLUS) lists" "${DIR_FILES:-10000}" "$(ls -l | grep -c ' f[0-9]')"
	eq "the other mount lists" "${DIR_FILES:-10000}" "$(find $M2/many -type f | wc -l)"
	cd /
	rm -rf $M/many
	[ ! -e $M/many ]
	eq "gone from the other mount" 0 "$(ls $M2 | grep -c '^many$' || true)"
}

t_cto() {
	echo one >$M/cto
	eq "the other mount sees the first version" one "$(cat $M2/cto)"
	echo two >$M/cto
	eq "and the second after close and open" two "$(cat $M2/cto)"
	echo three >$M2/cto
	eq "and the other way" three "$(cat $M/cto)"
}

t_stress() {
	python3 /aqvm/stress.py --dir $M/stress --dir2 $M2/stress --seconds "$STRESS_SECS"
}

t_fio() {
	mkdir $M/fio
	fio --name=verify --directory=$M/fio --rw=randwrite --bs=4k --size=4m --numjobs=2 \
		--direct=1 --ioengine=psync --verify=crc32c --verify_fatal=1 --group_reporting \
		--output=/tmp/fio.out >/dev/null ||
		{ tail -n 20 /tmp/fio.out; exit 1; }
	grep -q 'err= 0' /tmp/fio.out || { grep err= /tmp/fio.out; exit 1; }
	rm -rf $M/fio
}
export -f t_dd t_cp t_direct t_sparse t_append t_mkdir t_rename_across t_rename_over t_rename_dirs t_names t_truncate t_df t_bigdir t_cto t_stress t_fio
