#!/usr/bin/env bash
# tests/e2e/test_smb_api.sh: the control-plane side of SMB (issue 18) through
# a real aquiferd:
#   - smbUsers CRUD (create ?smbUserId=, get, list, patch with updateMask,
#     delete), names case-insensitive (ALREADY_EXISTS), validation errors
#     that name the field and change nothing;
#   - the password never stored or shown, the NT hash never in any answer,
#     operation or log line, but in the intent a real agent receives (MD4 of
#     UTF-16LE "Password": MS-NLMP 4.2.1's figure a4f49c40...);
#   - a user of another project can neither see nor touch these users;
#   - volumes: the protocol sets the data path serves (["SMB"],
#     ["NFSV3","SMB"]) accepted, others refused naming the field; an SMB
#     volume is READY only on a node that reports an smbAddress, and then its
#     mountOptions carry the SMB entry (\\host\share, mount -t cifs ...).
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
aq_start "$D" || { aq_failed "aquiferd starts"; aq_finish; }
ADMIN=$(aq_token "$D" admin)
TOK=$ADMIN
NT_PASSWORD=a4f49c406510bdcab6824ee7c30fd852   # NTOWFv1("Password"), MS-NLMP 4.2.1

aq_req POST "/v1/projects?projectId=pa" '{}'
aq_req POST "/v1/projects?projectId=pb" '{}'
aq_req POST "/v1/locations?locationId=east" '{}'
expect_status 200 "location east"
EDITOR=$(aq_token "$D" editor pa)
OTHER=$(aq_token "$D" editor pb)
VIEWER=$(aq_token "$D" viewer pa)
PE=/v1/projects/pa/locations/east
U=$PE/smbUsers

# === create ====================================================================
TOK=$EDITOR
aq_req POST "$U?smbUserId=Alice" '{"password":"Password","uid":"1000","gid":"1000","description":"first"}'
expect_status 200 "create smbUser Alice"
expect_jq .done true "the create answers a done operation"
expect_jq .response.name "projects/pa/locations/east/smbUsers/alice" "the resource is named with the lowercased name"
expect_jq .response.uid 1000 "uid kept"
expect_jq '.response | has("password")' false "the answer carries no password"
aq_req GET "$U/alice"
expect_status 200 "GET alice"
expect_jq .description first "description kept"
expect_jq '[paths | map(tostring) | join(".")] | map(select(test("password|ntHash|hash"; "i"))) | length' 0 "GET shows no password or hash field"
aq_req GET "$U/ALICE"
expect_status 200 "GET in another case finds the same user"
aq_req POST "$U?smbUserId=alice" '{"password":"x","uid":"1","gid":"1"}'
expect_error 409 ALREADY_EXISTS "alice again (names compare case-insensitively)"
aq_req POST "$U?smbUserId=bob&validateOnly=true" '{"password":"pw-b","uid":"1001","gid":"100"}'
expect_status 200 "validateOnly create answers"
aq_req GET "$U/bob"
expect_error 404 NOT_FOUND "validateOnly created nothing"
aq_req POST "$U?smbUserId=bob" '{"password":"pw-bob-1","uid":"1001","gid":"100"}'
expect_status 200 "create bob"

# === validation: INVALID_ARGUMENT naming the field, nothing created ==========
n=0
while IFS='|' read -r what id body field; do
	[ -n "$what" ] || continue
	n=$((n + 1))
	aq_req POST "$U?smbUserId=$id" "$body"
	expect_error 400 INVALID_ARGUMENT "refused: $what"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$field"*) aq_pass "the message names $field ($what)" ;;
	*) aq_failed "the message names $field ($what)" "$BODY" ;;
	esac
	aq_req GET "$U/$id"
	[ "$STATUS" = 404 ] || [ "$STATUS" = 400 ] && aq_pass "nothing created: $what" || aq_failed "nothing created: $what" "$BODY"
done <<'CASES'
a name starting with '.'|.hidden|{"password":"p","uid":"1","gid":"1"}|smbUserId
a name with a space|a%20b|{"password":"p","uid":"1","gid":"1"}|smbUserId
a name of 65 characters|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|{"password":"p","uid":"1","gid":"1"}|smbUserId
no password|carol|{"uid":"1","gid":"1"}|password
an empty password|carol|{"password":"","uid":"1","gid":"1"}|password
a password of 257 bytes|carol|{"password":"ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp","uid":"1","gid":"1"}|password
no uid|carol|{"password":"p","gid":"1"}|uid
a negative uid|carol|{"password":"p","uid":"-1","gid":"1"}|uid
uid 4294967295 ((uid_t)-1)|carol|{"password":"p","uid":"4294967295","gid":"1"}|uid
gid not a number|carol|{"password":"p","uid":"1","gid":"x"}|gid
an unknown field|carol|{"password":"p","uid":"1","gid":"1","home":"/h"}|home
CASES
aq_req POST "$U" '{"password":"p","uid":"1","gid":"1"}'
expect_error 400 INVALID_ARGUMENT "smbUserId is required"

# === list, patch =============================================================
aq_req GET "$U"
expect_jq '[.smbUsers[].name] | sort | join(",")' "projects/pa/locations/east/smbUsers/alice,projects/pa/locations/east/smbUsers/bob" "list shows alice and bob"
expect_jq '[.smbUsers[] | keys[]] | map(select(test("password|ntHash"; "i"))) | length' 0 "list shows no password or hash"
aq_req_as "$VIEWER" GET "$U/bob"
expect_status 200 "a viewer of pa reads bob"
aq_req_as "$VIEWER" PATCH "$U/bob?updateMask=description" '{"description":"x"}'
expect_error 403 PERMISSION_DENIED "a viewer cannot patch"
aq_req PATCH "$U/bob?updateMask=description,uid" '{"description":"second","uid":"2001"}'
expect_status 200 "patch description and uid"
expect_jq .response.uid 2001 "uid changed"
aq_req PATCH "$U/bob?updateMask=uid" '{"uid":"-5"}'
expect_error 400 INVALID_ARGUMENT "a negative uid in a patch"
aq_req PATCH "$U/bob?updateMask=gid" '{}'
expect_error 400 INVALID_ARGUMENT "gid cannot be cleared"
aq_req PATCH "$U/bob?updateMask=name" '{"name":"x"}'
expect_error 400 INVALID_ARGUMENT "name is output only"
aq_req PATCH "$U/bob?updateMask=password" '{"password":""}'
expect_error 400 INVALID_ARGUMENT "an empty new password"
aq_req GET "$U/bob"
expect_jq '.uid + "/" + .gid + "/" + .description' "2001/100/second" "refused patches changed nothing"
aq_req PATCH "$U/nobody?updateMask=description" '{"description":"x"}'
expect_error 404 NOT_FOUND "patch of an unknown user"

# === another project =========================================================
aq_req_as "$OTHER" GET "$U/alice"
expect_error 403 PERMISSION_DENIED "pb's editor cannot read pa's user"
aq_req_as "$OTHER" GET "$U"
expect_error 403 PERMISSION_DENIED "pb's editor cannot list pa's users"
aq_req_as "$OTHER" DELETE "$U/alice"
expect_error 403 PERMISSION_DENIED "pb's editor cannot delete pa's user"
aq_req_as "$OTHER" PATCH "$U/alice?updateMask=password" '{"password":"stolen"}'
expect_error 403 PERMISSION_DENIED "pb's editor cannot reset pa's password"
aq_req_as "$OTHER" POST "/v1/projects/pb/locations/east/smbUsers?smbUserId=alice" '{"password":"other","uid":"3000","gid":"3000"}'
expect_status 200 "pb has its own alice"
aq_req_as "$OTHER" GET "/v1/projects/pb/locations/east/smbUsers"
expect_jq '[.smbUsers[].name] | join(",")' "projects/pb/locations/east/smbUsers/alice" "pb lists only its own user"

# === the intent: hashes only, every user of the location =====================
TOK=$ADMIN
aq_agent_for east || { aq_failed "a storage node joins east"; aq_finish; }
INTENT=$D/node-east/state/intent.json
intent_has() { # JQ_FILTER: poll the agent's stored intent until the filter holds
	for _ in $(seq 100); do
		[ -f "$INTENT" ] && jq -e "$1" "$INTENT" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
ok "the intent carries alice of pa with the NT hash of \"Password\"" \
	intent_has "any(.smbUsers[]; .project == \"pa\" and .name == \"alice\" and .ntHash == \"$NT_PASSWORD\" and .uid == 1000 and .gid == 1000)"
ok "the intent carries every user of the location (pa's alice and bob, pb's alice)" \
	intent_has '[.smbUsers[] | .project + "/" + .name] | sort == ["pa/alice","pa/bob","pb/alice"]'
ok "the intent carries no password" intent_has '[.smbUsers[] | has("password")] | any | not'
gen1=$(jq -r .generation "$INTENT")
aq_req_as "$EDITOR" PATCH "$U/alice?updateMask=password" '{"password":"Another-1"}'
expect_status 200 "reset alice's password"
ok "a new password is pushed at once (new generation, new hash)" \
	intent_has "any(.smbUsers[]; .project == \"pa\" and .name == \"alice\" and .ntHash != \"$NT_PASSWORD\") and .generation > $gen1"
aq_req_as "$EDITOR" DELETE "$U/bob"
expect_status 200 "delete bob"
expect_jq .done true "delete answers a done operation"
aq_req_as "$EDITOR" GET "$U/bob"
expect_error 404 NOT_FOUND "bob is gone"
ok "bob leaves the intent" intent_has '[.smbUsers[] | .project + "/" + .name] | sort == ["pa/alice","pb/alice"]'

# the hash appears in no answer, operation or log line
hash_now=$(jq -r '.smbUsers[] | select(.project == "pa" and .name == "alice") | .ntHash' "$INTENT")
aq_req_as "$EDITOR" GET "$PE/operations"
leak=0
for h in "$NT_PASSWORD" "$hash_now"; do
	[ -n "$h" ] || continue
	grep -rlq -- "$h" "$AQ_RECORD_DIR" 2>/dev/null && leak=1
	grep -q -- "$h" "$D/aquiferd.log" && leak=1
	printf '%s' "$BODY" | grep -q -- "$h" && leak=1
done
expect_eq "no answer, operation or server log line holds an NT hash" 0 "$leak"
leak=0
for pw in Password Another-1 pw-bob-1; do
	grep -rlq -- "\"$pw\"" "$AQ_RECORD_DIR" 2>/dev/null && leak=1
	grep -q -- "$pw" "$D/aquiferd.log" && leak=1
done
expect_eq "no answer or server log line holds a password" 0 "$leak"

# === SMB volumes =============================================================
TOK=$EDITOR
aq_req POST "$PE/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
expect_status 200 "pool sp"
vol() { # SHARE PROTOCOLS [extra members]
	printf '{"storagePool":"sp","capacityGib":"100","shareName":"%s","protocols":%s%s}' "$1" "$2" "${3:+,$3}"
}
while IFS='|' read -r what protos extra field; do
	[ -n "$what" ] || continue
	aq_req POST "$PE/volumes?volumeId=bad" "$(vol bad "$protos" "$extra")"
	expect_error 400 INVALID_ARGUMENT "volume refused: $what"
	case $(printf '%s' "$BODY" | jq -r .error.message) in
	*"$field"*) aq_pass "the message names $field ($what)" ;;
	*) aq_failed "the message names $field ($what)" "$BODY" ;;
	esac
done <<'CASES'
smbSettings BROWSABLE (not served: no share list)|["SMB"]|"smbSettings":["BROWSABLE"]|smbSettings
smbSettings SHOW_SNAPSHOT (not served yet)|["SMB"]|"smbSettings":["SHOW_SNAPSHOT"]|smbSettings
securityStyle NTFS with NFS (NFS would not enforce the ACLs)|["SMB","NFSV3"]|"securityStyle":"NTFS"|securityStyle: NTFS with protocols NFSV3
CASES
aq_req GET "$PE/volumes/bad"
expect_error 404 NOT_FOUND "no refused volume was created"

# east's agent runs no SMB server: an SMB volume there never says READY
aq_mutate POST "$PE/volumes?volumeId=smbonly" "$(vol smbonly '["SMB"]')"
expect_jq .done true "the SMB volume's create ends"
expect_true '.error.message | test("SMB")' "it fails: the node serves no SMB"
aq_req GET "$PE/volumes/smbonly"
expect_jq .state ERROR "the volume is ERROR, not READY"
aq_mutate POST "$PE/volumes?volumeId=nfsonly" "$(vol nfsonly '["NFSV3"]')"
expect_jq .response.state READY "an NFSV3 volume on the same node is READY"
expect_jq '[.response.mountOptions[].protocol] | join(",")' NFSV3 "an NFSV3 volume has only the NFS mount entry"

# west: a stand-in node that reports an smbAddress
TOK=$ADMIN
aq_req POST "/v1/locations?locationId=west" '{}'
JOIN=$(aq_join_token west)
aq_req_as "$JOIN" POST /v1/agent/join '{"node":"fake-west","location":"west","address":"http://127.0.0.1:9","nfsAddress":"127.0.0.1:2049","smbAddress":"0.0.0.0:4455","agentVersion":"e2e-fake"}'
expect_status 200 "a stand-in node with an SMB server joins west"
NODE_TOK=$(printf '%s' "$BODY" | jq -r .nodeToken)
aq_req_as "$NODE_TOK" POST /v1/agent/status '{"appliedGeneration":0,"smbAddress":"not an address"}'
expect_error 400 INVALID_ARGUMENT "a status with a bad smbAddress is refused"
(
	g=0
	while :; do
		out=$(curl -s -H "Authorization: Bearer $NODE_TOK" -X POST "$AQ_URL/v1/agent/status" \
			-d "{\"appliedGeneration\":$g}")
		n=$(printf '%s' "$out" | jq -r '.generation // empty' 2>/dev/null)
		[ -n "$n" ] && g=$n
		sleep 0.1
	done
) &
AQ_PIDS+=("$!")
TOK=$EDITOR
PW=/v1/projects/pa/locations/west
aq_req POST "$PW/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_mutate POST "$PW/volumes?volumeId=dual" "$(vol dual '["NFSV3","SMB"]')"
expect_jq .response.state READY "a dual-protocol volume on a node with SMB is READY"
expect_jq '[.response.mountOptions[].protocol] | join(",")' "NFSV3,SMB" "it has an NFS and an SMB mount entry"
expect_jq '.response.mountOptions[1].export' '\\127.0.0.1\dual' "the SMB export is \\\\host\\share (wildcard listen: the node's NFS host)"
expect_jq '.response.mountOptions[1].port' 4455 "the SMB port is the node's"
expect_true '.response.mountOptions[1].instructions | contains("mount -t cifs //127.0.0.1/dual /mnt/dual -o vers=3.1.1,username=") and contains(",port=4455") and contains("smbclient //127.0.0.1/dual -U ") and contains("-p 4455")' \
	"the instructions give mount -t cifs and smbclient lines"
aq_mutate POST "$PW/volumes?volumeId=smbw" "$(vol smbw '["SMB"]')"
expect_jq .response.state READY "an SMB-only volume on a node with SMB is READY"
expect_jq '[.response.mountOptions[].protocol] | join(",")' SMB "it has only the SMB mount entry"

# === a project or location with SMB users is not deleted ====================
TOK=$ADMIN
aq_req POST "/v1/projects?projectId=pc" '{}'
aq_req POST "/v1/locations?locationId=south" '{}'
aq_req POST "/v1/projects/pc/locations/south/smbUsers?smbUserId=carol" '{"password":"pw-c","uid":"5","gid":"5"}'
expect_status 200 "carol of pc in south"
aq_req DELETE /v1/projects/pc
expect_error 400 FAILED_PRECONDITION "a project holding an SMB user is not deleted"
aq_req DELETE /v1/locations/south
expect_error 400 FAILED_PRECONDITION "a location holding an SMB user is not deleted"
aq_req DELETE /v1/projects/pc/locations/south/smbUsers/carol
expect_status 200 "delete carol"
aq_req DELETE /v1/locations/south
expect_status 200 "then the location goes"
aq_req DELETE /v1/projects/pc
expect_status 200 "and the project"

aq_sanitizer_clean "$D"
aq_finish
