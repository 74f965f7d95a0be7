#!/usr/bin/env bash
# test_security_handle.sh: issue 15 item 2 through the real programs. An
# attacker holding the location's handle key (every node has it) forges
# MAC-valid handles (tests/agent/nfs/nfs_fh_tool forge: the agent's own encoder)
# whose kernel handle names (a) a file of another volume, (b) aquiferd's
# signing key and database next to the shelf (the quickstart layout: state
# folder with aq.db, aquiferd.key, the agents' state and shelf/), (c) the cold
# tier's map; every one answers NFS3ERR_STALE to GETATTR, READ and SETATTR.
# The same forgery of the volume's own file works (the attack is real), and
# a legitimate handle keeps working after its volume fails over to the other
# node.
. "$(dirname "$0")/lib.sh"

TOOL=$AQ_BUILDDIR/tests/agent/nfs/nfs_fh_tool
command -v nfs-cp >/dev/null || { echo "SKIP: nfs-cp missing (apt-get install libnfs-utils)"; exit 77; }
[ -x "$TOOL" ] || { echo "SKIP: $TOOL not built (needs libnfs-dev)"; exit 77; }

D=$AQ_TMP/run          # like deploy/quickstart.sh's ./run
SHELF=$D/shelf
aq_acme_start "$D"
JOIN=$(aq_join_token east)
AQ_AGENT_ARGS=(--tier-day-seconds 1)
aq_agent_start "$D" n1 east "$SHELF" "$JOIN" 1000 || exit 1
N1_PID=$AGENT_PID N1_NFS=$AGENT_NFS_PORT
aq_agent_start "$D" n2 east "$SHELF" "$(aq_join_token east)" 1000 || exit 1
N2_PID=$AGENT_PID N2_NFS=$AGENT_NFS_PORT
ok "aquiferd's signing key sits next to the shelf, as in the quickstart" test -f "$D/aquiferd.key"
aq_req POST "$P/storagePools?storagePoolId=sp" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"PREMIUM","capacityGib":"4096","allowAutoTiering":true}'
vol() { # ID [TIERING-JSON]
	printf '{"storagePool":"sp","capacityGib":"100","protocols":["NFSV3"],"shareName":"%s"%s,
	  "exportPolicy":{"rules":[{"allowedClients":"127.0.0.1","accessType":"READ_WRITE","squashMode":"NO_ROOT_SQUASH"}]}}' "$1" "${2:-}"
}
aq_mutate POST "$P/volumes?volumeId=va" "$(vol va ',"tieringPolicy":{"tierAction":"ENABLED","coolingThresholdDays":30}')"
expect_jq .response.state READY "volume va (tiered) READY"
aq_mutate POST "$P/volumes?volumeId=vb" "$(vol vb)"
expect_jq .response.state READY "volume vb READY"
port_of() { aq_req GET "$P/volumes/$1"; printf '%s' "$BODY" | jq -r '.mountOptions[0].port'; }
VA_PORT=$(port_of va)
VB_PORT=$(port_of vb)
printf 'va-data' >"$AQ_TMP/a.txt"
printf 'vb-secret' >"$AQ_TMP/b.txt"
ok "a file written to va" nfs-cp "$AQ_TMP/a.txt" "nfs://127.0.0.1/va/own.txt?version=3&nfsport=$VA_PORT&mountport=$VA_PORT"
ok "a file written to vb" nfs-cp "$AQ_TMP/b.txt" "nfs://127.0.0.1/vb/other.txt?version=3&nfsport=$VB_PORT&mountport=$VB_PORT"
VA_DIR=$(dirname "$(find "$SHELF/volumes" -name own.txt | head -1)")
VB_DIR=$(dirname "$(find "$SHELF/volumes" -name other.txt | head -1)")
FSID_VA=$(basename "$VA_DIR")
ok "the volumes' data are on the shelf (va $FSID_VA)" test -f "$VA_DIR/own.txt" -a -f "$VB_DIR/other.txt"
TIERMAP=$SHELF/.aquifer-tier/$FSID_VA/tier.db
for _ in $(seq 100); do [ -f "$TIERMAP" ] && break; sleep 0.1; done
ok "va has its tier map on the shelf" test -f "$TIERMAP"
KEY=$(jq -r .handleKey "$D/n1/state/credentials.json")
ok "the attacker holds the location's handle key" test "${#KEY}" -eq 64

# forged HANDLE_TARGET DESC: a MAC-valid handle of va around TARGET, used on
# va's node: every call STALE (70).
forged() {
	local fh out
	fh=$("$TOOL" forge --key "$KEY" --fsid "$FSID_VA" "$1") || { aq_failed "$2: forge" "$1"; return; }
	out=$("$TOOL" use --port "$VA_PORT" --fh "$fh")
	expect_eq "$2: GETATTR, READ and SETATTR answer NFS3ERR_STALE" "getattr=70 read=70 setattr=70" "$out"
}
fh=$("$TOOL" forge --key "$KEY" --fsid "$FSID_VA" "$VA_DIR/own.txt")
expect_eq "the same forgery of va's own file resolves (the key is real)" \
	"getattr=0 read=0 data=va-data setattr=0" "$("$TOOL" use --port "$VA_PORT" --fh "$fh")"
forged "$VB_DIR/other.txt" "(a) a file of another volume"
forged "$VB_DIR" "(a) another volume's root"
forged "$D/aquiferd.key" "(b) aquiferd's signing key"
forged "$D/aq.db" "(b) aquiferd's database"
forged "$D/n1/state/credentials.json" "(b) an agent's credentials"
forged "$TIERMAP" "(c) the tier map"
forged "$SHELF/volumes" "(c) the shelf's volumes folder"
fh=$("$TOOL" forge --key "$KEY" --fsid "$FSID_VA" "$D/aquiferd.key")
expect_eq "the forged handle of the key answers STALE on the other node too" \
	"getattr=70 read=70 setattr=70" "$("$TOOL" use --port "$VB_PORT" --fh "$fh")"
ok "the signing key is untouched (mode 0600)" test "$(stat -c %a "$D/aquiferd.key")" = 600

# A legitimate handle survives failover: the other node resolves it.
LEGIT=$("$TOOL" lookup --port "$VA_PORT" --export /va own.txt)
expect_eq "a legitimate handle of va reads its file" "getattr=0 read=0 data=va-data setattr=0" \
	"$("$TOOL" use --port "$VA_PORT" --fh "$LEGIT")"
if [ "$VA_PORT" = "$N1_NFS" ]; then kill -KILL "$N1_PID"; wait "$N1_PID" 2>/dev/null
else kill -KILL "$N2_PID"; wait "$N2_PID" 2>/dev/null; fi
moved=
for _ in $(seq 600); do
	p=$(port_of va)
	if [ "$p" != "$VA_PORT" ] && [ "$p" != null ] &&
		nfs-ls "nfs://127.0.0.1/va?version=3&nfsport=$p&mountport=$p" >/dev/null 2>&1; then
		moved=$p
		break
	fi
	sleep 0.1
done
ok "va fails over to the other node" test -n "$moved"
expect_eq "the legitimate handle still works there" "getattr=0 read=0 data=va-data setattr=0" \
	"$("$TOOL" use --port "${moved:-0}" --fh "$LEGIT")"
VA_PORT=${moved:-0}
forged "$D/aquiferd.key" "(b) after failover, aquiferd's signing key"
aq_finish
