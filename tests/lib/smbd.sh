# tests/lib/smbd.sh: a throwaway Samba smbd beside the agent's SMB server
# (sourced after tests/e2e/lib.sh, not run), for the suites and benchmarks
# that run the same client against both (tests/e2e/test_smb_torture.sh,
# bench/frames/smb_read.sh).
#
# aq_smbd_start DIR PORT SHARE PATH PASSWORD READONLY [GLOBAL...]: writes
# DIR/smb.conf (smbd listens on 127.0.0.1:PORT only, keeps everything under
# DIR: passdb, locks, state, caches, logs; no netbios, no printers, no
# guests; each GLOBAL one more line of [global], e.g. "server signing =
# mandatory") with one share SHARE serving PATH ("read only = READONLY":
# yes or no), adds the Unix user nobody with PASSWORD to its passdb (smbd
# maps an SMB user onto a Unix account), and starts smbd in the foreground
# of its own session (smbd signals its whole process group when it stops)
# with its output in DIR/smbd.out. Its PID is appended to AQ_PIDS, so
# aq_cleanup stops it, and kept in AQ_SMBD_PID. Waits up to 10 s for PORT
# to listen; 0 when it does, 1 when it does not (the caller decides whether
# that fails it). SMBD is the binary (default: smbd on PATH, else
# /usr/sbin/smbd).

AQ_SMBD_PID=

aq_smbd_start() {
	local dir=$1 port=$2 share=$3 path=$4 pass=$5 ro=$6 g smbd=${SMBD:-$(command -v smbd || echo /usr/sbin/smbd)}
	shift 6
	mkdir -p "$dir"/{private,lock,state,cache,pid,ncalrpc} || return 1
	{
		cat <<EOF
[global]
	smb ports = $port
	interfaces = 127.0.0.1
	bind interfaces only = yes
	private dir = $dir/private
	lock directory = $dir/lock
	state directory = $dir/state
	cache directory = $dir/cache
	pid directory = $dir/pid
	ncalrpc dir = $dir/ncalrpc
	log file = $dir/log.%m
	passdb backend = tdbsam:$dir/private/passdb.tdb
	server role = standalone server
	disable netbios = yes
	load printers = no
	printcap name = /dev/null
	disable spoolss = yes
	map to guest = never
EOF
		for g in "$@"; do printf '\t%s\n' "$g"; done
		printf '[%s]\n\tpath = %s\n\tread only = %s\n' "$share" "$path" "$ro"
	} >"$dir/smb.conf" || return 1
	printf '%s\n%s\n' "$pass" "$pass" | smbpasswd -c "$dir/smb.conf" -s -a nobody >/dev/null 2>&1
	setsid "$smbd" -s "$dir/smb.conf" -F --no-process-group --debug-stdout >"$dir/smbd.out" 2>&1 &
	AQ_SMBD_PID=$!
	AQ_PIDS+=("$AQ_SMBD_PID")
	for _ in $(seq 100); do
		aq_port_free "$port" || return 0
		sleep 0.1
	done
	return 1
}
