#!/bin/bash
# bench/nfs/mail.sh: fsyncs per maildir-style delivery over NFSv3 (tests/e2e/nfs_burst mail:
# create in tmp/, write, COMMIT, close, rename into new/), nfs_serve exporting a loop-mounted
# ext4 made with and without a journal (the store's one_log on and off), counted with
# strace -c on the server; two interleaved rounds. Needs root (loop mounts) and strace.
#   AQ_BUILDDIR=<build with nfs_serve and nfs_burst> [N=200] bench/nfs/mail.sh
B=${AQ_BUILDDIR:?AQ_BUILDDIR: a build folder}
N=${N:-200}
for round in 1 2; do
for kind in journal nojournal; do
	d=$(mktemp -d /tmp/h25c-mail-XXXXXX)
	truncate -s 256M $d/img
	if [ $kind = journal ]; then mkfs.ext4 -q -F $d/img; else mkfs.ext4 -q -F -O ^has_journal $d/img; fi
	mkdir $d/mnt && mount -o loop $d/img $d/mnt && mkdir $d/mnt/export && chmod 777 $d/mnt/export
	$B/tests/agent/nfs/nfs_serve --listen 127.0.0.1:0 --port-file $d/port --workers 8 \
		--key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f --export "/e=$d/mnt/export" 2>$d/serve.log &
	pid=$!
	for _ in $(seq 100); do [ -s $d/port ] && break; sleep 0.1; done
	p=$(cat $d/port)
	strace -f -c -e trace=fsync,fdatasync,syncfs -o $d/strace -p $pid & sp=$!
	sleep 1
	t0=$(date +%s.%N)
	$B/tests/e2e/nfs_burst mail "nfs://127.0.0.1/e?version=3&nfsport=$p&mountport=$p" /m $N > $d/ack 2>/dev/null
	t1=$(date +%s.%N)
	sleep 0.5; kill -INT $sp; wait $sp 2>/dev/null
	n=$(wc -l < $d/ack)
	f=$(awk '$NF=="fsync"{print $4}' $d/strace); f=${f:-0}
	echo "round $round $kind: $n files, fsync $f ($(echo "scale=2; $f/$n" | bc) per file), $(echo "scale=0; $n/($t1-$t0)" | bc) files/s, load $(cut -d' ' -f1 /proc/loadavg)"
	kill $pid; wait $pid 2>/dev/null
	umount $d/mnt; rm -rf $d
done
done
