#!/usr/bin/env bash
# test_install.sh: `make install` into a DESTDIR honours --prefix,
# --sysconfdir and --localstatedir; the tree holds the binaries, config
# examples, man pages, bash completion and systemd units; the units pass
# `systemd-analyze verify` (installed from apt when missing, as root).
. "$(dirname "$0")/lib.sh"
B=$AQ_BUILDDIR
[ -f "$B/config.status" ] || { echo "test_install.sh: $B is not a configured build tree" >&2; exit 99; }
if ! command -v systemd-analyze >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null 2>&1
fi

dest=$AQ_TMP/dest
# the same paths a Debian package uses, none of them configure's defaults
vars=(prefix=/usr sysconfdir=/etc localstatedir=/var systemdsystemunitdir=/lib/systemd/system
	bashcompletiondir=/usr/share/bash-completion/completions)
# (the generated units and configs follow the paths given to make)
out=$(make -C "$B" -s install DESTDIR="$dest" "${vars[@]}" 2>&1); rc=$?
expect_eq "make install DESTDIR=... succeeds" 0 "$rc" || echo "$out" | tail -20
for f in usr/bin/aquiferd usr/bin/aquifer-agent usr/bin/aquifer; do
	ok "$f installed, executable" test -x "$dest/$f"
done
ok "aquiferd --version from the install" bash -c "\"$dest/usr/bin/aquiferd\" --version >/dev/null"
for f in etc/aquifer/aquiferd.conf etc/aquifer/aquifer-agent.conf usr/share/man/man8/aquiferd.8 \
	usr/share/man/man8/aquifer-agent.8 usr/share/man/man1/aquifer.1 \
	usr/share/bash-completion/completions/aquifer lib/systemd/system/aquiferd.service \
	lib/systemd/system/aquifer-agent.service usr/share/aquifer/install-agent.sh; do
	ok "$f installed" test -s "$dest/$f"
done
ok "state folder" test -d "$dest/var/lib/aquifer"
ok "nothing outside the prefixes" test -z "$(cd "$dest" && ls -A | grep -vxE 'usr|etc|var|lib')"

# the generated files name the installed paths, and nothing unsubstituted
unit=$dest/lib/systemd/system/aquiferd.service
ok "aquiferd unit: ExecStart under bindir" grep -qx 'ExecStart=/usr/bin/aquiferd serve --config /etc/aquifer/aquiferd.conf' "$unit"
ok "agent unit: ExecStart under bindir" grep -qx 'ExecStart=/usr/bin/aquifer-agent --config /etc/aquifer/aquifer-agent.conf' \
	"$dest/lib/systemd/system/aquifer-agent.service"
ok "aquiferd.conf: db under localstatedir" grep -qx 'db = /var/lib/aquifer/aquiferd/aquifer.db' "$dest/etc/aquifer/aquiferd.conf"
ok "no @var@ left" bash -c "! grep -rl '@[a-z]*@' '$dest/etc' '$dest/lib'"
ok "completion comes from the CLI" cmp -s <("$B/aquifer" completion bash) "$dest/usr/share/bash-completion/completions/aquifer"
ok "completion loads in bash" bash -c ". '$dest/usr/share/bash-completion/completions/aquifer' && complete -p aquifer >/dev/null"
for m in man8/aquiferd.8 man8/aquifer-agent.8 man1/aquifer.1; do
	if command -v man >/dev/null 2>&1; then
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$dest/usr/share/man/$m" 2>&1 >/dev/null)
		expect_eq "man page $m renders without warnings" "" "$w"
	fi
done

# hardening as the issue asks
a=$dest/lib/systemd/system/aquifer-agent.service
ok "aquiferd: dedicated user" grep -qx 'User=aquifer' "$unit"
ok "aquiferd: no capabilities" grep -qx 'CapabilityBoundingSet=' "$unit"
caps='CAP_DAC_READ_SEARCH CAP_SETUID CAP_SETGID CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE CAP_FSETID CAP_NET_BIND_SERVICE'
ok "agent: exactly the data path's capabilities" grep -qx "CapabilityBoundingSet=$caps" "$a"
ok "agent: ambient = bounding" grep -qx "AmbientCapabilities=$caps" "$a"
for u in "$unit" "$a"; do
	for k in Restart=on-failure NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes ProtectHome=yes; do
		ok "$(basename "$u"): $k" grep -qx "$k" "$u"
	done
	ok "$(basename "$u"): state in /var/lib/aquifer" grep -qE '^StateDirectory=aquifer/' "$u"
	ok "$(basename "$u"): logs to the journal (no StandardOutput=file)" bash -c "! grep -q '^Standard\(Output\|Error\)=' '$u'"
done

# systemd-analyze verify, in a root holding the install plus the host's units
# (for the targets the units order against)
if command -v systemd-analyze >/dev/null 2>&1; then
	v=$AQ_TMP/verify
	mkdir -p "$v/lib/systemd"
	cp -a "$dest/." "$v/"
	cp -a /lib/systemd/system/*.target "$v/lib/systemd/system/" 2>/dev/null
	out=$(systemd-analyze verify --man=no --root="$v" /lib/systemd/system/aquiferd.service \
		/lib/systemd/system/aquifer-agent.service 2>&1); rc=$?
	expect_eq "systemd-analyze verify: status" 0 "$rc"
	expect_eq "systemd-analyze verify: no complaint" "" "$out"
	# and it does catch a broken unit (the check is real)
	echo 'ExecStart=/usr/bin/nonexistent' >>"$v/lib/systemd/system/aquiferd.service"
	out=$(systemd-analyze verify --man=no --root="$v" /lib/systemd/system/aquiferd.service 2>&1)
	ok "systemd-analyze verify catches a broken unit" test -n "$out"
else
	echo "SKIP: systemd-analyze not available (apt-get install systemd)"
fi

# a second install keeps an edited config; uninstall removes only unchanged ones
echo 'workers = 8' >>"$dest/etc/aquifer/aquiferd.conf"
make -C "$B" -s install DESTDIR="$dest" "${vars[@]}" >/dev/null 2>&1
ok "make install keeps an edited config" grep -qx 'workers = 8' "$dest/etc/aquifer/aquiferd.conf"
make -C "$B" -s uninstall DESTDIR="$dest" "${vars[@]}" >/dev/null 2>&1
ok "uninstall removes the binaries" test ! -e "$dest/usr/bin/aquiferd"
ok "uninstall keeps the edited config" test -f "$dest/etc/aquifer/aquiferd.conf"
ok "uninstall removes the unchanged config" test ! -e "$dest/etc/aquifer/aquifer-agent.conf"

# --prefix as configured (no overrides): everything under it
dest2=$AQ_TMP/dest2
make -C "$B" -s install DESTDIR="$dest2" >/dev/null 2>&1
prefix=$(sed -n 's/^prefix = //p' "$B/Makefile")
ok "default install under $prefix" test -x "$dest2$prefix/bin/aquifer-agent" -a -s "$dest2$prefix/lib/systemd/system/aquifer-agent.service"
ok "its unit names $prefix/bin" grep -q "^ExecStart=$prefix/bin/aquifer-agent" "$dest2$prefix/lib/systemd/system/aquifer-agent.service"
aq_finish
