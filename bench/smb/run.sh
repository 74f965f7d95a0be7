#!/usr/bin/env bash
# bench/smb/run.sh: the agent's SMB3 server against Samba smbd on the same
# folder, same client, same user/password, same signing (issue 18, acceptance 7).
#
#   [AQ_BUILDDIR=DIR] [AQ_BUILDDIR_B=DIR2] bench/smb/run.sh [MIB=256] [ROUNDS=3] [FILES=500]
#
# agent: one standalone aquifer-agent (tests/agent/tier/agent.sh, AQ_BUILDDIR's
# build) serving volume tv over SMB 3.1.1 as user sb (uid 0). Our server
# always requires signing (the product's default for a GCNV-style share).
# smbd: Debian's Samba on 127.0.0.1 serving the agent's volume folder as user
# nobody with the same password and "server signing = mandatory", so both
# servers sign every message. The client is smbclient -m SMB3 with
# --client-protection=sign (the "signed" rows) or =encrypt (the "sealed" rows:
# SMB3 transform encryption on both servers, whatever cipher each negotiates).
# AQ_BUILDDIR_B adds a second agent of another build (its own folder, the same
# files), "agentB", to every round: an A/B of two builds in one invocation.
#
# Phases, each round running every server once (the order rotating per round):
#   read   smbclient get of an MIB MiB file to /dev/null; the file is hot (in the
#          page cache: it is read once with cat before the rounds)
#   write  smbclient put of an MIB MiB file of random bytes (hot in the local page
#          cache), removed after each round by a separate, untimed smbclient
#   small  FILES 4 KiB files put (mput, prompt off) into a new folder and then
#          removed (del, rmdir), one smbclient session; files/s over the wall clock
#   depth  4 smbclient get of the MIB MiB file at once (4 connections, each with
#          smbclient's own pipelined reads); the sum, MiB/s over the wall clock
# read and write give smbclient's own transfer rate (bytes over the transfer's
# time, without connect and session setup). Each sample is printed with the
# 1-minute load average and the agent's CPU time (user + system, ms) it took;
# then medians, min-max and agent/smbd ratios (markdown), and the agents' median
# CPU ms per sample (less moved by the load of a shared machine than MiB/s).
# Only the PIDs started here are stopped. PERF=1 / STRACE=1: after the rounds,
# `perf record -g` of the agent during one get, and `strace -c -f` of one get
# from each server (syscalls per MiB). PROF_OP=put profiles a signed put of the
# MIB MiB file instead of a get (the file removed after it); PROF_OP=small the
# small phase's session (FILES files put and removed; figures per file, the
# client's syscalls too: its sends are the requests, a compound being one);
# PROF_PROT=encrypt profiles a sealed one instead of a signed one.
set -u
mib=${1:-256} rounds=${2:-3} files=${3:-500}
BENCH=bench/smb
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
BUILD_A=$BENCH_BUILDDIR
. "$AQ_SRC/tests/agent/tier/agent.sh"
. "$AQ_SRC/tests/lib/smbd.sh"
command -v smbclient >/dev/null || die "smbclient missing"
FSID=00000000000000f3
PASS=Bench-Smb-1
NTHASH=$(printf '%s' "$PASS" | iconv -t utf-16le | openssl dgst -md4 -provider legacy -provider default | sed 's/.*= //')
DEPTH=${AQ_BENCH_DEPTH:-4}

# serve NAME BUILDDIR: an agent of BUILDDIR as node NAME with volume tv over SMB;
# sets PORT_<NAME>, PID_<NAME>, DIR_<NAME> (the volume's folder).
serve() {
	local smb
	smb=$(aq_pick_port) || die "no free port"
	AGENT=$2/aquifer-agent
	[ -x "$AGENT" ] || die "no aquifer-agent in $2 (build first, or set AQ_BUILDDIR)"
	AGENT_ARGS=(--smb-listen "127.0.0.1:$smb")
	agent_start "$(printf %s "$1" | tr A-Z a-z)" # node names are lowercase
	push "$(intent PAUSED DEFAULT | jq -c --arg h "$NTHASH" '.volumes[0] += {protocols: ["NFSV3", "SMB"]}
	  | .smbUsers = [{project: "p", name: "sb", ntHash: $h, uid: 0, gid: 0}]')"
	for _ in $(seq 100); do
		[ -d "$SHELF/volumes/$FSID" ] && break
		sleep 0.1
	done
	[ -d "$SHELF/volumes/$FSID" ] || die "$1: volume folder not made"
	printf -v "PORT_$1" %s "$smb"
	printf -v "PID_$1" %s "$AGENT_PID"
	printf -v "DIR_$1" %s "$SHELF/volumes/$FSID"
}
SERVERS="agent smbd"
serve agent "$BUILD_A"
if [ -n "${AQ_BUILDDIR_B:-}" ]; then
	serve agentB "$AQ_BUILDDIR_B"
	SERVERS="agent agentB smbd"
fi
# smbd on the agent's folder, as nobody: the folders must let it in
chmod o+rx "$W" "$W/agent" "$DIR_agent/../.." "$DIR_agent/.." && chmod o+rwx "$DIR_agent"
SPORT=$(aq_pick_port)
aq_smbd_start "$W/samba" "$SPORT" tv "$DIR_agent" "$PASS" no "server signing = mandatory" ||
	die "smbd did not start: $(tail -3 "$W/samba/smbd.out")"
PORT_smbd=$SPORT PID_smbd=$AQ_SMBD_PID

# smb WHO PROT CMDS: one smbclient session on WHO's share; output in $W/out
smb() {
	local port user=sb v
	v=PORT_$1; port=${!v}
	[ "$1" = smbd ] && user=nobody
	${SMB_WRAP:-} smbclient "//127.0.0.1/tv" -p "$port" -U "$user%$PASS" -m SMB3 --client-protection="$2" -c "$3" >"$W/out.$1.$$" 2>&1
	local rc=$?
	cp "$W/out.$1.$$" "$W/out"
	[ $rc = 0 ] && ! grep -q NT_STATUS "$W/out" || { echo "bench/smb: $1: $3: $(grep -m2 NT_STATUS "$W/out" || tail -2 "$W/out")" >&2; return 1; }
}
# rate: smbclient's own "(N kb/s)" (bytes per ms) of its last transfer, as MiB/s
rate() { sed -n 's/.*(\([0-9.]*\) \(kb\/s\|KiloBytes\/sec\)).*/\1/p' "$W/out" | tail -1 | awk '{ printf "%.1f", $1 * 1000 / 1048576 }'; }
now() { date +%s.%N; }
# cpu_ms WHO BASE: an agent's user+system CPU in ms since BASE (smbd serves each
# client in a child process: "-")
tick=$(getconf CLK_TCK)
cpu_ms() {
	local v=PID_$1
	[ "$1" = smbd ] && { echo -; return; }
	awk -v b="$2" -v t="$tick" '{ sub(/.*\) /, ""); printf "%d", ($12 + $13) * 1000 / t - b }' "/proc/${!v}/stat"
}
load() { cut -d' ' -f1 /proc/loadavg; }

head -c $((mib << 20)) /dev/urandom >"$W/seq.bin" || die "no local file"
mkdir -p "$W/small"
for i in $(seq "$files"); do head -c 4096 /dev/urandom >"$W/small/f$i"; done
for s in $SERVERS; do
	[ "$s" = smbd ] && continue
	smb "$s" sign "lcd $W; put seq.bin seq.bin" || die "$s: the read file was not written"
	v=DIR_$s
	cat "${!v}/seq.bin" >/dev/null
done

# sample PHASE PROT WHO ROUND: one figure, appended to $W/samples
sample() {
	local ph=$1 prot=$2 who=$3 r=$4 t0 t1 val i c0
	c0=$(cpu_ms "$who" 0)
	case $ph in
	read)
		smb "$who" "$prot" "get seq.bin /dev/null" || return 1
		val=$(rate) ;;
	write)
		smb "$who" "$prot" "lcd $W; put seq.bin w.$who.bin" || return 1
		val=$(rate)
		smb "$who" "$prot" "del w.$who.bin" || return 1 ;;
	small)
		t0=$(now)
		smb "$who" "$prot" "mkdir s.$who; cd s.$who; prompt; lcd $W/small; mput f*; del f*; cd ..; rmdir s.$who" || return 1
		t1=$(now)
		val=$(echo "$t0 $t1" | awk -v n="$files" '{ printf "%.1f", n / ($2 - $1) }') ;;
	depth)
		t0=$(now)
		for i in $(seq "$DEPTH"); do smb "$who" "$prot" "get seq.bin /dev/null" & done
		local bad=0
		for i in $(seq "$DEPTH"); do wait -n || bad=1; done
		[ $bad = 0 ] || return 1
		t1=$(now)
		val=$(echo "$t0 $t1" | awk -v m="$mib" -v d="$DEPTH" '{ printf "%.1f", d * m / ($2 - $1) }') ;;
	esac
	echo "$ph $prot $who $r $val $(load) $(cpu_ms "$who" "$c0")" | tee -a "$W/samples"
}

# prof WHO: the operation profiled (PROF_OP: get, or put; PROF_PROT: sign, or encrypt)
prof() {
	local pr=${PROF_PROT:-sign}
	if [ "${PROF_OP:-get}" = small ]; then
		SMB_WRAP="strace -c -f -o $W/strace.client.$1" smb "$1" "$pr" "mkdir p.$1; cd p.$1; prompt; lcd $W/small; mput f*; del f*; cd ..; rmdir p.$1"
	elif [ "${PROF_OP:-get}" = put ]; then
		smb "$1" "$pr" "lcd $W; put seq.bin p.$1.bin"; smb "$1" "$pr" "del p.$1.bin"
	else
		smb "$1" "$pr" "get seq.bin /dev/null"
	fi
}
PHASES=${AQ_BENCH_PHASES:-"read:sign write:sign small:sign depth:sign read:encrypt write:encrypt"}
echo "# bench/smb: $mib MiB, $rounds rounds, $files small files, depth $DEPTH, $(nproc) cores, $(date -u '+%F %H:%M UTC')"
echo "# agent $BUILD_A${AQ_BUILDDIR_B:+, agentB $AQ_BUILDDIR_B}; smbd $(smbd --version)"
echo "# phase protection server round value load1 cpu_ms"
for r in $(seq "$rounds"); do
	# the order rotates: each server goes first in as many rounds (the first
	# put of a phase is the slow one on a machine short of free pages)
	set -- $SERVERS
	k=$(((r - 1) % $#))
	order="${*:k+1} ${*:1:k}"
	for pp in $PHASES; do
		for who in $order; do sample "${pp%%:*}" "${pp##*:}" "$who" "$r" || die "$pp $who failed"; done
	done
done

# the table: per phase and server the median (min-max), then the ratios
awk -v servers="$SERVERS" '
function med(k,   n, i, j, t, a) { n = split(v[k], a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	lo[k] = a[1]; hi[k] = a[n]; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ k = $1 " " $2 SUBSEP $3; v[k] = v[k] " " $5; if (!(($1 " " $2) in seen)) { seen[$1 " " $2] = 1; rows[++nr] = $1 " " $2 }
  l = $1 " " $2; if (!(l in lmin) || $6 < lmin[l]) lmin[l] = $6; if (!(l in lmax) || $6 > lmax[l]) lmax[l] = $6 }
END {
	ns = split(servers, s, " ")
	printf "\n| phase | unit |"; for (i = 1; i <= ns; i++) printf " %s median (min-max) |", s[i]
	printf " agent/smbd |%s load1 |\n|---|---|", (ns == 3 ? " agent/agentB |" : ""); for (i = 1; i <= ns + 2 + (ns == 3); i++) printf "---|"; printf "\n"
	for (r = 1; r <= nr; r++) {
		split(rows[r], p, " "); unit = p[1] == "small" ? "files/s" : "MiB/s"
		printf "| %s %s | %s |", p[1], p[2] == "sign" ? "signed" : "sealed", unit
		for (i = 1; i <= ns; i++) { k = rows[r] SUBSEP s[i]; m[i] = med(k); printf " %.1f (%.1f-%.1f) |", m[i], lo[k], hi[k] }
		printf " %.2fx |", m[1] / m[ns]; if (ns == 3) printf " %.2fx |", m[1] / m[2]
		printf " %s-%s |\n", lmin[rows[r]], lmax[rows[r]]
	}
}' "$W/samples"
awk -v servers="$SERVERS" '$7 != "-" { k = $1 " " $2 SUBSEP $3; v[k] = v[k] " " $7; if (!(($1 " " $2) in seen)) { seen[$1 " " $2] = 1; rows[++nr] = $1 " " $2 } }
function med(k,   n, i, j, t, a) { n = split(v[k], a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
END { ns = split(servers, s, " "); printf "\n| phase | agent CPU ms, median |%s\n|---|---|%s\n", (ns == 3 ? " agentB | agent/agentB |" : ""), (ns == 3 ? "---|---|" : "")
	for (r = 1; r <= nr; r++) { a = med(rows[r] SUBSEP "agent"); printf "| %s | %d |", rows[r], a
		if (ns == 3) { b = med(rows[r] SUBSEP "agentB"); printf " %d | %.2fx |", b, b ? a / b : 0 }
		printf "\n" } }' "$W/samples"

if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
	perf record -q --call-graph dwarf,16384 -o "$W/perf.data" -p "$PID_agent" 2>/dev/null &
	pp=$!
	sleep 1
	prof agent
	kill -INT "$pp"; wait "$pp" 2>/dev/null
	echo "# perf: the agent during one ${PROF_PROT:-sign} ${PROF_OP:-get} (self time by symbol)"
	perf report -i "$W/perf.data" --stdio --no-children --sort symbol 2>/dev/null | grep -v "^#" | grep -v "^$" | grep '%' | head -"${PERF_LINES:-25}"
fi
if [ "${STRACE:-0}" = 1 ] && command -v strace >/dev/null; then
	for who in $SERVERS; do
		v=PID_$who
		strace -c -f -p "$(ls "/proc/${!v}/task" | paste -sd, -)" -o "$W/strace.$who" 2>/dev/null &
		sp=$!
		sleep 1
		prof "$who"
		sleep 0.5
		kill -INT "$sp"; wait "$sp" 2>/dev/null
		per=$mib unit=MiB
		[ "${PROF_OP:-get}" = small ] && per=$files unit=file
		awk -v m="$per" -v u="$unit" -v w="$who" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" { n += $4; if ($NF ~ /^(read|pread64|preadv|preadv2|pwrite64|pwritev|openat|close|fstat|newfstatat|statx|fsync|fdatasync|sendmsg|sendto|writev|write|recvfrom|recvmsg|epoll_wait|epoll_ctl|sendfile|splice|futex|mmap|munmap|madvise|brk|io_uring_enter|poll|ppoll)$/ || (u == "file" && $4 / m >= 0.2)) printf "  %s %s: %.2f per %s\n", w, $NF, $4 / m, u }
		  END { printf "strace %s: %d syscalls, %.1f per %s\n", w, n, n / m, u }' "$W/strace.$who"
		[ -f "$W/strace.client.$who" ] && awk -v m="$per" -v w="$who" '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF ~ /^(sendmsg|writev|write|sendto)$/ { printf "  smbclient to %s, %s: %.2f per file\n", w, $NF, $4 / m }' "$W/strace.client.$who"
	done
fi
