#!/usr/bin/env bash
# test_vm_nvme_failover.sh: fence=lease and a two-node failover over one
# NVMe-oF shelf (issue 24). One test guest (tests/vm, as in
# test_vm_nvme_shelf.sh) is the shelf (nvmet over tcp) and two storage nodes:
# two aquifer-agents with their own node name, host NQN, controller and
# block device of the namespace (nvme-core without native multipath),
# --shelf nvmeof:tcp:127.0.0.1:4420:NQN,fence=lease,lease=30 (AQ_VM_NVME_LEASE_S:
# the guest's I/O to its own target under TCG on a loaded machine stalled
# for more than the default's 6 s expiry; real shelves take the default
# 10 s), and aquiferd runs here with
# --node-down-seconds 8. A volume lands on one node and gets AQ_VM_NVME_MIB
# (default 32) MiB over NFSv3 with fsync; that agent is stopped (SIGSTOP: a
# partitioned node); aquiferd marks it DOWN and moves the volume; the other
# node waits out the lease timeout, takes the lease, mounts and serves the
# same sha256; the stopped agent, continued, fences itself (ext4 shut down,
# detached) and the other node keeps serving. tests/vm/guest/nvme_failover.sh
# is the guest side; its TAP lines count here, its "# takeover" lines carry
# the time from the stop to the other node's mount. 5 to 8 minutes under TCG on a loaded 2-core machine (7.5 measured).
# AQ_VM=0 skips, AQ_VM=1 makes missing tools a failure (vm_preflight).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
. "$AQ_SRC/tests/vm/nvme_shelf.sh"

vm_preflight
trap 'vm_stop_bg; vm_cleanup; aq_cleanup' EXIT
vm_image || { aq_failed "the guest image builds"; aq_finish; }

# 8 s: a TCG guest on a loaded machine can miss 2 s reports for 4 s (3 s made the nodes flap)
AQ_SERVE_ARGS=(--node-down-seconds 8)
vm_nvme_api_start
AP_A=$(aq_pick_port)
AP_B=$(aq_pick_port)
NP_A=$(aq_pick_port)
NP_B=$(aq_pick_port)
S=$AQ_TMP/share
MIB=${AQ_VM_NVME_MIB:-32}
vm_nvme_share "$S" "$(aq_join_token nvloc)" nva nvloc "$AP_A" "$NP_A" "$MIB" tcp || { aq_failed "the guest's share"; aq_finish; }
cp "$AQ_SRC/tests/vm/guest/nvme_failover.sh" "$S/" || { aq_failed "the guest's script"; aq_finish; }
cat >>"$S/env" <<EOF
TOKEN_A=$(grep '^TOKEN=' "$S/env" | cut -d= -f2-)
TOKEN_B=$(aq_join_token nvloc)
NODE_A=nva
NODE_B=nvb
AP_A=$AP_A
AP_B=$AP_B
NP_A=$NP_A
NP_B=$NP_B
LEASE_S=${AQ_VM_NVME_LEASE_S:-30}
EOF
echo 'bash /aqvm/nvme_failover.sh' >"$S/cmd"

VM_NET_ARGS=(-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$AP_A-:$AP_A,hostfwd=tcp:127.0.0.1:$AP_B-:$AP_B"
	-device virtio-net-pci,netdev=n0,romfile=)
vm_run_bg "$S" 900

node_state() { aq_req GET "/v1/nodes/$1"; printf '%s' "$BODY" | jq -r "$2" 2>/dev/null; }
steady=0 # both READY for 5 polls in a row: a node's first reports come slowly in the guest
vm_nvme_wait "$S/agent.started" 300 && for _ in $(seq 240); do
	if [ "$(node_state nva .state)" = READY ] && [ "$(node_state nvb .state)" = READY ]; then
		steady=$((steady + 1))
		[ "$steady" -ge 5 ] && break
	else
		steady=0
	fi
	kill -0 "$VM_SUB" 2>/dev/null || break
	sleep 1
done
expect_eq "node nva (fence=lease, in the guest) READY" READY "$(node_state nva .state)"
expect_eq "node nvb (fence=lease, in the guest) READY" READY "$(node_state nvb .state)"

vm_nvme_volume "on the NVMe-oF shelf, under its lease"
H=
for x in nva nvb; do [ "$(node_state $x .volumeCount)" = 1 ] && H=$x; done
case $H in nva) O=nvb ;; nvb) O=nva ;; *) aq_failed "one node serves nv1"; aq_finish ;; esac
printf 'SHARE=nv1\nSERVING=%s\n' "$H" >"$S/volume.env.tmp" && mv "$S/volume.env.tmp" "$S/volume.env"

# the guest stops H's agent; aquiferd marks it DOWN and moves nv1 to O
if vm_nvme_wait "$S/stopped" 600; then
	for _ in $(seq 120); do
		[ "$(node_state "$H" .state)" = DOWN ] && [ "$(node_state "$O" .volumeCount)" = 1 ] && break
		sleep 1
	done
	expect_eq "node $H (stopped) DOWN" DOWN "$(node_state "$H" .state)"
	expect_eq "nv1 moved to node $O" 1 "$(node_state "$O" .volumeCount)"
fi

vm_wait_bg "$S"
vm_guest_results "$S"
aq_req GET "$P/volumes/nv1"
expect_jq .state READY "nv1 READY after the failover"
# The fenced node's own ext4 (shut down on purpose) logs its shutdown; the
# node that serves must log no file-system error (checked in the guest).
vm_guest_dmesg "$S" 'nvme.*(error|failed)|nvmet.*failed|EXT4-fs error' \
	'nvme nvme[0-9]+: (starting error recovery|Reconnecting in|Successfully reconnected|creating [0-9]+ I/O queues|mapped )|nvme_log_error: [0-9]+ callbacks suppressed|Found shared namespace'
for x in A B; do
	if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$S/agent$x.log" 2>/dev/null; then
		aq_failed "no sanitizer report in guest agent $x's log" "$(grep -m3 -A8 -E 'Sanitizer|runtime error' "$S/agent$x.log")"
	else
		aq_pass "no sanitizer report in guest agent $x's log"
	fi
done
grep -hE 'agent_shelf' "$S/agentA.log" "$S/agentB.log" 2>/dev/null | sed 's/^/# guest agent: /' | tail -n 30
aq_sanitizer_clean "$AQ_TMP/srv"
aq_finish
