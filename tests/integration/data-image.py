#!/usr/bin/env python3
"""The data-science image (brig/python-data) with the example policy that selects it.

A pandas + matplotlib script that reads a CSV, plots it and saves a PNG to /tmp runs out of the
box with examples/policy-data-science.json; the image's org.brig.* labels and its package
manifest agree with dpkg-query and with the modules inside.  $BRIG_TEST_BACKEND names the
backend (docker-api: runc; gvisor: runsc-seccomp).  Skips (77) only when the image is absent
(scripts/setup-host builds it) or the backend is not usable here.
$BRIG_TEST_DATA_IMAGE runs the same checks against another build of the image.
"""
import atexit
import json
import os
import re
import subprocess
import tempfile

from brigtest import BACKEND, BRIG, brig, docker, main, require_engine, skip

TOP = os.environ.get("top_srcdir", ".")
EXAMPLE = os.path.join(TOP, "examples", "policy-data-science.json")
with open(EXAMPLE) as f:
    EXAMPLE_POLICY = json.load(f)
IMAGE = os.environ.get("BRIG_TEST_DATA_IMAGE") or EXAMPLE_POLICY["images"]["python"]
POLICY = EXAMPLE
if IMAGE != EXAMPLE_POLICY["images"]["python"]:
    _tmp = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="brig-data-", delete=False)
    json.dump(dict(EXAMPLE_POLICY, images={"python": IMAGE}), _tmp)
    _tmp.close()
    atexit.register(os.unlink, _tmp.name)
    POLICY = _tmp.name

PNG_SIGNATURE = "89504e470d0a1a0a"
LABELS = None

# What agents do first with a sandbox: crunch a CSV, draw a chart.  Before importing
# matplotlib it records what the image's start-up hook prepared (the cache dir with the font
# list built with the image), afterwards which cache dir matplotlib really uses.
PLOT = r'''
import io, json, os, sys
cache = os.environ.get("MPLCONFIGDIR", "")
seeded = sorted(os.listdir(cache)) if os.path.isdir(cache) else None
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt

csv = """month,region,revenue
2024-01,north,120.5
2024-01,south,98.0
2024-02,north,131.25
2024-02,south,104.75
2024-03,north,127.0
2024-03,south,118.5
"""
df = pd.read_csv(io.StringIO(csv), parse_dates=["month"])
table = df.pivot_table(index="month", columns="region", values="revenue", aggfunc="sum")
ax = table.plot(marker="o", title="Revenue by region")
ax.set_ylabel("revenue")
plt.tight_layout()
plt.savefig("/tmp/revenue.png", dpi=80)
with open("/tmp/revenue.png", "rb") as f:
    print(f.read(8).hex())
print(json.dumps({"rows": len(df), "total": float(df.revenue.sum()),
                  "backend": matplotlib.get_backend(), "cachedir": matplotlib.get_cachedir(),
                  "env_cache": cache, "seeded": seeded,
                  "png_bytes": os.path.getsize("/tmp/revenue.png")}))
'''

# Inside the image: the manifest file, dpkg's database, the runtime and the libraries.
INSPECT = r'''
import hashlib, json, platform, subprocess
from importlib.metadata import version
q = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version} ${Architecture}\n"],
                   capture_output=True, text=True)
with open("/usr/share/brig/packages.txt", "rb") as f:
    manifest = f.read()
print(json.dumps({
    "dpkg_rc": q.returncode, "dpkg_err": q.stderr, "dpkg": sorted(q.stdout.splitlines()),
    "manifest": manifest.decode(), "manifest_sha256": hashlib.sha256(manifest).hexdigest(),
    "python": platform.python_version(),
    "libraries": {m: version(m) for m in ("numpy", "pandas", "matplotlib")},
}))
'''


def labels():
    global LABELS
    if LABELS is None:
        r = docker("image", "inspect", "--format", "{{json .Config.Labels}}", IMAGE)
        assert r.returncode == 0, r.stderr
        LABELS = json.loads(r.stdout) or {}
    return LABELS


def run(code, **kw):
    return brig("--policy", POLICY, code=code, timeout=180, **kw)


def test_pandas_matplotlib_png():
    r = run(PLOT)
    assert r.rc == 0 and r["verdict"] == "success", r
    assert r["image"] == IMAGE and r["backend"] == BACKEND, r
    lines = r["stdout"].splitlines()
    assert lines[0] == PNG_SIGNATURE, r
    info = json.loads(lines[1])
    assert info["rows"] == 6 and abs(info["total"] - 700.0) < 1e-9, info
    assert info["backend"].lower() == "agg", info
    assert info["png_bytes"] > 1000, info
    # matplotlib uses the cache dir the image gives it (an unwritable one makes it warn and use
    # a temporary one), that dir is on /tmp and the image's hook put the font list there
    assert r["stderr"] == "", r
    assert info["cachedir"] == info["env_cache"], info
    assert info["env_cache"] == "/tmp/.cache/matplotlib", info
    assert info["seeded"] and all(n.startswith("fontlist-") for n in info["seeded"]), info


def test_labels():
    lb = labels()
    for k in ("org.brig.image", "org.brig.language", "org.brig.runtime", "org.brig.package",
              "org.brig.suite", "org.brig.include", "org.brig.pinned", "org.brig.packages",
              "org.brig.packages.count", "org.brig.packages.sha256", "org.brig.libraries"):
        assert lb.get(k), f"label {k} missing: {lb}"
    assert lb["org.brig.image"] == "python-data", lb
    assert lb["org.brig.language"] == "python", lb
    assert re.fullmatch(r"Python 3\.\d+\.\d+", lb["org.brig.runtime"]), lb
    assert re.fullmatch(r"python3\.\d+-minimal \S+", lb["org.brig.package"]), lb
    assert re.fullmatch(r"[0-9a-f]{64}", lb["org.brig.packages.sha256"]), lb
    assert lb["org.brig.packages"] == "/usr/share/brig/packages.txt", lb
    assert lb["org.brig.pinned"] in ("true", "false"), lb
    for m in ("numpy", "pandas", "matplotlib"):
        assert m in lb["org.brig.include"] and re.search(rf"\b{m} \S", lb["org.brig.libraries"]), lb


def test_manifest_matches_dpkg_and_labels():
    r = run(INSPECT)
    assert r["verdict"] == "success", r
    got = json.loads(r["stdout"])
    lb = labels()
    assert got["dpkg_rc"] == 0 and got["dpkg_err"] == "", got["dpkg_err"]
    manifest = got["manifest"].splitlines()
    assert manifest == sorted(manifest) and got["manifest"].endswith("\n"), "manifest not sorted"
    # what dpkg knows is exactly the manifest, and the labels describe that same list
    assert got["dpkg"] == manifest, set(got["dpkg"]) ^ set(manifest)
    assert got["manifest_sha256"] == lb["org.brig.packages.sha256"], (got["manifest_sha256"], lb)
    assert len(manifest) == int(lb["org.brig.packages.count"]), (len(manifest), lb)
    versions = {line.split()[0]: line.split()[1] for line in manifest}
    pkg, ver = lb["org.brig.package"].split(" ", 1)
    assert versions.get(pkg) == ver, (pkg, ver, versions.get(pkg))
    assert lb["org.brig.runtime"] == "Python " + got["python"], (lb, got["python"])
    assert ver.startswith(got["python"]), (ver, got["python"])
    libs = dict(x.split(" ", 1) for x in lb["org.brig.libraries"].split(", "))
    assert libs == got["libraries"], (libs, got["libraries"])
    for m in ("numpy", "pandas", "matplotlib"):
        # Debian's version carries the upstream one (python3-numpy 1:1.24.2-1 has numpy 1.24.2)
        assert re.match(rf"(\d+:)?{re.escape(got['libraries'][m])}", versions["python3-" + m]), m


def test_example_policy_is_valid():
    p = subprocess.run([BRIG, "policy", "--policy", EXAMPLE], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and p.stderr == "", p
    effective = json.loads(p.stdout)
    for k, v in EXAMPLE_POLICY.items():
        assert effective[k] == v if k != "images" else effective[k]["python"] == v["python"], k


if __name__ == "__main__":
    require_engine()
    if docker("image", "inspect", IMAGE).returncode != 0:
        skip(f"image {IMAGE} is absent: build it with scripts/build-images python-data "
             "(scripts/setup-host does)")
    main([test_pandas_matplotlib_png, test_manifest_matches_dpkg_and_labels, test_labels,
          test_example_policy_is_valid])
