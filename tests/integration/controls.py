#!/usr/bin/env python3
"""The controls suite: each hardening control proven inside a real container.

One suite for every backend: $BRIG_TEST_BACKEND names it (docker-cli, docker-api, gvisor).
"""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import brigtest
from brigtest import (BACKEND, BRIG, Run, backend_args, bridge_gateway, brig, container_exists,
                      docker, known_bug_if, main, running_box_of, skip)

GVISOR = BACKEND == "gvisor" or os.environ.get("BRIG_TEST_ISOLATION") == "gvisor"

# Timing bounds, in seconds, per backend: 1.5 x the p99 measured by tests/bench/bounds.py
# (n=20 per backend, the gVisor controls suite looping beside it as in make check -j2, on the
# 2-core lab host while other jobs kept its load average at 8-42), rounded up to 0.5 s.  The
# p99s (docker-cli, docker-api, gvisor):
#   timeout   -t 2 `while True: pass`: brig's wall time past the deadline 1.82, 2.73, 1.53;
#             duration_ms past it 1.31, 1.65, 1.05 (docker-cli since brig-init and the per-box
#             uid: 2.07 seen in CI, so its bound is 3.0)
# On the core (brig-init as PID 1, per-box uids) CI measured docker-cli's `yes` at 2.15-6.89 s
# and its timeout wall time past the deadline up to 2.89 s: docker-cli's bounds follow (the
# docker CLI's own client and its `docker rm -f` dominate there).
#   flood     10 MiB written at once: brig's wall time 8.49, 6.98, 3.23
#   yes       `yes`: brig's wall time 2.39, 1.47, 3.22
#   forkbomb  -t 4 shell fork bomb: wall time past the deadline 3.06, 0.97, 5.68
# CI (build stage, controls-gvisor's OOM test running beside) then measured docker-cli's timeout
# past the deadline at 2.85, 3.1, 3.69 and 3.95 s (duration_ms; the wall time 0.4 s more), and a
# loop of 80 runs beside that suite here: the engine took up to 1.3 s from `docker rm -f`'s kill
# to the box's death, 0.8 s more went to starting that CLI, the rest to the removal, which
# duration_ms includes.  docker-cli's timeout bounds are 1.5 x that (6.0 s).
# A bound well below the 30 s the program was given still proves the limit stopped it at once.
BOUND = {
    "timeout_wall": {"docker-cli": 6.5, "docker-api": 4.5, "gvisor": 2.5},
    "timeout_duration": {"docker-cli": 6.0, "docker-api": 2.5, "gvisor": 2.0},
    "flood_wall": {"docker-cli": 13.0, "docker-api": 10.5, "gvisor": 5.0},
    "yes_wall": {"docker-cli": 9.0, "docker-api": 2.5, "gvisor": 5.0},
    "forkbomb_wall": {"docker-cli": 5.0, "docker-api": 3.0, "gvisor": 8.5},  # docker-api: 2.09 in CI (core)
}


def bound(name):
    return BOUND[name]["gvisor" if GVISOR else BACKEND]
# gVisor's fixed identity (runsc 20221219): uname -r and -v inside every sandbox
GVISOR_RELEASE, GVISOR_VERSION = "4.4.0", "#1 SMP Sun Jan 10 15:06:54 PST 2016"


def test_hello_python():
    r = brig(code="print('hello from the box')")
    assert r.rc == 0, r
    assert r["verdict"] == "success" and r["exit_code"] == 0, r
    assert r["stdout"] == "hello from the box\n", r
    assert r["backend"] == BACKEND, r
    assert r["runtime"] in ("runc", "runsc", "runsc-seccomp"), r
    assert r["language"] == "python" and r["image"].startswith("brig/python:"), r


def test_hello_node_and_shell():
    r = brig(code="console.log(6 * 7)", lang="node")
    assert r["verdict"] == "success" and r["stdout"] == "42\n", r
    r = brig(code="echo $((6 * 7)); echo err >&2; exit 4", lang="shell")
    assert r.rc == 4 and r["verdict"] == "error" and r["exit_code"] == 4, r
    assert r["stdout"] == "42\n" and r["stderr"] == "err\n", r


BOX_UIDS = range(2000000000, 2000001024)  # policy uid_range's default


def test_identity_own_uid():
    """Every box runs as a uid of its own from uid_range (group 65534), named "sandbox" in the
    image, and the result says which."""
    uids = set()
    for _ in range(3):
        r = brig(code="id -u; id -g; id -G; whoami", lang="shell")
        assert r["verdict"] == "success", r
        uid, gid, groups, name = r["stdout"].split()
        assert int(uid) in BOX_UIDS and gid == groups == "65534" and name == "sandbox", r
        assert r["user"] == f"{uid}:65534", r
        uids.add(uid)
    # leases start at a random uid: three runs of one range of 1024 rarely share one
    assert len(uids) >= 2, uids


# Box A takes every inotify instance and the whole POSIX message-queue budget its uid has, and
# holds them; box B, running meanwhile, must still get both.  With one uid for every box (the
# old 65534) B's inotify_init and mq_open fail with EMFILE: the kernel keeps both budgets per
# user, whatever the container.
QUOTA_HOG = r"""
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
queues = 0
while queues < 200:
    q = libc.mq_open(b"/hog%d" % queues, os.O_RDWR | os.O_CREAT, 0o600, None)
    if q < 0:
        break
    libc.close(q)  # the queue stays (until unlinked); only its bytes count
    queues += 1
mq_errno = ctypes.get_errno()
r, w = os.pipe()
for _ in range(4):  # nofile is 64 per process: four processes to reach max_user_instances
    if os.fork() == 0:
        n = 0
        while libc.inotify_init() >= 0:
            n += 1
        os.write(w, b"%d\n" % n)
        time.sleep(HOLD)
        os._exit(0)
os.close(w)
took = sum(int(x) for x in os.fdopen(r).read().split())
print("mq", queues, mq_errno, "inotify", took)
"""
QUOTA_VICTIM = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
fd = libc.inotify_init()
print("inotify", "ok" if fd >= 0 else os.strerror(ctypes.get_errno()))
q = libc.mq_open(b"/victim", os.O_RDWR | os.O_CREAT, 0o600, None)
print("mq", "ok" if q >= 0 else os.strerror(ctypes.get_errno()))
"""


def inotify_holders():
    """{uid: inotify instances} of the host's processes (runc boxes' processes are host
    processes; gVisor's live in its sentry and are not seen here)."""
    held = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            uid = os.stat(f"/proc/{pid}").st_uid
            n = sum(1 for fd in os.listdir(f"/proc/{pid}/fd")
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify")
        except OSError:
            continue
        if n:
            held[uid] = held.get(uid, 0) + n
    return held


def test_kernel_user_budgets_not_shared():
    limit = int(open("/proc/sys/fs/inotify/max_user_instances").read())
    hold = 12
    cmd = [BRIG, "run", *backend_args(), "-l", "python", "--json", "--timeout", str(hold + 10)]
    hog = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    hog.stdin.write(QUOTA_HOG.replace("HOLD", str(hold)).encode())
    hog.stdin.close()
    hog.stdin = None  # communicate() below has nothing to send
    # ready when some box uid holds its whole inotify budget (runc); gVisor's boxes are not
    # visible from the host: there a few seconds after its container runs
    deadline = time.monotonic() + 60
    ready = False
    while time.monotonic() < deadline and not ready and hog.poll() is None:
        if GVISOR:
            owners = docker("ps", "--filter", "label=brig=1", "--format",
                            '{{.Label "brig.owner"}}').stdout.split()
            ready = any(o.startswith(f"{hog.pid}:") for o in owners) and (time.sleep(5) or True)
        else:
            ready = any(n >= limit and (uid in BOX_UIDS or uid == 65534)
                        for uid, n in inotify_holders().items())
        time.sleep(0.2)
    if not ready:
        hog.kill()
        out, err = hog.stdout.read(), hog.stderr.read()
        hog.wait()
        raise AssertionError(f"the hog never held its inotify budget: {out[-800:]!r} {err[-800:]!r}")
    victim = brig(code=QUOTA_VICTIM, timeout=60)
    out, err = hog.communicate(timeout=hold + 60)
    hr = json.loads(out)
    assert hr["verdict"] == "success", hr
    mq, queues, mq_errno, _, took = hr["stdout"].split()
    if not GVISOR:
        # the hog really had the budgets: all the instances, and mq_open refused it at last
        assert int(took) >= limit - 4 and int(queues) < 200, hr
    assert victim["verdict"] == "success", victim
    assert victim["stdout"] == "inotify ok\nmq ok\n", (victim, hr["stdout"])
    assert hr["user"] != victim["user"], (hr["user"], victim["user"])


def test_no_network():
    code = """
import socket
for host, port in (("1.1.1.1", 53), ("8.8.8.8", 443), ("10.0.0.1", 80)):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
        print("CONNECTED", host)
    except OSError as e:
        print("blocked", e.errno)
try:
    socket.getaddrinfo("example.com", 80)
    print("RESOLVED")
except OSError:
    print("dns blocked")
"""
    r = brig(code=code)
    assert r["verdict"] == "success", r
    assert "CONNECTED" not in r["stdout"] and "RESOLVED" not in r["stdout"], r
    assert r["stdout"].count("blocked") == 4, r


def test_read_only_root():
    """The root file system is mounted read-only.  A write to a root-owned directory as uid
    65534 fails on a writable root too (EACCES), so that alone proves nothing, and the images
    have no directory uid 65534 could otherwise write outside /tmp.  The mount's own flags must
    say ro, and under runc the kernel answers EROFS, which it checks before the permissions
    (gVisor answers EACCES either way: brig(1), GVISOR)."""
    code = """
import errno
for p in ("/x", "/etc/x", "/usr/bin/x", "/usr/lib/x"):
    try:
        open(p, "w").write("x")
        print("WROTE", p)
    except OSError as e:
        print("denied", p, errno.errorcode[e.errno])
root = [line.split() for line in open("/proc/self/mountinfo") if line.split()[4] == "/"]
print("mount /", root[-1][5].split(",")[0])
"""
    r = brig(code=code)
    want = "EACCES" if GVISOR else "EROFS"
    assert r["stdout"].splitlines() == [
        f"denied {p} {want}" for p in ("/x", "/etc/x", "/usr/bin/x", "/usr/lib/x")] + \
        ["mount / ro"], r


def test_tmp_writable_but_noexec():
    code = """
printf '#!/bin/sh\\necho RAN\\n' > /tmp/s.sh && echo written
chmod +x /tmp/s.sh
/tmp/s.sh; echo "rc=$?"
cp /bin/busybox /tmp/bb 2>/dev/null && /tmp/bb echo RAN2; echo "rc2=$?"
"""
    r = brig(code=code, lang="shell")
    out = r["stdout"]
    assert "written" in out and "RAN" not in out, r
    assert "rc=126" in out, r


def test_setuid_fails():
    code = """
import os
for f, a in ((os.setuid, 0), (os.setgid, 0), (os.seteuid, 0)):
    try:
        f(a)
        print("BECAME ROOT")
    except PermissionError:
        print("EPERM")
"""
    r = brig(code=code)
    assert r["stdout"].split() == ["EPERM"] * 3, r


def test_no_capabilities():
    r = brig(code="grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status", lang="shell")
    lines = r["stdout"].strip().splitlines()
    # gVisor has no ambient capabilities at all: no CapAmb line, PR_CAP_AMBIENT is EINVAL
    names = ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:"] + ([] if GVISOR else ["CapAmb:"])
    assert [line.split()[0] for line in lines] == names, r
    for line in lines:
        assert line.split()[1] == "0000000000000000", r
    # no ambient capability either: PR_CAP_AMBIENT_IS_SET is 0 for every one under runc;
    # gVisor has no ambient capabilities at all and refuses the question (EINVAL)
    code = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
answers = set()
for cap in range(41):
    rc = libc.prctl(47, 1, cap, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET
    answers.add((rc, ctypes.get_errno() if rc < 0 else 0))
print(sorted(answers))
"""
    r = brig(code=code)
    assert r["verdict"] == "success", r
    assert r["stdout"] == ("[(-1, 22)]\n" if GVISOR else "[(0, 0)]\n"), r


def test_no_new_privileges():
    r = brig(code="grep NoNewPrivs /proc/self/status || echo none", lang="shell")
    # gVisor does not show the line; under runc it must be 1.
    assert "NoNewPrivs:\t1" in r["stdout"] or (GVISOR and "none" in r["stdout"]), r


def test_fork_bomb_contained():
    r = brig("--timeout", "4", code="f(){ f | f & }; f; sleep 10", lang="shell", timeout=60)
    assert r.result is not None, r
    assert r["verdict"] in ("timeout", "error", "success", "oom"), r
    assert r["verdict"] != "sandbox_error", r
    brigtest.measure(f"forkbomb_over_s/{BACKEND}", f"{r.elapsed - 4:.2f}")
    assert r.elapsed < 4 + bound("forkbomb_wall"), r
    assert not container_exists(r["container"]), r


# Children until fork() fails; each becomes a small dash blocked on a pipe, so that they cost
# little memory (under gVisor too) and all end when the parent closes it.
FORK_UNTIL_REFUSED = """
import os
r, w = os.pipe()
kids = []
try:
    for i in range(200):
        pid = os.fork()
        if pid == 0:
            os.dup2(r, 0)
            os.close(r)
            os.close(w)
            os.execv("/bin/sh", ["sh", "-c", "read x"])
        kids.append(pid)
except OSError as e:
    print("fork failed after", len(kids), e.errno)
os.close(w)
for pid in kids:
    os.waitpid(pid, 0)
n = len(kids)
"""


def test_pids_limit_enforced():
    """fork() fails with EAGAIN at the policy's 64 processes: python itself and 63 children
    (runc: the pids cgroup; gVisor: RLIMIT_NPROC inside the sandbox, the wrapper shell counted
    on top).  The run itself succeeds: no OOM, no timeout, nothing else stops it.  Each child
    becomes a small dash waiting on a pipe: 63 python children would cost gVisor more than the
    256 MiB memory limit (measured: the whole sandbox OOM-killed), which is not what this
    tests."""
    r = brig("--timeout", "20", code=FORK_UNTIL_REFUSED + 'print("forked", n)\n', timeout=60)
    assert r["verdict"] == "success", r
    lines = r["stdout"].splitlines()
    assert len(lines) == 2 and lines[0].startswith("fork failed after ") and \
        lines[0].endswith(" 11"), r  # EAGAIN
    n = int(lines[0].split()[3])
    assert 60 <= n <= 63 and lines[1] == f"forked {n}", r


def test_process_budget_usable():
    """The budget the policy promises is really there: under gVisor the engine's pids limit
    must leave room for gVisor's own host threads (a panic would be sandbox_error).  Sized for
    runsc's ptrace platform beside a parallel suite (tests/bench/bounds.py, budget): 60 forked
    children took 8.0 s p50 / 10.9 s max under gVisor (load 7-13), the shell loop 0.09 s per
    iteration idle and 0.1 s beside a gVisor suite - at 300 iterations it ran past 30 s, so it
    makes 50 (4.5 s idle), which still crashes gVisor's kernel at the policy's bare 64 (as do
    the 60 children; BRIG_GVISOR_PIDS_LIMIT=64 shows it).  30 s each, the policy's maximum."""
    fork60 = """
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
"""
    r = brig("--timeout", "30", code=fork60, timeout=90)
    assert r["verdict"] == "success" and r["stdout"] == "forked 60\n", r
    brigtest.measure(f"budget_fork60_s/{BACKEND}", f"{r['duration_ms'] / 1000:.2f}")
    many = "i=0; while [ $i -lt 50 ]; do ls / >/dev/null; echo $i | wc -c >/dev/null; " \
           "i=$((i+1)); done; echo done $i\n"
    r = brig("--timeout", "30", code=many, lang="shell", timeout=90)
    assert r["verdict"] == "success" and r["stdout"] == "done 50\n", r
    brigtest.measure(f"budget_loop50_s/{BACKEND}", f"{r['duration_ms'] / 1000:.2f}")
    workers = """
const { Worker } = require('worker_threads');
let done = 0;
for (let i = 0; i < 2; i++) {
  const w = new Worker('let x = 0; for (let i = 0; i < 1e6; i++) x += i;', { eval: true });
  w.on('exit', () => { if (++done === 2) console.log('workers done'); });
}
"""
    r = brig("--timeout", "30", code=workers, lang="node", timeout=90)
    assert r["verdict"] == "success" and r["stdout"] == "workers done\n", r


def test_memory_hog_is_oom():
    code = "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n"
    r = brig("--timeout", "20", code=code, timeout=60)
    assert r["verdict"] == "oom", r
    assert r["exit_code"] == 137 and r["oom_killed"] is True, r
    assert r.rc == 137, r


def test_oom_verdicts_at_once():
    """Several boxes at the memory limit at once, beside a box that exits 137 by itself (its
    shell passes on a child's SIGKILL): every hog is "oom", the other stays "error".  Under load
    dockerd 20.10 can see the OOM event after the exit and leave State.OOMKilled false (measured
    under gVisor: 4 of 24); brig then finds the event in the engine's log, by the container's
    name - never another box's."""
    hog = ("x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n", "python")
    own_kill = ("sh -c 'kill -9 $$'; exit $?", "shell")
    runs = {}

    def run(key, code_lang):
        code, lang = code_lang
        runs[key] = brig("--timeout", "30", code=code, lang=lang, timeout=120)

    # Five boxes thrashing at their limit are slow to be OOM-killed (cgroup v1 reclaims their
    # page cache first): beside another backend's rounds a hog took over 30 s (measured), so
    # the suites take turns here.
    with brigtest.exclusive("memory"):
        for rnd in range(3):
            jobs = [(f"hog{rnd}.{i}", hog) for i in range(5)] + [(f"kill{rnd}", own_kill)]
            threads = [threading.Thread(target=run, args=job) for job in jobs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    for key, r in sorted(runs.items()):
        if key.startswith("hog"):
            assert r["verdict"] == "oom" and r["exit_code"] == 137 and r["oom_killed"] is True, \
                (key, r)
        else:
            assert r["verdict"] == "error" and r["exit_code"] == 137, (key, r)
            assert r["oom_killed"] is False and r["notice"] is None, (key, r)


def test_infinite_loop_times_out():
    """Killed at the 2 s deadline: not before (duration_ms >= 2000, the deadline counting from
    the start request), and not much after (BOUND)."""
    r = brig("--timeout", "2", code="while True: pass", timeout=60)
    assert r["verdict"] == "timeout" and r["timed_out"] is True, r
    assert r.rc == 124, r
    brigtest.measure(f"timeout_over_s/{BACKEND}", f"{r.elapsed - 2:.2f}")
    assert 2000 <= r["duration_ms"] <= 2000 + 1000 * bound("timeout_duration"), r
    assert r.elapsed < 2 + bound("timeout_wall"), r
    assert not container_exists(r["container"]), r


def test_flood_truncated_quickly():
    code = "import sys\nsys.stdout.write('x' * (10 * 1024 * 1024))\n"
    r = brig(code=code, timeout=60)
    assert r["verdict"] == "output_limit" and r["output_truncated"] is True, r
    assert len(r["stdout"]) + len(r["stderr"]) == 131072, (len(r["stdout"]), r.rc)
    brigtest.measure(f"flood_s/{BACKEND}", f"{r.elapsed:.2f}")
    assert r.elapsed < bound("flood_wall"), r
    assert r.rc == 141, r
    assert not container_exists(r["container"]), r


def test_yes_flood_killed():
    r = brig(code="yes", lang="shell", timeout=60)
    assert r["verdict"] == "output_limit" and len(r["stdout"]) == 131072 and r.rc == 141, r
    brigtest.measure(f"yes_s/{BACKEND}", f"{r.elapsed:.2f}")
    assert r.elapsed < bound("yes_wall"), r
    assert not container_exists(r["container"]), r


def test_oversized_input_refused():
    code = "#" * (65536 + 1)
    # No container may start: point the engine clients at nothing; a refusal must come first.
    env = {"DOCKER_HOST": "unix:///nonexistent.sock", "BRIG_DOCKER": "/bin/false"}
    r = brig(code=code, extra_env=env, timeout=30)
    assert r.rc == 2, r
    assert b"max_input_bytes" in r.stderr, r
    # --json: the refusal is the JSON object on stdout, never an empty stdout
    assert r.result == {"error": {"status": "refused", "message": r.stderr.decode()[6:].strip(),
                                  "transient": False, "exit_code": 2}}, r
    r = brig(code="#" * 65536 + "\nprint('at the limit')")
    assert r.rc == 2, r  # 65536 + the print line is over
    r = brig(code="#" * (65536 - 40) + "\nprint('at the limit')\n")
    assert r["verdict"] == "success" and "at the limit" in r["stdout"], r


def test_dev_shm_bounded():
    r = brig(code="df -k /dev/shm | tail -1", lang="shell")
    size_kb = int(r["stdout"].split()[1])
    assert size_kb <= 16 * 1024, r


def test_tmp_size_bounded():
    r = brig("--timeout", "20", code="dd if=/dev/zero of=/tmp/big bs=1M count=100 2>&1; ls -l /tmp/big",
             lang="shell", timeout=60)
    size = int(r["stdout"].split()[-5]) if "big" in r["stdout"] else 0
    assert size <= 64 * 1024 * 1024, r
    assert "No space left" in r["stdout"], r


def test_timeout_above_max_refused():
    r = brig("--timeout", "31", code="print(1)")
    assert r.rc == 2 and b"max_timeout_seconds" in r.stderr, r


def test_plain_output_and_summary():
    r = brig(code="print('out'); import sys; print('err', file=sys.stderr); sys.exit(3)",
             json_out=False)
    assert r.rc == 3, r
    assert r.stdout == b"out\n", r
    assert r.stderr.startswith(b"err\n"), r
    assert b"[brig] error (exit 3)" in r.stderr and BACKEND.encode() in r.stderr, r


def test_code_from_file(tmp="/tmp/brig-it-hello.js"):
    with open(tmp, "w") as f:
        f.write("console.log('from file')\n")
    try:
        p = subprocess.run([BRIG, "run", *backend_args(), "--json", tmp], capture_output=True,
                           timeout=60)
        r = Run(p, 0)
        assert r["language"] == "node" and r["stdout"] == "from file\n", r
    finally:
        os.unlink(tmp)


def check_signal(sig, rc):
    """`sig` to brig while its program runs: exit `rc` (128 + the signal), verdict cancelled,
    the box removed."""
    cmd = [BRIG, "run", *backend_args(), "-l", "shell", "--json", "-t", "30", "-c", "sleep 60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        box = running_box_of(p.pid)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == rc, (p.returncode, err)
    res = json.loads(out)
    assert res["verdict"] == "cancelled" and res["container"] == box, res
    assert not container_exists(box), res


def test_sigint_removes_container():
    check_signal(signal.SIGINT, 130)


def test_sigterm_removes_container():
    check_signal(signal.SIGTERM, 143)


def test_sighup_removes_container():
    check_signal(signal.SIGHUP, 129)


# ---- operator overrides and non-default limits, seen inside a real box ----------------------


class Listener:
    """A TCP listener on the bridge's gateway (this host): what boxes send to it is kept."""

    def __init__(self, host):
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.got = []
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.serve, daemon=True)
        self.t.start()

    def serve(self):
        while not self.stop.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            with c:
                c.settimeout(5)
                try:
                    self.got.append(c.recv(100).decode(errors="replace"))
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.t.join(5)
        self.sock.close()


NET_PROBE = """
import socket
ifaces = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
print("interfaces", " ".join(i for i in ifaces if i != "lo") or "none")
routes = [line.split() for line in open("/proc/net/route").readlines()[1:]]
print("default route", any(r[1] == "00000000" for r in routes))
s = socket.socket()
s.settimeout(5)
try:
    s.connect(("{gw}", {port}))
    s.sendall(b"{token}")
    print("sent")
except OSError as e:
    print("connect failed", e.errno)
"""


def check_network(args, want_warning):
    """A box run with `args` has an interface besides lo, a default route, and reaches a
    listener this test opens on the bridge's gateway; the warning only for a loosening flag."""
    gw = bridge_gateway()
    if not gw:
        skip("dockerd has no default bridge network (started with --bridge=none)")
    lst = Listener(gw)
    try:
        token = secrets.token_hex(8)
        r = brig(*args, code=NET_PROBE.format(gw=gw, port=lst.port, token=token))
        if GVISOR:
            # runsc is registered with --network=none: the box is refused, never run without
            # the network it was given (and nothing reaches the listener)
            assert r.rc == 125 and r.result and "error" in r.result, r
            assert "cannot be honoured under gVisor" in r.result["error"]["message"], r
            time.sleep(0.5)
            assert token not in lst.got, lst.got
            return
        out = r["stdout"].splitlines()
        assert r["verdict"] == "success" and len(out) == 3, r
        assert out[0].startswith("interfaces ") and out[0] != "interfaces none", r
        assert out[1:] == ["default route True", "sent"], r
        end = time.monotonic() + 5
        while token not in lst.got and time.monotonic() < end:
            time.sleep(0.05)
        assert token in lst.got, (lst.got, r)
        warned = b"warning: --allow-network true loosens the policy's network" in r.stderr
        assert warned == want_warning, r.stderr
        # and the same program without: only lo, no route, nothing arrives, no warning
        token2 = secrets.token_hex(8)
        r = brig(code=NET_PROBE.format(gw=gw, port=lst.port, token=token2))
        out = r["stdout"].splitlines()
        assert out[:2] == ["interfaces none", "default route False"], r
        assert out[2].startswith("connect failed "), r
        assert token2 not in lst.got and b"warning" not in r.stderr, (lst.got, r)
    finally:
        lst.close()


# gVisor is registered with runsc --network=none (scripts/setup-host; FINDINGS: its own network
# stack cannot start in a Docker network namespace here), so a gVisor box never has a network.
def test_allow_network_flag():
    """--allow-network: the box gets Docker's bridge network, and brig warns that the operator
    loosened the policy.  gVisor (registered with --network=none) refuses it with the reason."""
    check_network(["--allow-network"], want_warning=True)


def test_network_true_in_policy():
    """network: true in the operator's policy file: the same network, and no warning (nothing
    was overridden)."""
    check_network(["--policy", policy_file(network=True)], want_warning=False)


HOG = "x = bytearray({mb} << 20)\nx[::4096] = b'1' * len(x[::4096])\nprint('allocated {mb} MiB')\n"


def test_memory_flag_reaches_the_box():
    """--memory: 160 MiB fits the default 256 MiB, not --memory 128m (oom); 400 MiB does not
    fit the default, but fits --memory 512m, which loosens the policy and says so."""
    r = brig(code=HOG.format(mb=160))
    assert r["verdict"] == "success" and r["stdout"] == "allocated 160 MiB\n", r
    r = brig("--memory", "128m", code=HOG.format(mb=160))
    assert r["verdict"] == "oom" and r["oom_killed"] is True, r
    assert b"warning" not in r.stderr, r.stderr  # a tighter value is no loosening
    r = brig(code=HOG.format(mb=400))
    assert r["verdict"] == "oom", r
    r = brig("--memory", "512m", code=HOG.format(mb=400))
    assert r["verdict"] == "success" and r["stdout"] == "allocated 400 MiB\n", r
    assert b"warning: --memory 512m loosens the policy's memory_mb" in r.stderr, r.stderr


# The limits of the box's own cgroup, as the program sees them (runc; cgroup v1 or v2).
CGROUP_LIMITS = """
def first(*paths):
    for p in paths:
        try:
            return open(p).read().split()
        except OSError:
            pass
    return ["?"]
mem = first("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max")
quota = first("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
period = first("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
if quota == ["?"]:
    quota, period = first("/sys/fs/cgroup/cpu.max")[:1], first("/sys/fs/cgroup/cpu.max")[1:]
print("memory", mem[0])
print("cpus", int(quota[0]) / int(period[0]))
"""


def engine_limits_of_running_box(args, code, lang="python"):
    """Run `brig run ARGS`; while its box runs, the engine's HostConfig of it."""
    cmd = [BRIG, "run", *backend_args(), "-l", lang, "--json", "-t", "30", *args, "-c", code]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        box = running_box_of(p.pid)
        r = docker("inspect", "--format", "{{json .HostConfig}}", box)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return json.loads(r.stdout), json.loads(out), err


def test_cpus_flag_reaches_the_box():
    """--cpus 0.5: the box's CPU quota.  Under runc the program reads it from its own cgroup;
    gVisor shows the program no cgroup, so there the engine's record of the running box (what
    runsc was given) is the evidence."""
    if GVISOR:
        hc, res, err = engine_limits_of_running_box(["--cpus", "0.5"], "sleep 3", "shell")
        assert hc["NanoCpus"] == 500_000_000 and res["verdict"] == "success", (hc, res, err)
        hc, res, err = engine_limits_of_running_box([], "sleep 3", "shell")
        assert hc["NanoCpus"] == 1_000_000_000, hc
        return
    r = brig("--cpus", "0.5", "--memory", "192m", code=CGROUP_LIMITS)
    assert r["stdout"] == f"memory {192 << 20}\ncpus 0.5\n", r
    assert b"warning" not in r.stderr, r.stderr
    r = brig("--cpus", "2", code=CGROUP_LIMITS)
    assert r["stdout"] == f"memory {256 << 20}\ncpus 2.0\n", r
    assert b"warning: --cpus 2 loosens the policy's cpus" in r.stderr, r.stderr


LIMITS_PROBE = """
import os, resource
print("nofile", *resource.getrlimit(resource.RLIMIT_NOFILE))
st = os.statvfs("/tmp")
print("tmp MiB", st.f_blocks * st.f_frsize >> 20)
""" + FORK_UNTIL_REFUSED


def test_policy_limits_reach_the_box():
    """Non-default limits from the operator's policy file, seen by the program: open files,
    /tmp's size, processes, and the output cap (exactly that many bytes kept)."""
    policy = {"nofile": 128, "tmpfs_mb": 16, "pids_limit": 32, "max_output_bytes": 4096}
    path = policy_file(**policy)
    r = brig("--policy", path, code=LIMITS_PROBE)
    out = r["stdout"].splitlines()
    assert r["verdict"] == "success" and out[:2] == ["nofile 128 128", "tmp MiB 16"], r
    # pids_limit 32: python and 31 children at most (gVisor: the wrapper shell on top)
    assert out[2].startswith("fork failed after ") and out[2].endswith(" 11"), r
    assert 28 <= int(out[2].split()[3]) <= 31, r
    r = brig("--policy", path, code="print('y' * 10000)")
    assert r["verdict"] == "output_limit" and len(r["stdout"]) == 4096, r
    assert b"warning" not in r.stderr, r.stderr


HOST_DETAILS = r"""
import os
def size(p):
    try:
        with open(p, "rb") as f:
            return len(f.read())
    except OSError as e:
        return type(e).__name__
for p in ("/proc/cmdline", "/proc/stat", "/proc/loadavg", "/proc/diskstats", "/proc/interrupts",
          "/sys/kernel/notes", "/sys/kernel/vmcoreinfo"):
    print(p, size(p))
try:
    print("cmdline_text", open("/proc/cmdline").read().strip()[:60] or "-")
except OSError as e:
    print("cmdline_text", type(e).__name__)
print("pressure", sorted(os.listdir("/proc/pressure")) if os.path.isdir("/proc/pressure") else "-")
print("cgroup", sorted({l.strip().split(":", 2)[2] for l in open("/proc/self/cgroup")}))
import resource
print("core", resource.getrlimit(resource.RLIMIT_CORE))
"""


def host_details(out):
    lines = dict(l.split(" ", 1) for l in out.splitlines())
    return lines


def test_host_details_hidden():
    """The box reads nothing of the host's own (runc): the VM's kernel command line, host-wide
    counters that also tell of other boxes, the kernel's identity files, the host's cgroup
    paths are empty; core dumps are off.  gVisor shows its own /proc; the docker CLI cannot
    mask paths, so brig refuses docker-cli unless the operator opts out (mask_host_details)."""
    if BACKEND == "docker-cli":
        p = subprocess.run([BRIG, "run", "--backend", "docker-cli", "--policy",
                            policy_file(mask_host_details=True), "-l", "shell", "-c",
                            "echo RAN"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 125 and "RAN" not in p.stdout, p
        assert "masked paths" in p.stderr and "mask_host_details" in p.stderr, p.stderr
        # explain shows the box and says that run refuses it, in its text and its JSON
        for fmt in ([], ["--json"]):
            x = subprocess.run([BRIG, "explain", "--backend", "docker-cli", *fmt, "--policy",
                                policy_file(mask_host_details=True), "-l", "shell", "-c",
                                "echo RAN"], capture_output=True, text=True, timeout=60)
            why = json.loads(x.stdout)["refused"] if fmt else x.stdout.split("# refused: ")[-1]
            assert x.returncode == 0 and "`brig run` refuses this box" in why, x
            assert "masked paths (mask_host_details)" in why, why
        x = subprocess.run([BRIG, "explain", "--backend", "docker-cli", "--json", "-l", "shell",
                            "-c", "echo RAN"], capture_output=True, text=True, timeout=60)
        assert x.returncode == 0 and json.loads(x.stdout)["refused"] is None, x  # its opt-out
        r = brig(code=HOST_DETAILS)  # the suite's policy opts out: the host shows
        assert r["verdict"] == "success", r
        d = host_details(r["stdout"])
        assert d["/proc/cmdline"] != "0" and d["core"] == "(0, 0)", r
        return
    r = brig(code=HOST_DETAILS)
    assert r["verdict"] == "success", r
    d = host_details(r["stdout"])
    assert d["core"] == "(0, 0)", d
    if GVISOR:
        # gVisor's own /proc: its own fixed command line, not the host's
        with open("/proc/cmdline") as f:
            assert f.read().strip()[:60] != d["cmdline_text"], d
        return
    for p in ("/proc/cmdline", "/proc/stat", "/proc/loadavg", "/proc/diskstats",
              "/proc/interrupts", "/sys/kernel/notes", "/sys/kernel/vmcoreinfo"):
        assert d[p] == "0", (p, d)  # masked: reads as empty
    assert d["pressure"] == "[]", d  # an empty, read-only directory
    assert d["cgroup"] == "['/']", d  # its own cgroup namespace: no container ids


def test_kernel_is_the_backends():
    """gVisor's kernel under gvisor, the host's otherwise: no test passes on runc by mistake."""
    r = brig(code="uname -r; uname -v; cat /proc/version; dmesg 2>&1 | head -2", lang="shell")
    assert r["verdict"] == "success", r
    lines = r["stdout"].splitlines()
    host = os.uname()
    if GVISOR:
        # dmesg prints "Starting gVisor..." where syslog(2) is allowed; brig's seccomp profile
        # refuses it (EPERM), so gVisor's fixed uname is the proof
        assert lines[0] == GVISOR_RELEASE and lines[1] == GVISOR_VERSION, r
        assert host.release not in r["stdout"], r
        assert "gVisor" in r["stdout"] or "Operation not permitted" in r["stdout"], r
        assert r["runtime"].startswith("runsc"), r
    else:
        assert lines[0] == host.release and lines[1] == host.version, r
        assert r["runtime"] == "runc", r


def test_unshare_user_namespace_refused():
    """The seccomp profile holds on every backend: under gVisor only because the runtime is
    runsc-seccomp (runsc --oci-seccomp); plain runsc would let this succeed."""
    code = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)  # CLONE_NEWUSER
print(rc, os.strerror(ctypes.get_errno()) if rc else "UNSHARED")
print(open("/proc/self/status").read().split("Seccomp:")[1].split()[0])
"""
    r = brig(code=code)
    assert r["verdict"] == "success", r
    assert r["stdout"].splitlines() == ["-1 Operation not permitted", "2"], r


def test_program_exit_2_is_error():
    """Exit 2 is the program's own, even under gVisor, where a sentry panic also exits 2."""
    r = brig(code="import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(2)")
    assert r.rc == 2 and r["verdict"] == "error" and r["exit_code"] == 2, r
    assert r["stdout"] == "out\n" and r["stderr"] == "err\n", r
    r = brig(code="printf partial >&2; exit 2", lang="shell")
    assert r["verdict"] == "error" and r["exit_code"] == 2 and r["stderr"] == "partial", r


def test_program_killing_pid1_is_not_a_sandbox_crash():
    """The program can kill the box's PID 1 (gVisor gives it no signal protection; Linux does):
    the box then ends 137 without brig-init's line, which brig reports as the box's status with
    a notice - never as gVisor's kernel crashing (only exit 2 without the line is that)."""
    r = brig(code="kill -9 1 2>/dev/null; sleep 0.5; exit 5", lang="shell")
    if GVISOR:
        assert r["verdict"] == "error" and r["exit_code"] == 137 and r["error"] is None, r
        assert "did not see the program end" in (r["notice"] or ""), r
    else:
        assert r["verdict"] == "error" and r["exit_code"] == 5 and r["notice"] is None, r


def test_init_marker_survives_nonblocking_stderr():
    """The program shares brig-init's stderr: made non-blocking and filled, brig-init's last
    write used to fail with EAGAIN and the marker was lost (under gVisor an exit 2 then read
    as the kernel crashing).  brig-init itself, in a pid namespace of its own (it kills every
    process of its namespace at the end), with a pipe this test reads only after the program
    has exited 2: the marker must still come, last."""
    init = os.path.join(os.environ.get("top_builddir", "."), "backends", "brig-init")
    prog = ("import fcntl, os\n"
            "fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)\n"
            "try:\n"
            "    while True:\n"
            "        os.write(2, b'e' * 4096)\n"
            "except BlockingIOError:\n"
            "    pass\n"
            "os._exit(2)\n")
    p = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", init, "--marker",
                          "brig-test:exited", "--", "python3", "-c", prog],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"BRIG-DEADLINE 20000\n")
    p.stdin.close()
    time.sleep(1.5)  # the program fills the pipe and exits; brig-init writes its line
    err = p.stderr.read()
    assert p.wait(timeout=30) == 2, err[-200:]
    assert err.endswith(b"brig-test:exited\n"), err[-200:]


def test_program_stops_reading_its_code():
    """A program that exits before it has read all of its code ends with its own status: under
    gVisor, whose PID 1 has no signal protection, brig-init's next write to the program's pipe
    used to kill it with SIGPIPE (the box ended 141)."""
    pol = policy_file(max_input_bytes=1048576)
    code = "exit 3\n" + "# padding past the pipe's 64 KiB\n" * 16384
    r = brig("--policy", pol, code=code, lang="shell")
    assert r["verdict"] == "error" and r["exit_code"] == 3, r


def policy_file(**keys):
    """A policy file with these keys (removed at exit); for docker-cli with the operator's
    opt-out of masked paths, which the docker CLI cannot set (as brigtest's default policy)."""
    if BACKEND == "docker-cli":
        keys.setdefault("mask_host_details", False)
    fd, path = tempfile.mkstemp(prefix="brig-policy-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(keys, f)
    import atexit
    atexit.register(os.unlink, path)
    return path


def test_sandbox_panic_is_sandbox_error():
    """A real sentry panic: the engine's pids limit lowered to 48 (the policy's
    gvisor_pids_limit), where gVisor's own threads alone nearly fill it; a few forks tip it
    over.  Usually runsc exits 2 (a sandbox_error); twice in ten CI runs the sandbox died with
    137 before the program printed anything, which brig cannot tell from a program that killed
    its PID 1: then the box's status, with the notice that brig-init did not see the end."""
    code = """
import os
print("start", flush=True)
for i in range(8):
    if os.fork() == 0:
        os._exit(0)
    os.wait()
print("end")
"""
    r = brig("--policy", policy_file(gvisor_pids_limit=48), code=code)
    if r["exit_code"] == 137:
        assert r["verdict"] == "error" and "did not see the program end" in r["notice"], r
        assert r["stdout"] == "", r
    else:
        assert r.rc == 125 and r["verdict"] == "sandbox_error", r
        assert r["exit_code"] == -1 and "sentry" in r["error"] and "48" in r["error"], r
    assert not container_exists(r["container"]), r


def test_single_big_write_complete():
    """One write of 100 KB (under the 128 KiB cap) arrives whole: gVisor answers a big write to
    a full pipe with a short count, which unbuffered Python would drop."""
    r = brig(code="import sys\nsys.stdout.write('y' * 100000)\n")
    assert r["verdict"] == "success" and len(r["stdout"]) == 100000, (len(r["stdout"]), r)
    r = brig(code="import os\nprint(os.environ.get('PYTHONUNBUFFERED'))")
    assert r["stdout"] == ("None\n" if GVISOR else "1\n"), r


def creates_of(pid, since, until):
    """Container create events of the brig process `pid` (its brig.owner label) in [since, until]."""
    r = docker("events", "--since", f"{since:.3f}", "--until", f"{until:.3f}", "--filter",
               "type=container", "--filter", "event=create", "--format", "{{json .Actor.Attributes}}")
    assert r.returncode == 0, r.stderr
    attrs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return [a for a in attrs if a.get("brig.owner", "").startswith(f"{pid}:")]


def brig_gvisor_runtime(args, runtime, json_out=True):
    """`brig run ARGS` with the policy's gvisor_runtime; (rc, stdout, stderr, creates)."""
    cmd = [BRIG, "run", "--policy", policy_file(gvisor_runtime=runtime), *args, "-l", "shell",
           "-c", "echo RAN"] + (["--json"] if json_out else [])
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=60)
    time.sleep(0.2)  # the engine's event clock
    return p.returncode, out.decode(), err.decode(), creates_of(p.pid, t0 - 1, time.time())


def test_gvisor_unavailable_fails_closed():
    """runsc missing (a runtime name dockerd does not know): every way of asking for gVisor
    refuses with exit 125 and the reason, and no container is created at all."""
    for args in (["--isolation", "gvisor"], ["--backend", "gvisor"],
                 ["--backend", "gvisor", "--isolation", "gvisor"]):
        rc, out, err, creates = brig_gvisor_runtime(args, "runsc-nope")
        assert rc == 125, (args, rc, out, err)
        assert "runsc-nope" in err and "not registered" in err and "setup-host" in err, err
        # --json: stdout is the error object (nothing ran, so no result)
        assert "RAN" not in out and json.loads(out)["error"]["status"] == "unavailable", \
            (args, out)
        assert creates == [], (args, creates)
    # explain refuses the same way, and a weaker backend never satisfies the minimum
    nope = policy_file(gvisor_runtime="runsc-nope")
    p = subprocess.run([BRIG, "explain", "--policy", nope, "--isolation", "gvisor", "-l", "shell",
                        "-c", "id"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 125 and "runsc-nope" in p.stderr, p
    p = subprocess.run([BRIG, "run", "--backend", "docker-api", "--isolation", "gvisor", "-l",
                        "shell", "-c", "echo RAN"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 125 and "RAN" not in p.stdout and "weaker" in p.stderr, p
    # the MCP server: an error result, nothing ran
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import mcpclient
    m = mcpclient.brig_mcp(BRIG, "--policy", nope, "--isolation", "gvisor",
                           stderr=subprocess.DEVNULL)
    try:
        r = m.request("tools/call", {"name": "run_code",
                                     "arguments": {"language": "shell", "code": "echo RAN"}})
        assert r["result"]["isError"] is True, r
        text = r["result"]["content"][0]["text"]
        assert "runsc-nope" in text and "nothing ran" in text, r
    finally:
        m.close()


def test_gvisor_impostor_refused():
    """A runtime that is registered but is not gVisor (runc under the gvisor backend) fails the
    smoke test; the smoke container is the only container, and it is removed."""
    rc, out, err, creates = brig_gvisor_runtime(["--backend", "gvisor"], "runc")
    assert rc == 125 and "host's own kernel" in err and "RAN" not in out, (rc, out, err)
    assert [c.get("brig.probe") for c in creates] == ["1"], creates
    assert not container_exists(creates[0]["name"]), creates


def test_gvisor_probe_cached_across_processes():
    """A passed smoke test is reused by the next brig process (no probe container), keyed on the
    runtime's registration: another runtime, TTL 0, a file others may write, or `brig doctor`
    probe afresh; a failed probe is never remembered."""
    d = tempfile.mkdtemp(prefix="brig-cache-")
    f = os.path.join(d, "probe-cache")

    def run(runtime="runsc-seccomp", **extra):
        env = dict(os.environ, BRIG_CACHE_DIR=d, BRIG_DEBUG="1", **extra)
        t0 = time.time()
        proc = subprocess.Popen([BRIG, "run", "--policy", policy_file(gvisor_runtime=runtime),
                                 "--backend", "gvisor", "-l", "shell", "-c", "echo RAN"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
        out, err = proc.communicate(timeout=60)
        time.sleep(0.2)  # the engine's event clock
        probes = [c for c in creates_of(proc.pid, t0 - 1, time.time()) if c.get("brig.probe")]
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), len(probes)

    try:
        p, probes = run()
        assert p.returncode == 0 and p.stdout == "RAN\n" and probes == 1, (p, probes)
        st = os.stat(f)
        assert st.st_mode & 0o777 == 0o600 and st.st_uid == os.geteuid(), oct(st.st_mode)
        text = open(f).read()
        assert "runtime runsc-seccomp " in text and "--oci-seccomp" in text, text
        assert re.search(r"^passed \d+$", text, re.M), text
        p, probes = run()
        assert p.returncode == 0 and probes == 0, (p, probes)
        assert "passed its smoke test earlier" in p.stderr and "cached" in p.stderr, p.stderr
        # another registration (runsc without --oci-seccomp) is another key: probed, and
        # refused - the cached verdict of runsc-seccomp does not vouch for it - and not stored
        p, probes = run("runsc")
        assert p.returncode == 125 and "Seccomp: 0" in p.stderr and probes == 1, (p, probes)
        assert "runtime runsc " not in open(f).read()
        p, probes = run()
        assert p.returncode == 0 and probes == 0, (p, probes)
        # TTL 0: no cache at all
        p, probes = run(BRIG_GVISOR_PROBE_TTL="0")
        assert p.returncode == 0 and probes == 1, (p, probes)
        # a file others could have written is not trusted (and is replaced)
        os.chmod(f, 0o666)
        p, probes = run()
        assert p.returncode == 0 and probes == 1, (p, probes)
        assert os.stat(f).st_mode & 0o777 == 0o600
        # an impostor (runc) fails its smoke test whatever is cached
        p, probes = run("runc")
        assert p.returncode == 125 and "RAN" not in p.stdout and probes == 1, (p, probes)
        # doctor always checks for real
        env = dict(os.environ, BRIG_CACHE_DIR=d, BRIG_DEBUG="1")
        doc = subprocess.run([BRIG, "doctor"], capture_output=True, text=True, env=env, timeout=60)
        assert "smoke box" in doc.stderr and "earlier" not in doc.stderr, doc.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_explain_gvisor_shows_runtime():
    p = subprocess.run([BRIG, "explain", "--isolation", "gvisor", "-l", "python", "-c", "1"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    assert "# backend: gvisor (gvisor isolation, runtime runsc-seccomp)" in p.stdout, p.stdout
    assert '"Runtime": "runsc-seccomp"' in p.stdout, p.stdout
    # brig-init is PID 1 and writes gVisor's exit marker (no shell wrapper)
    assert '"Name": "nproc"' in p.stdout and '"/.brig-init"' in p.stdout, p.stdout
    assert '"--marker"' in p.stdout and "/bin/sh" not in p.stdout, p.stdout


def test_missing_image_is_sandbox_error():
    tmp = policy_file(images={"python": "brig/does-not-exist:1"})
    r = brig("--policy", tmp, code="print(1)", timeout=60)
    assert r.rc == 125, r
    assert r["verdict"] == "sandbox_error", r
    assert "brig/does-not-exist:1" in r["error"], r


if __name__ == "__main__":
    main([
        test_hello_python,
        test_hello_node_and_shell,
        test_identity_own_uid,
        test_kernel_user_budgets_not_shared,
        test_no_network,
        test_read_only_root,
        test_tmp_writable_but_noexec,
        test_setuid_fails,
        test_no_capabilities,
        test_no_new_privileges,
        test_fork_bomb_contained,
        test_pids_limit_enforced,
        test_process_budget_usable,
        test_memory_hog_is_oom,
        test_oom_verdicts_at_once,
        test_infinite_loop_times_out,
        test_flood_truncated_quickly,
        test_yes_flood_killed,
        test_oversized_input_refused,
        test_dev_shm_bounded,
        test_tmp_size_bounded,
        test_timeout_above_max_refused,
        test_plain_output_and_summary,
        test_code_from_file,
        test_sigint_removes_container,
        test_sigterm_removes_container,
        test_sighup_removes_container,
        test_missing_image_is_sandbox_error,
        test_host_details_hidden,
        test_allow_network_flag,
        test_network_true_in_policy,
        test_memory_flag_reaches_the_box,
        test_cpus_flag_reaches_the_box,
        test_policy_limits_reach_the_box,
        test_kernel_is_the_backends,
        test_unshare_user_namespace_refused,
        test_program_exit_2_is_error,
        test_program_killing_pid1_is_not_a_sandbox_crash,
        test_init_marker_survives_nonblocking_stderr,
        test_program_stops_reading_its_code,
        test_single_big_write_complete,
        test_gvisor_unavailable_fails_closed,
        test_gvisor_impostor_refused,
    ] + ([
        test_sandbox_panic_is_sandbox_error,
        test_explain_gvisor_shows_runtime,
        test_gvisor_probe_cached_across_processes,
    ] if GVISOR else []))
