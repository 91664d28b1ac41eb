// The scenario both TypeScript SDK clients run against the gateway. The
// client is connected by the caller; `api` adapts the SDK generation's
// call signature. Everything observed goes into the report.
import { describe, sleep, text, upstreamCancelled } from './peer.mjs';

// Fixed answers of the client's handlers, which the Go test checks came
// back through the gateway and the upstream.
export const SAMPLING_ANSWER = 'Paris';
export const ELICITED_NAME = 'Ada';

// handlers returns the client's request handlers (by method) and records
// what they were asked in report.
export function handlers(report, root) {
    report.elicitations = [];
    report.sampling = [];
    report.rootsAsked = 0;
    return {
        'elicitation/create': async req => {
            report.elicitations.push(req.params.message);
            return { action: 'accept', content: { name: ELICITED_NAME } };
        },
        'sampling/createMessage': async req => {
            const last = req.params.messages.at(-1)?.content;
            const blocks = Array.isArray(last) ? last : [last];
            report.sampling.push(blocks.filter(b => b?.type === 'text').map(b => b.text).join('\n'));
            return { role: 'assistant', model: 'tsclient-model', content: { type: 'text', text: SAMPLING_ANSWER } };
        },
        'roots/list': async () => {
            report.rootsAsked++;
            return { roots: [{ uri: root, name: 'tsclient' }] };
        }
    };
}

// api: { client, modern: bool, listTools(): Promise<string[]>,
//        callTool(params, { onprogress, signal }): Promise<result> }
// probe: the URL of the Go test's SlowCancelled counter.
export async function run(report, api, probe) {
    report.tools = (await report.step('tools/list', () => api.listTools())) ?? [];
    report.calls = {};
    report.progress = {};
    report.cancel = {};
    const call = async (name, args, opts) => {
        try {
            const res = await api.callTool({ name, arguments: args }, opts);
            return { text: text(res), isError: res.isError === true };
        } catch (err) {
            return { error: describe(err), code: err?.code };
        }
    };
    for (const server of ['s', 'web']) {
        const tool = t => `${server}__${t}`;
        report.calls[tool('echo')] = await call(tool('echo'), { text: `hi ${tool('echo')}` });
        report.calls[tool('fail')] = await call(tool('fail'), {});
        // Progress: three steps, each reported to the request that asked.
        const seen = [];
        report.calls[tool('slow')] = await call(tool('slow'), { steps: 3, delay_ms: 5 }, {
            onprogress: p => seen.push({ progress: p.progress, total: p.total, message: p.message })
        });
        await sleep(50); // progress is delivered before the result; a margin for stragglers
        report.progress[tool('slow')] = seen;
        // Requests the upstream makes mid-call, answered by this client.
        for (const t of ['ask', 'sample', 'roots']) {
            report.calls[tool(t)] = await call(tool(t), {});
        }
        // Cancellation: abort a call that would take ten minutes, once
        // its first progress shows the upstream is running it (an abort
        // that comes before the request reached the upstream would
        // leave the upstream nothing to cancel).
        const cancelledBefore = await upstreamCancelled(probe);
        const ac = new AbortController();
        const progressBeforeAbort = [];
        let running;
        const firstProgress = new Promise(resolve => { running = resolve; });
        const pending = call(tool('slow'), { steps: 6000, delay_ms: 100 }, {
            signal: ac.signal,
            onprogress: p => { progressBeforeAbort.push(p.progress); running(); }
        });
        let giveUp;
        await Promise.race([firstProgress, new Promise(resolve => { giveUp = setTimeout(resolve, 30000); })]);
        clearTimeout(giveUp); // a pending timer would keep the script alive
        const aborted = Date.now();
        ac.abort(new Error('cancelled by tsclient'));
        const outcome = await pending;
        report.cancel[tool('slow')] = { ...outcome, elapsedMs: Date.now() - aborted, progressBeforeAbort: progressBeforeAbort.length };
        if (server === 'web') {
            // The in-process upstream's handler must see the cancellation
            // while this client is still connected (not merely when it
            // closes its session at the end).
            const deadline = Date.now() + 30000;
            let seen = false;
            while (!seen && Date.now() < deadline) {
                seen = (await upstreamCancelled(probe)) > cancelledBefore;
                if (!seen) await sleep(20);
            }
            report.cancel[tool('slow')].upstreamSawCancel = seen;
            report.cancel[tool('slow')].upstreamCancelMs = Date.now() - aborted;
        }
        // The connection and the upstream still work after the cancel.
        report.calls[`${tool('echo')}#after-cancel`] = await call(tool('echo'), { text: 'still here' });
    }
    report.calls['s__nope'] = await call('s__nope', {});

    // Concurrency: calls in flight together on one connection, each with
    // its own mid-call request or progress, must each get their own.
    const concurrent = {};
    const progress = {};
    await Promise.all(['s', 'web'].flatMap(server => [
        ...['ask', 'sample', 'roots'].map(async t => {
            concurrent[`${server}__${t}`] = await call(`${server}__${t}`, {});
        }),
        (async () => {
            const name = `${server}__slow`;
            progress[name] = [];
            concurrent[name] = await call(name, { steps: 4, delay_ms: 20 }, { onprogress: p => progress[name].push(p.progress) });
        })()
    ]));
    await sleep(50);
    report.concurrent = { calls: concurrent, progress };

    // Beyond tools: resources keep their URIs, prompts get model-facing names.
    report.other = {};
    // ping is gone from 2026-07-28 (the v2 client refuses to send it there).
    if (!api.modern) report.other.ping = await report.step('ping', async () => (await api.client.ping(), true));
    report.other.resource = await report.step('resources/read', async () =>
        (await api.client.readResource({ uri: 'test://static' })).contents.map(c => c.text).join('\n'));
    report.other.template = await report.step('resources/read template', async () =>
        (await api.client.readResource({ uri: 'test://items/7' })).contents.map(c => c.text).join('\n'));
    report.other.prompt = await report.step('prompts/get', async () =>
        (await api.client.getPrompt({ name: 'web__greet', arguments: { name: 'Ada' } })).messages.map(m => m.content.text).join('\n'));
}
