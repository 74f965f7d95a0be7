#!/usr/bin/env bash
# tests/e2e/test_kill9_nfs.sh: kill -9 the aquifer-agent in the middle of a
# burst of small files over NFSv3 (issue 25), restart it from its state
# folder, and check that every file whose CREATE, WRITE and COMMIT were
# answered exists with exactly its bytes.
#
# nfs_burst (one libnfs connection, no reconnect) makes files as fast as the
# agent answers, printing a name only after its COMMIT was answered OK; the
# agent gets SIGKILL once KILL_AFTER names were printed, while calls are in
# flight. After the restart nfs_burst check reads every printed file back
# through NFS. A second burst then goes on in the same folder: the restarted
# agent serves writes as before. (kill -9 leaves the page cache; the power
# cut side, what must be on disk before a reply, is test_nfs_durable.)
. "$(dirname "$0")/lib.sh"

BURST=${AQ_BUILDDIR:-.}/tests/e2e/nfs_burst
[ -x "$BURST" ] || BURST=$(pwd)/tests/e2e/nfs_burst
[ -x "$BURST" ] || { echo "SKIP: nfs_burst not built (libnfs missing)"; exit 77; }
KILL_AFTER=${KILL_AFTER:-150} # answered files before the kill

D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
aq_acme_start "$D"
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" || exit 1
N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT N1_PID=$AGENT_PID
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "create the pool"
aq_req POST "$P/volumes?volumeId=vk" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"vk",
  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}'
expect_status 200 "create the volume"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" 30
expect_jq '.response.state' READY "the volume is READY"
aq_req GET "$P/volumes/vk"
URL=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].libnfsUrl')
ok "mountOptions give a libnfs URL" test -n "$URL" -a "$URL" != null

# --- the burst, and the kill in the middle of it -----------------------------
"$BURST" make "$URL" /burst 100000 >"$AQ_TMP/ack" 2>"$AQ_TMP/burst.err" &
BPID=$!
AQ_PIDS+=("$BPID")
for _ in $(seq 600); do
	[ "$(wc -l <"$AQ_TMP/ack")" -ge "$KILL_AFTER" ] && break
	kill -0 "$BPID" 2>/dev/null || break
	sleep 0.05
done
kill -KILL "$N1_PID"
wait "$N1_PID" 2>/dev/null
ACKED=$(wc -l <"$AQ_TMP/ack")
ok "the burst had $KILL_AFTER files answered before the kill (had $ACKED)" test "$ACKED" -ge "$KILL_AFTER"
# nfs_burst ends at the first call the dead agent does not answer
for _ in $(seq 300); do kill -0 "$BPID" 2>/dev/null || break; sleep 0.05; done
ok "the burst stops when the agent is killed" sh -c "! kill -0 $BPID 2>/dev/null"
wait "$BPID" 2>/dev/null
ACKED=$(wc -l <"$AQ_TMP/ack")
ok "the burst ran until the kill (more than $KILL_AFTER answered: $ACKED)" test "$ACKED" -ge "$KILL_AFTER"

# --- restart and check every answered file ----------------------------------
aq_agent_restart "$D" n1 east "$SHELF" "$N1_API" "$N1_NFS"
for _ in $(seq 100); do "$BURST" check "$URL" /burst </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
"$BURST" check "$URL" /burst <"$AQ_TMP/ack" >"$AQ_TMP/check" 2>&1
RC=$?
expect_eq "every answered file is there with its bytes after kill -9 and restart" \
	"checked $ACKED bad 0" "$(tail -n 1 "$AQ_TMP/check")"
[ "$RC" = 0 ] || head -n 5 "$AQ_TMP/check"
# the restarted agent takes new files in the same folder
"$BURST" make "$URL" /burst 20 >"$AQ_TMP/ack2" 2>>"$AQ_TMP/burst.err"
expect_eq "the restarted agent answers a new burst" 20 "$(wc -l <"$AQ_TMP/ack2")"
"$BURST" check "$URL" /burst <"$AQ_TMP/ack2" >"$AQ_TMP/check2" 2>&1
expect_eq "and its files read back" "checked 20 bad 0" "$(tail -n 1 "$AQ_TMP/check2")"
aq_finish
