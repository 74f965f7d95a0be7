#!/usr/bin/env bash
# test_vm_nfs3.sh: the Linux kernel NFSv3 client against aquifer-agent (issue
# 25): NFSV3 volumes mounted with `mount -t nfs -o vers=3,nolock,...` in the
# test guest; the suite itself is tests/vm/nfs_host.sh (shared with
# test_vm_nfs41.sh), the guest's checks tests/vm/guest/nfs3.sh.
NFSV=3
. "$(dirname "$0")/../vm/nfs_host.sh"
