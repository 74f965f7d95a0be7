#!/usr/bin/env bash
# test_smb_notify.sh: SMB2 CHANGE_NOTIFY fed by the volume store (issue 18),
# end to end: a volume created through the API with protocols
# ["NFSV3","SMB"] and smbSettings ["CHANGE_NOTIFY"]; smbclient's `notify`
# waits on the share's root, and a file written over NFSv3 (libnfs nfs-cp)
# completes it with the file's name (FILE_ACTION_ADDED), as does a folder
# made over SMB by another client. A volume without the setting answers
# CHANGE_NOTIFY with NT_STATUS_NOT_IMPLEMENTED (Samba's "change notify = no").
# Skipped (77) without smbclient or libnfs-utils.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
command -v nfs-cp >/dev/null || { echo "SKIP: nfs-cp missing (apt-get install libnfs-utils)"; exit 77; }
aq_smb_need --smb-listen

aq_smb_cluster
vol() { # NAME SETTINGS
	printf '{"storagePool":"sp","capacityGib":"100","shareName":"%s","protocols":["NFSV3","SMB"],"smbSettings":%s,
	  "unixPermissions":"0777","exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE",
	  "squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "$2"
}
aq_mutate POST "$P/volumes?volumeId=watched" "$(vol watched '["CHANGE_NOTIFY"]')"
expect_jq .response.state READY "a volume with smbSettings CHANGE_NOTIFY is READY"
aq_mutate POST "$P/volumes?volumeId=quiet" "$(vol quiet '[]')"
expect_jq .response.state READY "a volume without it is READY"
aq_smb_user carol 1000 1000

smbc() { aq_smbclient "$1" carol%Secret-1 "$2"; } # SHARE COMMANDS
# smbclient's `notify DIR` prints "ACTION NAME" per change until it is stopped
watch_start() { # SHARE OUT
	# line-buffered: smbclient's stdout is a file here
	stdbuf -oL smbclient "//127.0.0.1/$1" -p "$SMB" -U "carol%Secret-1" -m SMB3_11 \
		--option='client signing=required' -c 'notify \' >"$2" 2>&1 &
	WPID=$!
	AQ_PIDS+=("$WPID")
}
wait_for() { # FILE PATTERN
	for _ in $(seq 150); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

watch_start watched "$AQ_TMP/n1.out"
head -c 4096 /dev/urandom >"$AQ_TMP/f.bin"
# the watch is live once a probe file shows (a loaded machine may take a while
# to log smbclient in); from then on the open keeps every change
for i in $(seq 60); do
	nfs-cp "$AQ_TMP/f.bin" "nfs://127.0.0.1/watched/probe-$i?version=3&nfsport=$NFS&mountport=$NFS" >/dev/null 2>&1
	grep -q "probe-" "$AQ_TMP/n1.out" 2>/dev/null && break
	sleep 0.5
done
ok "smbclient's notify is answered (a probe file written over NFS)" grep -q "probe-" "$AQ_TMP/n1.out"
ok "nfs-cp writes a file over NFSv3" \
	nfs-cp "$AQ_TMP/f.bin" "nfs://127.0.0.1/watched/from-nfs.txt?version=3&nfsport=$NFS&mountport=$NFS"
ok "the SMB watcher is told: the file was added over NFS" wait_for "$AQ_TMP/n1.out" "from-nfs.txt"
ok "as FILE_ACTION_ADDED" grep -qE "^0*1 +.*from-nfs.txt" "$AQ_TMP/n1.out"
out=$(smbc watched 'mkdir from-smb')
ok "another SMB client's mkdir is seen too" wait_for "$AQ_TMP/n1.out" "from-smb"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null

out=$(AQ_SMB_TIMEOUT=20 smbc quiet 'notify \')
ok "a share without CHANGE_NOTIFY answers NT_STATUS_NOT_IMPLEMENTED" grep -q NT_STATUS_NOT_IMPLEMENTED <<<"$out"
aq_smb_sanitizer_clean
aq_finish
