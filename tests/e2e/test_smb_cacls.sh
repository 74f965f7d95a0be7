#!/usr/bin/env bash
# test_smb_cacls.sh: security descriptors and EAs over SMB with the real
# tools (issue 18). smbcacls 4.17 talks to port 445 only, so the test runs
# whole (aquiferd, the agent with --smb-listen 127.0.0.1:445, the clients)
# inside a network namespace it makes (`ip netns add`, lo up) and removes at
# the end; the host's port 445 is never touched. A volume through the API,
# two SMB users of the project: carol (uid 1000, the file's owner) and dave
# (uid 1001, another group):
# - smbcacls reads the descriptor the agent synthesizes (owner
#   S-1-22-1-1000, group S-1-22-2-1000);
# - carol sets a DACL of one ACE (herself, FULL): the shelf file's mode is
#   0700, and smbcacls reads the descriptor back with Everyone's and the
#   group's ACEs holding no read or write bit;
# - dave is refused by it: his read is NT_STATUS_ACCESS_DENIED, his
#   smbcacls --set too, and nothing changed; carol still reads the file;
# - an EA on a folder (smbclient setea), acknowledged, is kept;
# - after a clean restart of the agent and after a kill -9, the ACL, the
#   refusal and the folder's EA are all still there.
# Skipped (77) unless root with ip(8), smbclient and smbcacls.
. "$(dirname "$0")/smb_lib.sh"
aq_smb_netns cacls "$0" "$@"
. "$(dirname "$0")/lib.sh"
aq_smb_need --smb-listen
aq_port_free 445 || { aq_failed "port 445 is free in namespace $AQ_NETNS"; aq_finish; }

AQ_SMB_PORT=445 aq_smb_cluster
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"unixPermissions":"0777"}'
expect_jq .response.state READY "an SMB volume is READY"
aq_smb_carol_dave
echo secret >"$AQ_TMP/s.txt"
ok "carol puts s.txt" aq_smb445 "$CAROL" "put $AQ_TMP/s.txt s.txt; mkdir eadir"
F=$(find "$SHELF" -name s.txt -type f | head -n1)
EADIR=$(find "$SHELF" -name eadir -type d | head -n1)
ok "the file and the folder are on the shelf" test -n "$F" -a -n "$EADIR"

out=$(aq_smb445_cacls "$CAROL" s.txt)
expect_contains "smbcacls reads the owner" "OWNER:S-1-22-1-1000" "$out"
expect_contains "smbcacls reads the group" "GROUP:S-1-22-2-1000" "$out"

# the ACL: carol alone, full control
out=$(aq_smb445_cacls "$CAROL" s.txt --set "ACL:S-1-22-1-1000:ALLOWED/0x0/FULL")
expect_eq "carol sets an ACL of one ACE" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
expect_eq "the shelf file's mode is 0700" 700 "$(stat -c %a "$F")"
# what an ALLOW ACE of smbcacls --numeric grants (its type printed 0): its hex mask
mask_of() { # SID OUTPUT
	sed -n "s|^ACL:$1:0/0x0/\\(0x[0-9a-f]*\\)\$|\\1|p" <<<"$2" | head -n1
}
acl_says() { # OUTPUT: the owner ACE reads and writes, Everyone's and the group's neither
	local o e g
	o=$(mask_of S-1-22-1-1000 "$1") e=$(mask_of S-1-1-0 "$1") g=$(mask_of S-1-22-2-1000 "$1")
	[ -n "$o" ] && [ -n "$e" ] && [ -n "$g" ] &&
		(((o & 0x3) == 0x3 && (e & 0x7) == 0 && (g & 0x7) == 0)) # READ_DATA|WRITE_DATA, and APPEND
}
ok "smbcacls reads it back: carol reads and writes, Everyone and the group nothing" acl_says "$(aq_smb445_cacls "$CAROL" s.txt)"

denied() { # the ACL holds: dave is refused, carol is not, nothing changed
	local out
	rm -f "$AQ_TMP/got.txt"
	out=$(aq_smb445 "$DAVE" "get s.txt $AQ_TMP/got.txt")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" && [ ! -s "$AQ_TMP/got.txt" ] || return 1
	out=$(aq_smb445_cacls "$DAVE" s.txt --set "ACL:S-1-1-0:ALLOWED/0x0/FULL")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" || return 1
	[ "$(stat -c %a "$F")" = 700 ] || return 1
	rm -f "$AQ_TMP/got.txt"
	aq_smb445 "$CAROL" "get s.txt $AQ_TMP/got.txt" >/dev/null
	cmp -s "$AQ_TMP/s.txt" "$AQ_TMP/got.txt"
}
ok "dave, denied by the DACL, gets NT_STATUS_ACCESS_DENIED (read and --set); carol reads" denied

# an EA on a folder
out=$(aq_smb445 "$CAROL" "setea eadir colour blue")
expect_eq "setea on a folder is accepted" "" "$(grep NT_STATUS <<<"$out")"
ea_kept() { # geteas prints the name and the value
	local out
	out=$(aq_smb445 "$CAROL" "geteas eadir")
	grep -q colour <<<"$out" && grep -q blue <<<"$out" || { echo "geteas: $out" >&2; return 1; }
}
ok "geteas reads the folder's EA" ea_kept

for sig in TERM KILL; do
	aq_smb445_restart "$sig" "$CAROL"
	ok "after the agent's SIG$sig and restart: smbcacls reads the same ACL" acl_says "$(aq_smb445_cacls "$CAROL" s.txt)"
	ok "after SIG$sig: dave is still denied, carol reads" denied
	ok "after SIG$sig: the folder's EA is kept" ea_kept
done
aq_smb_sanitizer_clean
aq_finish
