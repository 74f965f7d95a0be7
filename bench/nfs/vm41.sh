#!/usr/bin/env bash
# bench/nfs/vm41.sh: NFSv4.1 with the Linux kernel client (issue 19, acceptance 5): the guest
# of tests/vm mounts `vers=4.1` (and `vers=4.1,nconnect=8`) from aquifer-agent and from
# NFS-Ganesha serving v4.1 in the same run, and runs fio against each: sequential 1 MiB writes
# and reads, random 4 KiB writes and reads, depth 16 (libaio, O_DIRECT so the guest's page
# cache is out of it).
#
# aquifer: aquiferd + one agent through the API (tests/e2e/lib.sh), a MANUAL pool and an NFSV4
# volume whose QoS limit (AQ_BENCH_MIBPS) is above what this machine moves.
# ganesha: Debian's nfs-ganesha, VFS FSAL, Protocols 4 (minor versions 1), a directory beside
# the agent's shelf (same file system), on a free port of 127.0.0.1 (rpcbind in a private
# network namespace, as bench/nfs/run.sh).
# The guest reaches both through QEMU user networking (10.0.2.2 is the host's 127.0.0.1).
# Under TCG (no KVM here) the guest is the limit, not the servers: every round first measures
# the raw TCP ceiling through the same VM network (the guest's python3 sends 64 MiB to a host
# listener) and the report puts it beside the figures.
#
# RUNS rounds, the server order alternating per round; each cell once per round. Reports the
# median, min and max per cell, the ratio of the medians and the range of per-round ratios,
# the ceiling per round and the 1-minute load. Writes bench/nfs/REPORT-vm41.md (AQ_BENCH_REPORT
# elsewhere). Only PIDs started here are stopped (the QEMU one through tests/vm/lib.sh).
# AQ_BUILDDIR: the build to measure (an optimised one: ./configure CFLAGS='-O2 -g').
#
#   bench/nfs/vm41.sh [RUNS=3] [SEQ_MIB=64] [RAND_SECS=10]
set -u
runs=${1:-3}
mib=${2:-64}
rsecs=${3:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
export AQ_BUILDDIR=${AQ_BUILDDIR:-$TOP}
AQ_RECORD=0
# shellcheck source=../../tests/e2e/lib.sh
. "$TOP/tests/e2e/lib.sh"
# shellcheck source=../../tests/vm/lib.sh
. "$TOP/tests/vm/lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
AQUIFER_AGENT=$AQ_BUILDDIR/aquifer-agent
REPORT=${AQ_BENCH_REPORT:-$HERE/REPORT-vm41.md}
LIMIT=${AQ_BENCH_MIBPS:-4608}
W=$AQ_TMP
die() { echo "bench/nfs/vm41: $*" >&2; exit 1; }
LISTEN_PID=
trap '[ -n "$LISTEN_PID" ] && kill "$LISTEN_PID" 2>/dev/null; vm_cleanup; aq_cleanup' EXIT
trap 'exit 130' INT TERM
[ -x "$AQUIFER_AGENT" ] || die "no aquifer-agent in $AQ_BUILDDIR (build first, or set AQ_BUILDDIR)"
command -v ganesha.nfsd >/dev/null 2>&1 || die "ganesha.nfsd missing: deploy/deps.sh bench"
[ -z "$(vm_missing)" ] || die "missing $(vm_missing): deploy/deps.sh test"
vm_image || die "no guest image (tests/vm/README.md)"

# --- aquifer: the agent through the API, one NFSV4 volume ---
P=/v1/projects/bench/locations/loc1
aq_start "$W/aq" || die "aquiferd did not start"
TOK=$(aq_token "$W/aq" admin "" 86400)
aq_req POST "/v1/locations?locationId=loc1" '{}'
aq_req POST "/v1/projects?projectId=bench" '{}'
aq_agent_start "$W/aq" n1 loc1 "$W/shelf" "$(aq_join_token loc1)" || die "agent did not start"
aq_req POST "$P/storagePools?storagePoolId=sp" \
	'{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"1048576","qosType":"MANUAL"}'
[ "$STATUS" = 200 ] || die "pool: $STATUS $BODY"
aq_op_wait "$(printf '%s' "$BODY" | jq -r '.name // empty')" 60 >/dev/null 2>&1
aq_req POST "$P/volumes?volumeId=bench" "{\"storagePool\":\"sp\",\"capacityGib\":\"2048\",
  \"protocols\":[\"NFSV4\"],\"shareName\":\"bench\",\"throughputMibps\":$LIMIT,\"exportPolicy\":{\"rules\":[
  {\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
[ "$STATUS" = 200 ] || die "volume: $STATUS $BODY"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 60 >/dev/null
[ "$(printf '%s' "$BODY" | jq -r .response.state)" = READY ] || die "volume not READY: $BODY"
APORT=$AGENT_NFS_PORT

# --- NFS-Ganesha serving NFSv4.1 on a free port (bench/nfs/lib.sh) ---
bench_ganesha "$W/ganesha" v41 || die "ganesha did not start"
gport=$GANESHA_PORT

# --- the raw TCP ceiling's host end: counts what one connection sends ---
CPORT=$(aq_pick_port)
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4)
while True:
    c, _ = s.accept()
    while c.recv(1 << 20):
        pass
    c.close()
' "$CPORT" &
LISTEN_PID=$!

# --- the guest: every round, the ceiling, then each server (order alternating) x nconnect ---
S=$W/share
mkdir -p "$S"
cat >"$S/bench.sh" <<'GUEST'
#!/bin/bash
# In the guest: RESULT lines on stdout.
. /aqvm/env
mkdir -p /mnt/b
ceiling() { # MiB/s of one TCP stream of 64 MiB to the host's listener
	python3 -c '
import socket, sys, time
s = socket.create_connection(("10.0.2.2", int(sys.argv[1])))
buf = b"\0" * (1 << 20); t = time.time()
for _ in range(64): s.sendall(buf)
s.shutdown(socket.SHUT_WR); s.recv(1); print("%.1f" % (64 / (time.time() - t)))
' "$CPORT"
}
job() { # NAME RW BS EXTRA...: fio on /mnt/b/f, prints MiB/s and IOPS
	local name=$1 rw=$2 bs=$3
	shift 3
	fio --name="$name" --filename=/mnt/b/f --rw="$rw" --bs="$bs" --iodepth=16 --ioengine=libaio --direct=1 \
		--size="${MIB}M" "$@" --output-format=json --output=/tmp/fio.json >/dev/null 2>&1 || { echo "0 0"; return; }
	python3 -c '
import json
j = json.load(open("/tmp/fio.json"))["jobs"][0]
d = j["write"] if j["write"]["io_bytes"] else j["read"]
print("%.1f %.0f" % (d["bw"] / 1024.0, d["iops"]))'
}
for r in $(seq 1 "$RUNS"); do
	echo "RESULT ceiling - $r $(ceiling)"
	order="aquifer ganesha"
	[ $((r % 2)) = 0 ] && order="ganesha aquifer"
	for sv in $order; do
		for nc in 1 8; do
			if [ "$sv" = aquifer ]; then port=$APORT; path=/bench; else port=$GPORT; path=/export; fi
			opts="vers=4.1,port=$port,hard,timeo=600"
			[ "$nc" = 8 ] && opts="$opts,nconnect=8"
			if ! mount -t nfs -o "$opts" "10.0.2.2:$path" /mnt/b 2>/tmp/mount.err; then
				echo "MOUNTFAIL $sv $nc $(cat /tmp/mount.err)"
				continue
			fi
			rm -f /mnt/b/f
			echo "RESULT $sv $nc $r seqwrite $(job sw write 1M)"
			echo "RESULT $sv $nc $r seqread $(job sr read 1M)"
			echo "RESULT $sv $nc $r randwrite $(job rw randwrite 4k --runtime="$SECS" --time_based)"
			echo "RESULT $sv $nc $r randread $(job rr randread 4k --runtime="$SECS" --time_based)"
			rm -f /mnt/b/f
			umount /mnt/b
		done
	done
done
exit 0
GUEST
cat >"$S/env" <<EOF
APORT=$APORT
GPORT=$gport
CPORT=$CPORT
RUNS=$runs
MIB=$mib
SECS=$rsecs
EOF
echo 'bash /aqvm/bench.sh' >"$S/cmd"
load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$(date +%s)
vm_run "$S" $((runs * 2400)) || die "the guest run failed ($?): $(tail -5 "$S/stderr" 2>/dev/null)"
secs=$(($(date +%s) - t0))
load1=$(cut -d' ' -f1 /proc/loadavg)
grep -E '^(RESULT|MOUNTFAIL)' "$S/stdout" >"$W/results" || die "no results: $(tail -20 "$S/stdout" "$S/stderr")"
grep MOUNTFAIL "$W/results" && die "a mount failed"

# --- the report ---
python3 - "$W/results" "$runs" "$mib" "$rsecs" "$load0" "$load1" "$secs" "${VM_ACCEL:-?}" >"$REPORT" <<'PY'
import sys, statistics as st
res, runs, mib, rsecs, load0, load1, secs, accel = sys.argv[1:]
cells, ceil = {}, []
for line in open(res):
    f = line.split()
    if f[1] == "ceiling":
        ceil.append(float(f[4]))
        continue
    sv, nc, r, job, mbs, iops = f[1], f[2], int(f[3]), f[4], float(f[5]), float(f[6])
    cells.setdefault((nc, job), {}).setdefault(sv, {})[r] = (mbs, iops)
print("# NFSv4.1 with the Linux kernel client in the VM: aquifer-agent vs NFS-Ganesha\n")
print("Command: `AQ_BUILDDIR=<build> bench/nfs/vm41.sh %s %s %s` (%s rounds, server order alternating;" % (runs, mib, rsecs, runs))
print("fio in the tests/vm guest (2 vCPUs, %s), libaio, O_DIRECT, depth 16: sequential 1 MiB over %s MiB," % (accel.upper(), mib))
print("random 4 KiB for %s s). Load average (1 min) %s at the start, %s at the end; %s s in all.\n" % (rsecs, load0, load1, secs))
print("Raw TCP ceiling through the same VM network (one stream, guest to host, 64 MiB), per round: %s MiB/s." % ", ".join("%.1f" % c for c in ceil))
print("Under TCG the guest is the limit: figures near the ceiling say nothing about the servers.\n")
print("| nconnect | job | unit | aquifer median (min-max) | ganesha median (min-max) | ratio of medians | ratio range |")
print("|---|---|---|---|---|---|---|")
for job in ("seqwrite", "seqread", "randwrite", "randread"):
    for nc in ("1", "8"):
        c = cells.get((nc, job), {})
        a, g = c.get("aquifer", {}), c.get("ganesha", {})
        k = 0 if job.startswith("seq") else 1
        unit = "MiB/s" if k == 0 else "IOPS"
        def col(d):
            v = [x[k] for x in d.values()]
            return ("%.1f (%.1f-%.1f)" % (st.median(v), min(v), max(v))) if v else "-"
        ma = st.median([x[k] for x in a.values()]) if a else 0
        mg = st.median([x[k] for x in g.values()]) if g else 0
        rr = [a[r][k] / g[r][k] for r in a if r in g and g[r][k]]
        ratio = ("%.2fx" % (ma / mg)) if mg else "-"
        rng = ("%.2f-%.2f" % (min(rr), max(rr))) if rr else "-"
        print("| %s | %s | %s | %s | %s | %s | %s |" % ("off" if nc == "1" else "8", job, unit, col(a), col(g), ratio, rng))
PY
cat "$REPORT"
