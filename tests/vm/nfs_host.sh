# tests/vm/nfs_host.sh: the Linux kernel NFS client against aquifer-agent, for
# one NFS version (sourced by tests/e2e/test_vm_nfs3.sh, issue 25, and
# tests/e2e/test_vm_nfs41.sh, issue 19, which set NFSV=3 or NFSV=4.1).
#
# aquiferd and one agent on loopback; a pool and three volumes made through
# the API and the CLI (read-write, root-squashed, read-only) whose protocols
# are that version's only (NFSV3 or NFSV4); then the test guest (tests/vm)
# mounts them with `mount -t nfs -o vers=$NFSV,...` from 10.0.2.2 (QEMU user
# networking: the host's 127.0.0.1) and runs the checks of
# tests/vm/guest/nfs3.sh (NFSV tells it the version), one TAP line each. Here
# every guest line counts as a pass or a failure, a check the guest never
# reported counts as failed, and the host checks what the guest cannot see:
# the bytes on the shelf, the squashed owner on disk, the guest's kernel log,
# the agent still serving.
#
# AQ_VM=0 skips (exit 77; tests/run_all.sh sets it for the ASan build), AQ_VM=1
# makes missing tools a failure instead of a skip (CI). AQ_VM_BIG_MIB (64),
# AQ_VM_STRESS_SECS (20), AQ_VM_MANY (10000 files) size the large-file, stress
# and big-directory checks (the caller may lower the defaults); the image
# cache and the accelerator are tests/vm/lib.sh's (see tests/vm/README.md).
. "$(dirname "$0")/lib.sh"
. "$AQ_SRC/tests/vm/lib.sh"
case ${NFSV:-} in
3) PROTO=NFSV3 V=vm3 ;;
4.1) PROTO=NFSV4 V=vm41 ;;
*) echo "nfs_host.sh: NFSV must be 3 or 4.1"; exit 1 ;;
esac

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
aq_mutate POST "$P/volumes?volumeId=$V" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"$PROTO\"],\"shareName\":\"$V\",\"throughputMibps\":300,\"unixPermissions\":\"0755\",
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_WRITE\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
expect_jq .response.state READY "volume $V (read-write) READY"
RW_DIR=$SHELF/volumes/$(new_dir "$before")

# The root-squashed volume through the CLI.
before=$(ls "$SHELF/volumes" 2>/dev/null)
if AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK AQUIFER_PROJECT=vmproj AQUIFER_LOCATION=vmloc \
	"$AQUIFER" volumes create ${V}sq --storage-pool=vmpool --capacity=${CAP_GIB}GiB --protocols=${PROTO,,} \
	--share-name=${V}sq --throughput-mibps=300MiB/s --unix-permissions=0777 \
	--export-policy=allowed-clients=127.0.0.1,access-type=read_write,nfsv3=true,nfsv4=true,squash-mode=root_squash,anon-uid=65534 \
	--format='value(state)' >"$AQ_TMP/cli.out" 2>"$AQ_TMP/cli.err"; then
	expect_eq "aquifer volumes create ${V}sq (root squash) READY" READY "$(cat "$AQ_TMP/cli.out")"
else
	aq_failed "aquifer volumes create ${V}sq" "$(cat "$AQ_TMP/cli.err")"
fi
SQ_DIR=$SHELF/volumes/$(new_dir "$before")

before=$(ls "$SHELF/volumes" 2>/dev/null)
aq_mutate POST "$P/volumes?volumeId=${V}ro" "{\"storagePool\":\"vmpool\",\"capacityGib\":\"$CAP_GIB\",
	\"protocols\":[\"$PROTO\"],\"shareName\":\"${V}ro\",\"throughputMibps\":300,
	\"exportPolicy\":{\"rules\":[{\"allowedClients\":\"127.0.0.1\",\"accessType\":\"READ_ONLY\",\"squashMode\":\"NO_ROOT_SQUASH\"}]}}"
expect_jq .response.state READY "volume ${V}ro (read-only) READY"
RO_DIR=$SHELF/volumes/$(new_dir "$before")
head -c $((3 << 20)) /dev/urandom >"$RO_DIR/ro.bin"
RO_SHA=$(sha256sum <"$RO_DIR/ro.bin" | cut -c1-64)

for v in $V ${V}sq ${V}ro; do
	aq_req GET "$P/volumes/$v"
	expect_jq '.mountOptions[0].exportFull' "127.0.0.1:/$v" "$v: mountOptions name the export"
	expect_jq '.mountOptions[0].protocol' "$PROTO" "$v: mountOptions are $PROTO's"
	expect_jq '.mountOptions[0].instructions | contains("vers='"$NFSV"',")' true "$v: the instructions mount vers=$NFSV"
done
aq_req GET "$P/volumes/$V"
PORT=$(printf '%s' "$BODY" | jq -r '.mountOptions[0].port')
ok "the volumes are served on the agent's NFS port" test "$PORT" = "$AGENT_NFS_PORT"

# --- the guest ----------------------------------------------------------------
S=$AQ_TMP/share
mkdir -p "$S"
cp "$AQ_SRC/tests/vm/guest/nfs3.sh" "$AQ_SRC/tests/vm/guest/stress.py" "$S/"
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
NFSV=$NFSV
RW=/$V
RW_CAP=$((CAP_GIB << 30))
SQ=/${V}sq
RO=/${V}ro
RO_SHA=$RO_SHA
BIG_MIB=${AQ_VM_BIG_MIB:-64}
STRESS_SECS=${AQ_VM_STRESS_SECS:-20}
CHECK_SECS=${AQ_VM_CHECK_SECS:-180}
MANY=${AQ_VM_MANY:-10000}
EOF
echo 'bash /aqvm/nfs3.sh' >"$S/cmd"
t_boot=$(date +%s)
vm_run "$S" "${AQ_VM_TIMEOUT:-2400}"
rc=$?
t_guest=$(($(date +%s) - t_boot))
echo "# vm: guest ran ${t_guest}s under $VM_ACCEL (up in ${VM_BOOT_SECS:-?}s), exit $rc"
expect_eq "the guest ran to its end (vm_run status 0 or 1)" ok "$([ $rc -le 1 ] && echo ok || echo "status $rc")"

# --- what the guest reported ----------------------------------------------------
grep -E '^(# |Bail out)' "$S/stdout" 2>/dev/null | sed 's/^/  guest: /'
[ -s "$S/stderr" ] && sed 's/^/  guest stderr: /' "$S/stderr" | head -n 20
[ -f "$S/timings" ] && sort -rn "$S/timings" | head -n 6 | awk '{ $1 = $1 "s"; print "# vm: slowest check: " $0 }'
plan=
reported=0
desc=
flush_fail() {
	[ -n "$desc" ] && aq_failed "guest: $desc" "${detail[@]}"
	desc=
	detail=()
}
detail=()
while IFS= read -r line; do
	case $line in
	"ok "*)
		flush_fail
		reported=$((reported + 1))
		aq_pass "guest: ${line#ok * - }"
		;;
	"not ok "*)
		flush_fail
		reported=$((reported + 1))
		desc=${line#not ok * - }
		;;
	"#   "*) [ -n "$desc" ] && detail+=("${line#\#   }") ;;
	1..*) plan=${line#1..} ;;
	esac
done <"$S/stdout"
flush_fail
ok "the guest reported its whole plan (${plan:-no plan}, $reported checks)" test -n "$plan" -a "$reported" = "${plan:-x}"

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
alarm='not responding|server .* OK|bad XDR|XDR|[Ss]tale (file )?handle|ESTALE|fileid changed|readdir loop|cookie|RPC: .*(garbage|error|bad)|NFS: .*(error|failed|[Ii]nvalid)|BUG:|WARNING:|Oops|Call Trace|general protection|blocked for more than|segfault'
if [ -f "$S/dmesg" ]; then
	bad=$(grep -E "$alarm" "$S/dmesg" | head -n 10)
	expect_eq "the guest's kernel log has nothing alarming" "" "$bad"
else
	aq_failed "the guest's kernel log came back"
fi
ok "the agent is still running" kill -0 "$AGENT_PID"
if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$AQ_TMP"/srv/*/agent.log 2>/dev/null; then
	aq_failed "no sanitizer report in the agent's log" "$(grep -m3 -E 'Sanitizer|runtime error' "$AQ_TMP"/srv/*/agent.log)"
fi
echo "# vm: image ${t_image}s, guest ${t_guest}s (boot ${VM_BOOT_SECS:-?}s), total $(($(date +%s) - t_start))s"
aq_finish
