# tests/e2e/smb_lib.sh: what the SMB end-to-end suites share (sourced after
# lib.sh; test_smb_e2e.sh, test_smb_ea_acl.sh, test_smb_nfs_break.sh,
# test_smb_notify.sh, test_smb_torture.sh; test_smb_cacls.sh,
# test_smb_ntfs.sh and test_smb_ntfs_restart.sh source it first, for
# aq_smb_netns): one aquiferd and one agent serving SMB, SMB users pushed to
# it, smbclient against it.

# aq_smb_netns NAME SCRIPT [ARG...]: for the suites that need port 445
# (smbcacls talks to no other). Outside a namespace (AQ_NETNS unset): skip
# (77) unless root with ip(8), smbclient and smbcacls; run SCRIPT ARGs again
# whole in a new network namespace aq-NAME-PID with lo up, delete the
# namespace and exit with SCRIPT's status. Inside one (AQ_NETNS set): return.
# Needs nothing from lib.sh.
aq_smb_netns() {
	[ -n "${AQ_NETNS:-}" ] && return 0
	local ns=aq-$1-$$ tool rc
	shift
	for tool in ip smbclient smbcacls; do
		command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
	done
	[ "$(id -u)" = 0 ] || { echo "SKIP: a network namespace needs root"; exit 77; }
	ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot add a network namespace"; exit 77; }
	ip -n "$ns" link set lo up
	AQ_NETNS=$ns ip netns exec "$ns" bash "$@"
	rc=$?
	ip netns del "$ns"
	exit $rc
}

# aq_smb_need FLAG: skip (77) without smbclient, or when the built agent does
# not know FLAG (--smb-listen, or a later flag a suite needs).
aq_smb_need() {
	command -v smbclient >/dev/null || { echo "SKIP: smbclient missing (apt-get install smbclient)"; exit 77; }
	"$AQUIFER_AGENT" --help 2>&1 | grep -q -- "$1" || { echo "SKIP: the agent has no $1"; exit 77; }
}

# aq_smb_cluster [AGENT_ARG...]: aquiferd in D=$AQ_TMP/srv (aq_acme_start:
# TOK, location east, project acme, P) and pool sp (PREMIUM, 2048 GiB);
# agent n1 joined to it with its shelf in $AQ_TMP/shelf, serving SMB on
# 127.0.0.1:$SMB (the AGENT_ARGs added to its flags). SMB is a free port, or
# $AQ_SMB_PORT when set (445 in aq_smb_netns's namespace). Sets D, TOK, P,
# SMB, SHELF, NFS (the agent's NFS port) and INTENT (n1's intent.json). A
# server that does not start ends the script (exit 1, or aq_finish for the
# agent).
aq_smb_cluster() {
	D=$AQ_TMP/srv
	SHELF=$AQ_TMP/shelf
	aq_acme_start "$D"
	SMB=${AQ_SMB_PORT:-$(aq_pick_port)}
	AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB" "$@")
	aq_agent_start "$D" n1 east "$SHELF" "$(aq_join_token east)" 10000 || { aq_failed "agent starts"; aq_finish; }
	NFS=$AGENT_NFS_PORT
	INTENT=$D/n1/state/intent.json
	aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
}

# aq_smb_has_users NAME...: n1's intent lists every NAME among its smbUsers.
aq_smb_has_users() {
	local want
	want=$(printf 'index("%s") and ' "$@")
	jq -e "[.smbUsers[].name] | ${want% and }" "$INTENT" >/dev/null 2>&1
}

# aq_smb_wait_users NAME...: one check, that n1's intent lists every NAME
# within 10 s.
aq_smb_wait_users() {
	aq_wait_until 10 aq_smb_has_users "$@"
	ok "the node got the user(s) $*" aq_smb_has_users "$@"
}

# aq_smb_user NAME UID GID: the SMB user NAME (password Secret-1) of project
# acme created through the API, and pushed to n1 (aq_smb_wait_users).
aq_smb_user() {
	aq_req POST "$P/smbUsers?smbUserId=$1" "{\"password\":\"Secret-1\",\"uid\":\"$2\",\"gid\":\"$3\"}"
	expect_status 200 "the SMB user $1"
	aq_smb_wait_users "$1"
}

# aq_smbclient SHARE USER%PASSWORD COMMANDS: smbclient against n1's SMB
# listener, SMB 3.1.1 with signing required, for AQ_SMB_TIMEOUT seconds at
# most (default 120); its output (stdout and stderr) on stdout, its exit
# status returned.
aq_smbclient() {
	timeout "${AQ_SMB_TIMEOUT:-120}" smbclient "//127.0.0.1/$1" -p "$SMB" -U "$2" -m SMB3_11 \
		--option='client signing=required' -c "$3" 2>&1
}

# aq_smb_carol_dave: the SMB users carol (password Secret-1, uid/gid 1000)
# and dave (Secret-2, uid/gid 1001) created through the API, one check each,
# and one check that n1 got both. Sets CAROL and DAVE (USER%PASSWORD).
aq_smb_carol_dave() {
	aq_req POST "$P/smbUsers?smbUserId=carol" '{"password":"Secret-1","uid":"1000","gid":"1000"}'
	expect_status 200 "the SMB user carol"
	aq_req POST "$P/smbUsers?smbUserId=dave" '{"password":"Secret-2","uid":"1001","gid":"1001"}'
	expect_status 200 "the SMB user dave"
	aq_smb_wait_users carol dave
	CAROL=carol%Secret-1 DAVE=dave%Secret-2
}

# aq_smb445 USER%PASSWORD COMMANDS and aq_smb445_cacls USER%PASSWORD FILE
# [ARG...]: smbclient and smbcacls --numeric against //127.0.0.1/docs on port
# 445 (in aq_smb_netns's namespace), signing required, SMB 3.1.1 at least,
# 60 s at most; output (stdout and stderr) on stdout, exit status returned.
AQ_SMB445_OPTS=(--option='client signing=required' --option='client min protocol=SMB3_11')
aq_smb445() {
	timeout 60 smbclient //127.0.0.1/docs -U "$1" "${AQ_SMB445_OPTS[@]}" -c "$2" 2>&1
}
aq_smb445_cacls() {
	local who=$1 f=$2
	shift 2
	timeout 60 smbcacls //127.0.0.1/docs "$f" -U "$who" --numeric "${AQ_SMB445_OPTS[@]}" "$@" 2>&1
}

# aq_smb445_restart SIGNAL USER%PASSWORD: stop n1's agent (aq_smb_cluster)
# with SIGNAL, start it again from its state with the same flags, and wait
# (30 s at most each) for port 445 and for USER's smbclient ls to work.
aq_smb445_restart() {
	kill "-$1" "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	"$AQUIFER_AGENT" --server "$AQ_URL" --node n1 --location east --shelf "$SHELF" \
		--listen "127.0.0.1:$AGENT_API_PORT" --nfs-listen "127.0.0.1:$AGENT_NFS_PORT" \
		--state-dir "$D/n1/state" "${AQ_AGENT_ARGS[@]}" >>"$D/n1/agent.log" 2>&1 &
	AGENT_PID=$!
	AQ_PIDS+=("$AGENT_PID")
	aq_wait_until 30 bash -c 'exec 3<>/dev/tcp/127.0.0.1/445' 2>/dev/null
	aq_wait_until 30 aq_smb445 "$2" ls >/dev/null
}

# aq_smb_sanitizer_clean: no sanitizer report in aquiferd's log nor in n1's
# (the agent ran the SMB server).
aq_smb_sanitizer_clean() {
	aq_sanitizer_clean "$D"
	ok "no sanitizer report in the agent's log" \
		bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n1/agent.log'"
}
