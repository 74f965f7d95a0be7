#!/usr/bin/env bash
# test_smb_link.sh: SMB hard links (SET_INFO FileLinkInformation, issue 18),
# end to end: Debian smbclient's `hardlink a b` (SMB2 FileLinkInformation)
# on a volume made through the API gives the file a second name that reads
# the same bytes (the link count: test_smb_info.c); an existing target is
# refused (NT_STATUS_OBJECT_NAME_COLLISION) and so is a folder
# (NT_STATUS_FILE_IS_A_DIRECTORY), nothing made in either case; a user
# without write on the target's folder is refused by the store
# (NT_STATUS_ACCESS_DENIED, carol's folder); the watch on the folder is told
# (FILE_ACTION_ADDED). Skipped (77) without smbclient.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
aq_smb_need --smb-listen

aq_smb_cluster
aq_mutate POST "$P/volumes?volumeId=links" '{"storagePool":"sp","capacityGib":"100","shareName":"links",
  "protocols":["SMB"],"smbSettings":["CHANGE_NOTIFY"],"unixPermissions":"0777"}'
expect_jq .response.state READY "an SMB volume is READY"
aq_smb_user carol 1000 1000
aq_smb_user dave 1001 1001
smbc() { aq_smbclient links carol%Secret-1 "$1"; }

head -c 70000 /dev/urandom >"$AQ_TMP/a.bin"
ok "carol writes a" smbc "put $AQ_TMP/a.bin a"
# the watch is started once the share answers, and told of the link's name
stdbuf -oL smbclient //127.0.0.1/links -p "$SMB" -U carol%Secret-1 -m SMB3_11 \
	--option='client signing=required' -c 'notify \' >"$AQ_TMP/notify.out" 2>&1 &
WPID=$!
AQ_PIDS+=("$WPID")
sleep 2
# (smbclient 4.17 sends SMB2 SET_INFO FileLinkInformation: the class the
# server refused with INVALID_INFO_CLASS before; -d 10 does not name it)
out=$(smbc 'hardlink a b')
ok "hardlink a b succeeds" bash -c "! grep -q NT_STATUS_ <<<\"\$1\"" _ "$out"
ok "b reads back" smbc "get b $AQ_TMP/b.bin"
ok "b has a's bytes" cmp "$AQ_TMP/a.bin" "$AQ_TMP/b.bin"
# allinfo (4.17) prints no link count: FileStandardInformation's
# NumberOfLinks is checked in tests/agent/smb/test_smb_info.c
for _ in $(seq 50); do grep -q " b$" "$AQ_TMP/notify.out" && break; sleep 0.1; done
ok "the watch on the share root is told b was added" grep -qE "^0*1 +.*\bb$" "$AQ_TMP/notify.out"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null

printf 'other' >"$AQ_TMP/c.bin"
ok "carol writes c" smbc "put $AQ_TMP/c.bin c"
out=$(smbc 'hardlink a c')
ok "a link onto an existing name is OBJECT_NAME_COLLISION" grep -q NT_STATUS_OBJECT_NAME_COLLISION <<<"$out"
ok "c is left as it was" smbc "get c $AQ_TMP/c2.bin"
ok "c still holds its bytes" cmp "$AQ_TMP/c.bin" "$AQ_TMP/c2.bin"
ok "carol makes folder d" smbc 'mkdir d'
out=$(smbc 'hardlink d e')
ok "a folder is not linked (FILE_IS_A_DIRECTORY)" grep -q NT_STATUS_FILE_IS_A_DIRECTORY <<<"$out"
out=$(smbc 'ls e')
ok "and e was not made" grep -q NT_STATUS_NO_SUCH_FILE <<<"$out"
out=$(aq_smbclient links dave%Secret-1 "put $AQ_TMP/c.bin d/y")
ok "dave may not write in carol's folder d" grep -q NT_STATUS_ACCESS_DENIED <<<"$out"
out=$(aq_smbclient links dave%Secret-1 'hardlink a d/x')
echo "$out" | sed 's/^/  dave: /' | head -5
ok "dave may not link into a folder he cannot write (ACCESS_DENIED)" grep -q NT_STATUS_ACCESS_DENIED <<<"$out"
aq_smb_sanitizer_clean
aq_finish
