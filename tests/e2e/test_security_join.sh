#!/usr/bin/env bash
# test_security_join.sh: node takeover, join tokens and /metrics (issue 15,
# items 1, 9 and 11), against a real aquiferd and real agents.
#   1. a join token joins one node, once, in its location (and as its node
#      when it names one); a node token never joins: node A's token cannot
#      join as B nor re-join live A with a new address; a fresh join token
#      for a joined name is refused too (drain and delete it first);
#   2. a node token reports only for its own node;
#   3. DELETE /v1/nodes/A revokes A's node token, also once A joined again;
#   4. node tokens are short-lived (30 s here) and renewed by the running agent, which
#      stays READY past the lifetime of the token it joined with;
#   5. the installCommand uses --public-url, shell-quoted, whatever the Host
#      header says;
#   6. /metrics needs a metrics or cluster-admin token and lists no internal
#      kinds; metrics_auth = false opens it.
. "$(dirname "$0")/lib.sh"

D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
# a public URL a shell would run a command from, unquoted (HOME is set to
# AQ_TMP where the test evaluates the command)
PUBLIC='http://aq.example:8443/x$(touch$IFS$HOME/pwned)'
AQ_SERVE_ARGS=(--public-url "$PUBLIC" --node-token-ttl 30)
aq_start "$D" || exit 1
SRV_PID=$AQ_PID
TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/locations?locationId=west" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
P=/v1/projects/acme/locations/east

# join BODY-NODE [ADDRESS]: the JSON of a join request (no CSR: plain HTTP)
join_body() {
	printf '{"node":"%s","location":"%s","address":"%s","nfsAddress":"127.0.0.1:2049"}' "$1" "${3:-east}" "${2:-http://127.0.0.1:9}"
}

# --- 1. join tokens: once, in their location, as their node ------------------
J1=$(aq_join_token east)
aq_agent_start "$D" n1 east "$SHELF" "$J1" 10000 || exit 1
N1_PID=$AGENT_PID N1_API=$AGENT_API_PORT N1_NFS=$AGENT_NFS_PORT
A_TOK=$(jq -r .nodeToken "$D/n1/state/credentials.json")
A_SECRET=$(jq -r .pushSecret "$D/n1/state/credentials.json")
aq_req GET /v1/nodes/n1
N1_ADDR=$(printf '%s' "$BODY" | jq -r .address)
aq_req_as "$J1" POST /v1/agent/join "$(join_body n9)"
expect_error 403 PERMISSION_DENIED "a join token that joined n1 does not join n9"
expect_true '.error.message | test("already used")' "... saying it was already used"
aq_req GET /v1/nodes/n9
expect_status 404 "no node n9"

aq_req_as "$A_TOK" POST /v1/agent/join "$(join_body nb)"
expect_error 403 PERMISSION_DENIED "node n1's own token cannot join as nb"
expect_true '.error.message | test("only a join token may join")' "... a node token acts only as its own node"
aq_req GET /v1/nodes/nb
expect_status 404 "no node nb"
aq_req_as "$A_TOK" POST /v1/agent/join "$(join_body n1 http://127.0.0.1:1)"
expect_error 403 PERMISSION_DENIED "node n1's token cannot re-join live n1 with a new address"
J2=$(aq_join_token east)
aq_req_as "$J2" POST /v1/agent/join "$(join_body n1 http://127.0.0.1:1)"
expect_error 409 ALREADY_EXISTS "a fresh join token cannot re-register live n1 either"
expect_true '.error.message | test("drain it") and test("delete it")' "... naming the admin step: drain, then delete"
aq_req GET /v1/nodes/n1
expect_jq .address "$N1_ADDR" "n1 keeps its address"
expect_jq .state READY "n1 stays READY"
expect_eq "n1 keeps its push secret (a takeover would have a new one)" "$A_SECRET" \
	"$(jq -r .pushSecret "$D/n1/state/credentials.json")"
# ... and the refused join did not spend J2: it joins a new node once
aq_req_as "$J2" POST /v1/agent/join "$(join_body fake1)"
expect_status 200 "the refused join did not spend its token: it joins fake1"
aq_req_as "$J2" POST /v1/agent/join "$(join_body fake2)"
expect_error 403 PERMISSION_DENIED "... and only once"
aq_req_as "$(aq_join_token west)" POST /v1/agent/join "$(join_body fake3)"
expect_error 403 PERMISSION_DENIED "a join token of west does not join east"
aq_req POST "/v1/locations/east:joinToken?node=n7" '{}'
expect_jq .node n7 "a join token may name its node"
J7=$(printf '%s' "$BODY" | jq -r .token)
aq_req_as "$J7" POST /v1/agent/join "$(join_body n8)"
expect_error 403 PERMISSION_DENIED "a join token for n7 does not join n8"
aq_req POST "/v1/locations/east:joinToken?node=bad_name" '{}'
expect_error 400 INVALID_ARGUMENT "a join token for a malformed node name is refused"
# aquiferd token --role node: a join token, which needs its location
"$AQUIFERD" token --db "$D/aq.db" --role node >/dev/null 2>"$AQ_TMP/tok.err"
expect_eq "aquiferd token --role node without --location is refused (exit 2)" 2 "$?"
ok "... saying a join token needs --location" grep -q -- "--location" "$AQ_TMP/tok.err"
JC=$("$AQUIFERD" token --db "$D/aq.db" --role node --location east --node fake4 2>/dev/null | tail -n 1)
aq_req_as "$JC" POST /v1/agent/join "$(join_body fake5)"
expect_error 403 PERMISSION_DENIED "aquiferd token --node fake4 does not join fake5"
aq_req_as "$JC" POST /v1/agent/join "$(join_body fake4)"
expect_status 200 "aquiferd token --role node --location east --node fake4 joins fake4"
aq_req_as "$JC" POST /v1/agent/join "$(join_body fake4b)"
expect_error 403 PERMISSION_DENIED "... once"

# n1's current token (the agent renews it past half its life: 15 s here)
a_tok() { A_TOK=$(jq -r .nodeToken "$D/n1/state/credentials.json"); }

# --- 2. a node token reports only for its own node ---------------------------
J3=$(aq_join_token east)
aq_agent_start "$D" n2 east "$SHELF" "$J3" 20000 || exit 1 # the most headroom: vb lands here
N2_PID=$AGENT_PID
B_TOK=$(jq -r .nodeToken "$D/n2/state/credentials.json")
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"2048"}'
aq_mutate POST "$P/volumes?volumeId=vb" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"vb"}'
aq_req GET "$P/volumes/vb"
VB_USED=$(printf '%s' "$BODY" | jq -r .usedGib)
expect_jq '.mountOptions[0].port' "$AGENT_NFS_PORT" "vb is served by n2"
aq_req GET /v1/nodes/n2
N2_SEEN=$(printf '%s' "$BODY" | jq -r .lastSeenTime)
a_tok
report='{"node":"n2","appliedGeneration":0,"volumes":[{"name":"projects/acme/locations/east/volumes/vb","usedBytes":"999999999999"}]}'
aq_req_as "$A_TOK" POST /v1/agent/status "$report"
expect_error 403 PERMISSION_DENIED "n1's token cannot report for n2"
report='{"appliedGeneration":0,"volumes":[{"name":"projects/acme/locations/east/volumes/vb","usedBytes":"999999999999"}]}'
for v in $(seq 2); do aq_req_as "$A_TOK" POST /v1/agent/status "$report"; done
expect_status 200 "n1's own report is taken"
aq_req GET "$P/volumes/vb"
expect_jq .usedGib "$VB_USED" "... but says nothing of volumes other nodes serve"
aq_req_as "$B_TOK" POST /v1/agent/status '{"node":"nodes/n2","appliedGeneration":0,"volumes":[]}'
expect_status 200 "n2's token reports for nodes/n2"
aq_req_as "$J3" POST /v1/agent/status '{"appliedGeneration":0,"volumes":[]}'
expect_error 401 UNAUTHENTICATED "a join token reports for no node"

# --- 3. deleting a node revokes its tokens ------------------------------------
kill -TERM "$N1_PID"; wait "$N1_PID" 2>/dev/null
a_tok
aq_req POST /v1/nodes/n1:drain '{}'
expect_status 200 "drain n1 (it holds nothing)"
aq_req DELETE /v1/nodes/n1
expect_status 200 "delete n1"
aq_req_as "$A_TOK" POST /v1/agent/status '{"appliedGeneration":0,"volumes":[]}'
expect_error 401 UNAUTHENTICATED "after DELETE /v1/nodes/n1 its node token is refused"
# the deleted node's agent, started again from its credentials, is refused
aq_agent_restart "$D" n1 east "$SHELF" "$N1_API" "$N1_NFS"
N1_PID=$AGENT_PID
for _ in $(seq 50); do grep -q "no joined node" "$D/n1/agent.log" && break; sleep 0.1; done
ok "the agent of the deleted node logs why aquiferd refuses it" grep -q "status report failed.*no joined node" "$D/n1/agent.log"
aq_req GET /v1/nodes/n1
expect_status 404 "... and n1 stays deleted"
aq_stop "$N1_PID"
aq_req POST "/v1/locations/east:joinToken?node=n1" '{}'
aq_req_as "$(printf '%s' "$BODY" | jq -r .token)" POST /v1/agent/join "$(join_body n1 http://127.0.0.1:9)"
expect_status 200 "the name n1 joins again with a new join token"
NEW_A=$(printf '%s' "$BODY" | jq -r .nodeToken)
aq_req_as "$A_TOK" POST /v1/agent/status '{"appliedGeneration":0,"volumes":[]}'
expect_error 401 UNAUTHENTICATED "the old n1 token stays revoked once n1 joined again"
expect_true '.error.message | test("revoked")' "... saying it was revoked"
aq_req_as "$NEW_A" POST /v1/agent/status '{"appliedGeneration":0,"volumes":[]}'
expect_status 200 "the new n1 token works"

# --- 4. bounded lifetime, renewed by the running agent -------------------------
aq_req POST /v1/locations/east:joinToken '{}'
aq_req_as "$(printf '%s' "$BODY" | jq -r .token)" POST /v1/agent/join "$(join_body fake6)"
exp=$(printf '%s' "$BODY" | jq -r .nodeTokenExpireTime)
left=$(( $(date -d "$exp" +%s) - $(date +%s) ))
ok "a node token lives --node-token-ttl (30 s here; ${left}s left)" test "$left" -ge 25 -a "$left" -le 31
first=$(jq -r .nodeToken "$D/n2/state/credentials.json")
sleep 32 # past the whole lifetime of n2's first token
aq_req GET /v1/nodes/n2
expect_jq .state READY "n2 is READY after its first token's lifetime: the agent renewed it"
ok "n2's credentials.json holds a renewed token" test "$(jq -r .nodeToken "$D/n2/state/credentials.json")" != "$first"
ok "the agent logs the renewal" grep -q "node token renewed" "$D/n2/agent.log"
aq_req_as "$first" POST /v1/agent/status '{"appliedGeneration":0,"volumes":[]}'
expect_error 401 UNAUTHENTICATED "the first token has expired"

# --- 5. the installCommand: the public URL, quoted --------------------------------
hostile='evil.example;$(touch${IFS}/tmp/aq-pwned-'$$')'
out=$AQ_TMP/jt.json
STATUS=$(curl -s -o "$out" -w '%{http_code}' -X POST -H "Host: $hostile" -H "Authorization: Bearer $TOK" \
	"$AQ_URL/v1/locations/east:joinToken" -d '{}')
BODY=$(cat "$out")
expect_status 200 "a join token with a hostile Host header"
CMD=$(printf '%s' "$BODY" | jq -r .installCommand)
ok "the installCommand says nothing of the Host header" bash -c '! grep -q evil <<<"$1"' _ "$CMD"
# run it with a stand-in for install-agent.sh that prints its arguments
args=$(cd "$AQ_TMP" && HOME=$AQ_TMP bash -c 'install-agent.sh() { printf "%s\n" "$@"; }; eval "$1"' _ "$CMD")
expect_eq "the --server word is the public URL, byte for byte" "$PUBLIC" "$(sed -n '/^--server$/{n;p}' <<<"$args")"
expect_eq "the --token word is the token" "$(printf '%s' "$BODY" | jq -r .token)" "$(sed -n '/^--token$/{n;p}' <<<"$args")"
ok "nothing in it ran (no command substitution)" test ! -e "$AQ_TMP/pwned" -a ! -e "/tmp/aq-pwned-$$"
rm -f "/tmp/aq-pwned-$$"
"$AQUIFERD" --listen 127.0.0.1:1 --db "$AQ_TMP/x.db" --public-url 'http://a b' >/dev/null 2>"$AQ_TMP/pu.err"
expect_eq "a --public-url with a space is refused at start (exit 2)" 2 "$?"
ok "... saying which characters it may hold" grep -q "URL characters" "$AQ_TMP/pu.err"
ok "aquiferd logs its public URL" grep -q "public URL $PUBLIC" "$D/aquiferd.log"

# --- 6. /metrics ----------------------------------------------------------------------
M_TOK=$("$AQUIFERD" token --db "$D/aq.db" --role metrics 2>/dev/null | tail -n 1)
PADMIN=$(aq_token "$D" admin acme)
aq_req_as "" GET /metrics
expect_error 401 UNAUTHENTICATED "/metrics without a token is refused by default"
aq_req_as "$PADMIN" GET /metrics
expect_error 403 PERMISSION_DENIED "a project admin's token does not read /metrics (it names every project)"
aq_req_as "$M_TOK" GET /metrics
expect_status 200 "a metrics token reads /metrics"
ok "... with the volumes' series" grep -q '^aquifer_volume_served{project="acme",location="east",pool="sp",volume="vb"} 1' <<<"$BODY"
if grep -qE '^aquifer_resources\{kind="(locsecret|coldsecret|placement|join)"' <<<"$BODY"; then
	aq_failed "/metrics lists no internal kinds" "$(grep '^aquifer_resources' <<<"$BODY")"
else
	aq_pass "/metrics lists no internal kinds"
fi
ok "... but the public ones" grep -q '^aquifer_resources{kind="node"} ' <<<"$BODY"
aq_req_as "$M_TOK" GET /v1/projects
expect_error 403 PERMISSION_DENIED "a metrics token reads nothing else"
aq_req_as "$M_TOK" GET /v1/nodes
expect_error 403 PERMISSION_DENIED "... not even cluster routes"
aq_req GET /metrics
expect_status 200 "the cluster admin reads /metrics"
S2=$AQ_TMP/open
AQ_SERVE_ARGS=(--metrics-auth=false)
SAVE_URL=$AQ_URL
aq_start "$S2" || exit 1
aq_req_as "" GET /metrics
expect_status 200 "with --metrics-auth=false /metrics is open"
AQ_URL=$SAVE_URL

aq_stop "$N2_PID"
aq_stop "$SRV_PID"
aq_sanitizer_clean "$D"
aq_finish
