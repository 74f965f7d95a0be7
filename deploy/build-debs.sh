#!/usr/bin/env bash
# deploy/build-debs.sh [OUTDIR]: build the Debian packages aquiferd,
# aquifer-agent and aquifer from this source tree (deploy/debian is the
# packaging). The .debs land in OUTDIR (default deploy/debs). The build runs
# in a clean copy of the tracked and new source files, so a configured
# working tree does not leak into it. Installs missing build dependencies
# with apt-get when run as root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/deploy/debs}
mkdir -p "$out"
out=$(cd "$out" && pwd)

need="debhelper dpkg-dev fakeroot"
if [ "$(id -u)" = 0 ]; then
	bash "$top/deploy/deps.sh" build
	missing=()
	for p in $need; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
fi
command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
	{ echo "build-debs.sh: needs $need (apt-get install $need)" >&2; exit 1; }

version=$(sed -n 's/^AC_INIT(\[aquifer\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ -n "$version" ] || { echo "build-debs.sh: no version in configure.ac" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/aquifer-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/aquifer-$version
mkdir -p "$src"
# a checkout of its own (not a folder inside another repository's tree)
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	git -C "$top" ls-files -z --cached --others --exclude-standard | (cd "$top" && xargs -0 cp --parents -t "$src" 2>/dev/null || true)
else
	# no git (e.g. the pristine copy tests/run_all.sh builds from): copy the
	# sources without what autoreconf generated, so the package build starts
	# from the same state as a checkout
	(cd "$top" && tar --exclude=./deploy/debs --exclude='*.o' --exclude='*.a' --exclude=./configure \
		--exclude='Makefile.in' --exclude=./aclocal.m4 --exclude=./autom4te.cache --exclude=./build-aux \
		--exclude=./config.h.in --exclude='*~' -cf - .) | tar -C "$src" -xf -
	(cd "$src" && { [ ! -f Makefile ] || make -s distclean >/dev/null 2>&1 || true; })
fi
# deleted-but-tracked files are skipped by cp; the packaging goes to debian/
cp -a "$top/deploy/debian" "$src/debian"
cat >"$src/debian/changelog" <<CL
aquifer ($version-1) unstable; urgency=medium

  * Built from the source tree by deploy/build-debs.sh.

 -- Aquifer developers <aquifer@localhost>  $(date -R)
CL
cd "$src"
export DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)"
if ! dpkg-buildpackage -b -uc -us >"$work/build.log" 2>&1; then
	tail -40 "$work/build.log" >&2
	echo "build-debs.sh: dpkg-buildpackage failed (log above)" >&2
	exit 1
fi
rm -f "$out"/*.deb
mv "$work"/*.deb "$out"/
ls "$out"/*.deb
