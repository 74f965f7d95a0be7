#!/usr/bin/env bash
# test_backup_restore_files.sh: POST .../volumes/V:restore (GCNV
# RestoreBackupFiles; issue 21, acceptance 2) with a real aquiferd, a
# joined agent and libnfs:
#   - files written over NFS, two backups; the live files changed; three
#     named files restored from the second backup into the live volume (the
#     operation ends with the volume): their content is the backup's, a file
#     not named keeps its live change; a file restored into a folder
#     (restoreDestinationPath) lands there;
#   - a path the backup does not hold: the operation fails NOT_FOUND naming
#     it, and nothing changes;
#   - refused by name, changing nothing: a path escaping the volume ("..",
#     relative, "/"), a destination escaping it, an unknown field, more than
#     16 paths, a backup of another project, a missing backup; a folder
#     that does not exist fails the operation naming it;
#   - what SMB keeps beside a file comes back with it (issue 18): its EA list
#     and DOS attributes (trusted.aquifer.ea/.dos, set on the shelf before
#     the backup, removed from the live file after it) and its security
#     descriptor's owner and mode;
#   - the CLI: aquifer volumes restore V --backup=... --file-list=a,b.
. "$(dirname "$0")/lib.sh"
AQUIFER=$AQ_BUILDDIR/aquifer

for t in nfs-cp nfs-cat sqlite3; do
	command -v $t >/dev/null || { echo "SKIP: $t missing (deploy/deps.sh test)"; exit 77; }
done
[ "${AQ_DB:-sqlite}" = sqlite ] || { echo "SKIP: finds the volume's folder in the SQLite file"; exit 77; }

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
for p in pa pb; do aq_req POST "/v1/projects?projectId=$p" '{}'; done
P=/v1/projects/pa/locations/east
N=projects/pa/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT SHELF=$AQ_TMP/shelf-east
TOK=$(aq_token "$D" editor pa)
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
put() { printf '%s' "$2" >"$AQ_TMP/put" && nfs-cp "$AQ_TMP/put" "$(url "v1/$1")" >/dev/null 2>&1; }
cat_() { nfs-cat "$(url "v1/$1")" 2>/dev/null; }
# nfs-cp does not overwrite: changes are made on the shelf, reads go over NFS
change() { printf '%s' "$2" >"$VDIR/$1"; }

aq_mutate POST "$P/volumes?volumeId=v1" '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_true '.done and (has("error") | not)' "volume v1"
VDIR=$SHELF/$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.dir') FROM resources WHERE name='placements/$N/volumes/v1'")
ok "folders d and d/e in v1 (shelf side: nfs-cp makes no folders)" mkdir -p "$VDIR/d/e" "$VDIR/dst"
for f in a.txt b.txt c.txt other.txt d/e/deep.txt; do ok "write $f over NFS" put "$f" "one:$f"; done
aq_req POST "$P/backupVaults?backupVaultId=bv" '{}'
expect_status 200 "vault bv"
backup() { # ID
	aq_req POST "$P/backupVaults/bv/backups?backupId=$1" "{\"sourceVolume\":\"$N/volumes/v1\"}"
	aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
	expect_jq .response.state READY "backup $1 READY"
}
backup b1
for f in a.txt b.txt c.txt other.txt d/e/deep.txt; do change "$f" "two:$f"; done
# c.txt as an SMB client leaves it: an EA list, DOS attributes, owner and mode
xa() { # get|set|del FILE NAME [HEX]
	python3 - "$@" <<'PY'
import os, sys
op, f, n = sys.argv[1:4]
try:
    if op == "set": os.setxattr(f, n, bytes.fromhex(sys.argv[4]))
    elif op == "del": os.removexattr(f, n)
    else: print(os.getxattr(f, n).hex())
except OSError: pass
PY
}
EA=0000000000060300434f4c4f555200726564 DOS=0000000000000022
xa set "$VDIR/c.txt" trusted.aquifer.ea $EA
xa set "$VDIR/c.txt" trusted.aquifer.dos $DOS
chown 1234:5678 "$VDIR/c.txt" && chmod 0640 "$VDIR/c.txt"
expect_eq "c.txt holds its EA list before b2" $EA "$(xa get "$VDIR/c.txt" trusted.aquifer.ea)"
backup b2
xa del "$VDIR/c.txt" trusted.aquifer.ea
xa del "$VDIR/c.txt" trusted.aquifer.dos
chown 0:0 "$VDIR/c.txt" && chmod 0666 "$VDIR/c.txt"
expect_eq "the live c.txt lost them" "" "$(xa get "$VDIR/c.txt" trusted.aquifer.ea)$(xa get "$VDIR/c.txt" trusted.aquifer.dos)"
for f in a.txt b.txt c.txt other.txt d/e/deep.txt; do ok "change live $f" change "$f" "live:$f"; done
expect_eq "the live change reads back over NFS" "live:a.txt" "$(cat_ a.txt)"
B2=$N/backupVaults/bv/backups/b2

# --- three named files from the second backup ------------------------------------
aq_req POST "$P/volumes/v1:restore" "{\"backup\":\"$B2\",\"fileList\":[\"/a.txt\",\"/b.txt\",\"/c.txt\"]}"
expect_status 200 "restore three files from b2"
expect_true '.done == false and .metadata.verb == "restore" and (.metadata.target | endswith("/volumes/v1"))' "an Operation (verb restore, target v1)"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_true '.done and (has("error") | not) and .response.name == "projects/pa/locations/east/volumes/v1"' "it ends with the volume"
for f in a.txt b.txt c.txt; do expect_eq "$f is b2's again (read over NFS)" "two:$f" "$(cat_ "$f")"; done
expect_eq "other.txt, not named, keeps its live change" "live:other.txt" "$(cat_ other.txt)"
expect_eq "d/e/deep.txt, not named, keeps its live change" "live:d/e/deep.txt" "$(cat_ d/e/deep.txt)"
expect_eq "c.txt's EA list is b2's again" $EA "$(xa get "$VDIR/c.txt" trusted.aquifer.ea)"
expect_eq "c.txt's DOS attributes are b2's again" $DOS "$(xa get "$VDIR/c.txt" trusted.aquifer.dos)"
expect_eq "c.txt's owner, group and mode (its descriptor) are b2's again" "1234:5678 640" "$(stat -c '%u:%g %a' "$VDIR/c.txt")"
aq_req POST "$P/volumes/v1:restore" "{\"backup\":\"$N/backupVaults/bv/backups/b1\",\"fileList\":[\"/d/e/deep.txt\",\"/a.txt\"],\"restoreDestinationPath\":\"/dst\"}"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_true '.done and (has("error") | not)' "restore b1's /d/e/deep.txt and /a.txt into /dst"
expect_eq "/dst/deep.txt is b1's deep.txt" "one:d/e/deep.txt" "$(cat_ dst/deep.txt)"
expect_eq "/dst/a.txt is b1's a.txt" "one:a.txt" "$(cat_ dst/a.txt)"
expect_eq "/a.txt stays b2's (the destination was /dst)" "two:a.txt" "$(cat_ a.txt)"

# --- a path the backup does not hold ----------------------------------------------
change a.txt "live:a.txt"
aq_req POST "$P/volumes/v1:restore" "{\"backup\":\"$B2\",\"fileList\":[\"/nope.txt\"]}"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_true '.done and .error.code == 5' "a path not in the backup: the operation fails NOT_FOUND"
expect_jq '.error.message | contains("/nope.txt")' true "the error names /nope.txt"
aq_req POST "$P/volumes/v1:restore" "{\"backup\":\"$B2\",\"fileList\":[\"/a.txt\"],\"restoreDestinationPath\":\"/nodir\"}"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 120
expect_true '.done and (.error.message | contains("/nodir"))' "a destination folder that does not exist fails naming it"
expect_eq "nothing changed: a.txt keeps its live change" "live:a.txt" "$(cat_ a.txt)"

# --- refusals by name -----------------------------------------------------------
refused() { # BODY FIELD DESC
	aq_req POST "$P/volumes/v1:restore" "$1"
	expect_error 400 INVALID_ARGUMENT "refused: $3"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$2"*) aq_pass "the message names $2 ($3)" ;;
	*) aq_failed "the message names $2 ($3)" "$BODY" ;;
	esac
}
refused "{\"backup\":\"$B2\",\"fileList\":[\"/../../etc/passwd\"]}" 'fileList[0]' "a path with .."
refused "{\"backup\":\"$B2\",\"fileList\":[\"/a.txt\",\"d/e/deep.txt\"]}" 'fileList[1]' "a relative path"
refused "{\"backup\":\"$B2\",\"fileList\":[\"/\"]}" 'fileList[0]' "the root"
refused "{\"backup\":\"$B2\",\"fileList\":[\"/a.txt\"],\"restoreDestinationPath\":\"/dst/../..\"}" restoreDestinationPath "a destination with .."
refused "{\"backup\":\"$B2\",\"fileList\":[\"/a.txt\"],\"overwrite\":true}" overwrite "an unknown field"
refused "{\"backup\":\"$B2\",\"fileList\":[$(seq -s, -f '"/f%g"' 17)]}" fileList "17 paths"
refused "{\"backup\":\"$B2\"}" fileList "no fileList"
refused "{\"backup\":\"projects/pb/locations/east/backupVaults/bv/backups/b2\",\"fileList\":[\"/a.txt\"]}" backup "another project's backup"
aq_req POST "$P/volumes/v1:restore" "{\"backup\":\"$N/backupVaults/bv/backups/nope\",\"fileList\":[\"/a.txt\"]}"
expect_error 404 NOT_FOUND "a backup that does not exist"
expect_eq "nothing changed by the refusals" "live:a.txt" "$(cat_ a.txt)"
aq_req GET "$P/operations"
expect_true '[.operations[] | select(.metadata.verb == "restore")] | length == 4' "no operation made by a refusal (4 restores ran)"

# --- CLI ------------------------------------------------------------------------
if [ -x "$AQUIFER" ]; then
	XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=pa AQUIFER_LOCATION=east \
		AQUIFER_CA_FILE= timeout 120 "$AQUIFER" volumes restore v1 --backup="$B2" --file-list=/a.txt,/b.txt \
		</dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
	rc=$?
	expect_eq "cli: aquifer volumes restore v1 --backup= --file-list=/a.txt,/b.txt exits 0 ($(cat "$AQ_TMP/err"))" 0 "$rc"
	expect_eq "cli: a.txt is b2's again" "two:a.txt" "$(cat_ a.txt)"
fi
aq_sanitizer_clean "$D"
aq_finish
