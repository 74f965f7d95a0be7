#!/usr/bin/env bash
# test_smb_ea_acl.sh: extended attributes and server-side copy over SMB
# (issue 18) end to end: a volume created through the API, Debian's
# smbclient as an SMB user (uid 1000):
# - `setea`/`geteas`: an EA set is read back, kept on the shelf file as
#   trusted.aquifer.ea (what outlives the agent), a bad name is refused
#   with STATUS_INVALID_EA_NAME and changes nothing;
# - `scopy` (FSCTL_SRV_COPYCHUNK) copies a file on the server, the same bytes.
# Security descriptors are not driven here: smbcacls 4.17 reaches port 445
# only (no -p, "smb ports" ignored); test_smb_cacls.sh runs it against an
# agent on port 445 of a network namespace of its own, and test_smb_secinfo
# covers SET_INFO SECURITY through the dispatcher.
# Skipped (77) without smbclient.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
aq_smb_need --smb-listen

aq_smb_cluster
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["NFSV3","SMB"],"unixPermissions":"0777"}'
expect_jq .response.state READY "an SMB volume is READY"
aq_smb_user carol 1000 1000
smbc() { aq_smbclient docs carol%Secret-1 "$1"; } # COMMANDS
head -c 100000 /dev/urandom >"$AQ_TMP/f.bin"
ok "smbclient puts f.bin" smbc "put $AQ_TMP/f.bin f.bin"
F=$(find "$AQ_TMP/shelf" -name f.bin -type f | head -n1)
ok "the file is on the shelf" test -n "$F"
xattr() { python3 -c 'import os,sys
try: sys.stdout.buffer.write(os.getxattr(sys.argv[1], "trusted.aquifer.ea"))
except OSError: pass' "$F"; }

# EAs
out=$(smbc "setea f.bin colour blue")
ok "setea is accepted" bash -c '! grep -q STATUS_ <<<"$1"' _ "$out"
out=$(smbc "geteas f.bin")
ok "geteas reads it back" grep -qE 'colour.*blue|colour' <<<"$out"
ok "geteas shows its value" grep -q 'blue' <<<"$out"
kept=$(xattr | tr -d '\0')
ok "it is kept on the shelf file (trusted.aquifer.ea)" grep -q colour <<<"$kept"
before=$(xattr | od -An -tx1 | tr -d ' \n')
out=$(smbc 'setea f.bin a*b x')
ok "a bad EA name is refused (STATUS_INVALID_EA_NAME)" grep -q STATUS_INVALID_EA_NAME <<<"$out"
expect_eq "and nothing changed" "$before" "$(xattr | od -An -tx1 | tr -d ' \n')"

# server-side copy
out=$(smbc "scopy f.bin g.bin")
ok "scopy (server-side copy) is accepted" bash -c '! grep -q NT_STATUS_ <<<"$1"' _ "$out"
rm -f "$AQ_TMP/g.bin"
smbc "get g.bin $AQ_TMP/g.bin" >/dev/null
expect_eq "the copy has the same bytes" "$(sha256sum <"$AQ_TMP/f.bin")" "$(sha256sum <"$AQ_TMP/g.bin" 2>/dev/null)"
aq_smb_sanitizer_clean
aq_finish
