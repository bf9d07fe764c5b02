"""brigtest - a tiny harness for brig's integration tests against a real dockerd.

Each test is a function; `main(tests)` runs them, prints one line per test and exits with the
automake convention: 0 all passed, 1 a failure, 77 skipped (with the reason printed: a skip is
never a silent pass).  The brig under test is $BRIG (the build's ./brig) with
$BRIG_BACKEND_DIR pointing at the built plugins; the backend comes from $BRIG_TEST_BACKEND.
"""
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


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


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


def brig(*args, code=None, stdin=None, json_out=True, lang="python", timeout=120, extra_env=None,
         backend=True):
    """Run `brig run` with the test backend; code via stdin."""
    cmd = [BRIG, "run"]
    if backend:
        cmd += backend_args()
    if lang:
        cmd += ["-l", lang]
    if json_out:
        cmd += ["--json"]
    cmd += list(args)
    data = stdin if stdin is not None else (code.encode() if isinstance(code, str) else code)
    env = dict(os.environ)
    if extra_env:
        env.update(extra_env)
    t0 = time.monotonic()
    p = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, env=env)
    return Run(p, time.monotonic() - t0)


def require_backend():
    """Skip (77, with the reason) when the backend under test is not usable on this host."""
    r = subprocess.run([BRIG, "doctor", "--json"], capture_output=True, text=True, timeout=180)
    try:
        backends = json.loads(r.stdout).get("backends", [])
    except ValueError:
        skip(f"brig doctor gave no JSON: {r.stderr.strip()[-300:]}")
    b = next((x for x in backends if x.get("name") == BACKEND), None)
    if b is None:
        skip(f"backend {BACKEND} is not installed")
    if not b.get("available"):
        skip(f"backend {BACKEND} is not available here: {b.get('reason')}")


def main(tests):
    require_engine()
    require_backend()
    if os.environ.get("BRIG_TEST_QUICK"):
        # sanitizer and distcheck builds: a few end-to-end runs, the full suite runs elsewhere
        tests = tests[:4]
    before = set(brig_containers())
    failed = 0
    for t in tests:
        t0 = time.monotonic()
        try:
            t()
            print(f"PASS {t.__name__} ({time.monotonic() - t0:.2f}s)", flush=True)
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {t.__name__} ({time.monotonic() - t0:.2f}s)", flush=True)
            traceback.print_exc(file=sys.stdout)
    time.sleep(0.5)  # let a removal racing with the last test finish
    left = set(brig_containers(orphans_only=True)) - before
    if left:
        failed += 1
        print(f"FAIL no_container_left: {sorted(left)}")
        for c in left:
            docker("rm", "-f", c)
    else:
        print("PASS no_container_left")
    print(f"{len(tests) + 1 - failed} passed, {failed} failed (backend {BACKEND}{', isolation ' + ISOLATION if ISOLATION else ''})")
    sys.exit(1 if failed else 0)
