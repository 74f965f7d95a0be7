#!/usr/bin/env bash
# test_vm_failover.sh: a hard-mounted Linux kernel NFS client writes through a
# failover and resumes by itself (issue 25, acceptance 2).
#
# Topology (made here, removed by the EXIT trap): a control namespace with
# aquiferd (127.0.0.1 for this script, 10.99.25.1 for the agents), a bridge
# and a tap device the test guest (tests/vm, 10.99.25.50) is attached to;
# namespaces A and B (agents 10.99.25.11/.12, one shelf folder both see),
# joined to the bridge by veth pairs. The location's service range is
# 10.99.25.32/28, so the volume is mounted at 10.99.25.33 wherever it is.
#   1. a second volume lands with its own address on its own node only, and
#      the first node never claims it;
#   2. the guest mounts v1 `vers=3,hard,nolock` at the service address and
#      writes AQ_VM_FAILOVER_MIB MiB (64 by default: under TCG the guest
#      writes NFS at 5-10 MiB/s; 1 GiB on a machine with KVM) with
#      `dd ... conv=fsync`; once a quarter is on the shelf the serving
#      agent is killed (-9) and its link taken down;
#   3. the other node takes the address over when aquiferd moves the volume;
#      dd ends with status 0, the sha256 read back over NFS (after a remount)
#      and the one on the shelf match the source, and the guest's kernel log
#      has nothing but the "server not responding" / "OK" pair.
# Prints the time to resume (the shelf file grows again after the kill).
# AQ_VM=0 skips (exit 77); AQ_VM=1 makes missing tools a failure.
set -u
NET=10.99.25
if [ -z "${AQ_SA_INNER:-}" ]; then
	. "$(dirname "$0")/../vm/lib.sh"
	vm_preflight
	[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces and a tap need root"; exit 77; }
	command -v ip >/dev/null || { echo "SKIP: ip (iproute2) missing"; exit 77; }
	SA=aqvf$$
	. "$(dirname "$0")/svc_lib.sh"
	sa_netns a b
	ip -n "$SA-c" tuntap add dev aqtap0 mode tap
	ip -n "$SA-c" link set aqtap0 master br0 up
	AQ_SA_INNER=$SA ip netns exec "$SA-c" "$BASH" "$0" "$@"
	exit $?
fi

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
SA=$AQ_SA_INNER
D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
P=/v1/projects/acme/locations/east
MIB=${AQ_VM_FAILOVER_MIB:-64}
# the guest boots beside the other suites under TCG: give it more than the default 180 s
export AQ_VM_BOOT_SECS=${AQ_VM_BOOT_SECS:-300}
VMSUB=
# the guest's subshell first (its own trap stops QEMU), then aquiferd and the agents
trap '[ -n "$VMSUB" ] && { kill -TERM "$VMSUB"; wait "$VMSUB"; } 2>/dev/null; aq_cleanup' EXIT
T0=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
mkdir -p "$SHELF"
AQ_SERVE_ARGS=(--listen "0.0.0.0:8080" --insecure-listen --node-down-seconds 3)
aq_start "$D" 8080 || exit 1
TOK=$(aq_token "$D" admin)

aq_req POST "/v1/locations?locationId=east" '{"serviceAddresses":{"range":"10.99.25.32/28","prefixLength":24}}'
expect_status 200 "location east with serviceAddresses 10.99.25.32/28"
aq_req POST "/v1/projects?projectId=acme" '{}'
sa_agent a --token "$(aq_join_token east)"
sa_agent b --token "$(aq_join_token east)"
aq_agent_wait_ready a
aq_agent_wait_ready b
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"MANUAL"}'
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" >/dev/null 2>&1
RULES='"exportPolicy":{"rules":[{"allowedClients":"10.99.25.0/24","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}'
aq_req POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1","throughputMibps":100,'"$RULES"'}'
aq_wait_until 30 aq_vol_is v1 '.state == "READY" and .mountOptions[0].ipAddress == "10.99.25.33"'
ok "v1 is READY at the service address 10.99.25.33" aq_vol_is v1 '.state == "READY" and .mountOptions[0].ipAddress == "10.99.25.33"'
aq_wait_until 10 sa_reported 10.99.25.33
H=$(sa_node_of 10.99.25.33)
case $H in a) O=b ;; b) O=a ;; *) aq_failed "a node reports holding 10.99.25.33"; aq_finish ;; esac
ok "v1's node $H holds 10.99.25.33" sa_has "$H" "$NET.33"

# --- 1. a volume of the other node: its own claim --------------------------------
aq_req POST "$P/volumes?volumeId=v2" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v2","throughputMibps":100,'"$RULES"'}'
aq_wait_until 30 aq_vol_is v2 '.state == "READY"'
aq_wait_until 10 sa_reported 10.99.25.34
H2=$(sa_node_of 10.99.25.34)
expect_eq "v2 went to the other node ($O), which holds 10.99.25.34" "$O" "$H2"
ok "... and $H never claimed it" sa_hasnt "$H" "$NET.34"
ok "... while $O never claimed v1's" sa_hasnt "$O" "$NET.33"

# --- 2. the guest writes through a failover ------------------------------------
S=$AQ_TMP/share
mkdir -p "$S"
head -c $((MIB << 20)) /dev/urandom >"$S/data.bin"
SRC_SHA=$(sha256sum <"$S/data.bin" | cut -c1-64)
cat >"$S/cmd" <<EOF
set -u
M=/mnt/v1
mkdir -p \$M
SRC=/aqvm/data.bin
# up to 256 MiB from tmpfs (the guest has 1.5 GiB), more straight from the shared folder
[ $MIB -le 256 ] && cp /aqvm/data.bin /tmp/data.bin && SRC=/tmp/data.bin
mount -t nfs -o vers=3,hard,nolock,tcp,port=2049,mountport=2049 $NET.33:/v1 \$M || exit 10
: >/aqvm/mounted
s=\$(date +%s.%N)
dd if=\$SRC of=\$M/big bs=1M conv=fsync 2>/aqvm/dd.err
echo \$? >/aqvm/dd.rc
e=\$(date +%s.%N)
echo "\$s \$e" >/aqvm/dd.times
umount \$M || exit 11
mount -t nfs -o vers=3,hard,nolock,tcp,port=2049,mountport=2049 $NET.33:/v1 \$M || exit 12
sha256sum \$M/big | cut -c1-64 >/aqvm/readback.sha
umount \$M
EOF
VM_NET_ARGS=(-netdev tap,id=n0,ifname=aqtap0,script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=52:54:00:00:25:50,romfile=)
(
	trap vm_cleanup EXIT
	trap 'exit 130' TERM
	VM_IP=$NET.50/24 VM_GW=$NET.1 vm_run "$S" 900
	echo $? >"$S/vm.rc"
) &
VMSUB=$!
aq_wait_until 300 test -e "$S/mounted"
ok "the guest mounted v1 at 10.99.25.33 (vers=3,hard,nolock)" test -e "$S/mounted"
big() { find "$SHELF" -name big -type f -printf '%s\n' 2>/dev/null | head -n1; }
grown() { [ "$(big)" -ge $(((MIB << 20) / 4)) ] 2>/dev/null; }
aq_wait_until 300 grown
ok "a quarter of the file is on the shelf before the failover" grown
eval "HP=\$PID_$H"
t_kill=$(date +%s%N)
kill -KILL "$HP" 2>/dev/null
ok "dd was still writing when the serving agent was killed" test ! -e "$S/dd.rc"
ip -n "$SA-$H" link set eth0 down
{ wait "$HP"; } 2>/dev/null
at_kill=$(big)
moved() { sa_has "$O" "$NET.33"; }
aq_wait_until 90 moved
t_moved=$(date +%s%N)
ok "$O took 10.99.25.33 over after $H was killed and cut off" moved
# a hard mount with nobody at its address waits forever: stop the guest now
stop_guest() { kill -TERM "$VMSUB" 2>/dev/null; { wait "$VMSUB"; } 2>/dev/null; VMSUB=; aq_finish; }
moved || stop_guest
more() { [ "$(big)" -gt "$at_kill" ]; }
aq_wait_until 300 more
t_resume=$(date +%s%N)
ok "the guest's write resumed by itself (the shelf file grows past $at_kill bytes)" more
more || stop_guest
wait "$VMSUB"
VMSUB=
expect_eq "the guest ran to the end" 0 "$(cat "$S/vm.rc" 2>/dev/null)"
expect_eq "dd through the failover ended with status 0" 0 "$(cat "$S/dd.rc" 2>/dev/null)"
expect_eq "the sha256 read back over NFS matches the source" "$SRC_SHA" "$(cat "$S/readback.sha" 2>/dev/null)"
SHELF_SHA=$(find "$SHELF" -name big -type f -exec sha256sum {} + | cut -c1-64)
expect_eq "the file on the shelf matches the source" "$SRC_SHA" "$SHELF_SHA"
vm_guest_dmesg "$S" 'bad XDR|XDR|[Ss]tale (file )?handle|ESTALE|fileid changed|RPC: .*(garbage|error|bad)|NFS: .*(error|failed|[Ii]nvalid)|not responding|server .* OK' \
	"nfs: server $NET.33 not responding, still trying|nfs: server $NET.33 OK"
nr=$(grep -c "server $NET.33 not responding" "$S/dmesg" 2>/dev/null)
nok=$(grep -c "server $NET.33 OK" "$S/dmesg" 2>/dev/null)
ok "every \"not responding\" in the guest's log has its \"OK\" ($nr / $nok)" test "${nr:-0}" -le "${nok:-0}"
read -r s e <"$S/dd.times" 2>/dev/null
echo "# failover: $MIB MiB, killed at $((at_kill >> 20)) MiB; address moved $(((t_moved - t_kill) / 1000000)) ms after the kill (node-down 3 s), writes resumed at $(((t_resume - t_kill) / 1000000)) ms; dd took $(echo "${e:-0} - ${s:-0}" | bc 2>/dev/null) s; guest log: $nr not responding / $nok OK"
grep -h 'agent_svc' "$D"/*/agent.log | sed 's/^/  log: /' | head -n 20
echo "# took $(($(date +%s) - T0)) s"
aq_finish
