// modern.mjs: the TypeScript SDK v2 client (@modelcontextprotocol/client)
// against the gateway over Streamable HTTP. argv[2] selects its
// versionNegotiation mode: "pin" (default: { pin: '2026-07-28' }, no
// fallback), "auto" (server/discover probe, fallback to initialize) or
// "legacy" (the v2 default: plain initialize). In the 2026-07-28 era the
// gateway asks for sampling, elicitation and roots with input_required
// results, which the client fulfils through the same handlers and retries.
// Env: TSCLIENT_MODULES, GATEWAY_URL, GATEWAY_TOKEN. Prints a JSON report.
import { config, importPeer, packageVersion, Report, describe, tracingFetch } from './peer.mjs';
import { handlers, run } from './scenario.mjs';

const { Client, StreamableHTTPClientTransport } = await importPeer('@modelcontextprotocol/client');

const MODERN = '2026-07-28';
const mode = process.argv[2] ?? 'pin';
const negotiation = { pin: { mode: { pin: MODERN } }, auto: { mode: 'auto' }, legacy: { mode: 'legacy' } }[mode];
if (!negotiation) throw new Error(`unknown mode ${mode}`);

const { url, token, probe } = config();
const report = new Report({ sdk: '@modelcontextprotocol/client', sdkVersion: packageVersion('@modelcontextprotocol/client'), mode });

const client = new Client({ name: `tsclient-modern-${mode}`, version: '1.0.0' }, {
    capabilities: { sampling: {}, elicitation: {}, roots: {} },
    versionNegotiation: negotiation
});
const h = handlers(report, `file:///tsclient-modern-${mode}`);
for (const [method, fn] of Object.entries(h)) client.setRequestHandler(method, fn);

const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: tracingFetch((report.wire = []))
});
try {
    await client.connect(transport);
    report.protocolVersion = client.getNegotiatedProtocolVersion();
    report.era = client.getProtocolEra();
    report.sessionId = transport.sessionId !== undefined;
    report.serverInfo = client.getServerVersion();
    report.serverCapabilities = Object.keys(client.getServerCapabilities() ?? {}).sort();
    report.instructions = client.getInstructions() ?? '';
    await run(report, {
        client,
        modern: report.era === 'modern',
        listTools: async () => (await client.listTools()).tools.map(t => t.name),
        callTool: (params, opts = {}) => client.callTool(params, { ...opts, timeout: 20000 })
    }, probe);
    // End the session explicitly (DELETE), as a well-behaved client does.
    if (transport.sessionId !== undefined) {
        await report.step('terminateSession', () => transport.terminateSession());
    }
} catch (err) {
    report.errors.push(`fatal: ${describe(err)}`);
} finally {
    await client.close().catch(() => {});
}
report.print();
