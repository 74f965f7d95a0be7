#!/usr/bin/env bash
# test_smb_ntfs.sh: securityStyle NTFS with the real tools (issue 18):
# Windows security descriptors stored per object and enforced by the SMB
# server. Like test_smb_cacls.sh, it runs whole (aquiferd, the agent with
# --smb-listen 127.0.0.1:445, smbclient, smbcacls) in a network namespace
# of its own. An SMB-only NTFS volume made without unixPermissions, carol
# (uid 1000) and dave (uid 1001):
# - the volume's root, with no descriptor set, shows Everyone (S-1-1-0)
#   FILE_ALL_ACCESS with OBJECT_INHERIT|CONTAINER_INHERIT (0x3), control
#   0x8404 (what ANF and GCNV give a new NTFS volume's root); a file carol
#   puts in the root inherits it (flag INHERITED, 0x10) and dave reads and
#   replaces it;
# - a file carol puts in her folder priv, whose DACL (set by her, carol
#   only) hands nothing down, has her as owner and Windows' default DACL
#   (MS-DTYP 2.5.3.4, as smbd's acl_xattr "default acl style = windows"):
#   carol and SYSTEM (S-1-5-18) FILE_ALL_ACCESS, control 0x8004, so dave's
#   get is ACCESS_DENIED; carol adds an ALLOW READ for dave and dave reads;
#   carol adds a DENY READ ACE for dave: dave's get is
#   NT_STATUS_ACCESS_DENIED, carol still reads, and the DENY, a SID no
#   POSIX mode could hold, reads back with smbcacls;
# - a folder with inheritable ACEs (OI|CI for dave) set by smbcacls --set,
#   whose DACL is not AUTO_INHERITED: a new file in it shows dave's ACE
#   without the INHERITED flag (as Windows and smbd: the ACEs look set by
#   hand), and dave reads it; the same ACEs set in SDDL with the DACL flags
#   AR and AI (AUTO_INHERIT_REQ, AUTO_INHERITED): the new file's ACEs carry
#   INHERITED (0x10) and its DACL AUTO_INHERITED (control 0x8404);
# - carol (Everyone's FILE_ALL_ACCESS includes WRITE_DAC) sets the root's
#   DACL: carol FULL and dave READ, inherited; that one rules: dave may no
#   longer put a file in the root;
# - after a clean restart and after a kill -9 of the agent, the DENY, the
#   inherited ACEs and the root's DACL are still there and dave is still
#   refused.
# Skipped (77) unless root with ip(8), smbclient and smbcacls.
. "$(dirname "$0")/smb_lib.sh"
aq_smb_netns ntfs "$0" "$@"
. "$(dirname "$0")/lib.sh"
aq_smb_need --smb-listen
aq_port_free 445 || { aq_failed "port 445 is free in namespace $AQ_NETNS"; aq_finish; }

AQ_SMB_PORT=445 aq_smb_cluster
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"securityStyle":"NTFS"}'
expect_jq .response.state READY "an NTFS SMB volume is READY"
aq_smb_carol_dave
echo secret >"$AQ_TMP/s.txt"
reads() { # USER%PASS FILE: the get works and brings the bytes
	rm -f "$AQ_TMP/got.txt"
	aq_smb445 "$1" "get $2 $AQ_TMP/got.txt" >/dev/null
	cmp -s "$AQ_TMP/s.txt" "$AQ_TMP/got.txt"
}
out=$(aq_smb445_cacls "$CAROL" /)
expect_contains "the root's DACL: Everyone FILE_ALL_ACCESS, OI|CI" "ACL:S-1-1-0:0/0x3/0x001f01ff" "$out"
expect_contains "the root's control: DACL_AUTO_INHERITED" "CONTROL:0x8404" "$out"
ok "carol puts r.txt in the root" aq_smb445 "$CAROL" "put $AQ_TMP/s.txt r.txt"
out=$(aq_smb445_cacls "$CAROL" r.txt)
expect_contains "r.txt's owner: carol" "OWNER:S-1-22-1-1000" "$out"
expect_contains "r.txt inherits Everyone FILE_ALL_ACCESS (INHERITED)" "ACL:S-1-1-0:0/0x10/0x001f01ff" "$out"
ok "dave reads carol's r.txt" reads "$DAVE" r.txt
out=$(aq_smb445 "$DAVE" "put $AQ_TMP/s.txt r.txt")
expect_eq "dave replaces carol's r.txt" "" "$(grep -E 'NT_STATUS' <<<"$out")"
ok "carol makes the folders priv, inh and inh2" aq_smb445 "$CAROL" "mkdir priv; mkdir inh; mkdir inh2"
out=$(aq_smb445_cacls "$CAROL" priv --set "ACL:S-1-22-1-1000:ALLOWED/0x0/FULL")
expect_eq "carol sets priv's DACL: carol only, nothing inherited" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "carol puts priv/s.txt" aq_smb445 "$CAROL" "put $AQ_TMP/s.txt priv/s.txt"
out=$(aq_smb445_cacls "$CAROL" priv/s.txt)
expect_contains "smbcacls reads the owner: carol" "OWNER:S-1-22-1-1000" "$out"
expect_contains "priv/s.txt's DACL: carol FILE_ALL_ACCESS" "ACL:S-1-22-1-1000:0/0x0/0x001f01ff" "$out"
expect_contains "priv/s.txt's DACL: SYSTEM FILE_ALL_ACCESS" "ACL:S-1-5-18:0/0x0/0x001f01ff" "$out"
expect_contains "priv/s.txt's control: SELF_RELATIVE, DACL_PRESENT" "CONTROL:0x8004" "$out"
out=$(aq_smb445 "$DAVE" "get priv/s.txt $AQ_TMP/got.txt")
expect_contains "dave may not read priv/s.txt (nothing for him in the default DACL)" NT_STATUS_ACCESS_DENIED "$out"
out=$(aq_smb445_cacls "$CAROL" priv/s.txt --add "ACL:S-1-22-1-1001:ALLOWED/0x0/READ")
expect_eq "carol adds an ALLOW READ for dave" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "dave reads priv/s.txt before any DENY" reads "$DAVE" priv/s.txt
out=$(aq_smb445_cacls "$CAROL" priv/s.txt --add "ACL:S-1-22-1-1001:DENIED/0x0/READ")
expect_eq "carol adds a DENY READ for dave" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
expect_contains "the DENY reads back (type 1)" "ACL:S-1-22-1-1001:1/0x0/" "$(aq_smb445_cacls "$CAROL" priv/s.txt)"
denied() { # dave is refused priv/s.txt, carol is not
	local out
	rm -f "$AQ_TMP/got.txt"
	out=$(aq_smb445 "$DAVE" "get priv/s.txt $AQ_TMP/got.txt")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" && [ ! -s "$AQ_TMP/got.txt" ] || { echo "dave: $out" >&2; return 1; }
	reads "$CAROL" priv/s.txt
}
ok "dave, denied by the DACL, gets NT_STATUS_ACCESS_DENIED; carol reads" denied

out=$(aq_smb445_cacls "$CAROL" inh --set "ACL:S-1-22-1-1000:ALLOWED/0x3/FULL,ACL:S-1-22-1-1001:ALLOWED/0x3/READ")
expect_eq "carol sets inheritable ACEs on inh" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "carol puts inh/n.txt" aq_smb445 "$CAROL" "put $AQ_TMP/s.txt inh/n.txt"
out=$(aq_smb445_cacls "$CAROL" inh2 --sddl --set "D:ARAI(A;OICI;FA;;;S-1-22-1-1000)(A;OICI;FR;;;S-1-22-1-1001)")
expect_eq "carol sets the same ACEs on inh2 with AUTO_INHERIT_REQ and AUTO_INHERITED" "" \
	"$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "carol puts inh2/n.txt" aq_smb445 "$CAROL" "put $AQ_TMP/s.txt inh2/n.txt"
inherited() { # inh/n.txt: the ACEs without INHERITED; inh2/n.txt: with it, its DACL AUTO_INHERITED
	local out out2
	out=$(aq_smb445_cacls "$CAROL" inh/n.txt)
	out2=$(aq_smb445_cacls "$CAROL" inh2/n.txt)
	grep -q "^ACL:S-1-22-1-1001:0/0x0/" <<<"$out" && grep -q "^ACL:S-1-22-1-1000:0/0x0/" <<<"$out" &&
		grep -q "^OWNER:S-1-22-1-1000" <<<"$out" || { echo "inh/n.txt: $out" >&2; return 1; }
	grep -q "^ACL:S-1-22-1-1001:0/0x10/" <<<"$out2" && grep -q "^ACL:S-1-22-1-1000:0/0x10/" <<<"$out2" &&
		grep -q "^CONTROL:0x8404" <<<"$out2" || { echo "inh2/n.txt: $out2" >&2; return 1; }
}
ok "inh/n.txt holds the inherited ACEs (flag 0, inh's DACL is not AUTO_INHERITED), inh2/n.txt with 0x10" \
	inherited
ok "dave reads inh/n.txt by the inherited ACE" reads "$DAVE" inh/n.txt
ok "dave reads inh2/n.txt by the inherited ACE" reads "$DAVE" inh2/n.txt
out=$(aq_smb445 "$DAVE" "put $AQ_TMP/s.txt inh/d.txt")
expect_contains "dave may not add a file to inh (READ only)" NT_STATUS_ACCESS_DENIED "$out"

out=$(aq_smb445_cacls "$CAROL" / --set "ACL:S-1-22-1-1000:ALLOWED/0x3/FULL,ACL:S-1-22-1-1001:ALLOWED/0x3/READ")
expect_eq "carol sets the root's DACL: carol FULL, dave READ" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
narrowed() { # the root's DACL is carol's, and dave may not add a file to it
	local out
	out=$(aq_smb445_cacls "$CAROL" /)
	grep -q "^ACL:S-1-22-1-1001:0/0x3/" <<<"$out" && ! grep -q "^ACL:S-1-1-0:" <<<"$out" || { echo "root: $out" >&2; return 1; }
	out=$(aq_smb445 "$DAVE" "put $AQ_TMP/s.txt d.txt")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" || { echo "dave: $out" >&2; return 1; }
}
ok "the root's DACL set rules: dave may not put a file in the root" narrowed

for sig in TERM KILL; do
	aq_smb445_restart "$sig" "$CAROL"
	expect_contains "after SIG$sig: the DENY is still there" "ACL:S-1-22-1-1001:1/0x0/" "$(aq_smb445_cacls "$CAROL" priv/s.txt)"
	ok "after SIG$sig: dave is still denied, carol reads" denied
	ok "after SIG$sig: the inherited ACEs are still there" inherited
	ok "after SIG$sig: the root's DACL still rules" narrowed
done
aq_smb_sanitizer_clean
aq_finish
