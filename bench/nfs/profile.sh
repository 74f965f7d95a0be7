#!/usr/bin/env bash
# shellcheck disable=SC2034 # URL_* and PID_* are read by name
# bench/nfs/profile.sh: where a phase's time goes, for our NFSv3 data path and NFS-Ganesha in
# the same run: counts per operation that hardly move with the machine's load, unlike wall clock.
#
# aquifer: tests/agent/nfs/nfs_serve of AQ_BUILDDIR (the agent's data path, libaqnfs over
# agent/vol, without aquiferd and QoS; build it with `make tests/agent/nfs/nfs_serve`);
# ganesha: Debian's nfs-ganesha, VFS FSAL (bench/nfs/lib.sh), a directory on the same file
# system. For each PHASE (loadgen's letters, default "W F": 1 MiB sequential writes + COMMIT,
# the small-file cycle) and each server, three loadgen runs of the same work:
#   1. plain, with loadgen -P: the server's context switches, CPU, futex and system calls;
#   2. under strace -c -f: system calls by name, fsync/fdatasync among them;
#   3. under perf record -e sched:sched_switch -g: every time a server thread gave up the CPU,
#      by where it waited (fsync or fdatasync I/O, epoll_wait, a futex, sending, other);
# each printed per operation of the phase (small-file: creates + removes; W: its WRITE and
# COMMIT calls). strace and perf slow the run down; their counts, not their times, are the
# figures. Needs root (or perf_event_paranoid <= 1) for perf; without perf step 3 is skipped.
#
#   bench/nfs/profile.sh [PHASES="W F"] [SIZE_MIB=256] [OPS=2000]
set -u
phases=${1:-"W F"}
mib=${2:-256}
ops=${3:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH=bench/nfs/profile
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
SERVE=$AQ_BUILDDIR/tests/agent/nfs/nfs_serve
[ -x "$SERVE" ] || die "no $SERVE (make tests/agent/nfs/nfs_serve in AQ_BUILDDIR)"
command -v ganesha.nfsd >/dev/null 2>&1 || die "ganesha.nfsd missing: deploy/deps.sh bench"
command -v strace >/dev/null 2>&1 || die "strace missing"
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -o "$W/loadgen" "$HERE/loadgen.c" $(pkg-config --cflags --libs libnfs) || die "building loadgen failed"
PERF=
perf record -e sched:sched_switch -o /dev/null true >/dev/null 2>&1 && PERF=perf

mkdir -p "$W/aquifer/export"
"$SERVE" --listen 127.0.0.1:0 --port-file "$W/aquifer/port" --workers 8 \
	--key 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
	--export "/export=$W/aquifer/export" 2>>"$W/aquifer/serve.log" &
PID_aquifer=$!
AQ_PIDS+=("$PID_aquifer")
for _ in $(seq 100); do [ -s "$W/aquifer/port" ] && break; sleep 0.1; done
[ -s "$W/aquifer/port" ] || die "nfs_serve did not start: $(tail -3 "$W/aquifer/serve.log")"
p=$(cat "$W/aquifer/port")
URL_aquifer="nfs://127.0.0.1/export?version=3&nfsport=$p&mountport=$p"
bench_ganesha "$W/ganesha" v3 || die "ganesha did not start"
PID_ganesha=$GANESHA_PID
URL_ganesha="nfs://127.0.0.1/export?version=3&nfsport=$GANESHA_PORT&mountport=$GANESHA_MNT_PORT"

lg() { "$W/loadgen" -p "$1" -s "$mib" -n "$ops" "$2" "profile.dat"; }
# the operations a phase's figures are divided by: loadgen's "calls" with -P
opsof() { awk '{ for (i = 1; i < NF; i++) if ($i == "calls") print $(i + 1) }' "$1" | head -1; }

echo "bench/nfs/profile.sh \"$phases\" $mib $ops on $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
# what a sync costs depends on the file system: ext4 without a journal writes each dirty
# buffer of a sync itself (several I/O waits), with one it commits the journal
dev=$(findmnt -n -o SOURCE -T "$W" 2>/dev/null)
jbd=no
for j in /proc/fs/jbd2/"${dev##*/}"-*; do [ -e "$j" ] && jbd=yes; done
echo "file system under both exports: $(findmnt -n -o FSTYPE -T "$W") on $dev, journal (jbd2): $jbd," \
	"options $(findmnt -n -o OPTIONS -T "$W" | tr ',' '\n' | grep -E '^(data|commit|barrier|nobarrier|discard)' | paste -sd, -)"
for ph in $phases; do
	for s in aquifer ganesha; do
		pid=PID_$s url=URL_$s
		lg "$ph" "${!url}" >/dev/null 2>&1 # warm up: connections, caches
		"$W/loadgen" -p "$ph" -s "$mib" -n "$ops" -P "${!pid}" "${!url}" profile.dat >"$W/$s.$ph.plain" 2>&1 ||
			die "loadgen failed against $s: $(tail -2 "$W/$s.$ph.plain")"
		n=$(opsof "$W/$s.$ph.plain")
		echo "== $s phase $ph ($n operations)"
		head -1 "$W/$s.$ph.plain"
		strace -c -f -p "${!pid}" -o "$W/$s.$ph.strace" 2>/dev/null &
		sp=$!
		sleep 1
		lg "$ph" "${!url}" >/dev/null 2>&1
		kill -INT "$sp"
		wait "$sp"
		# strace -c lines: % time, seconds, usecs/call, calls, [errors], syscall
		awk -v n="$n" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" {
			if ($NF == "fsync" || $NF == "fdatasync") sync += $4; all += $4 }
			END { printf "  strace: %.2f syscalls per op, fsync+fdatasync %.3f per op; top:", all / n, sync / n }' \
			"$W/$s.$ph.strace"
		awk -v n="$n" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { print $4, $NF }' "$W/$s.$ph.strace" |
			sort -rn | head -6 | awk -v n="$n" '{ printf " %s %.2f", $2, $1 / n } END { print "" }'
		[ -n "$PERF" ] || continue
		perf record -q -e sched:sched_switch -g -p "${!pid}" -o "$W/$s.$ph.sw" >/dev/null 2>&1 &
		sp=$!
		sleep 1
		lg "$ph" "${!url}" >/dev/null 2>&1
		kill -INT "$sp"
		wait "$sp"
		# one line per switch: voluntary (prev_state not R) and the frames below it
		perf script -i "$W/$s.$ph.sw" 2>/dev/null | awk -v n="$n" '
			function flush() { if (!have) return; if (vol) { w = "other"
				if (st ~ / (fsync|fdatasync|__libc_fsync|fsync_buffers_list|vfs_fsync_range) /) w = "fsync I/O"
				else if (st ~ / do_epoll_wait /) w = "epoll_wait"
				else if (st ~ / futex_wait /) w = "futex"
				else if (st ~ / (__libc_sendmsg|sendmsg|__sys_sendmsg|sendfile|tcp_sendmsg) /) w = "send"
				by[w]++; all++ } have = 0 }
			/sched:sched_switch/ { flush(); have = 1; st = " "; vol = ($0 !~ /prev_state=R/); next }
			NF >= 2 { f = $2; sub(/\+0x.*/, "", f); st = st f " " }
			END { flush(); printf "  voluntary switches: %.2f per op:", all / n
			      for (w in by) printf " %s %.2f", w, by[w] / n; print "" }'
	done
done
