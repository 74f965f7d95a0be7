#!/usr/bin/env bash
# test_db_migrate.sh: the upgrade path from SQLite to PostgreSQL (issue 22):
# `aquiferd db migrate --from sqlite:PATH --to postgres://...` copies every
# resource into an empty database. A cluster is made on SQLite (a pool, two
# volumes with data, a snapshot, an SMB user, a node), aquiferd is stopped,
# the database migrated, and aquiferd started on PostgreSQL on the same
# port with the same signing key: the API answers what it answered before,
# the node's agent (never restarted) keeps reporting and serving, and a new
# volume is placed and served. Refusals: a target that is not empty, the
# same database twice, missing arguments, a source written to during the
# copy (the target stays empty).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/lib/pg.sh"

aq_pg_skip_or_fail "$(basename "$0")"
command -v nfs-cat >/dev/null || { echo "SKIP: nfs-cat missing (apt-get install libnfs-utils)"; exit 77; }
D=$AQ_TMP/srv
aq_start "$D" || exit 1
PORT=$AQ_PORT
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=mg" '{}'
P=/v1/projects/mg/locations/east
aq_req POST "$P/storagePools?storagePoolId=pool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"20480"}'
aq_agent_for east || exit 1
NFS=$AGENT_NFS_PORT
vol() { printf '{"storagePool":"pool","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s",
	"exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1"; }
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$NFS&mountport=$NFS"; }
for v in v1 v2; do aq_mutate POST "$P/volumes?volumeId=$v" "$(vol $v)"; done
printf 'before the move' >"$AQ_TMP/f.txt"
nfs-cp "$AQ_TMP/f.txt" "$(url v1/f.txt)" >/dev/null 2>&1
aq_mutate POST "$P/volumes/v1/snapshots?snapshotId=s1" '{"description":"kept"}'
expect_true '.done and .response.state == "READY"' "a snapshot on SQLite"
aq_req POST "$P/smbUsers?smbUserId=alice" '{"password":"Secret-1234","uid":1000,"gid":1000}'
expect_status 200 "an SMB user on SQLite"

# what the API answers before (times and usage move on: names and settings)
view() {
	aq_req GET "$P/volumes"
	printf '%s' "$BODY" | jq -c '[.volumes[] | {name, state, shareName, capacityGib, storagePool, protocols}]'
	aq_req GET "$P/volumes/v1/snapshots"
	printf '%s' "$BODY" | jq -c '[.snapshots[] | {name, state, description}]'
	aq_req GET "$P/storagePools/pool"
	printf '%s' "$BODY" | jq -c '{name, state, capacityGib, serviceLevel}'
	aq_req GET "$P/smbUsers"
	printf '%s' "$BODY" | jq -c '[.smbUsers[] | {name, uid, gid}]'
	aq_req GET /v1/nodes
	printf '%s' "$BODY" | jq -c '[.nodes[] | {name, location, nfsAddress}]'
}
before=$(view)
ok "the view before the move names both volumes" grep -q '"v2"' <<<"$before"
aq_stop "$AQ_PID"

# --- the migration and its refusals ----------------------------------------
aq_pg_start "$AQ_TMP" || { aq_failed "PostgreSQL starts"; aq_finish; }
TO=$(aq_pg_createdb migrated) || { aq_failed "a database for the copy"; aq_finish; }
out=$("$AQUIFERD" db migrate --from "sqlite:$D/aq.db" --to "$TO" 2>&1)
rc=$?
expect_eq "db migrate exits 0 ($out)" 0 "$rc"
expect_contains "it says what it copied and that the counts match" "the counts of every kind match" "$out"
n=$(sqlite3 "$D/aq.db" 'SELECT COUNT(*) FROM resources')
expect_contains "it copied every resource of the source ($n)" "migrated $n resources" "$out"
out=$("$AQUIFERD" db migrate --from "sqlite:$D/aq.db" --to "$TO" 2>&1)
rc=$?
expect_eq "a second migrate into the same target fails" 1 "$rc"
expect_contains "because the target is not empty" "already holds resources" "$out"
expect_eq "and changes nothing there" "$n" \
	"$("$AQ_PG_BIN/psql" -qtA -h "$AQ_PG_SOCK" -U aquifer -d migrated -c 'SELECT COUNT(*) FROM resources')"
out=$("$AQUIFERD" db migrate --from "$TO" --to "$TO" 2>&1)
expect_contains "the same database twice is refused" "name the same database" "$out"
"$AQUIFERD" db migrate --from "sqlite:$D/aq.db" >/dev/null 2>&1
expect_eq "without --to: a usage error (exit 2)" 2 "$?"

# --- aquiferd on PostgreSQL, same port, same signing key ------------------------
D2=$AQ_TMP/srv-pg
mkdir -p "$D2"
cp "$D/aquiferd.key" "$D2/"
echo "$TO" >"$D2/pg-url"
AQ_DB=postgres aq_start "$D2" "$PORT" || { aq_failed "aquiferd starts on the migrated database"; aq_finish; }
after=$(view)
expect_eq "the API answers on PostgreSQL what it answered on SQLite" "$before" "$after"
for _ in $(seq 50); do
	aq_req GET /v1/nodes/node-east
	[ "$(printf '%s' "$BODY" | jq -r .state)" = READY ] && break
	sleep 0.2
done
expect_jq .state READY "the node (its agent never restarted) is READY"
expect_eq "the volume's data is served" "before the move" "$(nfs-cat "$(url v1/f.txt)" 2>&1)"
aq_mutate POST "$P/volumes?volumeId=v3" "$(vol v3)"
expect_true '.done and .response.state == "READY"' "a volume created after the move is placed and READY"
printf 'after' >"$AQ_TMP/g.txt"
nfs-cp "$AQ_TMP/g.txt" "$(url v3/g.txt)" >/dev/null 2>&1
expect_eq "and served" after "$(nfs-cat "$(url v3/g.txt)" 2>&1)"

# --- a source written to during the copy: nothing is committed ---------------
# (the copy reads one snapshot; rows added meanwhile make the counts differ)
sqlite3 "$D/aq.db" "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < 100000)
	INSERT INTO resources(name, kind, parent, seq, doc) SELECT 'filler/' || x, 'filler', '', 1000000 + x, '{}' FROM i"
TO2=$(aq_pg_createdb racing) || aq_failed "a second database"
(for i in $(seq 2000); do
	sqlite3 "$D/aq.db" "INSERT INTO resources(name, kind, parent, seq, doc) VALUES ('late/$i', 'late', '', 3000000 + $i, '{}')" 2>/dev/null
	sleep 0.01
done) &
W=$!
out=$("$AQUIFERD" db migrate --from "sqlite:$D/aq.db" --to "$TO2" 2>&1)
kill "$W" 2>/dev/null
wait "$W" 2>/dev/null
expect_contains "a source that changed during the copy fails it" "counts differ" "$out"
expect_eq "and leaves the target empty" 0 \
	"$("$AQ_PG_BIN/psql" -qtA -h "$AQ_PG_SOCK" -U aquifer -d racing -c 'SELECT COUNT(*) FROM resources')"

aq_sanitizer_clean "$D2"
aq_finish
