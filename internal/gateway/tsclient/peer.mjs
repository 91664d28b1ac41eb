// Shared helpers of the TypeScript SDK client scripts: importing the pinned
// npm packages from the peers directory (scripts/peers-install.sh installs
// them into $SWITCHBOARD_PEERS/tsclient, outside this source tree, so bare
// specifiers cannot resolve), a run report printed as one JSON line, and
// small test utilities.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.TSCLIENT_MODULES;
if (!modules) {
    throw new Error('TSCLIENT_MODULES must name the node_modules directory of the pinned TypeScript SDK clients');
}

// importPeer imports spec ("pkg" or "pkg/subpath", scoped names included)
// from $TSCLIENT_MODULES through the package's "exports" map, the way Node
// resolves a bare ESM specifier.
export async function importPeer(spec) {
    const parts = spec.split('/');
    const nameLen = spec.startsWith('@') ? 2 : 1;
    const name = parts.slice(0, nameLen).join('/');
    const sub = parts.length > nameLen ? './' + parts.slice(nameLen).join('/') : '.';
    const dir = join(modules, name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    let target;
    if (pkg.exports) {
        const exp = typeof pkg.exports === 'string' ? { '.': pkg.exports } : pkg.exports;
        if (exp[sub] !== undefined) {
            target = esmTarget(exp[sub]);
        } else {
            for (const [key, value] of Object.entries(exp)) {
                const star = key.indexOf('*');
                if (star < 0) continue;
                const pre = key.slice(0, star), post = key.slice(star + 1);
                if (sub.startsWith(pre) && sub.endsWith(post) && sub.length >= pre.length + post.length) {
                    const match = sub.slice(pre.length, sub.length - post.length);
                    target = esmTarget(value)?.replaceAll('*', match);
                    break;
                }
            }
        }
    } else if (sub === '.') {
        target = pkg.module ?? pkg.main ?? 'index.js';
    }
    if (!target) throw new Error(`cannot resolve ${spec} (ESM) in ${dir}`);
    return import(pathToFileURL(join(dir, target)).href);
}

function esmTarget(entry) {
    if (typeof entry === 'string') return entry;
    if (entry === null || typeof entry !== 'object') return undefined;
    for (const cond of ['node', 'import', 'default']) {
        if (entry[cond] !== undefined) {
            const t = esmTarget(entry[cond]);
            if (t) return t;
        }
    }
    return undefined;
}

export function packageVersion(name) {
    return JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version;
}

// config reads what the Go test passes: the gateway's URL and token, and
// the URL of a probe that answers how many slow calls the in-process
// upstream saw cancelled (testkit.SlowCancelled).
export function config() {
    const url = process.env.GATEWAY_URL;
    const token = process.env.GATEWAY_TOKEN;
    const probe = process.env.CANCEL_PROBE_URL;
    if (!url || !token || !probe) throw new Error('GATEWAY_URL, GATEWAY_TOKEN and CANCEL_PROBE_URL must be set');
    return { url, token, probe };
}

// upstreamCancelled reads the probe.
export async function upstreamCancelled(probe) {
    const res = await fetch(probe);
    return Number(await res.text());
}

// tracingFetch wraps fetch and records every exchange with the gateway in
// trace: the HTTP method, the JSON-RPC methods of a POST body, the
// Mcp-Protocol-Version header, whether a session id was sent, and the
// response status. For a tools/call it also records whether the request
// carried inputResponses and the requestState's first characters (so
// multi-round-trip retries can be seen).
export function tracingFetch(trace) {
    return async (input, init = {}) => {
        const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
        const entry = {
            http: init.method ?? 'GET',
            protocol: headers.get('mcp-protocol-version') ?? '',
            session: headers.has('mcp-session-id')
        };
        if (typeof init.body === 'string') {
            try {
                const body = JSON.parse(init.body);
                const msgs = Array.isArray(body) ? body : [body];
                entry.rpc = msgs.map(m => m.method ?? (m.error ? 'error-response' : 'response'));
                const call = msgs.find(m => m.method === 'tools/call');
                if (call) {
                    entry.tool = call.params?.name;
                    if (call.params?.inputResponses) entry.inputResponses = Object.keys(call.params.inputResponses);
                    if (typeof call.params?.requestState === 'string') entry.requestState = call.params.requestState.slice(0, 4);
                }
            } catch {
                entry.rpc = ['unparsable'];
            }
        }
        trace.push(entry);
        const res = await fetch(input, init);
        entry.status = res.status;
        return res;
    };
}

// Report collects results; steps that throw are recorded, not fatal, so
// the Go test sees everything that went wrong in one run.
export class Report {
    constructor(fields) {
        Object.assign(this, fields);
        this.errors = [];
    }
    async step(name, fn) {
        try {
            return await fn();
        } catch (err) {
            this.errors.push(`${name}: ${describe(err)}`);
            return undefined;
        }
    }
    print() {
        process.stdout.write(JSON.stringify(this) + '\n');
    }
}

export function describe(err) {
    if (err === null || typeof err !== 'object') return String(err);
    const parts = [`${err.name ?? 'Error'}: ${err.message}`];
    if (err.code !== undefined) parts.push(`code=${JSON.stringify(err.code)}`);
    if (err.data !== undefined) parts.push(`data=${JSON.stringify(err.data)}`);
    if (err.cause) parts.push(`cause=${describe(err.cause)}`);
    return parts.join(' ');
}

export function text(result) {
    return (result?.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n');
}

export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
