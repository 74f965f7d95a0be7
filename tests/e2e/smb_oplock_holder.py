#!/usr/bin/python3
"""smb_oplock_holder: a real SMB client (impacket, Debian python3-impacket) that
holds a BATCH oplock for test_smb_nfs_break.sh.

usage: smb_oplock_holder.py PORT SHARE USER PASSWORD NAME ACK_DELAY

Opens NAME on //127.0.0.1/SHARE asking for a BATCH oplock (SMB 3.0, signed),
prints "HELD", waits for the server's OPLOCK_BREAK notification and prints
"BREAK <level> <time>", then acknowledges it ACK_DELAY seconds later (with the
level it was broken to) and prints "ACKED <status> <time>"; a negative
ACK_DELAY never acknowledges (the server's break timeout must let the breaker
go), and the holder just waits 30 s. Then it reads the file's first bytes
through its handle ("READ <bytes>") and closes. Every line is flushed.
"""
import struct
import sys
import time

from impacket import smb3structs as s3
from impacket.smbconnection import SMBConnection


def say(*words):
    print(*words, flush=True)


def main():
    port, share, user, password, name, delay = sys.argv[1:7]
    delay = float(delay)
    conn = SMBConnection("127.0.0.1", "127.0.0.1", sess_port=int(port), preferredDialect=s3.SMB2_DIALECT_30)
    conn.login(user, password)
    tid = conn.connectTree(share)
    smb = conn.getSMBServer()
    fid = smb.create(tid, name, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                     s3.FILE_SHARE_READ | s3.FILE_SHARE_WRITE | s3.FILE_SHARE_DELETE,
                     s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0, oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH)
    say("HELD")
    brk = smb.recvSMB(0xFFFFFFFFFFFFFFFF)
    if brk["Command"] != s3.SMB2_OPLOCK_BREAK:
        say("UNEXPECTED", brk["Command"])
        return 1
    level = brk["Data"][2]
    say("BREAK", level, "%.3f" % time.time())
    if delay < 0:
        time.sleep(30)
        return 0
    time.sleep(delay)
    ack = s3.SMB2Packet()
    ack["Command"] = s3.SMB2_OPLOCK_BREAK
    ack["TreeID"] = tid
    ack["Data"] = struct.pack("<HBBI", 24, level, 0, 0) + fid
    t = time.time()
    rsp = smb.recvSMB(smb.sendSMB(ack))
    say("ACKED", "0x%08x" % rsp["Status"], "%.3f" % t)
    time.sleep(0.5)
    say("READ", smb.read(tid, fid, 0, 3).decode("ascii", "replace"))
    smb.close(tid, fid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
