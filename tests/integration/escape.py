#!/usr/bin/env python3
"""The escape-attempt suite and the host-leak check, through brig, on one backend.

1. examples/escape_attempts.{py,js,sh} each try the known ways out of a container from their
   language (network, writing the image, /proc and /sys knobs, mount, namespaces, set-uid,
   capabilities, ptrace, /dev, the engine's socket, exec from /tmp, /tmp size, fds, processes,
   memory - always the last attempt).  Each prints one BLOCKED/OK line per attempt as soon as
   it is decided; EVERY line must say BLOCKED, and each script must report exactly the number
   of attempts it makes (a cut-short run fails).

   Under gVisor (runsc) two things differ, and both are asserted exactly rather than skipped:
   - KNOWN_GAPS lists, per backend and script, the attempts that are expected to say OK, each
     with its reason.  Any other OK line fails; so does a listed line that says BLOCKED (the
     gap was closed: the table must shrink) or that is missing (the table is stale).
   - the memory limit covers the sandbox's own kernel (the sentry) as well as the program, and
     the host's OOM killer ends the WHOLE sandbox at the limit: the memory line and the summary
     are never printed.  Accepted only as: every earlier line present (ATTEMPTS - 1 of them),
     then nothing, verdict "oom", exit 137, OOMKilled - the memory control held, by stopping
     the box.  A run that does print the memory line must print it BLOCKED plus the summary,
     as under runc.

2. tests/integration/enumerate.sh gathers inside the box what a container-enumeration script
   (deepce.sh's checks) can learn.  Nothing about the host may show beyond what brig cannot
   hide: the output is compared with facts read from THIS host (its names, addresses - also in
   /proc/net's hex forms -, MAC addresses, resolver, environment, a canary variable set for the
   brig process) and with what brig sets (hostname "sandbox", resolver 198.51.100.1 (TEST-NET-2) or none, only
   `lo`, a minimal environment, no capabilities, no sockets, no bind mounts of its own).

   Visible by design and NOT asserted (brig cannot hide them under runc; gVisor hides most):
   - the shared kernel: uname, /proc/cmdline (this VM's boot line), /proc/cpuinfo, /proc/meminfo;
   - the engine's own traces: the overlay lowerdir/upperdir paths under the data-root
     (/var/lib/docker/overlay2/...), the bind sources of /etc/hostname, /etc/hosts and
     /etc/resolv.conf (/var/lib/docker/containers/<id>/...), the container ID in /proc/1/cgroup
     and the cgroup mounts, the block device of the data-root file system, and /.dockerenv.
     (A private cgroup namespace would hide the ID in /proc/1/cgroup, but the bind sources in
     mountinfo still carry it, so that alone gains nothing.)
   The test checks that those lines carry nothing else: every mount must be one of the engine's
   standard ones, every cgroup path "/" or "/docker/<64 hex>".

   Under gVisor /proc and /sys are the sentry's: there are no cgroup lines, no routes, no
   overlay paths and no bind sources (the root and /etc/hostname are 9p mounts whose root is
   "/"), and the kernel is gVisor's, so the kernel lines are scanned for host facts as well and
   must not carry the host kernel's release or boot line.

3. (docker-cli suite only: it tests the scripts, not a backend) each script runs once more in
   a container WITHOUT brig's controls, where EVERY line must say OK: an attempt that fails
   there proves nothing when it fails under brig (bad arguments, a missing binary, a file this
   kernel does not have).  See check_attempts_are_real for the container and why it is safe.

$BRIG_TEST_BACKEND names the backend (docker-cli, docker-api, gvisor).
"""
import ipaddress
import json
import os
import re
import secrets
import socket
import subprocess
import threading

from brigtest import (BACKEND, BRIG, DOCKER, ISOLATION, bridge_gateway, brig, docker, main,
                      skip)

TOP = os.environ.get("top_srcdir", ".")
GVISOR = BACKEND == "gvisor" or ISOLATION == "gvisor"

# The number of attempts each script makes.  Update it with the script: a run that printed fewer
# lines lost some (a crash, a hang cut by the timeout); more lines means the table is stale.
ATTEMPTS = {"escape_attempts.py": 22, "escape_attempts.js": 21, "escape_attempts.sh": 27}
# Each script's memory attempt.  It must be the last one: under gVisor reaching the limit ends the
# whole sandbox, and with it every line that would come after.
MEMORY_ATTEMPT = {"escape_attempts.py": "allocate 1 GiB of memory",
                  "escape_attempts.js": "allocate 1 GiB of memory (in a child)",
                  "escape_attempts.sh": "allocate 512 MiB of memory (awk)"}
# Attempts that WORK on a backend and that brig cannot close there:
# {backend: {script: {attempt: reason}}}.
# Asserted exactly both ways (see the module comment).  The wording follows `brig doctor` and
# brig(1) (GVISOR, "Differences from runc").
GVISOR_NOEXEC_GAP = ("/tmp is noexec, but gVisor (runsc 20221219) enforces it only for execve, "
                     "not for mmap(PROT_EXEC): dlopen of a file in /tmp works (no runsc flag "
                     "closes it; fixed upstream by google/gvisor#11358, 2025)")
KNOWN_GAPS = {
    "gvisor": {
        "escape_attempts.py": {"load native code from /tmp (ctypes.CDLL)": GVISOR_NOEXEC_GAP},
        "escape_attempts.js": {"load native code from /tmp (process.dlopen)": GVISOR_NOEXEC_GAP},
    },
}
LANG_OF = {".py": "python", ".js": "node", ".sh": "shell"}
SUMMARY = re.compile(r"^(\d+) blocked, (\d+) open$")
ATTEMPT_LINE = re.compile(r"^(BLOCKED|OK) +(.*)$")


def run_script(path, timeout=30):
    with open(path, "rb") as f:
        code = f.read()
    lang = LANG_OF[os.path.splitext(path)[1]]
    return brig("--timeout", str(timeout), code=code, lang=lang, timeout=timeout + 60)


def attempt_named(line, name):
    """Does this BLOCKED/OK line report the attempt `name`?  (The name is padded to 45 columns
    and followed by the detail.)"""
    rest = ATTEMPT_LINE.match(line).group(2)
    return rest == name or rest.startswith(name + " ")


def check_escape_script(name):
    r = run_script(os.path.join(TOP, "examples", name))
    assert r.result is not None, r
    lines = r["stdout"].rstrip("\n").split("\n") if r["stdout"].strip() else []
    m = SUMMARY.match(lines[-1]) if lines else None
    attempts = lines[:-1] if m else lines
    assert all(ATTEMPT_LINE.match(line) for line in attempts), attempts
    memory = MEMORY_ATTEMPT[name]
    expected = ATTEMPTS[name]

    if GVISOR and not m and not any(attempt_named(line, memory) for line in attempts):
        # The sandbox was stopped at the memory limit during the last attempt (module comment):
        # everything before it must be there, and the engine must say it was the OOM killer.
        assert r["verdict"] == "oom" and r["exit_code"] == 137, (
            f"{name}: no summary line and the run was not ended by the memory limit; "
            f"output ends with {lines[-3:]!r}; {r!r}")
        if "oom_killed" in r.result:
            assert r["oom_killed"] is True, r
        assert len(attempts) == expected - 1, (
            f"{name}: {len(attempts)} attempts before the memory attempt, {expected - 1} "
            f"expected (update ATTEMPTS if the script changed):\n" + "\n".join(attempts))
        outcome = (f"the memory attempt ({memory}) ended the whole sandbox at the limit: "
                   f"no further output, verdict oom, exit 137 - the memory control held")
    else:
        # The script itself ends normally (exit 0).  docker-api may report verdict "oom" when
        # the memory attempt's CHILD was OOM-killed (the engine's State.OOMKilled covers the
        # whole container), docker-cli asks the engine about OOM only when the program failed
        # and says "success": both are a completed run here.
        assert m, f"{name}: no summary line; output ends with {lines[-3:]!r}; {r!r}"
        assert r["verdict"] in ("success", "oom") and r["exit_code"] == 0, r
        assert len(attempts) == expected, (
            f"{name}: {len(attempts)} attempts reported, {expected} expected "
            f"(update ATTEMPTS if the script changed):\n" + "\n".join(attempts))
        # last, so that a whole-sandbox OOM kill (gVisor) cannot take any other line with it
        assert attempt_named(attempts[-1], memory), (
            f"{name}: the memory attempt ({memory}) must be the last one; last: {attempts[-1]!r}")
        holes = [line for line in attempts if line.startswith("OK ")]
        assert int(m.group(1)) == len(attempts) - len(holes) and \
            int(m.group(2)) == len(holes), (lines[-1], holes)
        outcome = f"the memory attempt printed its line and the summary: {lines[-1]}"

    gaps = KNOWN_GAPS.get("gvisor" if GVISOR else BACKEND, {}).get(name, {})
    holes = [line for line in attempts
             if line.startswith("OK ") and not any(attempt_named(line, g) for g in gaps)]
    assert not holes, (f"{name} under {BACKEND}: {len(holes)} attempt(s) NOT blocked:\n"
                       + "\n".join(holes))
    for gap, reason in gaps.items():
        found = [line for line in attempts if attempt_named(line, gap)]
        assert len(found) == 1, (
            f"{name} under {BACKEND}: known gap {gap!r} not reported (renamed or dropped? "
            f"update KNOWN_GAPS):\n" + "\n".join(attempts))
        assert found[0].startswith("OK "), (
            f"{name} under {BACKEND}: known gap closed: remove it from the table "
            f"(KNOWN_GAPS): {found[0]}")
        print(f"KNOWN GAP ({BACKEND}) {name}: {found[0]}\n  reason: {reason}", flush=True)
    print(f"info: {name} under {BACKEND}: {len(attempts)} lines, "
          f"{len(attempts) - len(gaps)} BLOCKED, {len(gaps)} known gap(s); {outcome}", flush=True)


def test_escape_attempts_python():
    check_escape_script("escape_attempts.py")


# ---- every attempt is real ---------------------------------------------------------------------


# The engine's sockets, bind-mounted for the unconfined run (connected to, never spoken to).
ENGINE_SOCKETS = {"/var/run/docker.sock": "/var/run/docker.sock",
                  "/var/run/docker/containerd/containerd.sock": "/run/containerd/containerd.sock"}


def check_attempts_are_real(name):
    """A BLOCKED line means something only if the attempt works without the control.  The
    script runs here in a container WITHOUT brig's controls - root, every capability (but
    CAP_SYS_RESOURCE, which this host's dockerd does not have to give, so not --privileged),
    no seccomp, /proc unmasked, the host's cgroupfs writable, /dev/kmsg, the default bridge
    network, no memory/pids/nofile limit, a /tmp that allows exec, the engine's sockets
    mounted - and every line must say OK.  The attempts are built to be harmless there: the
    network ones only reach this host (the bridge's gateway), the host's kernel knobs and
    cgroup release_agent are only opened for writing, a clock change is
    settimeofday(NULL, NULL).  Not brig under test: the script's honesty, so it runs once
    (docker-cli suite), with runc."""
    lang = LANG_OF[os.path.splitext(name)[1]]
    image = json.loads(subprocess.run([BRIG, "policy"], capture_output=True, text=True,
                                      timeout=30, check=True).stdout)["images"][lang]
    argv = {"python": ["python3", "-"], "node": ["node", "-"], "shell": ["sh", "-s"]}[lang]
    mounts = [a for host, box in ENGINE_SOCKETS.items() if os.path.exists(host)
              for a in ("-v", f"{host}:{box}")]
    with open(os.path.join(TOP, "examples", name), "rb") as f:
        code = f.read()
    p = subprocess.run([DOCKER, "run", "--rm", "-i", "--user", "0:0", "--cap-add", "ALL",
                        "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined",
                        "--security-opt", "systempaths=unconfined", "--network", "bridge",
                        "--device", "/dev/kmsg:/dev/kmsg:r", "-v", "/sys/fs/cgroup:/sys/fs/cgroup",
                        "--label", "brig-test=unconfined", *mounts,
                        "--entrypoint", argv[0], image, *argv[1:]],
                       input=code, capture_output=True, timeout=300)
    out = p.stdout.decode(errors="replace")
    lines = out.rstrip("\n").split("\n")
    attempts = [line for line in lines if ATTEMPT_LINE.match(line)]
    assert len(attempts) == ATTEMPTS[name], (p.returncode, out, p.stderr[-2000:])
    tautologies = [line for line in attempts if not line.startswith("OK ")]
    assert not tautologies, (
        f"{name}: attempts that fail even without any control (they prove nothing):\n"
        + "\n".join(tautologies))
    assert lines[-1] == f"0 blocked, {ATTEMPTS[name]} open", lines[-1]


def test_attempts_are_real():
    """The three scripts at once (their containers have no limits: mostly waiting on memory
    and processes, they overlap well)."""
    if not bridge_gateway():
        skip("dockerd has no default bridge network: the network attempts cannot be shown "
             "to work without the control")
    errors = {}

    def check(name):
        try:
            check_attempts_are_real(name)
        except Exception as e:  # noqa: BLE001 - reported below, per script
            errors[name] = e

    names = ["escape_attempts.py", "escape_attempts.js", "escape_attempts.sh"]
    threads = [threading.Thread(target=check, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(f"{n}: {e}" for n, e in errors.items())


def test_escape_attempts_node():
    check_escape_script("escape_attempts.js")


def test_escape_attempts_shell():
    check_escape_script("escape_attempts.sh")


# ---- host leaks ------------------------------------------------------------------------------

def host_addresses():
    """This host's own IPv4/IPv6 addresses (not loopback), from the kernel's tables."""
    addrs = set()
    with open("/proc/net/fib_trie") as f:
        prev = None
        for line in f:
            m = re.search(r"\|-- (\d+\.\d+\.\d+\.\d+)", line)
            if m:
                prev = m.group(1)
            elif "/32 host LOCAL" in line and prev:
                addrs.add(ipaddress.ip_address(prev))
    with open("/proc/net/if_inet6") as f:
        for line in f:
            addrs.add(ipaddress.IPv6Address(int(line.split()[0], 16)))
    return {a for a in addrs if not a.is_loopback}


def address_forms(a):
    """The ways an address shows up in text: dotted/colon form, and /proc/net's hex."""
    if a.version == 4:
        le = int.from_bytes(a.packed, "little")
        return [str(a), f"{le:08X}"]
    # /proc/net/tcp6 etc.: four 32-bit words, each little-endian; if_inet6/ipv6_route: plain hex
    words = [int.from_bytes(a.packed[i:i + 4], "little") for i in range(0, 16, 4)]
    return [str(a), a.exploded, "".join(f"{w:08X}" for w in words), a.packed.hex()]


def host_macs():
    macs = set()
    for dev in os.listdir("/sys/class/net"):
        try:
            with open(f"/sys/class/net/{dev}/address") as f:
                mac = f.read().strip().lower()
        except OSError:
            continue
        if mac and mac != "00:00:00:00:00:00":
            macs.add(mac)
    return macs


def host_resolver():
    servers, domains = set(), set()
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                w = line.split()
                if len(w) >= 2 and w[0] == "nameserver":
                    servers.add(w[1])
                elif w and w[0] in ("search", "domain"):
                    domains.update(w[1:])
    except OSError:
        pass
    return servers, domains


def parse_facts(text):
    facts = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        facts.setdefault(key, []).append(value)
    return facts


# The shared kernel: visible by design under runc.  gVisor answers uname, /proc/cmdline and
# /proc/cpuinfo from its own kernel (4.4.0, "BOOT_IMAGE=/vmlinuz-4.4.0-gvisor", model "unknown"),
# so there those lines are scanned like the others.
KERNEL_KEYS = set() if GVISOR else {"uname", "kernel_cmdline", "cpu"}
ALLOWED_ENV = {"PATH", "HOME", "LANG", "HOSTNAME", "TMPDIR", "PWD", "OLDPWD", "SHLVL",
               "PYTHONDONTWRITEBYTECODE"}
STANDARD_PATH = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
HOSTS_TOKENS = {"127.0.0.1", "::1", "fe00::0", "ff00::0", "ff02::1", "ff02::2", "localhost",
                "ip6-localhost", "ip6-loopback", "ip6-localnet", "ip6-mcastprefix",
                "ip6-allnodes", "ip6-allrouters", "sandbox"}
ROOT_ENTRIES = {".", "..", ".brig-init", ".dockerenv", "bin", "boot", "dev", "etc", "home", "lib", "lib32",
                "lib64", "libx32", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv",
                "sys", "tmp", "usr", "var"}
CONTAINER_ID = r"[0-9a-f]{64}"
MOUNTPOINT = re.compile(r"^/(proc(/[\w-]+)?|dev(/(pts|mqueue|shm))?|sys(/firmware|/fs/cgroup"
                        r"(/[\w,=]+)?|/kernel/(vmcoreinfo|notes|btf|boot_params))?|tmp|"
                        r"etc/(hostname|hosts|resolv\.conf)|\.brig-init)?$")


def check_mount(line):
    """One mountinfo line: an engine-standard mount point, and no host path of brig's making."""
    fields = line.split()
    sep = fields.index("-")
    root, point, fstype = fields[3], fields[4], fields[sep + 1]
    assert MOUNTPOINT.match(point), f"unexpected mount point {point}: {line}"
    if root == "/" or fstype == "proc" or (fstype == "tmpfs" and root == "/null"):
        return  # a file system's own root, a /proc subtree, a path masked with /dev/null
    if point == "/.brig-init":
        # brig's own PID 1, bind-mounted read-only: its installed path is all it names
        assert root.endswith("/brig-init") and fields[5].startswith("ro"), line
        return
    if fstype == "cgroup":
        assert re.fullmatch(rf"/docker/{CONTAINER_ID}", root), line
        return
    # the engine's per-container files, bind-mounted from its data-root
    m = re.fullmatch(rf".*/containers/{CONTAINER_ID}/(hostname|hosts|resolv\.conf)", root)
    assert m and point == "/etc/" + m.group(1), f"a host path is mounted into the box: {line}"


def needle_re(n):
    """A pattern for one fact, bounded so that 192.0.2.2 does not hit 192.0.2.25, nor a hex
    address a longer hex string (a container ID)."""
    if re.fullmatch(r"[0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}", n):
        return re.compile(rf"(?<![0-9A-Fa-f]){n}(?![0-9A-Fa-f])", re.IGNORECASE)
    if re.fullmatch(r"[0-9A-Fa-f:]+", n) and "::" in n or n.count(":") >= 5:
        return re.compile(rf"(?<![\w:]){re.escape(n)}(?![\w:])", re.IGNORECASE)
    return re.compile(rf"(?<![\w.]){re.escape(n)}(?!\w|\.\w)", re.IGNORECASE)


def scan_for(needles, facts, what):
    """No needle in any line but the kernel's."""
    pats = [(n, needle_re(n)) for n in needles]
    hits = []
    for key, values in facts.items():
        if key in KERNEL_KEYS:
            continue
        for v in values:
            hits += [f"{key}: {v} (contains {what} {n})" for n, p in pats if p.search(v)]
    assert not hits, "host facts visible in the box:\n" + "\n".join(hits)


def test_enumeration_reveals_nothing_about_the_host():
    canary = "brigcanary" + secrets.token_hex(8)
    with open(os.path.join(TOP, "tests", "integration", "enumerate.sh"), "rb") as f:
        code = f.read()
    r = brig("--timeout", "30", code=code, lang="shell", timeout=90,
             extra_env={"BRIG_TEST_CANARY": canary})
    assert r["verdict"] == "success", r
    facts = parse_facts(r["stdout"])
    assert facts.get("end") == ["1"], f"the enumeration did not finish: {r!r}"
    get = lambda k: facts.get(k, [])  # noqa: E731

    # names and the resolver: what brig sets
    assert get("hostname") == ["sandbox"] and get("etc_hostname") == ["sandbox"], facts
    assert get("domainname") in ([], ["(none)"], [""]), get("domainname")
    for line in get("resolv"):
        w = line.split()
        assert not w or w[0].startswith("#") or w == ["nameserver", "198.51.100.1"], \
            f"resolv.conf carries more than brig's neutral resolver: {get('resolv')}"
    for line in get("hosts"):
        tokens = set(line.split("#")[0].split())
        assert tokens <= HOSTS_TOKENS, f"/etc/hosts names something else: {line!r}"
    assert not any(re.match(r"Name:\s", line) for line in get("dns_lookup")), get("dns_lookup")

    # identity and privileges
    # a uid of the box's own from uid_range (named "sandbox"), group 65534, nothing else
    assert re.match(r"uid=20000\d{5}\(sandbox\) gid=65534\(nogroup\) groups=65534\(nogroup\)$",
                    get("id")[0]), get("id")
    caps = {c[0]: int(c[1], 16) for c in (line.split() for line in get("status"))
            if c[0].startswith("Cap")}  # gVisor has no CapAmb line
    assert {"CapPrm:", "CapEff:", "CapBnd:"} <= set(caps), get("status")
    assert not any(caps.values()), get("status")
    assert all("not permitted" in line or "denied" in line for line in get("kernel_log")), \
        f"the kernel log is readable: {get('kernel_log')}"

    # environment: brig's minimal one, nothing from the host or from brig's own environment
    for key in ("env", "environ"):
        for line in get(key):
            name, _, value = line.partition("=")
            assert name in ALLOWED_ENV, f"{key}: unexpected variable {line!r}"
            if name == "HOSTNAME":
                assert value == "sandbox", line
            if name == "PATH":
                assert set(value.split(":")) <= STANDARD_PATH, line
    assert not get("secret_env") and not get("user_file") and not get("tool"), facts

    # mounts and cgroups: only the engine's standard set (see the module comment)
    assert get("mountinfo"), facts
    for line in get("mountinfo"):
        check_mount(line)
        assert "docker.sock" not in line and "containerd.sock" not in line, line
    for line in get("cgroup"):
        path = line.split(":", 2)[2]
        assert path == "/" or re.fullmatch(rf"/docker/{CONTAINER_ID}", path), line
    assert set(get("root_entry")) <= ROOT_ENTRIES, get("root_entry")

    # the network: loopback only, no routes, no neighbours, no sockets, no engine socket
    assert set(get("iface")) == {"lo"} and set(get("sys_net")) <= {"lo"}, facts
    assert set(get("local_ipv4")) <= {"127.0.0.1"}, get("local_ipv4")
    for line in get("if_inet6"):
        assert ipaddress.IPv6Address(int(line.split()[0], 16)).is_loopback, line
    assert not get("route") and not get("arp"), (get("route"), get("arp"))
    for line in get("route6"):
        assert line.split()[-1] == "lo", line
    sockets = [(k, v) for k, vs in facts.items() if k.startswith("socket_") for v in vs]
    assert not sockets, sockets
    assert not get("engine_socket") and not get("unix_socket_file"), facts
    assert not get("disk"), get("disk")

    # under gVisor not even the host kernel: its release and boot line stay outside
    if GVISOR:
        with open("/proc/cmdline") as f:
            host_cmdline = f.read().strip()
        assert get("uname") and os.uname().release not in get("uname")[0], get("uname")
        assert get("kernel_cmdline") and not any(host_cmdline in line
                                                 for line in get("kernel_cmdline")), \
            get("kernel_cmdline")

    # and none of this host's own facts anywhere (the kernel lines aside, under runc)
    addrs = host_addresses()
    scan_for([f for a in addrs for f in address_forms(a)], facts, "host address")
    scan_for(host_macs(), facts, "host MAC")
    servers, domains = host_resolver()
    scan_for(servers | domains, facts, "host resolver entry")
    names = {n for n in (socket.gethostname(), socket.getfqdn())
             if n and n not in ("localhost", "sandbox", "localhost.localdomain")}
    scan_for(names, facts, "host name")
    # (a host value the box legitimately has too - a PATH like brig's - was checked above)
    box_values = {line.partition("=")[2] for line in get("env") + get("environ")}
    env_values = {v for k, v in os.environ.items()
                  if len(v) >= 10 and k != "BRIG_TEST_CANARY" and v not in box_values}
    # (brig-init's own bind mount names where brig is installed - here the build directory -
    # as its root: that one line, whose shape check_mount checked, is brig's, not the host's)
    own = {k: [v for v in vs if not (k == "mountinfo" and v.split()[4:5] == ["/.brig-init"])]
           for k, vs in facts.items()}
    scan_for(env_values | {canary}, own, "value of brig's environment")
    print(f"info: {len(addrs)} host addresses, {len(host_macs())} MACs, {len(names)} names, "
          f"{len(env_values)} environment values: none visible in the box", flush=True)


if __name__ == "__main__":
    main([
        test_escape_attempts_python,
        test_escape_attempts_node,
        test_escape_attempts_shell,
        test_enumeration_reveals_nothing_about_the_host,
    ] + ([test_attempts_are_real] if BACKEND == "docker-cli" else []))
