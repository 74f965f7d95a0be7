#!/usr/bin/env bash
# test_tls.sh: TLS on every hop (issue 9).
#   - aquiferd ca init / ca issue: the cluster CA and a server certificate,
#     files 0600; plain HTTP refused on a non-loopback --listen;
#   - aquiferd with --tls-cert/--tls-key: curl --cacert works, plain HTTP to
#     the TLS port does not, two agents join over TLS (CSR -> certificate);
#   - a volume created through the CLI over TLS (--ca-file), NFS traffic;
#     the CLI without the CA is refused unless --insecure (which warns);
#   - status reports need the node's own certificate from the cluster CA
#     (none, foreign, another node's or expired: refused); the agent takes
#     intent only from aquiferd's client certificate; aquiferd refuses an
#     agent serving a foreign certificate;
#   - aquiferd and the agent speak TLS 1.2 and 1.3 only.
. "$(dirname "$0")/lib.sh"

for tool in nfs-cp nfs-cat openssl; do
	command -v $tool >/dev/null || { echo "SKIP: $tool missing (apt-get install libnfs-utils openssl)"; exit 77; }
done
CLI=$AQ_BUILDDIR/aquifer
D=$AQ_TMP/cluster
SHELF=$AQ_TMP/shelf
F=$AQ_TMP/foreign
mkdir -p "$D" "$F"

mode() { stat -c %a "$1" 2>/dev/null; }
# refused DESC WANT-REGEX CMD...: CMD fails and its stderr matches WANT-REGEX.
refused() {
	local desc=$1 want=$2 err rc
	shift 2
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" != 0 ] && grep -qE -- "$want" <<<"$err"; then
		aq_pass "$desc"
	else
		aq_failed "$desc" "exit $rc, stderr: ${err:0:300}" "wanted a failure saying: $want"
	fi
}

# ---- 1. the cluster CA and the server certificate -----------------------------
out=$("$AQUIFERD" ca init --db "$D/aq.db" 2>&1)
expect_eq "ca init prints the CA certificate's path" "$D/ca.crt" "$out"
refused "a second ca init is refused" "already exists" "$AQUIFERD" ca init --db "$D/aq.db"
refused "ca issue needs a name" "--dns NAME or --ip ADDR" "$AQUIFERD" ca issue --db "$D/aq.db"
refused "ca issue refuses a bad IP" "not an IPv4 or IPv6 address" "$AQUIFERD" ca issue --db "$D/aq.db" --ip 300.1.1.1
ok "ca issue writes server.crt and server.key" "$AQUIFERD" ca issue --db "$D/aq.db" --dns localhost --ip 127.0.0.1
for f in ca.crt ca.key server.crt server.key; do
	expect_eq "$f is mode 0600" 600 "$(mode "$D/$f")"
done
ok "the server certificate verifies against the cluster CA" openssl verify -CAfile "$D/ca.crt" "$D/server.crt"
san=$(openssl x509 -in "$D/server.crt" -noout -ext subjectAltName | tail -1 | tr -d ' ')
expect_eq "the server certificate names localhost and 127.0.0.1" "DNS:localhost,IPAddress:127.0.0.1" "$san"
refused "ca issue without a CA says to run ca init" "ca init" "$AQUIFERD" ca issue --db "$F/none.db" --dns x

# ---- 2. what aquiferd refuses to serve ----------------------------------------------
P0=$(aq_pick_port)
refused "plain HTTP on a non-loopback --listen is refused" "insecure-listen" \
	timeout 10 "$AQUIFERD" --listen "0.0.0.0:$P0" --db "$F/x.db"
refused "--tls-cert without --tls-key is refused" "go together" \
	timeout 10 "$AQUIFERD" --listen "127.0.0.1:$P0" --db "$F/x.db" --tls-cert "$D/server.crt"
refused "a key that is not the certificate's is refused" "does not belong" \
	timeout 10 "$AQUIFERD" --listen "127.0.0.1:$P0" --db "$F/x.db" --tls-cert "$D/server.crt" --tls-key "$D/ca.key"
ok "refused starts created nothing" test ! -e "$F/x.db" -a ! -e "$F/aquiferd.key"

# An expired certificate from the cluster CA (openssl ca with dates in the past).
expired_cert() { # CN CSR-KEY-OUT CERT-OUT
	mkdir -p "$F/ca/new"
	: >"$F/ca/index.txt"
	[ -f "$F/ca/serial" ] || echo 1000 >"$F/ca/serial"
	printf '[ca]\ndefault_ca=x\n[x]\ndatabase=%s\nnew_certs_dir=%s\nserial=%s\ndefault_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\n' \
		"$F/ca/index.txt" "$F/ca/new" "$F/ca/serial" >"$F/ca/ca.cnf"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$2" -out "$F/ca/req.pem" 2>/dev/null &&
		openssl ca -batch -config "$F/ca/ca.cnf" -cert "$D/ca.crt" -keyfile "$D/ca.key" -in "$F/ca/req.pem" -out "$3" \
			-startdate 20200101000000Z -enddate 20200201000000Z >/dev/null 2>&1
}
ok "openssl makes an expired certificate from the cluster CA" expired_cert localhost "$F/exp-srv.key" "$F/exp-srv.crt"
refused "an expired server certificate is refused at start" "has expired" \
	timeout 10 "$AQUIFERD" --listen "127.0.0.1:$P0" --db "$F/x.db" --tls-cert "$F/exp-srv.crt" --tls-key "$F/exp-srv.key"

# A foreign CA, and certificates from it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=Foreign CA" -days 30 \
	-keyout "$F/fca.key" -out "$F/fca.crt" 2>/dev/null
foreign_cert() { # CN KEY-OUT CERT-OUT [SAN]
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$2" -out "$F/req.pem" 2>/dev/null &&
		openssl x509 -req -in "$F/req.pem" -CA "$F/fca.crt" -CAkey "$F/fca.key" -CAcreateserial -days 30 \
			-extfile <(printf 'subjectAltName=%s\n' "${4:-DNS:$1}") -out "$3" 2>/dev/null
}
ok "openssl makes certificates from a foreign CA" foreign_cert n1 "$F/n1.key" "$F/n1.crt"

# ---- 3. aquiferd over TLS -----------------------------------------------------------
AQ_SCHEME=https
AQ_CURL_OPTS=(--cacert "$D/ca.crt")
AQ_SERVE_ARGS=(--tls-cert "$D/server.crt" --tls-key "$D/server.key" --node-down-seconds 5)
AQ_AGENT_ARGS=(--ca-file "$D/ca.crt")
aq_start "$D" || exit 1
ok "aquiferd says it serves https" grep -q "serving https://127.0.0.1:$AQ_PORT" "$D/aquiferd.log"
ok "aquiferd made its client certificate" openssl verify -CAfile "$D/ca.crt" "$D/client.crt"
expect_eq "client.key is mode 0600" 600 "$(mode "$D/client.key")"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$D/ca.crt" "$AQ_URL/healthz")
expect_eq "curl --cacert reaches /healthz over HTTPS" 200 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$AQ_PORT/healthz")
expect_eq "plain HTTP to the TLS port gets no answer" 000 "$code"
curl -s -o /dev/null --max-time 5 "$AQ_URL/healthz"
expect_eq "curl without the CA does not trust aquiferd (exit 60)" 60 "$?"

TOK=$(aq_token "$D" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
aq_req POST "/v1/projects?projectId=acme" '{}'
aq_req POST "/v1/locations/east:joinToken" '{}'
expect_true '.installCommand | test("--server https://127\\.0\\.0\\.1:[0-9]+ .*--ca-file /etc/aquifer/ca.crt")' \
	"the install command joins over https with --ca-file"
expect_eq "the join-token answer carries the cluster CA" "$(cat "$D/ca.crt")" "$(printf '%s' "$BODY" | jq -r .caCertificate)"
JOIN=$(printf '%s' "$BODY" | jq -r .token)

# A join without a CSR (an agent that would serve plain HTTP) is refused.
aq_req_as "$JOIN" POST /v1/agent/join '{"node":"nx","location":"east","address":"http://127.0.0.1:1","nfsAddress":"127.0.0.1:2"}'
expect_error 400 INVALID_ARGUMENT "a join without a csr is refused under TLS"
aq_req_as "$JOIN" POST /v1/agent/join '{"node":"nx","location":"east","address":"https://127.0.0.1:1","nfsAddress":"127.0.0.1:2","csr":"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"}'
expect_error 400 INVALID_ARGUMENT "a join with a CSR that does not parse is refused"
aq_req GET /v1/nodes/nx
expect_status 404 "refused joins created no node"

# The agent checks aquiferd from its first contact: a foreign --ca-file stops the join.
mkdir -p "$SHELF" "$F/nz"
refused "an agent whose --ca-file does not trust aquiferd does not join" "cannot be verified.*ca-file" \
	timeout -k 2 20 "$AQUIFER_AGENT" --server "$AQ_URL" --ca-file "$F/fca.crt" --token "$JOIN" --node nz --location east \
	--shelf "$SHELF" --listen 127.0.0.1:0 --nfs-listen 127.0.0.1:0 --state-dir "$F/nz/state"
ok "... and sent nothing: no node nz" test ! -e "$F/nz/state/credentials.json"

aq_agent_start "$D" n1 east "$SHELF" "$JOIN" 1000 || exit 1
N1_API=$AGENT_API_PORT
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 1000 || exit 1 # a join token joins once
N2_PID=$AGENT_PID N2_API=$AGENT_API_PORT N2_NFS=$AGENT_NFS_PORT
aq_req GET /v1/nodes
expect_jq '[.nodes[] | select(.state == "READY" and (.address | startswith("https://")))] | length' 2 \
	"both nodes READY at https:// addresses"
for f in agent.crt agent.key ca.crt credentials.json; do
	expect_eq "agent $f is mode 0600" 600 "$(mode "$D/n1/state/$f")"
done
ok "the agent's certificate is from the cluster CA" openssl verify -CAfile "$D/ca.crt" "$D/n1/state/agent.crt"
expect_eq "the agent's certificate names the node and its address" "CN=n1|DNS:n1,IPAddress:127.0.0.1" \
	"$(openssl x509 -in "$D/n1/state/agent.crt" -noout -subject -nameopt RFC2253 | sed 's/^subject=//')|$(openssl x509 -in "$D/n1/state/agent.crt" -noout -ext subjectAltName | tail -1 | tr -d ' ')"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$D/ca.crt" "https://127.0.0.1:$N1_API/healthz")
expect_eq "the agent serves its API over HTTPS" 200 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$N1_API/healthz")
expect_eq "plain HTTP to the agent gets no answer" 000 "$code"

# TLS 1.2 and 1.3 only (issue 15, item 8): openssl s_client offering one
# version (at security level 0, so that the client side would allow 1.0/1.1).
tls_hello() { # PORT VERSION: a handshake with only that version completes
	echo | timeout 10 openssl s_client -connect "127.0.0.1:$1" "-$2" -CAfile "$D/ca.crt" \
		-cipher 'DEFAULT:@SECLEVEL=0' >"$AQ_TMP/s_client.out" 2>&1 &&
		grep -qE '^New, TLSv1\.[0-3]' "$AQ_TMP/s_client.out"
}
tls_refused() { ! tls_hello "$@"; }
for who in "aquiferd $AQ_PORT" "the agent $N1_API"; do
	for v in tls1 tls1_1; do
		ok "${who% *} refuses a $v handshake" tls_refused "${who##* }" $v
	done
	for v in tls1_2 tls1_3; do
		ok "${who% *} accepts a $v handshake" tls_hello "${who##* }" $v
	done
done

# ---- 4. the CLI over TLS ------------------------------------------------------------
export XDG_CONFIG_HOME=$AQ_TMP/xdg AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=acme AQUIFER_LOCATION=east
unset AQUIFER_CA_FILE
cli() { timeout 60 "$CLI" "$@"; }
cli storage-pools list >/dev/null 2>"$AQ_TMP/cli.err"
expect_eq "the CLI without the CA is refused (exit 4)" 4 "$?"
ok "... saying how to fix it (--ca-file)" grep -q -- "--ca-file" "$AQ_TMP/cli.err"
ok "... naming the verification failure" grep -qi "certificate" "$AQ_TMP/cli.err"
out=$(cli --insecure storage-pools list --format=json 2>"$AQ_TMP/cli.err")
expect_eq "the CLI with --insecure gets through" 0 "$?"
ok "... and warns on stderr" grep -q "WARNING: --insecure" "$AQ_TMP/cli.err"
ok "the CLI with --ca-file creates a pool over TLS" \
	cli --ca-file "$D/ca.crt" storage-pools create sp --capacity=4TiB --service-level=premium
ok "the CLI with --ca-file creates a volume over TLS (waits for the node)" \
	cli --ca-file "$D/ca.crt" volumes create va --storage-pool=sp --capacity=1TiB --protocols=nfsv3 --share-name=va \
	--export-policy=allowed-clients=127.0.0.1,access-type=read_write,nfsv3=true,squash-mode=no_root_squash
AQUIFER_CA_FILE=$D/ca.crt cli volumes describe va --format=json >"$AQ_TMP/va.json" 2>"$AQ_TMP/cli.err"
expect_eq "AQUIFER_CA_FILE verifies too" 0 "$?"
expect_eq "va is READY" READY "$(jq -r .state "$AQ_TMP/va.json")"
ok "aquifer config set ca_file" cli config set ca_file "$D/ca.crt"
state=$(cli volumes describe va --format='value(state)' 2>"$AQ_TMP/cli.err")
expect_eq "the config's ca_file verifies" READY "$state"
expect_eq "no warning without --insecure" "" "$(cat "$AQ_TMP/cli.err")"

# Real NFS traffic to the volume where mountOptions say.
VA_PORT=$(jq -r '.mountOptions[0].port' "$AQ_TMP/va.json")
head -c $((8 << 20)) /dev/urandom >"$AQ_TMP/data.bin"
URL="nfs://127.0.0.1/va/data.bin?version=3&nfsport=$VA_PORT&mountport=$VA_PORT"
ok "nfs-cp writes 8 MiB to va" nfs-cp "$AQ_TMP/data.bin" "$URL"
nfs-cat "$URL" >"$AQ_TMP/back.bin" 2>/dev/null
expect_eq "nfs-cat reads the same bytes" "$(sha256sum <"$AQ_TMP/data.bin" | cut -c1-64)" "$(sha256sum <"$AQ_TMP/back.bin" | cut -c1-64)"

# ---- 5. status reports need the node's own certificate ------------------------------
N1_TOKEN=$(jq -r .nodeToken "$D/n1/state/credentials.json")
status_as() { # CURL-CERT-ARGS...: POST a status report as n1; sets STATUS, BODY
	local out=$AQ_TMP/st.json
	STATUS=$(curl -s -o "$out" -w '%{http_code}' --cacert "$D/ca.crt" "$@" -H "Authorization: Bearer $N1_TOKEN" \
		-H 'Content-Type: application/json' --data '{"appliedGeneration":0,"volumes":[]}' "$AQ_URL/v1/agent/status")
	BODY=$(cat "$out")
}
status_as
expect_error 401 UNAUTHENTICATED "a status report without a client certificate is refused"
expect_true '.error.message | test("client certificate")' "... saying a client certificate is required"
status_as --cert "$F/n1.crt" --key "$F/n1.key"
expect_error 401 UNAUTHENTICATED "a status report with a foreign certificate is refused"
expect_true '.error.message | test("not issued by the cluster CA")' "... saying it is not from the cluster CA"
status_as --cert "$D/n2/state/agent.crt" --key "$D/n2/state/agent.key"
expect_error 401 UNAUTHENTICATED "n1's report with n2's certificate is refused"
expect_true '.error.message | test("for \"n2\", not \"n1\"")' "... saying whose certificate it is"
ok "openssl makes an expired certificate for n1" expired_cert n1 "$F/exp-n1.key" "$F/exp-n1.crt"
status_as --cert "$F/exp-n1.crt" --key "$F/exp-n1.key"
expect_error 401 UNAUTHENTICATED "a status report with an expired certificate is refused"
expect_true '.error.message | test("expired")' "... saying it has expired"
status_as --cert "$D/n1/state/agent.crt" --key "$D/n1/state/agent.key"
expect_status 200 "n1's report with its own certificate is taken"
ok "aquiferd logs why it refused" grep -q "from node n1 refused: client certificate was not issued by the cluster CA" "$D/aquiferd.log"

# ---- 6. the agent takes intent only from aquiferd's client certificate --------------
N1_SECRET=$(jq -r .pushSecret "$D/n1/state/credentials.json")
gen_before=$(curl -s --cacert "$D/ca.crt" --cert "$D/client.crt" --key "$D/client.key" \
	-H "Authorization: Bearer $N1_SECRET" "https://127.0.0.1:$N1_API/v1/status" | jq -r .appliedGeneration)
ok "aquiferd's client certificate and the push secret read the agent's status" test "$gen_before" -ge 1
intent_as() { # CURL-CERT-ARGS...: PUT an intent to n1; prints the HTTP status
	curl -s -o "$AQ_TMP/in.json" -w '%{http_code}' --cacert "$D/ca.crt" "$@" -X PUT \
		-H "Authorization: Bearer $N1_SECRET" -H 'Content-Type: application/json' \
		--data '{"node":"nodes/n1","generation":999999,"volumes":[],"deletes":[]}' "https://127.0.0.1:$N1_API/v1/intent"
}
expect_eq "intent without a client certificate is refused (even with the push secret)" 401 "$(intent_as)"
ok "... saying a certificate of aquiferd is required" grep -q "client certificate of aquiferd" "$AQ_TMP/in.json"
expect_eq "intent with a foreign client certificate is refused" 401 "$(intent_as --cert "$F/n1.crt" --key "$F/n1.key")"
expect_eq "intent with another node's certificate (cluster CA, not aquiferd) is refused" 401 \
	"$(intent_as --cert "$D/n2/state/agent.crt" --key "$D/n2/state/agent.key")"
gen_after=$(curl -s --cacert "$D/ca.crt" --cert "$D/client.crt" --key "$D/client.key" \
	-H "Authorization: Bearer $N1_SECRET" "https://127.0.0.1:$N1_API/v1/status" | jq -r .appliedGeneration)
expect_eq "refused intents changed nothing" "$gen_before" "$gen_after"
ok "the agent logs why it refused" grep -q "/v1/intent refused: client certificate was not issued by the cluster CA" "$D/n1/agent.log"

# ---- 7. aquiferd checks the agent it pushes to ---------------------------------------
# n2_serving CERT KEY: restart n2 with that certificate, then aquiferd (a
# restarted aquiferd pushes to every node at once), with a fresh log.
n2_serving() {
	aq_stop "$N2_PID"
	cp "$1" "$D/n2/state/agent.crt"
	cp "$2" "$D/n2/state/agent.key"
	"$AQUIFER_AGENT" --server "$AQ_URL" --node n2 --location east --shelf "$SHELF" --listen "127.0.0.1:$N2_API" \
		--nfs-listen "127.0.0.1:$N2_NFS" --state-dir "$D/n2/state" >>"$D/n2/agent.log" 2>&1 &
	N2_PID=$!
	AQ_PIDS+=("$N2_PID")
	aq_stop "$AQ_PID"
	cat "$D/aquiferd.log" >>"$D/aquiferd.old.log"
	: >"$D/aquiferd.log"
	aq_start "$D" "$AQ_PORT"
}
# wait_log REGEX...: until every REGEX is in aquiferd's log (15 s at most)
wait_log() {
	local r missing
	for _ in $(seq 150); do
		missing=0
		for r in "$@"; do grep -qiE "$r" "$D/aquiferd.log" || missing=1; done
		[ "$missing" = 0 ] && return 0
		sleep 0.1
	done
}

# Another node's certificate: the cluster CA's, the right IP, the wrong name.
PUSH_NAME='push to node n2 refused or failed: .*hostname mismatch'
STATUS_NAME='from node n2 refused: client certificate is for "n1", not "n2"'
n2_serving "$D/n1/state/agent.crt" "$D/n1/state/agent.key" || exit 1
wait_log "$PUSH_NAME" "$STATUS_NAME"
ok "aquiferd checks the node name of the agent it pushes to (log says why)" grep -qiE "$PUSH_NAME" "$D/aquiferd.log"
ok "aquiferd refuses status from n2 with n1's certificate (log says why)" grep -qE "$STATUS_NAME" "$D/aquiferd.log"

# A certificate from a foreign CA.
ok "openssl makes a foreign certificate for n2" foreign_cert n2 "$F/n2.key" "$F/n2.crt" "DNS:n2,IP:127.0.0.1"
PUSH_FOREIGN='push to node n2 refused or failed: .*certificate cannot be verified'
STATUS_FOREIGN='from node n2 refused: client certificate was not issued by the cluster CA'
n2_serving "$F/n2.crt" "$F/n2.key" || exit 1
wait_log "$PUSH_FOREIGN" "$STATUS_FOREIGN"
ok "aquiferd does not push to an agent whose certificate is foreign (log says why)" grep -qiE "$PUSH_FOREIGN" "$D/aquiferd.log"
ok "aquiferd refuses that agent's status reports (log says why)" grep -qE "$STATUS_FOREIGN" "$D/aquiferd.log"
for _ in $(seq 150); do
	aq_req GET /v1/nodes/n2
	[ "$(printf '%s' "$BODY" | jq -r .state)" = DOWN ] && break
	sleep 0.1
done
expect_jq .state DOWN "a node that cannot prove itself goes DOWN"

cat "$D/aquiferd.log" >>"$D/aquiferd.old.log"
aq_sanitizer_clean "$D"
ok "no sanitizer report in the stopped aquiferds' logs" sh -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$D/aquiferd.old.log'"
# n2's first agent stopped cleanly above: a sanitizer build reports there
for f in "$D/n1/agent.log" "$D/n2/agent.log"; do
	if grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' "$f"; then
		aq_failed "no sanitizer report in $f" "$(grep -m3 -A12 -E 'Sanitizer|runtime error' "$f")"
	else
		aq_pass "no sanitizer report in $f"
	fi
done
aq_finish
