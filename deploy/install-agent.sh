#!/usr/bin/env bash
# deploy/install-agent.sh: put aquifer-agent on a storage node in one step:
# install it (from a built source tree or the Debian package), write
# /etc/aquifer/aquifer-agent.conf, enable and start the systemd unit, and wait
# until the node has joined aquiferd.
#
#   install-agent.sh --server URL --token JOIN_TOKEN --location LOC --shelf DIR
#                    [--node NAME] [--listen HOST:PORT] [--nfs-listen HOST:PORT]
#                    [--advertise HOST] [--throughput-mibps N] [--write-throughput-mibps N]
#                    [--ca-file FILE]
#                    [--deb FILE] [--from-tree DIR [--from-build DIR]] [--root DIR] [--no-systemd]
#   install-agent.sh --uninstall [--purge] [--root DIR] [--no-systemd]
#
# Idempotent: a second run with the same arguments changes nothing (no file
# is rewritten, the agent is not restarted, and it does not join again: the
# node's credentials live in its state folder, and the spent join token is
# taken out of the config once the node has joined). --uninstall stops and
# removes the agent, its unit and its config; it keeps the state folder
# (credentials) unless --purge, and never touches the shelf.
#
# --root DIR installs under DIR instead of / and runs the agent as a plain
# process (pid in DIR/run/aquifer-agent.pid, log in DIR/var/log/aquifer-agent.log)
# with the paths in its config under DIR: for tests and for trying it out.
# --no-systemd does the same on / (for hosts without systemd as init).
#
# --ca-file FILE: the CA that signed aquiferd's certificate (for a server
# whose certificate comes from the cluster CA: the caCertificate of the
# join-token answer, or ca.crt next to aquiferd's database), checked from the
# very first contact, so the join token only ever goes to the real aquiferd.
set -euo pipefail

prog=$(basename "$0")
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

server= token= location= shelf= node= listen= nfs_listen= advertise= tput= wtput= cafile=
root= deb= tree= build= uninstall=0 purge=0 nosystemd=0
while [ $# -gt 0 ]; do
	opt=$1 val=
	case $opt in
	--*=*) val=${opt#*=}; opt=${opt%%=*} ;;
	--uninstall | --purge | --no-systemd | -h | --help) ;;
	--*) [ $# -ge 2 ] || die "$opt needs a value"; val=$2; shift ;;
	esac
	shift
	case $opt in
	--server) server=$val ;;
	--token) token=$val ;;
	--location) location=$val ;;
	--shelf) shelf=$val ;;
	--node) node=$val ;;
	--listen) listen=$val ;;
	--nfs-listen) nfs_listen=$val ;;
	--advertise) advertise=$val ;;
	--throughput-mibps) tput=$val ;;
	--write-throughput-mibps) wtput=$val ;;
	--ca-file) cafile=$val ;;
	--root) root=$val ;;
	--deb) deb=$val ;;
	--from-tree) tree=$val ;;
	--from-build) build=$val ;; # where make put the binaries, when not in the tree (VPATH builds)
	--uninstall) uninstall=1 ;;
	--purge) uninstall=1; purge=1 ;;
	--no-systemd) nosystemd=1 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option $opt (see --help)" ;;
	esac
done

if [ -n "$root" ]; then
	mkdir -p "$root"
	root=$(cd "$root" && pwd)
	[ "$root" != / ] || root=
fi
[ -n "$root" ] && nosystemd=1
if [ -z "$root" ] && [ "$(id -u)" != 0 ]; then
	die "run as root (or use --root DIR)"
fi
use_systemd=0
if [ "$nosystemd" = 0 ]; then
	[ -d /run/systemd/system ] || die "systemd is not running here; use --no-systemd to run the agent as a plain process"
	use_systemd=1
fi

R=$root
conf=/etc/aquifer/aquifer-agent.conf
dropin=/etc/systemd/system/aquifer-agent.service.d/shelf.conf
state=/var/lib/aquifer/agent
pidfile=$R/run/aquifer-agent.pid
logfile=$R/var/log/aquifer-agent.log
changed=0

# Where the agent comes from: a built tree (this script's own by default),
# a .deb, or the package already installed.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$tree" ] && [ -z "$deb" ] && [ -x "$here/../aquifer-agent" ] && [ -f "$here/systemd/aquifer-agent.service.in" ]; then
	tree=$(cd "$here/.." && pwd)
fi
if [ -n "$tree" ]; then
	mode=tree bin=/usr/local/bin/aquifer-agent unit=/etc/systemd/system/aquifer-agent.service
else
	mode=package bin=/usr/bin/aquifer-agent unit=/lib/systemd/system/aquifer-agent.service
fi

say() { echo "$prog: $*"; }

# put PATH MODE: write stdin to $R$PATH unless it already holds exactly that.
put() {
	local dst=$R$1 tmp
	tmp=$(mktemp)
	cat >"$tmp"
	if [ -f "$dst" ] && cmp -s "$tmp" "$dst" && [ "$(stat -c %a "$dst")" = "$2" ]; then
		rm -f "$tmp"
		return 0
	fi
	mkdir -p "$(dirname "$dst")"
	install -m "$2" "$tmp" "$dst"
	rm -f "$tmp"
	say "wrote $dst"
	changed=1
}

# running PID: the process lives. A zombie does not: the agent was started
# with setsid and its reaper (init, or a supervisor's subreaper) may be slow.
running() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(sed 's/.*) \([A-Z]\).*/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# The running agent's pid (plain-process mode), or nothing.
agent_pid() {
	local pid exe
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
	exe=${exe% (deleted)} # an upgrade replaced the file: the running one shows as "(deleted)"
	# either install mode's binary (--uninstall does not know which one ran)
	if running "$pid" &&
		{ [ "$exe" = "$R$bin" ] || [ "$exe" = "$R/usr/local/bin/aquifer-agent" ] || [ "$exe" = "$R/usr/bin/aquifer-agent" ]; }; then
		echo "$pid"
	fi
}

stop_plain() {
	local pid
	pid=$(agent_pid)
	[ -n "$pid" ] || return 0
	kill -TERM "$pid"
	for _ in $(seq 100); do running "$pid" || break; sleep 0.1; done
	if running "$pid"; then
		kill -KILL "$pid"
		for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
	fi
	rm -f "$pidfile"
	say "stopped aquifer-agent (pid $pid)"
}

enabled_link=/etc/systemd/system/multi-user.target.wants/aquifer-agent.service

# ---------------------------------------------------------------- uninstall
if [ "$uninstall" = 1 ]; then
	if [ "$use_systemd" = 1 ]; then
		if systemctl cat aquifer-agent.service >/dev/null 2>&1; then
			systemctl disable --now aquifer-agent.service 2>/dev/null || true
			say "stopped and disabled aquifer-agent.service"
		fi
	else
		stop_plain
		if [ -L "$R$enabled_link" ]; then
			rm -f "$R$enabled_link"
			say "disabled aquifer-agent.service"
		fi
	fi
	if [ "$mode" = package ] && [ -z "$R" ] && dpkg-query -W -f='${Status}' aquifer-agent 2>/dev/null | grep -q 'ok installed'; then
		apt-get remove -y -qq aquifer-agent >/dev/null
		say "removed the aquifer-agent package"
	fi
	for f in /usr/local/bin/aquifer-agent /etc/systemd/system/aquifer-agent.service "$dropin" "$conf"; do
		if [ -e "$R$f" ]; then rm -f "$R$f"; say "removed $R$f"; fi
	done
	rmdir "$R$(dirname "$dropin")" 2>/dev/null || true
	[ "$use_systemd" = 1 ] && systemctl daemon-reload
	if [ "$purge" = 1 ]; then
		rm -rf "${R:?}$state"
		say "removed $R$state"
	elif [ -d "$R$state" ]; then
		say "kept $R$state (the node's credentials; --purge removes it)"
	fi
	say "the shelf is untouched; forget the node with: aquifer nodes drain NODE && aquifer nodes delete NODE"
	exit 0
fi

# ---------------------------------------------------------------- install
[ -n "$server" ] || die "--server URL is required"
[ -n "$location" ] || die "--location LOC is required"
[ -n "$shelf" ] || die "--shelf DIR is required"
case $server in http://* | https://*) ;; *) die "--server must be an http:// or https:// URL" ;; esac
case $shelf in /*) ;; *) die "--shelf must be an absolute path" ;; esac
[ -n "$node" ] || node=$(hostname -s)
if [ -z "$listen" ] || [ -z "$nfs_listen" ]; then
	ip=$(ip -o route get 192.0.2.1 2>/dev/null | sed -n 's/.* src \([^ ]*\).*/\1/p')
	[ -n "$ip" ] || ip=$(hostname -I 2>/dev/null | awk '{print $1}')
	[ -n "$ip" ] || die "cannot tell this node's address; pass --listen and --nfs-listen"
	[ -n "$listen" ] || listen=$ip:7070
	[ -n "$nfs_listen" ] || nfs_listen=$ip:2049
fi
joined() { [ -s "$R$state/credentials.json" ]; }
if ! joined && [ -z "$token" ]; then
	die "--token JOIN_TOKEN is required to join (aquifer nodes join-token --location $location)"
fi

# 1. the program and its unit
case $mode in
tree)
	build=${build:-$tree}
	[ -x "$build/aquifer-agent" ] || die "no built aquifer-agent in $build (run make)"
	put "$bin" 755 <"$build/aquifer-agent"
	sed -e 's|@bindir@|/usr/local/bin|g' -e 's|@sysconfdir@|/etc|g' -e 's|@localstatedir@|/var|g' \
		"$tree/deploy/systemd/aquifer-agent.service.in" | put "$unit" 644
	;;
package)
	if [ -n "$deb" ]; then
		[ -z "$R" ] || die "--deb cannot install into --root; use a chroot"
		want=$(dpkg-deb -f "$deb" Version)
		have=$(dpkg-query -W -f='${Version}' aquifer-agent 2>/dev/null || true)
		if [ "$want" != "$have" ]; then
			apt-get install -y -qq "$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")" >/dev/null
			say "installed aquifer-agent $want"
			changed=1
		fi
	fi
	[ -x "$R$bin" ] || die "aquifer-agent is not installed: pass --deb FILE, or run this script from a built tree"
	;;
esac
mkdir -p "$shelf" "$R$(dirname "$state")"

# 2. the config; the join token only until the node has joined
write_conf() {
	{
		echo "# aquifer-agent.conf: written by install-agent.sh; rerun it to change"
		echo "# this node, or edit and restart aquifer-agent. Keys: man aquifer-agent."
		echo "server = $server"
		echo "node = $node"
		echo "location = $location"
		echo "shelf = $shelf"
		echo "listen = $listen"
		echo "nfs-listen = $nfs_listen"
		echo "state-dir = $R$state"
		[ -z "$advertise" ] || echo "advertise = $advertise"
		[ -z "$tput" ] || echo "throughput-mibps = $tput"
		[ -z "$wtput" ] || echo "write-throughput-mibps = $wtput"
		[ -z "$cafile" ] || echo "ca-file = $cafile"
		joined || echo "token = $token"
	} | put "$conf" 600
}
write_conf
# the shelf must be writable under ProtectSystem=strict
printf '# written by install-agent.sh: the shelf of this node\n[Service]\nReadWritePaths=%s\n' "$shelf" |
	put "$dropin" 644
# refuse a bad config now, with the agent's own FILE:LINE: reason
"$R$bin" --config "$R$conf" --help >/dev/null || die "the agent refuses $R$conf"

# 3. enable and (re)start
if [ "$use_systemd" = 1 ]; then
	[ "$changed" = 0 ] || systemctl daemon-reload
	systemctl is-enabled -q aquifer-agent.service 2>/dev/null || {
		systemctl enable -q aquifer-agent.service
		say "enabled aquifer-agent.service"
	}
	if ! systemctl is-active -q aquifer-agent.service; then
		systemctl start aquifer-agent.service
		say "started aquifer-agent.service"
	elif [ "$changed" = 1 ]; then
		systemctl restart aquifer-agent.service
		say "restarted aquifer-agent.service"
	fi
else
	# enabling in a root tree is the WantedBy= link `systemctl --root enable`
	# would make; made here so it does not depend on systemd being installed
	if [ -n "$R" ] && [ ! -L "$R$enabled_link" ]; then
		mkdir -p "$R$(dirname "$enabled_link")"
		ln -s /etc/systemd/system/aquifer-agent.service "$R$enabled_link"
		say "enabled aquifer-agent.service in $R"
	fi
	pid=$(agent_pid)
	if [ -n "$pid" ] && [ "$changed" = 1 ]; then
		stop_plain
		pid=
	fi
	if [ -z "$pid" ]; then
		mkdir -p "$(dirname "$pidfile")" "$(dirname "$logfile")"
		setsid nohup "$R$bin" --config "$R$conf" >>"$logfile" 2>&1 </dev/null &
		pid=$!
		echo "$pid" >"$pidfile"
		say "started aquifer-agent (pid $pid, log $logfile)"
	fi
fi

# 4. wait for the join, then take the spent token out of the config
alive() {
	if [ "$use_systemd" = 1 ]; then
		! systemctl is-failed -q aquifer-agent.service
	else
		# not agent_pid: the pid just started may still be setsid or nohup
		# on its way to exec the agent
		running "$(cat "$pidfile" 2>/dev/null)"
	fi
}
for _ in $(seq 600); do
	joined && break
	alive || break
	sleep 0.1
done
if ! joined; then
	echo "$prog: aquifer-agent has not joined $server; its log:" >&2
	if [ "$use_systemd" = 1 ]; then
		journalctl -u aquifer-agent.service -n 20 --no-pager >&2 || true
	else
		tail -n 20 "$logfile" >&2 || true
	fi
	exit 1
fi
write_conf
if [ "$changed" = 0 ]; then
	say "nothing to do: node $node of $location is installed and joined"
else
	say "node $node of $location joined $server"
fi
