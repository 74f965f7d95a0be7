#!/usr/bin/env bash
# tests/e2e/test_readme.sh: every command README.md and cli/README.md show works as written.
#
# Each fenced block of the two files carries a marker on the line above it:
#   <!-- test: run -->            run it, in order, in one working folder;
#   <!-- test: run last -->       run it after every other block (stopping the quickstart);
#   <!-- test: skip (why) -->     not run; counted, and the count must be AQ_README_SKIPS;
#   <!-- test: synopsis (...) --> usage lines: every --flag of a program's line is in its --help.
# A block without a marker fails the test, so nothing is skipped silently.
#
# The working folder looks like the top of a built tree: deploy/ (the source's),
# ./aquiferd, ./aquifer-agent, ./aquifer (this build's), and `aquifer` on PATH.
# The quickstart block runs deploy/quickstart.sh with AQ_BINDIR (nothing installed or built)
# and AQ_PORT, AQ_AGENT_PORT, AQ_NFS_PORT set to free ports; in every block the quickstart's
# default ports (8080, 8081, 20490) are replaced with those, as a user who set them would.
# Each block runs under `bash -e`: every command in it must exit 0. Blocks of cli/README.md
# start with `source run/env`, as its Examples paragraph says. Key outputs are checked too.
. "$(dirname "$0")/lib.sh"

# The skip markers there are today; adding one means changing this figure, on purpose.
AQ_README_SKIPS=2

command -v nfs-ls >/dev/null || { echo "nfs-ls (libnfs-utils) is required" >&2; exit 99; }
AQ_RECORD=0 # the blocks talk to aquiferd with curl and the CLI, not aq_req

TOP=$AQ_TMP/top
mkdir -p "$TOP" "$AQ_TMP/bin" "$AQ_TMP/config" "$AQ_TMP/blocks"
ln -s "$AQ_SRC/deploy" "$TOP/deploy"
for p in aquiferd aquifer-agent aquifer; do ln -s "$AQ_BUILDDIR/$p" "$TOP/$p"; done
ln -s "$AQ_BUILDDIR/aquifer" "$AQ_TMP/bin/aquifer"

PORT=$(aq_pick_port)
AGENT_PORT=$(aq_pick_port)
NFS_PORT=$(aq_pick_port)
SMB_PORT=$(aq_pick_port)
while [ "$AGENT_PORT" = "$PORT" ]; do AGENT_PORT=$(aq_pick_port); done
while [ "$NFS_PORT" = "$PORT" ] || [ "$NFS_PORT" = "$AGENT_PORT" ]; do NFS_PORT=$(aq_pick_port); done
while [ "$SMB_PORT" = "$PORT" ] || [ "$SMB_PORT" = "$AGENT_PORT" ] || [ "$SMB_PORT" = "$NFS_PORT" ]; do
	SMB_PORT=$(aq_pick_port)
done

# extract FILE: one block per file BLOCKS/NNN.sh, and a line "NNN<TAB>FILE:LINE<TAB>MARKER"
# in BLOCKS/index per fenced block (MARKER is "none" without one).
N=0
extract() {
	awk -v file="$1" -v dir="$AQ_TMP/blocks" -v start="$N" '
		BEGIN { n = start }
		!inb && /^```/ {
			n++; inb = 1; out = sprintf("%s/%03d.sh", dir, n)
			printf "" >out
			m = (prev ~ /^<!-- test: .* -->$/) ? prev : "none"
			sub(/^<!-- test: /, "", m); sub(/ -->$/, "", m)
			printf "%03d\t%s:%d\t%s\n", n, file, NR, m >>(dir "/index")
			next
		}
		inb && /^```/ { inb = 0; close(out); next }
		inb { print >>out; next }
		NF { prev = $0 }
	' "$AQ_SRC/$1"
	N=$(wc -l <"$AQ_TMP/blocks/index")
}
extract README.md
extract cli/README.md

# run_block NNN WHERE: run the block in TOP; its output is BLOCKS/NNN.out.
run_block() {
	local f=$AQ_TMP/blocks/$1.sh pre=
	case $2 in cli/README.md:*) pre='source run/env' ;; esac
	sed -i -e "s/\b8080\b/$PORT/g" -e "s/\b8081\b/$AGENT_PORT/g" -e "s/\b20490\b/$NFS_PORT/g" -e "s/\b4450\b/$SMB_PORT/g" "$f"
	if (cd "$TOP" && env PATH="$AQ_TMP/bin:$PATH" XDG_CONFIG_HOME="$AQ_TMP/config" \
		AQ_BINDIR="$AQ_BUILDDIR" AQ_PORT="$PORT" AQ_AGENT_PORT="$AGENT_PORT" AQ_NFS_PORT="$NFS_PORT" AQ_SMB_PORT="$SMB_PORT" \
		bash -e -o pipefail -c "$pre
$(cat "$f")" </dev/null >"$AQ_TMP/blocks/$1.out" 2>&1); then
		aq_pass "$2 runs"
	else
		aq_failed "$2 runs (exit $?)" "$(sed 's/^/  > /' "$f" | head -20)" "output:" "$(tail -15 "$AQ_TMP/blocks/$1.out")"
	fi
}

# out_has NNN DESC REGEX: the block's output matches REGEX (grep -E).
out_has() {
	if grep -qE -- "$3" "$AQ_TMP/blocks/$1.out"; then aq_pass "$2"; else
		aq_failed "$2" "no line matches: $3" "$(tail -15 "$AQ_TMP/blocks/$1.out")"
	fi
}

# synopsis NNN WHERE: every --flag on a line that starts with a program is in its --help.
synopsis() {
	local line prog flag missing=
	while IFS= read -r line; do
		prog=${line%% *}
		case $prog in aquiferd | aquifer-agent | aquifer) ;; *) continue ;; esac
		for flag in $(printf '%s\n' "$line" | grep -oE -- '--[a-z][a-z0-9-]*'); do
			"$AQ_BUILDDIR/$prog" --help 2>&1 | grep -qE -- "$flag\b" || missing="$missing $prog:$flag"
		done
	done <"$AQ_TMP/blocks/$1.sh"
	expect_eq "$2: every flag of the synopsis is in the program's --help" "" "$missing"
}

LAST=()
SKIPS=0
RUNS=0
while IFS=$'\t' read -r n where marker; do
	case $marker in
	run | 'run ('*)
		RUNS=$((RUNS + 1))
		run_block "$n" "$where"
		if grep -q 'deploy/quickstart.sh' "$AQ_TMP/blocks/$n.sh"; then
			QS=$n
			# the quickstart's processes are this test's: stopped by PID at the end
			for p in aquiferd agent; do
				[ -f "$TOP/run/$p.pid" ] && AQ_PIDS+=("$(cat "$TOP/run/$p.pid")")
			done
		fi
		;;
	'run last') LAST+=("$n $where") ;;
	'skip ('*')') SKIPS=$((SKIPS + 1)); echo "# skipped $where: ${marker#skip }" ;;
	'synopsis'*) synopsis "$n" "$where" ;;
	*) aq_failed "$where: the block has a test marker (<!-- test: run|run last|skip (why)|synopsis -->)" "got: $marker" ;;
	esac
done <"$AQ_TMP/blocks/index"
expect_eq "skipped blocks, each with its reason (AQ_README_SKIPS)" "$AQ_README_SKIPS" "$SKIPS"

# What the key blocks say they do.
ok "a block runs the quickstart" test -n "${QS:-}"
QS=${QS:-000}
out_has "$QS" "the quickstart says it is up with volume demo READY" \
	"^Aquifer is up: https://127.0.0.1:$PORT .*volume demo is READY"
out_has "$QS" "the quickstart prints the mount instructions" \
	"sudo mount -t nfs -o .*port=$NFS_PORT,.* 127.0.0.1:/demo /mnt/demo"
out_has "$QS" "the quickstart says the SMB volume demo-smb is READY" "^SMB volume demo-smb is READY"
out_has "$QS" "the quickstart prints the smbclient command" \
	"smbclient //127.0.0.1/demo-smb -p $SMB_PORT -U demo%"
if command -v smbclient >/dev/null; then
	printf 'hello over SMB' >"$AQ_TMP/smb.txt"
	ok "the printed smbclient command writes to demo-smb" timeout 60 smbclient //127.0.0.1/demo-smb -p "$SMB_PORT" \
		-U "demo%$(cat "$TOP/run/smb-password")" -m SMB3 -c "put $AQ_TMP/smb.txt hello.txt"
	got=$(timeout 60 smbclient //127.0.0.1/demo-smb -p "$SMB_PORT" -U "demo%$(cat "$TOP/run/smb-password")" -m SMB3 \
		-c "get hello.txt $AQ_TMP/smb.back" >/dev/null 2>&1; cat "$AQ_TMP/smb.back" 2>/dev/null)
	expect_eq "and reads it back" "hello over SMB" "$got"
else
	aq_failed "smbclient is installed (deploy/deps.sh build installs it)"
fi
out_has "$QS" "the quickstart prints the dashboard's URL" "^Dashboard: https://127.0.0.1:$PORT/ui/#token=."
DASH=$(grep -oE "https://127.0.0.1:$PORT/ui/#token=[^ ]+" "$AQ_TMP/blocks/$QS.out" | head -n 1)
DTOK=${DASH#*#token=}
ok "the dashboard's page is served" curl -fsS -o /dev/null --cacert "$TOP/run/ca.crt" "${DASH%%#*}"
ok "the dashboard URL's token reads the API" curl -fsS -o /dev/null --cacert "$TOP/run/ca.crt" \
	-H "Authorization: Bearer $DTOK" "https://127.0.0.1:$PORT/v1/projects/demo/locations/local/volumes/demo"
for f in "$AQ_TMP"/blocks/*.sh; do
	n=$(basename "$f" .sh)
	grep -q '^source run/env' "$f" && grep -q 'healthz' "$f" && AFTER=$n
	grep -q 'validateOnly=true' "$f" && API=$n
	grep -q 'aquifer volumes create v1' "$f" && CLI=$n
done
out_has "${AFTER:-000}" "volumes list shows demo" '^demo '
out_has "${AFTER:-000}" "describe prints the mount command" "^sudo mount -t nfs .*127.0.0.1:/demo /mnt/demo"
out_has "${AFTER:-000}" "healthz answers ok" '"status": ?"ok"'
out_has "${API:-000}" "the validateOnly create shows throughputMibps 93.75" '"throughputMibps": ?93.75'
out_has "${CLI:-000}" "the table's VOLUME column lists v1" '^v1 +500 +[0-9]{4}-[0-9]{2}-[0-9]{2}'
out_has "${CLI:-000}" "--uri prints resource URIs" "^https://127.0.0.1:$PORT/v1/projects/demo/locations/local/volumes/v1$"
out_has "${CLI:-000}" "libnfsUrl of v1" "nfs://127.0.0.1/v1\?version=3&nfsport=$NFS_PORT&mountport=$NFS_PORT"
out_has "${CLI:-000}" "labels after update and remove" '^labels\.env: +test$'
ok "team was removed" sh -c "! grep -qE '^labels\.team:' '$AQ_TMP/blocks/${CLI:-000}.out'"
out_has "${CLI:-000}" "the join token's install command" 'aquifer-agent|install-agent'

# The Prometheus example scrapes the TLS quickstart as it is: scheme https, the
# cluster CA, the metrics token; only the paths and ports are this test's.
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
	"$AQ_BUILDDIR/aquiferd" token --db "$TOP/run/aquifer.db" --role metrics --subject prometheus 2>/dev/null |
		tail -n 1 >"$AQ_TMP/metrics.token"
	sed -e "s|/etc/aquifer/ca.crt|$TOP/run/ca.crt|" -e "s|/etc/prometheus/aquifer-metrics.token|$AQ_TMP/metrics.token|" \
		-e "s/\b8080\b/$PORT/g" -e "s/\b8081\b/$AGENT_PORT/g" -e "s|scrape_interval: 15s|scrape_interval: 1s|" \
		"$AQ_SRC/deploy/prometheus/prometheus.yml" >"$AQ_TMP/prometheus.yml"
	ok "promtool check config accepts deploy/prometheus/prometheus.yml" bash -c 'promtool check config "$1" >/dev/null' _ \
		"$AQ_TMP/prometheus.yml"
	expect_eq "Prometheus with deploy/prometheus/prometheus.yml scrapes aquiferd and the agent over TLS" \
		"aquifer-agent=up aquiferd=up" "$(aq_prom_targets "$AQ_TMP/prometheus.yml" "aquifer-agent=up aquiferd=up")"
else
	aq_failed "promtool and prometheus are installed (deploy/deps.sh test installs prometheus)"
fi

# The Terraform example: formatted, and its defaults are the quickstart's
# endpoint (https), project and location, which the cluster CA alone verifies
# (what SSL_CERT_FILE=run/ca.crt gives the provider).
TF=$AQ_SRC/deploy/terraform/main.tf
tf_default() { awk -v v="$1" '$0 ~ "^variable \"" v "\"" { f = 1 } f && /default/ { gsub(/.*= *"|".*/, ""); print; exit }' "$TF"; }
if command -v terraform >/dev/null; then
	ok "terraform fmt: deploy/terraform/main.tf is formatted" bash -c 'terraform fmt -check "$1" 2>/dev/null' _ "$TF"
fi
expect_eq "main.tf's endpoint is the quickstart's" "https://127.0.0.1:8080/v1/" "$(tf_default aquifer_endpoint)"
expect_eq "main.tf's project and location are the quickstart's" "demo local" "$(tf_default project) $(tf_default location)"
ED=$("$AQ_BUILDDIR/aquiferd" token --db "$TOP/run/aquifer.db" --role editor --project demo 2>/dev/null | tail -n 1)
EP=$(tf_default aquifer_endpoint | sed "s/\b8080\b/$PORT/")
ok "the endpoint answers the provider's pool list, verified with the cluster CA only" \
	curl -fsS -o /dev/null --cacert "$TOP/run/ca.crt" -H "Authorization: Bearer $ED" \
	"${EP}projects/$(tf_default project)/locations/$(tf_default location)/storagePools"

# The stop block ends both processes.
for b in "${LAST[@]}"; do
	run_block $b
done
ok "a block stops the quickstart" test "${#LAST[@]}" -gt 0
for p in aquiferd agent; do
	pid=$(cat "$TOP/run/$p.pid" 2>/dev/null)
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	ok "the stop command ended $p" sh -c "! kill -0 '$pid' 2>/dev/null"
done
# ASan builds: neither quickstart process reported anything
aq_sanitizer_clean "$TOP/run"
ok "no sanitizer report in the quickstart agent's log" \
	sh -c "! grep -qE 'ERROR: (Address|Leak|Thread|Undefined)Sanitizer|runtime error:' '$TOP/run/agent.log'"
echo "# $N blocks: $RUNS run, ${#LAST[@]} run last, $SKIPS skipped"
aq_finish
