// wire-compare.mjs - brig's wire bytes next to the v2 reference server's for the same requests.
//
//   BRIG=/path/to/brig BRIG_BACKEND_DIR=/path/to/backends/.libs node wire-compare.mjs [-v]
//
// Sends the same JSON-RPC sessions (2026-07-28 and 2025) to `brig mcp` and to a server built
// with @modelcontextprotocol/server's serveStdio (the TypeScript SDK v2) that offers brig's two
// tools with brig's own schemas, records every answer and compares their shapes: keys, JSON
// types, error codes and the protocol constants (resultType, cacheScope, supportedVersions),
// not the values that say what ran.  Differences brig makes on purpose are listed in EXPECTED
// with the reason; any other one fails (exit 1).  -v prints both answers of every request.
// Starts containers (brig's runs): hold the docker lock, as for the e2e test.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'wire-compare', version: '1' },
};
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'wire-compare', version: '1' } };
const RUN = { name: 'run_code', arguments: { language: 'shell', code: 'echo hi', timeout_seconds: 30 } };

// Each session runs in a fresh process of both servers; a step without id is a notification.
const SESSIONS = {
  modern: [
    ['server/discover', { _meta: ENVELOPE }],
    ['tools/list', { _meta: ENVELOPE }],
    ['tools/call', { ...RUN, _meta: { ...ENVELOPE, progressToken: 'p' } }],
    ['tools/call', { name: 'sandbox_status', arguments: {}, _meta: ENVELOPE }],
    ['tools/call', { name: 'nope', arguments: {}, _meta: ENVELOPE }],
    ['tools/call', { name: 'run_code', arguments: { language: 'python' }, _meta: ENVELOPE }],
    ['ping', { _meta: ENVELOPE }],
    ['logging/setLevel', { level: 'debug', _meta: ENVELOPE }],
    ['tools/list', undefined],
    ['tools/list', { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }],
    ['initialize', INIT],
  ],
  opening: [
    ['tools/list', { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }],
    ['server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } }],
    ['initialize', INIT],
  ],
  legacy: [
    ['initialize', INIT],
    ['notifications/initialized', undefined, 'notification'],
    ['tools/list', {}],
    ['tools/call', { ...RUN, _meta: { progressToken: 'p' } }],
    ['ping', undefined],
    ['server/discover', { _meta: ENVELOPE }],
  ],
};

// Known, intended differences: session.step.path -> why.
const EXPECTED = {
  'modern.1.result.capabilities.tools.listChanged': 'value only: brig\'s tools never change (false)',
  'legacy.0.result.capabilities.tools.listChanged': 'value only: brig\'s tools never change (false)',
  '*serverInfo.title': 'brig names itself with a title too',
  '*.result.structuredContent': 'the tool\'s own result object (the e2e tests check it against its outputSchema)',
  'modern.1.result.tools.*.inputSchema.$schema': 'brig names the 2020-12 dialect of its schemas',
  'modern.1.result.tools.*.outputSchema.$schema': 'brig names the 2020-12 dialect of its schemas',
  'modern.9.error': 'the SDK (2.4.0) serves a pinned process a request naming 2099-01-01; the revision says -32022, as brig answers',
  'modern.9.result': 'the SDK (2.4.0) serves a pinned process a request naming 2099-01-01; the revision says -32022, as brig answers',
  'modern.8.error.data': 'brig says which _meta key is missing',
  'opening.1.error.data': 'same shape; brig names the key at fault',
  'modern.2.progress': 'brig sends 3 progress steps (queued, started, finished), the reference handler none',
  'legacy.3.progress': 'brig sends 3 progress steps (queued, started, finished), the reference handler none',
};

const here = fileURLToPath(import.meta.url);

// ---- the reference server (run as a child of this script) --------------------------------
async function reference() {
  const { McpServer, fromJsonSchema } = await import('@modelcontextprotocol/server');
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  const tools = JSON.parse(process.env.BRIG_TOOLS);
  serveStdio(() => {
    const s = new McpServer(
      { name: 'brig', version: '0' },
      { capabilities: { tools: { listChanged: true } }, instructions: 'reference', cacheHints: {
        'tools/list': { ttlMs: 300000, cacheScope: 'private' },
        'server/discover': { ttlMs: 300000, cacheScope: 'private' } } },
    );
    for (const t of tools) {
      s.registerTool(t.name, {
        title: t.title,
        description: t.description,
        inputSchema: fromJsonSchema(t.inputSchema),
        outputSchema: fromJsonSchema(t.outputSchema),
        annotations: t.annotations,
      }, async () => ({ content: [{ type: 'text', text: 'x' }], structuredContent: t.sample, isError: false }));
    }
    return s;
  });
}

// ---- recording ---------------------------------------------------------------------------
function start(cmd, args, env) {
  const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = '';
  const msgs = [];
  let wake = null;
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      msgs.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
    wake?.();
  });
  return {
    child,
    // the response to id, and the progress notifications before it
    async exchange(id, method, params, kind) {
      const msg = { jsonrpc: '2.0', ...(kind !== 'notification' && { id }), method, ...(params && { params }) };
      child.stdin.write(JSON.stringify(msg) + '\n');
      if (kind === 'notification') return { skip: true };
      const progress = [];
      for (const end = Date.now() + 60000; Date.now() < end;) {
        const m = msgs.shift();
        if (!m) {
          await new Promise((r) => { wake = r; setTimeout(r, 200); });
          continue;
        }
        if (m.method === 'notifications/progress') progress.push(m);
        else if (m.id === id) return { response: m, progress: progress.length };
      }
      return { response: { timeout: true }, progress: progress.length };
    },
  };
}

async function record(server, steps) {
  const out = [];
  for (let i = 0; i < steps.length; i++) out.push(await server.exchange(i + 1, ...steps[i]));
  server.child.stdin.end();
  await new Promise((r) => server.child.once('exit', r));
  return out;
}

// The shape of a value: types and keys, constants kept.
const CONSTANT = new Set(['resultType', 'cacheScope', 'supportedVersions', 'code', 'protocolVersion', 'isError', 'jsonrpc', 'type']);
function shape(v, key) {
  if (Array.isArray(v)) return key === 'supportedVersions' ? v : v.map((x) => shape(x));
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape(v[k], k)]));
  if (CONSTANT.has(key)) return v;
  return typeof v;
}

function diff(a, b, path, out) {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) diff(a[k], b[k], `${path}.${Array.isArray(a) ? '*' : k}`, out);
    return;
  }
  out.push({ path, brig: a, reference: b });
}

// A key "*SUFFIX" matches any path that ends in SUFFIX or has it as a prefix of a deeper one.
function expected(path) {
  for (const [k, why] of Object.entries(EXPECTED)) {
    const hit = k.startsWith('*')
      ? path.endsWith(k.slice(1)) || path.includes(`${k.slice(1)}.`)
      : path === k || path.startsWith(`${k}.`);
    if (hit) return why;
  }
  return null;
}

async function main() {
  const verbose = process.argv.includes('-v');
  // brig's tools (the reference offers the same), and a structured result for the samples
  const probe = start(process.env.BRIG, ['mcp', '--quiet']);
  const [, list] = await record(probe, [['initialize', INIT], ['tools/list', {}]]);
  const tools = list.response.result.tools;
  const sampleRun = { language: 'shell', image: 'x', backend: 'x', runtime: 'x', exit_code: 0, verdict: 'success', stdout: '', stderr: '', timed_out: false, output_truncated: false, oom_killed: false, duration_ms: 1, error: null, notice: null, container: 'x', code_sha256: '0'.repeat(64), pooled: false };
  tools[0].sample = sampleRun;
  tools[1].sample = { backends: [], selected: null, selection_error: null, images: [], limits: {}, load: { running: 0, queued: 0 } };

  let unexpected = 0;
  for (const [name, steps] of Object.entries(SESSIONS)) {
    const brig = await record(start(process.env.BRIG, ['mcp', '--quiet']), steps);
    const ref = await record(start(process.execPath, [here, '--reference'], { BRIG_TOOLS: JSON.stringify(tools) }), steps);
    steps.forEach(([method], i) => {
      if (brig[i].skip) return;
      const found = [];
      diff(shape(brig[i].response), shape(ref[i].response), `${name}.${i}`, found);
      if (brig[i].progress !== ref[i].progress)
        found.push({ path: `${name}.${i}.progress`, brig: brig[i].progress, reference: ref[i].progress });
      const line = `${name}.${i} ${method}`;
      if (verbose) console.log(`# ${line}\n#   brig      ${JSON.stringify(brig[i].response).slice(0, 400)}\n#   reference ${JSON.stringify(ref[i].response).slice(0, 400)}`);
      if (!found.length) console.log(`same shape   ${line}`);
      for (const d of found) {
        const why = expected(d.path);
        if (!why) unexpected++;
        console.log(`${why ? 'expected   ' : 'DIFFERENT  '}  ${d.path}: brig ${JSON.stringify(d.brig)}, reference ${JSON.stringify(d.reference)}${why ? ` (${why})` : ''}`);
      }
    });
  }
  console.log(unexpected ? `# ${unexpected} unexpected difference(s)` : '# no unexpected difference');
  process.exit(unexpected ? 1 : 0);
}

if (process.argv.includes('--reference')) await reference();
else await main();
