#!/usr/bin/env bash
# test_smb_prev.sh: snapshots as SMB previous versions (issue 20) with a
# standalone aquifer-agent serving SMB, driven by Debian's smbclient: with
# smbSettings SHOW_PREVIOUS_VERSIONS, `allinfo` lists the snapshot as an
# @GMT token (FSCTL_SRV_ENUMERATE_SNAPSHOTS), `get @GMT-.../f.txt` reads the
# snapshot's bytes (smbclient sends the time as a TWrp create context) while
# the live file reads the new ones, and nothing is written there; the same
# token inside the path is taken too; a malformed token and a time with no
# snapshot are refused with their NT statuses; NFS sees no .snapshot
# (snapshotDirectory off); a share without the setting lists none.
. "$(dirname "$0")/lib.sh"
AQ_RECORD=0
. "$AQ_SRC/tests/agent/tier/agent.sh"
. "$AQ_SRC/tests/agent/snap/snap.sh"

command -v smbclient >/dev/null || { echo "SKIP: smbclient missing (apt-get install smbclient)"; exit 77; }
command -v nfs-ls >/dev/null || { echo "SKIP: nfs-ls missing (apt-get install libnfs-utils)"; exit 77; }
nthash() { printf '%s' "$1" | iconv -t utf-16le | openssl dgst -md4 -provider legacy -provider default 2>/dev/null | sed 's/.*= //'; }
[ -n "$(nthash x)" ] || { echo "SKIP: openssl without MD4 (legacy provider)"; exit 77; }
trap 'snap_cleanup; aq_cleanup' EXIT

snap_shelf n1 1024
SMB=$(aq_pick_port)
AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB")
agent_start n1
FP=00000000000000b1 FN=00000000000000b2 S1=1111111111111111
SPUSH_EXTRA=$(jq -nc --arg h "$(nthash 'Secret-1')" '{smbUsers: [{project: "p", name: "alice", ntHash: $h, uid: 0, gid: 0}]}')
# pv: SMB with previous versions, no .snapshot; pn: SMB without the setting
pv() { svol pv $FP "${1:-{\}}" '{"protocols":["NFSV3","SMB"],"smbSettings":["SHOW_PREVIOUS_VERSIONS"]}'; }
pn() { svol pn $FN "${1:-{\}}" '{"protocols":["NFSV3","SMB"]}'; }
smb() { # SHARE COMMANDS: smbclient as alice, SMB3.1.1
	timeout 60 smbclient "//127.0.0.1/$1" -p "$SMB" -U 'alice%Secret-1' -m SMB3_11 -c "$2" 2>&1
}

spush "$(pv)" "$(pn)"
expect_eq "both volumes are served" "LIVE LIVE" "$(sstat pv .state) $(sstat pn .state)"
printf 'one' >"$AQ_TMP/one.txt"
printf 'two' >"$AQ_TMP/two.txt"
ok "smbclient writes f.txt (one) on pv" smb pv "put $AQ_TMP/one.txt f.txt"
ok "smbclient writes f.txt (one) on pn" smb pn "put $AQ_TMP/one.txt f.txt"
spush "$(pv "{\"snapshots\":$(snaps s1:$S1)}")" "$(pn "{\"snapshots\":$(snaps s1:$S1)}")"
expect_eq "snapshot s1 of each is READY" "READY READY" "$(sstat pv '.snapshots[0].state') $(sstat pn '.snapshots[0].state')"
ok "smbclient rewrites f.txt (two) on pv" smb pv "put $AQ_TMP/two.txt f.txt"

out=$(smb pv "allinfo f.txt")
TOK=$(printf '%s\n' "$out" | grep -o '@GMT-[0-9]\{4\}\.[0-9][0-9]\.[0-9][0-9]-[0-9][0-9]\.[0-9][0-9]\.[0-9][0-9]' | head -n1)
if [ -n "$TOK" ] && [ "$(printf '%s\n' "$out" | grep -c '@GMT-')" -ge 1 ]; then
	aq_pass "allinfo lists the snapshot as a previous version ($TOK)"
else
	aq_failed "allinfo lists the snapshot as a previous version" "$out"
fi
# its time is the snapshot's: within a minute of now
now=$(date -u +%s)
t=$(date -u -d "$(printf '%s' "${TOK#@GMT-}" | sed 's/\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)-\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)/\1-\2-\3 \4:\5:\6/')" +%s 2>/dev/null || echo 0)
ok "the token's time is the snapshot's (within 120 s of now: $TOK)" test $((now - t)) -ge 0 -a $((now - t)) -le 120

rm -f "$AQ_TMP/got.txt"
smb pv "get $TOK\\f.txt $AQ_TMP/got.txt" >"$AQ_TMP/get.out"
expect_eq "the previous version reads the snapshot's bytes" "one" "$(cat "$AQ_TMP/got.txt" 2>/dev/null)"
rm -f "$AQ_TMP/got.txt"
smb pv "get f.txt $AQ_TMP/got.txt" >/dev/null
expect_eq "the live file reads the new bytes" "two" "$(cat "$AQ_TMP/got.txt" 2>/dev/null)"
out=$(smb pv "put $AQ_TMP/two.txt $TOK\\new.txt")
ok "nothing is written into a previous version" grep -q 'NT_STATUS_MEDIA_WRITE_PROTECTED\|NT_STATUS_ACCESS_DENIED' <<<"$out"
out=$(smb pv "ls $TOK\\*")
ok "the previous version's folder lists f.txt" grep -q ' f.txt ' <<<"$out"
out=$(smb pv "get @GMT-2026.13.01-00.00.00\\f.txt $AQ_TMP/bad.txt")
ok "a malformed token is refused (month 13)" grep -q 'NT_STATUS_OBJECT_NAME_INVALID\|NT_STATUS_INVALID_PARAMETER' <<<"$out"
out=$(smb pv "get @GMT-2001.01.01-00.00.00\\f.txt $AQ_TMP/bad.txt")
ok "a time with no snapshot is refused" grep -q 'NT_STATUS_OBJECT_PATH_NOT_FOUND\|NT_STATUS_OBJECT_NAME_NOT_FOUND' <<<"$out"
ok "no file was made by the refused reads" test ! -e "$AQ_TMP/bad.txt"

out=$(smb pn "allinfo f.txt")
ok "a share without SHOW_PREVIOUS_VERSIONS lists no previous version" bash -c '! grep -q "@GMT-" <<<"$1"' _ "$out"
ok "NFS sees no .snapshot on pv (snapshotDirectory off)" bash -c '! nfs-ls "$1" >/dev/null 2>&1' _ "$(surl pv /.snapshot)"
ok "NFS still serves pv" nfs-ls "$(surl pv /)"
echo "$AQ_PASS passed, $AQ_FAIL failed ($SNAP_FS shelf)"
[ "$AQ_FAIL" -eq 0 ]
