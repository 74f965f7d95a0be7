# shellcheck shell=bash
# bench/nfs/lib.sh: what the NFS benchmarks (run.sh for NFSv3, vm41.sh for NFSv4.1) share,
# sourced (not run) after tests/e2e/lib.sh (aq_pick_port, AQ_PIDS; aq_cleanup stops what is
# started here).
#
#   bench_ganesha DIR v3|v41    NFS-Ganesha serving DIR/export
#   bench_report_section FILE NAME   a script's own section of a report, from stdin

# bench_ganesha DIR VARIANT: Debian's nfs-ganesha, VFS FSAL, serving DIR/export (made here) as
# /export on free ports of 127.0.0.1, its configuration and log in DIR; its rpcbind runs in a
# private network namespace, so nothing listens on the host's port 111. VARIANT v3: NFSv3 and
# v4, MOUNT through the pseudo path, no attribute cache (run.sh); v41: NFSv4 minor version 1
# only, AUTH_SYS (vm41.sh). Sets GANESHA_PORT, GANESHA_MNT_PORT and GANESHA_PID (both PIDs in
# AQ_PIDS); returns 1, the log's tail on stderr, when it did not start within 30 s.
bench_ganesha() {
	local dir=$1 core protos nfsv4 export_extra nlm rq
	case $2 in
	v3)
		core='Mount_Path_Pseudo = true;' protos='3, 4' nfsv4='' export_extra='Attr_Expiration_Time = 0;'
		;;
	v41)
		core='' protos='4' nfsv4=' Minor_Versions = 1;' export_extra='SecType = sys;'
		;;
	*)
		echo "bench_ganesha: no variant $2" >&2
		return 1
		;;
	esac
	mkdir -p "$dir/export"
	GANESHA_PORT=$(aq_pick_port) GANESHA_MNT_PORT=$(aq_pick_port) nlm=$(aq_pick_port) rq=$(aq_pick_port)
	{
		echo 'NFS_CORE_PARAM {'
		echo '    Bind_Addr = 127.0.0.1;'
		echo "    NFS_Port = $GANESHA_PORT;  MNT_Port = $GANESHA_MNT_PORT;  NLM_Port = $nlm;  Rquota_Port = $rq;"
		echo '    Enable_NLM = false;  Enable_RQUOTA = false;  Enable_UDP = false;'
		[ -n "$core" ] && echo "    $core"
		echo "    Protocols = $protos;"
		echo '    Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha;'
		echo '}'
		echo "NFSV4 { Graceless = true; RecoveryBackend = fs; Only_Numeric_Owners = true;$nfsv4 }"
		echo 'NFS_KRB5 { Active_krb5 = false; }'
		echo 'EXPORT {'
		echo "    Export_Id = 1; Path = $dir/export; Pseudo = /export;"
		echo "    Access_Type = RW; Squash = No_Root_Squash; Protocols = $protos; Transports = TCP;"
		echo "    $export_extra"
		echo '    FSAL { Name = VFS; }'
		echo '}'
		echo 'LOG { Default_Log_Level = EVENT; }'
	} >"$dir/ganesha.conf"
	unshare -n sh -c 'ip link set lo up; exec rpcbind -f' &
	AQ_PIDS+=("$!")
	sleep 0.5
	ganesha.nfsd -F -L "$dir/ganesha.log" -p "$dir/ganesha.pid" -f "$dir/ganesha.conf" &
	GANESHA_PID=$!
	AQ_PIDS+=("$GANESHA_PID")
	for _ in $(seq 300); do grep -q 'NFS SERVER INITIALIZED' "$dir/ganesha.log" 2>/dev/null && break; sleep 0.1; done
	grep -q 'NFS SERVER INITIALIZED' "$dir/ganesha.log" && return 0
	tail -5 "$dir/ganesha.log" >&2
	return 1
}

# bench_report_section FILE NAME: stdin becomes the section NAME of FILE, between the lines
# "<!-- NAME: begin -->" and "<!-- NAME: end -->": in place of that section when FILE has it,
# else appended (FILE made when missing). Everything else in FILE is kept, so scripts that
# share a report (and the notes written by hand around their sections) do not overwrite each
# other.
bench_report_section() {
	local file=$1 begin="<!-- $2: begin -->" end="<!-- $2: end -->" body
	body=$(mktemp) || return 1
	{
		echo "$begin"
		cat
		echo "$end"
	} >"$body"
	touch "$file"
	if grep -qxF "$begin" "$file" && grep -qxF "$end" "$file"; then
		awk -v b="$begin" -v e="$end" -v f="$body" '
			$0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
			$0 == e && skip { skip = 0; next }
			!skip' "$file" >"$file.new"
	else
		{
			cat "$file"
			[ -s "$file" ] && echo
			cat "$body"
		} >"$file.new"
	fi
	mv "$file.new" "$file"
	rm -f "$body"
}
