// legacy.mjs: the TypeScript SDK v1 client (@modelcontextprotocol/sdk)
// against the gateway over Streamable HTTP, in the 2025 era (initialize and
// a session; server-to-client requests for sampling, elicitation, roots).
// Env: TSCLIENT_MODULES, GATEWAY_URL, GATEWAY_TOKEN. Prints a JSON report.
import { config, importPeer, packageVersion, Report, describe, tracingFetch } from './peer.mjs';
import { handlers, run } from './scenario.mjs';

const { Client } = await importPeer('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = await importPeer('@modelcontextprotocol/sdk/client/streamableHttp.js');
const types = await importPeer('@modelcontextprotocol/sdk/types.js');

const { url, token, probe } = config();
const report = new Report({ sdk: '@modelcontextprotocol/sdk', sdkVersion: packageVersion('@modelcontextprotocol/sdk') });

const client = new Client({ name: 'tsclient-legacy', version: '1.0.0' }, {
    capabilities: { sampling: {}, elicitation: {}, roots: {} }
});
const h = handlers(report, 'file:///tsclient-legacy');
client.setRequestHandler(types.ElicitRequestSchema, h['elicitation/create']);
client.setRequestHandler(types.CreateMessageRequestSchema, h['sampling/createMessage']);
client.setRequestHandler(types.ListRootsRequestSchema, h['roots/list']);

const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: tracingFetch((report.wire = []))
});
try {
    await client.connect(transport);
    report.protocolVersion = transport.protocolVersion;
    report.sessionId = transport.sessionId !== undefined;
    report.serverInfo = client.getServerVersion();
    report.serverCapabilities = Object.keys(client.getServerCapabilities() ?? {}).sort();
    report.instructions = client.getInstructions() ?? '';
    await run(report, {
        client,
        modern: false,
        listTools: async () => {
            const names = [];
            let cursor;
            let pages = 0;
            do {
                const page = await client.listTools(cursor ? { cursor } : {});
                names.push(...page.tools.map(t => t.name));
                cursor = page.nextCursor;
                pages++;
            } while (cursor && pages < 100);
            report.toolPages = pages;
            return names;
        },
        callTool: (params, opts = {}) => client.callTool(params, undefined, { ...opts, timeout: 20000 })
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
