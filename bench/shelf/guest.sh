#!/bin/bash
# bench/shelf/guest.sh: the guest side of bench/shelf/run.sh (issue 24). In
# one test guest (the setup of tests/e2e/test_vm_nvme_shelf.sh: the kernel's
# nvmet target over TRANSPORT, aquifer-agent with --shelf nvmeof:...), once
# the host made a volume: fio on a raw namespace of the same subsystem,
# attached through the same controller, and fio over NFSv3 through the agent
# on the volume (whose ext4 lives on its own namespace of that subsystem),
# each workload raw then NFS, interleaved. One line per run to
# /aqvm/bench.txt: "MODE WORKLOAD MiB/s IOPS mean-latency-ms".
# /aqvm/env as tests/vm/guest/nvme_shelf.sh, plus BENCH_MIB (the file or
# device span) and BENCH_SECS (each run's length).
. /aqvm/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TADDR=127.0.0.1
[ "$TRANSPORT" = rdma ] && TADDR=10.0.2.15
log() { echo "# bench: $*"; }
fail() { echo "not ok - $*"; touch /aqvm/bench.failed /aqvm/guest.written; exit 1; }

sh /aqvm/nvmet.sh modules /aqvm/mod "$TRANSPORT" && sh /aqvm/nvmet.sh up "$NQN" "$TADDR" 4420 "$TRANSPORT" ||
	fail "the test shelf over $TRANSPORT"
mkdir -p /tmp/agent
/aqvm/lib/ld-linux-x86-64.so.2 --library-path /aqvm/lib /aqvm/aquifer-agent --server "$SERVER" \
	--token "$TOKEN" --node "$NODE" --location "$LOC" \
	--shelf "nvmeof:$TRANSPORT:$TADDR:4420:$NQN,fence=none,provision=/aqvm/nvmet.sh" \
	--listen "0.0.0.0:$AP" --advertise 127.0.0.1 --nfs-listen "0.0.0.0:$NP" --state-dir /tmp/agent/state \
	--log-level info >/aqvm/agent.log 2>&1 &
AGENT=$!
touch /aqvm/agent.started
for _ in $(seq "$WAIT_SECS"); do
	[ -e /aqvm/volume.env ] && break
	kill -0 "$AGENT" 2>/dev/null || fail "the agent exited"
	sleep 1
done
[ -e /aqvm/volume.env ] || fail "no volume from the host"
. /aqvm/volume.env
echo "ok - the agent serves $SHARE from the NVMe-oF shelf over $TRANSPORT"

# The raw side: one more namespace on the subsystem (the shelf's own
# provisioning), seen through the agent's controller after a rescan.
RAW_ID=41514652-0001-0000-ffff-00000000beef
sh /aqvm/nvmet.sh create ffffbeef "$RAW_ID" $((BENCH_MIB << 20)) || fail "the raw namespace"
for c in /sys/class/nvme/nvme*/rescan_controller; do echo 1 >"$c"; done
RAW=
for _ in $(seq 30); do
	for b in /sys/block/nvme*n*; do
		[ "$(cat "$b/nguid" 2>/dev/null)" = "$RAW_ID" ] && RAW=/dev/${b##*/}
	done
	[ -n "$RAW" ] && break
	sleep 1
done
[ -n "$RAW" ] || fail "the raw namespace's block device"
echo "ok - the raw namespace is $RAW ($(cat /sys/class/nvme/nvme*/transport | sort -u))"

mkdir -p /mnt/v
mount -t nfs -o "vers=3,nolock,tcp,port=$NP,mountport=$NP" "127.0.0.1:/$SHARE" /mnt/v || fail "the NFS mount"

# fio's JSON to "MiB/s IOPS mean-latency-ms" (python3 is in the image, jq is not)
summ() {
	python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
side = j["read"] if j["read"]["io_bytes"] else j["write"]
print("%.1f %.0f %.3f" % (side["bw_bytes"] / 1048576.0, side["iops"], side["lat_ns"]["mean"] / 1e6))'
}
one() { # MODE WORKLOAD RW BS
	local target=$RAW extra=()
	[ "$1" = nfs ] && target=/mnt/v/bench.bin && extra=(--size="${BENCH_MIB}M")
	echo 3 >/proc/sys/vm/drop_caches
	out=$(fio --name="$1-$2" --filename="$target" "${extra[@]}" --rw="$3" --bs="$4" --direct=1 \
		--ioengine=libaio --iodepth=8 --time_based --runtime="$BENCH_SECS" --ramp_time=1 \
		--output-format=json 2>/aqvm/fio.err | summ) || { cat /aqvm/fio.err; return 1; }
	echo "$1 $2 $out" | tee -a /aqvm/bench.txt
}
# lay the NFS file out once (fio would otherwise lay it out inside a timed run)
dd if=/dev/zero of=/mnt/v/bench.bin bs=1M count="$BENCH_MIB" conv=fsync status=none || fail "the NFS file"
dd if=/dev/zero of="$RAW" bs=1M count="$BENCH_MIB" oflag=direct status=none || fail "the raw namespace's fill"
: >/aqvm/bench.txt
for w in "seqwrite write 1M" "seqread read 1M" "randwrite randwrite 4k" "randread randread 4k"; do
	set -- $w
	for mode in raw nfs; do
		one "$mode" "$1" "$2" "$3" || fail "fio $mode $1"
	done
done
echo "ok - fio ran every workload raw and over NFS"
umount /mnt/v
touch /aqvm/guest.written
# The host deletes the volume; then the shelf comes down.
for _ in $(seq "$WAIT_SECS"); do [ -e /aqvm/volume.deleted ] && break; sleep 1; done
for c in /sys/class/nvme/nvme*/delete_controller; do [ -e "$c" ] && echo 1 >"$c"; done
kill -TERM "$AGENT" 2>/dev/null
sleep 2
for m in $(findmnt -rn -o SOURCE,TARGET | awk '$1 ~ /^\/dev\/nvme/ { print $2 }'); do umount -l "$m"; done
sh /aqvm/nvmet.sh down || true
