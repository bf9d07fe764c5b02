#!/usr/bin/env python3
"""latency.py - end-to-end latency of one tiny run, brig against raw `docker run`.

Rows are measured INTERLEAVED in one run of the script (the machines are noisy: only ratios
within one run mean anything): each round runs every row once, in a shuffled order.

  raw docker run        `docker run --rm` with exactly the flags `brig explain` prints
  brig docker-cli       brig run --backend docker-cli (one brig process per run)
  brig docker-api       brig run --backend docker-api (one brig process per run)
  mcp docker-api cold   a run_code call to one long-lived `brig mcp`, warm_pool 0
  mcp docker-api warm   the same with the warm pool: before each timed call the pool is full
                        and idle, so the row measures "a warm container is available"
  mcp docker-api ws     a run_code call in an active workspace (made once by create_workspace
                        and passed as workspace_id to every call), warm_pool 0
  mcp docker-api ws warm  the same with the warm pool: before each timed call the workspace's
                        own box (started after the call before) is idle
  brig docker-api egress
                        brig run with an egress allowlist, its proxy up (started by the
                        warm-up run): the same run as "brig docker-api" plus the egress
                        network, the proxy's health check and the audit join of its log
  mcp docker-api warm egress
                        "mcp docker-api warm" with that allowlist: warm boxes on the egress
                        network; per call the health check, the hand-over mark and the join
  (+ the same runsc rows when the gvisor backend is available)

Before the rows, the first run with egress is timed once per backend with no proxy running: the
proxy's first start.  Afterwards `brig gc` (idle 0) removes the proxy and its networks.

The MCP rows time the request from the client's write to the response's arrival.  The warm
server runs with BRIG_DEBUG: the phase lines it logs give the measured breakdown of a warm call
(take, write, first output, end of stream, wait, inspect; remove, after the answer).

Usage: tests/bench/latency.py [-n RUNS] [--lang python|node|shell] [--rows a,b,...]
Environment: BRIG (default: ./.libs/brig with LD_LIBRARY_PATH=./.libs when built in tree, else
brig on PATH), BRIG_BACKEND_DIR.
Prints p50/p95 per row in ms, and each row's p50 as a ratio of raw docker run's (same runtime).
"""
import argparse
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from mcpclient import Mcp, structured  # noqa: E402

CODE = {"python": "print(1)\n", "node": "console.log(1)\n", "shell": "echo 1\n"}


def brig_binary():
    """The real binary, not the libtool wrapper (~100 ms of shell per exec)."""
    b = os.environ.get("BRIG")
    env = dict(os.environ)
    if b:
        return b, env
    top = os.path.abspath(os.path.join(HERE, "..", ".."))
    real = os.path.join(top, ".libs", "brig")
    if os.path.exists(real):
        env["LD_LIBRARY_PATH"] = os.path.join(top, ".libs")
        env.setdefault("BRIG_BACKEND_DIR", os.path.join(top, "backends", ".libs"))
        return real, env
    return "brig", env


BRIG, ENV = brig_binary()


def explain_argv(lang):
    """The docker argv brig would run, from `brig explain --backend docker-cli`."""
    out = subprocess.run([BRIG, "explain", "--backend", "docker-cli", "-l", lang, "-c", CODE[lang]],
                         capture_output=True, text=True, check=True, env=ENV).stdout
    lines = [l for l in out.splitlines() if l and not l.startswith("#")]
    text = " ".join(l.rstrip("\\").strip() for l in lines)
    text = text.split(" < CODE")[0]
    return shlex.split(text)


def process_row(mk, prefix=b""):
    """A row that runs one process per measurement; returns the elapsed ms."""
    def run(code):
        t0 = time.perf_counter()
        p = subprocess.run(mk(), input=prefix + code, capture_output=True, env=ENV)
        dt = (time.perf_counter() - t0) * 1000
        if p.returncode != 0 or p.stdout.strip() != b"1":
            raise RuntimeError(f"rc={p.returncode} {p.stderr[-300:]!r}")
        return dt
    return run


def raw_row(argv, runtime=None, seccomp=None):
    def mk():
        a = list(argv)
        a[a.index("--name") + 1] = "brig-bench-" + uuid.uuid4().hex[:12]
        if "--rm" not in a:
            a.insert(2, "--rm")
        if runtime:
            a[a.index("--runtime") + 1] = runtime
        if seccomp:
            a = ["seccomp=" + seccomp if x.startswith("seccomp=") else x for x in a]
        return a
    # what brig writes before the code: brig-init's header line, the box's own deadline
    return process_row(mk, prefix=b"BRIG-DEADLINE 65000\n")


def seccomp_file(tmp, isolation):
    """brig's rendered profile for this isolation level (`brig explain` names the file
    brig-seccomp.json and says to write it with `brig policy --seccomp-profile`)."""
    path = os.path.join(tmp, f"seccomp-{isolation}.json")
    with open(path, "w") as f:
        subprocess.run([BRIG, "policy", "--seccomp-profile", "--isolation", isolation],
                       stdout=f, stderr=subprocess.DEVNULL, check=True, env=ENV)
    return path


def brig_row(backend, lang, policy=None):
    extra = ["--policy", policy] if policy else []
    return process_row(lambda: [BRIG, "run", "--backend", backend, "-l", lang, *extra])


def egress_policy(tmp):
    """An allowlist no run uses (the rows time the box, not a request): its own proxy."""
    path = os.path.join(tmp, "policy-egress.json")
    with open(path, "w") as f:
        json.dump({"egress": {"allow": ["brig-bench.test:443"]},
                   "audit_log": os.path.join(tmp, "egress-audit.jsonl")}, f)
    return path


def spare_claims(tmp):
    """{backend: (one-shot runs with egress whose box took a spare holder, all of them)}, from
    the audit lines of the egress policy (the warm rows' calls are not one-shot)."""
    out = {}
    try:
        with open(os.path.join(tmp, "egress-audit.jsonl")) as f:
            lines = [json.loads(x) for x in f if x.strip()]
    except OSError:
        return out
    for line in lines:
        eg = (line.get("limits") or {}).get("egress") or {}
        if line.get("front_door") != "cli" or "net_holder_spare" not in eg:
            continue
        took, total = out.get(line.get("backend"), (0, 0))
        out[line.get("backend")] = (took + bool(eg["net_holder_spare"]), total + 1)
    return out


def proxy_first_start(backend, lang, policy):
    """ms of the first run with egress when no proxy runs (its proxy removed first)."""
    out = subprocess.run([BRIG, "explain", "--backend", backend, "--json", "--policy", policy,
                          "-l", lang, "-c", CODE[lang]], capture_output=True, text=True,
                         env=ENV, check=True).stdout
    proxy = json.loads(out)["spec"]["egress"]["proxy_name"]
    subprocess.run(["docker", "rm", "-f", proxy], capture_output=True)
    return brig_row(backend, lang, policy)(CODE[lang].encode())


class McpRow:
    """One long-lived `brig mcp`; with warm > 0 every timed call finds a full, quiet pool."""

    def __init__(self, backend, lang, warm, tmp, workspace=False, egress=None):
        self.lang, self.warm, self.backend = lang, warm, backend
        name = f"{backend}-{warm}{'-ws' if workspace else ''}{'-egress' if egress else ''}"
        policy = os.path.join(tmp, f"policy-{name}.json")
        keys = {"backend": backend, "warm_pool": warm, "workspaces": {"enabled": workspace}}
        if egress:  # the allowlist of egress_policy: the same proxy as the one-shot rows
            with open(egress) as f:
                keys.update(json.load(f))
        with open(policy, "w") as f:
            json.dump(keys, f)
        env = dict(ENV)
        self.log = os.path.join(tmp, f"mcp-{name}.log")
        if warm:
            env["BRIG_DEBUG"] = "1"
        if workspace:  # the workspaces' state files in a directory of this run's own
            env["BRIG_CACHE_DIR"] = os.path.join(tmp, f"cache-{name}")
            os.makedirs(env["BRIG_CACHE_DIR"], mode=0o700)
        self.srv = Mcp([BRIG, "mcp", "-q", "--policy", policy], env=env, stderr=open(self.log, "w"))
        self.pooled = 0
        self.calls = 0
        self.workspace = None
        if workspace:
            r = self.srv.request("tools/call", {"name": "create_workspace", "arguments": {}})
            self.workspace = structured(r)["id"]

    def ready(self):
        end = time.monotonic() + 60
        while time.monotonic() < end:
            pool = self.srv.status()["pool"]
            if self.warm == 0 or (pool["languages"][self.lang]["idle"] >= self.warm and
                                  pool["removing"] == 0 and pool["languages"][self.lang]["starting"] == 0
                                  and (not self.workspace or self.calls == 0 or
                                       (pool["workspaces"]["idle"] >= 1 and
                                        pool["workspaces"]["starting"] == 0))):
                return
            time.sleep(0.02)
        raise RuntimeError(f"the pool did not fill: {pool}")

    def __call__(self, code):
        self.ready()
        t0 = time.perf_counter()
        args = {"language": self.lang, "code": code.decode()}
        if self.workspace:
            args["workspace_id"] = self.workspace
        r = self.srv.request("tools/call", {"name": "run_code", "arguments": args})
        dt = (time.perf_counter() - t0) * 1000
        sc = structured(r)
        if sc["verdict"] != "success" or sc["stdout"].strip() != "1":
            raise RuntimeError(f"{sc}")
        if sc.get("workspace") != self.workspace:
            raise RuntimeError(f"workspace={sc.get('workspace')}, not {self.workspace}")
        # the first call in a workspace (the warm-up) is cold: its box is started after it
        if bool(sc["pooled"]) != bool(self.warm and (self.calls or not self.workspace)):
            raise RuntimeError(f"pooled={sc['pooled']} with warm_pool {self.warm}")
        self.pooled += sc["pooled"]
        self.calls += 1
        return dt

    def close(self):
        if self.workspace:
            self.srv.request("tools/call", {"name": "delete_workspace",
                                            "arguments": {"workspace_id": self.workspace}})
        self.srv.close()


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def doctor():
    r = subprocess.run([BRIG, "doctor", "--json"], capture_output=True, text=True, env=ENV)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {}


def breakdown(log):
    """Median of each phase of the warm calls, from the server's BRIG_DEBUG lines."""
    phases, host = {}, {}
    with open(log) as f:
        for line in f:
            if "pooled run phases (ms):" in line:
                for k, v in re.findall(r" ([a-z]+) (-?\d+)", line.split("phases (ms):")[1]):
                    phases.setdefault(k, []).append(int(v))
            m = re.search(r"pooled: take (\d+) ms, run_prepared (\d+) ms", line)
            if m:
                host.setdefault("take", []).append(int(m.group(1)))
                host.setdefault("run_prepared", []).append(int(m.group(2)))
    if not host:
        return None
    med = {k: statistics.median(v) for k, v in {**host, **phases}.items()}
    return (f"take {med['take']:.0f} | hand-over -> code written {med.get('write', 0):.0f} -> first "
            f"output {med.get('output', 0):.0f} -> stream end (engine saw the exit) {med.get('io', 0):.0f} "
            f"-> wait {med.get('wait', 0):.0f} -> inspect {med.get('inspect', 0):.0f} "
            f"(run_prepared {med['run_prepared']:.0f}) | after the answer: remove {med.get('delete', 0):.0f}; "
            f"ahead of the call: create {med.get('create', 0):.0f}, attach {med.get('attach', 0):.0f}, "
            f"start {med.get('start', 0):.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20, help="runs per row (default 20)")
    ap.add_argument("--lang", default="python", choices=sorted(CODE))
    ap.add_argument("--rows", default="", help="comma-separated row names (substrings) to keep")
    args = ap.parse_args()
    lang = args.lang
    tmp = tempfile.mkdtemp(prefix="brig-latency-")
    argv = explain_argv(lang)
    st = doctor()
    avail = {b["name"]: b for b in st.get("backends", []) if b.get("available")}
    keep = args.rows.split(",") if args.rows else None

    def want(name):
        return not keep or any(x in name for x in keep)

    rows = {}
    mcp_rows = []
    has_profile = any(a.startswith("seccomp=") for a in argv)
    egress = egress_policy(tmp)
    first_start = {}
    # the proxy's first start, before any row's server holds warm boxes of the proxy removed
    for backend in ("docker-api", "gvisor"):
        if backend in avail and want(f"brig {backend} egress"):
            first_start[backend] = proxy_first_start(backend, lang, egress)
    if want("raw docker run (runc)"):
        rows["raw docker run (runc)"] = raw_row(
            argv, seccomp=seccomp_file(tmp, "container") if has_profile else None)
    if want("brig docker-cli"):
        rows["brig docker-cli"] = brig_row("docker-cli", lang)
    if "docker-api" in avail:
        if want("brig docker-api"):
            rows["brig docker-api"] = brig_row("docker-api", lang)
        if want("brig docker-api egress"):
            rows["brig docker-api egress"] = brig_row("docker-api", lang, egress)
        for warm, label, ws, eg in ((0, "mcp docker-api cold", False, None),
                                    (2, "mcp docker-api warm", False, None),
                                    (2, "mcp docker-api warm egress", False, egress),
                                    (0, "mcp docker-api ws", True, None),
                                    (2, "mcp docker-api ws warm", True, None)):
            if want(label):
                rows[label] = McpRow("docker-api", lang, warm, tmp, ws, eg)
                mcp_rows.append((label, rows[label]))
                if eg:  # its proxy is the bench's: gc'ed at the end
                    first_start.setdefault("docker-api", None)
    if "gvisor" in avail:
        runtime = avail["gvisor"].get("runtime") or "runsc"
        if want(f"raw docker run ({runtime})"):
            rows[f"raw docker run ({runtime})"] = raw_row(
                argv, runtime, seccomp_file(tmp, "gvisor") if has_profile else None)
        if want("brig gvisor"):
            rows["brig gvisor"] = brig_row("gvisor", lang)
        if want("brig gvisor egress"):
            rows["brig gvisor egress"] = brig_row("gvisor", lang, egress)
        for warm, label, ws, eg in ((0, "mcp gvisor cold", False, None),
                                    (2, "mcp gvisor warm", False, None),
                                    (2, "mcp gvisor warm egress", False, egress),
                                    (0, "mcp gvisor ws", True, None),
                                    (2, "mcp gvisor ws warm", True, None)):
            if want(label):
                rows[label] = McpRow("gvisor", lang, warm, tmp, ws, eg)
                mcp_rows.append((label, rows[label]))
                if eg:  # its proxy is the bench's: gc'ed at the end
                    first_start.setdefault("gvisor", None)
    times = {k: [] for k in rows}
    code = CODE[lang].encode()
    try:
        for k, run in rows.items():  # one warm-up each: page cache, engine caches
            run(code)
        for _ in range(args.n):
            order = list(rows)
            random.shuffle(order)
            for k in order:
                try:
                    times[k].append(rows[k](code))
                except Exception as e:  # noqa: BLE001
                    print(f"{k}: run failed: {e}", file=sys.stderr)
                    sys.exit(1)
    finally:
        for _, r in mcp_rows:
            r.close()
        if first_start:  # the bench's proxies and networks: idle now
            subprocess.run([BRIG, "gc"], capture_output=True,
                           env=dict(ENV, BRIG_EGRESS_IDLE_SECONDS="0"))
    base = {}
    print(f"{lang} `{CODE[lang].strip()}`, {args.n} runs per row, interleaved, ms")
    print(f"{'row':28} {'p50':>8} {'p95':>8} {'min':>8}  p50 / raw docker run (same runtime)")
    for k in rows:
        if k.startswith("raw"):
            base["runsc" if "runsc" in k else "runc"] = statistics.median(times[k])
    for k in rows:
        p50 = statistics.median(times[k])
        runtime = "runsc" if ("runsc" in k or "gvisor" in k) else "runc"
        ratio = p50 / base[runtime] if runtime in base else float("nan")
        print(f"{k:28} {p50:8.1f} {pct(times[k], 0.95):8.1f} {min(times[k]):8.1f}  {ratio:8.2f}x")
    for backend, ms in first_start.items():
        for base_row, eg_row in ((f"brig {backend}", f"brig {backend} egress"),
                                 (f"mcp {backend} warm", f"mcp {backend} warm egress")):
            if base_row in times and eg_row in times:
                print(f"{eg_row}: p50 / same run without ({base_row}): "
                      f"{statistics.median(times[eg_row]) / statistics.median(times[base_row]):.2f}x")
        if ms is not None:
            print(f"{backend}: first run with egress, its proxy starting: {ms:.0f} ms")
    for backend, (took, total) in sorted(spare_claims(tmp).items()):
        print(f"{backend}: one-shot runs with egress whose box took a spare network holder: "
              f"{took} of {total}")
    for label, r in mcp_rows:
        if r.warm:
            b = breakdown(r.log)
            if b:
                print(f"{label}, median ms: {b}")


if __name__ == "__main__":
    main()
