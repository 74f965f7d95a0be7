#!/usr/bin/env python3
"""bench/sim/fake_agents.py: many lightweight aquifer-agents in one process.

Each fake node joins aquiferd with its own join token (a join token joins one
node, once: --join-file holds one per line; POST /v1/agent/join), takes
pushed intents at http://127.0.0.1:PORT/<node>/v1/intent (checking the node's
push secret), answers the generation as applied, and reports status every
--report-seconds. GET /stats answers {"nodes": N, "generations": {...},
"volumes": total volumes in the last intents, "pushes": count}.
Stdlib only; stops on SIGTERM.
"""
import argparse, json, signal, sys, threading, time, urllib.request
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

lock = threading.Lock()
nodes = {}      # name -> {"secret", "token", "applied", "volumes"}
pushes = 0


def post(url, token, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


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
                self.reply(200, {"nodes": len(nodes), "pushes": pushes,
                                 "volumes": sum(n["volumes"] for n in nodes.values()),
                                 "generations": {k: n["applied"] for k, n in nodes.items()}})
        else:
            self.reply(404, {})

    def do_PUT(self):
        global pushes
        parts = self.path.strip("/").split("/")
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n)
        if len(parts) != 3 or parts[1:] != ["v1", "intent"]:
            return self.reply(404, {})
        with lock:
            node = nodes.get(parts[0])
            if not node or self.headers.get("Authorization") != "Bearer " + node["secret"]:
                return self.reply(401, {})
        intent = json.loads(data)
        with lock:
            gen = intent.get("generation", 0)
            if gen >= node["applied"]:
                node["applied"] = gen
                node["volumes"] = len(intent.get("volumes", []))
            pushes += 1
            applied = node["applied"]
        self.reply(200, {"appliedGeneration": applied})


def reporter(server, every, stop):
    while not stop.is_set():
        start = time.time()
        with lock:
            items = list(nodes.items())
        for name, n in items:
            try:
                post(server + "/v1/agent/status", n["token"],
                     {"appliedGeneration": n["applied"], "volumes": []})
            except Exception as e:  # aquiferd busy or away: report next round
                print("status %s: %s" % (name, e), file=sys.stderr)
        stop.wait(max(0.0, every - (time.time() - start)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--join-file", required=True, help="one join token per line, one per node")
    ap.add_argument("--location", required=True)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ceiling", type=float, default=33379)
    ap.add_argument("--report-seconds", type=float, default=2.0)
    a = ap.parse_args()
    with open(a.join_file) as f:
        joins = [l.strip() for l in f if l.strip()]
    if len(joins) < a.nodes:
        sys.exit("%s holds %d join tokens for %d nodes" % (a.join_file, len(joins), a.nodes))
    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    for i in range(a.nodes):
        name = "sim%d" % i
        with lock:
            nodes[name] = {"secret": "", "token": "", "applied": 0, "volumes": 0}
        r = post(a.server + "/v1/agent/join", joins[i],
                 {"node": name, "location": a.location, "address": "http://127.0.0.1:%d/%s" % (a.port, name),
                  "nfsAddress": "127.0.0.1:2049", "throughputCeilingMibps": a.ceiling, "agentVersion": "sim"})
        with lock:
            nodes[name].update(secret=r["pushSecret"], token=r["nodeToken"])
    print("joined %d nodes" % a.nodes, flush=True)
    stop = threading.Event()
    threading.Thread(target=reporter, args=(a.server, a.report_seconds, stop), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *x: (stop.set(), httpd.shutdown()))
    signal.pause() if hasattr(signal, "pause") else time.sleep(1e9)


if __name__ == "__main__":
    main()
