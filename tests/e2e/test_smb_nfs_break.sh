#!/usr/bin/env bash
# test_smb_nfs_break.sh: an NFSv3 write waits for an SMB client's oplock
# break acknowledgment (issue 18), end to end: a volume with protocols
# ["NFSV3","SMB"] and smbSettings ["OPLOCKS"], a real SMB client
# (smb_oplock_holder.py, impacket) holding a BATCH oplock on a file, and
# an NFSv3 client (libnfs, snap_tool) rewriting that file in place:
# - the SMB client gets an OPLOCK_BREAK (to NONE: the write takes its read
#   and write caching), and the NFS write completes only after the client
#   acknowledged (it waits 2 s before acking); the client then reads the NFS
#   bytes through its handle;
# - a client that never acknowledges: the NFS write goes on once the break
#   timeout (--lease-break-timeout-ms 3000 here) revoked the oplock.
# Skipped (77) without libnfs-utils, snap_tool (libnfs-dev) or python3-impacket.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
command -v nfs-cat >/dev/null || { echo "SKIP: nfs-cat missing (apt-get install libnfs-utils)"; exit 77; }
TOOL=$AQ_BUILDDIR/tests/agent/snap/snap_tool
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built (needs libnfs-dev)"; exit 77; }
/usr/bin/python3 -c 'import impacket' 2>/dev/null || { echo "SKIP: python3-impacket missing"; exit 77; }
aq_smb_need --lease-break-timeout-ms
HOLDER=$(dirname "$0")/smb_oplock_holder.py

aq_smb_cluster --lease-break-timeout-ms 3000
aq_mutate POST "$P/volumes?volumeId=dual" '{"storagePool":"sp","capacityGib":"100","shareName":"dual","protocols":["NFSV3","SMB"],
  "smbSettings":["OPLOCKS"],"unixPermissions":"0777","exportPolicy":{"rules":[{"allowedClients":"127.0.0.1",
  "accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_jq .response.state READY "a dual-protocol volume with OPLOCKS is READY"
aq_smb_user carol 1000 1000
url() { echo "nfs://127.0.0.1/dual/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
ROOT="nfs://127.0.0.1/dual?version=3&nfsport=$NFS&mountport=$NFS"
# an NFS WRITE into the existing file (1 MiB of snap_tool's seed-7 content; nfs-cp only creates)
nfs_rewrite() { timeout 60 "$TOOL" big "$ROOT" "/$1" 1 7; }
printf 'old' >"$AQ_TMP/old.txt"
# the files are carol's (made over SMB), so that she may read them back through her handle
for f in acked.txt silent.txt; do
	ok "smbclient puts $f" aq_smbclient dual carol%Secret-1 "put $AQ_TMP/old.txt $f"
done

holder_start() { # NAME ACK_DELAY OUT
	/usr/bin/python3 "$HOLDER" "$SMB" dual carol Secret-1 "$1" "$2" >"$3" 2>&1 &
	AQ_PIDS+=("$!")
	HPID=$!
	for _ in $(seq 150); do grep -q HELD "$3" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
field() { awk -v w="$2" '$1 == w { print $'"$3"'; exit }' "$1"; }

# 1. the client acknowledges 2 s after the break: the NFS write waits for it
ok "an SMB client holds a BATCH oplock on acked.txt" holder_start acked.txt 2 "$AQ_TMP/h1.out"
t0=$(date +%s.%N)
ok "an NFS write rewrites acked.txt" nfs_rewrite acked.txt
t1=$(date +%s.%N)
wait "$HPID" 2>/dev/null
ok "the SMB client got an oplock break to NONE" grep -q "^BREAK 0 " "$AQ_TMP/h1.out"
ok "its acknowledgment succeeded" grep -q "^ACKED 0x00000000 " "$AQ_TMP/h1.out"
ack=$(field "$AQ_TMP/h1.out" ACKED 3)
ok "the NFS write completed only after the acknowledgment (ack $ack, write done $t1)" \
	awk -v a="${ack:-99999999999}" -v d="$t1" 'BEGIN { exit !(d >= a) }'
ok "and it waited for it (at least 1.5 s of the 2 s the client took)" \
	awk -v s="$t0" -v d="$t1" 'BEGIN { exit !(d - s >= 1.5) }'
ok "the SMB client then reads the NFS bytes through its handle (not 'old')" \
	bash -c "grep -q '^READ ' '$AQ_TMP/h1.out' && ! grep -q '^READ old' '$AQ_TMP/h1.out'"

# 2. a client that never acknowledges: the break timeout (3 s) lets the write go
ok "an SMB client holds a BATCH oplock on silent.txt" holder_start silent.txt -1 "$AQ_TMP/h2.out"
t0=$(date +%s.%N)
ok "an NFS write rewrites silent.txt" nfs_rewrite silent.txt
t1=$(date +%s.%N)
ok "the silent client got the break" grep -q "^BREAK 0 " "$AQ_TMP/h2.out"
ok "the write waited out the break timeout (2.5 s .. 25 s)" \
	awk -v s="$t0" -v d="$t1" 'BEGIN { e = d - s; exit !(e >= 2.5 && e < 25) }'
ok "the file holds the NFS bytes (1 MiB)" bash -c "[ \"\$(nfs-cat '$(url silent.txt)' 2>/dev/null | wc -c)\" = 1048576 ]"
kill "$HPID" 2>/dev/null
wait "$HPID" 2>/dev/null
ok "the agent logged the revoked break" grep -q "not acknowledged in time: revoked" "$D/n1/agent.log"
if [ "$AQ_FAIL" -gt 0 ]; then
	for f in "$AQ_TMP"/h1.out "$AQ_TMP"/h2.out; do echo "--- $f"; cat "$f" 2>/dev/null | head -30; done
fi
aq_smb_sanitizer_clean
aq_finish
