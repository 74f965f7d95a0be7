#!/bin/bash
# tests/vm/guest/nvme_lib.sh: what the NVMe-oF shelf suites' guest sides
# (nvme_shelf.sh, nvme_failover.sh) share, sourced after /aqvm/env: the TAP
# check runner, the test shelf's setup and teardown (nvmet.sh), starting and
# stopping aquifer-agents with --shelf nvmeof:..., and NFSv3 writes and reads
# of /aqvm/data.bin. tests/vm/nvme_shelf.sh copies it into the share.
# From /aqvm/env: SERVER LOC NQN DATA_SHA; TRANSPORT (tcp when unset).
n=0
TRANSPORT=${TRANSPORT:-tcp}
# The target's address: 127.0.0.1 over tcp; over rdma (soft-RoCE, rxe0 on
# eth0) the guest's own address.
TADDR=127.0.0.1
[ "$TRANSPORT" = rdma ] && TADDR=10.0.2.15

# check DESCRIPTION CMD...: run CMD, print one TAP line; on success the
# "# " lines of its output (figures) follow, on failure its last 15 lines.
check() {
	local desc=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n - $desc"
		[ -n "$out" ] && printf '%s\n' "$out" | grep '^# ' || true
	else
		echo "not ok $n - $desc"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/#   /'
	fi
}

# wait_file FILE SECONDS [PID]: FILE appears within SECONDS (the host's
# signal); with PID, fails as soon as that agent has exited.
wait_file() {
	local i
	for i in $(seq "$2"); do
		[ -e "$1" ] && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && { echo "the agent exited"; tail -n 5 /aqvm/agent*.log; return 1; }
		sleep 1
	done
	echo "no $1 after $2 s"
	return 1
}

# eq WHAT EXPECTED ACTUAL
eq() { [ "$2" = "$3" ] && return 0; echo "$1: expected '$2', got '$3'"; return 1; }

# target_up [ENV...]: the test shelf: the modules (nvmet.sh modules, with
# ENV such as NVME_MULTIPATH=N), a subsystem NQN on TADDR:4420 over
# TRANSPORT, and /dev/nvme-fabrics there for the agents.
target_up() {
	env "$@" sh /aqvm/nvmet.sh modules /aqvm/mod "$TRANSPORT" &&
		sh /aqvm/nvmet.sh up "$NQN" "$TADDR" 4420 "$TRANSPORT" && test -c /dev/nvme-fabrics
}

# target_down: what a failed check left behind goes before the target does
# (a mounted namespace whose target vanished would queue I/O for ever and
# hang the guest's power-off), then the target: nvmet.sh down's status.
target_down() {
	local m c
	for m in $(findmnt -rn -o SOURCE,TARGET | awk '$1 ~ /^\/dev\/nvme/ { print $2 }'); do umount -l "$m"; done
	for c in /sys/class/nvme/nvme*/delete_controller; do [ -e "$c" ] && echo 1 >"$c"; done
	sh /aqvm/nvmet.sh down
}

# agent_start X NODE TOKEN AP NP SHELF_OPTS: aquifer-agent X (a letter, or
# empty for a lone agent) in the background, through the libraries'
# own loader: node NODE joined with TOKEN, API on AP and NFS on NP (both
# 0.0.0.0, advertised as 127.0.0.1), --shelf
# nvmeof:TRANSPORT:TADDR:4420:NQN,SHELF_OPTS, state in /tmp/agentX/state, log
# in /aqvm/agentX.log, PID in /tmp/agentX.pid and AGENT_PID.
agent_start() {
	mkdir -p "/tmp/agent$1"
	/aqvm/lib/ld-linux-x86-64.so.2 --library-path /aqvm/lib /aqvm/aquifer-agent --server "$SERVER" \
		--token "$3" --node "$2" --location "$LOC" \
		--shelf "nvmeof:$TRANSPORT:$TADDR:4420:$NQN,$6" \
		--listen "0.0.0.0:$4" --advertise 127.0.0.1 --nfs-listen "0.0.0.0:$5" --state-dir "/tmp/agent$1/state" \
		--log-level debug >"/aqvm/agent$1.log" 2>&1 &
	AGENT_PID=$!
	echo "$AGENT_PID" >"/tmp/agent$1.pid"
}

# agents_stop X...: TERM to each agent X (agent_start's PID files), which
# must still run, then each gone within 20 s (they were started in another
# check's subshell: not this shell's children, so polled).
agents_stop() {
	local x pid i
	for x in "$@"; do
		pid=$(cat "/tmp/agent$x.pid") && kill -TERM "$pid" 2>/dev/null || { echo "agent $x was not running"; return 1; }
	done
	for x in "$@"; do
		pid=$(cat "/tmp/agent$x.pid")
		for i in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || continue 2
			sleep 0.2
		done
		echo "agent $x did not stop within 20 s"
		return 1
	done
}

# nfs_write PORT: /aqvm/data.bin written (fsync'ed) to the volume SHARE
# over NFSv3 from 127.0.0.1:PORT, mounted on /mnt/v for that only.
nfs_write() {
	mkdir -p /mnt/v
	mount -t nfs -o "vers=3,nolock,tcp,port=$1,mountport=$1" "127.0.0.1:/$SHARE" /mnt/v || return 1
	dd if=/aqvm/data.bin of=/mnt/v/data.bin bs=1M conv=fsync status=none || { umount /mnt/v; return 1; }
	umount /mnt/v
}

# nfs_sha PORT: caches dropped, a new mount: data.bin read back over NFSv3
# has the sha256 DATA_SHA.
nfs_sha() {
	local rc
	echo 3 >/proc/sys/vm/drop_caches
	mkdir -p /mnt/v
	mount -t nfs -o "vers=3,nolock,tcp,port=$1,mountport=$1" "127.0.0.1:/$SHARE" /mnt/v || return 1
	eq "sha256 read back over NFS" "$DATA_SHA" "$(sha256sum </mnt/v/data.bin | cut -c1-64)"
	rc=$?
	umount /mnt/v
	return $rc
}
