#!/usr/bin/env python3
"""bench/sim/load.py: the API side of bench/sim/run.sh, over keep-alive
connections (stdlib only).

  load.py create --server URL --token T --parent projects/P/locations/L --pool ID
                 --first N --count M --conc C
      creates volumes v<N>..v<N+M-1> (100 GiB, NFSV3), C at a time; prints
      {"ok", "failed", "seconds", "rate", "p50_ms", "p99_ms", "errors": {...}}.
  load.py get --server URL --token T --name VOLUME --rate R --seconds S [--until FILE]
      GETs one volume R times a second (paced, one connection) for S seconds,
      or until FILE exists; prints {"n", "p50_ms", "p99_ms", "max_ms"}.
Latencies are whole requests as the client sees them.
"""
import argparse, http.client, json, os, sys, threading, time, urllib.parse


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


class Conn:
    def __init__(self, server, token):
        u = urllib.parse.urlsplit(server)
        self.host, self.port, self.token, self.c = u.hostname, u.port or 80, token, None

    def req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        for attempt in (0, 1):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port, timeout=60)
                h = {"Authorization": "Bearer " + self.token}
                if data is not None:
                    h["Content-Type"] = "application/json"
                self.c.request(method, path, body=data, headers=h)
                r = self.c.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                self.c = None
                if attempt:
                    return 0, b""


def create(a):
    lock = threading.Lock()
    nxt = [a.first]
    lat, errors = [], {}
    ok = [0]

    def worker():
        c = Conn(a.server, a.token)
        while True:
            with lock:
                i = nxt[0]
                if i >= a.first + a.count:
                    return
                nxt[0] += 1
            body = {"storagePool": a.pool, "capacityGib": "100", "protocols": ["NFSV3"], "shareName": "v%d" % i}
            t = time.time()
            st, text = c.req("POST", "/v1/%s/volumes?volumeId=v%d" % (a.parent, i), body)
            d = time.time() - t
            with lock:
                lat.append(d)
                if st == 200:
                    ok[0] += 1
                else:
                    k = "%d %s" % (st, text[:120].decode("utf-8", "replace"))
                    errors[k] = errors.get(k, 0) + 1

    t0 = time.time()
    ts = [threading.Thread(target=worker) for _ in range(a.conc)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    secs = time.time() - t0
    print(json.dumps({"ok": ok[0], "failed": a.count - ok[0], "seconds": round(secs, 3),
                      "rate": round(ok[0] / secs, 1) if secs > 0 else 0,
                      "p50_ms": round(pct(lat, 50) * 1000, 2), "p99_ms": round(pct(lat, 99) * 1000, 2),
                      "errors": dict(list(errors.items())[:5])}))


def get(a):
    c = Conn(a.server, a.token)
    lat, bad = [], 0
    t0 = time.time()
    n = 0
    while time.time() - t0 < a.seconds and not (a.until and os.path.exists(a.until)):
        wait = t0 + n / a.rate - time.time()
        if wait > 0:
            time.sleep(wait)
        t = time.time()
        st, _ = c.req("GET", "/v1/" + a.name)
        lat.append(time.time() - t)
        bad += st != 200
        n += 1
    print(json.dumps({"n": n, "bad": bad, "p50_ms": round(pct(lat, 50) * 1000, 3),
                      "p99_ms": round(pct(lat, 99) * 1000, 3), "max_ms": round(max(lat or [0]) * 1000, 3)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["create", "get"])
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--parent")
    ap.add_argument("--pool")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--conc", type=int, default=8)
    ap.add_argument("--name")
    ap.add_argument("--rate", type=float, default=100)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--until")
    a = ap.parse_args()
    (create if a.mode == "create" else get)(a)


if __name__ == "__main__":
    sys.exit(main())
