// escape_attempts.js - the usual ways out of a container, tried from Node.js.
//
//   brig run examples/escape_attempts.js
//
// Every line prints BLOCKED (the control held) or OK (the attempt worked: a hole), each as soon
// as its attempt is decided, then a summary "N blocked, M open".  It runs as the sandboxed
// program, so it only uses Node's own modules.  Node has no raw syscall interface, so ptrace,
// keyrings, unshare and mount(2) are left to escape_attempts.py and escape_attempts.sh; what
// Node can reach - sockets, files, /proc, /sys, /dev, child processes, native code - it tries
// here.  (The CPU quota is not judged from inside: on a busy host a box gets less than its
// quota anyway, and gVisor's guest-side CPU accounting over-reports - measured 1.44 "CPUs" in
// the box while the host's cpuacct showed 1.01 - so only the host can tell.)
'use strict';

const cp = require('child_process');
const dgram = require('dgram');
const dns = require('dns');
const fs = require('fs');
const net = require('net');
const path = require('path');

const results = [];

// One line to standard output, written before this returns: if a limit ends the whole box (under
// gVisor the memory attempt, the last one, does), the lines so far are not lost.
// process.stdout.write may queue the data (a pipe can be asynchronous), fs.writeSync does not;
// a short count (gVisor gives one on a full pipe) or EAGAIN (a non-blocking pipe) is retried.
function say(line) {
  const b = Buffer.from(`${line}\n`);
  for (let off = 0; off < b.length;) {
    try {
      off += fs.writeSync(1, b, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // the reader is behind
    }
  }
}

// Run one attempt: fn returns (or resolves) if the escape WORKED, throws (rejects) if it was
// blocked.  The error's code and message are the detail.  Its line is printed at once.
async function attempt(name, fn) {
  try {
    const detail = await fn();
    results.push(['OK', name, detail || 'succeeded']);
  } catch (e) {
    const what = e && e.code ? `${e.code}: ${e.message}` : String(e && e.message ? e.message : e);
    results.push(['BLOCKED', name, what.replace(/\s+/g, ' ').slice(0, 90)]);
  }
  const [verdict, , detail] = results[results.length - 1];
  say(`${verdict.padEnd(8)} ${name.padEnd(45)} ${detail}`);
}

function blocked(message, code = 'BLOCKED') {
  const e = new Error(message);
  e.code = code;
  return e;
}

// A promise that settles with the first of `p` or a timeout (a timeout counts as blocked).
// A late rejection of `p` after the timeout is swallowed (unhandled, it would end Node).
function within(ms, what, p) {
  p.catch(() => {});
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(blocked(`${what}: no answer within ${ms} ms`, 'ETIMEDOUT')), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function tcpConnect(opts, ms) {
  const s = net.connect(opts);
  return within(ms, 'connect', new Promise((resolve, reject) => {
    s.once('connect', () => resolve(`connected to ${JSON.stringify(opts)}`));
    s.once('error', reject);
  })).finally(() => s.destroy());
}

function writeFile(p, data, flag = 'w') {
  fs.writeFileSync(p, data, { flag });
  return `wrote ${p}`;
}

async function main() {
  // ---- network --------------------------------------------------------------------------

  await attempt('network: TCP connect to 1.1.1.1:53', () => tcpConnect({ host: '1.1.1.1', port: 53 }, 2000));

  await attempt('network: UDP DNS query to 8.8.8.8:53', () => {
    const s = dgram.createSocket('udp4');
    // a minimal DNS query for "." type NS: any answer at all means the packet got out and back
    const q = Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1]);
    return within(2000, 'udp', new Promise((resolve, reject) => {
      s.once('message', () => resolve('got a DNS answer'));
      s.once('error', reject);
      s.send(q, 53, '8.8.8.8', (e) => e && reject(e));
    })).finally(() => s.close());
  });

  await attempt('network: DNS lookup (getaddrinfo)', () => within(5000, 'lookup',
    dns.promises.lookup('example.com').then((a) => `example.com is ${a.address}`)));

  await attempt('network: DNS query via resolv.conf (c-ares)', () => within(5000, 'resolve4',
    dns.promises.resolve4('example.com').then((a) => `example.com is ${a.join(',')}`)));

  await attempt('network: Docker API at 172.17.0.1:2375',
    () => tcpConnect({ host: '172.17.0.1', port: 2375 }, 2000));

  await attempt('network: a default route exists', () => {
    const routes = fs.readFileSync('/proc/net/route', 'utf8').trim().split('\n').slice(1);
    const def = routes.find((l) => l.split(/\s+/)[1] === '00000000');
    if (def) return `default route via ${def.split(/\s+/)[0]}`;
    throw blocked(`no default route (${routes.length} routes)`);
  });

  // ---- the image and the kernel's knobs -------------------------------------------------

  await attempt('write the image: /usr/bin/evil', () => writeFile('/usr/bin/evil', 'x'));
  await attempt('write /etc/passwd', () => writeFile('/etc/passwd', 'evil::0:0::/:/bin/sh\n', 'a'));
  await attempt('/proc/sysrq-trigger', () => writeFile('/proc/sysrq-trigger', 'h'));
  await attempt('write /proc/sys/kernel/core_pattern',
    () => writeFile('/proc/sys/kernel/core_pattern', '|/tmp/x'));
  await attempt('read host memory: /proc/kcore, /dev/mem', () => {
    for (const p of ['/proc/kcore', '/dev/mem']) {
      let fd;
      try {
        fd = fs.openSync(p, 'r');
        const b = Buffer.alloc(64);
        if (fs.readSync(fd, b, 0, 64, 0) > 0) return `read ${p}`;
      } catch (e) {
        if (!['ENOENT', 'EACCES', 'EPERM', 'EIO', 'EINVAL'].includes(e.code)) throw e;
      } finally {
        if (fd !== undefined) fs.closeSync(fd);
      }
    }
    throw blocked('neither readable (absent, masked or denied)');
  });

  await attempt('cgroup release_agent / new cgroup', () => {
    const root = '/sys/fs/cgroup';
    const errs = [];
    for (const c of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      for (const [p, fn] of [[`${root}/${c}/release_agent`, (q) => fs.writeFileSync(q, '/tmp/x')],
        [`${root}/${c}/brig-escape`, (q) => fs.mkdirSync(q)]]) {
        try {
          fn(p);
          return `changed ${p}`;
        } catch (e) {
          errs.push(e.code);
        }
      }
    }
    throw blocked(`${errs.length} writes refused (${[...new Set(errs)].join(',') || 'no cgroupfs'})`);
  });

  await attempt('mount a tmpfs (mount(8))', () => {
    fs.mkdirSync('/tmp/m', { recursive: true });
    const r = cp.spawnSync('mount', ['-t', 'tmpfs', 'none', '/tmp/m'], { encoding: 'utf8', timeout: 5000 });
    if (r.error) throw r.error;
    if (r.status === 0) return 'mounted a tmpfs';
    throw blocked(`mount failed (status ${r.status}): ${r.stderr.trim()}`);
  });

  // ---- identity and privileges ----------------------------------------------------------

  await attempt('setuid(0)', () => { process.setuid(0); return `uid now ${process.getuid()}`; });
  await attempt('setgid(0) / setgroups([0])', () => {
    process.setgid(0);
    process.setgroups([0]);
    return `gid now ${process.getgid()}`;
  });

  await attempt('setuid binary on the image', () => {
    const found = [];
    for (const d of ['/bin', '/usr/bin', '/sbin', '/usr/sbin']) {
      let names = [];
      try { names = fs.readdirSync(d); } catch { continue; }
      for (const n of names) {
        const p = path.join(d, n);
        try {
          const st = fs.statSync(p);
          if (st.isFile() && (st.mode & 0o4000)) found.push(p);
        } catch { /* dangling link */ }
      }
    }
    for (const p of found) {
      const r = cp.spawnSync(p, ['--help'], { timeout: 2000 });
      if (r.status === 0) return `${p} ran set-uid`;
    }
    throw blocked(`${found.length} set-uid binaries, none usable (no-new-privileges)`);
  });

  await attempt('capabilities (CapEff != 0)', () => {
    const line = fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('CapEff:'));
    if (line && BigInt(`0x${line.split(/\s+/)[1]}`) !== 0n) return line.trim();
    throw blocked('CapEff is 0');
  });

  // ---- devices and the engine -----------------------------------------------------------

  await attempt('/dev access: a disk or the kernel log', () => {
    const disks = fs.readdirSync('/dev').filter((n) => /^(sd|vd|xvd|nvme|hd|loop|dm-)/.test(n));
    for (const p of [...disks.map((n) => `/dev/${n}`), '/dev/kmsg', '/dev/port']) {
      try {
        const fd = fs.openSync(p, 'r');
        fs.closeSync(fd);
        return `opened ${p}`;
      } catch (e) {
        if (e.code !== 'ENOENT' && e.code !== 'EACCES' && e.code !== 'EPERM') throw e;
      }
    }
    throw blocked(`no disk, /dev/kmsg or /dev/port to open (${disks.length} disk nodes)`);
  });

  for (const sock of ['/var/run/docker.sock', '/run/containerd/containerd.sock']) {
    await attempt(`engine socket ${path.basename(sock)}`, () => tcpConnect({ path: sock }, 2000));
  }

  // ---- /tmp: noexec, size ---------------------------------------------------------------

  await attempt('execute a script written to /tmp', () => {
    writeFile('/tmp/x.sh', '#!/bin/sh\necho ran\n');
    fs.chmodSync('/tmp/x.sh', 0o755);
    cp.execFileSync('/tmp/x.sh', { stdio: 'pipe' });
    return 'ran /tmp/x.sh';
  });

  await attempt('execute a copy of node in /tmp', () => {
    fs.copyFileSync(process.execPath, '/tmp/node2');
    fs.chmodSync('/tmp/node2', 0o755);
    cp.execFileSync('/tmp/node2', ['-e', '0'], { stdio: 'pipe' });
    return 'ran /tmp/node2';
  });

  await attempt('load native code from /tmp (process.dlopen)', () => {
    // Any ELF shared object will do: if its segments map executable, dlopen gets as far as the
    // module registration (which a plain library fails): that is the hole.  In a child, so
    // that a foreign library's constructors cannot disturb this report.
    const libdir = ['/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']
      .find((d) => fs.existsSync(d));
    const lib = libdir && fs.readdirSync(libdir).find((n) => /^lib(z|uv|brotlicommon)\.so\.\d/.test(n));
    if (!lib) throw blocked('no shared library to copy');
    fs.copyFileSync(path.join(libdir, lib), '/tmp/lib.so');
    try {
      const r = cp.spawnSync(process.execPath, ['-e', "process.dlopen({ exports: {} }, '/tmp/lib.so')"],
        { encoding: 'utf8', timeout: 10000 });
      const msg = (r.stderr.match(/Error: .*/) || [r.stderr.trim() || `status ${r.status}`])[0];
      if (r.status === 0 || /self-register|Module did not/i.test(msg)) return `mapped ${lib} executable from /tmp`;
      throw blocked(msg, 'ERR_DLOPEN_FAILED');
    } finally {
      fs.rmSync('/tmp/lib.so', { force: true });
    }
  });

  await attempt('fill /tmp beyond its size (200 MiB)', () => {
    const fd = fs.openSync('/tmp/big', 'w');
    const mb = Buffer.alloc(1 << 20);
    try {
      for (let i = 0; i < 200; i++) fs.writeSync(fd, mb);
    } finally {
      fs.closeSync(fd);
      fs.rmSync('/tmp/big', { force: true });
    }
    return 'wrote 200 MiB';
  });

  // ---- exhaustion -----------------------------------------------------------------------

  await attempt('open 10000 files', () => {
    const fds = [];
    try {
      for (let i = 0; i < 10000; i++) fds.push(fs.openSync('/dev/null', 'r'));
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
    return 'opened 10000';
  });

  await attempt('spawn 200 processes', async () => {
    // Each child stops itself (SIGSTOP): alive, using no CPU and no fd of ours, until killed.
    const kids = [];
    const started = await Promise.all(Array.from({ length: 200 }, () => new Promise((resolve) => {
      let k;
      try {
        k = cp.spawn('/bin/sh', ['-c', 'kill -STOP $$'], { stdio: 'ignore' });
      } catch (e) {
        resolve(e.code);
        return;
      }
      kids.push(k);
      k.once('spawn', () => resolve('ok'));
      k.once('error', (e) => resolve(e.code));
    })));
    await Promise.all(kids.map((k) => new Promise((resolve) => {
      if (!k.pid || k.exitCode !== null || k.signalCode !== null) return resolve();
      k.once('exit', resolve);
      k.kill('SIGKILL');
    })));
    const ok = started.filter((s) => s === 'ok').length;
    if (ok === 200) return 'all 200 started';
    const errs = [...new Set(started.filter((s) => s !== 'ok'))].join(',');
    throw blocked(`${ok} started, then ${errs}`, 'pids limit');
  });

  // Keep this one last: under gVisor the memory limit covers the sandbox's own kernel too, and
  // reaching it ends the whole box, so nothing after it would be printed.
  await attempt('allocate 2 GiB of memory (in a child)', () => {
    // In a child, so that the kernel's OOM kill of it does not end this report (under runc).
    const r = cp.spawnSync(process.execPath,
      ['-e', 'const b = Buffer.alloc(2 * 1024 ** 3, 1); console.log(b.length)'],
      { encoding: 'utf8', timeout: 20000 });
    if (r.error) throw r.error;
    if (r.status === 0) return `child filled ${r.stdout.trim()} bytes`;
    if (r.signal) throw blocked(`child killed by ${r.signal} at the memory limit`, 'MemoryError');
    throw blocked(`child failed with status ${r.status}`, 'MemoryError');
  });

  const holes = results.filter((r) => r[0] === 'OK').length;
  say(`${results.length - holes} blocked, ${holes} open`);
}

main().catch((e) => {
  console.error(`escape_attempts.js failed: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
