#!/usr/bin/python3
# relay.py HOST PORT: join stdin/stdout to a TCP connection to HOST:PORT until
# both sides are done. QEMU user networking's guestfwd runs it once per guest
# connection ("guestfwd=tcp:10.0.2.100:111-cmd:/usr/bin/python3 relay.py
# 127.0.0.1 P"), so a fixed guest address and port reach a host port: the
# NFSv3 suite sends the guest lock manager's portmapper queries (port 111) to
# the agent's NFS port, where PORTMAP answers for NLM (tests/e2e/test_vm_nfs3.sh).
import os
import select
import socket
import sys


def write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


def main():
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    watch = [0, s.fileno()]
    while s.fileno() in watch:
        ready, _, _ = select.select(watch, [], [])
        if 0 in ready:
            data = os.read(0, 1 << 16)
            if data:
                s.sendall(data)
            else:
                s.shutdown(socket.SHUT_WR)
                watch.remove(0)
        if s.fileno() in ready:
            data = s.recv(1 << 16)
            if not data:
                break
            write_all(1, data)


if __name__ == "__main__":
    try:
        main()
    except OSError:
        sys.exit(1)
