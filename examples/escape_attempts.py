# escape_attempts.py - the usual ways out of a container, each tried for real.
#
#   brig run examples/escape_attempts.py
#
# Every line prints BLOCKED (the control held) or OK (the attempt worked: a hole).
# It runs as the sandboxed program, so it only uses the Python standard library.
#
# Each attempt is real: with its control removed it succeeds (tests/integration/escape.py runs
# this script in a container without brig's controls - privileged, root, a network, no
# limits - and every line must say OK there).  So an attempt never relies on bad arguments,
# and one that would change the host if it got through only opens for writing, or asks for a
# no-op.  The comment above each names the control(s) that stop it.  (Nothing tries
# /proc/sysrq-trigger, /proc/kcore or /dev/mem: the CI host's kernel has none of them, so such a
# line could not be shown to work without a control.)
import ctypes
import errno
import os
import socket
import subprocess

libc = ctypes.CDLL(None, use_errno=True)
results = []


def attempt(name):
    """Decorator: the function returns normally if the escape WORKED, raises if it was blocked."""
    def wrap(fn):
        try:
            detail = fn()
            results.append(("OK", name, detail or "succeeded"))
        except Exception as e:  # noqa: BLE001 - every failure is a block
            results.append(("BLOCKED", name, f"{type(e).__name__}: {e}"[:90]))
        # printed at once: if a limit ends the whole box, the lines so far are not lost
        verdict, _, detail = results[-1]
        print(f"{verdict:8} {name:45} {detail}", flush=True)
        return fn
    return wrap


libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_char_p]


def syscall_ok(nr, *args):
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return f"returned {r}"


def default_gateway():
    """The default route's gateway (the host's side of the bridge), or None."""
    for line in open("/proc/net/route").readlines()[1:]:
        f = line.split()
        if f[1] == "00000000":
            return socket.inet_ntoa(int(f[2], 16).to_bytes(4, "little"))
    return None


# network none: the box has only lo
@attempt("network: an interface besides lo")
def _():
    up = [d for d in os.listdir("/sys/class/net") if d != "lo"]
    if not up:
        raise OSError(errno.ENODEV, "only lo")
    return f"interfaces {', '.join(sorted(up))}"


# network none: no route out of the box
@attempt("network: a default route")
def _():
    gw = default_gateway()
    if gw is None:
        raise OSError(errno.ENETUNREACH, "no default route")
    return f"default route via {gw}"


# network none: nothing reaches the host (only the host is tried: no traffic leaves the machine)
@attempt("network: TCP to the host (the default gateway)")
def _():
    gw = default_gateway()
    if gw is None:
        raise OSError(errno.ENETUNREACH, "no default route, no gateway to try")
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((gw, 9))  # discard: closed or open, any answer means the packet got there
        return f"connected to {gw}:9"
    except ConnectionRefusedError:
        return f"{gw} answered (connection refused)"
    except socket.timeout:
        return f"a SYN went out to {gw} (no answer within 2 s)"
    finally:
        s.close()


# CAP_NET_RAW dropped (and uid 65534)
@attempt("network: raw socket")
def _():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()


# read-only root (and uid 65534)
@attempt("write the image: /usr/bin/evil")
def _():
    open("/usr/bin/evil", "w").write("x")


# uid 65534 (and the read-only root)
@attempt("write /etc/passwd")
def _():
    open("/etc/passwd", "a").write("evil::0:0::/:/bin/sh\n")


# /sys/fs/cgroup read-only, uid 65534 (release_agent only opened; a new cgroup removed again)
@attempt("cgroup: release_agent or a new cgroup")
def _():
    root, errs = "/sys/fs/cgroup", set()
    for c in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        try:
            os.close(os.open(f"{root}/{c}/release_agent", os.O_WRONLY))
            return f"opened {root}/{c}/release_agent for writing"
        except OSError as e:
            errs.add(errno.errorcode.get(e.errno, str(e.errno)))
        try:
            os.mkdir(f"{root}/{c}/brig-escape")
            os.rmdir(f"{root}/{c}/brig-escape")
            return f"created a cgroup under {root}/{c}"
        except OSError as e:
            errs.add(errno.errorcode.get(e.errno, str(e.errno)))
    raise PermissionError(f"every write refused ({', '.join(sorted(errs)) or 'no cgroupfs'})")


# seccomp (the mount family), CAP_SYS_ADMIN dropped
@attempt("mount a tmpfs (mount(2))")
def _():
    os.makedirs("/tmp/m", exist_ok=True)
    r = libc.mount(b"none", b"/tmp/m", b"tmpfs", 0, b"size=1m")
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    libc.umount2(b"/tmp/m", 0)
    return "mounted a tmpfs on /tmp/m"


# seccomp (unshare), in a child so that a success cannot change this report's namespaces
@attempt("unshare(CLONE_NEWUSER)")
def _():
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno())
    _, status = os.waitpid(pid, 0)
    if os.WEXITSTATUS(status):
        raise OSError(os.WEXITSTATUS(status), os.strerror(os.WEXITSTATUS(status)))
    return "a child entered a new user namespace"


# uid 65534, no capabilities
@attempt("setuid(0)")
def _():
    os.setuid(0)


# seccomp, CAP_SYS_TIME dropped: settimeofday(NULL, NULL) changes nothing when it is allowed
@attempt("set the clock (settimeofday, a no-op)")
def _():
    syscall_ok(164, 0, 0)


# --cap-drop ALL: the bounding set is empty (a non-root uid alone would only empty CapEff)
@attempt("capabilities (CapBnd != 0)")
def _():
    for line in open("/proc/self/status"):
        if line.startswith("CapBnd:") and int(line.split()[1], 16) != 0:
            return line.strip()
    raise PermissionError("CapBnd is 0")


# seccomp (ptrace: the engine's default profile allows it)
@attempt("ptrace(PTRACE_ATTACH) another process")
def _():
    pid = os.fork()
    if pid == 0:
        import time
        time.sleep(10)
        os._exit(0)
    try:
        syscall_ok(101, 16, pid, 0, 0)  # PTRACE_ATTACH
        os.waitpid(pid, 0)
        syscall_ok(101, 17, pid, 0, 0)  # PTRACE_DETACH
        return f"attached to pid {pid}"
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


# seccomp (keyctl, add_key, request_key): a real "user" key in this process's own keyring
@attempt("kernel keyring (add_key)")
def _():
    key_type, desc, payload = (ctypes.create_string_buffer(b"user"),
                               ctypes.create_string_buffer(b"brig-escape"),
                               ctypes.create_string_buffer(b"secret"))
    return syscall_ok(248, ctypes.addressof(key_type), ctypes.addressof(desc),
                      ctypes.addressof(payload), 6, -2)  # KEY_SPEC_PROCESS_KEYRING


# CAP_MKNOD dropped, uid 65534, seccomp (block and character devices)
@attempt("/dev access: mknod a disk")
def _():
    os.mknod("/tmp/sda", 0o600 | 0o060000, os.makedev(8, 0))


# nothing of the host mounted (and uid 65534)
@attempt("docker.sock")
def _():
    s = socket.socket(socket.AF_UNIX)
    s.connect("/var/run/docker.sock")


# /tmp noexec
@attempt("execute a file written to /tmp")
def _():
    with open("/tmp/x.sh", "w") as f:
        f.write("#!/bin/sh\necho ran\n")
    os.chmod("/tmp/x.sh", 0o755)
    subprocess.run(["/tmp/x.sh"], check=True, capture_output=True)


# /tmp noexec (for mmap(PROT_EXEC) too: a known gap under gVisor, tests/integration/escape.py)
@attempt("load native code from /tmp (ctypes.CDLL)")
def _():
    # no compiler in the box: a shared object of the image, copied to the noexec /tmp, then
    # mapped executable by the dynamic loader (noexec must refuse PROT_EXEC, not only execve)
    import glob
    import shutil
    src = (glob.glob("/usr/lib/python3*/lib-dynload/resource.*.so")
           or sorted(glob.glob("/usr/lib/python3*/lib-dynload/*.so")))[0]
    shutil.copyfile(src, "/tmp/native.so")
    ctypes.CDLL("/tmp/native.so")
    return f"mapped a copy of {os.path.basename(src)} executable"


# tmpfs_mb
@attempt("fill /tmp beyond its size (200 MiB)")
def _():
    with open("/tmp/big", "wb") as f:
        for _ in range(200):
            f.write(b"\0" * (1 << 20))
    os.unlink("/tmp/big")


# nofile
@attempt("open 10000 files")
def _():
    fds = []
    try:
        for _ in range(10000):
            fds.append(os.open("/dev/null", os.O_RDONLY))
    finally:
        for fd in fds:
            os.close(fd)


# pids_limit
@attempt("fork 1000 processes")
def _():
    pids = []
    try:
        for _ in range(1000):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            pids.append(pid)
    finally:
        for p in pids:
            os.waitpid(p, 0)


# memory_mb.  Keep this one last: under gVisor the memory limit covers the sandbox's own
# kernel too, and reaching it ends the whole box, so nothing after it would be printed.
@attempt("allocate 1 GiB of memory")
def _():
    # in a child, so the kernel's OOM kill of it does not end this report
    pid = os.fork()
    if pid == 0:
        b = bytearray(1 << 30)
        b[::4096] = b"\1" * len(b[::4096])
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise MemoryError(f"child killed by signal {os.WTERMSIG(status)} at the memory limit")
    if os.WEXITSTATUS(status) != 0:
        raise MemoryError(f"child failed with status {os.WEXITSTATUS(status)}")


holes = sum(1 for r in results if r[0] == "OK")
print(f"{len(results) - holes} blocked, {holes} open")
