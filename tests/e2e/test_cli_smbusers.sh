#!/usr/bin/env bash
# test_cli_smbusers.sh: `aquifer smb-users` (issue 18) against a real aquiferd:
# create NAME --password-file=F --uid=N --gid=N [--description=D]
# [--location=L], list, describe, update (only the flags given), delete
# (asks on a terminal; --quiet skips it). The password is read from the file
# (one trailing newline dropped: the NT hash in the intent is MS-NLMP's
# figure for "Password"), never shown; flags are checked before anything is
# sent; --format/--filter work as on every list. An SMB volume created with
# `volumes create --protocols=smb` is refused where no node serves SMB.
. "$(dirname "$0")/lib.sh"
D=$AQ_TMP/srv
aq_cli_start "$D"
P=/v1/projects/acme/locations/east
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/locations?locationId=west" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
NT_PASSWORD=a4f49c406510bdcab6824ee7c30fd852   # NTOWFv1("Password"), MS-NLMP 4.2.1

has() { # DESC TEXT HAYSTACK
	case "$3" in
	*"$2"*) aq_pass "$1" ;;
	*) aq_failed "$1" "lacks: $2" "in:    ${3:0:600}" ;;
	esac
}
lacks() { # DESC TEXT HAYSTACK
	case "$3" in
	*"$2"*) aq_failed "$1" "has: $2" "in:    ${3:0:600}" ;;
	*) aq_pass "$1" ;;
	esac
}

printf 'Password\n' >"$AQ_TMP/pw"
printf 'S3cond-pass' >"$AQ_TMP/pw2"

# --- create --------------------------------------------------------------------
aq_cli 2 "create without --password-file is a usage error" smb-users create alice --uid=1000 --gid=1000
aq_cli 2 "create without --uid is a usage error" smb-users create alice --password-file="$AQ_TMP/pw" --gid=1000
aq_cli 2 "--uid must be a number" smb-users create alice --password-file="$AQ_TMP/pw" --uid=x --gid=1000
aq_cli 2 "an unreadable --password-file is a usage error" smb-users create alice --password-file="$AQ_TMP/none" --uid=1 --gid=1
has "the error names the flag" "--password-file" "$ERR"
aq_req GET "$P/smbUsers/alice"
expect_status 404 "refused creates sent nothing"
aq_cli 3 "a bad name is the server's INVALID_ARGUMENT" smb-users create .bad --password-file="$AQ_TMP/pw" --uid=1 --gid=1
has "the message names smbUserId" "smbUserId" "$ERR"
aq_cli 0 "create alice" smb-users create Alice --password-file="$AQ_TMP/pw" --uid=1000 --gid=1001 --description="first user"
lacks "create shows no password" "Password" "$OUT$ERR"
aq_cli 3 "create alice again (any case) is ALREADY_EXISTS" smb-users create ALICE --password-file="$AQ_TMP/pw" --uid=1 --gid=1
has "exit 3 carries the server's message" "already exists" "$ERR"
aq_cli 0 "create bob in west" smb-users create bob --password-file="$AQ_TMP/pw2" --uid=2000 --gid=2000 --location=west

# --- list, describe -------------------------------------------------------------
aq_cli 0 "list" smb-users list
has "the table has the columns" "NAME" "$OUT"
has "alice is listed with her uid" "alice" "$OUT"
has "uid shown" "1000" "$OUT"
lacks "east's list does not show west's bob" "bob" "$OUT"
aq_cli 0 "list --location=- shows every location" smb-users list --location=- --format='value(name.basename())' --sort-by=name
expect_eq "alice and bob" "$(printf 'alice\nbob')" "$OUT"
aq_cli 0 "list --filter" smb-users list --location=- --filter='uid=2000' --format='value(name.basename())'
expect_eq "the filter keeps bob" "bob" "$OUT"
aq_cli 0 "describe alice --format=json" smb-users describe alice --format=json
expect_eq "describe shows the description" "first user" "$(printf '%s' "$OUT" | jq -r .description)"
expect_eq "describe shows no password or hash" 0 "$(printf '%s' "$OUT" | grep -ciE 'password|nthash|'$NT_PASSWORD)"

# --- update -------------------------------------------------------------------
aq_cli 0 "update the description only" smb-users update alice --description="changed"
aq_req GET "$P/smbUsers/alice"
expect_jq '.description + "/" + .uid + "/" + .gid' "changed/1000/1001" "only the description changed"
aq_cli 0 "update uid and gid" smb-users update alice --uid=1500 --gid=1501
aq_req GET "$P/smbUsers/alice"
expect_jq '.uid + "/" + .gid' "1500/1501" "uid and gid changed"
aq_cli 2 "a negative --uid is a usage error" smb-users update alice --uid=-1
aq_cli 3 "uid 4294967295 is the server's INVALID_ARGUMENT" smb-users update alice --uid=4294967295
has "the message names uid" "uid" "$ERR"
aq_req GET "$P/smbUsers/alice"
expect_jq .uid 1500 "the refused update changed nothing"
aq_cli 3 "update of an unknown user" smb-users update nobody --description=x

# the hashes the intent carries: the file's password without its newline
aq_agent_start "$D" n1 east "$AQ_TMP/shelf" "$(aq_join_token east)" 10000 || exit 1
INTENT=$D/n1/state/intent.json
intent_has() {
	for _ in $(seq 100); do
		[ -f "$INTENT" ] && jq -e "$1" "$INTENT" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
ok "the intent has alice with the NT hash of \"Password\" (newline dropped), uid 1500" \
	intent_has "any(.smbUsers[]; .name == \"alice\" and .ntHash == \"$NT_PASSWORD\" and .uid == 1500 and .gid == 1501)"
aq_cli 0 "update the password from a file" smb-users update alice --password-file="$AQ_TMP/pw2"
ok "the new password's hash reaches the node" \
	intent_has "any(.smbUsers[]; .name == \"alice\" and .ntHash != \"$NT_PASSWORD\")"

# --- an SMB volume through the CLI ------------------------------------------------
aq_cli 0 "create pool sp" storage-pools create sp --capacity=4TiB --service-level=premium
aq_cli 3 "--protocols=smb,nfsv4 is not a served set" volumes create vx --storage-pool=sp --capacity=100 --protocols=smb,nfsv4 --share-name=vx
has "the message names protocols" "protocols" "$ERR"
aq_cli 3 "a volume with BROWSABLE (not served) is refused naming smbSettings" volumes create vx --storage-pool=sp --capacity=100 --protocols=smb --share-name=vx --smb-settings=browsable
has "the message names smbSettings" "smbSettings" "$ERR"
aq_cli 3 "an SMB volume on a node without SMB fails" volumes create vs --storage-pool=sp --capacity=100 --protocols=smb --share-name=vs
has "the reason names SMB" "SMB" "$ERR"

# --- delete -------------------------------------------------------------------
if command -v script >/dev/null; then
	printf 'n\n' | timeout 60 script -qec "$AQUIFER smb-users delete alice" /dev/null >"$AQ_TMP/tty" 2>&1
	expect_eq "answering n on a terminal exits 1" 1 "$?"
	has "the terminal shows the prompt" "Do you want to continue (Y/n)?" "$(cat "$AQ_TMP/tty")"
	aq_req GET "$P/smbUsers/alice"
	expect_status 200 "alice is still there"
	timeout 60 script -qec "$AQUIFER smb-users delete alice --quiet" /dev/null </dev/null >"$AQ_TMP/tty" 2>&1
	expect_eq "--quiet on a terminal deletes without asking" 0 "$?"
	lacks "--quiet shows no prompt" "Do you want to continue" "$(cat "$AQ_TMP/tty")"
else
	aq_cli 0 "delete alice" smb-users delete alice --quiet
fi
aq_req GET "$P/smbUsers/alice"
expect_status 404 "alice is gone"
ok "alice leaves the intent" intent_has '[.smbUsers[] | .name] | index("alice") | not'
aq_cli 3 "delete of an unknown user" smb-users delete alice --quiet
aq_sanitizer_clean "$D"
aq_finish
