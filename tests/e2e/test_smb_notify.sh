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
command -v smbclient >/dev/null || { echo "SKIP: smbclient missing (apt-get install smbclient)"; exit 77; }
command -v nfs-cp >/dev/null || { echo "SKIP: nfs-cp missing (apt-get install libnfs-utils)"; exit 77; }
"$AQUIFER_AGENT" --help 2>&1 | grep -q -- --smb-listen || { echo "SKIP: the agent has no SMB server"; exit 77; }

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
SMB=$(aq_pick_port)
AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 10000 || { aq_failed "agent starts"; aq_finish; }
NFS=$AGENT_NFS_PORT
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
vol() { # NAME SETTINGS
	printf '{"storagePool":"sp","capacityGib":"100","shareName":"%s","protocols":["NFSV3","SMB"],"smbSettings":%s,
	  "unixPermissions":"0777","exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE",
	  "squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "$2"
}
aq_mutate POST "$P/volumes?volumeId=watched" "$(vol watched '["CHANGE_NOTIFY"]')"
expect_jq .response.state READY "a volume with smbSettings CHANGE_NOTIFY is READY"
aq_mutate POST "$P/volumes?volumeId=quiet" "$(vol quiet '[]')"
expect_jq .response.state READY "a volume without it is READY"
aq_req POST "$P/smbUsers?smbUserId=carol" '{"password":"Secret-1","uid":"1000","gid":"1000"}'
expect_status 200 "the SMB user carol"
INTENT=$D/n1/state/intent.json
for _ in $(seq 100); do
	jq -e '[.smbUsers[].name] | index("carol")' "$INTENT" >/dev/null 2>&1 && break
	sleep 0.1
done
ok "the node got the user" jq -e '[.smbUsers[].name] | index("carol")' "$INTENT" >/dev/null

smbc() { # SHARE COMMANDS
	smbclient "//127.0.0.1/$1" -p "$SMB" -U "carol%Secret-1" -m SMB3_11 --option='client signing=required' -c "$2" 2>&1
}
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

out=$(timeout 20 smbclient "//127.0.0.1/quiet" -p "$SMB" -U "carol%Secret-1" -m SMB3_11 \
	--option='client signing=required' -c 'notify \' 2>&1)
ok "a share without CHANGE_NOTIFY answers NT_STATUS_NOT_IMPLEMENTED" grep -q NT_STATUS_NOT_IMPLEMENTED <<<"$out"
aq_sanitizer_clean "$D"
ok "no sanitizer report in the agent's log" \
	bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n1/agent.log'"
aq_finish
