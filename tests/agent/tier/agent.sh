# tests/agent/tier/agent.sh: run a standalone aquifer-agent and drive it the way
# aquiferd would, for the cold-tier tests and bench/tier (sourced after
# tests/e2e/lib.sh, which provides aq_pick_port, aq_failed, AQ_PIDS, AQ_TMP).
# The agent gets hand-made credentials (no join) and 1-second "days"; intents
# are pushed to its API with the push secret.
#
#   agent_start NODE         start (or restart) NODE from $AQ_TMP/NODE; sets
#                            AGENT_PID, API, NFS, NODE, SHELF; AGENT_ARGS: more options
#   intent ACTION RETRIEVAL [COLDSTORE]   the desired state: volume tv ($FSID)
#   push JSON                PUT /v1/intent with the next generation
#   policy ACTION RETRIEVAL  push intent with $COLDSTORE
#   vstat FIELD              the volume's FIELD in GET /v1/status
#   scan                     GET /v1/tier/scan?volume=$FSID
#   url PATH                 the volume's NFS URL
#   wait_cold BYTES SECS     until coldBytes >= BYTES (1 when it never got there)
#   tier_test_setup TOOL...  skip (77) unless TOOL..., cc and libnfs exist; load
#                            tests/agent/tier/s3.sh, trap cleanup, build bench/nfs/loadgen as $LG
AGENT=${AGENT:-$AQ_BUILDDIR/aquifer-agent}
AGENT_ARGS=()

tier_test_setup() {
	local tool
	for tool in "$@" cc pkg-config; do
		command -v "$tool" >/dev/null || { echo "SKIP: $tool missing"; exit 77; }
	done
	pkg-config --exists libnfs || { echo "SKIP: libnfs-dev missing"; exit 77; }
	. "$AQ_SRC/tests/agent/tier/s3.sh"
	trap 'aq_s3_cleanup; aq_cleanup' EXIT
	LG=$AQ_TMP/loadgen
	# shellcheck disable=SC2046
	cc -O2 -o "$LG" "$AQ_SRC/bench/nfs/loadgen.c" $(pkg-config --cflags --libs libnfs) || exit 1
}
SECRET=tier-test-push-secret
KEY=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
GEN=0

# agent_start NODE: start (or restart) NODE's agent from $AQ_TMP/NODE; the
# ports stay across restarts.
agent_start() {
	local n=$1 d=$AQ_TMP/$1
	mkdir -p "$d/state" "$d/shelf"
	if [ ! -f "$d/state/credentials.json" ]; then
		printf '{"node":"%s","location":"east","nodeToken":"unused","pushSecret":"%s","handleKey":"%s"}' \
			"$n" "$SECRET" "$KEY" >"$d/state/credentials.json"
		chmod 600 "$d/state/credentials.json"
		aq_pick_port >"$d/api.port"
		aq_pick_port >"$d/nfs.port"
	fi
	API=$(cat "$d/api.port") NFS=$(cat "$d/nfs.port") NODE=$n SHELF=$d/shelf
	"$AGENT" --server http://127.0.0.1:9 --node "$n" --location east --shelf "$d/shelf" \
		--listen "127.0.0.1:$API" --nfs-listen "127.0.0.1:$NFS" --state-dir "$d/state" \
		--tier-day-seconds 1 "${AGENT_ARGS[@]}" >>"$d/agent.log" 2>&1 &
	AGENT_PID=$!
	AQ_PIDS+=("$AGENT_PID")
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$API/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	aq_failed "agent $n started" "$(tail -3 "$d/agent.log")"
	exit 1
}

# intent ACTION RETRIEVAL [COLDSTORE]: the desired state of NODE with volume tv.
intent() {
	jq -nc --arg node "$NODE" --arg fsid "$FSID" --arg a "$1" --arg r "$2" --argjson cs "${3:-null}" '
	  {node: $node, volumes: [{name: "projects/p/locations/east/volumes/tv", fsid: $fsid, shareName: "tv",
	   dir: ("volumes/" + $fsid), capacityBytes: 4294967296, unixPermissions: "0777",
	   exportRules: [{allowedClients: "127.0.0.1", accessType: "READ_WRITE", squashMode: "NO_ROOT_SQUASH"}],
	   tieringPolicy: {tierAction: $a, coolingThresholdDays: 2, retrievalPolicy: $r}}]}
	  + (if $cs then {coldStore: $cs} else {} end)'
}

# push JSON: PUT /v1/intent with the next generation.
push() {
	GEN=$((GEN + 1))
	BODY=$(printf '%s' "$1" | jq -c --argjson g "$GEN" '. + {generation: $g}' |
		curl -s -X PUT -H "Authorization: Bearer $SECRET" -H 'Content-Type: application/json' \
			--data-binary @- -w '\n%{http_code}' "http://127.0.0.1:$API/v1/intent")
	STATUS=${BODY##*$'\n'}
	BODY=${BODY%$'\n'*}
	[ "$STATUS" = 200 ] || aq_failed "intent generation $GEN applied" "$BODY"
}

policy() { push "$(intent "$1" "$2" "${COLDSTORE:-null}")"; }

vstat() { # vstat FIELD: the volume's FIELD in GET /v1/status
	curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" | jq -r ".volumes[0].$1"
}
scan() { curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/tier/scan?volume=$FSID"; }
url() { echo "nfs://127.0.0.1/tv$1?nfsport=$NFS&mountport=$NFS"; }

# wait_cold BYTES SECS: until coldBytes >= BYTES.
wait_cold() {
	for _ in $(seq $(($2 * 10))); do
		[ "$(vstat coldBytes)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

