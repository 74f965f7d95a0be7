#!/bin/bash
# tests/vm/guest/nvme_shelf.sh: the guest side of tests/e2e/test_vm_nvme_shelf.sh
# (issue 24). In one guest: the test shelf (tests/vm/guest/nvmet.sh: the
# kernel's nvmet target, a subsystem on 127.0.0.1 tcp, file-backed namespaces
# made on demand), and aquifer-agent with --shelf nvmeof:tcp:... joined to
# aquiferd on the host (10.0.2.2). The host makes a volume through the API;
# here it must be an ext4 on the namespace whose NGUID the fsid names, data
# written over NFS comes back with the same sha256 (also read straight from
# the namespace's file system), and after the host deletes the volume its
# namespace, mount and controller are gone. One TAP line per check.
# /aqvm/env: SERVER TOKEN NODE LOC AP NP NQN TRANSPORT (tcp: the target on
# 127.0.0.1; rdma: soft-RoCE, rxe0 on eth0, the target on 10.0.2.15) DATA_SHA WAIT_SECS.
. /aqvm/env
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
n=0
AGENT= # set in start_agent's check only (each check runs in a subshell)
echo "1..9"

check() { # DESCRIPTION CMD...: one TAP line
	local desc=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/#   /'
	fi
}

wait_file() { # FILE SECONDS
	local i
	for i in $(seq "$2"); do
		[ -e "$1" ] && return 0
		[ -n "$AGENT" ] && ! kill -0 "$AGENT" 2>/dev/null && { echo "the agent exited"; tail -n 5 /aqvm/agent.log; return 1; }
		sleep 1
	done
	echo "no $1 after $2 s"
	return 1
}

eq() { [ "$2" = "$3" ] && return 0; echo "$1: expected '$2', got '$3'"; return 1; }

TADDR=127.0.0.1
[ "$TRANSPORT" = rdma ] && TADDR=10.0.2.15
target_up() {
	sh /aqvm/nvmet.sh modules /aqvm/mod "$TRANSPORT" && sh /aqvm/nvmet.sh up "$NQN" "$TADDR" 4420 "$TRANSPORT" &&
		test -c /dev/nvme-fabrics
}
check "the test shelf: nvmet over $TRANSPORT on $TADDR:4420, subsystem $NQN" target_up

start_agent() {
	mkdir -p /tmp/agent
	/aqvm/lib/ld-linux-x86-64.so.2 --library-path /aqvm/lib /aqvm/aquifer-agent --server "$SERVER" \
		--token "$TOKEN" --node "$NODE" --location "$LOC" \
		--shelf "nvmeof:$TRANSPORT:$TADDR:4420:$NQN,fence=none,provision=/aqvm/nvmet.sh" \
		--listen "0.0.0.0:$AP" --advertise 127.0.0.1 --nfs-listen "0.0.0.0:$NP" --state-dir /tmp/agent/state \
		--log-level debug >/aqvm/agent.log 2>&1 &
	AGENT=$!
	echo "$AGENT" >/tmp/agent.pid
	touch /aqvm/agent.started
	wait_file /aqvm/volume.env "$WAIT_SECS"
}
check "aquifer-agent (--shelf nvmeof:$TRANSPORT:...) joined, and the host made a volume" start_agent
[ -f /aqvm/volume.env ] && . /aqvm/volume.env
FSID=$(ls /tmp/agent/state/shelf/volumes 2>/dev/null | head -n 1)
ROOT=/tmp/agent/state/shelf/volumes/$FSID

on_namespace() {
	local dev want got
	[ -n "$FSID" ] || { echo "no volume under /tmp/agent/state/shelf/volumes"; return 1; }
	dev=$(findmnt -n -o SOURCE "$ROOT") || { echo "$ROOT is not a mount point"; findmnt; return 1; }
	eq "file system" ext4 "$(findmnt -n -o FSTYPE "$ROOT")" || return 1
	case $dev in /dev/nvme[0-9]*n[0-9]*) ;; *) echo "$ROOT is on $dev, not an NVMe namespace"; return 1 ;; esac
	# NGUID = "AQFR" 00 01 00 00, then the fsid as 8 big-endian bytes
	want=$(printf '%016x' "0x$FSID" | sed 's/^\(....\)\(.*\)$/41514652-0001-0000-\1-\2/')
	got=$(cat "/sys/block/${dev#/dev/}/nguid")
	eq "the namespace's NGUID" "$want" "$got" || return 1
	eq "the controller's transport" "$TRANSPORT" "$(cat /sys/class/nvme/nvme*/transport | sort -u)" || return 1
	eq "the controller's subsystem" "$NQN" "$(cat /sys/block/"${dev#/dev/}"/device/subsysnqn 2>/dev/null ||
		cat /sys/class/nvme/nvme0/subsysnqn)" || return 1
	eq "the target's backing file" "/tmp/nvmet/$FSID.img" \
		"$(grep -l "$want" /sys/kernel/config/nvmet/subsystems/"$NQN"/namespaces/*/device_nguid |
			sed 's|device_nguid$|device_path|' | xargs cat)"
}
check "the volume's root is an ext4 on the NVMe-oF namespace its fsid names (NGUID)" on_namespace

mkdir -p /mnt/v
nfs_write() {
	mount -t nfs -o "vers=3,nolock,tcp,port=$NP,mountport=$NP" "127.0.0.1:/$SHARE" /mnt/v || return 1
	dd if=/aqvm/data.bin of=/mnt/v/data.bin bs=1M conv=fsync status=none || return 1
	umount /mnt/v
}
check "write ${DATA_MIB} MiB over NFSv3 to the volume" nfs_write

nfs_read() {
	echo 3 >/proc/sys/vm/drop_caches
	mount -t nfs -o "vers=3,nolock,tcp,port=$NP,mountport=$NP" "127.0.0.1:/$SHARE" /mnt/v || return 1
	eq "sha256 read back over NFS" "$DATA_SHA" "$(sha256sum </mnt/v/data.bin | cut -c1-64)"
	local rc=$?
	umount /mnt/v
	return $rc
}
check "read back over NFS (caches dropped, new mount): identical sha256" nfs_read

on_disk() {
	local kib
	eq "sha256 on the namespace's ext4" "$DATA_SHA" "$(sha256sum <"$ROOT/data.bin" | cut -c1-64)" || return 1
	sync
	kib=$(du -k "/tmp/nvmet/$FSID.img" | cut -f1)
	[ "$kib" -ge $((DATA_MIB * 1024)) ] || { echo "the namespace's backing file holds only $kib KiB"; return 1; }
}
check "the bytes are on the namespace (its ext4, its backing file on the target)" on_disk

touch /aqvm/guest.written
gone() {
	local i
	wait_file /aqvm/volume.deleted "$WAIT_SECS" || return 1
	for i in $(seq 60); do
		if ! findmnt "$ROOT" >/dev/null && [ ! -e "/tmp/nvmet/$FSID.img" ] &&
			[ -z "$(ls /sys/kernel/config/nvmet/subsystems/"$NQN"/namespaces/)" ] && [ -z "$(ls /sys/class/nvme/)" ]; then
			return 0
		fi
		sleep 1
	done
	echo "after 60 s: mount $(findmnt -n "$ROOT"), namespaces $(ls /sys/kernel/config/nvmet/subsystems/"$NQN"/namespaces/)," \
		"controllers $(ls /sys/class/nvme/)"
	return 1
}
check "the volume deleted: unmounted, its namespace and file gone from the shelf, the controller disconnected" gone

stop_agent() { # started in check's subshell: not this shell's child, so poll
	local pid i
	pid=$(cat /tmp/agent.pid) && kill -TERM "$pid" || return 1
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	echo "the agent did not stop within 20 s"
	return 1
}
check "the agent stops cleanly" stop_agent
# Whatever a failed check left behind goes before the target does: a mounted
# namespace whose target vanished would queue I/O for ever and hang the
# guest's power-off.
for m in $(findmnt -rn -o SOURCE,TARGET | awk '$1 ~ /^\/dev\/nvme/ { print $2 }'); do umount -l "$m"; done
for c in /sys/class/nvme/nvme*/delete_controller; do [ -e "$c" ] && echo 1 >"$c"; done
check "the test shelf comes down" sh /aqvm/nvmet.sh down
