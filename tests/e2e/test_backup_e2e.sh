#!/usr/bin/env bash
# test_backup_e2e.sh: backups as a resource (issue 21, control-plane half)
# with a real aquiferd, a joined agent and libnfs:
#   1. files written over NFS (nfs-cp); a backup without sourceSnapshot (a
#      temporary snapshot bkp-<uid> is made and removed): the Operation is
#      done when the backup is READY, with volumeUsageBytes,
#      chainStorageBytes, backupType MANUAL, createTime; the vault's store
#      restores (bkp_tool, the vault's key) the files byte for byte
#   2. a 1% change, a backup of a named snapshot: incremental, the second
#      upload (chainStorageBytes minus the first's) is about the change;
#      each backup restored into a new volume (restoreParameters.sourceBackup:
#      RESTORING, then READY) and compared over NFS (content, a symlink, a
#      hard link) and on its folder (mode, owner, mtime); refusals naming
#      sourceBackup or capacityGib
#   3. refusals by name that change nothing: another project's vault and
#      volume, a volume of another location, a missing or foreign snapshot,
#      a CROSS_REGION vault, unknown fields, a second backup while one runs,
#      deleting a running backup, the volume under a running backup, the
#      vault holding backups; validateOnly; patch; list filter/orderBy/paging
#   4. kill -9 of aquiferd and of the agent during an upload (aquiferd
#      again while the restarted agent uploads): READY after the restarts,
#      and its data restores
#   5. retention: an early delete is FAILED_PRECONDITION with the end time;
#      deleting the first backup of the chain of three leaves the other two
#      (b2, b3) restorable byte for byte,
#      the operation done when the node deleted it
#   6. the CLI: aquifer backups create|describe|list|update|delete
. "$(dirname "$0")/lib.sh"
AQUIFER=$AQ_BUILDDIR/aquifer
BKP_TOOL=$AQ_BUILDDIR/tests/agent/bkp/bkp_tool

for t in nfs-cp nfs-cat sqlite3; do
	command -v $t >/dev/null || { echo "SKIP: $t missing (deploy/deps.sh test)"; exit 77; }
done
[ -x "$BKP_TOOL" ] || { echo "SKIP: $BKP_TOOL not built (make check builds it)"; exit 77; }
[ "${AQ_DB:-sqlite}" = sqlite ] || { echo "SKIP: reads the vault key from the SQLite file"; exit 77; }

D=$AQ_TMP/srv
aq_start "$D" || exit 1
TOK=$(aq_token "$D" admin)
ADMIN=$TOK
for l in east west; do aq_req POST "/v1/locations?locationId=$l" '{}'; done
for p in pa pb; do aq_req POST "/v1/projects?projectId=$p" '{}'; done
P=/v1/projects/pa/locations/east
PB=/v1/projects/pb/locations/east
POOL='{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096"}'
aq_req POST "$P/storagePools?storagePoolId=pool" "$POOL"
aq_req POST "$PB/storagePools?storagePoolId=pool" "$POOL"
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT SHELF=$AQ_TMP/shelf-east
EDITOR=$(aq_token "$D" editor pa)
OTHER=$(aq_token "$D" editor pb)
TOK=$EDITOR

vol() { printf '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1"; }
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
V=$P/backupVaults
VN=projects/pa/locations/east/volumes/v1
B=$V/bv/backups
opname() { printf '%s' "$BODY" | jq -r '.name // empty'; }
bk_is() { aq_req GET "$B/$1"; printf '%s' "$BODY" | jq -e "$2" >/dev/null 2>&1; }
# key and store of vault bv (read from the database: no route reaches them)
vault_secret() {
	sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.$1') FROM resources WHERE kind='bvsecret' AND name='bvsecrets/projects/pa/locations/east/backupVaults/bv'"
}
uid_of() { # the vault-side id of backup $1
	sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.uid') FROM resources WHERE kind='bkref' AND name='bkrefs/projects/pa/locations/east/backupVaults/bv/backups/$1'"
}
# restored BACKUP DIR: bkp_tool restores the backup from the vault's store
restored() {
	rm -rf "$2"
	"$BKP_TOOL" restore "$SHELF/$(vault_secret store.directory.path)" "$(vault_secret key)" "$(uid_of "$1")" "$2" \
		>"$AQ_TMP/restore.out" 2>&1
}
same() { cmp -s "$1" "$2"; }
refused() { # STATUS CODE FIELD DESC
	expect_error "$1" "$2" "$4"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$3"*) aq_pass "the message names $3 ($4)" ;;
	*) aq_failed "the message names $3 ($4)" "$BODY" ;;
	esac
}

aq_mutate POST "$P/volumes?volumeId=v1" "$(vol v1)"
expect_true '.done and (has("error") | not)' "volume v1 created"
aq_mutate POST "$PB/volumes?volumeId=v1" "$(vol o1)"
aq_req POST "$V?backupVaultId=bv" '{}'
expect_status 200 "vault bv"
aq_req POST "$V?backupVaultId=ret" '{"backupRetentionPolicy":{"backupMinimumEnforcedRetentionDays":2,"manualBackupImmutable":true}}'
expect_status 200 "vault ret with 2 days of retention for manual backups"

# --- 1. a first backup ----------------------------------------------------------
head -c $((16 << 20)) /dev/urandom >"$AQ_TMP/big.bin"
MARK="aquifer-e2e-plaintext-$$-$RANDOM"
{ for i in $(seq 3000); do echo "$MARK $i"; done; } >"$AQ_TMP/known.txt"
ok "write a 16 MiB file over NFS" nfs-cp "$AQ_TMP/big.bin" "$(url v1/big.bin)"
ok "write a known text over NFS" nfs-cp "$AQ_TMP/known.txt" "$(url v1/known.txt)"
VDIR=$SHELF/$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.dir') FROM resources WHERE name='placements/$VN'")
# what NFS clients cannot make with nfs-cp, made on the shelf: mode, owner,
# times, a symlink, a hard link
ok "attributes, a symlink and a hard link in v1 (shelf side)" sh -c "set -e; cd '$VDIR'; mkdir -p d; printf x >d/f;
	chmod 0640 d/f; chown 1234:567 d/f; touch -m -d '2020-01-02 03:04:05' d/f; ln -s ../known.txt d/sym;
	ln d/f d/hard; chmod 0751 d"
aq_req POST "$B?backupId=b1" "{\"sourceVolume\":\"$VN\",\"description\":\"first\",\"labels\":{\"k\":\"v\"}}"
expect_status 200 "create b1 (no sourceSnapshot)"
expect_jq .done false "the create is a running operation"
OP1=$(opname)
aq_req GET "$B/b1"
expect_true '.state == "CREATING" or .state == "UPLOADING" or .state == "READY"' "b1 is CREATING, UPLOADING or READY"
aq_req GET "$P/volumes/v1/snapshots"
expect_true '[.snapshots[]?.name | select(test("/snapshots/bkp-[0-9a-f]{16}$"))] | length == 1' "a temporary snapshot bkp-<uid> is made for it"
aq_op_wait "$OP1" 120
expect_true '.done and (has("error") | not) and .response["@type"] == "type.googleapis.com/google.cloud.netapp.v1.Backup"' "the operation ends with the Backup"
expect_jq .response.state READY "b1 READY"
aq_req GET "$B/b1"
expect_jq .backupType MANUAL "backupType MANUAL"
expect_jq .description first "description kept"
expect_jq .labels.k v "labels kept"
expect_jq .sourceVolume "$VN" "sourceVolume kept"
expect_true '.createTime | test("^[0-9]{4}-")' "createTime set"
expect_true '(.volumeUsageBytes | tonumber) >= 16777216 and (.volumeUsageBytes | tonumber) < 17825792' "volumeUsageBytes is the files' size"
C1=$(printf '%s' "$BODY" | jq -r '.chainStorageBytes | tonumber')
ok "chainStorageBytes of b1 is its upload (>= 16 MiB random data: $C1)" test "$C1" -ge $((16 << 20)) -a "$C1" -lt $((18 << 20))
expect_true 'has("enforcedRetentionEndTime") | not' "no retention end in a vault without retention"
ok "the temporary snapshot goes after the backup" aq_wait_until 30 sh -c "! curl -s -H 'Authorization: Bearer $TOK' $AQ_URL$P/volumes/v1/snapshots | grep -q '/snapshots/bkp-'"
ok "b1 restores from the vault's store" restored b1 "$AQ_TMP/r1"
ok "... big.bin byte for byte" same "$AQ_TMP/big.bin" "$AQ_TMP/r1/big.bin"
ok "... known.txt byte for byte" same "$AQ_TMP/known.txt" "$AQ_TMP/r1/known.txt"
ok "no plaintext of the known file in the store" sh -c "! grep -rqa '$MARK' '$SHELF/$(vault_secret store.directory.path)'"

# --- 2. a 1% change, an incremental backup of a named snapshot ---------------
head -c $((160 << 10)) /dev/urandom >"$AQ_TMP/change.bin"
ok "write 160 KiB (1% of the data) over NFS" nfs-cp "$AQ_TMP/change.bin" "$(url v1/change.bin)"
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=s2" '{}'
expect_true '.done and (has("error") | not)' "snapshot s2"
aq_mutate POST "$B?backupId=b2" "{\"sourceVolume\":\"$VN\",\"sourceSnapshot\":\"$VN/snapshots/s2\"}"
expect_true '.done and (has("error") | not) and .response.state == "READY"' "b2 of snapshot s2 READY"
aq_req GET "$B/b2"
C2=$(printf '%s' "$BODY" | jq -r '.chainStorageBytes | tonumber')
UP2=$((C2 - C1))
echo "# first upload $C1 bytes, second $UP2 bytes (change 163840)"
ok "the second upload is about the change (160 KiB .. 1 MiB): $UP2" test "$UP2" -ge $((160 << 10)) -a "$UP2" -lt $((1 << 20))
expect_jq .sourceSnapshot "$VN/snapshots/s2" "sourceSnapshot kept"
ok "b2 restores" restored b2 "$AQ_TMP/r2"
ok "... with the change" same "$AQ_TMP/change.bin" "$AQ_TMP/r2/change.bin"
ok "... and the unchanged file" same "$AQ_TMP/big.bin" "$AQ_TMP/r2/big.bin"

# --- 2b. restore each backup into a new volume, compared over NFS ----------
rvol() { printf '{"storagePool":"pool","capacityGib":"%s","protocols":["NFSV3"],"shareName":"%s",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]},
	"restoreParameters":{"sourceBackup":"%s"}}' "$3" "$1" "$2"; }
BN1=projects/pa/locations/east/backupVaults/bv/backups/b1
BN2=projects/pa/locations/east/backupVaults/bv/backups/b2
aq_req POST "$P/volumes?volumeId=rv1&validateOnly=true" "$(rvol rv1 $BN1 100)"
expect_true '.done and .response.state == "RESTORING"' "a volume from a backup is RESTORING until its node restored it"
aq_mutate POST "$P/volumes?volumeId=rv1" "$(rvol rv1 $BN1 100)"
expect_true '.done and (has("error") | not) and .response.state == "READY"' "volume rv1 restored from b1: READY"
aq_mutate POST "$P/volumes?volumeId=rv2" "$(rvol rv2 $BN2 100)"
expect_true '.done and (has("error") | not) and .response.state == "READY"' "volume rv2 restored from b2: READY"
nfs-cat "$(url rv1/big.bin)" >"$AQ_TMP/n1.bin" 2>/dev/null
ok "rv1 over NFS: big.bin byte for byte" same "$AQ_TMP/big.bin" "$AQ_TMP/n1.bin"
nfs-cat "$(url rv1/known.txt)" >"$AQ_TMP/n1.txt" 2>/dev/null
ok "rv1 over NFS: known.txt byte for byte" same "$AQ_TMP/known.txt" "$AQ_TMP/n1.txt"
ok "rv1 over NFS: no change.bin (b1 predates it)" sh -c "! nfs-cat '$(url rv1/change.bin)' >/dev/null 2>&1"
nfs-cat "$(url rv2/change.bin)" >"$AQ_TMP/n2.bin" 2>/dev/null
ok "rv2 over NFS: change.bin byte for byte" same "$AQ_TMP/change.bin" "$AQ_TMP/n2.bin"
nfs-cat "$(url rv2/big.bin)" >"$AQ_TMP/n2b.bin" 2>/dev/null
ok "rv2 over NFS: big.bin byte for byte" same "$AQ_TMP/big.bin" "$AQ_TMP/n2b.bin"
ok "rv1 over NFS: d/sym is listed as a symlink" sh -c "nfs-ls '$(url rv1/d)' 2>/dev/null | grep -Eq '^l.*sym'"
ok "rv1 over NFS: d/f and its hard link d/hard read x" sh -c "[ \"\$(nfs-cat '$(url rv1/d/f)')\" = x ] && [ \"\$(nfs-cat '$(url rv1/d/hard)')\" = x ]"
RDIR=$SHELF/$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.dir') FROM resources WHERE name='placements/projects/pa/locations/east/volumes/rv1'")
expect_eq "rv1: mode, owner, mtime of d/f as in v1" "$(stat -c '%a %u:%g %Y' "$VDIR/d/f")" "$(stat -c '%a %u:%g %Y' "$RDIR/d/f")"
expect_eq "rv1: mode of folder d" 751 "$(stat -c %a "$RDIR/d")"
expect_eq "rv1: d/sym is a symlink to ../known.txt" "../known.txt" "$(readlink "$RDIR/d/sym")"
expect_eq "rv1: d/hard is a hard link of d/f" "$(stat -c %i "$RDIR/d/f")" "$(stat -c %i "$RDIR/d/hard")"
# refusals, nothing created
aq_req POST "$P/volumes?volumeId=rx" "$(rvol rx projects/pa/locations/east/backupVaults/bv/backups/nope 100)"
refused 404 NOT_FOUND restoreParameters.sourceBackup "a volume from a backup that does not exist"
aq_req POST "$P/volumes?volumeId=rx" "$(rvol rx projects/pa/locations/west/backupVaults/bv/backups/b1 100)"
refused 400 INVALID_ARGUMENT restoreParameters.sourceBackup "a volume from a backup of another location"
aq_req POST "$P/volumes?volumeId=rx" "$(rvol rx projects/pa/locations/east/backupVaults/bv/snapshots/b1 100)"
refused 400 INVALID_ARGUMENT restoreParameters.sourceBackup "a sourceBackup that is not a backup's name"
# a backup larger than the capacity (its volumeUsageBytes raised in the database)
sqlite3 "$D/aq.db" "UPDATE resources SET doc=json_set(doc,'\$.volumeUsageBytes','214748364800') WHERE name='$BN1'"
aq_req POST "$P/volumes?volumeId=rx" "$(rvol rx $BN1 100)"
refused 400 INVALID_ARGUMENT capacityGib "a capacity smaller than the backup"
sqlite3 "$D/aq.db" "UPDATE resources SET doc=json_set(doc,'\$.volumeUsageBytes','$(stat -c %s "$AQ_TMP/big.bin")') WHERE name='$BN1'"
aq_req GET "$P/volumes/rx"
expect_error 404 NOT_FOUND "the refusals created no volume"

# --- 3. refusals by name, nothing changed --------------------------------------
aq_req POST "$B?backupId=x1" '{}'
refused 400 INVALID_ARGUMENT sourceVolume "no sourceVolume"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"projects/pb/locations/east/volumes/v1\"}"
refused 400 INVALID_ARGUMENT sourceVolume "another project's volume"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"projects/pa/locations/west/volumes/v1\"}"
refused 400 INVALID_ARGUMENT "location" "a volume of another location"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"projects/pa/locations/east/volumes/nope\"}"
refused 404 NOT_FOUND sourceVolume "a volume that does not exist"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"$VN\",\"sourceSnapshot\":\"$VN/snapshots/nope\"}"
refused 404 NOT_FOUND sourceSnapshot "a snapshot that does not exist"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"$VN\",\"sourceSnapshot\":\"projects/pa/locations/east/volumes/v2/snapshots/s2\"}"
refused 400 INVALID_ARGUMENT sourceSnapshot "a snapshot of another volume"
aq_req POST "$B?backupId=x1" "{\"sourceVolume\":\"$VN\",\"size\":1}"
refused 400 INVALID_ARGUMENT size "an unknown field"
aq_req POST "$B?backupId=x1&validateOnly=true" "{\"sourceVolume\":\"$VN\",\"backupType\":\"SCHEDULED\",\"state\":\"READY\"}"
expect_true '.response.backupType == "MANUAL" and .response.state == "CREATING"' "output-only fields sent are ignored (GCNV)"
aq_req POST "$B?backupId=1x" "{\"sourceVolume\":\"$VN\"}"
refused 400 INVALID_ARGUMENT backupId "a bad backupId"
aq_req POST "$V?backupVaultId=cx" '{"backupVaultType":"CROSS_REGION","backupRegion":"west"}'
aq_req POST "$V/cx/backups?backupId=x1" "{\"sourceVolume\":\"$VN\"}"
refused 400 INVALID_ARGUMENT CROSS_REGION "a CROSS_REGION vault"
aq_req POST "$V/nope/backups?backupId=x1" "{\"sourceVolume\":\"$VN\"}"
refused 404 NOT_FOUND backupVault "a vault that does not exist"
aq_req_as "$OTHER" POST "$B?backupId=x1" "{\"sourceVolume\":\"projects/pb/locations/east/volumes/v1\"}"
ok "project pb cannot back up into pa's vault ($STATUS)" test "$STATUS" = 403 -o "$STATUS" = 404
aq_req_as "$OTHER" GET "$B/b1"
ok "project pb cannot read pa's backup ($STATUS)" test "$STATUS" = 403 -o "$STATUS" = 404
aq_req_as "$OTHER" DELETE "$B/b1"
ok "project pb cannot delete pa's backup ($STATUS)" test "$STATUS" = 403 -o "$STATUS" = 404
aq_req POST "$B?backupId=b1" "{\"sourceVolume\":\"$VN\"}"
expect_error 409 ALREADY_EXISTS "b1 again"
aq_req POST "$B?backupId=x2&validateOnly=true" "{\"sourceVolume\":\"$VN\"}"
expect_true '.done and .response.name == "projects/pa/locations/east/backupVaults/bv/backups/x2" and .response.state == "CREATING"' "validateOnly answers the would-be backup"
aq_req GET "$B"
expect_true '[.backups[].name | split("/") | last] == ["b1","b2"]' "only b1 and b2 exist: the refusals and validateOnly stored nothing"
aq_req GET "$P/volumes/v1/snapshots"
expect_true '[.snapshots[]?.name | select(test("/bkp-"))] | length == 0' "... and made no snapshot"
# patch, list
aq_req PATCH "$B/b2?updateMask=description,labels" '{"description":"second","labels":{"a":"b"}}'
expect_true '.done and .response.description == "second"' "patch b2's description and labels"
aq_req GET "$B/b2"
expect_jq .labels.a b "labels patched"
aq_req PATCH "$B/b2?updateMask=sourceVolume" "{\"sourceVolume\":\"$VN\"}"
refused 400 INVALID_ARGUMENT sourceVolume "sourceVolume is immutable"
aq_req PATCH "$B/b2?updateMask=state" '{"state":"ERROR"}'
expect_error 400 INVALID_ARGUMENT "state is output-only"
aq_req GET "$B?filter=description%3D%22second%22"
expect_true '[.backups[].name | split("/") | last] == ["b2"]' "list filter description=\"second\""
aq_req GET "$B?orderBy=name%20desc"
expect_true '[.backups[].name | split("/") | last] == ["b2","b1"]' "list orderBy name desc"
aq_req GET "$B?pageSize=1"
expect_true '(.backups | length) == 1 and (.nextPageToken | length) > 0' "pageSize 1 gives a nextPageToken"
aq_req GET "$B?pageSize=1&pageToken=$(printf '%s' "$BODY" | jq -r .nextPageToken)"
expect_true '(.backups | length) == 1 and .backups[0].name != null' "the next page"

# --- 4. kill -9 of aquiferd and of the agent during a backup ------------------
# The agent is stopped first, so b3 stays CREATING while the refusals and the
# kill of aquiferd are checked (deterministic); the agent is then killed
# again in the middle of the upload, seen in the store (chunks of the new
# file stored, no manifest yet).
ok "write a 256 MiB file into v1 (shelf side: nfs-cp would take the suite's time)" \
	sh -c "head -c $((256 << 20)) /dev/urandom >'$VDIR/huge.bin'"
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=s3" '{}'
expect_true '.done and (has("error") | not)' "snapshot s3 (with huge.bin)"
aq_kill9 "$AGENT_PID"
aq_req POST "$B?backupId=b3" "{\"sourceVolume\":\"$VN\",\"sourceSnapshot\":\"$VN/snapshots/s3\"}"
expect_status 200 "create b3 of s3 while the agent is down"
OP3=$(opname)
aq_req DELETE "$P/volumes/v1/snapshots/s3"
refused 400 FAILED_PRECONDITION "source of backup" "deleting the snapshot a running backup reads"
aq_req POST "$B?backupId=b4" "{\"sourceVolume\":\"$VN\"}"
refused 400 FAILED_PRECONDITION "still running" "a second backup of the volume while one runs"
aq_req DELETE "$B/b3"
refused 400 FAILED_PRECONDITION CREATING "deleting a running backup"
aq_req DELETE "$P/volumes/v1?force=true"
refused 400 FAILED_PRECONDITION "backed up" "deleting the volume under a running backup"
aq_kill9 "$AQ_PID"
aq_start "$D" "$AQ_PORT" || aq_failed "aquiferd restarts after kill -9"
aq_req GET "/v1/$OP3"
expect_jq .done false "after kill -9 of aquiferd the create of b3 still runs"
aq_req GET "$B/b3"
expect_jq .state CREATING "b3 is still CREATING"
STORE=$SHELF/$(vault_secret store.directory.path)
nchunks() { find "$STORE/c" -type f 2>/dev/null | wc -l; }
BASE=$(nchunks)
aq_agent_restart "$D" node-east east "$SHELF" "$AGENT_API_PORT" "$AGENT_NFS_PORT"
for _ in $(seq 1200); do
	[ "$(nchunks)" -ge $((BASE + 24)) ] && break
	sleep 0.05
done
aq_kill9 "$AGENT_PID"
U3=$(uid_of b3)
echo "# b3 at the kill of the agent: $(( $(nchunks) - BASE )) new chunks"
ok "the agent was killed in the middle of the upload (chunks stored, no manifest)" \
	test "$(nchunks)" -ge $((BASE + 24)) -a ! -e "$STORE/m/$U3"
aq_req GET "$B/b3"
ok "b3 is not READY at the kill ($(printf '%s' "$BODY" | jq -r .state))" test "$(printf '%s' "$BODY" | jq -r .state)" != READY
aq_agent_restart "$D" node-east east "$SHELF" "$AGENT_API_PORT" "$AGENT_NFS_PORT"
# and aquiferd killed again while the agent uploads (UPLOADING, or READY
# already on a fast machine: then the kill comes after)
for _ in $(seq 300); do bk_is b3 '.state == "UPLOADING" or .state == "READY"' && break; sleep 0.1; done
ST3=$(printf '%s' "$BODY" | jq -r .state)
echo "# b3 at aquiferd's second kill: $ST3 ($(printf '%s' "$BODY" | jq -r .stateDetails))"
aq_kill9 "$AQ_PID"
aq_start "$D" "$AQ_PORT" || aq_failed "aquiferd restarts after the second kill -9 (b3 was $ST3)"
aq_op_wait "$OP3" 240
expect_true '.done and (has("error") | not) and .response.state == "READY"' "b3 ends READY after the kills (aquiferd's second while b3 was $ST3)"
aq_req GET "$B/b3"
expect_true '(.volumeUsageBytes | tonumber) >= 285212672' "b3 holds the 256 MiB file too"
ok "b3 restores" restored b3 "$AQ_TMP/r3"
ok "... big.bin (written over NFS)" same "$AQ_TMP/big.bin" "$AQ_TMP/r3/big.bin"
ok "... huge.bin" same "$VDIR/huge.bin" "$AQ_TMP/r3/huge.bin"
rm -rf "$AQ_TMP/r3"

# --- 5. retention, delete ---------------------------------------------------------
aq_mutate POST "$V/ret/backups?backupId=r1" "{\"sourceVolume\":\"$VN\"}"
expect_true '.done and (has("error") | not)' "r1 in vault ret READY"
aq_req GET "$V/ret/backups/r1"
END=$(printf '%s' "$BODY" | jq -r .enforcedRetentionEndTime)
ok "enforcedRetentionEndTime is 2 days after createTime ($END)" test "$(( $(date -d "$END" +%s) - $(date -d "$(printf '%s' "$BODY" | jq -r .createTime)" +%s) ))" -ge 172790
aq_req DELETE "$V/ret/backups/r1"
refused 400 FAILED_PRECONDITION "${END%%.*}" "an early delete names the end time"
aq_req GET "$V/ret/backups/r1"
expect_jq .state READY "r1 stays READY"
# a restore that fails: r1's manifest corrupted in the store (one byte)
RSTORE=$SHELF/$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.store.directory.path') FROM resources WHERE name='bvsecrets/projects/pa/locations/east/backupVaults/ret'")
RUID=$(sqlite3 "$D/aq.db" "SELECT json_extract(doc,'\$.uid') FROM resources WHERE name='bkrefs/projects/pa/locations/east/backupVaults/ret/backups/r1'")
ok "corrupt one byte of r1's manifest in the store" sh -c "printf '\\377' | dd of='$RSTORE/m/$RUID' bs=1 seek=40 conv=notrunc 2>/dev/null"
aq_mutate POST "$P/volumes?volumeId=rbad" "$(rvol rbad projects/pa/locations/east/backupVaults/ret/backups/r1 100)"
expect_true '.done and .error.code == 13 and (.error.message | test("restore"))' "a failed restore fails the create, saying why"
aq_req GET "$P/volumes/rbad"
expect_true '.state == "ERROR" and (.stateDetails | test("cannot restore backup"))' "the volume is ERROR with stateDetails"
ok "no half-restored folder is left on the shelf" sh -c "! ls -d '$SHELF'/volumes/*.restoring 2>/dev/null | grep -q ."
aq_mutate DELETE "$P/volumes/rbad"
aq_req DELETE "$V/bv"
refused 400 FAILED_PRECONDITION backups "a vault with backups is not deleted"
aq_mutate DELETE "$B/b1"
expect_true '.done and (has("error") | not)' "delete b1 (the first of the chain): done"
aq_req GET "$B/b1"
expect_error 404 NOT_FOUND "b1 gone"
ok "b2 still restores" restored b2 "$AQ_TMP/r2b"
ok "... byte for byte" same "$AQ_TMP/big.bin" "$AQ_TMP/r2b/big.bin"
ok "b3 (the third of the chain) still restores" restored b3 "$AQ_TMP/r3b"
ok "... big.bin byte for byte" same "$AQ_TMP/big.bin" "$AQ_TMP/r3b/big.bin"
ok "... huge.bin byte for byte" same "$VDIR/huge.bin" "$AQ_TMP/r3b/huge.bin"
rm -rf "$AQ_TMP/r3b"

# --- 6. CLI ---------------------------------------------------------------------
if [ -x "$AQUIFER" ]; then
	export XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$EDITOR
	export AQUIFER_PROJECT=pa AQUIFER_LOCATION=east
	unset AQUIFER_CA_FILE
	cli() { # WANT_RC DESC ARGS...
		local want=$1 desc=$2 rc
		shift 2
		timeout 120 "$AQUIFER" "$@" </dev/null >"$AQ_TMP/out" 2>"$AQ_TMP/err"
		rc=$?
		OUT=$(cat "$AQ_TMP/out") ERR=$(cat "$AQ_TMP/err")
		[ "$rc" = "$want" ] && aq_pass "$desc" || aq_failed "$desc: aquifer $* -> exit $rc, want $want" "$OUT" "$ERR"
	}
	cli 0 "cli: backups create (waits for READY)" backup-vaults backups create cb --backup-vault=bv --source-volume=$VN --description=cli
	cli 0 "cli: backups describe" backup-vaults backups describe cb --backup-vault=bv --format=json
	expect_eq "cli: READY" READY "$(printf '%s' "$OUT" | jq -r .state)"
	expect_eq "cli: sourceVolume" "$VN" "$(printf '%s' "$OUT" | jq -r .sourceVolume)"
	cli 0 "cli: backups update" backup-vaults backups update cb --backup-vault=bv --description=new
	cli 0 "cli: backups list" backup-vaults backups list --backup-vault=bv --format='value(name.basename(),description)'
	expect_contains "cli: list shows the update" "cb	new" "$OUT"
	cli 3 "cli: a backup of a missing snapshot is refused (exit 3)" backup-vaults backups create cc --backup-vault=bv --source-volume=$VN --source-snapshot=$VN/snapshots/nope
	cli 0 "cli: backups delete" backup-vaults backups delete cb --backup-vault=bv --quiet
	cli 3 "cli: cb is gone (NOT_FOUND, exit 3)" backup-vaults backups describe cb --backup-vault=bv
fi

aq_sanitizer_clean "$D"
ok "no sanitizer report in the agent's log (backups and restores ran there)" \
	sh -c "test -s '$D/node-east/agent.log' && ! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/node-east/agent.log'"
aq_finish
