# tests/vm/image.sh: the guest image's recipe and its build (sourced by lib.sh).
#
# Everything the image is made of is here or in guest/init and
# guest/initramfs-init; vm_recipe_key hashes exactly these, so changing the
# recipe builds a new image and changing how the guest is run (lib.sh) does
# not.

# What the guest carries. Changing this list (or any recipe file) rebuilds it.
AQ_VM_PACKAGES="nfs-common cifs-utils fio python3 busybox-static kmod iproute2 procps netbase"
# Modules copied into the guest: whole trees (file systems, network, their
# crypto and library helpers), plus the dependency closure of these drivers.
AQ_VM_MODTREES="kernel/fs kernel/net kernel/lib kernel/crypto kernel/arch"
AQ_VM_DRIVERS="virtio_pci virtio_blk virtio_net virtio_console virtio_rng 9pnet_virtio"
# The initramfs loads only what mounting the root disk needs.
AQ_VM_BOOTMODS="virtio_pci virtio_blk crc32c_generic ext4"

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
		cat "$AQ_VM_DIR/image.sh" "$AQ_VM_DIR/guest/init" "$AQ_VM_DIR/guest/initramfs-init"
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
	if ! mke2fs -q -t ext4 -O ^has_journal -L aqvm -d "$root" "$tmp/rootfs.img" "${size}M" >>"$tmp/mmdebstrap.log" 2>&1; then
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
