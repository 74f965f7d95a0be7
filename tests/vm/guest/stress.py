#!/usr/bin/env python3
"""tests/vm/guest/stress.py: concurrent writers and readers on an NFS mount,
every byte verified (run in the test guest by tests/vm/guest/nfs3.sh).

Phase 1, one shared file with O_DIRECT (every call reaches the server): the
file is cut into one region per writer; each writer rewrites runs of 1-16
blocks at random offsets in its own region, each block stamped with (block,
generation) and filled with bytes derived from both. Readers meanwhile read
random ranges anywhere and check every block is whole (a block of one
generation, never a mix, never garbage) and that no block's generation goes
backwards for that reader (Linux does not make a read atomic against a
concurrent write of the same page on the server's file system, so a torn
block is read once more and counted; torn twice is an error). At the end each block must hold the last
generation its writer wrote, read with O_DIRECT and again buffered through a
second mount after dropping the page cache.

Phase 2, buffered I/O: each writer fills a file of its own at random offsets,
fsyncs and closes; the files are then read through the second mount (close-to-
open) and compared with what was written.

Exit status 0 when everything verified; a line per problem otherwise."""

import argparse
import hashlib
import mmap
import multiprocessing as mp
import os
import queue
import random
import struct
import sys
import time
import zlib

BLOCK = 4096
MAGIC = b"AQSTRESS"
HDR = struct.Struct("<8sQQI")  # magic, block, generation, crc32 of the payload


def payload(block, gen):
    seed = hashlib.sha256(b"%d:%d" % (block, gen)).digest()
    return (seed * (BLOCK // len(seed) + 1))[: BLOCK - HDR.size]


def stamp(block, gen):
    body = payload(block, gen)
    return HDR.pack(MAGIC, block, gen, zlib.crc32(body)) + body


def parse(block, data):
    """The generation a block holds, or raise ValueError saying what is wrong."""
    magic, b, gen, crc = HDR.unpack_from(data)
    body = data[HDR.size:BLOCK]
    if magic != MAGIC:
        raise ValueError("block %d: no stamp (torn or garbage)" % block)
    if b != block:
        raise ValueError("block %d holds block %d's data" % (block, b))
    if zlib.crc32(body) != crc or body != payload(block, gen):
        raise ValueError("block %d gen %d: payload does not match" % (block, gen))
    return gen


def aligned(n):
    return mmap.mmap(-1, n)  # page-aligned, as O_DIRECT needs


def read_run(fd, buf, first, n):
    """Read blocks first .. first+n-1 into buf: (block, its generation or the
    ValueError saying what is wrong with it) for each; OSError on a short read."""
    got = os.preadv(fd, [memoryview(buf)[: n * BLOCK]], first * BLOCK)
    if got != n * BLOCK:
        raise OSError("short read of %d bytes at block %d" % (got, first))
    for i in range(n):
        b = first + i
        try:
            yield b, parse(b, buf[i * BLOCK:(i + 1) * BLOCK])
        except ValueError as e:
            yield b, e


def reread(fd, block, one):
    if os.preadv(fd, [one], block * BLOCK) != BLOCK:
        raise ValueError("block %d: short read" % block)
    return one[:BLOCK]


def writer(path, w, lo, hi, deadline, out):
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    rnd = random.Random(1000 + w)
    gens = {b: 0 for b in range(lo, hi)}
    buf = aligned(16 * BLOCK)
    ops = 0
    while time.time() < deadline:
        n = rnd.randint(1, 16)
        first = rnd.randint(lo, hi - n)
        for i in range(n):
            gens[first + i] += 1
            buf[i * BLOCK:(i + 1) * BLOCK] = stamp(first + i, gens[first + i])
        if os.pwritev(fd, [memoryview(buf)[: n * BLOCK]], first * BLOCK) != n * BLOCK:
            out.put(("error", "writer %d: short write" % w))
            break
        ops += 1
    os.close(fd)
    out.put(("gens", gens, ops))


def reader(path, r, nblocks, deadline, out):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    rnd = random.Random(2000 + r)
    seen = {}
    buf = aligned(32 * BLOCK)
    one = aligned(BLOCK)
    ops = errors = torn = 0
    while time.time() < deadline and errors < 5:
        n = rnd.randint(1, 32)
        first = rnd.randint(0, nblocks - n)
        try:
            for b, gen in read_run(fd, buf, first, n):
                if isinstance(gen, ValueError):
                    # torn by a concurrent write on the server: read it again
                    try:
                        gen = parse(b, reread(fd, b, one))
                        torn += 1
                    except ValueError:
                        out.put(("error", "reader %d: %s" % (r, gen)))
                        errors += 1
                        continue
                if gen < seen.get(b, 0):
                    out.put(("error", "reader %d: block %d went back from gen %d to %d" % (r, b, seen[b], gen)))
                    errors += 1
                seen[b] = gen
        except OSError as e:
            out.put(("error", "reader %d: %s" % (r, e)))
            errors += 1
        ops += 1
    os.close(fd)
    out.put(("reads", ops, torn))


def buffered_writer(path, w, size, out):
    rnd = random.Random(3000 + w)
    data = bytearray(size)
    with open(path, "wb") as f:
        f.truncate(size)
        for _ in range(200):
            off = rnd.randrange(0, size - 1)
            n = min(rnd.randint(1, 65536), size - off)
            chunk = rnd.randbytes(n)
            f.seek(off)
            f.write(chunk)
            data[off:off + n] = chunk
        f.flush()
        os.fsync(f.fileno())
    out.put(("buffered", w, hashlib.sha256(data).hexdigest()))


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def check_final(path, nblocks, want, direct):
    problems = []
    flags = os.O_RDONLY | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags)
    buf = aligned(256 * BLOCK)
    try:
        for first in range(0, nblocks, 256):
            for b, gen in read_run(fd, buf, first, min(256, nblocks - first)):
                if isinstance(gen, ValueError):
                    problems.append("final: %s" % gen)
                elif gen != want[b]:
                    problems.append("final: block %d holds gen %d, last written %d" % (b, gen, want[b]))
    except OSError as e:
        problems.append("final: %s" % e)
    os.close(fd)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--dir2", required=True, help="the same directory through another mount")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--readers", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--mib", type=int, default=16)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    path = os.path.join(a.dir, "shared")
    nblocks = a.mib * 256
    per = nblocks // a.writers
    with open(path, "wb") as f:
        for b in range(nblocks):
            f.write(stamp(b, 0))
        f.flush()
        os.fsync(f.fileno())

    out = mp.Queue()
    deadline = time.time() + a.seconds
    procs = [mp.Process(target=writer, args=(path, w, w * per, (w + 1) * per, deadline, out))
             for w in range(a.writers)]
    procs += [mp.Process(target=reader, args=(path, r, nblocks, deadline, out)) for r in range(a.readers)]
    for p in procs:
        p.start()
    want = {b: 0 for b in range(nblocks)}
    problems, wops, rops, torn = [], [], [], 0
    finals = 0
    while finals < len(procs):
        try:
            msg = out.get(timeout=a.seconds + 600)
        except queue.Empty:
            problems.append("%d workers never reported" % (len(procs) - finals))
            break
        if msg[0] == "gens":
            want.update(msg[1])
            wops.append(msg[2])
            finals += 1
        elif msg[0] == "reads":
            rops.append(msg[1])
            torn += msg[2]
            finals += 1
        else:
            problems.append(msg[1])
    for p in procs:
        p.join()
        if p.exitcode != 0:
            problems.append("a worker exited with %d" % p.exitcode)
    if len(wops) != a.writers or min(wops or [0]) < 5:
        problems.append("writers did too little: %s write calls" % wops)
    if len(rops) != a.readers or min(rops or [0]) < 5:
        problems.append("readers did too little: %s read calls" % rops)
    problems += check_final(path, nblocks, want, True)
    drop_caches()
    problems += check_final(os.path.join(a.dir2, "shared"), nblocks, want, False)

    size = 1 << 20
    bw = [mp.Process(target=buffered_writer, args=(os.path.join(a.dir, "buf.%d" % w), w, size, out))
          for w in range(a.writers)]
    for p in bw:
        p.start()
    sums = {}
    for _ in bw:
        msg = out.get(timeout=600)
        if msg[0] == "buffered":
            sums[msg[1]] = msg[2]
    for p in bw:
        p.join()
    drop_caches()
    for w in range(a.writers):
        with open(os.path.join(a.dir2, "buf.%d" % w), "rb") as f:
            got = hashlib.sha256(f.read()).hexdigest()
        if got != sums.get(w):
            problems.append("buffered file %d: sha256 %s, written %s" % (w, got, sums.get(w)))

    print("# stress: %d writers (%s write calls), %d readers (%s read calls, %d torn blocks read again),"
          " %d blocks, %.0f s" % (a.writers, wops, a.readers, rops, torn, nblocks, a.seconds))
    for p in problems[:30]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
