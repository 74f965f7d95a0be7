#!/usr/bin/env python3
"""bench/sim/fake_agents.py: many lightweight aquifer-agents in one process.

Each fake node joins aquiferd with its own join token (a join token joins one
node, once: --join-file holds one per line; POST /v1/agent/join), takes
pushed intents at http://127.0.0.1:PORT/<node>/v1/intent (checking the node's
push secret), answers the generation as applied, and reports status every
--report-seconds. Nodes are named sim<first>..sim<first+nodes-1> and take
the join tokens of those lines, so several processes (shards, --first) share
one join file. Reports go out from --reporters threads, each over its own
keep-alive connection. GET /stats answers {"nodes": N, "generations": {...},
"volumes": total volumes in the last intents, "pushes": count, "reports":
count, "report_errors": count}. --push-delay S makes every node of the
process slow and stuck: it takes S seconds to answer a push and applies
none (it answers and reports the generation it had), so it stays behind
and aquiferd keeps pushing to it (tests/e2e/test_reconcile_slow.sh).
POST /silence/<node> makes one node dead from then on: it reports no more
and answers pushes 503 (bench/sim/run.sh FAILOVER=1).
Stdlib only; stops on SIGTERM.
"""
import argparse, http.client, json, signal, sys, threading, time, urllib.parse
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

lock = threading.Lock()
nodes = {}      # name -> {"secret", "token", "applied", "volumes", "silent"}
counts = {"pushes": 0, "reports": 0, "report_errors": 0}
push_delay = 0.0


class Client:
    """One keep-alive connection to aquiferd, reopened after an error."""

    def __init__(self, server):
        u = urllib.parse.urlsplit(server)
        self.host, self.port = u.hostname, u.port or 80
        self.c = None

    def post(self, path, token, body):
        data = json.dumps(body).encode()
        for attempt in (0, 1):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.c.request("POST", path, body=data,
                               headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
                r = self.c.getresponse()
                text = r.read()
                if r.status != 200:
                    raise RuntimeError("HTTP %d %s" % (r.status, text[:200]))
                return json.loads(text or b"{}")
            except (OSError, http.client.HTTPException):
                self.c = None
                if attempt:
                    raise


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                doc = dict(counts)
                doc.update({"nodes": len(nodes), "volumes": sum(n["volumes"] for n in nodes.values()),
                            "generations": {k: n["applied"] for k, n in nodes.items()}})
                self.reply(200, doc)
        else:
            self.reply(404, {})

    def do_POST(self):
        parts = self.path.strip("/").split("/")
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            if len(parts) != 2 or parts[0] != "silence" or parts[1] not in nodes:
                return self.reply(404, {})
            nodes[parts[1]]["silent"] = True
        self.reply(200, {})

    def do_PUT(self):
        parts = self.path.strip("/").split("/")
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n)
        if len(parts) != 3 or parts[1:] != ["v1", "intent"]:
            return self.reply(404, {})
        with lock:
            node = nodes.get(parts[0])
            if not node or self.headers.get("Authorization") != "Bearer " + node["secret"]:
                return self.reply(401, {})
            if node.get("silent"):
                return self.reply(503, {})
        intent = json.loads(data)
        if push_delay > 0:
            time.sleep(push_delay)
        with lock:
            gen = intent.get("generation", 0)
            if gen >= node["applied"] and push_delay <= 0:
                node["applied"] = gen
                node["volumes"] = len(intent.get("volumes", []))
            counts["pushes"] += 1
            applied = node["applied"]
        try:
            self.reply(200, {"appliedGeneration": applied})
        except OSError:  # aquiferd gave up waiting (a slow node)
            pass


def reporter(server, names, every, stop):
    cl = Client(server)
    # spread the reports of this thread's nodes over the interval
    while not stop.is_set():
        start = time.time()
        for i, name in enumerate(names):
            if stop.is_set():
                return
            with lock:
                n = nodes[name]
                body = {"appliedGeneration": n["applied"], "volumes": []}
                token = n["token"]
                silent = n.get("silent")
            if silent:
                continue
            try:
                cl.post("/v1/agent/status", token, body)
                with lock:
                    counts["reports"] += 1
            except Exception as e:  # aquiferd busy or away: report next round
                with lock:
                    counts["report_errors"] += 1
                print("status %s: %s" % (name, e), file=sys.stderr)
            due = start + every * (i + 1) / len(names)
            if due > time.time():
                stop.wait(due - time.time())
        stop.wait(max(0.0, every - (time.time() - start)))


def joiner(server, loc, port, ceiling, items):
    cl = Client(server)
    for name, tok in items:
        r = cl.post("/v1/agent/join", tok,
                    {"node": name, "location": loc, "address": "http://127.0.0.1:%d/%s" % (port, name),
                     "nfsAddress": "127.0.0.1:2049", "throughputCeilingMibps": ceiling, "agentVersion": "sim"})
        with lock:
            nodes[name].update(secret=r["pushSecret"], token=r["nodeToken"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--join-file", required=True, help="one join token per line, one per node")
    ap.add_argument("--location", required=True)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--first", type=int, default=0, help="index of this process's first node (shards)")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ceiling", type=float, default=33379)
    ap.add_argument("--report-seconds", type=float, default=2.0)
    ap.add_argument("--reporters", type=int, default=4, help="reporting threads, each one connection")
    ap.add_argument("--push-delay", type=float, default=0.0, help="seconds before a push is answered, none applied (a stuck node)")
    a = ap.parse_args()
    global push_delay
    push_delay = a.push_delay
    with open(a.join_file) as f:
        joins = [l.strip() for l in f if l.strip()]
    if len(joins) < a.first + a.nodes:
        sys.exit("%s holds %d join tokens for nodes %d..%d" % (a.join_file, len(joins), a.first,
                                                               a.first + a.nodes - 1))
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024
    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    names = ["sim%d" % (a.first + i) for i in range(a.nodes)]
    for name in names:
        nodes[name] = {"secret": "", "token": "", "applied": 0, "volumes": 0}
    items = list(zip(names, joins[a.first:a.first + a.nodes]))
    k = max(1, min(4, len(items)))
    ts = [threading.Thread(target=joiner, args=(a.server, a.location, a.port, a.ceiling, items[i::k]))
          for i in range(k)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if any(not nodes[n]["token"] for n in names):
        sys.exit("some nodes did not join")
    print("joined %d nodes" % a.nodes, flush=True)
    stop = threading.Event()
    r = max(1, min(a.reporters, len(names)))
    for i in range(r):
        threading.Thread(target=reporter, args=(a.server, names[i::r], a.report_seconds, stop), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *x: (stop.set(), threading.Thread(target=httpd.shutdown).start()))
    while not stop.is_set():
        stop.wait(1)


if __name__ == "__main__":
    main()
