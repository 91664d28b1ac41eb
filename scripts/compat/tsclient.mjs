// tsclient.mjs SDK_DIR TIMEOUT_MS SPEC_JSON -- connect to one stdio MCP
// server with the official TypeScript SDK's client, as most desktop clients
// do, list what it declares and print one JSON line:
//
//   {"connected":true,"tools":12,"resources":0,"prompts":null,...,"error":""}
//
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk (scripts/peers-install.sh
// puts it in .cache/peers/tsclient). SPEC_JSON is {"command","args","env","cwd"};
// the server gets the SDK's default environment plus env, as with any host.
// "connected" means initialize and tools/list both succeeded. A failing
// resources/list or prompts/list is recorded (-1) but, as in the SDK's
// clients, does not count as a failed connection. Exits 0 whatever happened.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, timeoutArg, specArg] = process.argv.slice(2);
if (!sdkDir || !timeoutArg || !specArg) {
  console.error('usage: tsclient.mjs SDK_DIR TIMEOUT_MS SPEC_JSON');
  process.exit(2);
}
const spec = JSON.parse(specArg);
const esm = join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const { Client } = await import(pathToFileURL(join(esm, 'client/index.js')).href);
const { StdioClientTransport, getDefaultEnvironment } = await import(
  pathToFileURL(join(esm, 'client/stdio.js')).href
);

const out = {
  connected: false,
  tools: null,
  resources: null,
  prompts: null,
  server: '',
  strayLines: 0,
  error: '',
  stderr: '',
};
let stderr = '';
let done = false;
function finish(code) {
  if (done) return;
  done = true;
  out.stderr = stderr.slice(-600);
  process.stdout.write(JSON.stringify(out) + '\n');
  // Do not wait for a server that ignores its closed stdin.
  setTimeout(() => process.exit(code), 50);
}
const timer = setTimeout(() => {
  out.error = out.error || `timed out after ${timeoutArg} ms`;
  out.connected = false;
  finish(0);
}, Number(timeoutArg));

// Every page of a list method.
async function listAll(method, key) {
  let n = 0;
  let cursor;
  do {
    const r = await client[method](cursor ? { cursor } : undefined);
    n += r[key].length;
    cursor = r.nextCursor;
  } while (cursor);
  return n;
}

const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args || [],
  env: { ...getDefaultEnvironment(), ...(spec.env || {}) },
  cwd: spec.cwd,
  stderr: 'pipe',
});
transport.stderr?.on('data', (b) => {
  stderr = (stderr + b.toString()).slice(-4096);
});
const client = new Client({ name: 'switchboard-compat', version: '0.0.0' }, { capabilities: {} });
// The SDK reports a stdout line that is not JSON-RPC here and reads on.
client.onerror = () => {
  out.strayLines++;
};

try {
  await client.connect(transport);
  const info = client.getServerVersion();
  out.server = info ? `${info.name} ${info.version}` : '';
  const caps = client.getServerCapabilities() || {};
  out.tools = caps.tools ? await listAll('listTools', 'tools') : 0;
  out.connected = true;
  if (caps.resources) {
    out.resources = await listAll('listResources', 'resources').catch(() => -1);
  }
  if (caps.prompts) {
    out.prompts = await listAll('listPrompts', 'prompts').catch(() => -1);
  }
} catch (e) {
  out.error = String(e && e.message ? e.message : e).slice(0, 300);
}
clearTimeout(timer);
await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
finish(0);
