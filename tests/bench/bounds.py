#!/usr/bin/env python3
"""bounds.py - measure what the integration suites' timing bounds are derived from.

Each scenario is the one a suite times (same code, same limits, same `brig` as `make check`,
the libtool wrapper included), run N times per backend while a competitor keeps the other core
busy the way `make check -j2` does: a second brig workload (by default the gvisor controls
suite, the heaviest) in a loop.  Prints, per scenario and backend, p50 / p95 / p99 / max of the
figure the suite bounds, with the machine's load average; the suites cite these figures next
to each bound.

  BRIG=_build/main/brig BRIG_BACKEND_DIR=_build/main/backends/.libs \\
      tests/bench/bounds.py -n 40 [--scenarios a,b] [--backends docker-api,gvisor] [--no-load]

Scenarios (figure, in seconds):
  timeout     brig run -t 2 of `while True: pass`: wall time of brig minus 2 (overshoot)
  flood       brig run writing 10 MiB at once: wall time of brig (kill at the output limit)
  yes         brig run of `yes`: wall time of brig
  forkbomb    brig run -t 4 of a shell fork bomb: wall time of brig minus 4
  budget      the three programs of controls' test_process_budget_usable: each run's duration_ms
  pooltimeout a pooled run_code with timeout_seconds 2 (brig mcp, warm_pool 2): duration_ms
              minus 2000 and the call's wall time minus 2
  shutdown    closing brig mcp with 3 x warm_pool idle containers: wall time to exit
  mcptimeout  a non-pooled run_code with timeout_seconds 1 (warm_pool 0): call wall time minus 1
  mcpsigterm  SIGTERM to a brig mcp with the default policy (warm_pool 2: 6 idle boxes) while a
              call runs `sleep 25`, as tests/mcp/e2e.mjs does: wall time until it exited
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from mcpclient import brig_mcp  # noqa: E402

BRIG = os.environ.get("BRIG", "brig")
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))


def brig_run(backend, lang, code, *args):
    t0 = time.monotonic()
    p = subprocess.run([BRIG, "run", "--backend", backend, "-l", lang, "--json", *args],
                       input=code.encode(), capture_output=True, timeout=180)
    took = time.monotonic() - t0
    try:
        res = json.loads(p.stdout)
    except ValueError:
        res = {"verdict": f"no result (rc {p.returncode}): {p.stderr[-200:]!r}"}
    return took, res


def s_timeout(backend, _n):
    took, r = brig_run(backend, "python", "while True: pass", "-t", "2")
    return {"overshoot": took - 2, "duration_over": r.get("duration_ms", 0) / 1000 - 2}, \
        r["verdict"] == "timeout"


def s_flood(backend, _n):
    took, r = brig_run(backend, "python", "import sys\nsys.stdout.write('x' * (10 * 1024 * 1024))\n",
                       "-t", "30")
    return {"wall": took}, r["verdict"] == "output_limit"


def s_yes(backend, _n):
    took, r = brig_run(backend, "shell", "yes", "-t", "30")
    return {"wall": took}, r["verdict"] == "output_limit"


def s_forkbomb(backend, _n):
    took, r = brig_run(backend, "shell", "f(){ f | f & }; f; sleep 10", "-t", "4")
    return {"overshoot": took - 4}, r["verdict"] != "sandbox_error"


BUDGET = {
    "fork60": ("python", """
import os, time
pids = []
for i in range(60):
    pid = os.fork()
    if pid == 0:
        time.sleep(1)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
print("forked", len(pids))
"""),
    "sh-loop": ("shell", "i=0; while [ $i -lt N ]; do ls / >/dev/null; echo $i | wc -c >/dev/null; "
                         "i=$((i+1)); done; echo done $i\n"),
    "workers": ("node", """
const { Worker } = require('worker_threads');
let done = 0;
for (let i = 0; i < 2; i++) {
  const w = new Worker('let x = 0; for (let i = 0; i < 1e6; i++) x += i;', { eval: true });
  w.on('exit', () => { if (++done === 2) console.log('workers done'); });
}
"""),
}


def s_budget(backend, _n, loop=int(os.environ.get("BOUNDS_SH_LOOP", "300"))):
    out, ok = {}, True
    for name, (lang, code) in BUDGET.items():
        _, r = brig_run(backend, lang, code.replace(" N ]", f" {loop} ]"), "-t", "30")
        out[name] = r.get("duration_ms", 0) / 1000
        ok = ok and r["verdict"] == "success"
    return out, ok


_servers = {}


def pooled_server(backend, warm):
    key = (backend, warm)
    if key not in _servers:
        policy = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump({"warm_pool": warm, "backend": backend}, policy)
        policy.close()
        _servers[key] = brig_mcp(BRIG, "--policy", policy.name, "-q")
    return _servers[key]


def s_pooltimeout(backend, _n):
    s = pooled_server(backend, 2)
    s.wait_pool({"python": 2})
    time.sleep(0.5)
    t0 = time.monotonic()
    r = s.run_code("python", "import time\nprint('started', flush=True)\ntime.sleep(60)",
                   timeout_seconds=2)
    took = time.monotonic() - t0
    return {"duration_over": r["duration_ms"] / 1000 - 2, "call_over": took - 2}, \
        r["verdict"] == "timeout" and r.get("pooled") is True


def s_mcptimeout(backend, _n):
    s = pooled_server(backend, 0)
    t0 = time.monotonic()
    r = s.run_code("python", "while True:\n    pass", timeout_seconds=1)
    return {"call_over": time.monotonic() - t0 - 1}, r["verdict"] == "timeout"


def s_shutdown(backend, _n):
    policy = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"warm_pool": 2, "backend": backend}, policy)
    policy.close()
    s = brig_mcp(BRIG, "--policy", policy.name, "-q")
    try:
        s.wait_pool({"python": 2, "node": 2, "shell": 2}, timeout=120)
        t0 = time.monotonic()
        rc = s.close()
        return {"close": time.monotonic() - t0}, rc == 0
    finally:
        os.unlink(policy.name)


def s_mcpsigterm(backend, _n):
    s = brig_mcp(BRIG, "--backend", backend, "-q")
    try:
        s.wait_pool({"python": 2, "node": 2, "shell": 2}, timeout=120)
        rid = s.send_request("tools/call", {"name": "run_code", "arguments": {
            "language": "shell", "code": "sleep 25", "timeout_seconds": 30}})
        time.sleep(1.5)  # e2e.mjs waits until the call's container exists
        t0 = time.monotonic()
        s.p.terminate()
        rc = s.p.wait(60)
        return {"exit": time.monotonic() - t0}, rc == 0 and rid not in s.responses
    finally:
        if s.p.poll() is None:
            s.kill()


SCENARIOS = {"timeout": s_timeout, "flood": s_flood, "yes": s_yes, "forkbomb": s_forkbomb,
             "budget": s_budget, "pooltimeout": s_pooltimeout, "mcptimeout": s_mcptimeout,
             "shutdown": s_shutdown, "mcpsigterm": s_mcpsigterm}
DEFAULT_BACKENDS = {"pooltimeout": ["docker-api", "gvisor"], "shutdown": ["docker-api", "gvisor"],
                    "mcptimeout": ["docker-api", "gvisor"], "mcpsigterm": ["gvisor", "docker-api"]}


class Competitor:
    """The other half of make check -j2: a suite in a loop until stopped."""

    def __init__(self, backend):
        self.stop = threading.Event()
        self.backend = backend
        self.p = None
        self.t = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        env = dict(os.environ, BRIG_TEST_BACKEND=self.backend, top_srcdir=TOP)
        while not self.stop.is_set():
            self.p = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "integration",
                                                                      "controls.py")],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.p.wait()

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.p:
            self.p.terminate()
        self.t.join(60)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--backends", default="")
    ap.add_argument("--competitor", default="gvisor")
    ap.add_argument("--no-load", action="store_true")
    args = ap.parse_args()
    results = {}
    ctx = Competitor(args.competitor) if not args.no_load else None
    if ctx:
        ctx.__enter__()
        time.sleep(5)
    try:
        for name in args.scenarios.split(","):
            backends = args.backends.split(",") if args.backends else \
                DEFAULT_BACKENDS.get(name, ["docker-cli", "docker-api", "gvisor"])
            for b in backends:
                figs, bad = {}, 0
                loads = []
                for i in range(args.n):
                    f, ok = SCENARIOS[name](b, i)
                    bad += not ok
                    loads.append(os.getloadavg()[0])
                    for k, v in f.items():
                        figs.setdefault(k, []).append(v)
                for k, xs in figs.items():
                    line = (f"{name:11} {b:10} {k:13} n={len(xs):3} p50={statistics.median(xs):6.2f} "
                            f"p95={pct(xs, .95):6.2f} p99={pct(xs, .99):6.2f} max={max(xs):6.2f} s"
                            f"  wrong-verdict={bad}  load1 {min(loads):.1f}-{max(loads):.1f}")
                    print(line, flush=True)
                    results[f"{name}/{b}/{k}"] = xs
    finally:
        for s in _servers.values():
            s.close()
        if ctx:
            ctx.__exit__()
    out = os.environ.get("BOUNDS_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
