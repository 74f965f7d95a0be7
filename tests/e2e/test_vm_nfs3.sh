#!/usr/bin/env bash
# test_vm_nfs3.sh: the Linux kernel NFSv3 client against aquifer-agent (issue 25).
#
# aquiferd and one agent on loopback; a pool and three volumes made through
# the API and the CLI (read-write, root-squashed, read-only); then the test
# guest (tests/vm) mounts them with `mount -t nfs -o vers=3,nolock,...` from
# 10.0.2.2 (QEMU user networking: the host's 127.0.0.1) and runs the checks
# of tests/vm/guest/nfs3.sh, one TAP line each. Here every guest line counts
# as a pass or a failure, a check the guest never reported counts as failed,
# and the host checks what the guest cannot see: the bytes on the shelf, the
# squashed owner on disk, the guest's kernel log, the agent still serving.
#
# AQ_VM=0 skips (exit 77; tests/run_all.sh sets it for the ASan build), AQ_VM=1
# makes missing tools a failure instead of a skip (CI). AQ_VM_BIG_MIB (64),
# AQ_VM_STRESS_SECS (20) size the large-file and stress checks; the image
# cache and the accelerator are tests/vm/lib.sh's (see tests/vm/README.md).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"

case ${AQ_VM:-auto} in
0) echo "SKIP: AQ_VM=0"; exit 77 ;;
esac
miss=$(vm_missing)
if [ -n "$miss" ]; then
	[ "${AQ_VM:-auto}" = 1 ] && { echo "FAIL: AQ_VM=1 but missing $miss (deploy/deps.sh test)"; exit 1; }
	echo "SKIP: missing $miss (deploy/deps.sh test installs them)"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ ! -f "$AQ_VM_CACHE/image-$(VM_KVER=$(vm_kver) vm_recipe_key)/complete" ]; then
	[ "${AQ_VM:-auto}" = 1 ] && { echo "FAIL: building the guest image needs root"; exit 1; }
	echo "SKIP: building the guest image needs root"
	exit 77
fi
AQUIFER=$AQ_BUILDDIR/aquifer
trap 'vm_cleanup; aq_cleanup' EXIT

t_start=$(date +%s)
vm_image || { aq_failed "the guest image builds"; aq_finish; }
t_image=$(($(date +%s) - t_start))
echo "# vm: image ready in ${t_image}s ($VM_ROOTFS)"

# --- aquiferd, one agent, a pool, three volumes -------------------------------
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

# new_dir BEFORE: the volume folder that appeared on the shelf since BEFORE.
new_dir() {
	comm -13 <(printf '%s\n' "$1") <(ls "$SHELF/volumes" 2>/dev/null) | head -n1
}
before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=vm3" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"NFSV3\"],\"shareName\":\"vm3\",\"throughputMibps\":300,\"unixPermissions\":\"0755\",
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
expect_jq .response.state READY "volume vm3 (read-write) READY"
RW_DIR=$SHELF/volumes/$(new_dir "$before")

# The root-squashed volume through the CLI.
before=$(ls "$SHELF/volumes" 2>/dev/null)
if AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=vmproj AQUIFER_LOCATION=vmloc \
	"$AQUIFER" volumes create vm3sq --storage-pool=vmpool --capacity=${CAP_GIB}GiB --protocols=nfsv3 \
	--share-name=vm3sq --throughput-mibps=300MiB/s --unix-permissions=0777 \
	--export-policy=allowed-clients=127.0.0.1,access-type=read_write,nfsv3=true,squash-mode=root_squash,anon-uid=65534 \
	--format='value(state)' >"$AQ_TMP/cli.out" 2>"$AQ_TMP/cli.err"; then
	expect_eq "aquifer volumes create vm3sq (root squash) READY" READY "$(cat "$AQ_TMP/cli.out")"
else
	aq_failed "aquifer volumes create vm3sq" "$(cat "$AQ_TMP/cli.err")"
fi
SQ_DIR=$SHELF/volumes/$(new_dir "$before")

before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=vm3ro" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"NFSV3\"],\"shareName\":\"vm3ro\",\"throughputMibps\":300,
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_ONLY\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
expect_jq .response.state READY "volume vm3ro (read-only) READY"
RO_DIR=$SHELF/volumes/$(new_dir "$before")
head -c $((3 << 20)) /dev/urandom >"$RO_DIR/ro.bin"
RO_SHA=$(sha256sum <"$RO_DIR/ro.bin" | cut -c1-64)

for v in vm3 vm3sq vm3ro; do
	aq_req GET "$P/volumes/$v"
	expect_jq '.mountOptions[0].exportFull' "127.0.0.1:/$v" "$v: mountOptions name the export"
done
aq_req GET "$P/volumes/vm3"
PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
ok "the volumes are served on the agent's NFS port" test "$PORT" = "$AGENT_NFS_PORT"

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
mkdir -p "$S"
cp "$AQ_SRC"/tests/vm/guest/{lib.sh,fileops.sh,nfs3.sh,stress.py} "$S/"
# A source tree with what tar must carry through: this repository's sources,
# a symlink, a hard link, an empty directory, odd modes, another owner.
T=$AQ_TMP/tree
mkdir -p "$T"
for d in agent api cli db server man; do
	[ -d "$AQ_SRC/$d" ] && cp -a "$AQ_SRC/$d" "$T/"
done
mkdir -p "$T/extra/empty"
ln -s ../agent "$T/extra/to-agent"
ln -s nowhere "$T/extra/dangling"
printf '#!/bin/sh\necho hi\n' >"$T/extra/run.sh"
chmod 0755 "$T/extra/run.sh"
echo private >"$T/extra/private"
chmod 0600 "$T/extra/private"
ln "$T/extra/private" "$T/extra/private.link"
echo theirs >"$T/extra/by 1000"
chown 1000:1100 "$T/extra/by 1000"
: >"$T/extra/empty-file"
touch -d '2001-02-03 04:05:06.123456789' "$T/extra/run.sh"
tar --format=posix -C "$T" -cf "$S/src.tar" .
cat >"$S/env" <<EOF
PORT=$PORT
RW=/vm3
RW_CAP=$((CAP_GIB << 30))
SQ=/vm3sq
RO=/vm3ro
RO_SHA=$RO_SHA
BIG_MIB=${AQ_VM_BIG_MIB:-64}
STRESS_SECS=${AQ_VM_STRESS_SECS:-20}
CHECK_SECS=${AQ_VM_CHECK_SECS:-180}
EOF
echo 'bash /aqvm/nfs3.sh' >"$S/cmd"
t_boot=$(date +%s)
vm_run "$S" "${AQ_VM_TIMEOUT:-2400}"
rc=$?
t_guest=$(($(date +%s) - t_boot))
echo "# vm: guest ran ${t_guest}s under $VM_ACCEL (up in ${VM_BOOT_SECS:-?}s), exit $rc"
expect_eq "the guest ran to its end (vm_run status 0 or 1)" ok "$([ $rc -le 1 ] && echo ok || echo "status $rc")"

# --- what the guest reported ----------------------------------------------------
vm_guest_results "$S"

# What only the host sees.
big=$(sed -n 's/^# big.sha256 //p' "$S/big.sha256" 2>/dev/null)
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
# The client's complaints about the server; "server ... OK" follows a
# "not responding"; stale handles, decoding and readdir trouble; any oops.
vm_guest_dmesg "$S" 'not responding|server .* OK|bad XDR|XDR|[Ss]tale (file )?handle|ESTALE|fileid changed|readdir loop|cookie|RPC: .*(garbage|error|bad)|NFS: .*(error|failed|[Ii]nvalid)'
ok "the agent is still running" kill -0 "$AGENT_PID"
if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$AQ_TMP"/srv/*/agent.log 2>/dev/null; then
	aq_failed "no sanitizer report in the agent's log" "$(grep -m3 -E 'Sanitizer|runtime error' "$AQ_TMP"/srv/*/agent.log)"
fi
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
