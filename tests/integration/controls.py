#!/usr/bin/env python3
"""The controls suite: each hardening control proven inside a real container.

One suite for every backend: $BRIG_TEST_BACKEND names it (docker-cli, docker-api, gvisor).
"""
import os
import signal
import subprocess
import time

from brigtest import BACKEND, BRIG, Run, backend_args, brig, container_exists, main

GVISOR = BACKEND == "gvisor" or os.environ.get("BRIG_TEST_ISOLATION") == "gvisor"


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


def test_identity_65534():
    r = brig(code="id -u; id -g; id -G", lang="shell")
    assert r["stdout"].split() == ["65534", "65534", "65534"], r


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
    code = """
for p in ("/x", "/etc/x", "/usr/bin/x", "/home/x"):
    try:
        open(p, "w").write("x")
        print("WROTE", p)
    except OSError as e:
        print("denied", p, e.errno)
"""
    r = brig(code=code)
    assert "WROTE" not in r["stdout"] and r["stdout"].count("denied") == 4, r


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
    assert len(lines) == 5, r
    for line in lines:
        assert line.split()[1] == "0000000000000000", r


def test_no_new_privileges():
    r = brig(code="grep NoNewPrivs /proc/self/status || echo none", lang="shell")
    # gVisor does not show the line; under runc it must be 1.
    assert "NoNewPrivs:\t1" in r["stdout"] or (GVISOR and "none" in r["stdout"]), r


def test_fork_bomb_contained():
    r = brig("--timeout", "4", code="f(){ f | f & }; f; sleep 10", lang="shell", timeout=60)
    assert r.result is not None, r
    assert r["verdict"] in ("timeout", "error", "success", "oom"), r
    assert r["verdict"] != "sandbox_error", r
    assert r.elapsed < 4 + 6, r
    assert not container_exists(r["container"]), r


def test_pids_limit_enforced():
    code = """
import os, time
n = 0
try:
    for i in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e.errno)
print("forked", n)
"""
    r = brig("--timeout", "10", code=code, timeout=60)
    assert r["verdict"] != "sandbox_error", r
    assert "fork failed" in r["stdout"] or r["verdict"] == "oom", r


def test_memory_hog_is_oom():
    code = "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n"
    r = brig("--timeout", "20", code=code, timeout=60)
    assert r["verdict"] == "oom", r
    assert r["exit_code"] == 137 and r["oom_killed"] is True, r
    assert r.rc == 137, r


def test_infinite_loop_times_out():
    r = brig("--timeout", "2", code="while True: pass", timeout=60)
    assert r["verdict"] == "timeout" and r["timed_out"] is True, r
    assert r.rc == 124, r
    assert r.elapsed < 2 + 3, r  # deadline plus a small slack
    assert not container_exists(r["container"]), r


def test_flood_truncated_quickly():
    code = "import sys\nsys.stdout.write('x' * (10 * 1024 * 1024))\n"
    r = brig(code=code, timeout=60)
    assert r["verdict"] == "output_limit" and r["output_truncated"] is True, r
    assert len(r["stdout"]) + len(r["stderr"]) == 131072, (len(r["stdout"]), r.rc)
    assert r.elapsed < 5, r
    assert r.rc == 141, r
    assert not container_exists(r["container"]), r


def test_yes_flood_killed():
    r = brig(code="yes", lang="shell", timeout=60)
    assert r["verdict"] == "output_limit", r
    assert r.elapsed < 5, r


def test_oversized_input_refused():
    code = "#" * (65536 + 1)
    # No container may start: point the engine clients at nothing; a refusal must come first.
    env = {"DOCKER_HOST": "unix:///nonexistent.sock", "BRIG_DOCKER": "/bin/false"}
    r = brig(code=code, extra_env=env, timeout=30)
    assert r.rc == 2, r
    assert b"max_input_bytes" in r.stderr, r
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


def test_sigint_removes_container():
    cmd = [BRIG, "run", *backend_args(), "-l", "python", "--json", "-c",
           "import time\nprint('started', flush=True)\ntime.sleep(60)"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (p.returncode, err)
    import json
    res = json.loads(out)
    assert res["verdict"] == "cancelled", res
    assert not container_exists(res["container"]), res


def test_sigterm_removes_container():
    cmd = [BRIG, "run", *backend_args(), "-l", "shell", "--json", "-c", "sleep 60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 143, (p.returncode, err)
    import json
    res = json.loads(out)
    assert not container_exists(res["container"]), res


def test_missing_image_is_sandbox_error(tmp="/tmp/brig-it-policy.json"):
    with open(tmp, "w") as f:
        f.write('{"images": {"python": "brig/does-not-exist:1"}}')
    try:
        r = brig("--policy", tmp, code="print(1)", timeout=60)
        assert r.rc == 125, r
        assert r["verdict"] == "sandbox_error", r
        assert "brig/does-not-exist:1" in r["error"], r
    finally:
        os.unlink(tmp)


if __name__ == "__main__":
    main([
        test_hello_python,
        test_hello_node_and_shell,
        test_identity_65534,
        test_no_network,
        test_read_only_root,
        test_tmp_writable_but_noexec,
        test_setuid_fails,
        test_no_capabilities,
        test_no_new_privileges,
        test_fork_bomb_contained,
        test_pids_limit_enforced,
        test_memory_hog_is_oom,
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
        test_missing_image_is_sandbox_error,
    ])
