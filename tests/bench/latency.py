#!/usr/bin/env python3
"""latency.py - end-to-end latency of one tiny run, brig against raw `docker run`.

Rows are measured INTERLEAVED in one run of the script (the machines are noisy: only ratios
within one run mean anything): each round runs every row once, in a shuffled order.

  raw docker run        `docker run --rm` with exactly the flags `brig explain` prints
  brig docker-cli       brig run --backend docker-cli
  brig docker-api       brig run --backend docker-api
  (+ runsc rows when the gvisor backend is available)

Usage: tests/bench/latency.py [-n RUNS] [--lang python|node|shell] [--rows a,b,...]
Environment: BRIG (the brig binary, default: brig on PATH), BRIG_BACKEND_DIR.
Prints p50/p95 per row in ms, and each row's p50 as a ratio of raw docker run's.
"""
import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
import uuid

BRIG = os.environ.get("BRIG", "brig")
CODE = {"python": "print(1)\n", "node": "console.log(1)\n", "shell": "echo 1\n"}


def explain_argv(backend_args, lang):
    """The docker argv brig would run, from `brig explain --backend docker-cli`."""
    out = subprocess.run([BRIG, "explain", *backend_args, "--backend", "docker-cli", "-l", lang,
                          "-c", CODE[lang]], capture_output=True, text=True, check=True).stdout
    lines = [l for l in out.splitlines() if l and not l.startswith("#")]
    text = " ".join(l.rstrip("\\").strip() for l in lines)
    text = text.split(" < CODE")[0]
    return shlex.split(text)


def raw_row(argv, runtime=None):
    def run():
        a = list(argv)
        a[a.index("--name") + 1] = "brig-bench-" + uuid.uuid4().hex[:12]
        a.insert(2, "--rm")
        if runtime:
            a[a.index("--runtime") + 1] = runtime
        return a
    return run


def brig_row(backend, lang, extra=()):
    def run():
        return [BRIG, "run", "--backend", backend, "-l", lang, *extra]
    return run


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def available(backend):
    r = subprocess.run([BRIG, "doctor", "--json"], capture_output=True, text=True)
    import json
    try:
        st = json.loads(r.stdout)
    except ValueError:
        return False
    return any(b["name"] == backend and b["available"] for b in st.get("backends", []))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20, help="runs per row (default 20)")
    ap.add_argument("--lang", default="python", choices=sorted(CODE))
    ap.add_argument("--rows", default="", help="comma-separated row names to keep")
    args = ap.parse_args()
    lang = args.lang
    argv = explain_argv([], lang)
    rows = {"raw docker run (runc)": raw_row(argv), "brig docker-cli": brig_row("docker-cli", lang)}
    if available("docker-api"):
        rows["brig docker-api"] = brig_row("docker-api", lang)
    if available("gvisor"):
        gv = subprocess.run([BRIG, "doctor", "--json", "--backend", "gvisor"], capture_output=True, text=True)
        import json
        runtime = next((b["runtime"] for b in json.loads(gv.stdout)["backends"] if b["name"] == "gvisor"), "runsc")
        rows[f"raw docker run ({runtime})"] = raw_row(argv, runtime)
        rows["brig gvisor"] = brig_row("gvisor", lang)
    if args.rows:
        keep = args.rows.split(",")
        rows = {k: v for k, v in rows.items() if any(x in k for x in keep)}
    times = {k: [] for k in rows}
    code = CODE[lang].encode()
    for k, mk in rows.items():  # one warm-up each: page cache, engine caches
        subprocess.run(mk(), input=code, capture_output=True)
    for _ in range(args.n):
        order = list(rows)
        random.shuffle(order)
        for k in order:
            t0 = time.perf_counter()
            p = subprocess.run(rows[k](), input=code, capture_output=True)
            dt = (time.perf_counter() - t0) * 1000
            if p.returncode != 0 or p.stdout.strip() != b"1":
                print(f"{k}: run failed rc={p.returncode} {p.stderr[-300:]!r}", file=sys.stderr)
                sys.exit(1)
            times[k].append(dt)
    base = {}
    print(f"{lang} `{CODE[lang].strip()}`, {args.n} runs per row, interleaved, ms")
    print(f"{'row':28} {'p50':>8} {'p95':>8} {'min':>8}  {'p50 / raw docker run (same runtime)':>10}")
    for k in rows:
        p50 = statistics.median(times[k])
        runtime = "runsc" if ("runsc" in k or "gvisor" in k) else "runc"
        if k.startswith("raw"):
            base[runtime] = p50
        ratio = p50 / base[runtime] if runtime in base else float("nan")
        print(f"{k:28} {p50:8.1f} {pct(times[k], 0.95):8.1f} {min(times[k]):8.1f}  {ratio:8.2f}x")


if __name__ == "__main__":
    main()
