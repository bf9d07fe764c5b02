#!/usr/bin/env python3
"""outlive.py - a box never outlives brig by more than its limit plus a grace.

brig enforces a run's wall time itself, but a brig killed with SIGKILL (the OOM killer, a client
that hard-kills its MCP server) cannot.  Every box therefore carries its own deadline (brig-init,
PID 1 of the box, reads it from the first line of stdin), a warm box ends when its brig's attach
stream closes, and the next brig to start removes what the dead one left.  Under docker-cli,
docker-api and gvisor:

  run_sigkilled  `brig run` SIGKILLed mid-run: its box stops within the limit plus the grace;
                 the next brig start leaves nothing of it behind
  mcp_sigkilled  `brig mcp` (with its warm pool) SIGKILLed mid-call, as MCP clients do to a
                 server that is slow to exit: its reaper removes the running box and the idle
                 warm boxes (not merely stopped: gone) without waiting for another brig
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcpclient  # noqa: E402
from brigtest import BRIG, docker, main  # noqa: E402

BACKENDS = ("docker-cli", "docker-api", "gvisor")
LIMIT_S = 6
GRACE_S = 3        # SPEC_BOX_GRACE_MS
SLACK_S = 6        # the engine's start and stop under load on 2 CPUs (measured p99 ~2 s)
MCP_LIMIT_S = 20   # the call's: its box would end by itself only well after REAP_S
REAP_S = 10        # a SIGKILLed `brig mcp`'s reaper removes its boxes (measured 0.3-1.3 s)
SPIN = "import time\nprint('up', flush=True)\nwhile True:\n    time.sleep(0.2)\n"


def policy(backend, **keys):
    if backend == "docker-cli":
        keys["mask_host_details"] = False  # the CLI cannot set masked paths
    keys["backend"] = backend
    f = tempfile.NamedTemporaryFile("w", prefix="brig-outlive-", suffix=".json", delete=False)
    json.dump(keys, f)
    f.close()
    return f.name


def boxes_of(pid, running_only):
    """Names of the boxes whose brig.owner is process `pid`."""
    args = ["ps", "--filter", "label=brig=1", "--format",
            '{{.Names}} {{.Label "brig.owner"}}']
    if not running_only:
        args.insert(1, "-a")
    r = docker(*args)
    return [l.split()[0] for l in r.stdout.splitlines()
            if len(l.split()) == 2 and l.split()[1].startswith(f"{pid}:")]


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


def next_start_reaps(backend, pol, owner_pid):
    """A new brig (a fresh reap stamp: its own cache directory) removes what owner_pid left."""
    cache = tempfile.mkdtemp(prefix="brig-outlive-cache-")
    os.chmod(cache, 0o700)
    try:
        p = subprocess.run([BRIG, "run", "--policy", pol, "-l", "shell", "-c", "echo ok"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, BRIG_CACHE_DIR=cache))
        assert p.returncode == 0 and p.stdout == "ok\n", p
        left = boxes_of(owner_pid, running_only=False)
        assert not left, f"{backend}: left behind after the next brig start: {left}"
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def check_run(backend):
    pol = policy(backend)
    p = subprocess.Popen([BRIG, "run", "--policy", pol, "-t", str(LIMIT_S), "-l", "python",
                          "-c", SPIN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        # brig run prints the output at the end: the running box is the sign
        wait_for(lambda: boxes_of(p.pid, running_only=True), 60, "the box runs")
        time.sleep(1)  # the program is up
        t_up = time.monotonic()
        p.kill()
        p.wait()
        wait_for(lambda: not boxes_of(p.pid, running_only=True),
                 LIMIT_S + GRACE_S + SLACK_S, f"{backend}: the box stopped by itself")
        took = time.monotonic() - t_up
        print(f"  {backend}: brig run SIGKILLed; its box stopped {took:.1f} s later "
              f"(limit {LIMIT_S} s + grace {GRACE_S} s from its start)")
        next_start_reaps(backend, pol, p.pid)
    finally:
        if p.poll() is None:
            p.kill()
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the docker client of docker-cli
        except OSError:
            pass
        os.unlink(pol)


def check_mcp(backend):
    warm = 0 if backend == "docker-cli" else 1
    pol = policy(backend, warm_pool=warm)
    m = mcpclient.Mcp([BRIG, "mcp", "-q", "--policy", pol], stderr=subprocess.DEVNULL)
    try:
        if warm:  # the pool's boxes are up: they must end too
            wait_for(lambda: len(boxes_of(m.pid, running_only=True)) >= 3, 120,
                     "the warm pool filled")
        rid = m.send_request("tools/call", {"name": "run_code", "arguments": {
            "language": "python", "code": SPIN, "timeout_seconds": MCP_LIMIT_S}})
        wait_for(lambda: len(boxes_of(m.pid, running_only=True)) >= 1 + 3 * warm, 60,
                 "the call's box runs")
        time.sleep(1)  # the program is up
        t_kill = time.monotonic()
        os.kill(m.pid, signal.SIGKILL)
        m.p.wait()
        # removed, not only stopped (a box stops by itself; only the reaper removes it), and
        # long before the call's box would end by itself (docker-cli's --rm would remove it)
        wait_for(lambda: not boxes_of(m.pid, running_only=False), REAP_S,
                 f"{backend}: the server's reaper removed all its boxes")
        print(f"  {backend}: brig mcp SIGKILLed mid-call (warm pool {warm}); its reaper "
              f"removed all its boxes {time.monotonic() - t_kill:.1f} s later")
        assert rid not in m.responses
    finally:
        if m.p.poll() is None:
            m.p.kill()
        os.unlink(pol)


def test_run_sigkilled_docker_cli():
    check_run("docker-cli")


def test_run_sigkilled_docker_api():
    check_run("docker-api")


def test_run_sigkilled_gvisor():
    check_run("gvisor")


def test_mcp_sigkilled_docker_cli():
    check_mcp("docker-cli")


def test_mcp_sigkilled_docker_api():
    check_mcp("docker-api")


def test_mcp_sigkilled_gvisor():
    check_mcp("gvisor")


if __name__ == "__main__":
    main([test_run_sigkilled_docker_cli, test_run_sigkilled_docker_api, test_run_sigkilled_gvisor,
          test_mcp_sigkilled_docker_cli, test_mcp_sigkilled_docker_api,
          test_mcp_sigkilled_gvisor])
