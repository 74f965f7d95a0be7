# tests/agent/snap/snap.sh: the snapshot suites' shelf and intents (sourced
# after tests/e2e/lib.sh and tests/agent/tier/agent.sh).
#
#   snap_shelf NODE [MB]   make $AQ_TMP/NODE/shelf a btrfs file system (a loop
#                          image of MB MiB, default 4096, made and mounted here,
#                          unmounted and removed at exit) and say so; when the
#                          loop mount is not possible, or AQ_SNAP_SHELF=plain,
#                          the plain folder: the portable fallback. Sets SNAP_FS
#                          (btrfs | plain).
#   svol NAME FSID SNAPS [EXTRA]  one volume entry of the intent: SNAPS the JSON
#                          of its snapshot fields ({snapshots:[...], ...})
#   snaps ID:UID...        [{id, uid}...]
#   spush VOL...           push {node, volumes: [VOL...]} (+ $SPUSH_EXTRA fields)
#   sstat VOLNAME FILTER   jq FILTER over that volume's status entry
#   surl SHARE PATH        NFS URL of PATH in SHARE
SNAP_MOUNTS=()

snap_cleanup() {
	local m pid
	for pid in "${AQ_PIDS[@]}"; do # nothing may hold the mounts
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for m in "${SNAP_MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	rm -f "$AQ_TMP"/*.btrfs.img
}

snap_shelf() {
	local d=$AQ_TMP/$1/shelf img=$AQ_TMP/$1.btrfs.img
	mkdir -p "$d"
	SNAP_FS=plain
	if [ "${AQ_SNAP_SHELF:-btrfs}" = btrfs ] && command -v mkfs.btrfs >/dev/null &&
		truncate -s "${2:-4096}M" "$img" && mkfs.btrfs -q "$img" >/dev/null 2>&1 &&
		mount -o loop "$img" "$d" 2>/dev/null; then
		SNAP_MOUNTS+=("$d")
		SNAP_FS=btrfs
	else
		rm -f "$img"
	fi
	echo "# snapshot suite on a $SNAP_FS shelf ($d)"
}

snaps() {
	local s out=
	for s in "$@"; do out="$out${out:+,}{\"id\":\"${s%%:*}\",\"uid\":\"${s#*:}\"}"; done
	echo "[$out]"
}

svol() {
	jq -nc --arg name "$1" --arg fsid "$2" --argjson s "${3:-{\}}" --argjson x "${4:-{\}}" '
	  {name: ("projects/p/locations/east/volumes/" + $name), fsid: $fsid, shareName: $name,
	   dir: ("volumes/" + $fsid), capacityBytes: 17179869184, unixPermissions: "0777",
	   exportRules: [{allowedClients: "127.0.0.1", accessType: "READ_WRITE", squashMode: "NO_ROOT_SQUASH"}]}
	  + $s + $x'
}

spush() {
	local v vols=
	for v in "$@"; do vols="$vols${vols:+,}$v"; done
	push "$(jq -nc --arg node "$NODE" --argjson v "[$vols]" --argjson x "${SPUSH_EXTRA:-{\}}" '{node: $node, volumes: $v} + $x')"
}

sstat() {
	curl -s -H "Authorization: Bearer $SECRET" "http://127.0.0.1:$API/v1/status" |
		jq -r --arg n "projects/p/locations/east/volumes/$1" ".volumes[] | select(.name == \$n) | $2"
}

surl() { echo "nfs://127.0.0.1/$1$2?version=3&nfsport=$NFS&mountport=$NFS"; }
