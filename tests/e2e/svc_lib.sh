# tests/e2e/svc_lib.sh: what the service-address suites share (sourced after
# lib.sh; test_service_address.sh, test_vm_failover.sh). Needs $SA, the
# prefix of the nodes' network namespaces ($SA-a, $SA-b), and a cluster-admin TOK.
# sa_netns, for the outer run of the script (as root, before lib.sh), needs
# only $SA and $NET (the first three octets of the bridge's /24).

# sa_netns NODE...: the topology: a control namespace $SA-c (lo up) with a
# bridge br0 holding $NET.1/24, and for each NODE (a, b: agents $NET.11 and
# $NET.12; x: the client, $NET.20) a namespace $SA-NODE joined to the bridge
# by a veth pair (vNODE on the bridge, eth0 with the NODE's address in
# $SA-NODE; lo and eth0 up). Sets an EXIT trap (sa_netns_cleanup: the
# processes left in these namespaces killed, the namespaces deleted) and
# exit 130 on INT and TERM. Skips (77) when no namespace can be made.
sa_netns() {
	local n ip
	SA_NETNS=("$SA-c")
	for n in "$@"; do SA_NETNS+=("$SA-$n"); done
	trap sa_netns_cleanup EXIT
	trap 'exit 130' INT TERM
	ip netns add "$SA-c" || { echo "SKIP: cannot make network namespaces"; exit 77; }
	ip -n "$SA-c" link set lo up
	ip -n "$SA-c" link add br0 type bridge
	ip -n "$SA-c" addr add "$NET.1/24" dev br0
	ip -n "$SA-c" link set br0 up
	for n in "$@"; do
		ip netns add "$SA-$n"
		ip -n "$SA-$n" link set lo up
		ip -n "$SA-c" link add "v$n" type veth peer name eth0 netns "$SA-$n"
		ip -n "$SA-c" link set "v$n" master br0 up
		case $n in a) ip=$NET.11 ;; b) ip=$NET.12 ;; x) ip=$NET.20 ;; esac
		ip -n "$SA-$n" addr add "$ip/24" dev eth0
		ip -n "$SA-$n" link set eth0 up
	done
}

sa_netns_cleanup() {
	local ns pid
	for ns in "${SA_NETNS[@]}"; do
		# only processes this test started live in its namespaces
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}

# sa_agent N [ARG...]: start node N's (a or b) agent in its namespace
# ($NET.11 or .12:7070, NFS on 0.0.0.0:2049, the shared shelf $SHELF, state
# in $D/N/state, --service-interface eth0, the ARGs added: a --token the
# first time); PID_N is its PID.
sa_agent() {
	local n=$1 ip
	shift
	case $n in a) ip=$NET.11 ;; b) ip=$NET.12 ;; esac
	mkdir -p "$D/$n"
	ip netns exec "$SA-$n" "$AQUIFER_AGENT" --server "http://$NET.1:8080" --node "$n" --location east \
		--shelf "$SHELF" --listen "$ip:7070" --nfs-listen 0.0.0.0:2049 --state-dir "$D/$n/state" \
		--throughput-mibps 10000 --service-interface eth0 "$@" >>"$D/$n/agent.log" 2>&1 &
	eval "PID_$n=$!"
	AQ_PIDS+=("$!")
}

# sa_has NODE ADDR: the address is on node NODE's eth0; sa_hasnt: it is not
sa_has() { ip -n "$SA-$1" -4 addr show dev eth0 | grep -q "inet $2/24"; }
sa_hasnt() { ! sa_has "$@"; }
# sa_node_of ADDR: the node (a or b) that reports holding ADDR
sa_node_of() {
	aq_req GET /v1/nodes
	printf '%s' "$BODY" | jq -r --arg v "$1" '.nodes[] | select(.serviceAddresses // [] | index($v)) | .name' | sed 's|.*/||'
}
sa_reported() { test -n "$(sa_node_of "$1")"; }
sa_unreported() { test -z "$(sa_node_of "$1")"; }
