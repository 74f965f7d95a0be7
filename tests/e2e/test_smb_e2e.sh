#!/usr/bin/env bash
# test_smb_e2e.sh: SMB end to end through the control plane (issue 18): a real
# aquiferd and a real aquifer-agent with --smb-listen; a dual-protocol volume
# created through the API, a user created with `aquifer smb-users create`,
# pushed with the intent; Debian's smbclient puts and gets a file (same
# sha256), a wrong password, an unknown user and a user of another project are
# refused; the volume's mountOptions give the agent's SMB listener, which the
# agent reported itself (smbAddress in its join and status reports).
# Needs the agent's SMB server (branch smbs): skipped (77) without it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
AQUIFER=$AQ_BUILDDIR/aquifer
aq_smb_need --smb-listen

aq_smb_cluster
export XDG_CONFIG_HOME=$AQ_TMP/config AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK
export AQUIFER_PROJECT=acme AQUIFER_LOCATION=east
unset AQUIFER_CA_FILE
aq_req POST "/v1/projects?projectId=other" '{}'
# the agent reports its own SMB listener (join and status: api_intent.h)
aq_req GET /v1/nodes/n1
expect_jq .smbAddress "127.0.0.1:$SMB" "the node's smbAddress is the agent's own --smb-listen, as it reported it"

aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["NFSV3","SMB"],"unixPermissions":"0777"}'
expect_jq .response.state READY "a dual-protocol volume created through the API is READY"
expect_jq '.response.mountOptions[] | select(.protocol == "SMB") | "\(.ipAddress):\(.port)"' "127.0.0.1:$SMB" "its SMB mount entry has the agent's SMB listener"
expect_jq '.response.mountOptions[] | select(.protocol == "SMB") | .exportFull' "//127.0.0.1/docs" "its SMB mount entry names //host/share"
printf 'Secret-1\n' >"$AQ_TMP/pw"
timeout 60 "$AQUIFER" smb-users create alice --password-file="$AQ_TMP/pw" --uid=1234 --gid=4321 >/dev/null 2>"$AQ_TMP/err"
expect_eq "aquifer smb-users create alice" 0 "$?"
aq_req POST "/v1/projects/other/locations/east/smbUsers?smbUserId=bob" '{"password":"Other-2","uid":"2000","gid":"2000"}'
expect_status 200 "bob, a user of project other"
aq_smb_wait_users alice bob

S() { aq_smbclient docs "$@"; } # USER%PASS COMMANDS
head -c $((8 << 20)) /dev/urandom >"$AQ_TMP/put.bin"
out=$(cd "$AQ_TMP" && S 'alice%Secret-1' 'put put.bin f.bin; get f.bin got.bin')
expect_eq "put then get through SMB gives the same sha256" "$(sha256sum <"$AQ_TMP/put.bin")" "$(sha256sum <"$AQ_TMP/got.bin" 2>/dev/null)"
[ -f "$AQ_TMP/got.bin" ] || printf '%s\n' "$out" | tail -5
# Out of the page cache, the READs go to the agent's read workers
# (agent/smb/smb_read.c: RWF_NOWAIT fails, a worker reads, the loop answers
# signed): the same bytes come back.
F_BIN=$AQ_TMP/shelf/$(jq -r '.volumes[] | select(.shareName == "docs") | .dir' "$INTENT")/f.bin
sync "$F_BIN" 2>/dev/null # dirty pages stay cached
dd if="$F_BIN" iflag=nocache count=0 status=none 2>/dev/null
ok "f.bin is out of the page cache" test "$(fincore -n -b -o RES "$F_BIN" 2>/dev/null | tr -d ' ')" = 0
rm -f "$AQ_TMP/got.bin"
out=$(cd "$AQ_TMP" && S 'alice%Secret-1' 'get f.bin got.bin')
expect_eq "a get of the file out of the page cache (worker reads) gives the same sha256" "$(sha256sum <"$AQ_TMP/put.bin")" "$(sha256sum <"$AQ_TMP/got.bin" 2>/dev/null)"
# A non-empty directory is not removed, and the client is told (issue 25:
# the Linux client's rmdir reported success while the close kept it).
out=$(S 'alice%Secret-1' 'mkdir full; mkdir full\sub; rmdir full; ls full\*')
ok "rmdir of a non-empty directory answers DIRECTORY_NOT_EMPTY" grep -q 'NT_STATUS_DIRECTORY_NOT_EMPTY' <<<"$out"
ok "and the directory and its subdirectory stay" grep -q ' sub  *D' <<<"$out"
out=$(S 'alice%Wrong-1' 'ls')
ok "a wrong password is refused" grep -q 'NT_STATUS_LOGON_FAILURE\|NT_STATUS_ACCESS_DENIED' <<<"$out"
out=$(S 'mallory%Secret-1' 'ls')
ok "an unknown user is refused" grep -q 'NT_STATUS_LOGON_FAILURE\|NT_STATUS_ACCESS_DENIED' <<<"$out"
out=$(S 'bob%Other-2' 'ls')
ok "a user of another project is refused on acme's share" grep -q 'NT_STATUS_\(LOGON_FAILURE\|ACCESS_DENIED\|BAD_NETWORK_NAME\)' <<<"$out"
ok "NFS sees the file owned by alice's uid" test "$(stat -c %u "$AQ_TMP/shelf/$(jq -r '.volumes[] | select(.shareName == "docs") | .dir' "$INTENT")/f.bin" 2>/dev/null)" = 1234

# --smb-listen HOST:0: the join cannot know the port the kernel picks; the
# status reports carry it, and it is the port the agent listens on
AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:0")
aq_agent_start "$D" n2 east "$AQ_TMP/shelf2" "$(aq_join_token east)" 10000 || { aq_failed "agent n2 starts"; aq_finish; }
N2_PID=$AGENT_PID
for _ in $(seq 100); do
	aq_req GET /v1/nodes/n2
	[[ "$(printf '%s' "$BODY" | jq -r '.smbAddress // empty')" =~ ^127\.0\.0\.1:[1-9][0-9]*$ ]] && break
	sleep 0.1
done
N2_SMB=$(printf '%s' "$BODY" | jq -r '.smbAddress // empty')
ok "n2 (--smb-listen 127.0.0.1:0) reports its bound SMB address in its status ($N2_SMB)" \
	grep -Eq '^127\.0\.0\.1:[1-9][0-9]*$' <<<"$N2_SMB"
ok "n2's reported SMB port is the one it listens on" \
	grep -q ":$(printf '%04X' "${N2_SMB##*:}") 00000000:0000 0A" <(cat "/proc/$N2_PID/net/tcp" 2>/dev/null)
aq_sanitizer_clean "$D"
aq_finish
