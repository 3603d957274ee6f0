import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentRuntime, createMemoryStore, createToolRegistry, defineTool, PermissionTier, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { spyBatches } from './helpers';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function sqlite() {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-batch-'));
  dirs.push(dir);
  return createSqliteStorage({ path: path.join(dir, 'b.db'), logger: silentLogger });
}

const getPrice = defineTool({
  name: 'get_price', toolSet: 'read', description: 'Spot price', inputSchema: z.object({ symbol: z.string() }), permissionTier: PermissionTier.READ_ONLY,
  execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
});
const script = () => [{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is $97,000.' }];

describe('Storage.batchWrites (SQLite): several domains, one transaction, all or nothing', () => {
  it('commits the writes of several domains together', async () => {
    const storage = sqlite();
    await storage.conversations.ensureSession({ id: 's', userId: 'u', now: new Date().toISOString() });
    const started: Array<Promise<unknown>> = [];
    storage.batchWrites!(() => {
      started.push(storage.meta.set('k', 'v'), storage.conversations.appendMessages('s', [{ role: 'user', json: '{"role":"user","content":"hi"}', createdAt: new Date().toISOString() }]));
    });
    await Promise.all(started);
    expect(await storage.meta.get('k')).toBe('v');
    expect(await storage.conversations.listMessages('s')).toHaveLength(1);
    await storage.close();
  });

  it('a write that fails rolls the whole batch back and the batch throws', async () => {
    const storage = sqlite();
    const started: Array<Promise<unknown>> = [];
    expect(() =>
      storage.batchWrites!(() => {
        // The second write names a session that does not exist: it fails, so the first is not committed either.
        started.push(storage.meta.set('k', 'v'), storage.conversations.appendMessages('missing', [{ role: 'user', json: '{}', createdAt: new Date().toISOString() }]));
      }),
    ).toThrow(/batch was rolled back/);
    await Promise.allSettled(started);
    expect(await storage.meta.get('k')).toBeUndefined();
    await storage.close();
  });
});

describe('DispatchOptions.withAuditRow: writes committed with the audit row', () => {
  it('on SQLite the row and the writes are one transaction; the writes see the outcome', async () => {
    const storage = sqlite();
    const spy = spyBatches(storage);
    const registry = createToolRegistry({ storage, tools: [getPrice] });
    const outcome = await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, {
      toolCallId: 'c1',
      withAuditRow: (o) => [() => storage.meta.set('journal:c1', o.json)],
    });
    expect(spy.batches).toBe(1);
    expect(await storage.meta.get('journal:c1')).toBe(outcome.json);
    expect(await storage.audit.count()).toBe(1);
    await storage.close();
  });

  it('a write that fails inside the batch rolls it back; the row is then written alone and the failure logged', async () => {
    const storage = sqlite();
    const errors: string[] = [];
    const registry = createToolRegistry({ storage, tools: [getPrice], logger: { ...silentLogger, error: (m: string) => void errors.push(m) } });
    const outcome = await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, {
      withAuditRow: () => [
        () =>
          storage.handle.write('journal', () => {
            throw new Error('disk full');
          }),
      ],
    });
    expect(outcome.envelope.ok).toBe(true);
    expect(await storage.audit.count()).toBe(1);
    expect(errors).toContain('a write committed with the audit row failed');
    await storage.close();
  });

  it('an engine without batches writes the row, then the writes', async () => {
    const storage = createInMemoryStorage();
    const order: string[] = [];
    const registry = createToolRegistry({ storage, tools: [getPrice] });
    await registry.dispatchDetailed('get_price', { symbol: 'BTC' }, {
      withAuditRow: () => [
        async () => {
          order.push(`rows before: ${await storage.audit.count()}`);
        },
      ],
    });
    expect(order).toEqual(['rows before: 1']);
  });
});

describe('a SQLite turn batches its writes', () => {
  it("a turn's end (messages, journal clear, session state, usage row) is one transaction; each call's audit row and journal entry one; a new session's start one", async () => {
    const storage = sqlite();
    const memory = createMemoryStore({ storage, scope: { userId: 'default' }, logger: silentLogger });
    await memory.write({ category: 'preference', content: 'prefers weekly charts' });
    const spy = spyBatches(storage);
    const model = createScriptedModel([...script(), ...script()]);
    const runtime = createAgentRuntime({ model, tools: createToolRegistry({ storage, tools: [getPrice] }), storage, memory, logger: silentLogger });
    await runtime.generate({ sessionId: 's', message: 'price of BTC?' });
    expect(spy.batches).toBe(3); // the new session's row, snapshot and state; the call's row and journal entry; the turn's end
    await runtime.generate({ sessionId: 's', message: 'and again?' });
    expect(spy.batches).toBe(5); // an existing session: the call, the turn's end
    expect(await storage.audit.count({ sessionId: 's' })).toBe(2);
    expect((await storage.conversations.listMessages('s')).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    expect(await storage.meta.get('runtime:calls-in-flight:s')).toBeUndefined();
    expect(JSON.parse((await storage.meta.get('runtime:session:s'))!)).toMatchObject({ turnCount: 2 });
    expect((await storage.usage.totals({})).turns).toBe(2);
    await storage.close();
  });

  it('when a write in the batch fails, nothing of it is committed and the turn stores the rest one by one', async () => {
    const storage = sqlite();
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (message: string) => void errors.push(message) };
    // The usage row fails inside the batch: the batch rolls back, then messages, journal and state are written alone.
    storage.usage.record = async () =>
      storage.handle.write('usage.record', () => {
        throw new Error('usage ledger is full');
      });
    const model = createScriptedModel(script());
    const runtime = createAgentRuntime({ model, tools: createToolRegistry({ storage, tools: [getPrice] }), storage, logger });
    await runtime.generate({ sessionId: 's', message: 'price of BTC?' });
    expect(await storage.conversations.listMessages('s')).toHaveLength(4);
    expect(await storage.meta.get('runtime:calls-in-flight:s')).toBeUndefined();
    expect(JSON.parse((await storage.meta.get('runtime:session:s'))!)).toMatchObject({ turnCount: 1 });
    expect(errors).toContain('usage ledger: recording the turn failed');
    await storage.close();
  });
});
