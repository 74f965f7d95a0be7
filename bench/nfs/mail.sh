#!/bin/bash
# bench/nfs/mail.sh: small files over NFSv3 on a journalled ext4 (a fresh loop file system per
# cell), aquifer (tests/agent/nfs/nfs_serve, the agent's data path) against NFS-Ganesha (VFS FSAL)
# in the same run. Two patterns of tests/e2e/nfs_burst, each by C clients at once (one
# connection each, own folder, N/C files each):
#   mail   maildir delivery: create in tmp/, write, COMMIT, close (libnfs COMMITs again), rename
#          into new/;
#   attrs  what cp -p and tar extraction send: create, write, COMMIT, close, SETATTR of the
#          times, SETATTR of the mode.
# Per cell: files/s (all clients) and the server's fsync + fdatasync calls per file (perf stat on
# the syscall tracepoints). Two interleaved rounds, the server order alternating. Needs root
# (loop mounts), perf and nfs-ganesha (deploy/deps.sh bench). Only PIDs started here are stopped.
#   AQ_BUILDDIR=<build with nfs_serve and nfs_burst> [AQ_BUILDDIR_B=<a second build: its
#   nfs_serve as "aquiferB">] [N=1000] [CONNS="1 4"] [PATTERNS="mail attrs"] bench/nfs/mail.sh
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
B=${AQ_BUILDDIR:?AQ_BUILDDIR: a build folder}
BB=${AQ_BUILDDIR_B:-}
N=${N:-1000}
CONNS=${CONNS:-"1 4"}
PATTERNS=${PATTERNS:-"mail attrs"}
export AQ_BUILDDIR=$B
AQ_RECORD=0
# shellcheck source=../../tests/e2e/lib.sh
. "$TOP/tests/e2e/lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
command -v ganesha.nfsd >/dev/null 2>&1 || { echo "mail.sh: ganesha.nfsd missing: deploy/deps.sh bench" >&2; exit 1; }
servers="aquifer${BB:+ aquiferB} ganesha"

# cell ROUND PATTERN CONNS SERVER: one measurement, one line on stdout.
cell() {
	local round=$1 pat=$2 c=$3 srv=$4 d pid url i per t0 t1 n f sp cpids=() mine=()
	d=$(mktemp -d /tmp/aq-bench-mail-XXXXXX)
	truncate -s 512M "$d/img"
	mkfs.ext4 -q -F "$d/img"
	mkdir "$d/mnt" && mount -o loop "$d/img" "$d/mnt" || { rm -rf "$d"; return 1; }
	if [ "$srv" = ganesha ]; then
		i=${#AQ_PIDS[@]}
		bench_ganesha "$d/mnt" v3
		f=$?
		mine=("${AQ_PIDS[@]:$i}") # its rpcbind and itself
		if [ "$f" != 0 ]; then
			for i in "${mine[@]}"; do kill "$i" 2>/dev/null; wait "$i" 2>/dev/null; done
			umount "$d/mnt"
			rm -rf "$d"
			return 1
		fi
		pid=$GANESHA_PID
		chmod 777 "$d/mnt/export"
		url="nfs://127.0.0.1/export?version=3&nfsport=$GANESHA_PORT&mountport=$GANESHA_MNT_PORT"
	else
		local bin=$B
		[ "$srv" = aquiferB ] && bin=$BB
		mkdir "$d/mnt/export" && chmod 777 "$d/mnt/export"
		"$bin/tests/agent/nfs/nfs_serve" --listen 127.0.0.1:0 --port-file "$d/port" --workers 8 \
			--key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
			--export "/e=$d/mnt/export" 2>"$d/serve.log" &
		pid=$!
		AQ_PIDS+=("$pid")
		mine=("$pid")
		for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.1; done
		url="nfs://127.0.0.1/e?version=3&nfsport=$(cat "$d/port")&mountport=$(cat "$d/port")"
	fi
	# counted by tracepoints: strace stops the server at every system call, which at 20-40
	# calls a file made the files/s of the first runs (ours ~4x slower under it) meaningless
	perf stat -x, -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -o "$d/perf" -p "$pid" 2>/dev/null &
	sp=$!
	sleep 1
	per=$((N / c))
	t0=$(date +%s.%N)
	for i in $(seq "$c"); do
		"$B/tests/e2e/nfs_burst" "$pat" "$url" "/m$i" "$per" >"$d/ack$i" 2>/dev/null &
		cpids+=("$!")
	done
	wait "${cpids[@]}"
	t1=$(date +%s.%N)
	sleep 0.5
	kill -INT "$sp"
	wait "$sp" 2>/dev/null
	n=$(cat "$d"/ack* | wc -l)
	f=$(awk -F, '$3 ~ /sys_enter_f(data)?sync/ {s += $1} END {print s + 0}' "$d/perf")
	echo "round $round $pat conns $c $srv: $n files, $(echo "scale=1; $n/($t1-$t0)" | bc) files/s, $(echo "scale=2; $f/$n" | bc) fsyncs per file, load $(cut -d' ' -f1 /proc/loadavg)"
	for i in "${mine[@]}"; do
		kill "$i" 2>/dev/null
		wait "$i" 2>/dev/null
	done
	umount "$d/mnt" 2>/dev/null || { sleep 1; umount "$d/mnt"; }
	rm -rf "$d"
}

for round in 1 2; do
	order=$servers
	[ "$round" = 2 ] && order=$(echo "$servers" | tr ' ' '\n' | tac | tr '\n' ' ')
	for pat in $PATTERNS; do
		for c in $CONNS; do
			for srv in $order; do
				cell "$round" "$pat" "$c" "$srv"
			done
		done
	done
done
