#!/usr/bin/env python3
"""Egress allowlist: a box reaches listed host:port through brig's squid proxy and nothing else.

No internet is needed or used.  The test creates a network namespace holding the "public"
upstream (an HTTP server on a TEST-NET-3 address, 203.0.113.0/24) and a private host (an
HTTP server on a 10.0.0.0/8 address), and routes only those /32s from the host to it; the
proxy (on brig-egress-out, whose traffic the host forwards) reaches them by the names of the
policy's test-only hosts map (egress.hosts).  Every name the test hands the proxy points into
that namespace or at a local address, so even a failing test sends nothing off this machine.

Checked from inside one box (python urllib through the env proxy, raw sockets):
  - the allowed name works (200, the upstream's body);
  - an unlisted name, a raw IP, an unlisted port: 403 with X-Brig-Egress-Refused:
    not-in-allowlist;
  - listed names resolving to 127.0.0.1, to the private host, to the host's own address:
    403 destination-address (and the private host saw no request);
  - DNS from the box fails; direct TCP and UDP to the upstream bypassing the proxy fail (the
    upstream saw none);
then: the audit line carries the allowlist, the proxy's access log the decisions, and
`brig gc` removes the idle proxy and its networks.  $BRIG_TEST_BACKEND: docker-api (runc) or
gvisor (runsc-egress).  Needs root (ip netns); skips (77) otherwise.
"""
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time

import brigtest
import mcpclient
from brigtest import (BACKEND, BRIG, backend_args, bridge_gateway, brig, container_exists, docker,
                      main, running_box_of, skip)

NS = f"brig-eg-{os.getpid()}"
OCT = random.randint(100, 199)  # the upstream 203.0.113.OCT, the host side .OCT+50
UP = f"203.0.113.{OCT}"
HOST_SIDE = f"203.0.113.{OCT + 50}"
PRIV = f"10.99.{OCT}.10"
VH, VN = f"veg{os.getpid() % 100000}h", f"veg{os.getpid() % 100000}n"
WORK = tempfile.mkdtemp(prefix="brig-egress-test-")
os.chmod(WORK, 0o755)
SERVERS = []
STATE = {}


def sh(*args, check=True):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


def host_address():
    """An address of the host's that is in no private range (the proxy must refuse it)."""
    out = sh("ip", "-4", "-o", "addr", "show").stdout
    for line in out.splitlines():
        a = line.split()[3].split("/")[0]
        if not a.startswith(("127.", "10.", "172.", "192.168.", "203.0.113.")):
            return a
    return None


UPSTREAM = r'''
import http.server, socket, socketserver, ssl, sys, threading
addr, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cert = sys.argv[4] if len(sys.argv) > 4 else None
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log, "a") as f:
            f.write(f"GET {self.path} {self.headers.get('Host')}\n")
        body = f"upstream {addr} says hello {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    while True:
        d, peer = s.recvfrom(2048)
        with open(log, "a") as f:
            f.write(f"UDP {peer[0]} {d[:40]!r}\n")
class S(http.server.ThreadingHTTPServer):
    def server_bind(self):  # no getfqdn(): a reverse lookup would wait for a resolver
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = addr, port
srv = S((addr, port), H)
if cert:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
else:
    threading.Thread(target=udp, daemon=True).start()
srv.serve_forever()
'''


def setup_upstreams():
    if os.geteuid() != 0 or not shutil.which("ip"):
        skip("needs root and iproute2 to create the upstream's network namespace")
    sh("ip", "netns", "add", NS)
    sh("ip", "link", "add", VH, "type", "veth", "peer", "name", VN)
    sh("ip", "link", "set", VN, "netns", NS)
    sh("ip", "addr", "add", f"{HOST_SIDE}/32", "dev", VH)
    sh("ip", "link", "set", VH, "up")
    sh("ip", "route", "add", f"{UP}/32", "dev", VH)
    sh("ip", "route", "add", f"{PRIV}/32", "dev", VH)
    ns = ["ip", "netns", "exec", NS]
    sh(*ns, "ip", "link", "set", "lo", "up")
    sh(*ns, "ip", "link", "set", VN, "up")
    sh(*ns, "ip", "addr", "add", f"{UP}/32", "dev", VN)
    sh(*ns, "ip", "addr", "add", f"{PRIV}/32", "dev", VN)
    sh(*ns, "ip", "route", "add", f"{HOST_SIDE}/32", "dev", VN)
    # no default route: the upstreams answer the proxy (masqueraded to HOST_SIDE) and
    # cannot reach anything else themselves
    script = os.path.join(WORK, "upstream.py")
    with open(script, "w") as f:
        f.write(UPSTREAM)
    # a throwaway certificate for ok.test (its own CA), for the HTTPS upstream on 8443
    pem = os.path.join(WORK, "ok.pem")
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
       "/CN=ok.test", "-addext", "subjectAltName=DNS:ok.test", "-keyout", pem, "-out",
       pem + ".crt")
    with open(pem, "a") as f, open(pem + ".crt") as c:
        STATE["ca"] = c.read()
        f.write(STATE["ca"])
    for addr, port, extra in ((UP, "8080", []), (PRIV, "8080", []), (UP, "8443", [pem])):
        log = os.path.join(WORK, f"{addr}.log")
        if not os.path.exists(log):
            open(log, "w").close()
        p = subprocess.Popen([*ns, "python3", script, addr, port, log, *extra],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        SERVERS.append(p)
    # up and reachable from the host through the route the proxy will use
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if subprocess.run(["python3", "-c", f"import urllib.request as u; u.urlopen('http://{UP}:8080/ready', timeout=1)"],
                          capture_output=True).returncode == 0:
            break
        time.sleep(0.2)
    else:
        raise RuntimeError("the upstream did not come up")


def teardown():
    if STATE.get("proxy"):  # a failed test before gc: this test's proxy and networks only
        docker("rm", "-f", STATE["proxy"])
        docker("network", "rm", STATE["network"])
    for p in SERVERS:
        p.kill()
        p.wait()
    subprocess.run(["ip", "link", "del", VH], capture_output=True)
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    shutil.rmtree(WORK, ignore_errors=True)


def gone_soon(name, timeout=30):
    """Whether container `name` is gone within `timeout` s (a one-shot `brig run` leaves the
    removal of its network holder to the process it detaches for its spares)."""
    end = time.monotonic() + timeout
    while container_exists(name) and time.monotonic() < end:
        time.sleep(0.2)
    return not container_exists(name)


def spares_of(cache):
    """The spare holders (name, ID, labels) of the lock domain of cache directory `cache`."""
    ids = [f for f in os.listdir(cache) if f.startswith("spares-") and f.endswith(".id")]
    if not ids:
        return []
    with open(os.path.join(cache, ids[0])) as f:
        domain = f.read().strip()
    r = docker("ps", "-a", "--filter", f"label=brig.spare-domain={domain}", "--format",
               "{{.Names}} {{.ID}} {{.State}}")
    return [x.split() for x in r.stdout.splitlines() if x.strip()]


def upstream_log(addr):
    with open(os.path.join(WORK, f"{addr}.log")) as f:
        return f.read()


def write_policy():
    hosts = {"ok.test": UP, "lo.test": "127.0.0.1", "priv.test": PRIV, "a.w.test": UP,
             "w.test": UP, "evil.test": UP}
    allow = ["ok.test:8080", "ok.test:8443", "*.w.test:8080", "lo.test:8080", "priv.test:8080"]
    gw = bridge_gateway()  # the host, as a box's bridge would reach it
    if gw:
        hosts["gw.test"] = gw
        allow.append("gw.test:8080")
    STATE["gateway"] = gw
    ha = host_address()
    if ha:
        hosts["host.test"] = ha
        allow.append("host.test:8080")
    STATE["host_address"] = ha
    STATE["audit"] = os.path.join(WORK, "audit.jsonl")
    STATE["max_timeout"] = 60
    policy = {"egress": {"allow": allow, "hosts": hosts}, "audit_log": STATE["audit"],
              "warm_pool": 0, "max_timeout_seconds": STATE["max_timeout"]}
    path = os.path.join(WORK, "policy.json")
    with open(path, "w") as f:
        json.dump(policy, f)
    STATE["policy"] = path
    STATE["allow"] = allow


PROBE = r'''
import json, os, socket, urllib.request, urllib.error
UP = "%(up)s"
res = {"env": {k: os.environ.get(k) for k in ("HTTP_PROXY", "https_proxy", "NO_PROXY")}}
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=8) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "reason": e.headers.get("X-Brig-Egress-Refused")}
    except Exception as e:
        return {"error": repr(e)}
for k, url in (("allowed", "http://ok.test:8080/hello"), ("unlisted", "http://other.test:8080/"),
               ("raw_ip", f"http://{UP}:8080/"), ("port", "http://ok.test:8081/"),
               ("loopback", "http://lo.test:8080/"), ("private", "http://priv.test:8080/"),
               ("host", "http://host.test:8080/"), ("gateway", "http://gw.test:8080/")):
    res[k] = get(url)
res["wild"] = get("http://a.w.test:8080/wild")
res["wild_apex"] = get("http://w.test:8080/")
import ssl
CA = %(ca)r
ctx = ssl.create_default_context(cadata=CA)
try:
    with urllib.request.urlopen("https://ok.test:8443/tls", timeout=8, context=ctx) as r:
        res["https"] = {"status": r.status, "body": r.read().decode()}
except Exception as e:
    res["https"] = {"error": repr(e)}
def connect(host, port, sni, extra=""):
    """CONNECT through the proxy, then a TLS handshake naming `sni`."""
    px = os.environ["HTTP_PROXY"].rsplit("/", 1)[1]
    s = socket.create_connection((px.split(":")[0], int(px.split(":")[1])), timeout=8)
    s.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n{extra}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d:
            break
        head += d
    status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "?"
    out = {"connect": status}
    if b"X-Brig-Egress-Refused" in head:
        out["reason"] = head.split(b"X-Brig-Egress-Refused: ", 1)[1].split(b"\r\n", 1)[0].decode()
    if status == "200":
        c = ssl.create_default_context()
        c.check_hostname = False
        c.verify_mode = ssl.CERT_NONE
        try:
            t = c.wrap_socket(s, server_hostname=sni)
            t.sendall(f"GET /sni-{sni} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            got = b""
            while len(got) < 600:
                d = t.recv(600)
                if not d:
                    break
                got += d
            out["tls"] = got.decode(errors="replace")[:600] or "closed"
        except Exception as e:
            out["tls"] = "fails: " + repr(e)
    s.close()
    return out
res["connect_sni_ok"] = connect("ok.test", 8443, "ok.test")
res["connect_sni_other"] = connect("ok.test", 8443, "evil.test")
res["connect_unlisted"] = connect("evil.test", 8443, "evil.test")
# the proxy's boxes' port tells its TLS port the box in X-Forwarded-For, appended to what the
# box sent, which the TLS port never reads: this CONNECT is still this box's decision
res["connect_forged"] = connect("ok.test", 8443, "ok.test",
                                "X-Forwarded-For: 10.208.0.99\r\nX-Forwarded-For: 10.208.0.98\r\n")
import threading
def lookup(name):
    try:
        res["dns_" + name] = socket.getaddrinfo(name, 80)[0][4][0]
    except OSError as e:
        res["dns_" + name] = "fails: " + repr(e)
for name in ("ok.test", "example.com"):  # no answer within 3 s is a failure too
    res["dns_" + name] = "fails: no answer"
    t = threading.Thread(target=lookup, args=(name,), daemon=True)
    t.start()
    t.join(3)
try:
    s = socket.create_connection((UP, 8080), timeout=3)
    res["tcp"] = "connected"
    s.close()
except OSError as e:
    res["tcp"] = "fails: " + repr(e)
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"brig-udp-probe", (UP, 8080))
    res["udp"] = "sent"
except OSError as e:
    res["udp"] = "fails: " + repr(e)
print(json.dumps(res))
'''


def run_probe():
    r = brig("--policy", STATE["policy"], code=PROBE % {"up": UP, "ca": STATE["ca"]}, timeout=180)
    assert r.rc == 0 and r["verdict"] == "success", r
    STATE["run"] = r
    return json.loads(r["stdout"].strip().splitlines()[-1])


def test_allowed_and_refused():
    res = run_probe()
    STATE["res"] = res
    env = res["env"]
    assert env["HTTP_PROXY"] and env["HTTP_PROXY"].endswith(":3128"), env
    assert env["https_proxy"] == env["HTTP_PROXY"], env
    assert res["allowed"].get("status") == 200, res["allowed"]
    assert f"upstream {UP} says hello /hello" in res["allowed"]["body"], res["allowed"]
    for k in ("unlisted", "raw_ip", "port"):
        assert res[k].get("status") == 403 and res[k].get("reason") == "not-in-allowlist", (k, res[k])
    for k in ("loopback", "private") + (("host",) if STATE["host_address"] else ()) + \
            (("gateway",) if STATE["gateway"] else ()):
        assert res[k].get("status") == 403 and res[k].get("reason") == "destination-address", (k, res[k])
    # the private host never saw a request; the upstream saw exactly the allowed one
    assert upstream_log(PRIV) == "", upstream_log(PRIV)
    assert "GET /hello ok.test:8080" in upstream_log(UP), upstream_log(UP)


def test_wildcard_and_https():
    res = STATE["res"]
    assert res["wild"].get("status") == 200 and "/wild" in res["wild"]["body"], res["wild"]
    assert res["wild_apex"].get("status") == 403, res["wild_apex"]  # *.w.test is not w.test
    assert res["https"].get("status") == 200 and "/tls" in res["https"]["body"], res["https"]
    assert res["connect_sni_ok"].get("connect") == "200", res["connect_sni_ok"]
    assert res["connect_sni_ok"].get("tls", "").startswith("HTTP/1.0 200"), res["connect_sni_ok"]
    # the ClientHello names another host than the CONNECT: squid closes, nothing is spliced
    other = res["connect_sni_other"]
    assert other.get("connect") == "200" and not other.get("tls", "").startswith("HTTP/"), other
    assert "GET /sni-evil.test" not in upstream_log(UP), upstream_log(UP)
    # a refused CONNECT is a plain 403 with the reason, never a 200 and then a TLS error (the
    # proxy's port for boxes does not peek at TLS; the allowed CONNECTs go on to its TLS port)
    un = res["connect_unlisted"]
    assert un.get("connect") == "403" and un.get("reason") == "not-in-allowlist", un
    assert "tls" not in un, un
    assert res["connect_forged"].get("tls", "").startswith("HTTP/1.0 200"), res["connect_forged"]
    assert "GET /sni-evil.test" not in upstream_log(UP), upstream_log(UP)


def test_no_dns_no_direct_path():
    res = STATE["res"]
    for k in ("dns_ok.test", "dns_example.com"):
        assert res[k].startswith("fails"), (k, res[k])
    assert res["tcp"].startswith("fails"), res["tcp"]
    time.sleep(0.5)
    log = upstream_log(UP)
    assert "UDP" not in log and "GET / " not in log.replace("GET /hello", ""), log


def test_audit_and_access_log():
    with open(STATE["audit"]) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    line = lines[-1]
    eg = line["limits"]["egress"]
    assert eg["allow"] == STATE["allow"], eg
    # the box ran in its network holder's namespace; the holder, on the egress network, is gone
    assert eg["network"].startswith("brig-egress-"), eg
    assert line["limits"]["network"] == "container:" + eg["net_holder"], line["limits"]
    assert eg["net_holder"] == line["container"] + "-net", (eg, line["container"])
    assert gone_soon(eg["net_holder"]), eg["net_holder"]  # by brig's detached process
    proxy = eg["proxy"]
    STATE["proxy"] = proxy
    STATE["network"] = eg["network"]
    logs = docker("logs", proxy)
    text = logs.stdout
    assert f"GET http://ok.test:8080/hello 200 {UP}" in text, text[-2000:]
    assert "GET http://other.test:8080/ 403" in text and "not-in-allowlist" in text, text[-2000:]
    assert "GET http://lo.test:8080/ 403" in text and "destination-address" in text, text[-2000:]


def decision(ds, host, port, method=None):
    found = [d for d in ds if d["host"] == host and d["port"] == port and
             (method is None or d["method"] == method)]
    assert found, (host, port, ds)
    return found[0]


def test_decisions_joined_into_result_and_audit():
    """The proxy's decisions for this box (by its address on the internal network, from its
    creation to its end) are the result's "egress" list and the audit line's
    "egress_decisions": the same list, with what was refused and why."""
    r = STATE["run"]
    ds = r["egress"]
    with open(STATE["audit"]) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    mine = [x for x in lines if x.get("container") == r["container"]]
    assert len(mine) == 1, lines
    assert mine[0]["egress_decisions"] == ds, (mine[0], ds)
    ok = decision(ds, "ok.test", 8080, "GET")
    assert ok["allowed"] is True and ok["status"] == 200 and ok["address"] == UP, ok
    assert ok["bytes_in"] > 0 and ok["bytes_out"] > 0, ok
    for host, port, why in (("other.test", 8080, "not-in-allowlist"),
                            ("ok.test", 8081, "not-in-allowlist"),
                            (UP, 8080, "not-in-allowlist"),
                            ("lo.test", 8080, "destination-address"),
                            ("priv.test", 8080, "destination-address")):
        d = decision(ds, host, port)
        assert d["allowed"] is False and d["reason"] == why and d["status"] == 403, d
    tls = [d for d in ds if d["method"] == "CONNECT" and d["host"] == "ok.test"]
    # one decision per tunnel, with the upstream's address: the sni-ok CONNECT, the one with a
    # forged box header (still this box's), and the HTTPS GET
    oks = [d for d in tls if d["allowed"] and d["sni"] == "ok.test"]
    assert len(oks) == 3 and all(d["address"] == UP and d["bytes_in"] > 0 for d in oks), tls
    assert any(not d["allowed"] and d["reason"] == "sni-mismatch" and d["sni"] == "evil.test"
               for d in tls), tls
    d = decision(ds, "evil.test", 8443, "CONNECT")
    assert d["reason"] == "not-in-allowlist", d
    # nothing of another box: a second run's list holds only its own request
    r2 = brig("--policy", STATE["policy"], timeout=120, code=(
        "import urllib.request as u\n"
        "print(u.urlopen('http://ok.test:8080/second', timeout=8).status)\n"))
    assert r2["verdict"] == "success" and r2["stdout"].strip() == "200", r2
    assert [(d["host"], d["port"], d["allowed"]) for d in r2["egress"]] == \
        [("ok.test", 8080, True)], r2["egress"]


def test_no_request_no_decision():
    r = brig("--policy", STATE["policy"], code="print(1)", timeout=120)
    assert r["verdict"] == "success" and r["egress"] == [], r


def run_while(code, seen, action):
    """Run `code` with the allowlist; once the proxy logged `seen`, `docker ACTION...` (to the
    proxy); the run's result."""
    cmd = [BRIG, "run", *backend_args(), "-l", "python", "--json", "--timeout", "30",
           "--policy", STATE["policy"]]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(code.encode())
    p.stdin.close()
    p.stdin = None  # communicate() reads only
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and seen not in docker("logs", STATE["proxy"]).stdout:
        time.sleep(0.2)
    assert docker(*action).returncode == 0
    out, err = p.communicate(timeout=120)
    return json.loads(out)


def test_one_shot_claims_a_spare():
    """A one-shot `brig run` with egress leaves two spare network holders (started by the
    process it detaches); the next run's box runs in one of them: the same container, renamed
    to the box's holder name, without an owner, and the audit line says so.  The spares come
    back to two, the claimed holder goes after its run, and `brig gc` removes the spares of its
    lock domain (the cache directory's: this test's own)."""
    cache = tempfile.mkdtemp(prefix="brig-egress-spares-")
    os.chmod(cache, 0o700)
    env = dict(os.environ, BRIG_CACHE_DIR=cache)
    cmd = [BRIG, "run", *backend_args(), "-l", "shell", "--policy", STATE["policy"]]

    def wait_spares(n, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            up = [x for x in spares_of(cache) if x[0].endswith("-spare") and x[2] == "running"]
            if len(up) == n:
                return up
            time.sleep(0.2)
        raise AssertionError(f"not {n} spares: {spares_of(cache)}")
    a = None
    try:
        r = subprocess.run(cmd + ["-c", "echo one"], capture_output=True, text=True,
                           timeout=120, env=env)
        assert r.returncode == 0 and r.stdout == "one\n", r
        spares = {x[1] for x in wait_spares(2)}
        a = subprocess.Popen(cmd + ["--timeout", "30", "-c", "echo up; sleep 4; echo two"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        box = running_box_of(a.pid)
        holder = box + "-net"
        got = json.loads(docker("inspect", "--format",
                                "{{json .Id}}|{{json .Config.Labels}}", holder
                                ).stdout.replace("|", ",", 1).join("[]"))
        hid, labels = got
        assert hid[:12] in spares, (hid, spares)  # one of the spares, renamed
        assert labels.get("brig.role") == "net-spare" and "brig.owner" not in labels, labels
        out, _ = a.communicate(timeout=120)
        assert a.returncode == 0 and out == "up\ntwo\n", out
        with open(STATE["audit"]) as f:
            line = [json.loads(x) for x in f if box in x][-1]
        eg = line["limits"]["egress"]
        assert eg["net_holder"] == holder and eg["net_holder_spare"] is True, eg
        assert gone_soon(holder), holder
        again = wait_spares(2)
        assert not {x[1] for x in again} & {hid[:12]}, again
    finally:
        if a and a.poll() is None:  # a failed assertion: its spares too, before the gc
            a.communicate(timeout=120)
        r = subprocess.run([BRIG, "gc", *backend_args()], capture_output=True, text=True,
                           timeout=180, env=env)
        left = spares_of(cache)
        shutil.rmtree(cache, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert not left, left


def test_box_network_spares_the_proxy_address():
    """The box network's dynamic range is the upper half of its /22: no box or spare holder
    started while the proxy is down can take the proxy's fixed address."""
    net = json.loads(docker("network", "inspect", STATE["network"]).stdout)[0]
    cfg = net["IPAM"]["Config"][0]
    base = cfg["Subnet"].split("/")[0].split(".")
    want = ".".join(base[:2] + [str(int(base[2]) + 2), "0"]) + "/23"
    assert cfg.get("IPRange") == want, cfg
    proxy = [v["IPv4Address"].split("/")[0] for v in net["Containers"].values()
             if v["Name"] == STATE["proxy"]]
    assert proxy and int(proxy[0].split(".")[2]) < int(base[2]) + 2, (proxy, cfg)


def test_proxy_dies_mid_run():
    """The proxy killed while a box uses it: the box's next request fails, and the result is a
    sandbox_error naming the proxy (the sandbox's network path failed, not the program); the
    next run starts a new proxy and works."""
    code = ("import time, urllib.request as u\n"
            "print(u.urlopen('http://ok.test:8080/before', timeout=8).status, flush=True)\n"
            "time.sleep(4)\n"
            "try:\n"
            "    print(u.urlopen('http://ok.test:8080/after', timeout=4).status)\n"
            "except Exception as e:\n"
            "    print('after fails', type(e).__name__)\n")
    r = run_while(code, "/before", ["kill", STATE["proxy"]])
    assert "after fails" in r["stdout"], r
    assert r["verdict"] == "sandbox_error" and "egress proxy" in r["error"] and \
        "stopped during the run" in r["error"], r
    assert "GET /after" not in upstream_log(UP), upstream_log(UP)
    r = brig("--policy", STATE["policy"], timeout=120, code=(
        "import urllib.request as u\n"
        "print(u.urlopen('http://ok.test:8080/again', timeout=8).status)\n"))
    assert r["verdict"] == "success" and r["stdout"].strip() == "200", r


def test_proxy_restarted_mid_run():
    """The proxy restarted (or replaced by another run that found it gone) while a box uses it:
    the box's later requests work through the new one, but the connections through the old one
    were cut and its log lines are gone, so the run's decisions would be incomplete: the result
    is a sandbox_error saying so, never a success with half an audit."""
    code = ("import time, urllib.request as u\n"
            "print(u.urlopen('http://ok.test:8080/before-restart', timeout=8).status, flush=True)\n"
            "time.sleep(8)\n"
            "print(u.urlopen('http://ok.test:8080/after-restart', timeout=8).status)\n")
    r = run_while(code, "/before-restart", ["restart", "-t", "0", STATE["proxy"]])
    assert r["verdict"] == "sandbox_error" and "restarted during the run" in r["error"], r
    assert "GET /after-restart" in upstream_log(UP), upstream_log(UP)  # it did work, though


def boxes_of(pid, language):
    """The running boxes of `language` of brig process `pid` (its brig.owner label)."""
    r = docker("ps", "--filter", f"label=brig.language={language}", "--format",
               '{{.Names}} {{.Label "brig.owner"}}')
    return [x.split()[0] for x in r.stdout.splitlines()
            if len(x.split()) == 2 and x.split()[1].startswith(f"{pid}:")]


def warm_policy(n, name):
    """The suite's policy with a warm pool of n boxes per language, written to WORK/name."""
    with open(STATE["policy"]) as f:
        pol = json.load(f)
    pol["warm_pool"] = n
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump(pol, f)
    return path


def test_warm_box_with_egress():
    """brig mcp keeps boxes with egress warm.  A call in one is audited like a cold one (the
    host marks the proxy's log at the hand-over; the lines of the box's address after it).  A
    warm box whose proxy was restarted while it waited is not used: the call runs cold, and
    that one call drops every idle box of the old proxy, so the next call is warm again."""
    path = warm_policy(2, "policy-warm.json")
    code = ("import urllib.request as u, urllib.error as e\n"
            "print(u.urlopen('http://ok.test:8080/warm', timeout=8).status)\n"
            "try:\n"
            "    u.urlopen('http://other.test:8080/', timeout=8)\n"
            "except e.HTTPError as x:\n"
            "    print(x.code)\n")
    want = [("ok.test", 8080, True), ("other.test", 8080, False)]

    def idle_python():
        # this server's running ones: the box of the call before has exited (its removal is in
        # the background)
        return set(boxes_of(m.pid, "python"))

    def stale_left(stale):  # the boxes, or their network holders (removed after them)
        return stale & idle_python() or [n for n in stale if container_exists(n + "-net")]

    m = mcpclient.brig_mcp(BRIG, *backend_args(), "--policy", path, stderr=subprocess.DEVNULL)
    try:
        for pooled in (True, False, True):
            m.wait_pool({"python": 2}, timeout=180)
            stale = set()
            if not pooled:  # the idle boxes started with the proxy before this one
                stale = idle_python()
                assert len(stale) == 2, stale
                assert docker("restart", STATE["proxy"]).returncode == 0
            r = m.run_code("python", code, timeout_seconds=30)
            assert r["verdict"] == "success" and r["stdout"] == "200\n403\n", r
            assert r["pooled"] is pooled, r
            assert [(d["host"], d["port"], d["allowed"]) for d in r["egress"]] == want, \
                r["egress"]
            with open(STATE["audit"]) as f:
                mine = [json.loads(x) for x in f if r["container"] in x]
            assert len(mine) == 1 and mine[0]["egress_decisions"] == r["egress"], mine
            end = time.monotonic() + 15  # removed in the background
            while stale_left(stale) and time.monotonic() < end:
                time.sleep(0.1)
            assert not stale_left(stale), stale_left(stale)
            assert not container_exists(r["container"] + "-net") or pooled, r["container"]
    finally:
        m.close()


def test_warm_box_whose_holder_is_gone():
    """An idle warm box whose network holder was removed while it waited has no network: the
    hand-over finds the holder gone (or its address another's) and the call runs in another box,
    here a cold one, with its decisions joined as usual."""
    path = warm_policy(1, "policy-warm-holder.json")
    code = ("import urllib.request as u\n"
            "print(u.urlopen('http://ok.test:8080/h', timeout=8).status)\n")
    m = mcpclient.brig_mcp(BRIG, *backend_args(), "--policy", path, stderr=subprocess.DEVNULL)
    try:
        m.wait_pool({"python": 1}, timeout=180)
        idle = boxes_of(m.pid, "python")
        assert len(idle) == 1, idle
        assert docker("rm", "-f", idle[0] + "-net").returncode == 0
        r = m.run_code("python", code, timeout_seconds=30)
        assert r["verdict"] == "success" and r["stdout"] == "200\n", r
        assert r["pooled"] is False and r["container"] != idle[0], r
        assert [(d["host"], d["allowed"]) for d in r["egress"]] == [("ok.test", True)], r["egress"]
    finally:
        m.close()


def test_killed_server_leaves_no_holder():
    """`brig mcp` SIGKILLed with warm egress boxes: its reaper removes the boxes and their
    network holders (each waits as long as its box, so nothing else would end them)."""
    path = warm_policy(1, "policy-warm-kill.json")
    m = mcpclient.brig_mcp(BRIG, *backend_args(), "--policy", path, stderr=subprocess.DEVNULL)

    def mine():
        r = docker("ps", "-a", "--filter", "label=brig=1", "--format",
                   '{{.Names}} {{.Label "brig.owner"}}')
        return [x.split()[0] for x in r.stdout.splitlines()
                if len(x.split()) == 2 and x.split()[1].startswith(f"{m.pid}:")]
    try:
        m.wait_pool({"python": 1, "node": 1, "shell": 1}, timeout=180)
        left = mine()
        assert len([n for n in left if n.endswith("-net")]) >= 3, left
        os.kill(m.pid, 9)
        m.p.wait(30)
        end = time.monotonic() + 60  # six removals on a busy 2-core host
        while mine() and time.monotonic() < end:
            time.sleep(0.2)
        assert not mine(), f"left after the server's reaper: {mine()}"
    finally:
        if m.p.poll() is None:
            m.p.kill()


NODE_PROBE = r'''
const out = {};
async function get(k, url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(8000) });
    out[k] = { status: r.status, reason: r.headers.get("x-brig-egress-refused"),
               body: await r.text() };
  } catch (e) {
    out[k] = { error: String(e && (e.cause || e)) };
  }
}
(async () => {
  await get("allowed", "http://ok.test:8080/node");
  await get("unlisted", "http://other.test:8080/");
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";  // the test upstream's own CA
  await get("https", "https://ok.test:8443/node-tls");
  console.log(JSON.stringify({ env: process.env.NODE_OPTIONS, ...out }));
})();
'''


def test_node_fetch_through_the_proxy():
    """node's fetch() reads no proxy variables: the node image's preload routes it through
    the proxy, so an allowed name works and an unlisted one gets the policy's 403."""
    r = brig("--policy", STATE["policy"], code=NODE_PROBE, lang="node", timeout=120)
    assert r["verdict"] == "success", r
    res = json.loads(r["stdout"].strip().splitlines()[-1])
    assert res["allowed"].get("status") == 200 and "/node" in res["allowed"]["body"], res
    assert res["https"].get("status") == 200 and "/node-tls" in res["https"]["body"], res
    assert res["unlisted"].get("status") == 403 and \
        res["unlisted"].get("reason") == "not-in-allowlist", res
    assert "GET /node ok.test:8080" in upstream_log(UP), upstream_log(UP)
    assert decision(r["egress"], "ok.test", 8080)["allowed"] is True, r["egress"]


LISTENER = r"""
import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8000))
s.listen(4)
s.settimeout(%(wait)s)
try:
    c, peer = s.accept()
    print("accepted", peer[0])
except OSError:
    print("none")
"""


def test_boxes_of_one_list_cannot_reach_each_other():
    """Two runs with one allowlist share its network; each reaches the proxy and not the other
    box (setup-host's DOCKER-USER rules; Docker lets a bridge's containers talk otherwise)."""
    cmd = [BRIG, "run", *backend_args(), "-l", "python", "--json", "--timeout", "30",
           "--policy", STATE["policy"]]
    a = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    try:
        a.stdin.write((LISTENER % {"wait": 15}).encode())
        a.stdin.close()
        box = running_box_of(a.pid)
        # the box has its network holder's namespace, and so its address
        mode = docker("inspect", "--format", "{{.HostConfig.NetworkMode}}", box).stdout.strip()
        hid = docker("inspect", "--format", "{{.Id}}", f"{box}-net").stdout.strip()
        # the holder comes after the box's creation (a spare claimed, or one started): the
        # box names it; the same network namespace either way
        assert mode in (f"container:{box}-net", f"container:{hid}"), (mode, hid)
        pids = [docker("inspect", "--format", "{{.State.Pid}}", c).stdout.strip()
                for c in (box, f"{box}-net")]
        if BACKEND != "gvisor":  # a gVisor box's pid is its sandbox's, in the same netns too
            assert len({os.readlink(f"/proc/{p}/ns/net") for p in pids}) == 1, pids
        nets = json.loads(docker("inspect", "--format", "{{json .NetworkSettings.Networks}}",
                                 f"{box}-net").stdout)
        addr = [v["IPAddress"] for k, v in nets.items() if k.startswith("brig-egress-")][0]
        time.sleep(1.5)  # the listener is up (python starts in well under a second)
        probe = f"""
import socket
try:
    socket.create_connection(({addr!r}, 8000), timeout=4).close()
    print("reached")
except OSError as e:
    print("fails", repr(e))
"""
        r = brig("--policy", STATE["policy"], code=probe, timeout=120)
        assert r.rc == 0 and r["verdict"] == "success", r
        assert r["stdout"].startswith("fails"), (addr, r["stdout"])
    finally:
        out = a.stdout.read()
        a.wait(60)
    res = json.loads(out)
    assert res["verdict"] == "success" and res["stdout"].strip() == "none", res


def test_killed_brig_leaves_no_holder():
    """`brig run` SIGKILLed mid-run: its box ends by itself (brig-init's deadline), its network
    holder is left running (brig could not remove it) until the next brig start reaps it (its
    brig.owner is gone; under make -j2 another suite's brig may be first), and would end by itself
    shortly after the box (a bounded sleep)."""
    cmd = [BRIG, "run", *backend_args(), "-l", "python", "--timeout", "5", "--policy",
           STATE["policy"], "-c", "import time\nprint('up', flush=True)\ntime.sleep(60)\n"]
    a = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        box = running_box_of(a.pid)
        holder = box + "-net"
        cmdline = json.loads(docker("inspect", "--format", "{{json .Config.Cmd}}", holder).stdout)
        # its own (the run's limit + 3 s + 60), or a claimed spare's (the policy's longest
        # run + 3 s + 60 + the 120 s it could be claimed in)
        longest = STATE["max_timeout"] + 3 + 60 + 120
        assert cmdline[0] == "sleep" and 5 + 3 < int(cmdline[1]) <= longest, cmdline
        time.sleep(1)
        a.kill()
        a.wait(30)
        end = time.monotonic() + 5 + 3 + 15
        while time.monotonic() < end and docker(
                "inspect", "--format", "{{.State.Running}}", box).stdout.strip() == "true":
            time.sleep(0.2)
        assert docker("inspect", "--format", "{{.State.Running}}", box).stdout.strip() != "true"
        # the holder outlives the box (brig was killed before it could remove it) unless another
        # suite's brig start (make -j2) has already reaped it: its owner is gone. Either way it
        # must be gone after the next brig start, which removing the reaper's -net rule breaks.
        up = docker("inspect", "--format", "{{.State.Running}}", holder).stdout.strip()
        gone = time.monotonic() + 10  # a reaper's `rm -f` may be between the kill and the removal
        while up != "true" and container_exists(holder) and time.monotonic() < gone:
            time.sleep(0.2)
        assert up == "true" or not container_exists(holder), f"{holder} stopped but not removed"
        cache = tempfile.mkdtemp(prefix="brig-egress-cache-")  # a fresh reap stamp
        os.chmod(cache, 0o700)
        try:
            r = subprocess.run([BRIG, "run", *backend_args(), "-l", "shell", "-c", "echo ok"],
                               capture_output=True, text=True, timeout=120,
                               env=dict(os.environ, BRIG_CACHE_DIR=cache))
            assert r.returncode == 0 and r.stdout == "ok\n", r
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        assert not container_exists(holder), f"{holder} left after the next brig start"
        assert not container_exists(box), f"{box} left after the next brig start"
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()


def test_outer_network_has_its_fixed_subnet():
    """brig-egress-out is made with a fixed subnet: two concurrent first runs cannot make two
    networks of that name (the engine's duplicate check is best effort; seen twice: every egress
    run then failed with "ambiguous"), the second's creation fails as an overlap instead."""
    r = docker("network", "ls", "--filter", "name=^brig-egress-out$", "--format", "{{.ID}}")
    assert len(r.stdout.split()) == 1, r.stdout
    r = docker("network", "inspect", "--format", "{{json .IPAM.Config}}", "brig-egress-out")
    assert json.loads(r.stdout) and json.loads(r.stdout)[0]["Subnet"] == "10.207.255.0/24", r.stdout
    # a second creation of it (a concurrent first run's) fails as an overlap: no second network
    d = docker("network", "create", "--subnet", "10.207.255.0/24", "brig-egress-out-race")
    if d.returncode == 0:
        docker("network", "rm", "brig-egress-out-race")
    assert d.returncode != 0 and "overlap" in d.stderr, d.stderr


def test_foreign_network_refused():
    """A network of the box network's name made by someone else (not internal: it has a route
    out) is refused, never joined: the run is a sandbox_error and starts nothing."""
    path = os.path.join(WORK, "policy-foreign.json")
    with open(path, "w") as f:
        json.dump({"egress": {"allow": ["foreign.test:80"]}, "warm_pool": 0}, f)
    out = subprocess.run([BRIG, "explain", "--backend", BACKEND, "--json", "--policy", path,
                          "-l", "python", "-c", "print(1)"], capture_output=True, text=True,
                         timeout=60)
    eg = json.loads(out.stdout)["spec"]["egress"]
    assert docker("network", "create", eg["network"]).returncode == 0
    cache = tempfile.mkdtemp(prefix="brig-egress-foreign-")
    os.chmod(cache, 0o700)
    try:
        r = brig("--policy", path, code="print(1)", timeout=120,
                 extra_env={"BRIG_CACHE_DIR": cache})
        assert r["verdict"] == "sandbox_error" and "is not the one brig makes" in r["error"], r
        assert docker("inspect", "--type", "container", eg["proxy_name"]).returncode != 0
        # nor does brig's detached process start spare holders on it (once it is done)
        import fcntl
        for f in os.listdir(cache):
            if f.startswith("spares-") and f.endswith(".fill"):
                with open(os.path.join(cache, f)) as lk:
                    fcntl.flock(lk, fcntl.LOCK_EX)
        on = docker("network", "inspect", "--format", "{{json .Containers}}", eg["network"])
        assert json.loads(on.stdout) == {}, on.stdout
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        docker("rm", "-f", eg["proxy_name"])
        docker("network", "rm", eg["network"])


def test_explain_shows_egress():
    r = subprocess.run([BRIG, "explain", "--backend", BACKEND, "--json", "--policy", STATE["policy"],
                        "-l", "python", "-c", "print(1)"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    o = json.loads(r.stdout)
    eg = o["spec"]["egress"]
    assert eg["network"] == STATE["network"] and eg["allow"] == STATE["allow"], eg
    # the box runs in its network holder's namespace; the holder is on the egress network,
    # carries the box's hostname and nameserver, and runs nothing but sleep, under runc
    h = o["spec"]["net_holder"]
    assert o["spec"]["network"] == "container:" + h["name"], (o["spec"]["network"], h["name"])
    assert h["name"] == o["spec"]["name"] + "-net", h["name"]
    assert o["spec"]["hostname"] is None and o["spec"]["dns"] is None, o["spec"]
    assert h["network"] == eg["network"] and h["hostname"] == "sandbox" and h["dns"], h
    # it ends by itself after the box's own deadline (the run's limit + 3 s), should brig die
    limit_s = o["spec"]["timeout_ms"] // 1000
    assert h["argv"][0] == "sleep" and int(h["argv"][1]) > limit_s + 3, h["argv"]
    assert h["runtime"] == "runc", h
    assert (h["image_id"] or "").startswith("sha256:"), h  # looked up, its pin checked
    assert h["cap_drop_all"] and h["no_new_privileges"] and h["read_only_rootfs"], h
    assert "brig.role=net-holder" in h["labels"], h["labels"]
    assert f'name={h["name"]}' in o["rendered"] and "container:" + h["name"] in o["rendered"]
    # the holder rendered as start_detached starts it: no stdin, nothing attached
    held, box = o["rendered"].split("\n# the box\n")
    assert "/attach?" not in held and "< CODE" not in held, held
    # it removes itself when its sleep ends; `brig run` may take a spare of its configuration
    assert '"AutoRemove": true' in held, held
    assert h["user"] == "65534:65534", h["user"]
    assert re.fullmatch(r"brig\.spare=[0-9a-f]{64}", o["spare_label"] or ""), o["spare_label"]
    assert f'takes a running spare labelled {o["spare_label"]}' in held, held
    assert f'/containers/{h["name"]}/start\n' in held and '"OpenStdin": false' in held, held
    assert "/attach?" in box, box
    STATE["config_dir"] = eg["config_dir"]
    assert os.path.isfile(os.path.join(eg["config_dir"], "squid.conf")), eg
    if BACKEND == "gvisor":
        assert o["spec"]["runtime"] == "runsc-egress", o["spec"]["runtime"]


def test_doctor_reports_egress():
    r = subprocess.run([BRIG, "doctor", "--json", "--backend", BACKEND, "--policy",
                        STATE["policy"]], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    eg = json.loads(r.stdout)["egress"]
    assert eg["allow"] == STATE["allow"] and eg["proxy_image_present"] is True, eg
    assert eg["backend_supports"] is True, eg
    assert "host kernel's network stack" in eg["gvisor_trade"], eg
    r = subprocess.run([BRIG, "doctor", "--backend", BACKEND, "--policy", STATE["policy"]],
                       capture_output=True, text=True, timeout=120)
    assert "egress: " in r.stdout and "(present)" in r.stdout, r.stdout


def test_rotated_log_is_not_a_complete_list():
    """The proxy's log is json-file, two files of $BRIG_EGRESS_LOG_KIB: a box (or its
    neighbours) logging more than that during a run rotates its first lines away.  Its
    decisions are then unknown (null, the result's notice says why), never a shortened list
    that looks complete.  A proxy of its own (another allowlist) with the smallest log."""
    with open(STATE["policy"]) as f:
        pol = json.load(f)
    pol["egress"]["allow"] = pol["egress"]["allow"] + ["rot.test:8080"]
    path = os.path.join(WORK, "policy-rotate.json")
    with open(path, "w") as f:
        json.dump(pol, f)
    env = {"BRIG_EGRESS_LOG_KIB": "16"}  # 2 x 16 KiB: ~130 lines
    burst = ("import urllib.request as u, urllib.error as e\n"
             "for i in range(%d):\n"
             "    try:\n"
             "        u.urlopen('http://evil.test:8080/%%d' %% i, timeout=8)\n"
             "    except e.HTTPError as x:\n"
             "        assert x.code == 403, x.code\n"
             "print('done')\n")
    r = brig("--policy", path, code=burst % 10, timeout=120, extra_env=env)
    assert r["verdict"] == "success" and r["stdout"] == "done\n", r
    assert len(r["egress"]) == 10 and all(d["reason"] == "not-in-allowlist"
                                          for d in r["egress"]), r["egress"]
    r = brig("--policy", path, code=burst % 400, timeout=120, extra_env=env)
    assert r["verdict"] == "success" and r["stdout"] == "done\n", r
    assert r["egress"] is None, (len(r["egress"]), r["egress"][:2])
    assert "egress decisions are unknown" in r["notice"], r["notice"]
    assert "rotated past the box's start" in r["notice"], r["notice"]


def test_gc_removes_idle_proxy():
    proxy, net = STATE["proxy"], STATE["network"]
    assert docker("inspect", "--type", "container", proxy).returncode == 0
    env = dict(os.environ, BRIG_EGRESS_IDLE_SECONDS="0")
    r = subprocess.run([BRIG, "gc"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert docker("inspect", "--type", "container", proxy).returncode != 0, "proxy still there"
    assert docker("network", "inspect", net).returncode != 0, "internal network still there"
    assert not os.path.exists(STATE["config_dir"]), "its configuration directory is still there"
    # a network whose proxy never started (made by hand here, labelled like brig's): gc'ed too
    orphan = "brig-egress-0123456789ab"
    assert docker("network", "create", "--internal", "--label", "brig.egress=0123456789ab",
                  orphan).returncode == 0
    r = subprocess.run([BRIG, "gc"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    if docker("network", "inspect", orphan).returncode == 0:
        docker("network", "rm", orphan)
        raise AssertionError("an internal network without its proxy is left")


if __name__ == "__main__":
    if brigtest.SUITE in brigtest.CUT:  # before the upstreams are made
        skip(brigtest.CUT_WHY)
    try:
        setup_upstreams()
        write_policy()
        main([test_allowed_and_refused, test_wildcard_and_https, test_no_dns_no_direct_path,
              test_audit_and_access_log, test_decisions_joined_into_result_and_audit,
              test_no_request_no_decision, test_one_shot_claims_a_spare,
              test_box_network_spares_the_proxy_address, test_node_fetch_through_the_proxy,
              test_proxy_dies_mid_run, test_proxy_restarted_mid_run, test_warm_box_with_egress,
              test_warm_box_whose_holder_is_gone, test_killed_server_leaves_no_holder,
              test_boxes_of_one_list_cannot_reach_each_other, test_killed_brig_leaves_no_holder,
              test_outer_network_has_its_fixed_subnet, test_foreign_network_refused,
              test_explain_shows_egress, test_doctor_reports_egress,
              test_rotated_log_is_not_a_complete_list, test_gc_removes_idle_proxy])
    finally:
        teardown()
