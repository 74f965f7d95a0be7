#!/usr/bin/env bash
# bench/shelf/run.sh: issue 24's acceptance 4. In one run, per transport
# (tcp, and rdma on soft-RoCE): fio on a raw namespace of the NVMe-oF shelf
# vs fio over NFSv3 through the agent on a volume of that same shelf (its
# own namespace of the same subsystem, same controller), 1 MiB sequential
# write and read, 4 KiB random write and read, each workload raw then NFS
# (interleaved). The guest is tests/e2e/test_vm_nvme_shelf.sh's (one QEMU
# guest is the nvmet shelf and the node; aquiferd runs on this host): the
# share and its checks come from tests/vm/lib.sh and tests/vm/nvme_shelf.sh,
# the guest side is bench/shelf/guest.sh. Prints one table per transport
# with NFS/raw ratios; the figures go into bench/shelf/REPORT.md by hand
# (never asserted). Under TCG every figure is the emulator's, not the
# fabric's: see REPORT.md.
#
#   [BENCH_TRANSPORTS="tcp rdma"] [BENCH_MIB=128] [BENCH_SECS=10] bench/shelf/run.sh [BUILDDIR]
here=$(cd "$(dirname "$0")" && pwd)
export AQ_BUILDDIR=${1:-${AQ_BUILDDIR:-$here/../../_b}}
export AQ_RECORD=0
. "$here/../../tests/e2e/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
. "$AQ_SRC/tests/vm/nvme_shelf.sh"

BENCH_MIB=${BENCH_MIB:-128}
BENCH_SECS=${BENCH_SECS:-10}
vm_preflight
VMSUB=
trap '[ -n "$VMSUB" ] && kill -TERM "$VMSUB" 2>/dev/null && wait "$VMSUB"; vm_cleanup; aq_cleanup' EXIT
vm_image || { echo "bench/shelf: the guest image does not build"; exit 1; }
aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/projects?projectId=bench" '{}'

# bench_one TRANSPORT: one guest, one volume, the runs; the table on stdout.
bench_one() {
	local t=$1 loc=b$1 S=$AQ_TMP/share-$1 AP NP P
	P=/v1/projects/bench/locations/$loc
	aq_req POST "/v1/locations?locationId=$loc" '{}'
	AP=$(aq_pick_port)
	NP=$(aq_pick_port)
	vm_nvme_share "$S" "$(aq_join_token "$loc")" "node-$t" "$loc" "$AP" "$NP" 1 "$t" || return 1
	cp "$here/guest.sh" "$S/bench_shelf.sh"
	printf 'BENCH_MIB=%s\nBENCH_SECS=%s\n' "$BENCH_MIB" "$BENCH_SECS" >>"$S/env"
	echo 'bash /aqvm/bench_shelf.sh' >"$S/cmd"
	VM_NET_ARGS=(-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$AP-:$AP,hostfwd=tcp:127.0.0.1:$NP-:$NP"
		-device virtio-net-pci,netdev=n0,romfile=)
	(
		trap vm_cleanup EXIT
		trap 'exit 130' TERM
		vm_run "$S" 1800
		echo $? >"$S/vm.rc"
	) &
	VMSUB=$!
	vm_nvme_wait "$S/agent.started" 300 && for _ in $(seq 240); do
		aq_req GET "/v1/nodes/node-$t"
		[ "$(printf '%s' "$BODY" | jq -r .state 2>/dev/null)" = READY ] && break
		sleep 1
	done
	aq_req POST "$P/storagePools?storagePoolId=bp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"10240","qosType":"MANUAL"}'
	# a limit above anything TCG reaches: QoS must not be what is measured
	aq_req POST "$P/volumes?volumeId=bv" '{"storagePool":"bp","capacityGib":"100","protocols":["NFSV3"],
		"shareName":"bv","throughputMibps":1200,"unixPermissions":"0777",
		"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
	[ "$STATUS" = 200 ] || { echo "bench/shelf: volume create: $BODY"; return 1; }
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 300
	echo "SHARE=bv" >"$S/volume.env.tmp" && mv "$S/volume.env.tmp" "$S/volume.env"
	vm_nvme_wait "$S/guest.written" 1500
	aq_req GET "/v1/shelves/$loc-shelf-1" # the directory default: the guest's node reports nvmeof, so none
	aq_req DELETE "$P/volumes/bv"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 300
	touch "$S/volume.deleted"
	wait "$VMSUB"
	VMSUB=
	grep -E '^(ok|not ok|#)' "$S/stdout" 2>/dev/null | sed "s/^/# guest ($t): /"
	[ -s "$S/bench.txt" ] && [ ! -e "$S/bench.failed" ] || { echo "bench/shelf: no figures over $t"; return 1; }
	echo "## $t (BENCH_MIB=$BENCH_MIB, BENCH_SECS=$BENCH_SECS, load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "| workload | raw MiB/s | NFS MiB/s | NFS/raw | raw IOPS | NFS IOPS | raw lat ms | NFS lat ms |"
	echo "|---|---|---|---|---|---|---|---|"
	awk '{ m[$1 " " $2] = $3; i[$1 " " $2] = $4; l[$1 " " $2] = $5; if (!seen[$2]++) o[n++] = $2 }
	     END { for (k = 0; k < n; k++) { w = o[k]; r = m["raw " w]; f = m["nfs " w]
	           printf "| %s | %s | %s | %.2f | %s | %s | %s | %s |\n", w, r, f, (r > 0 ? f / r : 0),
	                  i["raw " w], i["nfs " w], l["raw " w], l["nfs " w] } }' "$S/bench.txt"
}

rc=0
echo "# bench/shelf: $(date -u +%FT%TZ), $(nproc) cores, accel ${AQ_VM_ACCEL:-auto}, load $(cut -d' ' -f1-3 /proc/loadavg)"
for t in ${BENCH_TRANSPORTS:-tcp rdma}; do
	bench_one "$t" || rc=1
done
exit $rc
