#!/usr/bin/env bash
# test_smb_ntfs.sh: securityStyle NTFS with the real tools (issue 18):
# Windows security descriptors stored per object and enforced by the SMB
# server. Like test_smb_cacls.sh, it runs whole (aquiferd, the agent with
# --smb-listen 127.0.0.1:445, smbclient, smbcacls) in a network namespace
# of its own. An SMB-only NTFS volume, carol (uid 1000) and dave (uid 1001):
# - a file carol puts has her as owner and a stored descriptor that lets
#   dave read; carol adds a DENY READ ACE for dave: dave's get is
#   NT_STATUS_ACCESS_DENIED, carol still reads, and the DENY, a SID no
#   POSIX mode could hold, reads back with smbcacls;
# - a folder with inheritable ACEs (OI|CI for dave) set by smbcacls --set,
#   whose DACL is not AUTO_INHERITED: a new file in it shows dave's ACE
#   without the INHERITED flag (as Windows and smbd: the ACEs look set by
#   hand), and dave reads it; the same ACEs set in SDDL with the DACL flags
#   AR and AI (AUTO_INHERIT_REQ, AUTO_INHERITED): the new file's ACEs carry
#   INHERITED (0x10) and its DACL AUTO_INHERITED (control 0x8404);
# - after a clean restart and after a kill -9 of the agent, the DENY and
#   the inherited ACE are still there and dave is still refused.
# Skipped (77) unless root with ip(8), smbclient and smbcacls.
if [ -z "${AQ_NETNS:-}" ]; then
	for tool in ip smbclient smbcacls; do
		command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
	done
	[ "$(id -u)" = 0 ] || { echo "SKIP: a network namespace needs root"; exit 77; }
	ns=aq-ntfs-$$
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
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"unixPermissions":"0777","securityStyle":"NTFS"}'
expect_jq .response.state READY "an NTFS SMB volume is READY"
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
ok "carol puts s.txt and makes the folders inh and inh2" smbc "$CAROL" "put $AQ_TMP/s.txt s.txt; mkdir inh; mkdir inh2"
out=$(cacls "$CAROL" s.txt)
expect_contains "smbcacls reads the owner: carol" "OWNER:S-1-22-1-1000" "$out"
reads() { # USER%PASS FILE: the get works and brings the bytes
	rm -f "$AQ_TMP/got.txt"
	smbc "$1" "get $2 $AQ_TMP/got.txt" >/dev/null
	cmp -s "$AQ_TMP/s.txt" "$AQ_TMP/got.txt"
}
ok "dave reads s.txt before any DENY" reads "$DAVE" s.txt
out=$(cacls "$CAROL" s.txt --add "ACL:S-1-22-1-1001:DENIED/0x0/READ")
expect_eq "carol adds a DENY READ for dave" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
expect_contains "the DENY reads back (type 1)" "ACL:S-1-22-1-1001:1/0x0/" "$(cacls "$CAROL" s.txt)"
denied() { # dave is refused s.txt, carol is not
	local out
	rm -f "$AQ_TMP/got.txt"
	out=$(smbc "$DAVE" "get s.txt $AQ_TMP/got.txt")
	grep -q NT_STATUS_ACCESS_DENIED <<<"$out" && [ ! -s "$AQ_TMP/got.txt" ] || { echo "dave: $out" >&2; return 1; }
	reads "$CAROL" s.txt
}
ok "dave, denied by the DACL, gets NT_STATUS_ACCESS_DENIED; carol reads" denied

out=$(cacls "$CAROL" inh --set "ACL:S-1-22-1-1000:ALLOWED/0x3/FULL,ACL:S-1-22-1-1001:ALLOWED/0x3/READ")
expect_eq "carol sets inheritable ACEs on inh" "" "$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "carol puts inh/n.txt" smbc "$CAROL" "put $AQ_TMP/s.txt inh/n.txt"
out=$(cacls "$CAROL" inh2 --sddl --set "D:ARAI(A;OICI;FA;;;S-1-22-1-1000)(A;OICI;FR;;;S-1-22-1-1001)")
expect_eq "carol sets the same ACEs on inh2 with AUTO_INHERIT_REQ and AUTO_INHERITED" "" \
	"$(grep -E 'NT_STATUS|Failed|failed' <<<"$out")"
ok "carol puts inh2/n.txt" smbc "$CAROL" "put $AQ_TMP/s.txt inh2/n.txt"
inherited() { # inh/n.txt: the ACEs without INHERITED; inh2/n.txt: with it, its DACL AUTO_INHERITED
	local out out2
	out=$(cacls "$CAROL" inh/n.txt)
	out2=$(cacls "$CAROL" inh2/n.txt)
	grep -q "^ACL:S-1-22-1-1001:0/0x0/" <<<"$out" && grep -q "^ACL:S-1-22-1-1000:0/0x0/" <<<"$out" &&
		grep -q "^OWNER:S-1-22-1-1000" <<<"$out" || { echo "inh/n.txt: $out" >&2; return 1; }
	grep -q "^ACL:S-1-22-1-1001:0/0x10/" <<<"$out2" && grep -q "^ACL:S-1-22-1-1000:0/0x10/" <<<"$out2" &&
		grep -q "^CONTROL:0x8404" <<<"$out2" || { echo "inh2/n.txt: $out2" >&2; return 1; }
}
ok "inh/n.txt holds the inherited ACEs (flag 0, inh's DACL is not AUTO_INHERITED), inh2/n.txt with 0x10" \
	inherited
ok "dave reads inh/n.txt by the inherited ACE" reads "$DAVE" inh/n.txt
ok "dave reads inh2/n.txt by the inherited ACE" reads "$DAVE" inh2/n.txt
out=$(smbc "$DAVE" "put $AQ_TMP/s.txt inh/d.txt")
expect_contains "dave may not add a file to inh (READ only)" NT_STATUS_ACCESS_DENIED "$out"

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
	expect_contains "after SIG$sig: the DENY is still there" "ACL:S-1-22-1-1001:1/0x0/" "$(cacls "$CAROL" s.txt)"
	ok "after SIG$sig: dave is still denied, carol reads" denied
	ok "after SIG$sig: the inherited ACEs are still there" inherited
done
aq_sanitizer_clean "$D"
ok "no sanitizer report in the agent's log" \
	bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n1/agent.log'"
aq_finish
