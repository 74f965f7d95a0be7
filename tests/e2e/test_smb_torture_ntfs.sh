#!/usr/bin/env bash
# tests/e2e/test_smb_torture_ntfs.sh: test_smb_torture.sh on an NTFS-style
# volume (Windows descriptors stored and enforced, agent/smb/smb_acl_open.c)
# against smbd keeping NT ACLs the same way (vfs objects = acl_xattr, Debian's
# samba-vfs-modules): smb2.acls and smb2.sdread side by side, and the tests
# claimed for NTFS must pass on ours.
SMB_TORTURE_SECURITY=NTFS exec bash "$(dirname "$0")/test_smb_torture.sh" "$@"
