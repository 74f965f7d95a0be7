# tests/vm/nvme_shelf.sh: the host side of tests/e2e/test_vm_nvme_shelf.sh
# (issue 24; sourced after tests/e2e/lib.sh and tests/vm/lib.sh, not run):
# the shared folder that lets the test guest be an NVMe-oF shelf and a
# storage node at once, aquiferd with the location and project and the
# volume the suites use, and the checks of what the guest's agent logged.

# The NVMe-oF modules the image does not carry (it has kernel/fs, net, lib,
# crypto; these live in kernel/block and kernel/drivers/nvme): loaded in the
# guest by tests/vm/guest/nvmet.sh, in this order.
VM_NVME_MODULES="t10-pi nvme-core nvme-fabrics nvme-tcp nvmet nvmet-tcp"
# ...and for NVMe over RDMA on soft-RoCE (rdma_rxe on the guest's virtio NIC).
VM_NVME_RDMA_MODULES="ib_core ib_uverbs iw_cm ib_cm rdma_cm rdma_rxe nvme-rdma nvmet-rdma"

# vm_nvme_share S JOIN NODE LOC AP NP MIB TRANSPORT: S holds the modules, nvmet.sh,
# nvme_lib.sh (what the guest sides share), nvme_shelf.sh (as cmd), aquifer-agent with the shared libraries it links
# (run through their own loader in the guest), MIB MiB of random data.bin and
# env for the guest. Non-zero when something is missing.
vm_nvme_share() {
	local s=$1 m f
	mkdir -p "$s/mod" "$s/lib" || return 1
	for m in $VM_NVME_MODULES $([ "$8" = rdma ] && echo "$VM_NVME_RDMA_MODULES"); do
		f=$(modinfo -k "$VM_KVER" -F filename "$m" 2>/dev/null) && [ -f "$f" ] || { echo "no module $m for $VM_KVER" >&2; return 1; }
		cp "$f" "$s/mod/" || return 1
	done
	cp "$AQ_SRC/tests/vm/guest/nvmet.sh" "$AQ_SRC/tests/vm/guest/nvme_lib.sh" "$AQ_SRC/tests/vm/guest/nvme_shelf.sh" "$s/" ||
		return 1
	chmod 0755 "$s/nvmet.sh"
	cp "$AQUIFER_AGENT" "$s/aquifer-agent" || return 1
	for f in $(ldd "$AQUIFER_AGENT" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		cp -L "$f" "$s/lib/" || return 1
	done
	[ -f "$s/lib/ld-linux-x86-64.so.2" ] || { echo "no ld-linux-x86-64.so.2 among the agent's libraries" >&2; return 1; }
	head -c $(($7 << 20)) /dev/urandom >"$s/data.bin" || return 1
	cat >"$s/env" <<EOF2
SERVER=http://10.0.2.2:$AQ_PORT
TOKEN=$2
NODE=$3
LOC=$4
AP=$5
NP=$6
NQN=nqn.2026-01.org.aquifer:test-shelf
TRANSPORT=$8
DATA_MIB=$7
DATA_SHA=$(sha256sum <"$s/data.bin" | cut -c1-64)
WAIT_SECS=600
EOF2
	echo 'bash /aqvm/nvme_shelf.sh' >"$s/cmd"
}

# vm_nvme_api_start: aquiferd in AQ_TMP/srv (tests/e2e/lib.sh's aq_start,
# with AQ_SERVE_ARGS) with location nvloc and project nvproj; sets TOK (an
# admin token) and P (the location's path in nvproj). Exits the test (1)
# when aquiferd does not start.
vm_nvme_api_start() {
	aq_start "$AQ_TMP/srv" || exit 1
	TOK=$(aq_token "$AQ_TMP/srv" admin)
	aq_req POST "/v1/locations?locationId=nvloc" '{}'
	aq_req POST "/v1/projects?projectId=nvproj" '{}'
	P=/v1/projects/nvproj/locations/nvloc
}

# vm_nvme_volume WHERE: pool nvpool (EXTREME, MANUAL QoS) and in it volume
# nv1 (NFSv3, 100 GiB, share nv1, read-write and no root squash for
# 127.0.0.1: the guest's agent sees its own mounts from there) made through
# the API under P, waited for (300 s); three checks: the pool made, the
# create accepted, the volume READY (WHERE completes that check's name).
vm_nvme_volume() {
	aq_req POST "$P/storagePools?storagePoolId=nvpool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"10240","qosType":"MANUAL"}'
	expect_jq .done true "pool nvpool created"
	aq_req POST "$P/volumes?volumeId=nv1" '{"storagePool":"nvpool","capacityGib":"100","protocols":["NFSV3"],
	"shareName":"nv1","throughputMibps":300,"unixPermissions":"0777",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
	expect_status 200 "volume nv1 create accepted"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 300
	expect_jq .response.state READY "volume nv1 READY ($1)"
}

# vm_nvme_wait FILE SECONDS: FILE appears (the guest's signal) while the guest runs.
vm_nvme_wait() {
	local i
	for i in $(seq "$2"); do
		[ -e "$1" ] && return 0
		[ -e "$(dirname "$1")/vm.rc" ] && break
		sleep 1
	done
	aq_failed "the guest made $(basename "$1") within $2 s" "$(tail -n 5 "$(dirname "$1")/console.log" 2>/dev/null)"
	return 1
}

# vm_nvme_agent_log LOG TRANSPORT: what the agent in the guest said about the shelf.
vm_nvme_agent_log() {
	local addr=127.0.0.1
	[ "$2" = rdma ] && addr=10.0.2.15
	grep -E 'agent_shelf|shelf nvmeof' "$1" | sed 's/^/# guest agent: /'
	ok "the agent connected over /dev/nvme-fabrics ($2)" grep -q "connected nvme[0-9]* to nqn.2026-01.org.aquifer:test-shelf at $addr:4420 over $2" "$1"
	ok "the agent made the volume's file system on first attach" grep -q 'mounted on .* (new file system)' "$1"
	ok "the agent unmounted the volume when it left the node (no lazy detach)" \
		sh -c "grep -q 'volume [0-9a-f]*: unmounted ' '$1' && ! grep -q 'detaching it' '$1'"
	ok "the agent disconnected once no volume was left" grep -q 'disconnected nvme[0-9]*: no volume of' "$1"
	if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$1"; then
		aq_failed "no sanitizer report in the guest agent's log" "$(grep -m3 -A8 -E 'Sanitizer|runtime error' "$1")"
	else
		aq_pass "no sanitizer report in the guest agent's log"
	fi
}
