"""mcpclient - a minimal MCP client over a `brig mcp` child's stdio, for the pool integration
test and the benchmarks (tests/bench/load.py, tests/bench/latency.py).

JSON-RPC 2.0, one message per line.  A reader thread files responses by id (a second response
for an id is recorded as a duplicate: every call must be answered exactly once) and keeps
notifications; requests may be sent from several threads.
"""
import json
import os
import subprocess
import threading
import time


class McpError(Exception):
    pass


class Mcp:
    def __init__(self, argv, env=None, stderr=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=stderr, env=env)
        self.pid = self.p.pid
        self.cond = threading.Condition()
        self.wlock = threading.Lock()
        self.responses = {}
        self.sent = {}  # id -> time.monotonic() when sent
        self.arrived = {}  # id -> time.monotonic() when its (first) response arrived
        self.duplicates = []
        self.notifications = []
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "brig-tests", "version": "1"}})
        if "result" not in init:
            raise McpError(f"initialize failed: {init}")
        self.notify("notifications/initialized")

    def _read(self):
        for line in self.p.stdout:
            msg = json.loads(line)
            now = time.monotonic()
            with self.cond:
                if "id" in msg and ("result" in msg or "error" in msg):
                    if msg["id"] in self.responses:
                        self.duplicates.append(msg["id"])
                    else:
                        self.arrived[msg["id"]] = now
                    self.responses[msg["id"]] = msg
                else:
                    self.notifications.append(msg)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _send(self, msg):
        data = (json.dumps(msg) + "\n").encode()
        with self.wlock:
            self.p.stdin.write(data)
            self.p.stdin.flush()

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def send_request(self, method, params):
        with self.cond:
            self.next_id += 1
            rid = self.next_id
            self.sent[rid] = time.monotonic()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait(self, rid, timeout=120):
        end = time.monotonic() + timeout
        with self.cond:
            while rid not in self.responses:
                left = end - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not self.reader.is_alive()):
                    raise McpError(f"no response to request {rid}")
                self.cond.wait(left)
            return self.responses[rid]

    def request(self, method, params, timeout=120):
        return self.wait(self.send_request(method, params), timeout)

    def run_code(self, language, code, timeout_seconds=None, timeout=120):
        """The structuredContent of a run_code call (McpError when there is none)."""
        args = {"language": language, "code": code}
        if timeout_seconds is not None:
            args["timeout_seconds"] = timeout_seconds
        r = self.request("tools/call", {"name": "run_code", "arguments": args}, timeout)
        return structured(r)

    def status(self):
        return structured(self.request("tools/call", {"name": "sandbox_status", "arguments": {}}))

    def wait_pool(self, counts, timeout=60):
        """Wait until the pool has at least counts[lang] idle containers for each language."""
        end = time.monotonic() + timeout
        while True:
            pool = self.status().get("pool", {})
            langs = pool.get("languages", {})
            if all(langs.get(l, {}).get("idle", 0) >= n for l, n in counts.items()):
                return pool
            if time.monotonic() > end:
                raise McpError(f"the pool did not fill: {pool}")
            time.sleep(0.05)

    def close(self, timeout=30):
        """Close stdin (the server's shutdown) and wait; returns its exit status."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        return self.p.wait(timeout)

    def kill(self):
        self.p.kill()
        self.p.wait()


def structured(response):
    if "result" not in response or "structuredContent" not in response["result"]:
        raise McpError(f"no structured result: {json.dumps(response)[:600]}")
    return response["result"]["structuredContent"]


def brig_mcp(brig, *args, env=None, stderr=None, debug=False):
    e = dict(os.environ if env is None else env)
    if debug:
        e["BRIG_DEBUG"] = "1"
    return Mcp([brig, "mcp", *args], env=e, stderr=stderr)
