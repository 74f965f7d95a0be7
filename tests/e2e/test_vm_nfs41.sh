#!/usr/bin/env bash
# test_vm_nfs41.sh: the Linux kernel NFSv4.1 client against aquifer-agent
# (issue 19): NFSV4 volumes mounted with `mount -t nfs -o vers=4.1,...` in the
# test guest (agent/nfs4/ on the agent's one NFS port), the same checks as
# test_vm_nfs3.sh (tests/vm/nfs_host.sh, tests/vm/guest/nfs3.sh) but leaner
# under TCG: 16 MiB large files, a 2,000-file directory, 10 s of stress
# (AQ_VM_BIG_MIB, AQ_VM_MANY, AQ_VM_STRESS_SECS override them). Skipped in the
# ASan build (AQ_VM=0) as test_vm_nfs3.sh is.
NFSV=4.1
: "${AQ_VM_BIG_MIB:=16}" "${AQ_VM_MANY:=2000}" "${AQ_VM_STRESS_SECS:=10}"
export AQ_VM_BIG_MIB AQ_VM_MANY AQ_VM_STRESS_SECS
. "$(dirname "$0")/../vm/nfs_host.sh"
