#!/usr/bin/env bash
# test_install_agent.sh: deploy/install-agent.sh against a live aquiferd, in a
# temporary root (--root: no systemd, the agent runs as a plain process).
#   1. the first run installs, writes the config, enables the unit, joins;
#   2. a second run (even with a fresh join token) changes nothing: no file
#      rewritten, same agent process, no second join;
#   3. --uninstall removes program, unit and config, keeps shelf data.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
script=$top/deploy/install-agent.sh
if [ ! -x "$AQ_BUILDDIR/aquifer-agent" ]; then
	echo "test_install_agent.sh: no aquifer-agent in $AQ_BUILDDIR" >&2
	exit 99
fi

aq_start "$AQ_TMP/srv" || exit 1
TOK=$(aq_token "$AQ_TMP/srv" admin)
aq_req POST "/v1/locations?locationId=east" '{}'
expect_status 200 "create location east"
# the CLI mints the join token, as an admin would
join=$(AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" nodes join-token \
	--location=east --ttl=10m --format='value(token)')
ok "aquifer nodes join-token prints a token" test -n "$join"

root=$AQ_TMP/root shelf=$AQ_TMP/shelf
api=$(aq_pick_port) nfs=$(aq_pick_port)
args=(--server "$AQ_URL" --location east --shelf "$shelf" --node n1 --root "$root"
	--listen "127.0.0.1:$api" --nfs-listen "127.0.0.1:$nfs" --from-tree "$AQ_BUILDDIR")
# the tree's unit template lives in the source tree
[ -f "$AQ_BUILDDIR/deploy/systemd/aquifer-agent.service.in" ] || args=(--server "$AQ_URL" --location east \
	--shelf "$shelf" --node n1 --root "$root" --listen "127.0.0.1:$api" --nfs-listen "127.0.0.1:$nfs" --from-tree "$top" \
	--from-build "$AQ_BUILDDIR")

# every installed file under the root: path, mode, size, mtime, checksum. The
# agent's own runtime files (log, pid, intent.json) are its business; its
# credentials are in (a second join would rewrite them).
snapshot() {
	(cd "$root" && find . \( -path ./run -o -path ./var/log -o -path ./var/lib/aquifer/agent \) -prune -o -print0 |
		sort -z | xargs -0 stat -c '%n %a %s %Y' &&
		find . -type f ! -path './var/log/*' ! -path './run/*' \( ! -path './var/lib/aquifer/agent/*' -o \
			-name credentials.json \) -print0 | sort -z | xargs -0 stat -c '%n %a %s %Y' &&
		find . -type f ! -path './var/log/*' ! -path './run/*' ! -name intent.json -print0 | sort -z | xargs -0 sha256sum)
}
agentpid() { cat "$root/run/aquifer-agent.pid" 2>/dev/null; }
cleanup_agent() { local p; p=$(agentpid); [ -n "$p" ] && kill "$p" 2>/dev/null; true; }
trap 'cleanup_agent; aq_cleanup' EXIT

# 1. first run
out=$("$script" "${args[@]}" --token "$join" 2>&1); rc=$?
expect_eq "first run succeeds" 0 "$rc" || echo "$out"
pid1=$(agentpid)
[ -n "$pid1" ] && AQ_PIDS+=("$pid1")
ok "agent runs" kill -0 "${pid1:-0}"
ok "binary installed" test -x "$root/usr/local/bin/aquifer-agent"
ok "unit installed" grep -q '^ExecStart=/usr/local/bin/aquifer-agent --config /etc/aquifer/aquifer-agent.conf' \
	"$root/etc/systemd/system/aquifer-agent.service"
ok "unit enabled" test -L "$root/etc/systemd/system/multi-user.target.wants/aquifer-agent.service"
ok "shelf drop-in" grep -qx "ReadWritePaths=$shelf" "$root/etc/systemd/system/aquifer-agent.service.d/shelf.conf"
conf=$root/etc/aquifer/aquifer-agent.conf
expect_eq "config mode 0600" 600 "$(stat -c %a "$conf")"
ok "config names the node" grep -qx 'node = n1' "$conf"
ok "config has no spent token" bash -c "! grep -q '^token' '$conf'"
ok "credentials saved" test -s "$root/var/lib/aquifer/agent/credentials.json"
aq_agent_wait_ready n1
aq_req GET /v1/nodes/n1
expect_jq .location east "node n1 registered in east"
created=$(printf '%s' "$BODY" | jq -r .createTime)
aq_req GET /v1/nodes
expect_jq '.nodes | length' 1 "one node"

# 2. second run, with a fresh token: nothing changes
join2=$(AQUIFER_ENDPOINT=$AQ_URL AQUIFER_TOKEN=$TOK "$AQ_BUILDDIR/aquifer" nodes join-token \
	--location=east --format='value(token)')
before=$(snapshot)
sleep 1.1 # a rewrite would show in the mtimes
out=$("$script" "${args[@]}" --token "$join2" 2>&1); rc=$?
expect_eq "second run succeeds" 0 "$rc" || echo "$out"
ok "second run says nothing to do" grep -q 'nothing to do' <<<"$out"
ok "second run writes nothing" bash -c "! grep -q wrote <<<'$out'"
expect_eq "same agent process" "$pid1" "$(agentpid)"
after=$(snapshot)
if [ "$before" = "$after" ]; then aq_pass "root tree unchanged"; else
	aq_failed "root tree unchanged" "$(diff <(echo "$before") <(echo "$after") | head)"; fi
aq_req GET /v1/nodes
expect_jq '.nodes | length' 1 "still one node"
aq_req GET /v1/nodes/n1
expect_jq .createTime "$created" "node not re-created"

# 3. uninstall leaves shelf data alone
mkdir -p "$shelf/volumes/keep" && echo precious >"$shelf/volumes/keep/file"
out=$("$script" --uninstall --root "$root" 2>&1); rc=$?
expect_eq "uninstall succeeds" 0 "$rc" || echo "$out"
# stopped: gone, or a zombie its reaper has not collected yet
ok "agent stopped" bash -c "! kill -0 $pid1 2>/dev/null || grep -q '^[0-9]* (.*) Z' /proc/$pid1/stat"
ok "binary removed" test ! -e "$root/usr/local/bin/aquifer-agent"
ok "unit removed" test ! -e "$root/etc/systemd/system/aquifer-agent.service"
ok "unit disabled" test ! -L "$root/etc/systemd/system/multi-user.target.wants/aquifer-agent.service"
ok "config removed" test ! -e "$conf"
ok "credentials kept (no --purge)" test -s "$root/var/lib/aquifer/agent/credentials.json"
expect_eq "shelf data intact" precious "$(cat "$shelf/volumes/keep/file" 2>&1)"
out=$("$script" --purge --root "$root" 2>&1); rc=$?
expect_eq "purge succeeds" 0 "$rc"
ok "purge removes the state" test ! -e "$root/var/lib/aquifer/agent"
expect_eq "shelf data intact after purge" precious "$(cat "$shelf/volumes/keep/file" 2>&1)"
aq_finish
