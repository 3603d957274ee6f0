/**
 * The server side of the load run, in its own process so its memory is measured alone (the load generator
 * runs in the parent): the gateway on loopback with a SQLite store, 200 memories, a read tool the chat model
 * calls and a fund-moving `pay` tool. Line protocol on stdin/stdout, one JSON object per line:
 *   out {"type":"listening","url"}                 once serving
 *   in  request      → out {"type":"approval","id","ref"}   a `pay` call that waits for approval
 *   in  measure      → out {"type":"memory","rssMb","heapMb"} after two full GCs (run with --expose-gc)
 *   in  stop         → out {"type":"stats","executed":{ref:count}} then exit
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import { createAgentRuntime, createMemoryStore, createToolCallContext, createToolRegistry, defineTool, PermissionTier, silentLogger } from '../../src/index';
import { createGateway, serveGateway } from '../../src/gateway/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';

const LOAD_TOKEN = process.argv[2] ?? 'load-test-token-0123456789abcdef';

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
const memory = createMemoryStore({ storage, scope: { userId: 'default' } });
for (let i = 0; i < 200; i++) await memory.write({ category: 'observation', content: `note ${i} about bitcoin and ether staking`, source: 'user_stated' });
const runtime = createAgentRuntime({ model: loadModel(), tools, storage, logger: silentLogger, memory });
const gateway = createGateway({ runtime, storage, tools, memoryFor: () => memory, authToken: LOAD_TOKEN, logger: silentLogger });
const served = await serveGateway({ gateway, port: 0, host: '127.0.0.1' });
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
say({ type: 'listening', url: served.url });

const gc = (globalThis as { gc?: () => void }).gc;
let n = 0;
for await (const command of createInterface({ input: process.stdin })) {
  if (command === 'request') {
    const ref = `r${n++}`;
    const ctx = createToolCallContext({ sessionId: `pay-${ref}`, source: 'user', userId: 'default' });
    const outcome = await tools.dispatchDetailed('pay', { ref, usd: 5, confirm: true }, { context: ctx, toolCallId: `c-${ref}` });
    say({ type: 'approval', id: outcome.approval?.id ?? null, ref });
  } else if (command === 'measure') {
    await new Promise((r) => setTimeout(r, 200));
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    say({ type: 'memory', rssMb: Math.round(m.rss / 1_048_576), heapMb: gc ? Math.round(m.heapUsed / 1_048_576) : null, heapTotalMb: Math.round(m.heapTotal / 1_048_576), externalMb: Math.round(m.external / 1_048_576), ...rssParts() });
  } else if (command === 'stop') {
    await served.close();
    await memory.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
    say({ type: 'stats', executed: Object.fromEntries(executed) });
    process.exit(0);
  }
}

/**
 * RSS split as Linux reports it: anonymous memory (the JS heap, native allocations: what a leak grows) and
 * file-backed pages (the SQLite file mapped by `mmap_size`, shared libraries: they grow as the database
 * does and are reclaimable page cache). Undefined off Linux.
 */
function rssParts(): { anonMb?: number; fileMb?: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { anonMb: Math.round(kb('RssAnon') / 1024), fileMb: Math.round(kb('RssFile') / 1024) };
  } catch {
    return {};
  }
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
