// lib.mjs - what the MCP end-to-end scripts share: a tiny TAP runner, the containers of a
// brig process, waiting, and a raw stdio session with `brig mcp`.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';

export const BRIG = process.env.BRIG;
if (!BRIG) {
  console.error('set BRIG to the brig binary (and BRIG_BACKEND_DIR to the plugins)');
  process.exit(2);
}
export const serverEnv = { ...process.env };
export const sha256 = (s) => createHash('sha256').update(s, 'utf8').digest('hex');
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A time bound, scaled for a slow build: scripts/test-all sets BRIG_TEST_SLOWDOWN in its asan
// stage (an ASan + UBSan brig and its plugins run 2-3x slower, beside another suite on 2 cores).
const SLOWDOWN = Number(process.env.BRIG_TEST_SLOWDOWN) || 1;
export const bound = (ms) => ms * SLOWDOWN;

export async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

// Containers (running or not) that the brig process `pid` created: label brig.owner=PID:START.
export function containersOf(pid) {
  const out = execFileSync(
    'docker',
    ['ps', '-a', '--filter', 'label=brig', '--format', '{{.Names}}\t{{.Label "brig.owner"}}'],
    { encoding: 'utf8' },
  );
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .filter(([, owner]) => owner && owner.startsWith(`${pid}:`))
    .map(([name]) => name);
}

// Whether process pid is gone.
export function exited(pid) {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

// ---- a tiny TAP runner -------------------------------------------------------------------
let n = 0;
let failed = 0;
export async function test(name, fn) {
  n++;
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok ${n} - ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    for (const line of String(e?.stack ?? e).split('\n')) console.log(`  # ${line}`);
  }
}
export const failures = () => failed;
// Print the plan and the summary, exit 1 if anything failed.
export function finish() {
  console.log(`1..${n}`);
  console.log(failed ? `# FAILED ${failed} of ${n}` : `# all ${n} passed`);
  process.exit(failed ? 1 : 0);
}

// ---- raw stdio: one JSON-RPC line out, the next line in -----------------------------------
export function rawServer(args = []) {
  const child = spawn(BRIG, ['mcp', '--quiet', ...args], {
    env: serverEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buf = '';
  const lines = [];
  const waiters = [];
  child.stdout.on('data', (d) => {
    buf += d.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      while (waiters.length && lines.length) waiters.shift()(lines.shift());
    }
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d.toString()));
  const done = new Promise((res) => child.on('exit', (code, sig) => res({ code, sig })));
  return {
    child,
    exited: done,
    stderr: () => err,
    send: (data) => child.stdin.write(data),
    next: (ms = 10000) =>
      new Promise((res, rej) => {
        if (lines.length) return res(lines.shift());
        const t = setTimeout(() => rej(new Error('no line from the server')), ms);
        waiters.push((l) => {
          clearTimeout(t);
          res(l);
        });
      }),
  };
}
