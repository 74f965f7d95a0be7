#!/bin/sh
# tests/vm/guest/nvmet.sh: the test shelf, the kernel's NVMe-oF target (nvmet,
# configfs) in the test guest, with file-backed namespaces (issue 24).
#
#   nvmet.sh modules DIR [rdma]  load the NVMe-oF modules the image lacks from DIR
#                                (tests/vm/nvme_shelf.sh copies them into the share);
#                                with rdma also soft-RoCE, and an rxe0 device on eth0;
#                                NVME_MULTIPATH=N: nvme-core without native multipath
#                                (a block device per controller: two "nodes" in one
#                                guest each see their own, as two machines would)
#   nvmet.sh up NQN ADDR PORT [tcp|rdma]  a subsystem NQN (any host) on a port
#                                ADDR:PORT of that transport (tcp by default)
#   nvmet.sh create FSID ID BYTES  a namespace of BYTES (a sparse file in
#                                $NVMET_DIR) with NGUID and UUID ID: what the
#                                agent's provision= program is asked
#   nvmet.sh resize FSID ID BYTES  that namespace grows to BYTES (its file grows;
#                                nvmet's revalidate_size tells the hosts, which
#                                see the new size after a rescan)
#   nvmet.sh delete FSID ID      that namespace goes, and its file
#   nvmet.sh down                namespaces, port and subsystem go
#
# The subsystem's NQN is kept in $NVMET_DIR/nqn between calls. Exit 0 on
# success; a failure says what on stderr.
set -eu
NVMET_DIR=${NVMET_DIR:-/tmp/nvmet}
CFG=/sys/kernel/config/nvmet

die() { echo "nvmet.sh: $*" >&2; exit 1; }

case ${1:-} in
modules)
	for m in configfs crc-t10dif crc64-rocksoft crc64_rocksoft_generic; do
		modprobe "$m" 2>/dev/null || true
	done
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mods="t10-pi nvme-core nvme-fabrics nvme-tcp nvmet nvmet-tcp"
	if [ "${3:-}" = rdma ]; then
		modprobe udp_tunnel && modprobe ip6_udp_tunnel || die "modprobe udp_tunnel"
		mods="$mods ib_core ib_uverbs iw_cm ib_cm rdma_cm rdma_rxe nvme-rdma nvmet-rdma"
	fi
	for m in $mods; do
		args=
		[ "$m" = nvme-core ] && [ -n "${NVME_MULTIPATH:-}" ] && args="multipath=$NVME_MULTIPATH"
		# shellcheck disable=SC2086
		grep -q "^$(echo "$m" | tr - _) " /proc/modules || insmod "$2/$m.ko" $args || die "insmod $m"
	done
	if [ "${3:-}" = rdma ] && ! rdma link show rxe0/1 >/dev/null 2>&1; then
		rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0"
	fi
	;;
up)
	nqn=$2 addr=$3 port=$4 trtype=${5:-tcp}
	mkdir -p "$NVMET_DIR"
	echo "$nqn" >"$NVMET_DIR/nqn"
	mkdir "$CFG/subsystems/$nqn"
	echo 1 >"$CFG/subsystems/$nqn/attr_allow_any_host"
	mkdir "$CFG/ports/1"
	echo ipv4 >"$CFG/ports/1/addr_adrfam"
	echo "$trtype" >"$CFG/ports/1/addr_trtype"
	echo "$addr" >"$CFG/ports/1/addr_traddr"
	echo "$port" >"$CFG/ports/1/addr_trsvcid"
	ln -s "$CFG/subsystems/$nqn" "$CFG/ports/1/subsystems/$nqn"
	;;
create)
	fsid=$2 id=$3 bytes=$4
	nqn=$(cat "$NVMET_DIR/nqn") || die "no subsystem (nvmet.sh up first)"
	case $fsid in *[!0-9a-f]* | '') die "bad fsid $fsid" ;; esac
	n=1
	while [ -d "$CFG/subsystems/$nqn/namespaces/$n" ]; do n=$((n + 1)); done
	truncate -s "$bytes" "$NVMET_DIR/$fsid.img"
	ns=$CFG/subsystems/$nqn/namespaces/$n
	mkdir "$ns"
	echo "$NVMET_DIR/$fsid.img" >"$ns/device_path"
	echo 1 >"$ns/buffered_io" # the page cache: /tmp is tmpfs, which takes no O_DIRECT
	echo "$id" >"$ns/device_nguid"
	echo "$id" >"$ns/device_uuid"
	echo 1 >"$ns/enable"
	;;
resize)
	fsid=$2 bytes=$4
	nqn=$(cat "$NVMET_DIR/nqn") || die "no subsystem"
	case $fsid in *[!0-9a-f]* | '') die "bad fsid $fsid" ;; esac
	[ -f "$NVMET_DIR/$fsid.img" ] || die "no namespace for $fsid"
	truncate -s "$bytes" "$NVMET_DIR/$fsid.img"
	for ns in "$CFG/subsystems/$nqn/namespaces/"*; do
		[ "$(cat "$ns/device_path" 2>/dev/null)" = "$NVMET_DIR/$fsid.img" ] || continue
		[ -e "$ns/revalidate_size" ] || die "this kernel's nvmet has no revalidate_size"
		echo 1 >"$ns/revalidate_size"
	done
	;;
delete)
	fsid=$2 id=$3
	nqn=$(cat "$NVMET_DIR/nqn") || die "no subsystem"
	for ns in "$CFG/subsystems/$nqn/namespaces/"*; do
		[ -d "$ns" ] || continue
		if [ "$(cat "$ns/device_nguid")" = "$id" ]; then
			echo 0 >"$ns/enable"
			rmdir "$ns"
		fi
	done
	case $fsid in *[!0-9a-f]* | '') die "bad fsid $fsid" ;; esac
	rm -f "$NVMET_DIR/$fsid.img"
	;;
down)
	nqn=$(cat "$NVMET_DIR/nqn" 2>/dev/null) || exit 0
	rm -f "$CFG/ports/1/subsystems/$nqn"
	for ns in "$CFG/subsystems/$nqn/namespaces/"*; do
		[ -d "$ns" ] && { echo 0 >"$ns/enable"; rmdir "$ns"; }
	done
	rmdir "$CFG/ports/1" "$CFG/subsystems/$nqn"
	rm -f "$NVMET_DIR"/*.img "$NVMET_DIR/nqn"
	;;
*)
	die "usage: nvmet.sh modules DIR [rdma] | up NQN ADDR PORT [tcp|rdma] | create FSID ID BYTES | delete FSID ID | down"
	;;
esac
