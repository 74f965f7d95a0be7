# tests/vm/lib.sh: a Debian 12 guest for kernel-client tests (sourced, not run).
#
# The host's kernel has no NFS or CIFS client, so the kernel-client suites boot
# a small QEMU guest that has them. vm_image (image.sh) builds the guest once
# (mmdebstrap root, the kernel and modules of the host's linux-image-amd64, a
# tiny initramfs) into a cache directory keyed by a hash of its recipe, so it
# is rebuilt only when the recipe changes. vm_run boots it with a folder shared
# over 9p, runs that folder's `cmd` script as root and returns when the guest
# powered itself off, with `stdout`, `stderr`, `rc` and `dmesg` in the folder.
# Every boot is bounded in time; the only process ever killed is the QEMU this
# file started (by PID). tests/vm/README.md says how to use it by hand.
#
# Environment: AQ_VM_CACHE (cache directory, default /var/cache/aquifer-vm),
# AQ_VM_MIRROR (Debian mirror for mmdebstrap), AQ_VM_ACCEL (kvm|tcg: skip the
# probe), AQ_VM_MEM (MiB, 1536), AQ_VM_SMP (2), AQ_VM_NICE (QEMU's niceness,
# 10), AQ_VM_BOOT_SECS (TCG boot bound, 180), AQ_VM_KVM_PROBE_SECS (a KVM boot
# not up by then is taken as hung, 20).

AQ_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AQ_VM_CACHE=${AQ_VM_CACHE:-/var/cache/aquifer-vm}
AQ_VM_MIRROR=${AQ_VM_MIRROR:-http://deb.debian.org/debian}

# Set by vm_image.
VM_KERNEL=
VM_INITRD=
VM_ROOTFS=
VM_KVER=
# Set by vm_run: the accelerator used and the seconds until the guest was up.
VM_ACCEL=
VM_BOOT_SECS=
VM_PID=

vm_log() { echo "# vm: $*" >&2; }

# vm_missing: the host tools vm_image and vm_run need that are not installed
# (empty when all are there). deploy/deps.sh test installs them.
vm_missing() {
	local t miss=()
	for t in qemu-system-x86_64 mmdebstrap mke2fs cpio gzip modprobe depmod flock; do
		command -v "$t" >/dev/null 2>&1 || miss+=("$t")
	done
	[ -n "$(vm_kver)" ] || miss+=(linux-image-amd64)
	echo "${miss[*]}"
}

. "$AQ_VM_DIR/image.sh"

# vm_preflight: what every kernel-client suite (tests/e2e/test_vm_*.sh) checks
# before it starts: AQ_VM=0 skips (exit 77; tests/run_all.sh sets it for the
# ASan build); missing host tools, or no guest image and not root to build
# it, skip too, or fail when AQ_VM=1 (CI). Exits the calling test when it
# does not run; returns when it does.
vm_preflight() {
	local miss
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
	return 0
}

# vm_accel_file: where the outcome of the KVM probe is kept (per host kernel
# and QEMU version: a KVM that hangs is a property of those).
vm_accel_file() {
	echo "$AQ_VM_CACHE/accel-$( (uname -r; qemu-system-x86_64 --version | head -n1) | sha256sum | cut -c1-12)"
}

# vm_run SHARE [TIMEOUT]: boot the guest with SHARE (a directory holding the
# script `cmd`) shared over 9p, run `sh cmd` in it as root with SHARE as its
# working directory, and wait until the guest powers off (at most TIMEOUT
# seconds for the command, 1800 by default, plus the boot). On return SHARE
# holds stdout, stderr, rc (the command's exit status, absent when the guest
# never finished), dmesg (the guest's kernel log) and console.log (the serial
# console). The status is the command's exit status, or 124 when the guest
# did not finish in time, or 125 when it could not be booted.
#
# Extra QEMU arguments for the network (the default is user networking: the
# guest is 10.0.2.15 and reaches the host's loopback at 10.0.2.2) come from
# the array VM_NET_ARGS, the guest's address from VM_IP and VM_GW; see
# tests/vm/README.md for a guest on a bridge or a second guest.
vm_run() {
	local share=$1 timeout=${2:-1800} accel rc
	[ -n "$VM_ROOTFS" ] || vm_image || return 125
	[ -f "$share/cmd" ] || { vm_log "no $share/cmd"; return 125; }
	accel=${AQ_VM_ACCEL:-}
	if [ -z "$accel" ]; then
		accel=tcg
		if (exec 3<>/dev/kvm) 2>/dev/null; then
			accel=kvm
			[ "$(cat "$(vm_accel_file)" 2>/dev/null)" = tcg ] && accel=tcg
		fi
	fi
	if [ "$accel" = kvm ]; then
		VM_BOOT_SECS=
		vm_boot "$share" "$timeout" kvm "${AQ_VM_KVM_PROBE_SECS:-20}"
		rc=$?
		if [ -n "$VM_BOOT_SECS" ]; then
			[ -z "${AQ_VM_ACCEL:-}" ] && echo kvm >"$(vm_accel_file)"
			return $rc
		fi
		vm_log "a KVM guest did not come up within ${AQ_VM_KVM_PROBE_SECS:-20} s: using TCG (remembered in $(vm_accel_file))"
		[ -z "${AQ_VM_ACCEL:-}" ] && echo tcg >"$(vm_accel_file)"
	fi
	vm_boot "$share" "$timeout" tcg "${AQ_VM_BOOT_SECS:-180}"
	rc=$?
	[ $rc -eq 126 ] && { vm_log "the guest did not boot; console:"; tail -n 30 "$share/console.log" >&2; rc=125; }
	return $rc
}

# vm_boot SHARE TIMEOUT ACCEL BOOT_SECS: one boot. 126 when the guest was not
# up (the ready file) within BOOT_SECS.
vm_boot() {
	local share=$1 timeout=$2 accel=$3 boot_secs=$4 pid t0 ms cpu up= rc ip=${VM_IP:-10.0.2.15/24} gw=${VM_GW:-10.0.2.2}
	local net=("${VM_NET_ARGS[@]}")
	rm -f "$share/ready" "$share/rc" "$share/stdout" "$share/stderr" "$share/dmesg" "$share/console.log"
	[ ${#net[@]} -gt 0 ] || net=(-netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile=)
	VM_ACCEL=$accel
	# TCG: every feature QEMU emulates; KVM: the host's CPU.
	cpu=max
	[ "$accel" = kvm ] && cpu=host
	t0=$(date +%s%N)
	# Niced: under TCG the guest takes every core it gets, and suites that
	# run beside it (make check -j) and measure throughput come first.
	# no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer
	# check can miss its window and panic ("IO-APIC + timer doesn't work").
	nice -n "${AQ_VM_NICE:-10}" qemu-system-x86_64 -machine "pc,accel=$accel" -cpu "$cpu" -smp "${AQ_VM_SMP:-2}" -m "${AQ_VM_MEM:-1536}" \
		-nodefaults -no-user-config -display none -vga none -no-reboot -monitor none \
		-serial "file:$share/console.log" \
		-kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check aqvm.ip=$ip aqvm.gw=$gw aqvm.timeout=$timeout" \
		-drive "file=$VM_ROOTFS,format=raw,if=virtio,snapshot=on,cache=unsafe" \
		"${net[@]}" \
		-fsdev "local,id=fs0,path=$share,security_model=none" \
		-device virtio-9p-pci,fsdev=fs0,mount_tag=aqvm,romfile= \
		</dev/null >"$share/qemu.log" 2>&1 &
	pid=$!
	VM_PID=$pid
	# Up within boot_secs, then done within the command's bound (the guest's
	# own timeout ends the command first; this is the backstop).
	while kill -0 "$pid" 2>/dev/null; do
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [ -z "$up" ]; then
			if [ -e "$share/ready" ]; then
				up=1
				VM_BOOT_SECS=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
				vm_log "$accel guest up in $VM_BOOT_SECS s"
			elif [ $ms -gt $((boot_secs * 1000)) ]; then
				vm_stop "$pid"
				return 126
			fi
		elif [ $ms -gt $(((boot_secs + timeout + 30) * 1000)) ]; then
			vm_log "the guest did not finish in time: stopped"
			vm_stop "$pid"
			return 124
		fi
		sleep 0.2
	done
	wait "$pid"
	rc=$?
	VM_PID=
	if [ -z "$up" ]; then
		vm_log "QEMU exited ($rc) before the guest was up:"
		tail -n 20 "$share/qemu.log" "$share/console.log" >&2
		return 125
	fi
	[ -f "$share/rc" ] || { vm_log "the guest stopped without an exit status"; tail -n 20 "$share/console.log" >&2; return 124; }
	return "$(cat "$share/rc")"
}

# vm_cleanup: stop the guest if one is still running (for the caller's EXIT
# trap: a test killed mid-run leaves no QEMU behind).
vm_cleanup() {
	[ -n "$VM_PID" ] && vm_stop "$VM_PID"
	VM_PID=
	return 0
}

# vm_stop PID: end the QEMU this file started.
vm_stop() {
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# vm_run_bg SHARE [TIMEOUT]: vm_run in a background subshell, for a suite
# that talks to the guest while it runs (tests/e2e/test_vm_nvme_*.sh). The
# subshell stops its own QEMU on the way out (TERM ends it with 130) and
# writes vm_run's status to SHARE/vm.rc; its PID is in VM_SUB. VM_NET_ARGS,
# VM_IP and VM_GW are vm_run's. vm_wait_bg waits for it; vm_stop_bg (for the
# caller's EXIT trap, before vm_cleanup) stops it.
VM_SUB=
vm_run_bg() {
	local share=$1 timeout=${2:-1800}
	rm -f "$share/vm.rc"
	(
		trap vm_cleanup EXIT
		trap 'exit 130' TERM
		vm_run "$share" "$timeout"
		echo $? >"$share/vm.rc"
	) &
	VM_SUB=$!
}

# vm_stop_bg: stop the guest vm_run_bg started if it still runs (TERM to its
# subshell, whose trap stops QEMU) and wait for it. Always 0.
vm_stop_bg() {
	[ -n "$VM_SUB" ] && kill -TERM "$VM_SUB" 2>/dev/null && wait "$VM_SUB"
	VM_SUB=
	return 0
}

# vm_wait_bg SHARE: wait until the guest vm_run_bg started has powered off,
# and check (tests/e2e/lib.sh's expect_eq, one check) that its command ran to
# the end with status 0 (SHARE/vm.rc).
vm_wait_bg() {
	[ -n "$VM_SUB" ] && wait "$VM_SUB"
	VM_SUB=
	expect_eq "the guest ran its checks to the end" 0 "$(cat "$1/vm.rc" 2>/dev/null)"
}

# vm_guest_results SHARE: count a guest suite's TAP output (SHARE/stdout, as
# tests/vm/guest/lib.sh prints it) into the calling test (tests/e2e/lib.sh's
# aq_pass / aq_failed): each "ok" a pass, each "not ok" a failure with its
# "#   " lines as detail, and one check that the plan was reported whole (a
# guest that stopped early fails it). Prints the guest's "# " notes, its
# stderr and its slowest checks.
vm_guest_results() {
	local s=$1 line plan= reported=0 desc=
	local -a detail=()
	grep -E '^(# |Bail out)' "$s/stdout" 2>/dev/null | sed 's/^/  guest: /'
	[ -s "$s/stderr" ] && sed 's/^/  guest stderr: /' "$s/stderr" | head -n 20
	[ -f "$s/timings" ] && sort -rn "$s/timings" | head -n 6 | awk '{ $1 = $1 "s"; print "# vm: slowest check: " $0 }'
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			[ -n "$desc" ] && aq_failed "guest: $desc" "${detail[@]}"
			desc= detail=()
			reported=$((reported + 1))
			case $line in
			"ok "*) aq_pass "guest: ${line#ok * - }" ;;
			*) desc=${line#not ok * - } ;;
			esac
			;;
		"#   "*) [ -n "$desc" ] && detail+=("${line#\#   }") ;;
		1..*) plan=${line#1..} ;;
		esac
	done <"$s/stdout"
	[ -n "$desc" ] && aq_failed "guest: $desc" "${detail[@]}"
	ok "the guest reported its whole plan (${plan:-no plan}, $reported checks)" test -n "$plan" -a "$reported" = "${plan:-x}"
}

# vm_guest_dmesg SHARE REGEX [EXPECTED]: the guest's kernel log (SHARE/dmesg)
# came back and has no line matching REGEX (the protocol client's
# complaints) nor any kernel trouble (oops, warnings, hung tasks), apart from
# lines matching EXPECTED (what a check provoked on purpose).
vm_guest_dmesg() {
	local bad
	if [ -f "$1/dmesg" ]; then
		bad=$(grep -E "$2|BUG:|WARNING:|Oops|Call Trace|general protection|blocked for more than|segfault" "$1/dmesg" |
			grep -vE "${3:-^\$}" | head -n 10)
		expect_eq "the guest's kernel log has nothing alarming" "" "$bad"
	else
		aq_failed "the guest's kernel log came back"
	fi
}

# vm_agent_checks: after a guest ran against the test's agent (AGENT_PID,
# its log under AQ_TMP/srv): the agent still runs and its log has no
# sanitizer report.
vm_agent_checks() {
	ok "the agent is still running" kill -0 "$AGENT_PID"
	if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$AQ_TMP"/srv/*/agent.log 2>/dev/null; then
		aq_failed "no sanitizer report in the agent's log" "$(grep -m3 -E 'Sanitizer|runtime error' "$AQ_TMP"/srv/*/agent.log)"
	fi
}
