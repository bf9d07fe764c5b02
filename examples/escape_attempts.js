// escape_attempts.js - the usual ways out of a container, tried from Node.js.
//
//   brig run examples/escape_attempts.js
//
// Every line prints BLOCKED (the control held) or OK (the attempt worked: a hole), each as soon
// as its attempt is decided, then a summary "N blocked, M open".  Each attempt is real: with its
// control removed it succeeds (tests/integration/escape.py runs this script in a container
// without brig's controls - privileged, root, a network, no limits - and every line must say OK
// there); one that would change the host if it got through only opens for writing.  The
// comment above each names the control(s) that stop it.  (Nothing tries /proc/sysrq-trigger,
// /proc/kcore or /dev/mem: the CI host's kernel has none of them, so such a line could not be
// shown to work without a control.)  It runs as the sandboxed
// program, so it only uses Node's own modules.  Node has no raw syscall interface, so ptrace,
// keyrings, unshare and mount(2) are left to escape_attempts.py and escape_attempts.sh; what
// Node can reach - sockets, files, /proc, /sys, /dev, child processes, native code - it tries
// here.  (The CPU quota is not judged from inside: on a busy host a box gets less than its
// quota anyway, and gVisor's guest-side CPU accounting over-reports - measured 1.44 "CPUs" in
// the box while the host's cpuacct showed 1.01 - so only the host can tell.)
'use strict';

const cp = require('child_process');
const dgram = require('dgram');
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

// Open for writing and close again: proves the file could be changed without changing it.
function openForWriting(p) {
  fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY));
  return `opened ${p} for writing`;
}

function writeFile(p, data, flag = 'w') {
  fs.writeFileSync(p, data, { flag });
  return `wrote ${p}`;
}

async function main() {
  // ---- network (only the host is tried: no traffic leaves the machine) ------------------

  const routes = () => fs.readFileSync('/proc/net/route', 'utf8').trim().split('\n').slice(1)
    .map((l) => l.split(/\s+/));
  const gateway = () => {
    const def = routes().find((r) => r[1] === '00000000');
    if (!def) return null;
    const b = Buffer.alloc(4);
    b.writeUInt32LE(parseInt(def[2], 16));
    return [...b].join('.');
  };

  // network none: the box has only lo
  await attempt('network: an interface besides lo', () => {
    const up = fs.readdirSync('/sys/class/net').filter((d) => d !== 'lo');
    if (up.length) return `interfaces ${up.sort().join(', ')}`;
    throw blocked('only lo', 'ENODEV');
  });

  // network none: no route out of the box
  await attempt('network: a default route', () => {
    const gw = gateway();
    if (gw) return `default route via ${gw}`;
    throw blocked(`no default route (${routes().length} routes)`, 'ENETUNREACH');
  });

  // network none: nothing reaches the host
  await attempt('network: TCP to the host (the default gateway)', async () => {
    const gw = gateway();
    if (!gw) throw blocked('no default route, no gateway to try', 'ENETUNREACH');
    try {
      return await tcpConnect({ host: gw, port: 9 }, 2000);
    } catch (e) {
      if (e.code === 'ECONNREFUSED') return `${gw} answered (connection refused)`;
      if (e.code === 'ETIMEDOUT') return `a SYN went out to ${gw} (no answer within 2 s)`;
      throw e;
    }
  });

  // network none: nothing answers UDP either (the host's discard port)
  await attempt('network: UDP to the host (the default gateway)', () => {
    const gw = gateway();
    if (!gw) throw blocked('no default route, no gateway to try', 'ENETUNREACH');
    const s = dgram.createSocket('udp4');
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.send(Buffer.from('x'), 9, gw, (e) => (e ? reject(e) : resolve(`sent a datagram to ${gw}`)));
    }).finally(() => s.close());
  });

  // ---- the image and the kernel's knobs -------------------------------------------------

  // read-only root (and uid 65534)
  await attempt('write the image: /usr/bin/evil', () => writeFile('/usr/bin/evil', 'x'));
  // uid 65534 (and the read-only root)
  await attempt('write /etc/passwd', () => writeFile('/etc/passwd', 'evil::0:0::/:/bin/sh\n', 'a'));
  // uid 65534, /proc/sys read-only: only opened (a write would reach the host's kernel)
  await attempt('/proc/sys/kernel/core_pattern (open for writing)',
    () => openForWriting('/proc/sys/kernel/core_pattern'));
  // /sys/fs/cgroup read-only, uid 65534 (release_agent only opened; a new cgroup removed again)
  await attempt('cgroup: release_agent or a new cgroup', () => {
    const root = '/sys/fs/cgroup';
    const errs = [];
    for (const c of fs.existsSync(root) ? fs.readdirSync(root).sort() : []) {
      try {
        return openForWriting(`${root}/${c}/release_agent`);
      } catch (e) {
        errs.push(e.code);
      }
      try {
        fs.mkdirSync(`${root}/${c}/brig-escape`);
        fs.rmdirSync(`${root}/${c}/brig-escape`);
        return `created a cgroup under ${root}/${c}`;
      } catch (e) {
        errs.push(e.code);
      }
    }
    throw blocked(`every write refused (${[...new Set(errs)].join(',') || 'no cgroupfs'})`);
  });

  // ---- identity and privileges ----------------------------------------------------------

  // uid 65534, no capabilities
  await attempt('setuid(0)', () => { process.setuid(0); return `uid now ${process.getuid()}`; });
  await attempt('setgid(0) / setgroups([0])', () => {
    process.setgid(0);
    process.setgroups([0]);
    return `gid now ${process.getgid()}`;
  });

  // --cap-drop ALL: the bounding set is empty (a non-root uid alone would only empty CapEff)
  await attempt('capabilities (CapBnd != 0)', () => {
    const line = fs.readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('CapBnd:'));
    if (line && BigInt(`0x${line.split(/\s+/)[1]}`) !== 0n) return line.trim();
    throw blocked('CapBnd is 0');
  });

  // ---- devices and the engine -----------------------------------------------------------

  // uid 65534, no devices but the engine's harmless ones
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

  // nothing of the host mounted (and uid 65534)
  for (const sock of ['/var/run/docker.sock', '/run/containerd/containerd.sock']) {
    await attempt(`engine socket ${path.basename(sock)}`, () => tcpConnect({ path: sock }, 2000));
  }

  // ---- /tmp: noexec, size ---------------------------------------------------------------

  // /tmp noexec
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

  // /tmp noexec for mmap(PROT_EXEC) too (a known gap under gVisor, tests/integration/escape.py)
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

  // tmpfs_mb
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

  // nofile
  await attempt('open 10000 files', () => {
    const fds = [];
    try {
      for (let i = 0; i < 10000; i++) fds.push(fs.openSync('/dev/null', 'r'));
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
    return 'opened 10000';
  });

  // pids_limit
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

  // memory_mb.  Keep this one last: under gVisor the memory limit covers the sandbox's own kernel too, and
  // reaching it ends the whole box, so nothing after it would be printed.
  await attempt('allocate 1 GiB of memory (in a child)', () => {
    // In a child, so that the kernel's OOM kill of it does not end this report (under runc).
    // Without a memory limit (the test that the attempt is real) filling 2 GiB on a busy
    // 2-core host took more than 60 s once (CI): the bound only stops a hung child.
    const r = cp.spawnSync(process.execPath,
      ['-e', 'const b = Buffer.alloc(1024 ** 3, 1); console.log(b.length)'],
      { encoding: 'utf8', timeout: 240000 });
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
