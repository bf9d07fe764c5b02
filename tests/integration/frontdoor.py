#!/usr/bin/env python3
"""The front doors and what the documentation says about them.

brig version / --help, `brig policy` and where the policy comes from (--policy, $BRIG_POLICY,
$(sysconfdir)/brig/policy.json, the defaults), `brig doctor`'s table and exit status, the order in
which `auto` picks a backend, the language aliases and file extensions, `brig explain` (the
docker-cli command really runs), `brig mcp --help / -q / --queue-per-run`, and the README's and
the man pages' examples checked against what the binary prints (the MCP example against the
server's own outputSchema, with ajv from tests/mcp).  Runs against the real dockerd; the backend
of the runs is $BRIG_TEST_BACKEND (default docker-api).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import brigtest
from brigtest import BRIG, main, skip
from mcpclient import brig_mcp

TOP = os.environ.get("top_srcdir", ".")
VERSION = os.environ.get("BRIG_PACKAGE_VERSION")
SYSCONFDIR = os.environ.get("BRIG_SYSCONFDIR")
PLUGINS = os.environ.get("BRIG_BACKEND_DIR", "")


def run(*args, env=None, stdin=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BRIG, *args], input=stdin, capture_output=True, text=True, env=e,
                          timeout=timeout)


def read(*path):
    with open(os.path.join(TOP, *path), encoding="utf-8") as f:
        return f.read()


class scratch:
    """A temporary directory for one test."""

    def __enter__(self):
        self.d = tempfile.mkdtemp(prefix="brig-it-frontdoor-")
        return self.d

    def __exit__(self, *exc):
        shutil.rmtree(self.d, ignore_errors=True)


def write(path, obj):
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


# ---- brig, brig version, brig --help ------------------------------------------------------------

def test_version():
    assert VERSION, "BRIG_PACKAGE_VERSION is not set (run through make check)"
    for arg in ("version", "--version"):
        p = run(arg)
        assert p.returncode == 0 and p.stdout == f"brig {VERSION}\n" and p.stderr == "", p


def test_usage_and_unknown_commands():
    p = run("--help")
    assert p.returncode == 0 and p.stdout.startswith("Usage: brig COMMAND"), p
    for cmd in ("run", "explain", "policy", "doctor", "mcp", "gc", "version"):
        assert re.search(rf"^  {cmd}\b", p.stdout, re.M), (cmd, p.stdout)
    p = subprocess.run([BRIG], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and p.stderr.startswith("Usage: brig COMMAND") and not p.stdout, p
    p = run("frobnicate")
    assert p.returncode == 2 and "unknown command 'frobnicate'" in p.stderr, p
    p = run("run", "--no-such-option")
    assert p.returncode == 2 and "Usage: brig run" in p.stderr, p


# ---- the policy: brig policy and where it comes from ----------------------------------------------

def policy_of(*args, env=None):
    p = run("policy", *args, env=env)
    assert p.returncode == 0, p
    return json.loads(p.stdout), p.stderr


def test_policy_prints_the_effective_policy():
    pol, err = policy_of()
    assert pol["timeout_seconds"] == 5 and pol["memory_mb"] == 256 and pol["network"] is False, pol
    assert err == "", err
    with scratch() as d:
        pol, err = policy_of("--policy", write(f"{d}/p.json", {"memory_mb": 128}))
        assert pol["memory_mb"] == 128 and pol["timeout_seconds"] == 5, pol
        # operator flags override the file; a loosening one says so
        pol, err = policy_of("--policy", f"{d}/p.json", "--memory", "512m", "--cpus", "0.5")
        assert pol["memory_mb"] == 512 and pol["cpus"] == 0.5, pol
        assert "warning: --memory 512m loosens the policy's memory_mb" in err, err
        assert "--cpus" not in err, err  # 0.5 tightens
        # refused: the file, the key path and the reason, exit 2
        p = run("policy", "--policy", write(f"{d}/bad.json", {"user": "0:0"}))
        assert p.returncode == 2 and p.stdout == "", p
        assert p.stderr.startswith(f"brig: {d}/bad.json: user: uid 0 (root) is refused"), p
        p = run("policy", "--policy", write(f"{d}/bad.json", {"images": {"python": "x"}}))
        assert p.returncode == 2 and "images.python" in p.stderr, p
        p = run("policy", "--policy", write(f"{d}/bad.json", {"no_such_key": 1}))
        assert p.returncode == 2 and "no_such_key" in p.stderr, p


def in_private_sysconfdir(files, *args, env=None):
    """`brig ARGS` in a private mount namespace where $(sysconfdir) is an empty tmpfs holding
    `files` ({relative path: content}): the host's own files (and every other brig on this
    machine) are never touched.  Created directories are removed again."""
    made = []
    d = SYSCONFDIR
    while not os.path.isdir(d):
        made.append(d)
        d = os.path.dirname(d)
    for m in reversed(made):
        os.mkdir(m)
    try:
        with scratch() as src:
            for rel, content in files.items():
                os.makedirs(os.path.dirname(f"{src}/{rel}"), exist_ok=True)
                write(f"{src}/{rel}", content)
            e = {k: v for k, v in dict(os.environ, **(env or {})).items() if v is not None}
            script = 'mount -t tmpfs brig-it "$1" && cp -a "$2"/. "$1"/ && shift 2 && exec "$@"'
            return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                   script, "sh", SYSCONFDIR, src, BRIG, *args],
                                  capture_output=True, text=True, env=e, timeout=120)
    finally:
        for m in made:
            os.rmdir(m)


def test_policy_sources_in_order():
    """--policy, else $BRIG_POLICY, else $(sysconfdir)/brig/policy.json, else the defaults."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        skip("needs root and unshare for a private $(sysconfdir)")
    assert SYSCONFDIR, "BRIG_SYSCONFDIR is not set (run through make check)"
    with scratch() as d:
        flag, envf = write(f"{d}/flag.json", {"memory_mb": 100}), write(f"{d}/env.json",
                                                                         {"memory_mb": 200})
        system = {"brig/policy.json": json.dumps({"memory_mb": 300})}
        env = {"BRIG_POLICY": envf}
        noenv = {"BRIG_POLICY": None}  # unset

        def memory(p):
            assert p.returncode == 0, p
            return json.loads(p.stdout)["memory_mb"]

        assert memory(in_private_sysconfdir(system, "policy", "--policy", flag, env=env)) == 100
        assert memory(in_private_sysconfdir(system, "policy", env=env)) == 200
        assert memory(in_private_sysconfdir(system, "policy", env=noenv)) == 300
        assert memory(in_private_sysconfdir({}, "policy", env=noenv)) == 256
        # the system file is validated like any other
        p = in_private_sysconfdir({"brig/policy.json": '{"memory_mb": "lots"}'}, "policy",
                                  env=noenv)
        assert p.returncode == 2 and f"{SYSCONFDIR}/brig/policy.json: memory_mb" in p.stderr, p


# ---- brig doctor ----------------------------------------------------------------------------------

def test_doctor_table_and_exit_status():
    p = run("doctor")
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["BACKEND", "ISOLATION", "AVAILABLE", "RUNTIME", "DETAIL"], p
    rows = {line.split()[0]: line.split() for line in lines[1:4]}
    assert set(rows) == {"docker-cli", "docker-api", "gvisor"}, p.stdout
    assert rows["docker-api"][1:4] == ["container", "yes", "runc"], p.stdout
    assert rows["gvisor"][1:4] == ["gvisor", "yes", "runsc-seccomp"], p.stdout
    assert "selected: gvisor (gvisor isolation, runtime runsc-seccomp)" in lines, p.stdout
    for lang in ("python", "node", "shell"):
        assert re.search(rf"^  {lang} +brig/{lang}:bookworm +present sha256:[0-9a-f]{{12}}, ",
                         p.stdout, re.M), p.stdout
    j = run("doctor", "--json")
    assert j.returncode == 0 and json.loads(j.stdout)["selected"] == "gvisor", j
    with scratch() as d:
        # a missing image: exit 1, MISSING, and how to build it
        p = run("doctor", "--policy", write(f"{d}/p.json",
                                            {"images": {"shell": "brig/not-built:1"}}))
        assert p.returncode == 1, p
        assert re.search(r"^  shell +brig/not-built:1 +MISSING$", p.stdout, re.M), p.stdout
        assert "scripts/setup-host" in p.stdout, p.stdout
        # no engine at all: no backend, exit 1 (the text and --json)
        noeng = {"DOCKER_HOST": "unix:///nonexistent/docker.sock", "BRIG_DOCKER": "/bin/false"}
        for args in ((), ("--json",)):
            p = run("doctor", *args, env=noeng)
            assert p.returncode == 1, p
        assert json.loads(p.stdout)["selected"] is None, p.stdout
        p = run("doctor", env=noeng)
        assert "selected: NONE - " in p.stdout and " no " in p.stdout, p.stdout
        p = run("doctor", "--bogus")
        assert p.returncode == 2, p


# ---- auto: the strongest isolation, then the fastest backend --------------------------------------

def plugin_dir(d, names):
    """A plugin directory holding only `names` (and the Engine API client they share), with
    brig-init beside it, where brig looks for it."""
    os.makedirs(d)
    for n in names + ["libbrig-dock"]:
        os.symlink(os.path.realpath(os.path.join(PLUGINS, f"{n}.so")), f"{d}/{n}.so")
    init = os.path.join(os.path.dirname(d), "brig-init")
    if not os.path.exists(init):
        shutil.copy2(os.path.join(PLUGINS, "..", "brig-init"), init)
    return d


def test_auto_order():
    """auto picks gvisor when it works, else docker-api, else docker-cli - in doctor and in a
    real run; --isolation gvisor never settles for less."""
    with scratch() as d:
        # (the docker CLI cannot mask paths: alone, it runs with the operator's opt-out)
        cases = [
            (["docker-cli", "docker-api", "gvisor"], {}, "gvisor"),
            (["docker-cli", "docker-api", "gvisor"], {"gvisor_runtime": "runsc-nope"},
             "docker-api"),
            (["docker-cli", "docker-api"], {}, "docker-api"),
            (["docker-cli"], {"mask_host_details": False}, "docker-cli"),
        ]
        for i, (names, policy, want) in enumerate(cases):
            env = {"BRIG_BACKEND_DIR": plugin_dir(f"{d}/{i}", names)}
            write(f"{d}/policy-{i}.json", json.dumps(policy))
            pol = ["--policy", f"{d}/policy-{i}.json"]
            p = run("doctor", "--json", *pol, env=env)
            assert json.loads(p.stdout)["selected"] == want, (names, policy, p.stdout)
            p = run("run", "--json", *pol, "-t", "30", "-l", "shell", "-c", "echo ran", env=env)
            res = json.loads(p.stdout)
            assert res["backend"] == want and res["stdout"] == "ran\n", (names, policy, res)
        p = run("run", "--isolation", "gvisor", "-l", "shell", "-c", "echo ran",
                env={"BRIG_BACKEND_DIR": f"{d}/2"})
        assert p.returncode == 125 and "ran" not in p.stdout, p


# ---- languages ------------------------------------------------------------------------------------

IMAGE = {"python": "brig/python:bookworm", "node": "brig/node:bookworm", "shell": "brig/shell:bookworm"}


def explained_image(*args):
    p = run("explain", "--backend", "docker-cli", *args)
    assert p.returncode == 0, p
    m = re.search(r"^# image: (brig/\S+) = sha256:[0-9a-f]{64} ", p.stdout, re.M)
    assert m, p.stdout
    return m.group(1)


def test_language_aliases_and_extensions():
    aliases = {"python": ["python", "py", "python3", "PY", "Python"],
               "node": ["node", "nodejs", "javascript", "js", "JS"],
               "shell": ["shell", "sh", "SH"]}
    for lang, names in aliases.items():
        for n in names:
            assert explained_image("-l", n, "-c", "x") == IMAGE[lang], n
    p = run("explain", "--backend", "docker-cli", "-l", "ruby", "-c", "x")
    assert p.returncode == 2 and "unknown language 'ruby'" in p.stderr, p
    with scratch() as d:
        for ext, lang in ((".py", "python"), (".js", "node"), (".mjs", "node"),
                          (".cjs", "node"), (".sh", "shell")):
            assert explained_image(write(f"{d}/prog{ext}", "x\n")) == IMAGE[lang], ext
        # -l wins over the extension; an unknown extension needs -l
        assert explained_image("-l", "sh", write(f"{d}/prog.py", "x\n")) == IMAGE["shell"]
        p = run("run", write(f"{d}/prog.rb", "x\n"))
        assert p.returncode == 2 and "which language?" in p.stderr, p
        # and a real run by extension
        p = run("run", "--backend", brigtest.BACKEND, "-t", "30", "--json",
                write(f"{d}/prog.mjs", "console.log(typeof require)\n"))
        res = json.loads(p.stdout)
        assert res["language"] == "node" and res["stdout"] == "function\n", res


def test_mcp_language_aliases():
    """The server takes brig run's aliases too (brig-mcp(1)), although the inputSchema offers
    only the three names: a client that validates against the schema sends those."""
    m = brig_mcp(BRIG, "--backend", brigtest.BACKEND, "-q", env=dict(os.environ),
                 stderr=subprocess.DEVNULL)
    try:
        tools = m.request("tools/list", {})["result"]["tools"]
        enum = next(t for t in tools if t["name"] == "run_code")["inputSchema"]["properties"][
            "language"]["enum"]
        assert enum == ["python", "node", "shell"], enum
        for alias, code, want in (("py", "print(1)", "python"), ("js", "console.log(1)", "node"),
                                  ("sh", "echo 1", "shell")):
            r = m.run_code(alias, code, timeout_seconds=30)
            assert r["language"] == want and r["stdout"] == "1\n", r
    finally:
        m.close()


# ---- brig explain ---------------------------------------------------------------------------------

def test_explain_docker_cli_command_runs():
    """For docker-cli, explain prints the exact `docker run` command: run as printed (the
    profile written as it says), it runs the code under the same identity and is removed."""
    p = run("explain", "--backend", "docker-cli", "-l", "shell", "-c", "id -u; echo $HOME")
    assert p.returncode == 0, p
    lines = p.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if " run \\" in line)
    end = next(i for i, line in enumerate(lines) if line.endswith("< CODE"))
    command = "\n".join(lines[start:end + 1])[:-len("< CODE")]
    name = re.search(r"--name (brig-[0-9a-f]+)", command).group(1)
    with scratch() as d:
        prof = run("policy", "--seccomp-profile")
        assert prof.returncode == 0, prof
        write(f"{d}/brig-seccomp.json", prof.stdout)
        # stdin as explain says: brig-init's header line (the box's own deadline), the code
        r = subprocess.run(["sh", "-c", command], cwd=d,
                           input="BRIG-DEADLINE 30000\nid -u; echo $HOME\n",
                           capture_output=True, text=True, timeout=120)
    uid = re.search(r"--user (\d+):65534", command).group(1)
    assert r.returncode == 0 and r.stdout == f"{uid}\n/tmp\n", r
    assert not brigtest.container_exists(name), name


def test_explain_under_auto_shows_the_engine_requests():
    """With auto (here: gvisor), explain prints the Engine API requests, not a docker command
    (README and brig(1) say which)."""
    p = run("explain", "-l", "python", "-c", "print(1)")
    assert p.returncode == 0, p
    assert p.stdout.startswith("# backend: gvisor"), p.stdout[:200]
    assert "POST /v1." in p.stdout and "/containers/create" in p.stdout, p.stdout[:600]
    assert "docker run" not in p.stdout, p.stdout[:600]


# ---- brig mcp's own options -----------------------------------------------------------------------

def test_mcp_help_and_bad_options():
    p = run("mcp", "--help")
    assert p.returncode == 0 and p.stdout.startswith("Usage: brig mcp"), p
    for opt in ("--queue-per-run N", "-q, --quiet", "-h, --help", "--policy"):
        assert opt in p.stdout, (opt, p.stdout)
    p = run("mcp", "-h")
    assert p.returncode == 0 and p.stdout.startswith("Usage: brig mcp"), p
    for bad in ("0", "65", "x"):
        p = run("mcp", "--queue-per-run", bad, stdin="")
        assert p.returncode == 2 and "--queue-per-run" in p.stderr, (bad, p)
    p = run("mcp", "--bogus", stdin="")
    assert p.returncode == 2 and "Usage: brig mcp" in p.stderr, p


def mcp_session(args, calls):
    """A `brig mcp ARGS` session making `calls` (run_code arguments) at once; (answers,
    stderr)."""
    err = tempfile.TemporaryFile()
    m = brig_mcp(BRIG, "--backend", brigtest.BACKEND, *args, env=dict(os.environ), stderr=err)
    try:
        ids = [m.send_request("tools/call", {"name": "run_code", "arguments": a}) for a in calls]
        answers = [m.wait(i, timeout=120) for i in ids]
    finally:
        m.close()
    err.seek(0)
    return answers, err.read().decode()


def test_mcp_quiet():
    """-q / --quiet: no per-call lines on stderr (the lines without it name the call)."""
    call = {"language": "shell", "code": "echo hi", "timeout_seconds": 30}
    _, loud = mcp_session([], [call])
    assert re.search(r"call \d+: run_code shell", loud), loud
    for q in ("-q", "--quiet"):
        answers, quiet = mcp_session([q], [call])
        assert answers[0]["result"]["structuredContent"]["stdout"] == "hi\n", answers
        assert "call " not in quiet and "run_code" not in quiet, quiet


def test_mcp_queue_per_run():
    """--queue-per-run 1 with max_concurrent_runs 1: one call runs, one waits, a third is
    answered at once with the busy result (the default, 4, would let it wait); the two
    complete."""
    with scratch() as d:
        pol = write(f"{d}/p.json", {"max_concurrent_runs": 1, "warm_pool": 0})
        m = brig_mcp(BRIG, "--backend", brigtest.BACKEND, "--policy", pol, "--queue-per-run",
                     "1", "-q", env=dict(os.environ), stderr=subprocess.DEVNULL)
        try:
            slow = {"name": "run_code", "arguments": {"language": "shell", "timeout_seconds": 30,
                                                      "code": "sleep 3; echo done"}}

            def load_is(running, queued):
                end = time.monotonic() + 30
                while time.monotonic() < end:
                    load = m.status()["load"]
                    if load == {"running": running, "queued": queued}:
                        return
                    time.sleep(0.05)
                raise AssertionError(f"load never {running} running, {queued} queued: {load}")

            first = m.send_request("tools/call", slow)
            load_is(1, 0)
            second = m.send_request("tools/call", slow)
            load_is(1, 1)
            third = m.request("tools/call", slow, timeout=10)["result"]
            assert third["isError"] is True and "busy" in third["content"][0]["text"], third
            for rid in (first, second):
                res = m.wait(rid, timeout=60)["result"]
                assert res["structuredContent"]["stdout"] == "done\n", res
        finally:
            m.close()


# ---- the documentation's examples against the binary ------------------------------------------

def readme_json_blocks():
    return [m.group(1) for m in re.finditer(r"```json\n(.*?)```", read("README.md"), re.S)]


def real_result():
    p = run("run", "--backend", brigtest.BACKEND, "--json", "-t", "30", "-l", "python", "-c",
            "print(45)")
    return json.loads(p.stdout)


def test_result_fields_documented():
    """Every key of a real result is in the README's --json example, in brig(1) RESULT and in
    brig-mcp(1), and nothing else is."""
    keys = set(real_result())
    example = next(json.loads(b) for b in readme_json_blocks() if '"verdict"' in b and
                   '"jsonrpc"' not in b)
    assert set(example) == keys, set(example) ^ keys
    # brig(1) sets the keys in bold; brig-mcp(1) in italics (its verdicts are bold)
    for page, section, key in (
            ("brig.1.md", r"# RESULT\n(.*?)The verdict is", r"\*\*([a-z_0-9]+)\*\*"),
            ("brig-mcp.1.md", r"\*\*structuredContent\*\*, the result object(.*?)\. The tool",
             r"(?<!\*)\*([a-z_0-9]+)\*(?!\*)")):
        text = re.search(section, read("man", page), re.S).group(1)
        named = set(re.findall(key, text))
        assert named == keys, (page, named ^ keys)


def ajv_validate(schema, instance):
    """Validate with ajv (the client library the e2e test uses, tests/mcp's node_modules)."""
    modules = os.environ.get("BRIG_MCP_NODE_MODULES") or os.path.join(TOP, "tests", "mcp",
                                                                        "node_modules")
    if not os.path.isdir(os.path.join(modules, "ajv")) or not shutil.which("node"):
        skip(f"ajv is not installed in {modules} (npm ci in tests/mcp; scripts/test-all does)")
    js = ("const Ajv = require('ajv'); const [s, i] = JSON.parse(require('fs')"
          ".readFileSync(0, 'utf8')); const v = new Ajv({strict: true, allowUnionTypes: true,"
          " allErrors: true}).compile(s); if (!v(i)) { console.log(JSON.stringify(v.errors));"
          " process.exit(1); }")
    p = subprocess.run(["node", "-e", js], input=json.dumps([schema, instance]),
                       capture_output=True, text=True, timeout=60,
                       cwd=os.path.dirname(os.path.realpath(modules)))
    return p.returncode == 0, p.stdout + p.stderr


def test_readme_mcp_example_matches_the_schema():
    """The README's tools/call request is valid for run_code's inputSchema, and its answer's
    structuredContent for the outputSchema the server itself publishes."""
    m = brig_mcp(BRIG, "-q", env=dict(os.environ), stderr=subprocess.DEVNULL)
    try:
        tools = {t["name"]: t for t in m.request("tools/list", {})["result"]["tools"]}
    finally:
        m.close()
    blocks = [json.loads(b) for b in readme_json_blocks() if '"jsonrpc"' in b]
    request = next(b for b in blocks if b.get("method") == "tools/call")
    answer = next(b for b in blocks if "result" in b)
    ok, why = ajv_validate(tools["run_code"]["inputSchema"], request["params"]["arguments"])
    assert ok, why
    ok, why = ajv_validate(tools["run_code"]["outputSchema"], answer["result"]["structuredContent"])
    assert ok, f"README's MCP answer does not match the server's outputSchema: {why}"
    assert set(answer["result"]["structuredContent"]) == set(real_result())


def test_documented_environment():
    """brig-policy(5) names the box's whole environment: every variable of every language's box
    (as explain renders it) is in its list."""
    text = re.search(r"an environment of (.*?); the code on standard input",
                     read("man", "brig-policy.5.md"), re.S).group(1)
    for lang in ("python", "node", "shell"):
        p = run("explain", "--backend", "docker-cli", "-l", lang, "-c", "x")
        names = re.findall(r"--env ([A-Z_]+)=", p.stdout)
        assert names, p.stdout
        missing = [n for n in names if n not in text]
        assert not missing, (lang, missing, text)


def test_timeout_above_max_refused_everywhere():
    """brig(1): above max_timeout_seconds the CLI refuses (exit 2) and so does the MCP server
    (isError naming the limit): neither shortens it."""
    p = run("run", "-t", "31", "-l", "shell", "-c", "echo x")
    assert p.returncode == 2 and "max_timeout_seconds" in p.stderr, p
    answers, _ = mcp_session(["-q"], [{"language": "shell", "code": "echo x",
                                       "timeout_seconds": 31}])
    res = answers[0]["result"]
    assert res["isError"] is True and "structuredContent" not in res, res
    assert "max_timeout_seconds (30)" in res["content"][0]["text"], res


if __name__ == "__main__":
    main([
        test_version,
        test_usage_and_unknown_commands,
        test_policy_prints_the_effective_policy,
        test_policy_sources_in_order,
        test_doctor_table_and_exit_status,
        test_auto_order,
        test_language_aliases_and_extensions,
        test_mcp_language_aliases,
        test_explain_docker_cli_command_runs,
        test_explain_under_auto_shows_the_engine_requests,
        test_mcp_help_and_bad_options,
        test_mcp_quiet,
        test_mcp_queue_per_run,
        test_result_fields_documented,
        test_readme_mcp_example_matches_the_schema,
        test_documented_environment,
        test_timeout_above_max_refused_everywhere,
    ])
