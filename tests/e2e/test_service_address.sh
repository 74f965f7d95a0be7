#!/usr/bin/env bash
# test_service_address.sh: a service address moves with its volume (issue 25),
# with real agents in network namespaces and libnfs from a client namespace.
#
# Topology (all made here, all removed by the EXIT trap): a control namespace
# holding aquiferd (on 127.0.0.1 for this script, 10.99.25.1 for the agents)
# and a bridge; namespaces A, B (agents, 10.99.25.11/.12) and C (the client,
# 10.99.25.20), each joined to the bridge by a veth pair. The location's
# service range is 10.99.25.32/28 (prefix 24, port 2049).
#   1. a malformed, IPv6, too wide or overlapping range is refused by name,
#      and an agent refuses --service-interface without a wildcard NFS
#      listener or with an interface that does not exist;
#   2. a volume's create claims its address on the serving node's interface
#      (not on the other's), mountOptions show it, the node reports it, and
#      the client reads and writes through it;
#   3. a second volume gets the next address, held by its own node only;
#   4. self-fencing: aquiferd stopped, each agent removes its addresses
#      before aquiferd's node-down time, and claims them again once its
#      reports are accepted; a drain with the old node up: until the new
#      node reports holding the address, stateDetails says it is not served
#      and aquifer_volume_served is 0;
#   5. failover: the serving agent killed (-9) and its link down, the other
#      node takes the address over (gratuitous ARP: the client's neighbour
#      entry points at the new node at once), the client reads the same
#      bytes at the same address; the restarted node removes the stale copy
#      before its link comes back;
#   6. a delete releases the address; a clean stop releases what it held.
set -u
NET=10.99.25
if [ -z "${AQ_SA_INNER:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
	for tool in ip nfs-cp nfs-cat; do
		command -v $tool >/dev/null || { echo "SKIP: $tool missing (iproute2, libnfs-utils)"; exit 77; }
	done
	SA=aqsa$$
	. "$(dirname "$0")/svc_lib.sh"
	sa_netns a b x
	AQ_SA_INNER=$SA ip netns exec "$SA-c" "$BASH" "$0" "$@"
	exit $?
fi

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/svc_lib.sh"
SA=$AQ_SA_INNER
D=$AQ_TMP/srv
SHELF=$AQ_TMP/shelf
P=/v1/projects/acme/locations/east
T0=$(date +%s)
AQ_SERVE_ARGS=(--listen "0.0.0.0:8080" --insecure-listen --node-down-seconds 3)
mkdir -p "$SHELF"
aq_start "$D" 8080 || exit 1
TOK=$(aq_token "$D" admin)

mac_of() { ip -n "$SA-$1" link show eth0 | awk '/link\/ether/ { print $2 }'; }
# in_x CMD...: CMD in the client namespace, bounded (a libnfs tool waits
# long for an address nobody holds)
in_x() { ip netns exec "$SA-x" timeout 20 "$@"; }
url() { echo "nfs://$1/$2/$3?version=3&nfsport=2049&mountport=2049"; }
reads() { in_x nfs-cat "$(url "$1" "$2" data.bin)" 2>/dev/null | cmp -s - "$AQ_TMP/data.bin"; }

# --- 1. ranges and options refused by name --------------------------------------
bad_range() {
	aq_req POST "/v1/locations?locationId=$1" "$2"
	expect_error 400 INVALID_ARGUMENT "location with $4"
	expect_contains "... naming it" "$3" "$(printf '%s' "$BODY" | jq -r .error.message)"
}
bad_range bad1 '{"serviceAddresses":{"range":"10.99.25.33/28"}}' 'host bits' "a range with host bits set"
bad_range bad2 '{"serviceAddresses":{"range":"fd00::/64"}}' 'only IPv4' "an IPv6 range"
bad_range bad3 '{"serviceAddresses":{"range":"10.0.0.0/8"}}' 'wider than a /16' "a /8 range"
bad_range bad4 '{"serviceAddresses":{"range":"10.99.25.32/28","prefixLength":29}}' 'prefixLength' "prefixLength longer than the range"
bad_range bad5 '{"serviceAddresses":{"range":"10.99.25.32/28","port":70000}}' 'port' "port 70000"
bad_range bad6 '{"serviceAddresses":{"range":"127.0.0.0/24"}}' 'unicast' "a loopback range"
bad_range bad7 '{"serviceAddresses":{"range":"10.99.25.32"}}' 'CIDR' "no prefix"
aq_req POST "/v1/locations?locationId=east" '{"serviceAddresses":{"range":"10.99.25.32/28","prefixLength":24,"port":2049}}'
expect_status 200 "location east with serviceAddresses 10.99.25.32/28"
bad_range west '{"serviceAddresses":{"range":"10.99.25.40/29"}}' 'overlaps location east' "a range inside east's"
aq_req GET /v1/locations/east
expect_jq '.serviceAddresses.range == "10.99.25.32/28" and .serviceAddresses.port == 2049' true "the location shows its range"
aq_req PATCH "/v1/locations/east?updateMask=serviceAddresses" '{"serviceAddresses":{"range":"10.99.26.0/28"}}'
ok "a range cannot be changed by PATCH (addresses clients mount would move)" test "$STATUS" = 400
aq_req POST "/v1/projects?projectId=acme" '{}'

JA=$(aq_join_token east) JB=$(aq_join_token east)
mkdir -p "$D/bad"
out=$(ip netns exec "$SA-a" timeout 20 "$AQUIFER_AGENT" --server "http://$NET.1:8080" --token "$JA" --node a --location east \
	--shelf "$SHELF" --listen "$NET.11:7070" --nfs-listen "$NET.11:2049" --state-dir "$D/bad/s1" --service-interface eth0 2>&1)
ok "an agent refuses --service-interface with --nfs-listen on one address" test $? -ne 0
expect_contains "... naming --nfs-listen" "wildcard" "$out"
out=$(ip netns exec "$SA-a" timeout 20 "$AQUIFER_AGENT" --server "http://$NET.1:8080" --token "$JA" --node a --location east \
	--shelf "$SHELF" --listen "$NET.11:7070" --nfs-listen 0.0.0.0:2049 --state-dir "$D/bad/s2" --service-interface nosuch0 2>&1)
ok "an agent refuses an interface that does not exist" test $? -ne 0
expect_contains "... naming it" "--service-interface nosuch0: no such network interface" "$out"

sa_agent a --token "$JA"
sa_agent b --token "$JB"
aq_agent_wait_ready a
aq_agent_wait_ready b
[ "$AQ_FAIL" = 0 ] || { tail -n 5 "$D"/*/agent.log; aq_finish; }
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","qosType":"MANUAL"}'
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" >/dev/null 2>&1

# --- 2. create claims -------------------------------------------------------------
head -c $((4 << 20)) /dev/urandom >"$AQ_TMP/data.bin"
RULES='"exportPolicy":{"rules":[{"allowedClients":"10.99.25.0/24","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}'
aq_req POST "$P/volumes?volumeId=v1" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v1","throughputMibps":100,'"$RULES"'}'
expect_status 200 "create v1"
aq_wait_until 30 aq_vol_is v1 '.state == "READY"'
expect_jq '.mountOptions[0].ipAddress == "10.99.25.33" and .mountOptions[0].port == 2049 and (.mountOptions[0].libnfsUrl | startswith("nfs://10.99.25.33/v1"))' \
	true "v1's mountOptions show the service address and port"
aq_wait_until 10 sa_reported 10.99.25.33
H1=$(sa_node_of 10.99.25.33)
case $H1 in a) O1=b ;; b) O1=a ;; *) O1= ;; esac
ok "one node reports holding 10.99.25.33 (${H1:-none})" test -n "$O1"
[ -n "$O1" ] || { tail -n 5 "$D"/*/agent.log; aq_finish; }
ok "the address is on $H1's interface" sa_has "$H1" "$NET.33"
ok "... and not on $O1's" sa_hasnt "$O1" "$NET.33"
aq_wait_until 10 in_x nfs-ls "$(url "$NET.33" v1 "")" >/dev/null 2>&1
ok "the client writes 4 MiB through the service address" in_x nfs-cp "$AQ_TMP/data.bin" "$(url "$NET.33" v1 data.bin)"
ok "... and reads the same bytes back" reads "$NET.33" v1

# --- 3. a second volume, a second address -------------------------------------
aq_req POST "$P/volumes?volumeId=v2" '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"v2","throughputMibps":100,'"$RULES"'}'
expect_status 200 "create v2"
aq_wait_until 30 aq_vol_is v2 '.state == "READY"'
expect_jq '.mountOptions[0].ipAddress' 10.99.25.34 "v2 gets the next address"
aq_wait_until 10 sa_reported 10.99.25.34
H2=$(sa_node_of 10.99.25.34)
case $H2 in a) O2=b ;; b) O2=a ;; *) O2= ;; esac
[ -n "$O2" ] || { aq_failed "one node reports holding 10.99.25.34"; aq_finish; }
ok "v2's address is on its node $H2's interface" sa_has "${H2:-none}" "$NET.34"
ok "... and not on $O2's" sa_hasnt "${O2:-a}" "$NET.34"
ok "$H1 holds only v1's address among these" sa_hasnt "$H1" "$([ "$H1" = "$H2" ] && echo none || echo "$NET.34")"

# --- 4. self-fencing ------------------------------------------------------------
# aquiferd stopped (SIGSTOP): no report is accepted, so each agent drops its
# addresses when its lease (half of node-down, from the status answer) runs
# out, before aquiferd could declare it DOWN (3 s after the last report it
# received, itself before the stop); after SIGCONT a report is accepted, the
# intent still gives the addresses, and they come back.
kill -STOP "$AQ_PID"
t_stop=$(date +%s%N)
fenced() { sa_hasnt "$H1" "$NET.33"; }
since_stop() { echo $((($(date +%s%N) - t_stop) / 1000000)); }
while ! fenced && [ "$(since_stop)" -lt 2700 ]; do sleep 0.05; done
t_fenced=$(since_stop)
fenced
f=$?
unfenced_o1=$(sa_has "$O1" "$NET.33" && echo yes)
kill -CONT "$AQ_PID"
ok "$H1, its reports unanswered, removed 10.99.25.33 ${t_fenced} ms after aquiferd stopped (node-down: 3000 ms)" test "$f" -eq 0
expect_eq "... and $O1 did not take it meanwhile" "" "$unfenced_o1"
ok "$H1's log says why" grep -q "self-fencing: no status report accepted" "$D/$H1/agent.log"
echo "# self-fence: 10.99.25.33 left $H1 ${t_fenced} ms after aquiferd stopped (lease 1500 ms, node-down 3000 ms)"
aq_wait_until 15 sh -c "ip -n $SA-a -4 addr show dev eth0 | grep -q 'inet $NET.33/24' || ip -n $SA-b -4 addr show dev eth0 | grep -q 'inet $NET.33/24'"
H1b=$(sa_has a "$NET.33" && echo a; sa_has b "$NET.33" && echo b)
ok "reports accepted again: 10.99.25.33 is claimed again, on $H1 (${H1b:-no node})" test "$H1b" = "$H1"
aq_wait_until 20 reads "$NET.33" v1
ok "... and the client reads v1 through it again" reads "$NET.33" v1
aq_wait_until 10 sa_reported "$NET.33"
# a node declared DOWN meanwhile (a loaded machine) moved v1: follow it
H1=$(sa_node_of "$NET.33")
case $H1 in a) O1=b ;; b) O1=a ;; *) O1=a ;; esac

# the drain window: $H1 drained while up; v1's move is done only once $O1
# reports holding .33 (it claims it after $H1's report shows it released)
served() {
	aq_req GET /metrics
	printf '%s\n' "$BODY" | awk -v k="aquifer_volume_served{project=\"acme\",location=\"east\",pool=\"sp\",volume=\"$1\"}" '$1 == k { print $2 }'
}
aq_req POST "/v1/nodes/$H1:drain" '{}'
expect_status 200 "drain $H1 (up) towards $O1"
saw_wait=0 early=
for _ in $(seq 1 150); do
	aq_req GET "$P/volumes/v1"
	det=$(printf '%s' "$BODY" | jq -r .stateDetails)
	case $det in
	*"10.99.25.33 is not served until $O1 holds it"*)
		saw_wait=1
		m=$(served v1)
		# still waiting after the metric was read (not done in between)
		aq_req GET "$P/volumes/v1"
		[ "$m" = 0 ] || [ "$(printf '%s' "$BODY" | jq -r .stateDetails)" != "$det" ] ||
			early="served=$m while: $det" ;;
	"")
		# done: $O1 must report holding the address already
		[ "$(sa_node_of "$NET.33")" = "$O1" ] || early="done before $O1 held 10.99.25.33"
		break ;;
	esac
	sleep 0.1
done
expect_eq "during the drain, v1 said it was moving and not served until $O1 held 10.99.25.33" 1 "$saw_wait"
expect_eq "... aquifer_volume_served was 0 meanwhile, and v1 was done only once $O1 held it" "" "$early"
aq_wait_until 20 aq_vol_is v1 '.stateDetails == ""'
ok "v1's move is done" aq_vol_is v1 '.state == "READY" and .stateDetails == "" and .mountOptions[0].ipAddress == "10.99.25.33"'
ok "... $O1 holds 10.99.25.33, $H1 does not" sh -c "ip -n $SA-$O1 -4 addr show dev eth0 | grep -q 'inet $NET.33/24' && ! ip -n $SA-$H1 -4 addr show dev eth0 | grep -q 'inet $NET.33/24'"
expect_eq "... and aquifer_volume_served of v1 is 1" 1 "$(served v1)"
ok "... and the client reads v1 at the same address" reads "$NET.33" v1
aq_req POST "/v1/nodes/$H1:undrain" '{}'
expect_status 200 "undrain $H1"
H1=$O1
case $H1 in a) O1=b ;; b) O1=a ;; esac

# --- 5. failover ----------------------------------------------------------------
in_x ip neigh show "$NET.33" | grep -q "$(mac_of "$H1")"
ok "the client's neighbour entry for .33 points at $H1 before" test $? -eq 0
eval "HP=\$PID_$H1"
t_kill=$(date +%s%N)
kill -KILL "$HP" 2>/dev/null
{ wait "$HP"; } 2>/dev/null
ip -n "$SA-$H1" link set eth0 down
moved() { sa_has "$O1" "$NET.33"; }
aq_wait_until 60 moved
ok "$O1 took 10.99.25.33 over after $H1 was killed and cut off" moved
t_moved=$(date +%s%N)
aq_wait_until 5 sh -c "ip netns exec $SA-x ip neigh show $NET.33 | grep -q $(mac_of "$O1")"
ok "gratuitous ARP: the client's entry for .33 points at $O1 before it sent anything" \
	sh -c "ip netns exec $SA-x ip neigh show $NET.33 | grep -q $(mac_of "$O1")"
aq_wait_until 30 reads "$NET.33" v1
ok "the client reads v1's bytes at the same address" reads "$NET.33" v1
t_read=$(date +%s%N)
echo "# failover: address moved $(((t_moved - t_kill) / 1000000)) ms after the kill -9 (node-down 3 s), first good read at $(((t_read - t_kill) / 1000000)) ms"
aq_wait_until 20 aq_vol_is v1 '.state == "READY" and .mountOptions[0].ipAddress == "10.99.25.33"'
ok "v1 is READY at the same mount address after the move" aq_vol_is v1 '.state == "READY" and .mountOptions[0].ipAddress == "10.99.25.33"'
# the dead node comes back: it removes the stale copy before its link is up
sa_agent "$H1"
aq_wait_until 20 sa_hasnt "$H1" "$NET.33"
ok "the restarted $H1 removed the stale 10.99.25.33 (its link still down)" sa_hasnt "$H1" "$NET.33"
ip -n "$SA-$H1" link set eth0 up
aq_agent_wait_ready "$H1"
sleep 3
ok "$H1, READY again, does not claim v1's address" sa_hasnt "$H1" "$NET.33"
ok "$O1 still holds it" sa_has "$O1" "$NET.33"
ok "the client still reads v1" reads "$NET.33" v1

# --- 6. release on delete and on a clean stop -------------------------------------
aq_req DELETE "$P/volumes/v1"
aq_op_wait "$(printf '%s' "$BODY" | jq -r .name)" >/dev/null 2>&1
aq_wait_until 20 sa_hasnt "$O1" "$NET.33"
ok "deleting v1 released 10.99.25.33 from $O1" sa_hasnt "$O1" "$NET.33"
aq_wait_until 10 sa_unreported 10.99.25.33
ok "... and no node reports it" sa_unreported 10.99.25.33
H2=$(sa_node_of 10.99.25.34)
eval "HP=\$PID_$H2"
kill -TERM "$HP"
{ wait "$HP"; } 2>/dev/null
ok "a clean stop of $H2 released v2's 10.99.25.34" sa_hasnt "$H2" "$NET.34"
san=$(grep -hE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$D"/*/agent.log "$D"/aquiferd.log 2>/dev/null | head -n 3)
expect_eq "no sanitizer report in the agents' and aquiferd's logs (one agent stopped cleanly)" "" "$san"
grep -h 'agent_svc' "$D"/*/agent.log | sed 's/^/  log: /' | head -n 20
echo "# took $(($(date +%s) - T0)) s"
aq_finish
