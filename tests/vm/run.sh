#!/usr/bin/env bash
# tests/vm/run.sh: run one shell command as root in the test guest, by hand.
#
#   tests/vm/run.sh [--share DIR] [--timeout SECS] [--image] 'COMMAND'
#
# Builds the guest image if the cache has none for the current recipe, boots
# it, runs COMMAND with sh in the shared folder (the guest sees it as /aqvm,
# and the command's working directory), prints the guest's stdout and stderr,
# and exits with the command's status (124: not finished in time, 125: the
# guest did not boot). Without --share a temporary folder is used and removed,
# except its dmesg and console.log are kept when the command failed.
# --image only builds (or finds) the image and prints its files.
set -u
. "$(dirname "$0")/lib.sh"

share= timeout=1800 image_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--share) share=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--image) image_only=1; shift ;;
	--help|-h) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
miss=$(vm_missing)
[ -z "$miss" ] || { echo "run.sh: missing $miss (run deploy/deps.sh test)" >&2; exit 2; }
vm_image || exit 125
if [ $image_only = 1 ]; then
	printf 'kernel %s\ninitrd %s\nrootfs %s\n' "$VM_KERNEL" "$VM_INITRD" "$VM_ROOTFS"
	exit 0
fi
[ $# -gt 0 ] || { echo "run.sh: no command (see --help)" >&2; exit 2; }
tmp=
if [ -z "$share" ]; then
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/aqvm.XXXXXX")
	share=$tmp
fi
mkdir -p "$share"
trap 'vm_cleanup; [ -n "$tmp" ] && [ "${keep:-0}" = 0 ] && rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
printf '%s\n' "$*" >"$share/cmd"
vm_run "$share" "$timeout"
rc=$?
cat "$share/stdout" 2>/dev/null
cat "$share/stderr" 2>/dev/null >&2
if [ $rc -ne 0 ] && [ -n "$tmp" ]; then
	keep=1
	echo "run.sh: exit $rc; guest kernel log and console in $tmp" >&2
fi
exit $rc
