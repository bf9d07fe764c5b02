"""brigtest - a tiny harness for brig's integration tests against a real dockerd.

Each test is a function; `main(tests)` runs them and reports in TAP, which automake's
tap-driver counts test by test (Makefile.am): "ok N - name", "not ok N - name" with the
traceback as "# " lines, "ok N - name # SKIP reason", and the plan "1..N" last, so that a run
cut short (no plan) is an ERROR, never a pass.  `skip(reason)` inside a test skips that test
only (the FAILs before it still count); outside a test (a suite that cannot run here: no
dockerd, no such backend) it skips the whole suite: "1..0 # SKIP reason".  A skip is counted
and printed with its reason, never a silent pass; scripts/test-all fails on a skip it does not
expect.  The brig under test is $BRIG (the build's ./brig) with $BRIG_BACKEND_DIR pointing at
the built plugins; the backend comes from $BRIG_TEST_BACKEND.
"""
import contextlib
import json
import os
import subprocess
import sys
import time
import traceback

# Every process this suite starts is remembered: a leaked container is one whose owner (the
# brig.owner label, "PID:STARTTIME") is one of ours and gone.  Containers of other brig
# processes on the host (other suites running in parallel, some of which orphan containers on
# purpose to test `brig gc`) are not this suite's business.
OUR_PIDS = set()
_Popen = subprocess.Popen


class _TrackingPopen(_Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        OUR_PIDS.add(self.pid)


subprocess.Popen = _TrackingPopen

BRIG = os.environ.get("BRIG", "brig")
BACKEND = os.environ.get("BRIG_TEST_BACKEND", "docker-cli")
if BACKEND == "docker-cli" and "BRIG_POLICY" not in os.environ:
    # the docker CLI cannot set the engine's masked paths, so brig refuses it for the default
    # policy (mask_host_details); its suites run with the operator's explicit opt-out
    import atexit
    import tempfile
    _fd, _path = tempfile.mkstemp(prefix="brig-cli-policy-", suffix=".json")
    with os.fdopen(_fd, "w") as _f:
        json.dump({"mask_host_details": False}, _f)
    atexit.register(os.unlink, _path)
    os.environ["BRIG_POLICY"] = _path
ISOLATION = os.environ.get("BRIG_TEST_ISOLATION", "")
DOCKER = os.environ.get("DOCKER", "docker")
# This suite's name as make check knows it (controls.py under docker-api: controls-docker-api).
SUITE = f"{os.path.splitext(os.path.basename(sys.argv[0]))[0]}-{BACKEND}"
# What a stage of scripts/test-all leaves out, to keep CI short: whole suites ("SUITE") or tests
# ("SUITE:test_name"), each reported as a skip with the reason, never silently dropped.
CUT = os.environ.get("BRIG_TEST_CUT", "").split()
CUT_WHY = os.environ.get("BRIG_TEST_CUT_WHY", "cut from this run (BRIG_TEST_CUT)")


class Skip(Exception):
    """Raised by skip() inside a test: that test is skipped, the others still run."""


_in_test = False


def skip(reason):
    """Skip the running test (inside a test body) or the whole suite (anywhere else)."""
    if _in_test:
        raise Skip(reason)
    print(f"1..0 # SKIP {reason}", flush=True)
    sys.exit(0)


class Tap:
    """TAP lines for one suite: numbered results as they happen, diagnostics as "# " lines,
    the plan at the end (tests/integration/faults.py reports through it too)."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, name, secs=None, directive=""):
        self.n += 1
        took = f" ({secs:.2f}s)" if secs is not None else ""
        print(f"ok {self.n} - {name}{took}{directive}", flush=True)

    def not_ok(self, name, secs=None, detail=""):
        self.n += 1
        self.failed += 1
        took = f" ({secs:.2f}s)" if secs is not None else ""
        print(f"not ok {self.n} - {name}{took}", flush=True)
        self.diag(detail)

    def skipped(self, name, reason):
        self.ok(name, directive=f" # SKIP {reason}")

    @staticmethod
    def diag(text):
        for line in str(text).rstrip("\n").splitlines():
            print(f"# {line}", flush=True)

    def run(self, fn, name=None):
        """Run one test function and report it; True when it passed.  A test marked with
        known_bug_if() reports "# TODO reason": its failure is an expected one (automake:
        XFAIL), its pass an unexpected one (XPASS, counted as a failure: the bug is fixed,
        remove the mark)."""
        global _in_test
        name = name or fn.__name__
        if f"{SUITE}:{name}" in CUT:
            self.skipped(name, CUT_WHY)
            return True
        bug = getattr(fn, "known_bug", None)
        todo = f" # TODO {bug}" if bug else ""
        t0 = time.monotonic()
        _in_test = True
        try:
            fn()
        except Skip as e:
            self.skipped(name, str(e))
            return True
        except Exception:  # noqa: BLE001 - report every failure and go on
            took = time.monotonic() - t0
            if bug:
                self.n += 1
                print(f"not ok {self.n} - {name} ({took:.2f}s){todo}", flush=True)
                self.diag(traceback.format_exc())
                return True
            self.not_ok(name, took, traceback.format_exc())
            return False
        finally:
            _in_test = False
        self.ok(name, time.monotonic() - t0, todo)
        if bug:
            self.failed += 1  # XPASS
        return not bug

    def plan(self):
        print(f"1..{self.n}", flush=True)


def known_bug_if(condition, reason):
    """Mark a test as failing because of a known product bug (when `condition` holds): an
    expected failure, listed with its reason, never a skip.  scripts/test-all fails on one it
    does not list in EXPECTED_XFAILS."""
    def mark(fn):
        if condition:
            fn.known_bug = reason
        return fn
    return mark


def measure(name, value):
    """A figure for the bounds in the suites (their p99s come from these lines in the logs of
    repeated `make check -j2` runs): "# measure NAME VALUE"."""
    print(f"# measure {name} {value}", flush=True)


def remove_audit_log(path):
    """An audit log and the lock file brig keeps beside it (PATH.lock)."""
    for f in (path, path + ".lock"):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass


def docker(*args, timeout=30):
    return subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=timeout)


def require_engine():
    try:
        r = docker("version", "--format", "{{.Server.Version}}", timeout=15)
    except (OSError, subprocess.TimeoutExpired) as e:
        skip(f"docker CLI unusable: {e}")
    if r.returncode != 0:
        skip(f"dockerd is not reachable: {r.stderr.strip()}")


def owner_alive(owner):
    """brig.owner is "PID:STARTTIME:PIDNS" (field 22 of /proc/PID/stat, the pid namespace)."""
    try:
        pid, start = owner.split(":")[:2]
        with open(f"/proc/{int(pid)}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[19] == start
    except (ValueError, OSError, IndexError):
        return False


def owner_pid(owner):
    try:
        return int(owner.split(":")[0])
    except ValueError:
        return None


def brig_containers(orphans_only=False):
    """Containers labelled brig=1; with orphans_only, the leaks of THIS suite: owned by a brig
    process it started that is gone."""
    r = docker("ps", "-a", "--filter", "label=brig=1", "--format", '{{.ID}} {{.Label "brig.owner"}}')
    out = []
    for line in r.stdout.splitlines():
        cid, _, owner = line.partition(" ")
        if not cid:
            continue
        if orphans_only and (owner_pid(owner) not in OUR_PIDS or owner_alive(owner)):
            continue
        out.append(cid)
    return out


def running_box_of(pid, timeout=60):
    """The running container of the brig process `pid` (its brig.owner label), once it runs."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = docker("ps", "--filter", "label=brig=1", "--filter", "status=running", "--format",
                   '{{.Names}} {{.Label "brig.owner"}} {{.Label "brig.role"}}'
                   ' {{.Label "brig.probe"}}')
        for line in r.stdout.splitlines():
            # a workspace's holder has no owner; a box's network holder has brig.role
            name, owner, *rest = line.split() + [""]
            if owner.startswith(f"{pid}:") and not any(rest):  # not gVisor's smoke box
                return name
        time.sleep(0.1)
    raise AssertionError(f"brig (pid {pid}) started no container within {timeout} s")


def container_exists(name):
    return docker("inspect", "--type", "container", name).returncode == 0


class Run:
    def __init__(self, proc, elapsed):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.elapsed = elapsed
        self.result = None
        if self.stdout.lstrip().startswith(b"{"):
            try:
                self.result = json.loads(self.stdout)
            except ValueError:
                pass

    def __getitem__(self, k):
        assert self.result is not None, f"no JSON result; rc={self.rc} stderr={self.stderr[-800:]!r}"
        return self.result[k]

    def __repr__(self):
        res = dict(self.result or {})
        for k in ("stdout", "stderr"):
            if isinstance(res.get(k), str) and len(res[k]) > 300:
                res[k] = res[k][:300] + f"...({len(res[k])} chars)"
        return f"<rc={self.rc} {self.elapsed:.2f}s result={res or None} stderr={self.stderr[-600:]!r}>"


def backend_args():
    args = ["--backend", BACKEND]
    if ISOLATION:
        args += ["--isolation", ISOLATION]
    return args


# A test that is not about the wall-time limit gives its program the policy's maximum (30 s)
# rather than the 5 s default: a box that starts slowly while a parallel suite loads the two
# cores (make check -j2) must not turn a check of something else into a timeout.  Tests of the
# limit itself pass -t/--timeout, or wall_time=None for the policy's default.
RELAXED_TIMEOUT = "30"


def brig(*args, code=None, stdin=None, json_out=True, lang="python", timeout=120, extra_env=None,
         backend=True, wall_time=RELAXED_TIMEOUT):
    """Run `brig run` with the test backend; code via stdin."""
    cmd = [BRIG, "run"]
    if backend:
        cmd += backend_args()
    if lang:
        cmd += ["-l", lang]
    if json_out:
        cmd += ["--json"]
    if wall_time and not any(a in ("-t", "--timeout") or str(a).startswith("--timeout=")
                             for a in args):
        cmd += ["--timeout", wall_time]
    cmd += list(args)
    data = stdin if stdin is not None else (code.encode() if isinstance(code, str) else code)
    env = dict(os.environ)
    if extra_env:
        env.update(extra_env)
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, env=env)
    return Run(p, time.monotonic() - t0)


def bail_out(reason):
    """Stop the suite as broken (tap-driver: ERROR), for what must not be taken as a skip."""
    print(f"Bail out! {reason}", flush=True)
    sys.exit(1)


def bridge_gateway():
    """The default bridge's gateway (this host), or None when dockerd runs without one."""
    r = docker("network", "inspect", "bridge", "--format",
               "{{range .IPAM.Config}}{{.Gateway}}{{end}}")
    return (r.stdout.strip() or None) if r.returncode == 0 else None


def runtime_registered(name):
    """Does dockerd have the OCI runtime `name` registered (docker info)?"""
    r = docker("info", "--format", "{{json .Runtimes}}")
    try:
        return r.returncode == 0 and name in json.loads(r.stdout)
    except ValueError:
        return False


def require_backend():
    """Skip (with the reason) when the backend under test is not usable on this host - but a
    gvisor backend whose runtime dockerd has registered (scripts/setup-host did it) must work:
    brig's own probe saying no there is a failure, not a skip."""
    r = subprocess.run([BRIG, "doctor", "--json"], capture_output=True, text=True, timeout=180)
    try:
        backends = json.loads(r.stdout).get("backends", [])
    except ValueError:
        bail_out(f"brig doctor gave no JSON: {r.stderr.strip()[-300:]}")
    b = next((x for x in backends if x.get("name") == BACKEND), None)
    if b is None:
        bail_out(f"backend {BACKEND} is not installed in {os.environ.get('BRIG_BACKEND_DIR')}")
    if not b.get("available"):
        why = f"backend {BACKEND} is not available here: {b.get('reason')}"
        runtime = os.environ.get("BRIG_GVISOR_RUNTIME", "runsc-seccomp")
        if BACKEND == "gvisor" and runtime_registered(runtime):
            bail_out(f"{why} - yet dockerd has the runtime {runtime} registered")
        skip(why)


def no_container_left(before):
    """The last check of every suite: no container of a brig process it started is left."""
    time.sleep(0.5)  # let a removal racing with the last test finish
    left = set(brig_containers(orphans_only=True)) - before
    for c in left:
        docker("rm", "-f", c)
    assert not left, f"containers left behind: {sorted(left)}"


_locks = []


def hold_locks():
    """Take the suite's locks (BRIG_TEST_LOCKS: names, e.g. "gvisor egress"), held until exit.

    Wrappers name them rather than running under flock(1), so that a suite a stage cuts reports
    its skip at once instead of first waiting for another suite's lock.  One gVisor suite runs
    at a time (Makefile.am); one egress suite at a time (each ends with `brig gc`)."""
    import fcntl
    for name in os.environ.get("BRIG_TEST_LOCKS", "").split():
        path = os.path.join(os.environ.get("top_builddir", "."), "tests", "integration", f"{name}.lock")
        f = open(path, "a")
        fcntl.flock(f, fcntl.LOCK_EX)
        _locks.append(f)


@contextlib.contextmanager
def exclusive(name):
    """Hold the lock NAME for one test's heavy part, so that two suites running in parallel
    (make -j) do not overlap it.  Taken inside a suite's own locks, never before them."""
    import fcntl
    path = os.path.join(os.environ.get("top_builddir", "."), "tests", "integration", f"{name}.lock")
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def main(tests):
    if SUITE in CUT:
        skip(CUT_WHY)
    hold_locks()
    require_engine()
    require_backend()
    before = set(brig_containers())
    tap = Tap()
    tap.diag(f"backend {BACKEND}{', isolation ' + ISOLATION if ISOLATION else ''}")
    for t in tests:
        tap.run(t)
    tap.run(lambda: no_container_left(before), "no_container_left")
    tap.plan()
    tap.diag(f"{tap.n - tap.failed} of {tap.n} passed")
    sys.exit(1 if tap.failed else 0)
