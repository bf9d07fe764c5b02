#!/usr/bin/env python3
"""Pinned images and `brig images` against the real engine and the real runtime images.

An image pinned by its ID (bare, or NAME:TAG@ID) runs, and the box starts from that ID (explain,
the backend's rendering, the audit line); with require_pinned a tag is refused; a tag retagged to
another image is refused with both IDs and starts nothing; `brig images --json` says what
`docker image inspect` says, and the "pin" lines it prints, pasted into a policy, pin every image
and run.  $BRIG_TEST_BACKEND names the backend (docker-api: runc; gvisor: runsc-seccomp).  The
only images this suite makes are throwaway tags brig-test/*-PID:x, removed at the end; it never
removes an image by ID.
"""
import atexit
import json
import os
import re
import subprocess
import tempfile

from brigtest import BACKEND, BRIG, brig, docker, main, remove_audit_log, require_engine, skip
from mcpclient import brig_mcp

IMAGES = {"python": "brig/python:bookworm", "node": "brig/node:bookworm",
          "shell": "brig/shell:bookworm"}
RETAG = f"brig-test/retag-{os.getpid()}:x"
REBUILT = f"brig-test/rebuilt-{os.getpid()}:x"
MISSING = f"brig-test/missing-{os.getpid()}:none"
HEX64 = re.compile(r"sha256:[0-9a-f]{64}")


def image_id(ref):
    r = docker("image", "inspect", "--format", "{{.Id}}", ref)
    assert r.returncode == 0, (ref, r.stderr)
    return r.stdout.strip()


def inspect(ref):
    r = docker("image", "inspect", ref)
    assert r.returncode == 0, (ref, r.stderr)
    return json.loads(r.stdout)[0]


def policy(obj):
    fd, path = tempfile.mkstemp(prefix="brig-images-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f)
    atexit.register(os.unlink, path)
    return path


def cli(*args, timeout=120):
    """A brig subcommand with the backend under test (not `run`: see brigtest.brig)."""
    cmd = [BRIG, args[0], "--backend", BACKEND, *args[1:]]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def images_json(pol=None):
    p = cli("images", "--json", *(["--policy", pol] if pol else []))
    return p.returncode, json.loads(p.stdout)


def explain_json(pol, lang, code):
    p = cli("explain", "--json", "--policy", pol, "-l", lang, "-c", code)
    assert p.returncode == 0, p
    return json.loads(p.stdout)


def audit_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def audited_run(pol, lang, code):
    fd, log = tempfile.mkstemp(prefix="brig-images-audit-")
    os.close(fd)
    try:
        r = brig("--policy", pol, "--audit-log", log, code=code, lang=lang)
        return r, audit_lines(log)
    finally:
        remove_audit_log(log)


def test_images_json_is_the_engine():
    rc, rep = images_json()
    assert rc == 0 and rep["backend"] == BACKEND and rep["error"] is None, rep
    assert rep["require_pinned"] is False, rep
    assert [e["language"] for e in rep["images"]] == ["python", "node", "shell"], rep
    for e in rep["images"]:
        ref = IMAGES[e["language"]]
        d = inspect(ref)
        labels = {k: v for k, v in (d["Config"]["Labels"] or {}).items()
                  if k.startswith("org.brig.")}
        assert e["image"] == ref and e["present"] is True and e["error"] is None, e
        assert e["id"] == d["Id"] and HEX64.fullmatch(e["id"]), (e["id"], d["Id"])
        assert e["size"] == d["Size"] and e["created"] == d["Created"], e
        # (the images suite of another backend, running beside this one, tags an image for a
        # moment: its tag may be there when brig looks and gone when the test does)
        def own(tags):
            return [t for t in tags or [] if not t.startswith("brig-test/retag-")]
        assert own(e["tags"]) == own(d["RepoTags"]), (e["tags"], d["RepoTags"])
        assert e["digests"] == (d["RepoDigests"] or []), e
        assert e["labels"] == labels and e["labelled"] is True, (e["labels"], labels)
        assert e["runtime"] == labels["org.brig.runtime"], e
        assert e["package"] == labels["org.brig.package"], e
        assert e["pinned"] is False and e["pin"] is None and e["pin_holds"] is None, e
        assert e["pin_ref"] == f"{ref}@{d['Id']}" and e["problem"] is None, e
    # brig doctor shows the same entries
    p = subprocess.run([BRIG, "doctor", "--json"], capture_output=True, text=True, timeout=180)
    assert json.loads(p.stdout)["images"] == rep["images"]


def test_pin_lines_pin_every_image():
    """What an operator does: paste the "pin" lines of `brig images` into the policy."""
    p = cli("images")
    assert p.returncode == 0, p
    for lang, ref in IMAGES.items():
        assert re.search(rf"^{lang} +{re.escape(ref)}$", p.stdout, re.M), p.stdout
    pins = dict(re.findall(r'^  pin +"(\w+)": "([^"]+)"$', p.stdout, re.M))
    assert pins == {lang: f"{ref}@{image_id(ref)}" for lang, ref in IMAGES.items()}, pins
    pol = policy({"require_pinned": True, "images": pins})
    rc, rep = images_json(pol)
    assert rc == 0 and rep["require_pinned"] is True, rep
    for e in rep["images"]:
        assert e["pinned"] is True and e["pin_holds"] is True, e
        assert e["pin"] == image_id(IMAGES[e["language"]]), e
        assert e["pin_ref"] == e["image"], e  # already the pinned form
    text = cli("images", "--policy", pol).stdout
    assert text.count("pinned     yes, sha256:") == 3, text
    for lang, code in (("shell", "echo pinned"), ("python", "print('pinned')"),
                       ("node", "console.log('pinned')")):
        r = brig("--policy", pol, code=code, lang=lang)
        assert r.rc == 0 and r["stdout"] == "pinned\n" and r["image"] == pins[lang], r


def test_pinned_by_id_runs():
    shell_id, py_id = image_id(IMAGES["shell"]), image_id(IMAGES["python"])
    pol = policy({"require_pinned": True,
                  "images": {"shell": shell_id, "python": f"{IMAGES['python']}@{py_id}",
                             "node": f"{IMAGES['node']}@{image_id(IMAGES['node'])}"}})
    for lang, ref, want, code in (("shell", shell_id, shell_id, "echo by-id"),
                                  ("python", f"{IMAGES['python']}@{py_id}", py_id,
                                   "print('by-id')")):
        # the final spec carries the ID, the backend starts the box from it
        ex = explain_json(pol, lang, code)
        assert ex["spec"]["image"] == ref and ex["spec"]["image_id"] == want, ex["spec"]
        assert f'"Image": "{want}"' in ex["rendered"], ex["rendered"]
        text = cli("explain", "--policy", pol, "-l", lang, "-c", code).stdout
        assert f"# image: {ref} = {want} (pinned, verified)" in text, text
        r, lines = audited_run(pol, lang, code)
        assert r.rc == 0 and r["verdict"] == "success" and r["stdout"] == "by-id\n", r
        assert len(lines) == 1 and lines[0]["image"] == ref, lines
        assert lines[0]["image_id"] == want, lines


def test_tag_refused_where_pinning_required():
    shell_id = image_id(IMAGES["shell"])
    for images in ({}, {"shell": shell_id}):  # the defaults are tags; one pin is not enough
        pol = policy({"require_pinned": True, "images": images})
        r = brig("--policy", pol, code="echo no", lang="shell")
        # refused when the policy is read: an invalid policy, not one refused run
        assert r.rc == 2 and r["error"]["status"] == "policy", r
        err = r["error"]["message"]
        assert "is not pinned (require_pinned is true)" in err and "brig images" in err, err
        assert '"brig/python:bookworm"' in err, err
        p = cli("explain", "--policy", pol, "-l", "shell", "-c", "echo no")
        assert p.returncode == 2 and "is not pinned" in p.stderr, p
    # without require_pinned the same tags run
    r = brig("--policy", policy({"require_pinned": False}), code="echo yes", lang="shell")
    assert r.rc == 0 and r["stdout"] == "yes\n", r


def test_retagged_image_refused():
    shell_id, py_id = image_id(IMAGES["shell"]), image_id(IMAGES["python"])
    assert shell_id != py_id
    assert docker("tag", IMAGES["shell"], RETAG).returncode == 0
    pinned = f"{RETAG}@{shell_id}"
    pol = policy({"images": {"shell": pinned}})
    r, lines = audited_run(pol, "shell", "echo before")
    assert r.rc == 0 and r["stdout"] == "before\n", r
    assert lines[0]["image"] == pinned and lines[0]["image_id"] == shell_id, lines
    # the tag now names another image: refused before anything starts, both IDs named
    assert docker("tag", IMAGES["python"], RETAG).returncode == 0
    assert image_id(RETAG) == py_id
    r, lines = audited_run(pol, "shell", "echo after")
    assert r.rc == 2 and r["error"]["status"] == "refused", r
    err = r["error"]["message"]
    assert f"{RETAG} names image {py_id} now, not the pinned {shell_id}" in err, err
    assert "nothing was started" in err, err
    assert len(lines) == 1 and lines[0]["verdict"] == "refused", lines
    assert lines[0].get("image_id") is None and lines[0]["container"] is None, lines
    p = cli("run", "--policy", pol, "-l", "shell", "-c", "echo after")
    assert p.returncode == 2 and p.stdout == "" and shell_id in p.stderr, p
    rc, rep = images_json(pol)
    shell = rep["images"][2]
    assert rc == 1 and shell["id"] == py_id and shell["pin"] == shell_id, shell
    assert shell["pin_holds"] is False and shell["pin_ref"] is None, shell
    assert py_id in shell["problem"] and shell_id in shell["problem"], shell
    # the other languages are not affected (and under gVisor the smoke box still runs in the
    # pinned shell image, never in what the tag names now)
    r = brig("--policy", pol, code="print('other')", lang="python")
    assert r.rc == 0 and r["stdout"] == "other\n", r
    # the tag back where the pin says: runs again
    assert docker("tag", IMAGES["shell"], RETAG).returncode == 0
    r = brig("--policy", pol, code="echo back", lang="shell")
    assert r.rc == 0 and r["stdout"] == "back\n", r


def test_unpinned_tag_follows_its_image():
    """Without a pin the box starts from the ID the tag names at that run (what the warm pool
    compares): a retag is a new image, never an old box.  (node: the gVisor smoke box runs in
    the shell image, whatever the policy's shell tag names.)"""
    assert docker("tag", IMAGES["node"], RETAG).returncode == 0
    pol = policy({"images": {"node": RETAG}})
    assert explain_json(pol, "node", "1")["spec"]["image_id"] == image_id(IMAGES["node"])
    assert docker("tag", IMAGES["python"], RETAG).returncode == 0
    ex = explain_json(pol, "node", "1")
    assert ex["spec"]["image"] == RETAG, ex["spec"]
    assert ex["spec"]["image_id"] == image_id(IMAGES["python"]), ex["spec"]
    text = cli("explain", "--policy", pol, "-l", "node", "-c", "1").stdout
    assert "not pinned: the ID the tag names now" in text, text


def rebuild_shell(tag):
    """Another image with the shell image's content under `tag`: what a rebuild that changed
    nothing but a label makes (a new ID).  The build starts no container."""
    p = subprocess.run([docker_bin(), "build", "-q", "-t", tag, "-"],
                       input=f"FROM {IMAGES['shell']}\nLABEL org.brig.test={os.getpid()}\n",
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p
    new = image_id(tag)
    assert new != image_id(IMAGES["shell"]), new
    return new


def docker_bin():
    return os.environ.get("DOCKER", "docker")


def test_warm_pool_keys_on_the_id():
    """A long-lived server's warm pool: an image rebuilt under its tag drains the boxes started
    from the old one; the next run starts cold from the new ID, the refill is of the new ID."""
    old = image_id(IMAGES["shell"])
    assert docker("tag", IMAGES["shell"], REBUILT).returncode == 0
    fd, log = tempfile.mkstemp(prefix="brig-images-audit-")
    os.close(fd)
    atexit.register(remove_audit_log, log)
    pol = policy({"warm_pool": 1, "backend": BACKEND, "audit_log": log,
                  "images": {"shell": REBUILT}})
    s = brig_mcp(BRIG, "--policy", pol, "-q")
    try:
        s.wait_pool({"shell": 1})
        r = s.run_code("shell", "echo a")
        assert r["verdict"] == "success" and r["pooled"] is True, r
        s.wait_pool({"shell": 1})  # the refill: a box of the old image, idle
        new = rebuild_shell(REBUILT)
        r = s.run_code("shell", "echo b")
        assert r["verdict"] == "success" and r["stdout"] == "b\n", r
        assert r["pooled"] is False, r  # the idle box of the old image was not handed the run
        s.wait_pool({"shell": 1})
        r = s.run_code("shell", "echo c")
        assert r["verdict"] == "success" and r["pooled"] is True, r
        pool = s.status()["pool"]
        assert pool["drained"] >= 1, pool
    finally:
        assert s.close() == 0
    got = [(x["image_id"], x["pooled"]) for x in audit_lines(log) if x["language"] == "shell"]
    assert got == [(old, True), (new, False), (new, True)], got


def test_missing_image_reported():
    pol = policy({"images": {"node": MISSING}})
    rc, rep = images_json(pol)
    node = rep["images"][1]
    assert rc == 1 and node["image"] == MISSING and node["present"] is False, node
    assert node["id"] is None and node["pin_ref"] is None and "never pulls" in node["problem"]
    text = cli("images", "--policy", pol).stdout
    assert "MISSING" in text, text


def cleanup():
    for ref in (RETAG, REBUILT, MISSING):
        if docker("image", "inspect", ref).returncode == 0:
            docker("rmi", ref)  # untags only: the images under it keep their own tags


if __name__ == "__main__":
    require_engine()
    for ref in IMAGES.values():
        if docker("image", "inspect", ref).returncode != 0:
            skip(f"image {ref} is absent: build it with scripts/setup-host")
    atexit.register(cleanup)
    main([test_pinned_by_id_runs, test_tag_refused_where_pinning_required,
          test_retagged_image_refused, test_images_json_is_the_engine,
          test_pin_lines_pin_every_image, test_unpinned_tag_follows_its_image,
          test_warm_pool_keys_on_the_id, test_missing_image_reported])
