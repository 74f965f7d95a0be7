# tests/e2e/smb_lib.sh: what the SMB end-to-end suites share (sourced after
# lib.sh; test_smb_e2e.sh, test_smb_ea_acl.sh, test_smb_nfs_break.sh,
# test_smb_notify.sh, test_smb_torture.sh): one aquiferd and one agent
# serving SMB, SMB users pushed to it, smbclient against it.

# aq_smb_need FLAG: skip (77) without smbclient, or when the built agent does
# not know FLAG (--smb-listen, or a later flag a suite needs).
aq_smb_need() {
	command -v smbclient >/dev/null || { echo "SKIP: smbclient missing (apt-get install smbclient)"; exit 77; }
	"$AQUIFER_AGENT" --help 2>&1 | grep -q -- "$1" || { echo "SKIP: the agent has no $1"; exit 77; }
}

# aq_smb_cluster [AGENT_ARG...]: aquiferd in D=$AQ_TMP/srv (aq_acme_start:
# TOK, location east, project acme, P) and pool sp (PREMIUM, 2048 GiB);
# agent n1 joined to it with its shelf in $AQ_TMP/shelf, serving SMB on
# 127.0.0.1:$SMB (the AGENT_ARGs added to its flags). Sets D, TOK, P, SMB,
# NFS (the agent's NFS port) and INTENT (n1's intent.json). A server that
# does not start ends the script (exit 1, or aq_finish for the agent).
aq_smb_cluster() {
	D=$AQ_TMP/srv
	aq_acme_start "$D"
	SMB=$(aq_pick_port)
	AQ_AGENT_ARGS=(--smb-listen "127.0.0.1:$SMB" "$@")
	aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 10000 || { aq_failed "agent starts"; aq_finish; }
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

# aq_smb_sanitizer_clean: no sanitizer report in aquiferd's log nor in n1's
# (the agent ran the SMB server).
aq_smb_sanitizer_clean() {
	aq_sanitizer_clean "$D"
	ok "no sanitizer report in the agent's log" \
		bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n1/agent.log'"
}
