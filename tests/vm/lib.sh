# tests/vm/lib.sh: a Debian 12 guest for kernel-client tests (sourced, not run).
#
# The host's kernel has no NFS or CIFS client, so the kernel-client suites boot
# a small QEMU guest that has them. vm_image builds the guest once (mmdebstrap
# root, the kernel and modules of the host's linux-image-amd64, a tiny
# initramfs) into a cache directory keyed by a hash of its recipe, so it is
# rebuilt only when the recipe changes. vm_run boots it with a folder shared
# over 9p, runs that folder's `cmd` script as root and returns when the guest
# powered itself off, with `stdout`, `stderr`, `rc` and `dmesg` in the folder.
# Every boot is bounded in time; the only process ever killed is the QEMU this
# file started (by PID). tests/vm/README.md says how to use it by hand.
#
# Environment: AQ_VM_CACHE (cache directory, default /var/cache/aquifer-vm),
# AQ_VM_MIRROR (Debian mirror for mmdebstrap), AQ_VM_ACCEL (kvm|tcg: skip the
# probe), AQ_VM_MEM (MiB, 1536), AQ_VM_SMP (2), AQ_VM_BOOT_SECS (TCG boot bound,
# 180), AQ_VM_KVM_PROBE_SECS (a KVM boot not up by then is taken as hung, 20).

AQ_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AQ_VM_CACHE=${AQ_VM_CACHE:-/var/cache/aquifer-vm}
AQ_VM_MIRROR=${AQ_VM_MIRROR:-http://deb.debian.org/debian}
# What the guest carries. Changing this list (or any recipe file) rebuilds it.
AQ_VM_PACKAGES="nfs-common cifs-utils fio python3 busybox-static kmod iproute2 procps netbase"
# Modules copied into the guest: whole trees (file systems, network, their
# crypto and library helpers), plus the dependency closure of these drivers.
AQ_VM_MODTREES="kernel/fs kernel/net kernel/lib kernel/crypto kernel/arch"
AQ_VM_DRIVERS="virtio_pci virtio_blk virtio_net virtio_console virtio_rng 9pnet_virtio"
# The initramfs loads only what mounting the root disk needs.
AQ_VM_BOOTMODS="virtio_pci virtio_blk crc32c_generic ext4"

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

# vm_kver: the kernel release of the installed linux-image-amd64 (the guest's
# kernel), e.g. 6.1.0-57-amd64; empty when it is not installed.
vm_kver() {
	local dep
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | grep -o 'linux-image-[0-9][^ ,]*' | head -n1)
	dep=${dep#linux-image-}
	[ -n "$dep" ] && [ -f "/boot/vmlinuz-$dep" ] && [ -d "/lib/modules/$dep" ] && echo "$dep"
	return 0
}

# vm_recipe_key: a hash over everything the image is made of.
vm_recipe_key() {
	{
		echo "bookworm $AQ_VM_PACKAGES | $AQ_VM_MODTREES | $AQ_VM_DRIVERS | $AQ_VM_BOOTMODS | $VM_KVER"
		cat "$AQ_VM_DIR/lib.sh" "$AQ_VM_DIR/guest/init" "$AQ_VM_DIR/guest/initramfs-init"
	} | sha256sum | cut -c1-16
}

# vm_image: make sure the guest image for the current recipe is in the cache
# (building it if not, under a lock so concurrent runs build it once). Sets
# VM_KERNEL, VM_INITRD, VM_ROOTFS, VM_KVER.
vm_image() {
	local key dir
	VM_KVER=$(vm_kver)
	[ -n "$VM_KVER" ] || { vm_log "linux-image-amd64 is not installed"; return 1; }
	key=$(vm_recipe_key)
	dir=$AQ_VM_CACHE/image-$key
	if [ ! -f "$dir/complete" ]; then
		mkdir -p "$AQ_VM_CACHE" || return 1
		(
			flock 9
			[ -f "$dir/complete" ] || vm_build "$dir"
		) 9>"$AQ_VM_CACHE/lock" || return 1
	fi
	VM_KERNEL=$dir/vmlinuz
	[ -f "$dir/vmlinux" ] && VM_KERNEL=$dir/vmlinux
	VM_INITRD=$dir/initrd.gz
	VM_ROOTFS=$dir/rootfs.img
}

# vm_build DIR: build the image into DIR (the caller holds the lock).
vm_build() {
	local dir=$1 tmp root t0 mods m size old
	t0=$(date +%s)
	tmp=$dir.tmp.$$
	root=$tmp/root
	rm -rf "$tmp"
	mkdir -p "$tmp"
	vm_log "building the guest image ${dir##*/} (mmdebstrap from $AQ_VM_MIRROR, kernel $VM_KVER)"
	if ! mmdebstrap --mode=root --variant=minbase --include="${AQ_VM_PACKAGES// /,}" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		bookworm "$root" "deb $AQ_VM_MIRROR bookworm main" >"$tmp/mmdebstrap.log" 2>&1; then
		vm_log "mmdebstrap failed:"
		tail -n 20 "$tmp/mmdebstrap.log" >&2
		rm -rf "$tmp"
		return 1
	fi
	# The kernel's modules: trees, then the drivers' dependency closure.
	mods=/lib/modules/$VM_KVER
	mkdir -p "$root$mods"
	cp -a "$mods"/modules.order "$mods"/modules.builtin "$mods"/modules.builtin.modinfo "$root$mods/"
	for t in $AQ_VM_MODTREES; do
		mkdir -p "$root$mods/$(dirname "$t")"
		cp -a "$mods/$t" "$root$mods/$(dirname "$t")/"
	done
	for m in $(vm_moddeps $AQ_VM_DRIVERS); do
		mkdir -p "$root$(dirname "$m")"
		cp -a "$m" "$root$m"
	done
	depmod -b "$root" "$VM_KVER" || { rm -rf "$tmp"; return 1; }
	install -m 0755 "$AQ_VM_DIR/guest/init" "$root/sbin/aqvm-init"
	# Users for permission checks: aqu and aqv (plain), aqw (primary group 0),
	# aqu also in group aqshare.
	chroot "$root" sh -e -c '
		groupadd -g 1100 aqshare
		useradd -m -u 1000 -U -G aqshare -s /bin/sh aqu
		useradd -m -u 1001 -U -s /bin/sh aqv
		useradd -m -u 1002 -g 0 -s /bin/sh aqw
		echo aqvm >/etc/hostname' || { rm -rf "$tmp"; return 1; }
	vm_initramfs "$root" "$tmp/initrd.gz" || { rm -rf "$tmp"; return 1; }
	cp "/boot/vmlinuz-$VM_KVER" "$tmp/vmlinuz"
	vm_vmlinux "$tmp/vmlinuz" "$tmp/vmlinux" || vm_log "no PVH kernel: booting the compressed one"
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
	# Room to spare: writes are discarded anyway (the disk is a snapshot).
	size=$(($(du -sm "$root" | cut -f1) * 5 / 4 + 64))
	if ! mke2fs -q -t ext4 -O ^has_journal -L aqvm -d "$root" "$tmp/rootfs.img" "${size}M"; then
		rm -rf "$tmp"
		return 1
	fi
	rm -rf "$root"
	echo "$(($(date +%s) - t0))" >"$tmp/build-seconds"
	: >"$tmp/complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	# Images of older recipes are never used again.
	for old in "$AQ_VM_CACHE"/image-*; do
		[ "$old" = "$dir" ] || rm -rf "$old"
	done
	vm_log "built in $(cat "$dir/build-seconds") s ($size MiB root)"
}

# vm_vmlinux BZIMAGE OUT: the uncompressed kernel (an ELF with a PVH entry,
# which QEMU boots directly). Under TCG decompressing the kernel in the guest
# takes about 4 s of every boot; doing it once here saves them.
vm_vmlinux() {
	python3 - "$1" "$2" <<'PY' || { rm -f "$2"; return 1; }
import lzma, sys
b = open(sys.argv[1], "rb").read()
i = b.find(b"\xfd7zXZ\x00")
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(b[i:]) if i >= 0 else b""
if elf[:4] != b"\x7fELF" or b"Xen\x00" not in elf:
    sys.exit(1)
open(sys.argv[2], "wb").write(elf)
PY
}

# vm_moddeps MODULE...: the .ko files MODULE needs, dependencies first.
vm_moddeps() {
	modprobe -S "$VM_KVER" -a --show-depends "$@" | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# vm_initramfs ROOT OUT: a gzip'd cpio with ROOT's static busybox, an /init
# and the modules that mounting the root disk needs.
vm_initramfs() {
	local root=$1 out=$2 ir m
	ir=$(dirname "$out")/initramfs
	mkdir -p "$ir/bin" "$ir/mods"
	cp "$root/bin/busybox" "$ir/bin/busybox"
	install -m 0755 "$AQ_VM_DIR/guest/initramfs-init" "$ir/init"
	: >"$ir/modules.list"
	for m in $(vm_moddeps $AQ_VM_BOOTMODS); do
		cp "$m" "$ir/mods/"
		basename "$m" >>"$ir/modules.list"
	done
	(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) >"$out" || return 1
	rm -rf "$ir"
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
	qemu-system-x86_64 -machine "pc,accel=$accel" -cpu "$cpu" -smp "${AQ_VM_SMP:-2}" -m "${AQ_VM_MEM:-1536}" \
		-nodefaults -no-user-config -display none -vga none -no-reboot -monitor none \
		-serial "file:$share/console.log" \
		-kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
		-append "console=ttyS0 panic=-1 quiet aqvm.ip=$ip aqvm.gw=$gw aqvm.timeout=$timeout" \
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
