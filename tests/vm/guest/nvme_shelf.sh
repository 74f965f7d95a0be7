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
. /aqvm/nvme_lib.sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
echo "1..9"

check "the test shelf: nvmet over $TRANSPORT on $TADDR:4420, subsystem $NQN" target_up

start_agent() { # one agent (agent_start's X empty: /tmp/agent, /aqvm/agent.log)
	agent_start "" "$NODE" "$TOKEN" "$AP" "$NP" fence=none,provision=/aqvm/nvmet.sh
	touch /aqvm/agent.started
	wait_file /aqvm/volume.env "$WAIT_SECS" "$AGENT_PID"
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

check "write ${DATA_MIB} MiB over NFSv3 to the volume" nfs_write "$NP"
check "read back over NFS (caches dropped, new mount): identical sha256" nfs_sha "$NP"

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

check "the agent stops cleanly" agents_stop ""
check "the test shelf comes down" target_down
