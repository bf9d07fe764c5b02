// e2e-2026.mjs - `brig mcp` driven by the official MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client) against a real dockerd, in its three negotiation modes:
// legacy (the 2025 handshake), auto (must negotiate 2026-07-28: a server/discover probe on a
// throwaway process, then the session) and pinned to 2026-07-28; every tool in each.  Then raw
// JSON-RPC probes of the era rules and the 2026-07-28 error cases.
//
//   BRIG=/path/to/brig BRIG_BACKEND_DIR=/path/to/backends/.libs node e2e-2026.mjs
//
// Prints TAP ("ok N - name" / "not ok N - name") and exits 1 if any check failed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

import {
  BRIG,
  bound,
  containersOf,
  exited,
  failures,
  finish,
  rawServer,
  serverEnv,
  sha256,
  sleep,
  test,
  waitFor,
} from './lib.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'brig-mcp-e2e-2026-'));
const MODERN = '2026-07-28';
const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const T = 30; // every run gets the policy's maximum: a loaded CI host is slow
const text = (r) => r.content.map((c) => c.text).join('\n');
const auditLines = (file) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

// A W3C traceparent per mode: the audit line must carry its ids.
const traceFor = (i) => ({
  traceparent: `00-${'4bf92f3577b34da6a3ce929d0e0e473' + i}-${'00f067aa0ba902b' + i}-01`,
  tracestate: 'brig=e2e',
  baggage: 'suite=e2e-2026',
});

async function session(label, mode, expect, index) {
  const auditLog = join(tmp, `audit-${label}.jsonl`);
  let stderrText = '';
  const transport = new StdioClientTransport({
    command: BRIG,
    args: ['mcp', '--audit-log', auditLog],
    env: serverEnv,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d) => (stderrText += d.toString()));
  const client = new Client(
    { name: 'brig-e2e-v2', version: '2.0.0' },
    { versionNegotiation: { mode } },
  );
  const ajv = expect === MODERN
    ? new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true })
    : new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
  let validateResult = null;
  const runs = []; // {code, verdict} expected in the audit log
  const trace = traceFor(index);

  async function run(args, opts, meta) {
    const params = { name: 'run_code', arguments: { timeout_seconds: T, ...args } };
    if (meta) params._meta = meta;
    const r = await client.callTool(params, opts);
    if (r.structuredContent) {
      assert.ok(validateResult(r.structuredContent), ajv.errorsText(validateResult.errors));
      runs.push({ code: args.code, verdict: r.structuredContent.verdict });
    }
    return r;
  }

  await test(`${label}: connect speaks ${expect}`, async () => {
    await client.connect(transport);
    assert.equal(client.getNegotiatedProtocolVersion(), expect);
    assert.equal(client.getProtocolEra(), expect === MODERN ? 'modern' : 'legacy');
    const info = client.getServerVersion();
    assert.equal(info?.name, 'brig');
    assert.match(info.version, /^\d+\.\d+/);
    assert.equal(client.getServerCapabilities().tools?.listChanged, false);
    assert.ok(client.getInstructions().length > 20);
    if (expect === MODERN) {
      const d = client.getDiscoverResult();
      assert.deepEqual(d.supportedVersions, [MODERN]);
      assert.equal(d.cacheScope, 'private');
      assert.ok(d.ttlMs > 0);
    }
  });

  await test(`${label}: tools/list, schemas compile (${expect === MODERN ? '2020-12' : 'draft-07'}, strict)`, async () => {
    const list = await client.listTools();
    assert.deepEqual(list.tools.map((t) => t.name), ['run_code', 'sandbox_status']);
    const rc = list.tools[0];
    for (const t of list.tools) {
      for (const s of [t.inputSchema, t.outputSchema]) {
        if (expect === MODERN) assert.equal(s.$schema, DIALECT);
        else assert.equal(s.$schema, undefined);
        ajv.compile(s);
      }
    }
    validateResult = ajv.compile(rc.outputSchema);
    const input = ajv.compile(rc.inputSchema);
    assert.ok(input({ language: 'python', code: 'print(1)' }));
    assert.ok(!input({ language: 'python', code: 'x', image: 'alpine' }));
    assert.ok(!input({ language: 'python', code: 'x', timeout_seconds: 31 }));
    assert.equal(rc.annotations.readOnlyHint, false);
  });

  await test(`${label}: run_code python, node and shell`, async () => {
    let code = 'import sys\nprint(6 * 7)\nprint("to stderr", file=sys.stderr)';
    let r = await run({ language: 'python', code });
    assert.equal(r.isError, false, text(r));
    assert.equal(r.structuredContent.stdout, '42\n');
    assert.equal(r.structuredContent.stderr, 'to stderr\n');
    assert.equal(r.structuredContent.code_sha256, sha256(code));
    assert.match(text(r), /exited with code 0/);
    r = await run({ language: 'node', code: 'console.log([1,2,3].map(x => x * 2).join(","))' });
    assert.equal(r.structuredContent.stdout, '2,4,6\n', text(r));
    r = await run({ language: 'shell', code: 'echo "$((6*7))"; id -u' });
    // the box's own uid from uid_range, which the result names
    assert.equal(r.structuredContent.stdout, `42\n${r.structuredContent.user.split(':')[0]}\n`, text(r));
    assert.match(r.structuredContent.user, /^20000\d{5}:65534$/);
  });

  await test(`${label}: NUL, ESC and invalid UTF-8 reach the text, visibly, in both streams`, async () => {
    const code = "printf 'one\\000two\\033[2J\\376three\\n'; printf 'err\\000\\033]0;x\\007tail\\377\\n' >&2";
    const r = await run({ language: 'shell', code });
    assert.equal(r.isError, false, text(r));
    const t = text(r);
    assert.ok(t.includes('--- stdout ---\none\u2400two\u241b[2J\ufffdthree\n'), t);
    assert.ok(t.includes('--- stderr ---\nerr\u2400\u241b]0;x\u2407tail\ufffd\n'), t);
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(t), 'a raw control character in the text');
    assert.equal(r.structuredContent.stdout, 'one\u0000two\u001b[2J\ufffdthree\n');
    assert.equal(r.structuredContent.stderr, 'err\u0000\u001b]0;x\u0007tail\ufffd\n');
  });

  await test(`${label}: failures are isError results; an unknown tool is -32602`, async () => {
    let r = await run({ language: 'shell', code: 'echo oops >&2; exit 3' });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.verdict, 'error');
    assert.equal(r.structuredContent.exit_code, 3);
    r = await client.callTool({ name: 'run_code', arguments: { language: 'ruby', code: 'x' } });
    assert.equal(r.isError, true);
    assert.match(text(r), /Unsupported language "ruby"/);
    await assert.rejects(client.callTool({ name: 'rm_rf', arguments: {} }), (e) => e.code === -32602);
  });

  await test(`${label}: sandbox_status`, async () => {
    const r = await client.callTool({ name: 'sandbox_status', arguments: {} });
    assert.equal(r.isError, false, text(r));
    assert.equal(typeof r.structuredContent.selected, 'string', text(r));
    assert.equal(r.structuredContent.limits.max_timeout_seconds, 30);
  });

  await test(`${label}: progress only for a progressToken`, async () => {
    const seen = [];
    const r = await run({ language: 'python', code: 'print("p")' }, { onprogress: (p) => seen.push(p) });
    assert.equal(r.structuredContent.stdout, 'p\n');
    const steps = seen.map((p) => p.progress);
    assert.deepEqual(steps.slice(0, 2), [1, 2], JSON.stringify(seen));
    assert.ok(seen.every((p) => p.total === 3));
  });

  await test(`${label}: _meta trace context is recorded in the audit line`, async () => {
    const code = `print("traced ${label}")`;
    const r = await run({ language: 'python', code }, undefined, trace);
    assert.equal(r.isError, false, text(r));
    const line = auditLines(auditLog).find((l) => l.code_sha256 === sha256(code));
    assert.ok(line, 'no audit line');
    assert.equal(line.trace_id, trace.traceparent.slice(3, 35));
    assert.equal(line.parent_span_id, trace.traceparent.slice(36, 52));
    assert.ok(!JSON.stringify(line).includes('e2e-2026'), 'baggage in the audit log');
  });

  await test(`${label}: cancellation stops the run and removes its container`, async () => {
    const pid = transport.pid;
    const ac = new AbortController();
    const code = `import time\nprint("start ${label}", flush=True)\ntime.sleep(25)`;
    const p = client.callTool(
      { name: 'run_code', arguments: { language: 'python', code, timeout_seconds: T } },
      { signal: ac.signal },
    );
    p.catch(() => {});
    await waitFor(() => containersOf(pid).length > 0, 30000, 'the container to start');
    await sleep(1000);
    const during = containersOf(pid);
    ac.abort('changed my mind');
    await assert.rejects(p);
    await waitFor(() => {
      const now = new Set(containersOf(pid));
      return during.some((c) => !now.has(c));
    }, 15000, 'the container to be removed');
    runs.push({ code, verdict: 'cancelled' });
    const r = await run({ language: 'shell', code: 'echo after' });
    assert.equal(r.structuredContent.stdout, 'after\n');
  });

  await test(`${label}: close: the server exits and leaves no container`, async () => {
    const pid = transport.pid;
    await client.close();
    await waitFor(() => exited(pid), 15000, 'the server to exit');
    await waitFor(() => containersOf(pid).length === 0, 10000, 'its containers to go');
    const lines = auditLines(auditLog);
    assert.ok(lines.every((l) => l.front_door === 'mcp'));
    for (const run of runs) {
      const hits = lines.filter((l) => l.code_sha256 === sha256(run.code));
      assert.ok(hits.some((l) => l.verdict === run.verdict), `${run.code.slice(0, 40)}: ${hits.map((h) => h.verdict)}`);
    }
  });
  if (failures()) console.log(`# server stderr (${label}):\n${stderrText.replace(/^/gm, '# ')}`);
}

await session('v2 legacy', 'legacy', '2025-11-25', 1);
await session('v2 auto', 'auto', MODERN, 2);
await session('v2 pinned', { pin: MODERN }, MODERN, 3);

// ---- raw JSON-RPC: the era rules and the 2026-07-28 error cases ---------------------------
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
};
const req = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params && { params }) }) + '\n';
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } };

async function ask(s, id, method, params) {
  s.send(req(id, method, params));
  const m = JSON.parse(await s.next(30000));
  assert.equal(m.id, id);
  return m;
}

await test('raw: wrong version and malformed _meta are refused and fix no era', async () => {
  const s = rawServer();
  let m = await ask(s, 1, 'tools/list', { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } });
  assert.equal(m.error.code, -32022);
  assert.deepEqual(m.error.data, { supported: [MODERN], requested: '2030-01-01' });
  m = await ask(s, 2, 'server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } });
  assert.equal(m.error.code, -32602);
  assert.equal(m.error.data.envelope.key, 'io.modelcontextprotocol/clientCapabilities');
  m = await ask(s, 3, 'initialize', INIT); // still open: the handshake works
  assert.equal(m.result.protocolVersion, '2025-11-25');
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0, s.stderr());
});

await test('raw: discover after initialize is unknown, _meta is ignored in the legacy era', async () => {
  const s = rawServer();
  let m = await ask(s, 1, 'initialize', INIT);
  assert.equal(m.result.protocolVersion, '2025-11-25');
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  m = await ask(s, 2, 'server/discover', { _meta: ENVELOPE });
  assert.equal(m.error.code, -32601);
  m = await ask(s, 3, 'tools/list', { _meta: ENVELOPE });
  assert.equal(m.result.tools.length, 2);
  assert.equal(m.result.resultType, undefined);
  m = await ask(s, 4, 'ping');
  assert.deepEqual(m.result, {});
  s.child.stdin.end();
  assert.equal((await s.exited).code, 0, s.stderr());
});

await test('raw: initialize after discover, missing _meta, removed methods; EOF ends it', async () => {
  const s = rawServer();
  let m = await ask(s, 1, 'server/discover', { _meta: ENVELOPE });
  assert.deepEqual(m.result.supportedVersions, [MODERN]);
  assert.equal(m.result.resultType, 'complete');
  assert.equal(m.result._meta['io.modelcontextprotocol/serverInfo'].name, 'brig');
  m = await ask(s, 2, 'initialize', INIT);
  assert.equal(m.error.code, -32022);
  assert.deepEqual(m.error.data, { supported: [MODERN], requested: '2025-11-25' });
  m = await ask(s, 3, 'tools/list');
  assert.equal(m.error.code, -32602);
  assert.deepEqual(m.error.data.envelope, { key: 'io.modelcontextprotocol/protocolVersion', problem: 'missing' });
  m = await ask(s, 4, 'tools/list', { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } });
  assert.equal(m.error.code, -32022);
  for (const method of ['ping', 'logging/setLevel']) {
    m = await ask(s, 5, method, { level: 'debug', _meta: ENVELOPE });
    assert.equal(m.error.code, -32601, method);
  }
  m = await ask(s, 6, 'tools/list', { _meta: ENVELOPE });
  assert.equal(m.result.ttlMs > 0 && m.result.cacheScope, 'private');
  // a log level asked for: the run's answer comes with no notifications/message before it
  s.send(req(7, 'tools/call', {
    name: 'run_code',
    arguments: { language: 'shell', code: 'echo raw', timeout_seconds: T },
    _meta: { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' },
  }));
  m = JSON.parse(await s.next(60000));
  assert.equal(m.id, 7, JSON.stringify(m));
  assert.equal(m.result.structuredContent.stdout, 'raw\n');
  assert.equal(m.result.resultType, 'complete');
  const t0 = Date.now();
  s.child.stdin.end();
  const { code } = await s.exited;
  assert.equal(code, 0, s.stderr());
  assert.ok(Date.now() - t0 < bound(10000), `exit took ${Date.now() - t0} ms`);
  assert.deepEqual(containersOf(s.child.pid), []);
});

rmSync(tmp, { recursive: true, force: true });
finish();
