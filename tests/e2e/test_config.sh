#!/usr/bin/env bash
# test_config.sh: config files at start-up, for aquiferd and aquifer-agent.
#   - an unknown key and a bad value each stop start-up with FILE:LINE: reason
#     (and a non-zero status, before anything listens);
#   - the installed examples (deploy/*.conf) are accepted with every key
#     uncommented: each documented key is a real one.
. "$(dirname "$0")/lib.sh"
AGENT=$AQ_BUILDDIR/aquifer-agent
d=$AQ_TMP

# start PROG CONF...: run it with the config; prints "rc|stderr"
start_with() {
	local prog=$1 conf=$2 err rc
	shift 2
	err=$(timeout 10 "$prog" --config "$conf" "$@" 2>&1 >/dev/null); rc=$?
	echo "$rc|$err"
}
# expect_refused DESC RESULT FILE LINE REASON-REGEX
expect_refused() {
	local rc=${2%%|*} err=${2#*|}
	if [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -qE "$3:$4: .*$5" <<<"$err"; then
		aq_pass "$1 ($err)"
	else
		aq_failed "$1" "status $rc, stderr: $err" "wanted: $3:$4: ...$5"
	fi
}

# ---- aquiferd
printf '# test\nlisten = 127.0.0.1:1\n\nlisnet = 127.0.0.1:2\n' >"$d/unknown.conf"
r=$(start_with "$AQUIFERD" "$d/unknown.conf" --db "$d/a.db")
expect_refused "aquiferd: unknown key" "$r" "$d/unknown.conf" 4 'unknown key "lisnet"'
printf 'db = %s\nworkers = lots\n' "$d/a.db" >"$d/badval.conf"
r=$(start_with "$AQUIFERD" "$d/badval.conf")
expect_refused "aquiferd: bad value" "$r" "$d/badval.conf" 2 'workers must be an integer.*"lots"'
printf 'math.premium.mibps_per_tib = fast\n' >"$d/badmath.conf"
r=$(start_with "$AQUIFERD" "$d/badmath.conf" --db "$d/a.db")
expect_refused "aquiferd: bad math value" "$r" "$d/badmath.conf" 1 'mibps_per_tib'
printf 'node-down-seconds = 0\n' >"$d/badnd.conf"
r=$(start_with "$AQUIFERD" "$d/badnd.conf" --db "$d/a.db")
expect_refused "aquiferd: value out of range" "$r" "$d/badnd.conf" 1 'node-down-seconds must be'
printf 'leader-lease-seconds = 1\n' >"$d/badlease.conf"
r=$(start_with "$AQUIFERD" "$d/badlease.conf" --db "$d/a.db")
expect_refused "aquiferd: a leader lease too short" "$r" "$d/badlease.conf" 1 'leader-lease-seconds must be an integer within 2\.\.600'
printf 'leader-lease-seconds = 4\nleader-renew-seconds = 4\n' >"$d/badrenew.conf"
r=$(start_with "$AQUIFERD" "$d/badrenew.conf" --db "$d/a.db")
rc=${r%%|*}
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'leader-renew-seconds (4) must be less than leader-lease-seconds (4)' <<<"$r" \
	&& aq_pass "aquiferd: a lease renewed no more often than it lasts is refused at start" \
	|| aq_failed "aquiferd: a lease renewed no more often than it lasts is refused at start" "$r"
printf 'header-timeout-seconds = 5\nmax-connections-per-ip = 0\n' >"$d/badlim.conf"
r=$(start_with "$AQUIFERD" "$d/badlim.conf" --db "$d/a.db")
expect_refused "aquiferd: a connection limit out of range" "$r" "$d/badlim.conf" 2 'max-connections-per-ip must be an integer within 1\.\.'
printf 'this is not a setting\n' >"$d/noeq.conf"
r=$(start_with "$AQUIFERD" "$d/noeq.conf" --db "$d/a.db")
expect_refused "aquiferd: line without '='" "$r" "$d/noeq.conf" 1 "expected 'key = value'"
r=$(start_with "$AQUIFERD" "$d/missing.conf" --db "$d/a.db")
ok "aquiferd: a missing config file is refused" grep -q "cannot open config file $d/missing.conf" <<<"$r"
ok "aquiferd: nothing was created by refused starts" test ! -e "$d/a.db"

# ---- aquifer-agent
base="server = http://127.0.0.1:1
node = n1
location = east
shelf = $d/shelf
listen = 127.0.0.1:0
nfs-listen = 127.0.0.1:0
state-dir = $d/state"
printf '%s\nshelve = /tmp\n' "$base" >"$d/agent-unknown.conf"
r=$(start_with "$AGENT" "$d/agent-unknown.conf")
expect_refused "aquifer-agent: unknown key" "$r" "$d/agent-unknown.conf" 8 'unknown key "shelve"'
printf '%s\nthroughput-mibps = -5\n' "$base" >"$d/agent-badval.conf"
r=$(start_with "$AGENT" "$d/agent-badval.conf")
expect_refused "aquifer-agent: bad value" "$r" "$d/agent-badval.conf" 8 'throughput-mibps must be a positive number.*"-5"'
printf '%s\nwrite-throughput-mibps = 10GB\n' "$base" >"$d/agent-badval2.conf"
r=$(start_with "$AGENT" "$d/agent-badval2.conf")
expect_refused "aquifer-agent: bad value with a unit" "$r" "$d/agent-badval2.conf" 8 'write-throughput-mibps'
printf 'node\n' >"$d/agent-noeq.conf"
r=$(start_with "$AGENT" "$d/agent-noeq.conf")
expect_refused "aquifer-agent: line without '='" "$r" "$d/agent-noeq.conf" 1 "expected 'key = value'"
ok "aquifer-agent: nothing was created by refused starts" test ! -e "$d/state" -a ! -e "$d/shelf"

# ---- the examples: every documented key is accepted
top=$(cd "$(dirname "$0")/../.." && pwd)
ex=$AQ_BUILDDIR/deploy/aquiferd.conf
[ -f "$ex" ] || ex=$top/deploy/aquiferd.conf.in
sed -E 's/^# ((listen|db|key-file|workers|node-down-seconds|tls-cert|tls-key|insecure-listen|max-connections|max-connections-per-ip|header-timeout-seconds|idle-timeout-seconds|leader-lease-seconds|leader-renew-seconds|math\.[a-z_.]+) = )/\1/; s|@[a-z]+@|'"$d"'|' "$ex" >"$d/ex-d.conf"
nkeys=$(grep -cE '^[a-z]' "$d/ex-d.conf")
ok "aquiferd example: all $nkeys keys uncommented (>= 60)" test "$nkeys" -ge 60
"$AQUIFERD" routes --config "$d/ex-d.conf" >/dev/null 2>"$d/err"
r="$?|$(cat "$d/err")"
expect_eq "aquiferd accepts its example with every key set" "0|" "$r"
ex=$AQ_BUILDDIR/deploy/aquifer-agent.conf
[ -f "$ex" ] || ex=$top/deploy/aquifer-agent.conf.in
sed -E 's/^# ([a-z-]+ = )/\1/; s|@[a-z]+@|'"$d"'|' "$ex" >"$d/ex-a.conf"
keys=$(grep -oE '^[a-z-]+' "$d/ex-a.conf" | sort | tr '\n' ' ')
expect_eq "agent example documents every option" \
	"advertise ca-file header-timeout-seconds idle-timeout-seconds listen location log-level max-connections max-connections-per-ip nfs-idle-timeout-seconds nfs-listen nfs-max-connections nfs-max-connections-per-ip nfs-record-timeout-seconds node server shelf state-dir throughput-mibps token write-throughput-mibps " "$keys"
r=$(start_with "$AGENT" "$d/ex-a.conf" --help)
expect_eq "aquifer-agent accepts its example with every key set" "0|" "$r"
aq_finish
