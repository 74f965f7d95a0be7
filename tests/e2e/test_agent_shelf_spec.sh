#!/usr/bin/env bash
# test_agent_shelf_spec.sh: --shelf nvmeof:... (issue 24) is checked before
# the agent makes or joins anything: each malformed spec is refused with a
# reason that names what is wrong, exit 2, and no state folder is made.
# (The backend itself runs in tests/e2e/test_vm_nvme_shelf.sh.)
. "$(dirname "$0")/lib.sh"

refused() { # refused WHAT SPEC EXPECTED-TEXT
	local out rc=0
	out=$("$AQUIFER_AGENT" --server http://127.0.0.1:1 --token t --node n --location l --shelf "$2" \
		--listen 127.0.0.1:0 --nfs-listen 127.0.0.1:0 --state-dir "$AQ_TMP/st" 2>&1) || rc=$?
	expect_eq "$1 is refused at start (exit 2)" 2 "$rc"
	expect_contains "$1: the reason names it" "$3" "$out"
	ok "$1: no state folder made" test ! -e "$AQ_TMP/st"
}
N=nqn.2026-01.org.aquifer:s1
refused "transport fc" "nvmeof:fc:10.0.0.1:4420:$N" "transport must be tcp or rdma"
refused "no port" "nvmeof:tcp:10.0.0.1" "nvmeof:TRANSPORT:ADDR:PORT:NQN expected"
refused "port 0" "nvmeof:tcp:10.0.0.1:0:$N" "the port must be 1..65535"
refused "an NQN without nqn." "nvmeof:rdma:10.0.0.1:4420:shelf1" "the NQN must start with nqn."
refused "an unclosed IPv6 bracket" "nvmeof:tcp:[fd00::1:4420:$N" "an IPv6 address goes in brackets"
refused "an unknown option" "nvmeof:tcp:10.0.0.1:4420:$N,multipath=on" 'unknown option "multipath=on"'
refused "fence=maybe" "nvmeof:tcp:10.0.0.1:4420:$N,fence=maybe" 'unknown option "fence=maybe" (fence=pr|lease|none'
refused "lease= without fence=lease" "nvmeof:tcp:10.0.0.1:4420:$N,lease=30" "lease= is the timeout of fence=lease"
refused "lease=2 (under 5 s)" "nvmeof:tcp:10.0.0.1:4420:$N,fence=lease,lease=2" "lease timeout in seconds, 5..600"
refused "a relative provision program" "nvmeof:tcp:10.0.0.1:4420:$N,provision=nvmet.sh" "absolute program path"
expect_contains "--help shows the NVMe-oF form" "nvmeof:tcp|rdma:ADDR:PORT:NQN[,fence=pr|lease|none]" "$("$AQUIFER_AGENT" --help 2>&1)"
aq_finish
