/**
 * The gateway under load, on loopback only: `autocannon` drives concurrent chat streams (each a new chat: a
 * tool call, then text, read to the end of the stream) and memory searches, while approvals are requested
 * and decided through `POST /v1/approvals/:id` — each decision sent twice at once, so a double submit is
 * tried on every one. Counts 5xx, lost and duplicated executions, p99 and RSS before and after.
 * Shared by the 10 s smoke test (`test/reliability/load-smoke.test.ts`) and `npm run bench -- reliability`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { z } from 'zod';
import { createAgentRuntime, createMemoryStore, createToolCallContext, createToolRegistry, defineTool, PermissionTier, silentLogger } from '../../src/index';
import { createGateway, serveGateway } from '../../src/gateway/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';

export interface LoadResult {
  readonly seconds: number;
  readonly connections: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly status5xx: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly approvalsDecided: number;
  readonly executions: number;
  readonly duplicatedExecutions: number;
  readonly lostExecutions: number;
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
  /** Live heap before and after, each after a full GC; undefined without `--expose-gc`. */
  readonly heapBeforeMb: number | undefined;
  readonly heapAfterMb: number | undefined;
}

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => Math.round(bytes / 1_048_576);

const TOKEN = 'load-test-token-0123456789abcdef';

export async function runLoad(options: { seconds: number; connections: number }): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-load-'));
  const storage = createSqliteStorage({ path: path.join(dir, 'load.db'), logger: silentLogger });
  const executed = new Map<string, number>();
  const tools = createToolRegistry({
    storage,
    approvalKey: new Uint8Array(32).fill(7),
    audit: true,
    tools: [
      defineTool({
        name: 'get_price', toolSet: 'read', description: 'price', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
      }),
      defineTool({
        name: 'pay', toolSet: 'trade', description: 'pay', permissionTier: PermissionTier.ALWAYS_CONFIRM, isFundMoving: true,
        inputSchema: z.object({ ref: z.string(), usd: z.number() }),
        orderFacts: ({ usd }) => ({ notionalUsd: usd, asset: 'USD', side: 'transfer', destination: 'acct' }),
        preview: (i) => ({ preview: true, ...i }),
        execute: ({ ref }) => {
          executed.set(ref, (executed.get(ref) ?? 0) + 1);
          return { paid: ref };
        },
      }),
    ],
  });
  const model = loadModel();
  const memory = createMemoryStore({ storage, scope: { userId: 'default' } });
  for (let i = 0; i < 200; i++) await memory.write({ category: 'fact', content: `note ${i} about bitcoin and ether staking`, source: 'user_stated' } as never);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger, memory });
  const gateway = createGateway({ runtime, storage, tools, memoryFor: () => memory, authToken: TOKEN, logger: silentLogger });
  const served = await serveGateway({ gateway, port: 0, host: '127.0.0.1' });

  gc?.();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let stop = false;
  let decided = 0;
  const requested: string[] = [];
  // Approvals: request one, then send the same decision twice at once (one wins, one gets 409).
  const approvals = (async () => {
    let n = 0;
    while (!stop) {
      const ref = `r${n++}`;
      const ctx = createToolCallContext({ sessionId: `pay-${ref}`, source: 'user', userId: 'default' });
      const outcome = await tools.dispatchDetailed('pay', { ref, usd: 5, confirm: true }, { context: ctx, toolCallId: `c-${ref}` });
      const id = outcome.approval?.id;
      if (!id) continue;
      requested.push(ref);
      const send = () => fetch(`${served.url}/v1/approvals/${id}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"approved":true}' });
      const [a, b] = await Promise.all([send(), send()]);
      await Promise.all([a.text(), b.text()]);
      if (a.status === 200 || b.status === 200) decided++;
    }
  })();

  let chat = 0;
  const result = await autocannon({
    url: served.url,
    connections: options.connections,
    duration: options.seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [
      {
        method: 'POST',
        path: '/v1/chat',
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ id: `load-${chat++}`, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'price of BTC?' }] }] }) }),
      },
      { method: 'GET', path: '/v1/memory?q=bitcoin%20staking&limit=5' },
    ],
  });
  stop = true;
  await approvals;
  await served.close();
  await new Promise((r) => setTimeout(r, 500));
  gc?.();
  const rssAfter = process.memoryUsage().rss;
  const heapAfter = process.memoryUsage().heapUsed;
  await memory.close();
  await storage.close();

  const counts = [...executed.values()];
  return {
    seconds: options.seconds,
    connections: options.connections,
    requests: result.requests.total,
    non2xx: result.non2xx,
    status5xx: result['5xx'],
    errors: result.errors + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    approvalsDecided: decided,
    executions: counts.reduce((a, b) => a + b, 0),
    duplicatedExecutions: counts.filter((c) => c > 1).length,
    lostExecutions: requested.filter((ref) => !executed.has(ref)).length,
    rssBeforeMb: mb(rssBefore),
    rssAfterMb: mb(rssAfter),
    heapBeforeMb: gc ? mb(heapBefore) : undefined,
    heapAfterMb: gc ? mb(heapAfter) : undefined,
  };
}

/**
 * A model for load: every call streams a tool call (get_price) first, then text once the tool result is in
 * the prompt. Unlike the scripted test double it keeps no record of its calls, so RSS measures the gateway.
 */
function loadModel(): LanguageModelV4 {
  let ids = 0;
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  return {
    specificationVersion: 'v4',
    provider: 'load',
    modelId: 'load-model',
    supportedUrls: {},
    async doGenerate() {
      throw new Error('load model: streaming only');
    },
    async doStream(options) {
      const last = options.prompt[options.prompt.length - 1];
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (last?.role === 'tool') {
        parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'BTC is 97,000 USD.' }, { type: 'text-end', id: 't' });
        parts.push({ type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage });
      } else {
        parts.push({ type: 'tool-call', toolCallId: `lc_${++ids}`, toolName: 'get_price', input: '{"symbol":"BTC"}' });
        parts.push({ type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage });
      }
      return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
    },
  };
}
