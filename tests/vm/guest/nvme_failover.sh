#!/bin/bash
# tests/vm/guest/nvme_failover.sh: the guest side of
# tests/e2e/test_vm_nvme_failover.sh (issue 24): fence=lease and a two-node
# failover over one NVMe-oF shelf. In one guest: the test shelf (nvmet over
# tcp on 127.0.0.1, file-backed namespaces) and two aquifer-agents, two
# nodes with their own host NQN, controller and, since nvme-core runs
# without native multipath here, their own block device of each namespace
# (as two machines would have: two page caches, two ext4 mounts of one
# namespace if nothing fenced them). The host makes a volume; its node
# (A) gets data over NFS (fsync'ed), then A is stopped (SIGSTOP: a
# partitioned node whose kernel still runs); the other (B) takes the lease
# once it saw no renewal for the lease timeout, mounts and serves the same
# bytes; A, continued, finds itself fenced and stops serving; B goes on.
# One TAP line per check; "# takeover ..." lines carry the figures.
# /aqvm/env: LEASE_S SERVER TOKEN_A TOKEN_B NODE_A NODE_B LOC AP_A AP_B NP_A NP_B NQN DATA_MIB DATA_SHA WAIT_SECS.
. /aqvm/env
. /aqvm/nvme_lib.sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
echo "1..11"

now() { cut -d' ' -f1 /proc/uptime; }
mp_of() { echo "/tmp/agent$1/state/shelf/volumes/$FSID"; } # X: A or B

shelf_up() { target_up NVME_MULTIPATH=N && test "$(cat /sys/module/nvme_core/parameters/multipath)" = N; }
check "the test shelf: nvmet over tcp on 127.0.0.1:4420, nvme-core without native multipath" shelf_up

agent_start A "$NODE_A" "$TOKEN_A" "$AP_A" "$NP_A" "fence=lease,lease=$LEASE_S,provision=/aqvm/nvmet.sh"
agent_start B "$NODE_B" "$TOKEN_B" "$AP_B" "$NP_B" "fence=lease,lease=$LEASE_S,provision=/aqvm/nvmet.sh"
touch /aqvm/agent.started
check "two agents (fence=lease) joined, and the host made a volume" wait_file /aqvm/volume.env "$WAIT_SECS"
[ -f /aqvm/volume.env ] && . /aqvm/volume.env
FSID=
for x in A B; do
	for f in /tmp/agent$x/state/shelf/volumes/*; do
		[ -d "$f" ] && findmnt "$f" >/dev/null && FSID=${f##*/} && H=$x
	done
done
case ${H:-} in A) O=B ;; B) O=A ;; *) O= ;; esac
eval "NP_H=\${NP_$H:-} NP_O=\${NP_$O:-}" 2>/dev/null

served_by_one() {
	[ -n "$FSID" ] || { echo "no agent mounted the volume"; findmnt; return 1; }
	eq "the host's serving node" "$SERVING" "$(eval echo "\$NODE_$H")" || return 1
	! findmnt "$(mp_of "$O")" >/dev/null || { echo "both nodes mounted it"; return 1; }
	grep -q "volume $FSID: lease taken on" "/aqvm/agent$H.log" || { echo "agent $H logged no lease"; return 1; }
}
check "the volume is mounted by its node only, under its lease" served_by_one

check "write ${DATA_MIB} MiB over NFSv3 to node $H (fsync: COMMITted)" nfs_write "$NP_H"

# A partitioned node: SIGSTOP (its kernel, its mount and its page cache stay)
T_STOP=$(now)
kill -STOP "$(cat "/tmp/agent$H.pid")"
touch /aqvm/stopped

takeover() {
	local i t
	for i in $(seq 240); do
		if findmnt "$(mp_of "$O")" >/dev/null && grep -q "volume $FSID: lease taken on" "/aqvm/agent$O.log"; then
			t=$(now)
			echo "# takeover: node $O mounted the volume $(awk "BEGIN { print $t - $T_STOP }") s after node $H was stopped"
			grep "volume $FSID: lease taken on" "/aqvm/agent$O.log" | sed 's/^/# /'
			grep -q "taking it over if it is not renewed" "/aqvm/agent$O.log" ||
				{ echo "node $O took the lease without waiting out $H's"; return 1; }
			return 0
		fi
		sleep 0.5
	done
	echo "node $O did not mount the volume within 120 s"
	tail -n 20 "/aqvm/agent$O.log"
	return 1
}
check "node $O takes the lease after the timeout and mounts the volume" takeover
check "node $O serves the same bytes (identical sha256)" nfs_sha "$NP_O"

T_CONT=$(now)
kill -CONT "$(cat "/tmp/agent$H.pid")"
fenced() {
	local i
	for i in $(seq 60); do
		if grep -q "volume $FSID: fenced" "/aqvm/agent$H.log" && ! findmnt "$(mp_of "$H")" >/dev/null; then
			echo "# fenced: node $H stopped serving $(awk "BEGIN { print $(now) - $T_CONT }") s after it was continued"
			grep "volume $FSID: fenced" "/aqvm/agent$H.log" | sed 's/^/# /'
			return 0
		fi
		sleep 0.5
	done
	echo "node $H did not fence itself within 30 s; mounts: $(findmnt -rn -o TARGET | grep agent)"
	tail -n 20 "/aqvm/agent$H.log"
	return 1
}
check "node $H, continued, finds itself fenced: its file system shut down and detached" fenced

lease_record() { # the record in the namespace's last MiB, read past every cache
	local dev size
	dev=$(findmnt -n -o SOURCE "$(mp_of "$O")") || return 1
	size=$(blockdev --getsize64 "$dev")
	python3 - "$dev" "$size" "$(eval echo "\$NODE_$O")" <<'EOF'
import mmap, os, sys
dev, size, want = sys.argv[1], int(sys.argv[2]), sys.argv[3]
off = (size - (1 << 20)) & ~4095
fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
os.preadv(fd, [buf], off)
rec = bytes(buf[:512])
assert rec[:8] == b"AQLEASE1", "no lease record at %d: %r" % (off, rec[:16])
state, gen = int.from_bytes(rec[12:16], "big"), int.from_bytes(rec[24:32], "big")
nlen = int.from_bytes(rec[52:56], "big")
name = rec[56:56 + nlen].decode()
print("# lease record: state %d, owner %s, generation %d, counter %d" % (state, name, gen, int.from_bytes(rec[32:40], "big")))
assert state == 1 and name == want and gen >= 2, "expected held by %s, generation >= 2" % want
EOF
}
check "the lease record on the namespace names node $O (a later generation)" lease_record
check "node $O still serves the same bytes after $H was fenced" nfs_sha "$NP_O"
sleep 3 # the host's node report catches up
check "node $O's file system had no error" sh -c "! dmesg | grep -E 'EXT4-fs \($(basename "$(findmnt -n -o SOURCE "$(mp_of "$O")")")\).*(error|warning)'"

check "the agents stop cleanly" agents_stop A B
target_down
touch /aqvm/guest.done
