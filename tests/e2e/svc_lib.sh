# tests/e2e/svc_lib.sh: what the service-address suites share (sourced after
# lib.sh; test_service_address.sh, test_vm_failover.sh). Needs $SA, the
# prefix of the nodes' network namespaces ($SA-a, $SA-b), and a cluster-admin TOK.

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
