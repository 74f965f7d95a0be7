#!/usr/bin/env bash
# bench/frames/smb_read.sh: SMB READ throughput of aquifer-agent against a
# stock Samba smbd serving the same folder, interleaved (issue 23, step 2).
#
#   [AQ_BUILDDIR=DIR] bench/frames/smb_read.sh [MIB=512] [RUNS=3] [STRACE=0]
#
# One standalone aquifer-agent (tests/agent/tier/agent.sh) serves volume tv
# over SMB3 (user fr); smbd on 127.0.0.1 serves the same folder (user
# nobody, signing as the client offers). A file of MIB MiB (written over
# NFS, then in the page cache: a hot read) is fetched with `smbclient get` to
# /dev/null from each, RUNS times, alternating agent and smbd; each line
# gives MiB/s and the 1-minute load. STRACE=1 also counts the syscalls of
# one more get from each server (strace -c -f), per MiB.
set -u
here=$(cd "$(dirname "$0")" && pwd)
mib=${1:-512} runs=${2:-3} st=${3:-0}
export AQ_BUILDDIR=${AQ_BUILDDIR:-$(cd "$here/../.." && pwd)}
. "$here/../../tests/e2e/lib.sh"
AQ_RECORD=0
. "$AQ_SRC/tests/agent/tier/agent.sh"
trap 'aq_cleanup' EXIT
SMBD=$(command -v smbd || echo /usr/sbin/smbd)
SMB=$(aq_pick_port)
AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
FSID=00000000000000f2
PASS=Frames-1
NTHASH=$(printf '%s' "$PASS" | iconv -t utf-16le | openssl dgst -md4 -provider legacy -provider default | sed 's/.*= //')

agent_start fr
push "$(intent PAUSED DEFAULT | jq -c --arg h "$NTHASH" '.volumes[0] += {protocols: ["NFSV3", "SMB"]}
  | .smbUsers = [{project: "p", name: "fr", ntHash: $h, uid: 0, gid: 0}]')"
"$AQ_BUILDDIR/bench/frames/frames" -W -n 1 -f "$mib" -s 1 "$(url '')" >/dev/null || exit 1
FILE=$(find "$SHELF" -name 'frame*' -type f | head -1)
[ -n "$FILE" ] || { echo "no file written" >&2; exit 1; }
REL=${FILE#"$SHELF"/volumes/"$FSID"/}
SHARE=$SHELF/volumes/$FSID
chmod o+rx "$AQ_TMP" "$SHELF" "$SHELF/volumes" && chmod -R a+rX "$SHELF/volumes"
cat "$FILE" >/dev/null

. "$AQ_SRC/tests/lib/smbd.sh"
S=$AQ_TMP/samba
SPORT=$(aq_pick_port)
aq_smbd_start "$S" "$SPORT" tv "$SHARE" "$PASS" yes
SMBD_PID=$AQ_SMBD_PID

# get WHO: one smbclient get of the file from the agent or smbd; prints MiB/s
get() {
	local port=$SMB user=fr t0 t1
	[ "$1" = smbd ] && port=$SPORT user=nobody
	t0=$(date +%s.%N)
	smbclient "//127.0.0.1/tv" -p "$port" -U "$user%$PASS" -m SMB3 -c "get $REL /dev/null" >"$AQ_TMP/get.out" 2>&1 ||
		{ echo "get from $1 failed: $(tail -2 "$AQ_TMP/get.out")" >&2; return 1; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk -v m="$mib" '{ printf "%.1f", m / ($2 - $1) }'
}
echo "# smb_read: $mib MiB hot, smbclient get, agent $AQ_BUILDDIR, $(nproc) cores"
for i in $(seq "$runs"); do
	for who in agent smbd; do
		echo "run $i $who $(get $who) MiB/s load $(cut -d' ' -f1 /proc/loadavg)"
	done
done
if [ -n "${PERF:-}" ] && command -v perf >/dev/null; then # PERF=1: where the agent's CPU goes in one get
	perf record -q -g -o "$AQ_TMP/perf.data" -p "$AGENT_PID" 2>/dev/null &
	pp=$!
	sleep 1
	get agent >/dev/null
	kill -INT "$pp"; wait "$pp" 2>/dev/null
	perf report -i "$AQ_TMP/perf.data" --stdio --no-children --sort symbol 2>/dev/null | grep -v "^#" | grep -v "^$" | head -${PERF_LINES:-15}
fi
if [ "$st" = 1 ] && command -v strace >/dev/null; then
	for who in agent smbd; do
		pid=$AGENT_PID
		[ "$who" = smbd ] && pid=$SMBD_PID
		# every thread of it (the agent's SMB loop is one of many)
		strace -c -f -p "$(ls "/proc/$pid/task" | paste -sd, -)" -o "$AQ_TMP/strace.$who" 2>/dev/null &
		sp=$!
		sleep 1
		get "$who" >/dev/null
		sleep 0.5
		kill -INT "$sp"; wait "$sp" 2>/dev/null
		# columns: % time, seconds, usecs/call, calls, [errors,] syscall
		awk -v m="$mib" -v w="$who" '$1 ~ /^[0-9.]+$/ && NF >= 5 { n += $4; if ($NF ~ /^(read|pread64|sendmsg|sendto|writev|write|recvfrom|recvmsg|epoll_wait|epoll_ctl|sendfile|splice|futex|mmap|munmap|madvise|brk)$/) printf "  %s %s: %.2f per MiB\n", w, $NF, $4 / m }
		  END { printf "strace %s: %d syscalls, %.1f per MiB\n", w, n, n / m }' "$AQ_TMP/strace.$who"
	done
fi
