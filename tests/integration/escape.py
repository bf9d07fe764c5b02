#!/usr/bin/env python3
"""The escape-attempt suite and the host-leak check, through brig, on one backend.

1. examples/escape_attempts.{py,js,sh} each try the known ways out of a container from their
   language (network, writing the image, /proc and /sys knobs, mount, namespaces, set-uid,
   capabilities, ptrace, /dev, the engine's socket, exec from /tmp, /tmp size, fds, processes,
   memory).  Each prints one BLOCKED/OK line per attempt; EVERY line must say BLOCKED, and
   each script must report exactly the number of attempts it makes (a cut-short run fails).

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

$BRIG_TEST_BACKEND names the backend (docker-cli, docker-api, gvisor).
"""
import ipaddress
import os
import re
import secrets
import socket

from brigtest import BACKEND, brig, main

TOP = os.environ.get("top_srcdir", ".")

# The number of attempts each script makes.  Update it with the script: a run that printed fewer
# lines lost some (a crash, a hang cut by the timeout); more lines means the table is stale.
ATTEMPTS = {"escape_attempts.py": 23, "escape_attempts.js": 27, "escape_attempts.sh": 34}
LANG_OF = {".py": "python", ".js": "node", ".sh": "shell"}
SUMMARY = re.compile(r"^(\d+) blocked, (\d+) open$")


def run_script(path, timeout=30):
    with open(path, "rb") as f:
        code = f.read()
    lang = LANG_OF[os.path.splitext(path)[1]]
    return brig("--timeout", str(timeout), code=code, lang=lang, timeout=timeout + 60)


def check_escape_script(name):
    r = run_script(os.path.join(TOP, "examples", name))
    # The script itself ends normally (exit 0).  docker-api reports verdict "oom" when the
    # memory attempt's CHILD was OOM-killed (the engine's State.OOMKilled covers the whole
    # container), docker-cli asks the engine about OOM only when the program failed and says
    # "success": both are a completed run here.
    assert r.result is not None, r
    assert r["verdict"] in ("success", "oom") and r["exit_code"] == 0, r
    lines = r["stdout"].rstrip("\n").split("\n")
    m = SUMMARY.match(lines[-1])
    assert m, f"{name}: no summary line; output ends with {lines[-3:]!r}; {r!r}"
    attempts = lines[:-1]
    assert all(line.split(" ", 1)[0] in ("BLOCKED", "OK") for line in attempts), attempts
    holes = [line for line in attempts if not line.startswith("BLOCKED ")]
    assert not holes, (f"{name} under {BACKEND}: {len(holes)} attempt(s) NOT blocked:\n"
                       + "\n".join(holes))
    assert int(m.group(1)) == len(attempts) and int(m.group(2)) == 0, lines[-1]
    assert len(attempts) == ATTEMPTS[name], (
        f"{name}: {len(attempts)} attempts reported, {ATTEMPTS[name]} expected "
        f"(update ATTEMPTS if the script changed):\n" + "\n".join(attempts))


def test_escape_attempts_python():
    check_escape_script("escape_attempts.py")


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


KERNEL_KEYS = {"uname", "kernel_cmdline", "cpu"}  # the shared kernel: visible by design
ALLOWED_ENV = {"PATH", "HOME", "LANG", "HOSTNAME", "TMPDIR", "PWD", "OLDPWD", "SHLVL",
               "PYTHONDONTWRITEBYTECODE"}
STANDARD_PATH = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
HOSTS_TOKENS = {"127.0.0.1", "::1", "fe00::0", "ff00::0", "ff02::1", "ff02::2", "localhost",
                "ip6-localhost", "ip6-loopback", "ip6-localnet", "ip6-mcastprefix",
                "ip6-allnodes", "ip6-allrouters", "sandbox"}
ROOT_ENTRIES = {".", "..", ".dockerenv", "bin", "boot", "dev", "etc", "home", "lib", "lib32",
                "lib64", "libx32", "media", "mnt", "opt", "proc", "root", "run", "sbin", "srv",
                "sys", "tmp", "usr", "var"}
CONTAINER_ID = r"[0-9a-f]{64}"
MOUNTPOINT = re.compile(r"^/(proc(/[\w-]+)?|dev(/(pts|mqueue|shm))?|sys(/firmware|/fs/cgroup"
                        r"(/[\w,=]+)?)?|tmp|etc/(hostname|hosts|resolv\.conf))?$")


def check_mount(line):
    """One mountinfo line: an engine-standard mount point, and no host path of brig's making."""
    fields = line.split()
    sep = fields.index("-")
    root, point, fstype = fields[3], fields[4], fields[sep + 1]
    assert MOUNTPOINT.match(point), f"unexpected mount point {point}: {line}"
    if root == "/" or fstype == "proc" or (fstype == "tmpfs" and root == "/null"):
        return  # a file system's own root, a /proc subtree, a path masked with /dev/null
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
    assert "uid=65534" in get("id")[0], get("id")
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

    # and none of this host's own facts anywhere (the kernel lines aside)
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
    scan_for(env_values | {canary}, facts, "value of brig's environment")
    print(f"info: {len(addrs)} host addresses, {len(host_macs())} MACs, {len(names)} names, "
          f"{len(env_values)} environment values: none visible in the box", flush=True)


if __name__ == "__main__":
    main([
        test_escape_attempts_python,
        test_escape_attempts_node,
        test_escape_attempts_shell,
        test_enumeration_reveals_nothing_about_the_host,
    ])
