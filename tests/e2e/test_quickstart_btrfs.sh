#!/usr/bin/env bash
# test_quickstart_btrfs.sh: deploy/quickstart.sh with AQ_SHELF_FS=btrfs (issue
# 20): the shelf is a btrfs loop mount, the agent says it makes snapshots by
# btrfs subvolume, a snapshot of the demo volume through the API is READY
# and is a subvolume on the shelf, and the quickstart says how to unmount.
# The default (a plain folder) is what test_readme.sh runs.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop mount)"; exit 77; }
command -v mkfs.btrfs >/dev/null || { echo "SKIP: btrfs-progs missing (deploy/deps.sh test installs it)"; exit 77; }
ST=$AQ_TMP/run
cleanup() {
	local p
	for p in "$ST/agent.pid" "$ST/aquiferd.pid"; do
		[ -f "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null
	done
	sleep 0.2
	mountpoint -q "$ST/shelf" && { umount "$ST/shelf" 2>/dev/null || umount -l "$ST/shelf"; }
	aq_cleanup
}
trap cleanup EXIT
PORT=$(aq_pick_port) AGENT_PORT=$(aq_pick_port) NFS_PORT=$(aq_pick_port) SMB_PORT=$(aq_pick_port)
if ! AQ_BINDIR=$AQ_BUILDDIR AQ_STATE=$ST AQ_PORT=$PORT AQ_AGENT_PORT=$AGENT_PORT AQ_NFS_PORT=$NFS_PORT \
	AQ_SMB_PORT=$SMB_PORT AQ_SHELF_FS=btrfs AQ_SHELF_GIB=4 bash "$AQ_SRC/deploy/quickstart.sh" >"$AQ_TMP/qs.out" 2>&1; then
	if grep -q "cannot loop-mount" "$AQ_TMP/qs.out"; then
		echo "SKIP: this machine cannot loop-mount"
		exit 77
	fi
	aq_failed "the quickstart runs" "$(tail -15 "$AQ_TMP/qs.out")"
	aq_finish
fi
aq_pass "the quickstart runs with AQ_SHELF_FS=btrfs"
expect_eq "the shelf is a btrfs mount" btrfs "$(stat -f -c %T "$ST/shelf")"
ok "the quickstart says the shelf is a btrfs loop mount" grep -q "btrfs loop mount" "$AQ_TMP/qs.out"
ok "the agent makes snapshots by btrfs subvolume" grep -q "snapshots by btrfs" "$ST/agent.log"
TOK=$(grep -o 'AQUIFER_TOKEN=.*' "$ST/env" | cut -d= -f2)
B="https://127.0.0.1:$PORT/v1/projects/demo/locations/local/volumes/demo"
op=$(curl -fs --cacert "$ST/ca.crt" -H "Authorization: Bearer $TOK" -X POST "$B/snapshots?snapshotId=s1" -d '{}' | jq -r .name)
state=
for _ in $(seq 100); do
	state=$(curl -fs --cacert "$ST/ca.crt" -H "Authorization: Bearer $TOK" "$B/snapshots/s1" | jq -r .state)
	[ "$state" = READY ] && break
	sleep 0.2
done
expect_eq "a snapshot of the demo volume ($op) is READY" READY "$state"
ok "it is a btrfs subvolume on the shelf" bash -c 'btrfs subvolume list "$1" | grep -q "/s1$"' _ "$ST/shelf"
aq_finish
