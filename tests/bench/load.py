#!/usr/bin/env python3
"""load.py - N concurrent run_code calls through ONE `brig mcp` (max_concurrent_runs 4).

Checks (exit status 1 if one fails): every call answered exactly once and successfully, one
audit line per call, no container of the server left after it stops, and the server's open fds
(/proc/PID/fd) and RSS (/proc/PID/status VmRSS) back to their idle values once the load is over.
Reports runs/second, p50/p95 latency per call (from sending the request to its response), how
many calls a warm container served, and what the server's memory really costs: Private_Dirty and
PSS from /proc/PID/smaps_rollup (RSS beside them: it counts the shared libraries' pages each
process shares with every other), idle, peak while running, after.  Target (reported, not
enforced): an idle server with the pool full <= 2.5 MiB Private_Dirty.

Usage: tests/bench/load.py [-n CALLS] [--concurrency 4] [--warm 2] [--lang python]
                           [--set KEY=JSON ...]   (more policy keys, e.g. --set seccomp='"engine"')
Environment: BRIG (default: ./.libs/brig with LD_LIBRARY_PATH=./.libs, else brig on PATH),
BRIG_BACKEND_DIR, BRIG_TEST_BACKEND (default docker-api).
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
from mcpclient import Mcp  # noqa: E402

CODE = {"python": "import sys\nprint(sum(range({i})), file=sys.stdout)\n",
        "node": "console.log([...Array({i}).keys()].reduce((a, b) => a + b, 0))\n",
        "shell": "i=0; s=0; while [ $i -lt {i} ]; do s=$((s+i)); i=$((i+1)); done; echo $s\n"}


def brig_binary():
    b = os.environ.get("BRIG")
    if b:
        return b, dict(os.environ)
    top = os.path.abspath(os.path.join(HERE, "..", ".."))
    real = os.path.join(top, ".libs", "brig")
    env = dict(os.environ)
    if os.path.exists(real):
        env["LD_LIBRARY_PATH"] = os.path.join(top, ".libs")
        env.setdefault("BRIG_BACKEND_DIR", os.path.join(top, "backends", ".libs"))
        return real, env
    return "brig", env


def quiet(pid):
    """Wait for the server to be idle as it is between an agent's calls: its worker threads
    (the pool's and the calls') exit 0.5 s after their last job, and it hands freed heap back
    1 s and 4 s after its last call (src/mcp/server.c).  Threads == 1: only the reader is left."""
    deadline = time.monotonic() + 15
    while proc_mem(pid)["Threads"] > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(4.5)


def libcurl_of(pid):
    """Which libcurl the server runs with (the system's, shared)."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            if "/libcurl" in line:
                return "libcurl " + line.split()[-1]
    return "no libcurl mapped"


def proc_mem(pid):
    """KiB: Rss, Pss, Private_Dirty (smaps_rollup), RssAnon; threads and open fds."""
    d = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "Threads"):
                d[k] = int(v.split()[0])
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Rss", "Pss", "Private_Dirty"):
                d[k] = int(v.split()[0])
    d["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return d


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def containers_of(pid):
    r = subprocess.run(["docker", "ps", "-a", "--filter", "label=brig=1", "--format",
                        '{{.Names}} {{.Label "brig.owner"}}'], capture_output=True, text=True)
    return [l.split()[0] for l in r.stdout.splitlines()
            if len(l.split()) > 1 and l.split()[1].startswith(f"{pid}:")]


def settle(srv, langs, warm):
    """Wait until the pool is full again and nothing is being removed."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        pool = srv.status().get("pool", {})
        full = all(pool.get("languages", {}).get(l, {}).get("idle", 0) >= warm for l in langs)
        if (full or warm == 0) and pool.get("removing", 0) == 0 and pool.get("running", 0) == 0:
            return
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=64, help="calls, all sent at once (default 64)")
    ap.add_argument("--concurrency", type=int, default=4, help="max_concurrent_runs (default 4)")
    ap.add_argument("--warm", type=int, default=2, help="warm_pool (default 2; 0: off)")
    ap.add_argument("--lang", default="python", choices=sorted(CODE))
    ap.add_argument("--backend", default=os.environ.get("BRIG_TEST_BACKEND", "docker-api"))
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="another policy key for the server")
    args = ap.parse_args()
    extra = {}
    for kv in args.set:
        k, _, v = kv.partition("=")
        extra[k] = json.loads(v)
    brig, env = brig_binary()
    tmp = tempfile.mkdtemp(prefix="brig-load-")
    audit = os.path.join(tmp, "audit.jsonl")
    policy = os.path.join(tmp, "policy.json")
    with open(policy, "w") as f:
        json.dump({"max_concurrent_runs": args.concurrency, "warm_pool": args.warm,
                   "backend": args.backend, "audit_log": audit, **extra}, f)
    queue = -(-args.n // args.concurrency)  # every call admitted: none refused as busy
    srv = Mcp([brig, "mcp", "-q", "--policy", policy, "--queue-per-run", str(min(queue, 64))],
              env=env, stderr=open(os.path.join(tmp, "stderr.log"), "w"))
    failures = []
    langs = ["python", "node", "shell"]
    settle(srv, langs, args.warm)
    # a first burst, one call per worker, so that every lazily made thing exists (each
    # worker's stack, the allocator's free lists); then the idle baseline
    warm_ids = [srv.send_request("tools/call", {"name": "run_code", "arguments": {
        "language": args.lang, "code": CODE[args.lang].format(i=1)}}) for _ in range(args.concurrency)]
    for rid in warm_ids:
        srv.wait(rid)
    settle(srv, langs, args.warm)
    quiet(srv.pid)
    idle = proc_mem(srv.pid)

    peak = dict(idle)
    sampling = True

    def sample():
        while sampling:
            try:
                m = proc_mem(srv.pid)
            except OSError:
                return
            for k in ("Rss", "Pss", "Private_Dirty", "RssAnon", "fds"):
                peak[k] = max(peak[k], m[k])
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.monotonic()
    ids = [srv.send_request("tools/call", {"name": "run_code", "arguments": {
        "language": args.lang, "code": CODE[args.lang].format(i=i + 2)}}) for i in range(args.n)]
    results = {rid: srv.wait(rid, timeout=300) for rid in ids}
    wall = time.monotonic() - t0
    sampling = False
    sampler.join()

    lat = [(srv.arrived[rid] - srv.sent[rid]) * 1000 for rid in ids]
    pooled = verdicts_ok = 0
    for i, rid in enumerate(ids):
        r = results[rid].get("result", {})
        sc = r.get("structuredContent") or {}
        want = str(sum(range(i + 2)))
        if sc.get("verdict") == "success" and sc.get("stdout", "").strip() == want:
            verdicts_ok += 1
        pooled += bool(sc.get("pooled"))
    if verdicts_ok != args.n:
        seen = {}
        for rid in ids:
            sc = results[rid].get("result", {}).get("structuredContent") or {}
            v = sc.get("verdict", "no result")
            seen[v] = seen.get(v, 0) + 1
        failures.append(f"{args.n - verdicts_ok} calls did not succeed with the right output "
                        f"(verdicts: {seen})")
    if srv.duplicates:
        failures.append(f"answered more than once: {srv.duplicates}")
    if len(results) != args.n:
        failures.append(f"{args.n - len(results)} calls unanswered")

    settle(srv, langs, args.warm)
    quiet(srv.pid)
    after = proc_mem(srv.pid)
    curl = libcurl_of(srv.pid)
    rc = srv.close(timeout=60)
    if rc != 0:
        failures.append(f"brig mcp exited with {rc}")
    with open(audit) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    if len(lines) != args.n + args.concurrency:  # + the first burst
        failures.append(f"{len(lines)} audit lines for {args.n + args.concurrency} calls")
    left = containers_of(srv.pid)
    if left:
        failures.append(f"containers left: {left}")
    if after["fds"] != idle["fds"]:
        failures.append(f"open fds {idle['fds']} idle, {after['fds']} after the load")
    if after["Private_Dirty"] > idle["Private_Dirty"] + 256:
        failures.append(f"Private_Dirty {idle['Private_Dirty']} KiB idle, "
                        f"{after['Private_Dirty']} KiB after the load")

    print(f"{args.n} concurrent {args.lang} calls, max_concurrent_runs {args.concurrency}, "
          f"warm_pool {args.warm}, backend {args.backend}{' ' + json.dumps(extra) if extra else ''}")
    print(f"  wall {wall:.2f} s, {args.n / wall:.1f} runs/s; per call p50 {statistics.median(lat):.0f} ms, "
          f"p95 {pct(lat, 0.95):.0f} ms, max {max(lat):.0f} ms; {pooled}/{args.n} on a warm container")
    print(f"  answered {len(results)}/{args.n}, duplicates {len(srv.duplicates)}, audit lines "
          f"{len(lines)} (= calls + {args.concurrency} warm-up), containers left {len(left)}")
    for name, m in (("idle", idle), ("peak", peak), ("after", after)):
        print(f"  server memory KiB, {name:5}: Private_Dirty {m['Private_Dirty']:5}  "
              f"PSS {m['Pss']:5}  RSS {m['Rss']:5}  (anon {m['RssAnon']})")
    print(f"  target: idle Private_Dirty <= 2560 KiB: "
          f"{'yes' if idle['Private_Dirty'] <= 2560 else 'NO'}")
    print(f"  open fds: idle {idle['fds']}, peak {peak['fds']}, after {after['fds']}; "
          f"threads idle {idle['Threads']}; {curl}")
    for f_ in failures:
        print(f"FAIL: {f_}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
