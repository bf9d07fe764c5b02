#!/usr/bin/env python3
"""box.py - one owner of the box: what `brig explain --json` says will run, what the engine
reports of the RUNNING container (docker inspect), and what the audit line records must agree
field by field, under docker-cli, docker-api and gvisor.

The spec is the final description of the box: a field that a backend added or changed on its own
(gVisor's wrapper, its pids limit, an environment variable, the seccomp profile) shows up here as
a mismatch between explain and the engine; a limit the audit line records other than the engine
got shows up as a mismatch there.
"""
import hashlib
import json
import os
import subprocess
import tempfile
import time

from brigtest import BRIG, docker, main, remove_audit_log

# box.py sets each backend's policy itself (policy_args), whatever backend brigtest was given
os.environ.pop("BRIG_POLICY", None)

BACKENDS = ("docker-cli", "docker-api", "gvisor")
MIB = 1024 * 1024
CODE = "import time\nprint('up', flush=True)\ntime.sleep(8)\n"


def policy_args(backend):
    """The default policy, but for docker-cli, which cannot set the engine's masked paths: the
    operator's opt-out (mask_host_details false), as its suites run."""
    if backend != "docker-cli":
        return []
    f = tempfile.NamedTemporaryFile("w", prefix="brig-box-", suffix=".json", delete=False)
    json.dump({"mask_host_details": False}, f)
    f.close()
    return ["--policy", f.name]


def explain(backend):
    p = subprocess.run([BRIG, "explain", "--json", "--backend", backend, *policy_args(backend),
                        "-t", "20", "-l", "python", "-c", CODE],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p
    return json.loads(p.stdout)


def running_box(pid, deadline=60):
    """docker inspect of the run's box (brig.owner PID:..., not a smoke box) once it runs."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        r = docker("ps", "--filter", "label=brig=1", "--format",
                   '{{.Names}} {{.Label "brig.owner"}} {{.Label "brig.probe"}}')
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 2 and f[1].startswith(f"{pid}:"):
                i = docker("inspect", f[0])
                if i.returncode == 0:
                    c = json.loads(i.stdout)[0]
                    if c["State"]["Running"]:
                        return c
        time.sleep(0.05)
    raise AssertionError(f"no running box of brig pid {pid} within {deadline} s")


BOX_UIDS = range(2000000000, 2000001024)  # policy uid_range's default


def box_user(got, want):
    """Under user "auto" every box leases a uid of its own, so explain (another process) shows an
    example: the same group, both uids from uid_range."""
    try:
        (gu, gg), (wu, wg) = got.split(":"), want.split(":")
        return gg == wg and int(gu) in BOX_UIDS and int(wu) in BOX_UIDS
    except (AttributeError, ValueError):
        return False


def unmark(argv, marker):
    return ["<marker>" if marker and a == marker else a for a in argv]


def compare_engine(spec, c):
    cfg, hc = c["Config"], c["HostConfig"]
    name = c["Name"].lstrip("/")
    bad = []

    def eq(what, got, want):
        if got != want:
            bad.append(f"{what}: engine {got!r}, explain {want!r}")

    # the box starts from the ID the policy's reference named when it was looked up (pinned
    # or not); the engine records what it was given and the image it resolved
    eq("image", cfg["Image"], spec["image_id"] or spec["image"])
    eq("image id", c["Image"], spec["image_id"])
    marker = name + ":exited" if spec["exit_marker"] else None
    eq("argv", unmark(cfg["Cmd"], marker), unmark(spec["argv"], spec["exit_marker"]))
    # the engine adds the image's own ENV; every variable of the spec is there with its value,
    # and nothing the spec sets has another value
    env = dict(e.split("=", 1) for e in cfg["Env"])
    for e in spec["env"]:
        k, v = e.split("=", 1)
        eq(f"env {k}", env.get(k), v)
    if not any(e.startswith("PYTHONUNBUFFERED=") for e in spec["env"]):
        eq("env PYTHONUNBUFFERED", env.get("PYTHONUNBUFFERED"), None)
    if not box_user(cfg["User"], spec["user"]):
        eq("user", cfg["User"], spec["user"])
    eq("workdir", cfg["WorkingDir"], spec["workdir"])
    eq("hostname", cfg["Hostname"], spec["hostname"])
    for label in spec["labels"]:
        k, v = label.split("=", 1)
        if k != "brig.owner":  # explain's process is not the run's
            eq(f"label {k}", cfg["Labels"].get(k), v)
    eq("network", hc["NetworkMode"], spec["network"])
    eq("dns", hc["Dns"], [spec["dns"]] if spec["dns"] else [])
    eq("runtime", hc["Runtime"], spec["runtime"])
    eq("read-only root", hc["ReadonlyRootfs"], spec["read_only_rootfs"])
    eq("tmpfs", hc["Tmpfs"], {spec["tmpfs_path"]: spec["tmpfs_options"]})
    eq("shm", hc["ShmSize"], spec["shm_bytes"])
    eq("memory", hc["Memory"], spec["memory_bytes"])
    eq("memory+swap", hc["MemorySwap"], spec["memory_swap_bytes"])
    eq("cpus", hc["NanoCpus"], spec["nano_cpus"])
    eq("pids limit", hc["PidsLimit"], spec["pids_limit"])
    ulimits = {u["Name"]: (u["Soft"], u["Hard"]) for u in hc["Ulimits"] or []}
    eq("nofile", ulimits.get("nofile"), (spec["nofile"], spec["nofile"]))
    eq("nproc", ulimits.get("nproc"), (spec["nproc"], spec["nproc"]) if spec["nproc"] else None)
    eq("core", ulimits.get("core"), (spec["core"], spec["core"]))
    eq("cgroupns", hc.get("CgroupnsMode"), "private" if spec["cgroupns_private"] else "")
    if spec["masked_paths"]:  # without a list of its own the engine applies its defaults
        eq("masked paths", hc.get("MaskedPaths"), spec["masked_paths"])
    eq("cap drop", hc["CapDrop"], ["ALL"] if spec["cap_drop_all"] else None)
    sec = hc["SecurityOpt"] or []
    eq("no-new-privileges", "no-new-privileges" in sec, spec["no_new_privileges"])
    prof = [s[len("seccomp="):] for s in sec if s.startswith("seccomp=")]
    got_sha = hashlib.sha256(prof[0].encode()).hexdigest() if prof else None
    eq("seccomp profile sha256", got_sha, spec["seccomp_sha256"])
    eq("log driver", hc["LogConfig"]["Type"], spec["log_driver"])
    mounts = [{"type": m["Type"], "source": m.get("Source"), "target": m["Target"],
               "read_only": m.get("ReadOnly", False)} for m in hc.get("Mounts") or []]
    eq("mounts", mounts, [{k: m[k] for k in ("type", "source", "target", "read_only")}
                          for m in spec["mounts"]])
    return bad


def compare_audit(spec, line):
    lim = line["limits"]
    bad = []

    def eq(what, got, want):
        if got != want:
            bad.append(f"{what}: audit {got!r}, explain {want!r}")

    eq("image", line["image"], spec["image"])
    eq("image id", line.get("image_id"), spec["image_id"])
    eq("runtime", line["runtime"], spec["runtime"])
    eq("timeout", lim["timeout_seconds"] * 1000, spec["timeout_ms"])
    eq("memory", lim["memory_mb"] * MIB, spec["memory_bytes"])
    eq("memory+swap", lim["memory_swap_mb"] * MIB, spec["memory_swap_bytes"])
    eq("cpus", round(lim["cpus"] * 1e9), spec["nano_cpus"])
    eq("pids limit", lim["pids_limit"], spec["pids_limit"])
    eq("nproc", lim["nproc"], spec["nproc"] or None)
    eq("nofile", lim["nofile"], spec["nofile"])
    eq("tmpfs", lim["tmpfs"], spec["tmpfs_options"])
    eq("shm", lim["shm_mb"] * MIB, spec["shm_bytes"])
    eq("output cap", lim["max_output_bytes"], spec["max_output_bytes"])
    eq("input cap", lim["max_input_bytes"], spec["max_input_bytes"])
    eq("network", lim["network"], spec["network"])
    if not box_user(lim["user"], spec["user"]):
        eq("user", lim["user"], spec["user"])
    eq("seccomp", lim["seccomp"], spec["seccomp_name"])
    # where the engine got another value than the policy states, the audit line says both
    if spec["pids_limit"] != spec["pids_guest"]:
        eq("policy pids_limit", line.get("policy", {}).get("pids_limit"), spec["pids_guest"])
    if spec["max_output_bytes"] != spec["output_limit"]:
        eq("policy max_output_bytes", line.get("policy", {}).get("max_output_bytes"),
           spec["output_limit"])
    return bad


def check_backend(backend):
    x = explain(backend)
    spec = x["spec"]
    assert x["backend"] == backend and spec["runtime"] == x["runtime"], x
    assert bool(spec["masked_paths"]) != (backend == "docker-cli"), spec["masked_paths"]
    audit = tempfile.NamedTemporaryFile(prefix="brig-audit-", suffix=".jsonl", delete=False)
    audit.close()
    try:
        p = subprocess.Popen([BRIG, "run", "--backend", backend, *policy_args(backend),
                              "--audit-log", audit.name, "-t", "20", "--json", "-l", "python",
                              "-c", CODE],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            box = running_box(p.pid)
        finally:
            out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (out, err)
        res = json.loads(out)
        assert res["verdict"] == "success" and res["stdout"] == "up\n", res
        assert box["Name"].lstrip("/") == res["container"], (box["Name"], res["container"])
        bad = compare_engine(spec, box)
        with open(audit.name) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        assert len(lines) == 1, lines
        # the run's own uid: the same in the engine, the audit line and the result
        users = (box["Config"]["User"], lines[0]["limits"]["user"], res["user"])
        assert len(set(users)) == 1, users
        bad += compare_audit(spec, lines[0])
        assert not bad, f"{backend}: " + "; ".join(bad)
        print(f"  {backend}: explain, engine and audit agree on {len(spec)} fields "
              f"(runtime {spec['runtime']}, pids {spec['pids_limit']}, nproc {spec['nproc']})")
    finally:
        remove_audit_log(audit.name)


def test_docker_cli():
    check_backend("docker-cli")


def test_docker_api():
    check_backend("docker-api")


def test_gvisor():
    check_backend("gvisor")


if __name__ == "__main__":
    main([test_docker_cli, test_docker_api, test_gvisor])
