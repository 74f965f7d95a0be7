#!/usr/bin/env bash
# test_smb_torture.sh: real SMB clients against the agent's SMB server
# (issue 18), side by side with a stock Samba smbd serving the same folder.
# - smbclient (Debian): a file put by one client is read back, overwritten
#   and deleted by another (the share reservations and locks of closed opens
#   are gone from the store's table); smbclient cannot hold a file open
#   while another client tries it, smbtorture does that.
# - smbtorture (samba-testsuite): the suites (or single tests) of SUITES run against
#   aquifer-agent and against smbd (started here on 127.0.0.1 with its own
#   passdb, serving the volume's folder on the shelf), in the same run; the
#   pass counts per suite are printed side by side; every test of CLAIMED
#   must pass on both, and the test fails when any one of them does not.
# Skipped (77) without smbclient, or without smbtorture and smbd.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/smb_lib.sh"
command -v smbtorture >/dev/null || { echo "SKIP: smbtorture missing (apt-get install samba-testsuite)"; exit 77; }
SMBD=$(command -v smbd || echo /usr/sbin/smbd)
[ -x "$SMBD" ] || { echo "SKIP: smbd missing (apt-get install samba)"; exit 77; }
aq_smb_need --smb-listen

# The suites run on both servers, and the tests this server claims: each
# must pass on aquifer-agent and on smbd.
# SMB_TORTURE_SUITES="smb2.lock" runs only those (the claims of the others then fail as not run).
# smb2.notify runs test by test (120 s each): a test that waits for a change
# a server does not report (DOS attributes: mask-change, basedir) waits out
# its timeout, so only the claimed ones run. Claimed are those whose outcome
# does not hang on when smbd's notifyd (which registers a request and
# delivers a change asynchronously) sees a change: valid-req, tcon, double,
# overflow and rmdir1-4 pass on the agent every time and on smbd most times
# (under load smbd misses or delays a change: a failure or a wait for ever);
# the whole suite, by hand: SMB_TORTURE_SUITES=smb2.notify (counts in
# agent/README.md). The agent's side is in test_smb_notify and test_smb_notify.sh.
NOTIFY_TESTS="tdis tdis1 close logoff file tcp handle-permissions"
# smb2.oplock, smb2.lease, smb2.durable-open, smb2.durable-v2-open: oplocks
# and leases with acknowledged breaks, durable handles (agent/smb/smb_lease.c,
# smb_durable.c); the suites' counts are in agent/README.md (each test run on
# its own). Claimed: a set that passes on both and covers the grants, the
# waiting CREATE, the acks, epochs, stat opens and durable reconnects, none
# of those that wait out a 35 s break timeout (batch22a, timeout-disconnect),
# run test by test to keep the suite short.
# Breaks by renames, deletes and locks (batch19, brl1-3, doc, v2_rename), a
# sharing violation taking H alone (break_twice), lease versions and state
# across opens (v2_epoch2/3), durable delete-on-close, session reconnect and
# LOGOFF (delete_on_close1, reopen1a, reopen2a, reopen4). lease.rename_wait
# is claimed below (LEASE_TESTS) since it no longer races.
OPLOCK_TESTS="$(printf 'smb2.oplock.%s ' exclusive1 exclusive2 exclusive5 batch1 batch6 batch10 batch13 batch23 \
	levelii500 levelii502 batch19 brl1 brl2 brl3 doc) $(printf 'smb2.lease.%s ' breaking1 breaking2 breaking5 \
	breaking6 v2_epoch1 statopen2 duplicate_open v2_rename break_twice v2_epoch2 v2_epoch3) \
	$(printf 'smb2.durable-open.%s ' open-oplock open-lease reopen1 reopen2 open2-oplock reopen1a reopen2a reopen4 \
	delete_on_close1) $(printf 'smb2.durable-v2-open.%s ' open-lease reopen1 reopen2 persistent-open-oplock reopen1a)"
# smb2.compound, smb2.read, smb2.ioctl and smb2.credits run whole (seconds each): compounds,
# granted access, server-side copy (agent/smb/smb_copy.c), credits; their counts are in
# agent/README.md.
# smb2.ioctl.dup_extents_* (block cloning, agent/smb/smb_clone.c) skip on both on an ext4 shelf;
# with TMPDIR on a btrfs mount (the shelf and smbd's folder then on it) 12 of 14 pass on the agent
# and all skip on smbd (vfs_default does not clone), so they are not claimed (agent/README.md).
# smb2.session runs whole (seconds): re-authentication of a live session
# (reauth1, reauth6; reauth2-5 re-authenticate as anonymous, which the agent
# refuses by design), multichannel binds (bind1, bind2, a bind with a wrong
# password: bind_invalid_auth, binds across signing algorithms:
# bind_negative_smb3signCtoHs/HtoCs) and the refused ones of bind_negative_*
# with smbd's statuses, a malformed NTLMv2 response (ntlmssp_bug14932),
# signing and encryption algorithms, reconnects (agent/smb/smb_sess.c).
SESSION_TESTS="bind1 bind2 bind_invalid_auth $(printf 'bind_negative_smb%s ' 202 210d 210s 2to3d 2to3s 3encGtoCd 3encGtoCs \
	3signC30toGd 3signC30toGs 3signCtoGd 3signCtoGs 3signCtoHs 3signGtoC30d 3signGtoC30s 3signGtoCd 3signGtoCs \
	3signGtoH2Xd 3signGtoH2Xs 3signGtoHd 3signGtoHs 3signH2XtoGd 3signH2XtoGs 3signHtoCs 3signHtoGd 3signHtoGs \
	3sneCtoGd 3sneCtoGs 3sneGtoCd 3sneGtoCs 3sneGtoHd 3sneGtoHs 3sneHtoGd 3sneHtoGs 3to2d 3to2s 3to3d 3to3s) \
	encryption-aes-128-ccm encryption-aes-128-gcm encryption-aes-256-ccm encryption-aes-256-gcm ntlmssp_bug14932 \
	reauth1 reauth6 reconnect1 reconnect2 signing-aes-128-cmac signing-aes-128-gmac signing-hmac-sha-256 two_logoff"
# smb2.multichannel runs whole (~20 s): the interface list
# (FSCTL_QUERY_NETWORK_INTERFACE_INFO), 32 channels and the 33rd refused
# (num_channels), an oplock and a lease broken over a session's channels
# (oplocks.test1, leases.test1); smb2.ioctl.network_interface_info, claimed
# below, reads the same list. The others need smbd's FSCTL_SMBTORTURE (or
# iptables) to block a channel and fail on both; bugs.bug_15346 connects to
# port 445 (agent/smb/smb_sess.c, smb_iface.c).
MULTICHANNEL_TESTS="generic.interface_info generic.num_channels oplocks.test1 leases.test1"
# smb2.lease (issue 18, 6 Dec): a lease key on two connections of one ClientGuid is one lease
# (v2_complex2), and the rename a CLOSE or an acknowledgment lets go on is done before that is
# answered (rename_wait: 5 of 5 runs on both, it raced before); run test by test.
LEASE_TESTS="smb2.lease.v2_complex2 smb2.lease.rename_wait"
# durable handles keep what smbd keeps (issue 18, 6 Dec night, agent/smb/smb_durable.c): a leased
# handle comes back by its lease context whatever the OplockLevel, only to its ClientGuid
# (reopen1a-lease, reopen2-lease, reopen2-lease-v2), the v1 form takes a v2 handle (reopen2b), the
# AllocationSize its CREATE asked (alloc-size); file-position, read-only, open2-lease and reopen2c
# passed before and were not claimed; each passed on both in three runs (23:25-23:33 UTC).
# smb2.lease (issue 18, 7 Dec night, agent/smb/smb_lease.c, agent/vol/vol_lease.c): a lease break goes to
# the client's oldest connection (v2_complex1), and a break nobody acknowledges takes the whole lease at
# the break timeout (timeout: it waits out that timeout, 35 s, on each server); both passed on both in
# three runs (v2_complex1 00:00-00:19 UTC, timeout 23:54-00:18 UTC).
LEASE_TESTS="$LEASE_TESTS smb2.lease.v2_complex1 smb2.lease.timeout"
DURABLE_TESTS="$(printf 'smb2.durable-open.%s ' reopen1a-lease reopen2-lease reopen2-lease-v2 alloc-size file-position \
	read-only open2-lease) $(printf 'smb2.durable-v2-open.%s ' reopen1a-lease reopen2b reopen2c reopen2-lease \
	reopen2-lease-v2)"
# smb2.lease and smb2.oplock (issue 18, 6 Dec evening, agent/smb/smb_lease.c, agent/vol/vol_lease.c):
# upgrades only to a state both leases hold (upgrade3), R beside an oplock and no oplock beside H
# (oplock), a stat open's lease broken like any (statopen), a broken lease granted again
# (nobreakself), a key grown on another connection (complex1), a lock breaking RH (lock1), breaks in
# steps RWH -> RH -> R -> none (breaking3, v2_breaking3), an overwrite not waiting for H
# (breaking4); no Level II beside a cache of writes (exclusive4, batch8, batch9, batch9a), an
# allocation size breaking Level II (batch12), READ_CONTROL breaking oplocks (statopen1); each
# passed on both in three runs (19:35-20:00 UTC).
LEASE_TESTS="$LEASE_TESTS $(printf 'smb2.lease.%s ' upgrade3 oplock statopen nobreakself complex1 lock1 breaking3 \
	v2_breaking3 breaking4) $(printf 'smb2.oplock.%s ' exclusive4 batch8 batch9 batch9a batch12 statopen1)"
# smb2.ioctl sparse files (agent/smb/smb_sparse.c over agent/vol/vol_sparse.c):
# SET_SPARSE, SET_ZERO_DATA, QUERY_ALLOCATED_RANGES; passed on both in three runs (15:47 UTC).
SPARSE_TESTS="sparse_file_flag sparse_file_attr sparse_dir_flag sparse_set_nobuf sparse_set_oversize sparse_qar \
sparse_qar_malformed sparse_punch sparse_hole_dealloc sparse_lock sparse_perms sparse_punch_invalid sparse_qar_ob1 \
sparse_qar_multi sparse_qar_overflow sparse_copy_chunk"
# smb2.getinfo.qfile_buffercheck (its file made with two EAs in an ExtA create context) and
# getinfo_access (the access each class needs, the EA list included) pass since the store keeps EAs
# (agent/smb/smb_info_ea.c); each passed on both in three runs (23:45-23:55 UTC, 6 Dec).
# smb2.acls and smb2.sdread run whole (seconds): security descriptors on a UNIX-style share
# (agent/smb/smb_info_sec.c; issue 18, 7 Dec): a CREATE asking data access the DACL does not give
# is refused even beside MAXIMUM_ALLOWED (MXAC-NOT-GRANTED), a READONLY file is not opened for
# writing or overwritten (OVERWRITE_READ_ONLY_FILE), the descriptor is read with each access mask
# (sdread); each passed on both in three runs (03:24-03:26 UTC). The other twelve of smb2.acls need
# Windows descriptors (inheritance, deny ACEs, other SIDs) and fail on a stock smbd too; smb2.ea
# (acl_xattr) needs smbd's vfs_acl_xattr and fails on both.
# smb2.lock (issue 18, 7 Dec): a LOCK resent with its bucket's last LockSequence is a replay, answered
# SUCCESS without touching a lock, on a 3.x multichannel connection or a durable open
# (replay_smb3_specification_multi, _durable; agent/smb/smb_lock.c); both passed on both in three runs
# (14:51 UTC). replay_broken_windows skips on both (the server checks LockSequence on all handles).
SUITES=${SMB_TORTURE_SUITES:-"smb2.connect smb2.lock smb2.sharemode smb2.create smb2.rw smb2.dir smb2.getinfo \
smb2.compound smb2.read smb2.ioctl smb2.credits smb2.acls smb2.sdread $(printf 'smb2.notify.%s ' $NOTIFY_TESTS) $OPLOCK_TESTS $LEASE_TESTS $DURABLE_TESTS \
smb2.session \
smb2.multichannel"}
CLAIMED="
smb2.connect.connect
smb2.lock.valid-request
smb2.lock.rw-shared
smb2.lock.rw-exclusive
smb2.lock.auto-unlock
smb2.lock.lock
smb2.lock.async
smb2.lock.cancel
smb2.lock.cancel-tdis
smb2.lock.cancel-logoff
smb2.lock.errorcode
smb2.lock.zerobytelength
smb2.lock.zerobyteread
smb2.lock.unlock
smb2.lock.multiple-unlock
smb2.lock.stacking
smb2.lock.contend
smb2.lock.context
smb2.lock.range
smb2.lock.overlap
smb2.lock.truncate
smb2.lock.replay_smb3_specification_durable
smb2.lock.replay_smb3_specification_multi
smb2.sharemode.sharemode-access
smb2.sharemode.access-sharemode
smb2.sharemode.bug14375
smb2.create.brlocked
smb2.create.delete
smb2.create.dir-alloc-size
smb2.create.mkdir-dup
smb2.create.multi
smb2.create.leading-slash
smb2.create.impersonation
smb2.rw.rw1
smb2.rw.rw2
smb2.dir.find
smb2.dir.fixed
smb2.dir.many
smb2.dir.sorted
smb2.dir.large-files
smb2.create.dosattr_tmp_dir
smb2.getinfo.granted
smb2.getinfo.qsec_buffercheck
smb2.getinfo.qfile_buffercheck
smb2.getinfo.getinfo_access
smb2.acls.MXAC-NOT-GRANTED
smb2.acls.OVERWRITE_READ_ONLY_FILE
smb2.sdread.sdread
$(printf 'smb2.compound.%s\n' related1 related2 related5 related6 related8 related9 unrelated1 invalid1 invalid2 invalid3 \
	invalid4 interim1 create-write-close)
$(printf 'smb2.read.%s\n' eof dir access position)
$(printf 'smb2.credits.%s\n' session_setup_credits_granted single_req_credits_granted skipped_mid)
$(printf 'smb2.ioctl.%s\n' req_resume_key req_two_resume_keys compress_notsup_get compress_notsup_set network_interface_info)
$(printf 'smb2.ioctl.copy_chunk_%s\n' simple multi tiny overwrite append limits src_lock dest_lock bad_key src_is_dest \
	src_is_dest_overlap bad_access write_access src_exceed src_exceed_multi sparse_dest max_output_sz zero_length \
	across_shares across_shares2 across_shares3)
$(printf 'smb2.ioctl.%s\n' $SPARSE_TESTS)
$(printf '%s\n' $LEASE_TESTS)
$(printf '%s\n' $DURABLE_TESTS)
$(printf 'smb2.notify.%s\n' $NOTIFY_TESTS)
$(printf '%s\n' $OPLOCK_TESTS)
$(printf 'smb2.session.%s\n' $SESSION_TESTS)
$(printf 'smb2.multichannel.%s\n' $MULTICHANNEL_TESTS)
"

# SMB_TORTURE_SECURITY=NTFS: the volume's securityStyle is NTFS (descriptors
# stored and enforced, agent/smb/smb_acl_open.c) and smbd keeps NT ACLs the
# same way (vfs objects = acl_xattr, Debian's samba-vfs-modules); the
# suites are then smb2.acls and smb2.sdread and the claims theirs: each of
# these passed on both in three runs in a row (11:11-11:12 UTC, 7 Dec).
# INHERITANCE and INHERITFLAGS (ACEs marked INHERITED and the DACL
# AUTO_INHERITED only under an AUTO_INHERITED parent; SET_INFO keeps DI only
# beside DR, agent/smb/smb_acl.c) since, passed on both in three runs in a
# row (14:52-14:53 UTC, 7 Dec; smb2.acls 12/14 here, 13/14 on smbd). Not claimed:
# SDFLAGSVSCHOWN makes Everyone (S-1-1-0) the owner as a plain user, which
# Windows refuses without SeRestorePrivilege and the agent refuses to all
# but root (STATUS_INVALID_OWNER); smbd takes it only because vfs_acl_xattr
# sets "force unknown acl user" (an owner SID without a uid becomes the
# caller). Run by root (uid 0) it passes on the agent too. ACCESSBASED (a
# share the test expects) fails on both.
# The default is UNIX and smbd without acl_xattr.
SEC=${SMB_TORTURE_SECURITY:-UNIX}
SMBD_SEC=()
if [ "$SEC" = NTFS ]; then
	SMBD_SEC=('vfs objects = acl_xattr')
	SUITES=${SMB_TORTURE_SUITES:-"smb2.acls smb2.sdread"}
	CLAIMED="smb2.sdread.sdread
$(printf 'smb2.acls.%s\n' CREATOR GENERIC OWNER DYNAMIC OWNER-RIGHTS OWNER-RIGHTS-DENY OWNER-RIGHTS-DENY1 DENY1 \
	MXAC-NOT-GRANTED OVERWRITE_READ_ONLY_FILE INHERITANCE INHERITFLAGS)"
fi
aq_smb_cluster
aq_mutate POST "$P/volumes?volumeId=docs" '{"storagePool":"sp","capacityGib":"100","shareName":"docs","protocols":["SMB"],"smbSettings":["CHANGE_NOTIFY","OPLOCKS"],"unixPermissions":"0777","securityStyle":"'"$SEC"'"}'
expect_jq .response.state READY "an SMB volume created through the API is READY"
# the user smbd knows too: nobody (smbd maps a user onto a Unix account)
NOBODY_UID=$(id -u nobody) NOBODY_GID=$(id -g nobody)
aq_smb_user torture "$NOBODY_UID" "$NOBODY_GID"
SHARE=$AQ_TMP/shelf/$(jq -r '.volumes[] | select(.shareName == "docs") | .dir' "$INTENT")
ok "the volume's folder is on the shelf" test -d "$SHARE"
# smbd works in the share as nobody: let it through the test's folders
chmod o+x "$AQ_TMP" "$AQ_TMP/shelf" "$(dirname "$SHARE")"

# smbd on 127.0.0.1 serving the same folder, everything it keeps under $S
. "$AQ_SRC/tests/lib/smbd.sh"
S=$AQ_TMP/samba
SPORT=$(aq_pick_port)
aq_smbd_start "$S" "$SPORT" docs "$SHARE" Secret-1 no 'server signing = mandatory' "${SMBD_SEC[@]}"
ok "smbd's passdb has nobody" pdbedit -s "$S/smb.conf" -u nobody >/dev/null
ok "smbd listens on $SPORT" bash -c "exec 3<>/dev/tcp/127.0.0.1/$SPORT" 2>/dev/null

# smbclient on ours: a file put, then read, replaced and deleted by others
S1() { aq_smbclient docs torture%Secret-1 "$1"; }
head -c $((1 << 20)) /dev/urandom >"$AQ_TMP/a.bin"
head -c $((1 << 19)) /dev/urandom >"$AQ_TMP/b.bin"
out=$(cd "$AQ_TMP" && S1 'put a.bin f.bin')
out=$(cd "$AQ_TMP" && S1 'get f.bin c.bin')
expect_eq "smbclient reads back what another smbclient put" "$(sha256sum <"$AQ_TMP/a.bin")" "$(sha256sum <"$AQ_TMP/c.bin" 2>/dev/null)"
out=$(cd "$AQ_TMP" && S1 'put b.bin f.bin; get f.bin d.bin')
expect_eq "a third one replaces it" "$(sha256sum <"$AQ_TMP/b.bin")" "$(sha256sum <"$AQ_TMP/d.bin" 2>/dev/null)"
out=$(S1 'del f.bin; ls f.bin')
ok "and a fourth deletes it (no closed open keeps a reservation)" grep -q NT_STATUS_NO_SUCH_FILE <<<"$out"
ok "the file is gone from the volume" test ! -e "$SHARE/f.bin"

# smbtorture: one run per suite and server; results as "suite.test RESULT"
torture() { # NAME PORT USER SUITE
	# each run starts from an empty share: what one server's run leaves
	# (smbtorture leaves files behind) must not decide the other's
	find "$SHARE" -mindepth 1 -delete
	local limit=${SMB_TORTURE_TIMEOUT:-600}
	case $4 in smb2.notify.*) limit=${SMB_TORTURE_TIMEOUT:-120} ;; esac
	timeout "$limit" smbtorture "//127.0.0.1/docs" -p "$2" -U "$3%Secret-1" \
		${SMB_TORTURE_OPTS:-} "$4" >"$AQ_TMP/torture.$1.$4.log" 2>&1
	# a suite's tests (smb2.lock: lock, async...) print as "suite.test"; a
	# single test (smb2.notify.dir: dir) as itself
	sed -n "s/^\\(success\\|failure\\|error\\|skip\\|xfail\\): \\([^ []*\\).*/\\2 \\1/p" \
		"$AQ_TMP/torture.$1.$4.log" | while read -r t r; do
		case $t in "$4" | "$4".*) echo "$t $r" ;; *) case $4 in *.*".$t") echo "$4 $r" ;; *) echo "$4.$t $r" ;; esac ;; esac
	done
}
: >"$AQ_TMP/res.aquifer"
: >"$AQ_TMP/res.samba"
for suite in $SUITES; do
	torture aquifer "$SMB" torture "$suite" >>"$AQ_TMP/res.aquifer"
	torture samba "$SPORT" nobody "$suite" >>"$AQ_TMP/res.samba"
done
printf '# %-32s %18s %18s\n' suite "aquifer pass/run" "samba pass/run"
for suite in $SUITES; do
	count() { awk -v s="$suite" '$1 == s || index($1, s ".") == 1 { n++; if ($2 == "success") p++ } END { printf "%d/%d", p, n }' "$1"; }
	printf '# %-32s %18s %18s\n' "$suite" "$(count "$AQ_TMP/res.aquifer")" "$(count "$AQ_TMP/res.samba")"
done
for t in $CLAIMED; do
	a=$(awk -v t="$t" '$1 == t { print $2; exit }' "$AQ_TMP/res.aquifer")
	s=$(awk -v t="$t" '$1 == t { print $2; exit }' "$AQ_TMP/res.samba")
	expect_eq "$t passes on smbd" success "${s:-not run}"
	expect_eq "$t passes on aquifer-agent" success "${a:-not run}"
done
if [ "$AQ_FAIL" -gt 0 ]; then
	for f in "$AQ_TMP"/torture.aquifer.*.log; do echo "--- $f"; grep -E "^(failure|error):" -A3 "$f" | head -40; done
fi
# the agent ran the SMB server (async replies, CANCEL): under ASan, its log too
aq_smb_sanitizer_clean
aq_finish
