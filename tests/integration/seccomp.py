#!/usr/bin/env python3
"""brig's seccomp profile, proven inside real containers.

Each syscall the profile denies is called for real (python ctypes syscall(), x86_64 numbers, each
in a forked child) and must fail with EPERM; ordinary workloads must still run: python threads,
subprocess, asyncio, json, sqlite3, multiprocessing; node worker_threads and child_process; shell
pipelines.  One suite for every backend: $BRIG_TEST_BACKEND (docker-cli, docker-api, gvisor).
Under gVisor the profile only holds with runsc --oci-seccomp (runtime runsc-seccomp) and the same
EPERM expectations apply; clone3 gives ENOSYS under both runtimes (the filter's errno under runc,
gVisor's own kernel under runsc, where brig's profile allows it).
"""
import json
import os
import platform
import re
import subprocess
import tempfile

from brigtest import BACKEND, BRIG, backend_args, brig, main, skip

GVISOR = BACKEND == "gvisor" or os.environ.get("BRIG_TEST_ISOLATION") == "gvisor"
TOP = os.environ.get("top_srcdir", ".")

# name: (x86_64 number, arguments).  Arguments are harmless should a call get through: NULL
# pointers, invalid fds, flags that only query.
DENIED = {
    "ptrace(ATTACH)": (101, "ATTACH"),
    "process_vm_readv": (310, (1, 0, 0, 0, 0, 0)),
    "process_vm_writev": (311, (1, 0, 0, 0, 0, 0)),
    "kcmp": (312, (1, 1, 0, 0, 0)),
    "pidfd_getfd": (438, (-1, 0, 0)),
    "userfaultfd": (323, (0,)),
    "perf_event_open": (298, (0, 0, -1, -1, 0)),
    "bpf": (321, (0, 0, 0)),
    "keyctl": (250, (0,)),
    "add_key": (248, (0, 0, 0, 0, 0)),
    "request_key": (249, (0, 0, 0, 0)),
    "unshare(CLONE_NEWUSER)": (272, (0x10000000,)),
    "unshare(CLONE_NEWNS)": (272, (0x20000,)),
    "setns": (308, (-1, 0)),
    "clone(CLONE_NEWUSER)": (56, (0x10000000 | 17, 0, 0, 0, 0)),
    "clone(CLONE_NEWNET)": (56, (0x40000000 | 17, 0, 0, 0, 0)),
    "mount": (165, (0, 0, 0, 0, 0)),
    "umount2": (166, (0, 0)),
    "pivot_root": (155, (0, 0)),
    "move_mount": (429, (-1, 0, -1, 0, 0)),
    "fsopen": (430, (0, 0)),
    "fsconfig": (431, (-1, 0, 0, 0, 0)),
    "fsmount": (432, (-1, 0, 0)),
    "fspick": (433, (-1, 0, 0)),
    "open_tree": (428, (-1, 0, 0)),
    "mount_setattr": (442, (-1, 0, 0, 0, 0)),
    "io_uring_setup": (425, (1, 0)),
    "io_uring_enter": (426, (-1, 0, 0, 0, 0, 0)),
    "io_uring_register": (427, (-1, 0, 0, 0)),
    "personality(READ_IMPLIES_EXEC)": (135, (0x0400000,)),
    "personality(ADDR_NO_RANDOMIZE)": (135, (0x0040000,)),
    "kexec_load": (246, (0, 0, 0, 0)),
    "kexec_file_load": (320, (-1, -1, 0, 0, 0)),
    "init_module": (175, (0, 0, 0)),
    "finit_module": (313, (-1, 0, 0)),
    "delete_module": (176, (0, 0)),
    "swapon": (167, (0, 0)),
    "swapoff": (168, (0,)),
    "reboot": (169, (0, 0, 0, 0)),
    "acct": (163, (0,)),
    "quotactl": (179, (0, 0, 0, 0)),
    "lookup_dcookie": (212, (0, 0, 0)),
    "iopl": (172, (0,)),
    "ioperm": (173, (0, 0, 0)),
    "name_to_handle_at": (303, (-1, 0, 0, 0, 0)),
    "open_by_handle_at": (304, (-1, 0, 0)),
    "chroot": (161, (0,)),
    "vhangup": (153, ()),
    "syslog": (103, (10, 0, 0)),  # SYSLOG_ACTION_SIZE_BUFFER: a read-only query
    "settimeofday(NULL)": (164, (0, 0)),  # a no-op if it got through
    "clock_settime": (227, (0, 0)),
    "adjtimex": (159, (0,)),
    "clock_adjtime": (305, (0, 0)),
    "nfsservctl": (180, (0, 0, 0)),
    "sethostname": (170, (0, 0)),
    "setdomainname": (171, (0, 0)),
    "fanotify_init": (300, (0, 0)),
    "modify_ldt": (154, (0, 0, 0)),
    "get_mempolicy": (239, (0, 0, 0, 0, 0)),
    "mbind": (237, (0, 0, 0, 0, 0, 0)),
    "socket(AF_VSOCK)": (41, (40, 1, 0)),
    "socket(AF_ALG)": (41, (38, 5, 0)),  # the kernel crypto API: a module loaded on first use
    "socket(AF_NETLINK, NETLINK_AUDIT)": (41, (16, 3, 9)),
    "socket(AF_NETLINK, NETLINK_SOCK_DIAG)": (41, (16, 3, 4)),
    "sync": (162, ()),  # a no-op for correctness, a host-wide disk flush for the host
    "syncfs": (306, (-1,)),
    "memfd_secret": (447, (0,)),
    "sched_setattr": (314, (0, 0, 0)),
    "mknod(block device)": (133, ("PATH", 0o060600, 8 << 8)),
    "mknodat(char device)": (259, (-100, "PATH", 0o020600, (1 << 8) | 3)),
}

PROBE = r'''
import ctypes, errno, json, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def call(nr, args):
    if args == "ATTACH":  # PTRACE_ATTACH to a sibling that sleeps
        target = os.fork()
        if target == 0:
            time.sleep(5)
            os._exit(0)
        args = (16, target, 0, 0)
    path = ctypes.create_string_buffer(b"/tmp/probe-node-%d" % os.getpid())
    args = [ctypes.addressof(path) if a == "PATH" else a for a in args]
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if rc >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def probe(nr, args):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child makes the call: a call that got through cannot spoil the parent
        os.close(r)
        try:
            os.write(w, call(nr, args).encode())
        finally:
            os._exit(0)
    os.close(w)
    out = os.read(r, 64).decode() or "no answer"
    os.close(r)
    os.waitpid(pid, 0)
    return out

print(json.dumps({name: probe(nr, args) for name, (nr, args) in CALLS.items()}))
'''


def probe(calls, *args):
    # ~60 forked children: 2.6 s under gVisor on an idle host, more beside a parallel suite in
    # an ASan build, so the policy's maximum wall time rather than the 5 s default
    code = PROBE.replace("CALLS", json.dumps(calls))
    r = brig("-t", "30", *args, code=code, timeout=120)
    assert r["verdict"] == "success", r
    return json.loads(r["stdout"].strip().splitlines()[-1]), r


def policy_file(obj):
    if BACKEND == "docker-cli":  # the docker CLI cannot mask paths: the operator's opt-out
        obj = {"mask_host_details": False, **obj}
    f = tempfile.NamedTemporaryFile("w", prefix="brig-it-seccomp-", suffix=".json", delete=False)
    json.dump(obj, f)
    f.close()
    return f.name


def test_denied_syscalls_eperm():
    got, r = probe(DENIED)
    wrong = {k: v for k, v in got.items() if v != "EPERM"}
    assert not wrong, f"not EPERM: {wrong}"
    assert set(got) == set(DENIED), r


def test_clone3_enosys():
    # runc: the profile's errno rule, so glibc falls back to clone().  gVisor: the profile allows
    # clone3 (runsc would turn any errno into EPERM) and gVisor's kernel answers ENOSYS.
    got, r = probe({"clone3": (435, (0, 0))})
    assert got["clone3"] == "ENOSYS", (got, r)


def test_seccomp_filter_active():
    r = brig(code="grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status", lang="shell")
    assert "Seccomp:\t2" in r["stdout"], r


def test_allowed_syscalls_still_work():
    got, r = probe({"getpid": (39, ()), "getcpu": (309, (0, 0, 0)), "uname": (63, (0,)),
                    "personality(query)": (135, (0xffffffff,)), "socket(AF_UNIX)": (41, (1, 1, 0)),
                    "socket(AF_INET)": (41, (2, 2, 0)), "socket(AF_INET6)": (41, (10, 2, 0)),
                    "socket(NETLINK_ROUTE)": (41, (16, 3, 0)), "fsync(-1)": (74, (-1,)),
                    "mknod(fifo)": (133, ("PATH", 0o010600, 0)),
                    "mknodat(socket)": (259, (-100, "PATH", 0o140600, 0))})
    # gVisor's kernel does not implement the personality query (EINVAL): it got through
    persona = "EINVAL" if GVISOR else "ok"
    assert got == {"getpid": "ok", "getcpu": "ok", "uname": "EFAULT",
                   "personality(query)": persona, "socket(AF_UNIX)": "ok",
                   "socket(AF_INET)": "ok", "socket(AF_INET6)": "ok",
                   "socket(NETLINK_ROUTE)": "ok", "fsync(-1)": "EBADF", "mknod(fifo)": "ok",
                   "mknodat(socket)": "ok"}, (got, r)


def test_engine_profile_leaves_the_holes():
    """The probes measure the profile, not the dropped capabilities: with the engine's default
    profile the same ptrace and io_uring calls get through."""
    path = policy_file({"seccomp": "engine"})
    try:
        got, r = probe({"ptrace(ATTACH)": DENIED["ptrace(ATTACH)"],
                        "io_uring_setup": (425, (1, 0))}, "--policy", path)
    finally:
        os.unlink(path)
    assert got["ptrace(ATTACH)"] == "ok", (got, r)
    assert got["io_uring_setup"] != "EPERM", (got, r)  # EFAULT (NULL params) from the kernel


def test_operator_deny_list():
    path = policy_file({"seccomp": {"deny": ["getcpu", "uname"]}})
    try:
        got, r = probe({"getcpu": (309, (0, 0, 0)), "uname": (63, (0,)), "getpid": (39, ())},
                       "--policy", path)
    finally:
        os.unlink(path)
    assert got == {"getcpu": "EPERM", "uname": "EPERM", "getpid": "ok"}, (got, r)


def test_explain_names_the_profile():
    p = subprocess.run([BRIG, "explain", *backend_args(), "-l", "python", "-c", "print(1)"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p
    m = re.search(r"^# seccomp: brig default(.*)\((\d+) syscalls allowed, (\d+) denied\)$",
                  p.stdout, re.M)
    assert m, p.stdout[:400]
    assert ("gVisor rendering: allowed clone3" in m.group(1)) == GVISOR, m.group(0)


def test_python_workloads():
    code = r'''
import asyncio, json, multiprocessing, sqlite3, subprocess, threading
out = []
t = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]
[x.start() for x in t]; [x.join() for x in t]
print("threads", sorted(out) == list(range(8)))
print("subprocess", subprocess.run(["sh", "-c", "echo $((6*7))"], capture_output=True,
                                   text=True).stdout.strip())
async def twice(x):
    await asyncio.sleep(0.01)
    return 2 * x
async def gather():
    return await asyncio.gather(*(twice(i) for i in range(5)))
print("asyncio", asyncio.run(gather()))
print("json", json.loads(json.dumps({"a": [1, 2]}))["a"])
db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(10)])
print("sqlite3", db.execute("select sum(x) from t").fetchone()[0])
def square(x):
    return x * x
if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        print("multiprocessing", pool.map(square, range(4)))
'''
    r = brig("-t", "20", code=code, timeout=120)
    assert r["verdict"] == "success", r
    assert r["stdout"].splitlines() == [
        "threads True", "subprocess 42", "asyncio [0, 2, 4, 6, 8]", "json [1, 2]",
        "sqlite3 45", "multiprocessing [0, 1, 4, 9]"], r


def test_node_workloads():
    code = r'''
const { Worker } = require("worker_threads");
const { execFile } = require("child_process");
const w = new Worker("require('worker_threads').parentPort.postMessage(6 * 7)", { eval: true });
w.on("message", (m) => {
  console.log("worker", m);
  w.terminate();
  execFile("sh", ["-c", "echo child $((2 + 3))"], (err, out) => {
    console.log(err ? "child error " + err : out.trim());
    require("fs").promises.readFile("/etc/hostname", "utf8").then(() => console.log("fs ok"));
  });
});
'''
    r = brig("-t", "20", code=code, lang="node", timeout=120)
    assert r["verdict"] == "success", r
    assert r["stdout"].splitlines() == ["worker 42", "child 5", "fs ok"], r


def test_shell_pipelines():
    code = "seq 1 1000 | sort -rn | head -3 | tr '\\n' ' '; echo; " \
           "printf 'b\\na\\n' > /tmp/f && sort /tmp/f | uniq -c | wc -l; " \
           "( sleep 0.1 & wait ); echo $(( $(echo 6) * 7 ))"
    r = brig(code=code, lang="shell")
    assert r["verdict"] == "success", r
    assert r["stdout"].splitlines() == ["1000 999 998 ", "2", "42"], r


# The attempts the seccomp profile answers (the other lines belong to other controls).
SECCOMP_LINES = ("mount", "unshare", "ptrace", "keyring", "mknod", "set the clock")


def test_escape_attempts_all_blocked():
    """examples/escape_attempts.py: with brig's profile every line says BLOCKED; the ptrace line
    is the one the engine's default leaves open.  Under gVisor only the lines the profile answers
    are asserted, without the 1 GiB attempt: the sandbox's own OOM kill ends the whole run there
    (the escape suite covers gVisor's other differences)."""
    path = os.path.join(TOP, "examples", "escape_attempts.py")
    if not os.path.exists(path):
        skip(f"{path} is missing")
    with open(path) as f:
        code = f.read()
    if GVISOR:
        code = re.sub(r'@attempt\("allocate .*?(?=^holes = )', "", code, flags=re.S | re.M)
    r = brig("-t", "25", code=code, timeout=120)
    # exit 0; the verdict may be "oom": the 1 GiB child's OOM kill marks the container OOMKilled
    assert r["exit_code"] == 0 and r["verdict"] in ("success", "oom"), r
    lines = [l for l in r["stdout"].splitlines() if l.startswith(("OK", "BLOCKED"))]
    assert len(lines) > 20, r
    checked = [l for l in lines if not GVISOR or any(w in l for w in SECCOMP_LINES)]
    assert len(checked) >= len(SECCOMP_LINES), r
    holes = [l for l in checked if l.startswith("OK")]
    assert not holes, "\n".join(holes)
    assert any(l.startswith("BLOCKED") and "ptrace" in l for l in lines), r


if __name__ == "__main__":
    if platform.machine() != "x86_64":
        skip(f"the probes use x86_64 syscall numbers; this is {platform.machine()}")
    main([
        test_seccomp_filter_active,
        test_denied_syscalls_eperm,
        test_clone3_enosys,
        test_allowed_syscalls_still_work,
        test_engine_profile_leaves_the_holes,
        test_operator_deny_list,
        test_explain_names_the_profile,
        test_python_workloads,
        test_node_workloads,
        test_shell_pipelines,
        test_escape_attempts_all_blocked,
    ])
