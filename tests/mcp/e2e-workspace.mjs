// e2e-workspace.mjs - workspaces through `brig mcp`, driven by the official MCP TypeScript SDK
// v2 client (@modelcontextprotocol/client, 2026-07-28) against a real dockerd, as an agent uses
// them: create a workspace, write a CSV, run pandas + matplotlib on it in the data image
// (brig/python-data), read the chart back as image content, list, delete.  The backend is
// auto (gVisor on a set-up host).
//
//   BRIG=/path/to/brig BRIG_BACKEND_DIR=/path/to/backends/.libs node e2e-workspace.mjs
//
// Prints TAP ("ok N - name" / "not ok N - name") and exits 1 if any check failed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import Ajv2020 from 'ajv/dist/2020.js';

import { BRIG, bound, containersOf, exited, failures, finish, serverEnv, test, waitFor } from './lib.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'brig-mcp-e2e-ws-'));
chmodSync(tmp, 0o700);
const auditLog = join(tmp, 'audit.jsonl');
const policyFile = join(tmp, 'policy.json');
const DATA_IMAGE = 'brig/python-data:bookworm';
const CSV = 'month,sales\njan,10\nfeb,40\nmar,25\napr,55\n';
const CHART = `
import pandas as pd, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
df = pd.read_csv("sales.csv")
df.plot(x="month", y="sales", kind="bar", legend=False)
plt.savefig("chart.png")
print("total", df["sales"].sum())
`;
const WS_TOOLS = ['create_workspace', 'write_file', 'read_file', 'list_files', 'delete_workspace'];
const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const docker = (...args) => {
  try {
    execFileSync('docker', args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const gone = (id) =>
  !docker('inspect', '--type', 'container', `brig-wsh-${id}`) &&
  !docker('volume', 'inspect', `brig-ws-${id}`);

writeFileSync(
  policyFile,
  JSON.stringify({
    workspaces: { enabled: true, size_mb: 16, max_files: 100, max_count: 2 },
    images: { python: DATA_IMAGE },
    max_timeout_seconds: 60,
  }),
);
// its own state directory (the workspaces' state files): nothing shared with other suites
const env = { ...serverEnv, BRIG_CACHE_DIR: join(tmp, 'cache') };
mkdirSync(env.BRIG_CACHE_DIR, { mode: 0o700 });

let stderrText = '';
const transport = new StdioClientTransport({
  command: BRIG,
  args: ['mcp', '--policy', policyFile, '--audit-log', auditLog],
  env,
  stderr: 'pipe',
});
transport.stderr?.on('data', (d) => (stderrText += d.toString()));
const client = new Client(
  { name: 'brig-e2e-workspace', version: '2.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validators = {};
let wsId = null;
const made = [];

async function call(name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  if (r.structuredContent && validators[name] && !r.isError) {
    assert.ok(validators[name](r.structuredContent), ajv.errorsText(validators[name].errors));
  }
  return r;
}
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

await test('connect: 2026-07-28; the workspace tools are listed and their schemas compile (2020-12, strict)', async () => {
  await client.connect(transport);
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['run_code', 'sandbox_status', ...WS_TOOLS]) assert.ok(names.includes(n), n);
  for (const t of tools) {
    const input = ajv.compile(t.inputSchema);
    if (t.outputSchema) validators[t.name] = ajv.compile(t.outputSchema);
    if (t.name === 'write_file') {
      assert.ok(input({ workspace_id: 'a'.repeat(32), path: 'x.csv', content: 'x' }));
      assert.ok(!input({ workspace_id: 'not-an-id', path: 'x.csv', content: 'x' }));
    }
  }
  const rc = tools.find((t) => t.name === 'run_code');
  assert.ok(rc.inputSchema.properties.workspace_id, 'run_code takes a workspace_id');
});

await test('create_workspace: an unguessable id and its limits', async () => {
  const r = await call('create_workspace');
  assert.equal(r.isError, false, text(r));
  wsId = r.structuredContent.id;
  made.push(wsId);
  assert.match(wsId, /^[0-9a-f]{32}$/);
  assert.equal(r.structuredContent.size_mb, 16); // the policy's
  assert.equal(r.structuredContent.max_files, 100);
  const second = await call('create_workspace');
  assert.equal(second.isError, false, text(second));
  made.push(second.structuredContent.id);
  assert.notEqual(second.structuredContent.id, wsId);
  const third = await call('create_workspace'); // max_count 2
  assert.equal(third.isError, true);
  assert.match(text(third), /too many workspaces/);
  assert.equal((await call('delete_workspace', { workspace_id: second.structuredContent.id })).isError, false);
  assert.ok(gone(second.structuredContent.id));
});

await test('write a CSV, run pandas + matplotlib on it, read the chart back as image content', async () => {
  let r = await call('write_file', { workspace_id: wsId, path: 'sales.csv', content: CSV });
  assert.equal(r.isError, false, text(r));
  r = await call('run_code', { language: 'python', code: CHART, workspace_id: wsId, timeout_seconds: 60 });
  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.stdout, 'total 130\n');
  assert.equal(r.structuredContent.image, DATA_IMAGE);
  // the chart, and matplotlib's font cache on a first run (the data image keeps its caches
  // in the workspace when there is one: the next run there starts faster)
  const changed = r.structuredContent.workspace_changes.files.map((f) => f.path);
  assert.ok(changed.includes('chart.png'), changed);
  assert.deepEqual(changed.filter((p) => p !== 'chart.png' && !p.startsWith('.cache/')), []);
  assert.match(text(r), /chart\.png/); // the model is told which file to read
  r = await call('read_file', { workspace_id: wsId, path: 'chart.png' });
  assert.equal(r.isError, false, text(r));
  const img = r.content.find((c) => c.type === 'image');
  assert.equal(img?.mimeType, 'image/png');
  const png = Buffer.from(img.data, 'base64');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.length > 1000, `${png.length} bytes`);
  r = await call('read_file', { workspace_id: wsId, path: 'sales.csv' });
  assert.deepEqual(r.content[0], { type: 'text', text: CSV });
});

await test('list_files, and paths outside the workspace are refused', async () => {
  let r = await call('list_files', { workspace_id: wsId });
  assert.equal(r.isError, false, text(r));
  const paths = r.structuredContent.files.map((f) => f.path).filter((p) => !p.startsWith('.cache'));
  assert.deepEqual(paths.sort(), ['chart.png', 'sales.csv']);
  for (const path of ['../etc/passwd', '/etc/passwd']) {
    r = await call('read_file', { workspace_id: wsId, path });
    assert.equal(r.isError, true, path);
    assert.match(text(r), /path/);
  }
  r = await call('read_file', { workspace_id: 'f'.repeat(32), path: 'sales.csv' });
  assert.equal(r.isError, true);
});

await test('delete_workspace: gone, its volume and holder too; a later call says so', async () => {
  let r = await call('delete_workspace', { workspace_id: wsId });
  assert.equal(r.isError, false, text(r));
  assert.ok(gone(wsId));
  r = await call('read_file', { workspace_id: wsId, path: 'sales.csv' });
  assert.equal(r.isError, true);
  assert.match(text(r), /has ended|create_workspace/);
});

await test('audit log: the workspace on the run line, the transfers with their SHA-256', async () => {
  const lines = readFileSync(auditLog, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const run = lines.find((l) => l.workspace === wsId && l.image === DATA_IMAGE);
  assert.ok(run, 'a run line with the workspace');
  assert.equal(run.front_door, 'mcp');
  const put = lines.find((l) => l.workspace === wsId && l.transfer?.path === 'sales.csv');
  assert.ok(put, JSON.stringify(lines.filter((l) => l.transfer)));
  assert.equal(put.transfer.sha256, sha256(Buffer.from(CSV)));
  assert.equal(put.transfer.bytes, Buffer.byteLength(CSV));
});

await test('close: the server exits and leaves no container', async () => {
  const pid = transport.pid;
  const t0 = Date.now();
  await client.close();
  await waitFor(
    () => exited(pid),
    bound(10000),
    'the server to exit',
  );
  assert.ok(Date.now() - t0 < bound(10000));
  // the SDK SIGKILLs a server still busy 4 s after the close; its reaper removes the rest
  await waitFor(() => containersOf(pid).length === 0, bound(10000), 'its containers to go');
  for (const id of made) assert.ok(gone(id), id);
});

if (failures()) console.log(`# server stderr:\n${stderrText.replace(/^/gm, '# ')}`);
for (const id of made) {
  if (!gone(id)) {
    docker('rm', '-f', `brig-wsh-${id}`);
    docker('volume', 'rm', `brig-ws-${id}`);
  }
}
rmSync(tmp, { recursive: true, force: true });
finish();
