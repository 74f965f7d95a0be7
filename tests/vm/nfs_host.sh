# tests/vm/nfs_host.sh: the host side the NFS kernel-client suites share
# (tests/e2e/test_vm_nfs3.sh, test_vm_nfs41.sh; sourced after tests/e2e/lib.sh
# and tests/vm/lib.sh, not run): aquiferd and one agent with a pool, the
# three volumes the guest mounts (read-write, root-squashed through the CLI,
# read-only with a file the host put there), the shared folder with the
# guest's scripts and a source tree for tar, and the checks only the host
# can make after the guest ran.

# vm_nfs_start: aquiferd, one agent, pool vmpool. Sets TOK, P, SHELF, CAP_GIB, AQUIFER.
vm_nfs_start() {
	AQUIFER=$AQ_BUILDDIR/aquifer
	aq_start "$AQ_TMP/srv" || exit 1
	TOK=$(aq_token "$AQ_TMP/srv" admin)
	aq_req POST "/v1/locations?locationId=vmloc" '{}'
	aq_req POST "/v1/projects?projectId=vmproj" '{}'
	P=/v1/projects/vmproj/locations/vmloc
	aq_agent_for vmloc || exit 1
	SHELF=$AQ_TMP/shelf-vmloc
	aq_req POST "$P/storagePools?storagePoolId=vmpool" '{"network":"projects/vpc-host/global/networks/default","serviceLevel":"EXTREME","capacityGib":"10240","qosType":"MANUAL"}'
	expect_jq .done true "pool vmpool created"
	CAP_GIB=100
}

# vm_nfs_new_dir BEFORE: the volume folder that appeared on the shelf since BEFORE.
vm_nfs_new_dir() {
	comm -13 <(printf '%s\n' "$1") <(ls "$SHELF/volumes" 2>/dev/null) | head -n1
}

# vm_nfs_volumes NAME PROTOCOL: volumes NAME (read-write), NAMEsq (root
# squash, made with the CLI) and NAMEro (read-only) speaking PROTOCOL (NFSV3
# or NFSV4), each checked READY with a mount entry for PROTOCOL naming its
# export on the agent's NFS port. Sets RW_DIR, SQ_DIR, RO_DIR (their shelf
# folders), RO_SHA (of the file ro.bin put on the read-only one) and PORT.
vm_nfs_volumes() {
	local name=$1 proto=$2 lower before v
	lower=$(printf '%s' "$proto" | tr 'A-Z' 'a-z')
	before=$(ls "$SHELF/volumes" 2>/dev/null)
	aq_mutate POST "$P/volumes?volumeId=$name" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
		\"protocols\":[\"$proto\"],\"shareName\":\"$name\",\"throughputMibps\":300,\"unixPermissions\":\"0755\",
		\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
	expect_jq .response.state READY "volume $name (read-write, $proto) READY"
	RW_DIR=$SHELF/volumes/$(vm_nfs_new_dir "$before")

	before=$(ls "$SHELF/volumes" 2>/dev/null)
	if AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=vmproj AQUIFER_LOCATION=vmloc \
		"$AQUIFER" volumes create "${name}sq" --storage-pool=vmpool --capacity=${CAP_GIB}GiB --protocols="$lower" \
		--share-name="${name}sq" --throughput-mibps=300MiB/s --unix-permissions=0777 \
		--export-policy=allowed-clients=127.0.0.1,access-type=read_write,$lower=true,squash-mode=root_squash,anon-uid=65534 \
		--format='value(state)' >"$AQ_TMP/cli.out" 2>"$AQ_TMP/cli.err"; then
		expect_eq "aquifer volumes create ${name}sq (root squash) READY" READY "$(cat "$AQ_TMP/cli.out")"
	else
		aq_failed "aquifer volumes create ${name}sq" "$(cat "$AQ_TMP/cli.err")"
	fi
	SQ_DIR=$SHELF/volumes/$(vm_nfs_new_dir "$before")

	before=$(ls "$SHELF/volumes" 2>/dev/null)
	aq_mutate POST "$P/volumes?volumeId=${name}ro" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
		\"protocols\":[\"$proto\"],\"shareName\":\"${name}ro\",\"throughputMibps\":300,
		\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_ONLY\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
	expect_jq .response.state READY "volume ${name}ro (read-only) READY"
	RO_DIR=$SHELF/volumes/$(vm_nfs_new_dir "$before")
	head -c $((3 << 20)) /dev/urandom >"$RO_DIR/ro.bin"
	RO_SHA=$(sha256sum <"$RO_DIR/ro.bin" | cut -c1-64)

	for v in "$name" "${name}sq" "${name}ro"; do
		aq_req GET "$P/volumes/$v"
		expect_jq "[.mountOptions[] | select(.protocol == \"$proto\")][0].exportFull" "127.0.0.1:/$v" \
			"$v: its $proto mount entry names the export"
	done
	aq_req GET "$P/volumes/$name"
	PORT=$(printf '%s' "$BODY" | jq -r "[.mountOptions[] | select(.protocol == \"$proto\")][0].port")
	ok "the volumes are served on the agent's NFS port" test "$PORT" = "$AGENT_NFS_PORT"
}

# vm_nfs_share S SCRIPT...: the shared folder S with the guest's common
# scripts and SCRIPT..., and src.tar: this repository's sources with what
# tar must carry through (a symlink, a hard link, an empty directory, odd
# modes, another owner, nanosecond times).
vm_nfs_share() {
	local s=$1 t=$AQ_TMP/tree d f
	shift
	mkdir -p "$s"
	for f in lib.sh fileops.sh nfs_checks.sh locks.sh stress.py "$@"; do
		cp "$AQ_SRC/tests/vm/guest/$f" "$s/"
	done
	mkdir -p "$t"
	for d in agent api cli db server man; do
		[ -d "$AQ_SRC/$d" ] && cp -a "$AQ_SRC/$d" "$t/"
	done
	mkdir -p "$t/extra/empty"
	ln -s ../agent "$t/extra/to-agent"
	ln -s nowhere "$t/extra/dangling"
	printf '#!/bin/sh\necho hi\n' >"$t/extra/run.sh"
	chmod 0755 "$t/extra/run.sh"
	echo private >"$t/extra/private"
	chmod 0600 "$t/extra/private"
	ln "$t/extra/private" "$t/extra/private.link"
	echo theirs >"$t/extra/by 1000"
	chown 1000:1100 "$t/extra/by 1000"
	: >"$t/extra/empty-file"
	touch -d '2001-02-03 04:05:06.123456789' "$t/extra/run.sh"
	tar --format=posix -C "$t" -cf "$s/src.tar" .
}

# vm_nfs_hostlock_start S PATH: the host's NFSv4.1 client ($LOCK_TOOL,
# tests/agent/nfs4/nfs4_lock_tool, on the agent's NFS port $PORT) in the
# background (HOLDER_PID): when the guest asks (S/hostlock.want), lock the
# whole of PATH, say so (S/hostlock.held), keep it until the guest has tried
# (S/hostlock.done), then unlock and say so (S/hostlock.released). Its output
# and exit status in $AQ_TMP/lock_tool.out.
vm_nfs_hostlock_start() {
	local s=$1 path=$2
	(
		for _ in $(seq 36000); do [ -e "$s/hostlock.want" ] && break; sleep 0.1; done
		[ -e "$s/hostlock.want" ] || exit 0
		"$LOCK_TOOL" "$PORT" "$path" "$s/hostlock.held" "$s/hostlock.done" >"$AQ_TMP/lock_tool.out" 2>&1
		echo "exit $?" >>"$AQ_TMP/lock_tool.out"
		: >"$s/hostlock.released"
	) &
	HOLDER_PID=$!
}

# vm_nfs_hostlock_end: after the guest ran, one check that the host's client
# held its lock (exit 0), its output shown; the client stopped.
vm_nfs_hostlock_end() {
	ok "the host's client held its lock while the guest tried" grep -q '^exit 0$' "$AQ_TMP/lock_tool.out"
	sed 's/^/  lock tool: /' "$AQ_TMP/lock_tool.out" 2>/dev/null | head -n 10
	kill "$HOLDER_PID" 2>/dev/null
	wait "$HOLDER_PID" 2>/dev/null
	HOLDER_PID=
}

# vm_nfs_boot S: run the guest on S (its cmd and env written), with the
# status check and the guest's TAP lines counted. Sets t_guest.
vm_nfs_boot() {
	local s=$1 rc t_boot
	t_boot=$(date +%s)
	vm_run "$s" "${AQ_VM_TIMEOUT:-2400}"
	rc=$?
	t_guest=$(($(date +%s) - t_boot))
	echo "# vm: guest ran ${t_guest}s under $VM_ACCEL (up in ${VM_BOOT_SECS:-?}s), exit $rc"
	expect_eq "the guest ran to its end (vm_run status 0 or 1)" ok "$([ $rc -le 1 ] && echo ok || echo "status $rc")"
	vm_guest_results "$s"
}

# vm_nfs_host_checks S: what only the host sees after the guest ran: the
# bytes of the large file on the shelf, the squashed owner on disk, the
# read-only file unchanged, the client's complaints in the guest's kernel
# log ("server ... OK" follows a "not responding"; stale handles, decoding
# and readdir trouble; v4 errors and state recovery; any oops), the agent
# still serving.
vm_nfs_host_checks() {
	local s=$1 big
	big=$(sed -n 's/^# big.sha256 //p' "$s/big.sha256" 2>/dev/null)
	if [ -n "$big" ]; then
		expect_eq "the large file on the shelf has the sha256 the guest wrote" "$big" "$(sha256sum <"$RW_DIR/big" | cut -c1-64)"
	else
		aq_failed "the guest reported the large file's sha256"
	fi
	if [ -f "$SQ_DIR/byroot" ]; then
		expect_eq "root's file on the squashed volume is 65534's on disk" 65534:65534 "$(stat -c %u:%g "$SQ_DIR/byroot")"
	else
		aq_failed "root's file on the squashed volume reached the shelf"
	fi
	expect_eq "the read-only volume's file is unchanged on the shelf" "$RO_SHA" "$(sha256sum <"$RO_DIR/ro.bin" | cut -c1-64)"
	vm_guest_dmesg "$s" 'not responding|server .* OK|bad XDR|XDR|[Ss]tale (file )?handle|ESTALE|fileid changed|readdir loop|cookie|RPC: .*(garbage|error|bad)|NFS: .*(error|failed|[Ii]nvalid)|NFS4ERR|state manager'
	vm_agent_checks
}
