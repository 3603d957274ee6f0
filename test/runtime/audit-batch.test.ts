import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createAgentRuntime,
  createAuditBatch,
  createToolCallContext,
  createToolRegistry,
  defineTool,
  PermissionTier,
  silentLogger,
  type AgentRuntimeOptions,
  type Storage,
  type ToolEntry,
} from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage, createScriptedModel, type ScriptEntry } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { spyBatches } from './helpers';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function sqlite(): Storage {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-audit-batch-'));
  dirs.push(dir);
  return createSqliteStorage({ path: path.join(dir, 'a.db'), logger: silentLogger });
}

/** What each call's handler saw of the audit log while it ran: the rows of its session so far. */
type Seen = Array<{ readonly call: string; readonly rows: number }>;

function tools(storage: Storage, seen: Seen): ToolEntry[] {
  const look = async (call: string, sessionId: string) => seen.push({ call, rows: await storage.audit.count({ sessionId, kind: 'tool_call' }) });
  return [
    defineTool({
      name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY, sideEffects: false,
      inputSchema: z.object({ symbol: z.string() }),
      execute: async ({ symbol }, ctx) => {
        await look(`get_price:${symbol}`, ctx.call.sessionId);
        if (symbol === 'FAIL') throw new Error('quote source down');
        return { symbol, priceUsd: 97_000 };
      },
    }),
    defineTool({
      name: 'save_note', toolSet: 'notes', description: 'Save a note', permissionTier: PermissionTier.READ_ONLY,
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }, ctx) => {
        await look(`save_note:${text}`, ctx.call.sessionId);
        return { saved: true };
      },
    }),
  ];
}

async function drain(iterable: AsyncIterable<{ type: string }>): Promise<string[]> {
  const types: string[] = [];
  for await (const e of iterable) types.push(e.type);
  return types;
}

function setup(storage: Storage, script: ScriptEntry[], extra: Partial<AgentRuntimeOptions> = {}) {
  const seen: Seen = [];
  const registry = createToolRegistry({ storage, tools: tools(storage, seen) });
  const runtime = createAgentRuntime({ model: createScriptedModel(script), tools: registry, storage, logger: silentLogger, ...extra });
  return { runtime, seen, registry };
}

const rowsOf = async (storage: Storage, sessionId: string) =>
  (await storage.audit.query({ sessionId, kind: 'tool_call', order: 'oldest', limit: 100 })).map((r) => `${r.toolName}:${JSON.parse(r.argsJson) ? Object.values(JSON.parse(r.argsJson) as Record<string, string>)[0] : ''}:${r.decision}`);

describe('createAuditBatch + DispatchOptions.auditBatch: side-effect-free rows held, committed together', () => {
  it('holds the rows of side-effect-free calls and commits them in one transaction, in call order, chain intact', async () => {
    const storage = sqlite();
    const seen: Seen = [];
    const registry = createToolRegistry({ storage, tools: tools(storage, seen) });
    const spy = spyBatches(storage);
    const batch = createAuditBatch({ storage });
    const context = createToolCallContext({ sessionId: 'd', source: 'user' });
    await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, { context, auditBatch: batch });
    await registry.dispatchDetailed('get_price', { symbol: 'ETH' }, { context, auditBatch: batch });
    expect(batch.size).toBe(2);
    expect(await storage.audit.count()).toBe(0);
    await batch.flush();
    expect(batch.size).toBe(0);
    expect(spy.batches).toBe(1);
    expect(await rowsOf(storage, 'd')).toEqual(['get_price:BTC:allowed', 'get_price:ETH:allowed']);
    expect((await storage.audit.verify()).ok).toBe(true);
    await storage.close();
  });

  it('a call with side effects commits the held rows before its gate and handler run; an unknown tool too, so the log keeps the order', async () => {
    const storage = sqlite();
    const seen: Seen = [];
    // A host policy reading the log (say, a limit on notes per session): it runs before the gate.
    const hookSaw: Seen = [];
    const registry = createToolRegistry({
      storage, tools: tools(storage, seen),
      hooks: [{ name: 'reads-log', before: async (c) => void hookSaw.push({ call: c.tool.name, rows: await storage.audit.count({ sessionId: c.context.sessionId }) }) }],
    });
    const batch = createAuditBatch({ storage });
    const context = createToolCallContext({ sessionId: 'o', source: 'user' });
    await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, { context, auditBatch: batch });
    await registry.dispatchDetailed('save_note', { text: 'n1' }, { context, auditBatch: batch });
    await registry.dispatchDetailed('get_price', { symbol: 'ETH' }, { context, auditBatch: batch });
    await registry.dispatchDetailed('no_such_tool', {}, { context, auditBatch: batch });
    // save_note's handler saw get_price:BTC's row committed; the unknown tool's row came after get_price:ETH's.
    expect(seen).toEqual([{ call: 'get_price:BTC', rows: 0 }, { call: 'save_note:n1', rows: 1 }, { call: 'get_price:ETH', rows: 2 }]);
    // The policy saw get_price:BTC's row before save_note's gate ran.
    expect(hookSaw).toEqual([{ call: 'get_price', rows: 0 }, { call: 'save_note', rows: 1 }, { call: 'get_price', rows: 2 }]);
    expect(batch.size).toBe(0);
    expect((await storage.audit.query({ sessionId: 'o', order: 'oldest', limit: 10 })).map((r) => `${r.toolName}:${r.decision}`)).toEqual([
      'get_price:allowed', 'save_note:allowed', 'get_price:allowed', 'no_such_tool:error',
    ]);
    expect((await storage.audit.verify()).ok).toBe(true);
    await storage.close();
  });

  it('the row that reaches maxRows commits the batch; a failed call is held like any other', async () => {
    const storage = createInMemoryStorage();
    const seen: Seen = [];
    const registry = createToolRegistry({ storage, tools: tools(storage, seen) });
    const batch = createAuditBatch({ storage, maxRows: 3 });
    const context = createToolCallContext({ sessionId: 'm', source: 'user' });
    for (const symbol of ['A', 'FAIL', 'C', 'D']) await registry.dispatchDetailed('get_price', { symbol }, { context, auditBatch: batch });
    expect(await rowsOf(storage, 'm')).toEqual(['get_price:A:allowed', 'get_price:FAIL:error', 'get_price:C:allowed']);
    expect(batch.size).toBe(1);
    await batch.flush();
    expect(await storage.audit.count({ sessionId: 'm' })).toBe(4);

    // The default holds 32: the 32nd row commits them all.
    const byDefault = createAuditBatch({ storage });
    for (let i = 0; i < 31; i++) await registry.dispatchDetailed('get_price', { symbol: `S${i}` }, { context, auditBatch: byDefault });
    expect(byDefault.size).toBe(31);
    await registry.dispatchDetailed('get_price', { symbol: 'S31' }, { context, auditBatch: byDefault });
    expect(byDefault.size).toBe(0);
    expect(await storage.audit.count({ sessionId: 'm' })).toBe(36);
  });

  it('a row that cannot be written is logged, never thrown, and the others commit', async () => {
    const base = createInMemoryStorage();
    const errors: string[] = [];
    const append: Storage['audit']['append'] = async (entry) => {
      if (entry.argsJson.includes('BAD')) throw new Error('disk full');
      return base.audit.append(entry);
    };
    const storage: Storage = { ...base, audit: new Proxy(base.audit, { get: (target, prop, receiver) => (prop === 'append' ? append : Reflect.get(target, prop, receiver)) }) };
    const registry = createToolRegistry({ storage, tools: tools(storage, []) });
    const batch = createAuditBatch({ storage, logger: { error: (m, f) => errors.push(`${m}: ${String(f?.error)}`) } });
    const context = createToolCallContext({ sessionId: 'e', source: 'user' });
    for (const symbol of ['A', 'BAD', 'C']) await registry.dispatchDetailed('get_price', { symbol }, { context, auditBatch: batch });
    await expect(batch.flush()).resolves.toBeUndefined();
    expect(errors).toEqual(['audit append failed: disk full']);
    expect(await rowsOf(storage, 'e')).toEqual(['get_price:A:allowed', 'get_price:C:allowed']);
  });

  it('bad options get a clear error', () => {
    const storage = createInMemoryStorage();
    expect(() => createAuditBatch({ storage, maxRows: 0 })).toThrow(/createAuditBatch: maxRows must be a whole number of at least 1 \(got 0\)/);
    expect(() => createAuditBatch({ storage, maxRows: 1.5 })).toThrow(/maxRows/);
    const registry = createToolRegistry({ storage, tools: [] });
    expect(() => createAgentRuntime({ model: createScriptedModel([]), tools: registry, sideEffectFreeAuditRows: 'later' as never })).toThrow(
      /"sideEffectFreeAuditRows" must be 'with-turn' or 'per-call' \(got "later"\)/,
    );
  });
});

describe("createAgentRuntime({ sideEffectFreeAuditRows }): a turn's reads commit with its end", () => {
  const reads: ScriptEntry[] = [
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
    { text: 'BTC 97,000, ETH 3,400.' },
  ];

  it("'with-turn' (the default): the reads' rows are one commit with the turn's messages, in order, chain intact", async () => {
    const storage = sqlite();
    const { runtime, seen } = setup(storage, reads);
    const spy = spyBatches(storage);
    await drain(runtime.run({ sessionId: 's', message: 'prices?' }));
    // While the turn ran, the first read's row was held (the second handler saw none).
    expect(seen).toEqual([{ call: 'get_price:BTC', rows: 0 }, { call: 'get_price:ETH', rows: 0 }]);
    expect(await rowsOf(storage, 's')).toEqual(['get_price:BTC:allowed', 'get_price:ETH:allowed']);
    // One batch: the held rows, the messages, the session state and the usage row.
    expect(spy.batches).toBe(1);
    expect((await storage.conversations.listMessages('s')).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect((await storage.audit.verify()).ok).toBe(true);
    await storage.close();
  });

  it("'per-call': each read's row commits as its call returns", async () => {
    const storage = sqlite();
    const { runtime, seen } = setup(storage, reads, { sideEffectFreeAuditRows: 'per-call' });
    const spy = spyBatches(storage);
    await drain(runtime.run({ sessionId: 's', message: 'prices?' }));
    expect(seen).toEqual([{ call: 'get_price:BTC', rows: 0 }, { call: 'get_price:ETH', rows: 1 }]);
    expect(await rowsOf(storage, 's')).toEqual(['get_price:BTC:allowed', 'get_price:ETH:allowed']);
    // Each call's row with its journal entry, then the turn's end.
    expect(spy.batches).toBe(3);
    await storage.close();
  });

  it('a call with side effects later in the turn sees every read before it committed', async () => {
    const storage = sqlite();
    const { runtime, seen } = setup(storage, [
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
      { toolCalls: [{ toolName: 'save_note', input: { text: 'both up' } }] },
      { text: 'Noted.' },
    ]);
    await drain(runtime.run({ sessionId: 's', message: 'prices, then a note' }));
    expect(seen.at(-1)).toEqual({ call: 'save_note:both up', rows: 2 });
    expect(await rowsOf(storage, 's')).toEqual(['get_price:BTC:allowed', 'get_price:ETH:allowed', 'save_note:both up:allowed']);
    await storage.close();
  });

  for (const engine of ['sqlite', 'in-memory'] as const) {
    it(`${engine}: a turn that ends in an error or is aborted still commits its reads' rows`, async () => {
      const storage = engine === 'sqlite' ? sqlite() : createInMemoryStorage();
      const failing = setup(storage, [
        { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
        () => {
          throw new Error('provider down');
        },
      ]);
      expect(await drain(failing.runtime.run({ sessionId: 'f', message: 'price?' }))).toContain('error');
      expect(await rowsOf(storage, 'f')).toEqual(['get_price:BTC:allowed']);

      const controller = new AbortController();
      const aborted = setup(storage, [
        { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
        () => {
          controller.abort();
          return { text: 'never read' };
        },
      ]);
      await drain(aborted.runtime.run({ sessionId: 'a', message: 'price?', abortSignal: controller.signal }));
      expect(await rowsOf(storage, 'a')).toEqual(['get_price:ETH:allowed']);
      await storage.close();
    });
  }
});
