// tsinterop.mjs: a TypeScript SDK client from npm against a server built
// with package server (the test server of server/main_test.go), run by
// TestTSInterop. Arguments: <sdk> <transport> <negotiation>
//
//   sdk          v1: @modelcontextprotocol/sdk (the 2025 era: initialize
//                and a session); v2: @modelcontextprotocol/client
//   transport    http: Streamable HTTP at $SERVER_URL;
//                stdio: $SERVER_COMMAND run with $SERVER_CHILD_ENV=1
//   negotiation  v2 only: "pin" (2026-07-28, no fallback) or "legacy"
//                (plain initialize); v1 always initializes
//
// Env: TSCLIENT_MODULES, the node_modules directory of the pinned clients
// (scripts/peers-install.sh). Prints one JSON report on stdout; the Go test
// checks it. Failures are recorded in the report, never thrown.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdk, transportKind, negotiation = 'legacy'] = process.argv.slice(2);
const modules = process.env.TSCLIENT_MODULES;
if (!modules) throw new Error('TSCLIENT_MODULES must be set');

// importPeer imports "pkg" or "pkg/subpath" from $TSCLIENT_MODULES through
// the package's "exports" map (ESM conditions), as Node resolves a bare
// specifier: the packages live outside this source tree.
async function importPeer(spec) {
    const parts = spec.split('/');
    const nameLen = spec.startsWith('@') ? 2 : 1;
    const dir = join(modules, parts.slice(0, nameLen).join('/'));
    const sub = parts.length > nameLen ? './' + parts.slice(nameLen).join('/') : '.';
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const esm = (e) => {
        if (typeof e === 'string') return e;
        if (e === null || typeof e !== 'object') return undefined;
        for (const c of ['node', 'import', 'default']) {
            const t = e[c] !== undefined ? esm(e[c]) : undefined;
            if (t) return t;
        }
        return undefined;
    };
    let target;
    const exp = pkg.exports && (typeof pkg.exports === 'string' ? { '.': pkg.exports } : pkg.exports);
    if (exp) {
        target = esm(exp[sub]) ?? esm(exp[sub + '.js']);
        if (!target) {
            for (const [key, value] of Object.entries(exp)) {
                const star = key.indexOf('*');
                if (star < 0) continue;
                const pre = key.slice(0, star), post = key.slice(star + 1);
                if (sub.startsWith(pre) && sub.endsWith(post)) {
                    target = esm(value)?.replaceAll('*', sub.slice(pre.length, sub.length - post.length));
                    break;
                }
            }
        }
    } else if (sub === '.') {
        target = pkg.module ?? pkg.main ?? 'index.js';
    }
    if (!target) throw new Error(`cannot resolve ${spec} in ${dir}`);
    return import(pathToFileURL(join(dir, target)).href);
}

const report = { sdk, transport: transportKind, negotiation, calls: {}, reads: {}, errors: [] };

let Client, HTTPTransport, StdioTransport, pkgName;
if (sdk === 'v1') {
    pkgName = '@modelcontextprotocol/sdk';
    ({ Client } = await importPeer('@modelcontextprotocol/sdk/client/index.js'));
    ({ StreamableHTTPClientTransport: HTTPTransport } = await importPeer('@modelcontextprotocol/sdk/client/streamableHttp.js'));
    ({ StdioClientTransport: StdioTransport } = await importPeer('@modelcontextprotocol/sdk/client/stdio.js'));
} else if (sdk === 'v2') {
    pkgName = '@modelcontextprotocol/client';
    ({ Client, StreamableHTTPClientTransport: HTTPTransport } = await importPeer('@modelcontextprotocol/client'));
    ({ StdioClientTransport: StdioTransport } = await importPeer('@modelcontextprotocol/client/stdio'));
} else {
    throw new Error(`unknown sdk ${sdk}`);
}
report.sdkVersion = JSON.parse(readFileSync(join(modules, pkgName, 'package.json'), 'utf8')).version;

const options = { capabilities: {} };
if (sdk === 'v2') {
    options.versionNegotiation = negotiation === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' };
}
const client = new Client({ name: `tsinterop-${sdk}-${negotiation}`, version: '1.0.0' }, options);

let transport;
if (transportKind === 'http') {
    transport = new HTTPTransport(new URL(process.env.SERVER_URL));
} else {
    transport = new StdioTransport({
        command: process.env.SERVER_COMMAND,
        args: ['-test.run=^$'],
        env: { ...process.env, [process.env.SERVER_CHILD_ENV]: '1' },
        stderr: 'pipe'
    });
}

if (sdk === 'v1') {
    // The v1 client tells the transport the negotiated version, if the
    // transport listens (stdio does not).
    const set = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (v) => {
        report.protocolVersion = v;
        set?.(v);
    };
}

const describe = (err) => `${err?.name ?? 'Error'}: ${err?.message ?? err}`;
const textOf = (content) => (content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');
const callTool = (params) => sdk === 'v1' ? client.callTool(params, undefined, { timeout: 20000 }) : client.callTool(params, { timeout: 20000 });

async function step(name, fn) {
    try {
        await fn();
    } catch (err) {
        report.errors.push(`${name}: ${describe(err)}`);
    }
}

try {
    await client.connect(transport);
    if (sdk === 'v2') report.protocolVersion = client.getNegotiatedProtocolVersion();
    report.serverName = client.getServerVersion()?.name;
    await step('tools/list', async () => {
        const { tools } = await client.listTools();
        report.tools = tools.map(t => t.name).sort();
        const add = tools.find(t => t.name === 'add_numbers');
        report.addNumbersOutput = Object.keys(add?.outputSchema?.properties ?? {}).sort();
        report.addNumbersInputDescription = add?.inputSchema?.properties?.a?.description;
    });
    const calls = {
        add_numbers: { a: 2, b: 3 },
        count: { text: 'four' },
        words: { text: 'a b c' },
        doc: { text: 'x<y' },
        echo: { text: 'hi' },
        fail: { kind: '' },
        add_numbers_bad: null
    };
    if (transportKind === 'stdio') calls.stray = { text: 'from ts' };
    for (const [name, args] of Object.entries(calls)) {
        await step(`tools/call ${name}`, async () => {
            const params = name === 'add_numbers_bad'
                ? { name: 'add_numbers', arguments: { a: 'x' } }
                : { name, arguments: args };
            const res = await callTool(params);
            report.calls[name] = { text: textOf(res.content), structured: res.structuredContent ?? null, isError: res.isError === true };
        });
    }
    await step('tools/call unknown', async () => {
        try {
            await callTool({ name: 'no_such_tool', arguments: {} });
            report.calls.no_such_tool = { thrown: false };
        } catch (err) {
            report.calls.no_such_tool = { thrown: true, code: err.code ?? null };
        }
    });
    await step('resources/templates/list', async () => {
        const { resourceTemplates } = await client.listResourceTemplates();
        report.templates = resourceTemplates.map(t => t.uriTemplate).sort();
    });
    for (const uri of ['test://readme', 'test://users/me', 'test://users/42', 'test://files/a/b.txt', 'test://logo']) {
        await step(`resources/read ${uri}`, async () => {
            const { contents } = await client.readResource({ uri });
            const c = contents[0];
            report.reads[uri] = { uri: c.uri, mimeType: c.mimeType, text: c.text ?? null, blob: c.blob ?? null };
        });
    }
    await step('prompts/get', async () => {
        const res = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada', times: '2' } });
        report.prompt = res.messages.map(m => `${m.role}: ${m.content.type === 'text' ? m.content.text : m.content.type}`);
    });
} catch (err) {
    report.errors.push(`fatal: ${describe(err)}`);
} finally {
    await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + '\n');
