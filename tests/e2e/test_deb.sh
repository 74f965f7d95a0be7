#!/usr/bin/env bash
# test_deb.sh: build the .debs (deploy/build-debs.sh), install them into a
# fresh Debian 12 root (debootstrap --variant=minbase into this test's own
# folder; dpkg -i in a chroot, apt-get -f install for the dependencies) and
# run the programs there. Checks the maintainer scripts: the user aquifer,
# the state folders, the services installed but neither enabled nor started.
# The bootstrapped root is cached in ~/.cache/aquifer (AQ_CACHE) so reruns
# take seconds; the first run takes a minute or two more.
# Skips (77) when not root, or when debootstrap cannot reach a mirror.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "SKIP test_deb.sh: needs root (chroot, debootstrap)"
	exit 77
fi
export DEBIAN_FRONTEND=noninteractive
for t in debootstrap:debootstrap dh:debhelper fakeroot:fakeroot; do
	command -v "${t%%:*}" >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends "${t#*:}" >/dev/null 2>&1
done

# the mirror apt uses here (deb822 or one-line sources), not the security one
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
	awk '/^URIs:/ {u=$2} /^Suites:/ && u && / bookworm( |$)/ {print u; exit}
	     /^deb / && $3 == "bookworm" {print $2; exit}')
mirror=${mirror:-http://deb.debian.org/debian}
cache=${AQ_CACHE:-$HOME/.cache/aquifer}
tarball=$cache/debootstrap-bookworm-minbase-$(dpkg --print-architecture).tar.gz
root=$AQ_TMP/root
mkdir -p "$cache/apt-archives" "$root"
if [ ! -s "$tarball" ]; then
	echo "# debootstrap bookworm from $mirror (cached afterwards in $tarball)"
	if ! debootstrap --variant=minbase bookworm "$AQ_TMP/boot" "$mirror" >"$AQ_TMP/debootstrap.log" 2>&1; then
		if grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure|unable to fetch|Could not resolve' "$AQ_TMP/debootstrap.log"; then
			echo "SKIP test_deb.sh: debootstrap cannot reach $mirror:"
			tail -3 "$AQ_TMP/debootstrap.log"
			exit 77
		fi
		tail -20 "$AQ_TMP/debootstrap.log"
		aq_failed "debootstrap bookworm"
		aq_finish
	fi
	tar -C "$AQ_TMP/boot" -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
	rm -rf "$AQ_TMP/boot"
fi
ok "unpack the Debian 12 root" tar -C "$root" -xzf "$tarball"
ok "it is bookworm" grep -q 'VERSION_CODENAME=bookworm' "$root/etc/os-release"

out=$("$top/deploy/build-debs.sh" "$AQ_TMP/debs" 2>&1); rc=$?
expect_eq "build-debs.sh builds" 0 "$rc" || echo "$out" | tail -20
for p in aquiferd aquifer-agent aquifer; do
	ok "$p .deb built" test -s "$(ls "$AQ_TMP/debs/${p}_"*.deb 2>/dev/null | head -1)"
done
deps() { dpkg-deb -f "$(ls "$AQ_TMP/debs/$1_"*.deb | head -1)" Depends; }
ok "aquiferd depends on adduser and its libraries" bash -c "grep -q adduser <<<'$(deps aquiferd)' && grep -q libsqlite3 <<<'$(deps aquiferd)'"
ok "aquifer-agent depends on libsqlite3 (its cold-tier map) and libcurl" bash -c "grep -q libsqlite3 <<<'$(deps aquifer-agent)' && grep -q libcurl <<<'$(deps aquifer-agent)'"

# install inside the chroot; no service may start (policy-rc.d says so too,
# as on any chroot), the dependencies come from the mirror, cached
mkdir -p "$root/tmp/debs"
cp "$AQ_TMP"/debs/aquiferd_*.deb "$AQ_TMP"/debs/aquifer-agent_*.deb "$AQ_TMP"/debs/aquifer_*.deb "$root/tmp/debs/"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod +x "$root/usr/sbin/policy-rc.d"
cp "$cache"/apt-archives/*.deb "$root/var/cache/apt/archives/" 2>/dev/null
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_root sh -c 'dpkg -i /tmp/debs/*.deb' >"$AQ_TMP/dpkg.log" 2>&1 # fails on missing dependencies
out=$(in_root sh -c 'apt-get update -qq && apt-get -f install -y -qq --no-install-recommends' 2>&1); rc=$?
expect_eq "apt-get -f install in the chroot" 0 "$rc" || echo "$out" | tail -20
cp "$root"/var/cache/apt/archives/*.deb "$cache/apt-archives/" 2>/dev/null
for p in aquiferd aquifer-agent aquifer; do
	expect_eq "$p installed" "install ok installed" "$(in_root dpkg-query -W -f='${Status}' "$p" 2>&1)"
done
expect_eq "aquiferd --version in the chroot" "aquiferd 0.1.0" "$(in_root aquiferd --version 2>&1)"
expect_eq "aquifer-agent --version in the chroot" "aquifer-agent 0.1.0" "$(in_root aquifer-agent --version 2>&1)"
ok "aquifer --help in the chroot" bash -c "chroot '$root' aquifer --help >/dev/null"

# maintainer scripts
ok "user aquifer exists, a system user" bash -c "u=\$(chroot '$root' getent passwd aquifer) && [ \$(cut -d: -f3 <<<\"\$u\") -lt 1000 ]"
expect_eq "aquiferd state folder owner" "$(in_root id -u aquifer):$(in_root id -g aquifer) 750" \
	"$(stat -c '%u:%g %a' "$root/var/lib/aquifer/aquiferd" 2>&1)"
expect_eq "agent state folder" "0:0 700" "$(stat -c '%u:%g %a' "$root/var/lib/aquifer/agent" 2>&1)"
expect_eq "aquiferd.conf readable by the service only" "0:$(in_root id -g aquifer) 640" \
	"$(stat -c '%u:%g %a' "$root/etc/aquifer/aquiferd.conf" 2>&1)"
ok "units installed" test -s "$root/lib/systemd/system/aquiferd.service" -a -s "$root/lib/systemd/system/aquifer-agent.service"
ok "units not enabled (no start before configuration)" \
	test -z "$(ls "$root/etc/systemd/system/multi-user.target.wants/" 2>/dev/null | grep aquifer)"
ok "bash completion installed" test -s "$root/usr/share/bash-completion/completions/aquifer"
ok "man pages installed" test -s "$root/usr/share/man/man8/aquiferd.8.gz" -a -s "$root/usr/share/man/man1/aquifer.1.gz"
for p in aquiferd aquifer-agent; do
	ok "/etc/aquifer/$p.conf is a conffile" grep -qx "/etc/aquifer/$p.conf" "$root/var/lib/dpkg/info/$p.conffiles"
done

# the packaged config works as the service user: a token from the state folder
tok=$(in_root runuser -u aquifer -- aquiferd token --config /etc/aquifer/aquiferd.conf --role admin 2>"$AQ_TMP/tok.err" | tail -1)
ok "aquiferd token as user aquifer with the packaged config" test "${#tok}" -gt 40
[ "${#tok}" -gt 40 ] || cat "$AQ_TMP/tok.err"
ok "database owned by aquifer" test "$(stat -c %U "$root/var/lib/aquifer/aquiferd/aquifer.db")" = "$(stat -c %U "$root/var/lib/aquifer/aquiferd")"
# the packaged agent config is all comments: the agent refuses it with status 2 (no restart loop)
in_root aquifer-agent --config /etc/aquifer/aquifer-agent.conf >/dev/null 2>&1
expect_eq "unconfigured agent exits 2 (RestartPreventExitStatus)" 2 "$?"

# reinstall (the upgrade path of the maintainer scripts) and remove
out=$(in_root sh -c 'dpkg -i /tmp/debs/*.deb' 2>&1); rc=$?
expect_eq "dpkg -i again (upgrade path)" 0 "$rc" || echo "$out" | tail
out=$(in_root dpkg --purge aquifer-agent 2>&1); rc=$?
expect_eq "purge aquifer-agent" 0 "$rc" || echo "$out" | tail
ok "agent gone" test ! -e "$root/usr/bin/aquifer-agent" -a ! -e "$root/var/lib/aquifer/agent"
ok "aquiferd's state stays" test -s "$root/var/lib/aquifer/aquiferd/aquifer.db"
aq_finish
