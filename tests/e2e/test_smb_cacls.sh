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
if [ -z "${AQ_NETNS:-}" ]; then
	for tool in ip smbclient smbcacls; do
		command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
	done
	[ "$(id -u)" = 0 ] || { echo "SKIP: a network namespace needs root"; exit 77; }
	ns=aq-cacls-$$
	ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot add a network namespace"; exit 77; }
	ip -n "$ns" link set lo up
	AQ_NETNS=$ns ip netns exec "$ns" bash "$0" "$@"
	rc=$?
	ip netns del "$ns"
	exit $rc
fi
. "$(dirname "$0")/lib.sh"
"$AQUIFER_AGENT" --help 2>&1 | grep -q -- --smb-listen || { echo "SKIP: the agent has no SMB server"; exit 77; }
aq_port_free 445 || { aq_failed "port 445 is free in namespace $AQ_NETNS"; aq_finish; }

D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
TOK=$(aq_token "$D" admin)
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
AQ_AGENT_ARGS=(--smb-listen 127.0.0.1:445)
aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 10000 || { aq_failed "agent starts"; aq_finish; }
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"unixPermissions":"0777"}'
expect_jq .response.state READY "an SMB volume is READY"
aq_req POST "$P/smbUsers?smbUserId=carol" '{"password":"Secret-1","uid":"1000","gid":"1000"}'
expect_status 200 "the SMB user carol"
aq_req POST "$P/smbUsers?smbUserId=dave" '{"password":"Secret-2","uid":"1001","gid":"1001"}'
expect_status 200 "the SMB user dave"
INTENT=$D/n1/state/intent.json
for _ in $(seq 100); do
	jq -e '[.smbUsers[].name] | (index("carol") and index("dave"))' "$INTENT" >/dev/null 2>&1 && break
	sleep 0.1
done
ok "the node got both users" jq -e '[.smbUsers[].name] | (index("carol") and index("dave"))' "$INTENT" >/dev/null

OPTS=(--option='client signing=required' --option='client min protocol=SMB3_11')
smbc() { # USER%PASS COMMANDS
	timeout 60 smbclient //127.0.0.1/docs -U "$1" "${OPTS[@]}" -c "$2" 2>&1
}
cacls() { # USER%PASS FILE [ARGS...]
	local who=$1 f=$2
	shift 2
	timeout 60 smbcacls //127.0.0.1/docs "$f" -U "$who" --numeric "${OPTS[@]}" "$@" 2>&1
}
CAROL=carol%Secret-1 DAVE=dave%Secret-2
echo secret >"$AQ_TMP/s.txt"
ok "carol puts s.txt" smbc "$CAROL" "put $AQ_TMP/s.txt s.txt; mkdir eadir"
F=$(find "$SHELF" -name s.txt -type f | head -n1)
EADIR=$(find "$SHELF" -name eadir -type d | head -n1)
ok "the file and the folder are on the shelf" test -n "$F" -a -n "$EADIR"

out=$(cacls "$CAROL" s.txt)
expect_contains "smbcacls reads the owner" "OWNER:S-1-22-1-1000" "$out"
expect_contains "smbcacls reads the group" "GROUP:S-1-22-2-1000" "$out"

# the ACL: carol alone, full control
out=$(cacls "$CAROL" s.txt --set "ACL:S-1-22-1-1000:ALLOWED/0x0/FULL")
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
ok "smbcacls reads it back: carol reads and writes, Everyone and the group nothing" acl_says "$(cacls "$CAROL" s.txt)"

denied() { # the ACL holds: dave is refused, carol is not, nothing changed
	local out
	rm -f "$AQ_TMP/got.txt"
	out=$(smbc "$DAVE" "get s.txt $AQ_TMP/got.txt")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" && [ ! -s "$AQ_TMP/got.txt" ] || return 1
	out=$(cacls "$DAVE" s.txt --set "ACL:S-1-1-0:ALLOWED/0x0/FULL")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" || return 1
	[ "$(stat -c %a "$F")" = 700 ] || return 1
	rm -f "$AQ_TMP/got.txt"
	smbc "$CAROL" "get s.txt $AQ_TMP/got.txt" >/dev/null
	cmp -s "$AQ_TMP/s.txt" "$AQ_TMP/got.txt"
}
ok "dave, denied by the DACL, gets NT_STATUS_ACCESS_DENIED (read and --set); carol reads" denied

# an EA on a folder
out=$(smbc "$CAROL" "setea eadir colour blue")
expect_eq "setea on a folder is accepted" "" "$(grep NT_STATUS <<<"$out")"
ea_kept() { # geteas prints the name and the value
	local out
	out=$(smbc "$CAROL" "geteas eadir")
	grep -q colour <<<"$out" && grep -q blue <<<"$out" || { echo "geteas: $out" >&2; return 1; }
}
ok "geteas reads the folder's EA" ea_kept

restart() { # SIGNAL: stop the agent with it, start it again from its state
	kill "-$1" "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	"$AQUIFER_AGENT" --server "$AQ_URL" --node n1 --location east --shelf "$SHELF" \
		--listen "127.0.0.1:$AGENT_API_PORT" --nfs-listen "127.0.0.1:$AGENT_NFS_PORT" \
		--state-dir "$D/n1/state" "${AQ_AGENT_ARGS[@]}" >>"$D/n1/agent.log" 2>&1 &
	AGENT_PID=$!
	AQ_PIDS+=("$AGENT_PID")
	aq_wait_until 30 bash -c 'exec 3<>/dev/tcp/127.0.0.1/445' 2>/dev/null
	aq_wait_until 30 eval 'smbc "$CAROL" ls >/dev/null'
}
for sig in TERM KILL; do
	restart "$sig"
	ok "after the agent's SIG$sig and restart: smbcacls reads the same ACL" acl_says "$(cacls "$CAROL" s.txt)"
	ok "after SIG$sig: dave is still denied, carol reads" denied
	ok "after SIG$sig: the folder's EA is kept" ea_kept
done
aq_sanitizer_clean "$D"
ok "no sanitizer report in the agent's log" \
	bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n1/agent.log'"
aq_finish
