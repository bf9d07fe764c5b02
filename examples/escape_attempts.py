# escape_attempts.py - the usual ways out of a container, each tried for real.
#
#   brig run examples/escape_attempts.py
#
# Every line prints BLOCKED (the control held) or OK (the attempt worked: a hole).
# It runs as the sandboxed program, so it only uses the Python standard library.
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


def syscall_ok(nr, *args):
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return f"returned {r}"


@attempt("network: TCP connect to 1.1.1.1:53")
def _():
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()


@attempt("network: UDP to 8.8.8.8:53")
def _():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect(("8.8.8.8", 53))
    s.send(b"\0" * 12)
    s.recv(512)


@attempt("network: DNS lookup")
def _():
    socket.getaddrinfo("example.com", 443)


@attempt("network: raw socket")
def _():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)


@attempt("write the image: /usr/bin/evil")
def _():
    open("/usr/bin/evil", "w").write("x")


@attempt("write /etc/passwd")
def _():
    open("/etc/passwd", "a").write("evil::0:0::/:/bin/sh\n")


@attempt("/proc/sysrq-trigger")
def _():
    open("/proc/sysrq-trigger", "w").write("h")


@attempt("/proc/1/mem of another process")
def _():
    # Writing through /proc/self/mem works on an ordinary process; it is not an escape by itself,
    # so only count it when it reaches another process (pid 1 here is the interpreter itself).
    fd = os.open("/proc/1/mem", os.O_RDWR)
    os.close(fd)
    if os.getpid() == 1:
        raise PermissionError("pid 1 is this program itself (no other process to reach)")


@attempt("cgroup release_agent")
def _():
    open("/sys/fs/cgroup/memory/release_agent", "w").write("/tmp/x")


@attempt("mount tmpfs")
def _():
    syscall_ok(165, 0, 0, 0, 0, 0)  # mount(NULL, NULL, NULL, 0, NULL)


@attempt("unshare(CLONE_NEWUSER)")
def _():
    syscall_ok(272, 0x10000000)


@attempt("setuid(0)")
def _():
    os.setuid(0)


@attempt("setuid binary on the image")
def _():
    found = [p for d in ("/bin", "/usr/bin", "/sbin", "/usr/sbin") if os.path.isdir(d)
             for p in (os.path.join(d, f) for f in os.listdir(d))
             if os.path.isfile(p) and os.stat(p).st_mode & 0o4000]
    for p in found:
        if subprocess.run([p, "--help"], capture_output=True, timeout=2).returncode == 0:
            return f"{p} ran set-uid"
    raise PermissionError(f"{len(found)} set-uid binaries, none usable (no-new-privileges)")


@attempt("capabilities (CapEff != 0)")
def _():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:") and int(line.split()[1], 16) != 0:
            return line.strip()
    raise PermissionError("CapEff is 0")


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


@attempt("kernel keyring (add_key)")
def _():
    syscall_ok(248, ctypes.addressof(ctypes.create_string_buffer(b"user")),
               ctypes.addressof(ctypes.create_string_buffer(b"k")), 0, 0, -2)


@attempt("/dev access: mknod a disk")
def _():
    os.mknod("/tmp/sda", 0o600 | 0o060000, os.makedev(8, 0))


@attempt("docker.sock")
def _():
    s = socket.socket(socket.AF_UNIX)
    s.connect("/var/run/docker.sock")


@attempt("execute a file written to /tmp")
def _():
    with open("/tmp/x.sh", "w") as f:
        f.write("#!/bin/sh\necho ran\n")
    os.chmod("/tmp/x.sh", 0o755)
    subprocess.run(["/tmp/x.sh"], check=True, capture_output=True)


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


@attempt("fill /tmp beyond its size (200 MiB)")
def _():
    with open("/tmp/big", "wb") as f:
        for _ in range(200):
            f.write(b"\0" * (1 << 20))
    os.unlink("/tmp/big")


@attempt("open 10000 files")
def _():
    fds = []
    try:
        for _ in range(10000):
            fds.append(os.open("/dev/null", os.O_RDONLY))
    finally:
        for fd in fds:
            os.close(fd)


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


# Keep this one last: under gVisor the memory limit covers the sandbox's own kernel too, and
# reaching it ends the whole box, so nothing after it would be printed.
@attempt("allocate 2 GiB of memory")
def _():
    # in a child, so the kernel's OOM kill of it does not end this report
    pid = os.fork()
    if pid == 0:
        b = bytearray(2 << 30)
        b[::4096] = b"\1" * len(b[::4096])
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise MemoryError(f"child killed by signal {os.WTERMSIG(status)} at the memory limit")
    if os.WEXITSTATUS(status) != 0:
        raise MemoryError(f"child failed with status {os.WEXITSTATUS(status)}")


holes = sum(1 for r in results if r[0] == "OK")
print(f"{len(results) - holes} blocked, {holes} open")
