#!/usr/bin/env python3
"""tests/vm/guest/ntsd.py: a file's Windows security descriptor through the
kernel CIFS client's xattrs, for tests/vm/guest/smb.sh (t_ntfs).

  ntsd.py get FILE          print OWNER:SID, GROUP:SID and one line per DACL
                            ACE, ACL:SID:TYPE/0xFLAGS/0xMASK (TYPE ALLOWED or
                            DENIED), as `getcifsacl -r` prints them
  ntsd.py add FILE SID MASK append an ALLOW ACE (no flags) to the DACL

It reads system.cifs_ntsd (owner, group and DACL: READ_CONTROL) and writes
system.cifs_acl (the DACL: WRITE_DAC). getcifsacl 7.0 reads
system.cifs_ntsd_full, which asks for the SACL too: that needs
ACCESS_SYSTEM_SECURITY, a privilege an SMB user does not hold (on Windows
and smbd neither), so getcifsacl fails for every such user.
"""
import os
import struct
import sys


def sid_str(b, off):
    rev, n = b[off], b[off + 1]
    auth = int.from_bytes(b[off + 2:off + 8], "big")
    subs = struct.unpack_from("<%dI" % n, b, off + 8)
    return "S-%d-%d" % (rev, auth) + "".join("-%d" % s for s in subs), 8 + 4 * n


def sid_bytes(s):
    p = s.split("-")
    subs = [int(x) for x in p[3:]]
    return bytes([int(p[1]), len(subs)]) + int(p[2]).to_bytes(6, "big") + struct.pack("<%dI" % len(subs), *subs)


def parse(b):
    _rev, _sbz, _ctl, o_owner, o_group, _o_sacl, o_dacl = struct.unpack_from("<BBHIIII", b, 0)
    out = {"owner": sid_str(b, o_owner)[0] if o_owner else "", "group": sid_str(b, o_group)[0] if o_group else ""}
    aces = []
    if o_dacl:
        _arev, _s1, _size, count, _s2 = struct.unpack_from("<BBHHH", b, o_dacl)
        off = o_dacl + 8
        for _ in range(count):
            typ, flags, size, mask = struct.unpack_from("<BBHI", b, off)
            aces.append((typ, flags, mask, b[off + 8:off + size]))
            off += size
    out["aces"] = aces
    return out


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    sd = os.getxattr(path, "system.cifs_ntsd")
    d = parse(sd)
    if cmd == "get":
        print("OWNER:" + d["owner"])
        print("GROUP:" + d["group"])
        for typ, flags, mask, sid in d["aces"]:
            name = {0: "ALLOWED", 1: "DENIED"}.get(typ, "TYPE%d" % typ)
            print("ACL:%s:%s/0x%x/0x%x" % (sid_str(sid, 0)[0], name, flags, mask))
        return 0
    if cmd == "add":
        aces = d["aces"] + [(0, 0, int(sys.argv[4], 0), sid_bytes(sys.argv[3]))]
        body = b"".join(struct.pack("<BBHI", t, f, 8 + len(s), m) + s for t, f, m, s in aces)
        acl = struct.pack("<BBHHH", 2, 0, 8 + len(body), len(aces), 0) + body
        # a self-relative descriptor with only a DACL (SE_DACL_PRESENT | SE_SELF_RELATIVE)
        new = struct.pack("<BBHIIII", 1, 0, 0x8004, 0, 0, 0, 20) + acl
        os.setxattr(path, "system.cifs_acl", new)
        return 0
    print("usage: ntsd.py get FILE | add FILE SID MASK", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
