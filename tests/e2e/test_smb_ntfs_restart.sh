#!/usr/bin/env bash
# test_smb_ntfs_restart.sh: the security descriptors of an NTFS-style
# volume (securityStyle NTFS, agent/vol/vol_sd.c, checked by
# agent/smb/smb_acl.c) outlive the agent serving it (issue 18). Two agents
# on one shelf in a network namespace of their own, n1 with --smb-listen
# 127.0.0.1:445, n2 with 127.0.0.2:445; smbcacls and smbclient as clients;
# carol (uid 1000) owns the files, dave (uid 1001):
# - a.txt: carol FULL, dave DENIED READ; b.txt: carol FULL, dave READ only;
#   c.txt: dave's DENY set by carol just before the agent is killed (-9),
#   so only its acknowledgement says it was kept;
# - then, last before the kill, carol makes folder kd with 20 files, renames
#   one and removes another (smbclient sends no FLUSH: the agent answers
#   each without a sync, VOL_CRED_DEFER_SYNC): after the kill -9 and the
#   restart every one of those changes is there (the page cache kept them);
# - after the kill -9 and a restart from the agent's state, then after the
#   volume fails over to the other agent (its node drained): each file's
#   descriptor reads back (smbcacls) exactly as before, and the same
#   accesses are granted and denied (dave reads b.txt only and writes none,
#   carol reads all three).
# Skipped (77) unless root with ip(8), smbclient and smbcacls.
. "$(dirname "$0")/smb_lib.sh"
aq_smb_netns ntfsr "$0" "$@"
. "$(dirname "$0")/lib.sh"
aq_smb_need --smb-listen
aq_port_free 445 || { aq_failed "port 445 is free in namespace $AQ_NETNS"; aq_finish; }

declare -A PID API NFS SMBADDR=([n1]=127.0.0.1 [n2]=127.0.0.2)
AQ_SMB_PORT=445 aq_smb_cluster # aquiferd, pool sp, n1 on 127.0.0.1:445
PID[n1]=$AGENT_PID API[n1]=$AGENT_API_PORT NFS[n1]=$AGENT_NFS_PORT
AQ_AGENT_ARGS=(--smb-listen "${SMBADDR[n2]}:445")
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 10000 || { aq_failed "agent n2 starts"; aq_finish; }
PID[n2]=$AGENT_PID API[n2]=$AGENT_API_PORT NFS[n2]=$AGENT_NFS_PORT
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"unixPermissions":"0777","securityStyle":"NTFS"}'
expect_jq .response.state READY "an NTFS SMB volume is READY"
aq_smb_carol_dave # sets CAROL and DAVE; checks n1 got both, n2 is checked here
users_on() { jq -e '[.smbUsers[].name] | (index("carol") and index("dave"))' "$D/$1/state/intent.json" >/dev/null 2>&1; }
ok "both nodes got both users" aq_wait_until 10 bash -c "$(declare -f users_on); D=$D; users_on n1 && users_on n2"

host_of() { # the SMB host the volume's mount entry names
	aq_req GET "$P/volumes/docs"
	printf '%s' "$BODY" | jq -r '.mountOptions[] | select(.protocol == "SMB") | .ipAddress'
}
HOST=$(host_of)
case $HOST in 127.0.0.1) NODE=n1 OTHER=n2 ;; 127.0.0.2) NODE=n2 OTHER=n1 ;; *) NODE= ;; esac
ok "docs is served by n1 or n2 ($HOST)" test -n "$NODE"

smbc() { # USER%PASS COMMANDS
	timeout 60 smbclient "//$HOST/docs" -U "$1" "${AQ_SMB445_OPTS[@]}" -c "$2" 2>&1
}
cacls() { # USER%PASS FILE [ARGS...]
	local who=$1 f=$2
	shift 2
	timeout 60 smbcacls "//$HOST/docs" "$f" -U "$who" --numeric "${AQ_SMB445_OPTS[@]}" "$@" 2>&1
}
echo secret >"$AQ_TMP/s.txt"
ok "carol puts a.txt, b.txt, c.txt" smbc "$CAROL" "put $AQ_TMP/s.txt a.txt; put $AQ_TMP/s.txt b.txt; put $AQ_TMP/s.txt c.txt"
set_acl() { # FILE ACL: carol --set's it, no error
	local out
	out=$(cacls "$CAROL" "$1" --set "$2")
	! grep -qE 'NT_STATUS|Failed|failed' <<<"$out" || { echo "$1: $out" >&2; return 1; }
}
ok "carol sets a.txt: carol FULL, dave DENIED READ" set_acl a.txt "ACL:S-1-22-1-1001:DENIED/0x0/READ,ACL:S-1-22-1-1000:ALLOWED/0x0/FULL"
ok "carol sets b.txt: carol FULL, dave READ" set_acl b.txt "ACL:S-1-22-1-1000:ALLOWED/0x0/FULL,ACL:S-1-22-1-1001:ALLOWED/0x0/READ"
ok "carol sets c.txt: carol FULL, dave READ" set_acl c.txt "ACL:S-1-22-1-1000:ALLOWED/0x0/FULL,ACL:S-1-22-1-1001:ALLOWED/0x0/READ"

reads() { # USER%PASS FILE: the get works and brings the bytes
	rm -f "$AQ_TMP/got.txt"
	smbc "$1" "get $2 $AQ_TMP/got.txt" >/dev/null
	cmp -s "$AQ_TMP/s.txt" "$AQ_TMP/got.txt"
}
writes() { # USER%PASS FILE: a put over it works
	! grep -q NT_STATUS <<<"$(smbc "$1" "put $AQ_TMP/s.txt $2")"
}
matrix() { # one line per user, file and access: granted or denied
	local u f
	for u in carol dave; do
		for f in a.txt b.txt c.txt; do
			local who=$CAROL
			[ $u = dave ] && who=$DAVE
			reads "$who" "$f" && echo "$u read $f granted" || echo "$u read $f denied"
			[ $u = dave ] || continue
			writes "$who" "$f" && echo "$u write $f granted" || echo "$u write $f denied"
		done
	done
}
descriptors() { # each file's descriptor as smbcacls reads it
	local f
	for f in a.txt b.txt c.txt; do
		echo "== $f"
		cacls "$CAROL" "$f"
	done
}
M0=$(matrix)
want_m0=$(printf '%s\n' "carol read a.txt granted" "carol read b.txt granted" "carol read c.txt granted" \
	"dave read a.txt denied" "dave write a.txt denied" "dave read b.txt granted" "dave write b.txt denied" \
	"dave read c.txt granted" "dave write c.txt denied")
expect_eq "before: carol reads all, dave reads b.txt and c.txt, writes none" "$want_m0" "$M0"

# --- kill -9 right after a SET_INFO SECURITY, restart from the state ---------
ok "carol denies dave c.txt" set_acl c.txt \
	"ACL:S-1-22-1-1001:DENIED/0x0/READ,ACL:S-1-22-1-1000:ALLOWED/0x0/FULL"
kcmds="mkdir kd; cd kd"
for i in $(seq 20); do kcmds="$kcmds; put $AQ_TMP/s.txt k$i.txt"; done
kcmds="$kcmds; rename k1.txt r1.txt; del k2.txt"
out=$(smbc "$CAROL" "$kcmds")
ok "carol makes kd/k1..k20.txt, renames k1 to r1, removes k2 (no FLUSH), then the agent is killed at once" \
	bash -c '! grep -q NT_STATUS <<<"$1"' _ "$out"
kill -KILL "${PID[$NODE]}"
wait "${PID[$NODE]}" 2>/dev/null
want_m=${want_m0/dave read c.txt granted/dave read c.txt denied}
AQ_AGENT_ARGS=(--smb-listen "${SMBADDR[$NODE]}:445")
"$AQUIFER_AGENT" --server "$AQ_URL" --node "$NODE" --location east --shelf "$SHELF" \
	--listen "127.0.0.1:${API[$NODE]}" --nfs-listen "127.0.0.1:${NFS[$NODE]}" \
	--state-dir "$D/$NODE/state" "${AQ_AGENT_ARGS[@]}" >>"$D/$NODE/agent.log" 2>&1 &
PID[$NODE]=$!
AQ_PIDS+=("${PID[$NODE]}")
ok "the restarted agent serves docs again" aq_wait_until 30 eval 'smbc "$CAROL" ls >/dev/null'
DESC1=$(descriptors)
expect_contains "after kill -9: c.txt keeps the DENY set just before" "ACL:S-1-22-1-1001:1/0x0/" \
	"$(sed -n '/^== c.txt/,/^== /p' <<<"$DESC1")"
expect_eq "after kill -9: the same accesses granted and denied (c.txt now denied to dave)" "$want_m" "$(matrix)"
want_k=$(printf '%s\n' r1.txt $(seq 3 20 | sed 's/.*/k&.txt/') | sort)
expect_eq "after kill -9: kd holds r1.txt and k3..k20.txt, not k1 or k2 (created, renamed, removed without FLUSH)" \
	"$want_k" "$(smbc "$CAROL" "cd kd; ls" | awk '$1 ~ /\.txt$/ { print $1 }' | sort)"
rm -f "$AQ_TMP/r1.got"
smbc "$CAROL" "cd kd; get r1.txt $AQ_TMP/r1.got" >/dev/null
expect_eq "after kill -9: kd/r1.txt holds what was put" "secret" "$(cat "$AQ_TMP/r1.got" 2>/dev/null)"

# --- failover: docs moves to the other agent on the same shelf ------------------
aq_req POST "/v1/nodes/$NODE:drain" '{}'
expect_status 200 "drain $NODE"
moved() { test "$(host_of)" = "${SMBADDR[$OTHER]}"; }
ok "docs moves to $OTHER (${SMBADDR[$OTHER]})" aq_wait_until 60 moved
HOST=${SMBADDR[$OTHER]}
ok "$OTHER serves docs" aq_wait_until 30 eval 'smbc "$CAROL" ls >/dev/null'
expect_eq "on $OTHER: every descriptor reads back as on $NODE" "$DESC1" "$(descriptors)"
expect_eq "on $OTHER: the same accesses granted and denied" "$want_m" "$(matrix)"
for n in n1 n2; do aq_stop "${PID[$n]}"; done
aq_smb_sanitizer_clean # aquiferd's and n1's logs
ok "no sanitizer report in n2's log" \
	bash -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/n2/agent.log'"
aq_finish
