import { PermissionTier, createMemoryStore, createMemoryTools, createToolCallContext, createToolRegistry, parseEnvelope, silentLogger } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';
import { fakeClock } from './helpers';

describe('memory tools', () => {
  it('write/search/read through the registry: READ_ONLY, memory tool set, audited, fact routed', async () => {
    const storage = createInMemoryStorage();
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, now: fakeClock(), logger: silentLogger });
    const tools = createMemoryTools({ store });
    expect(tools.map((t) => [t.name, t.toolSet, t.permissionTier])).toEqual([
      ['memory_write', 'memory', PermissionTier.READ_ONLY],
      ['memory_search', 'memory', PermissionTier.READ_ONLY],
      ['memory_read', 'memory', PermissionTier.READ_ONLY],
      ['memory_profile_set', 'memory', PermissionTier.READ_ONLY],
    ]);
    const registry = createToolRegistry({ tools, storage });
    const context = createToolCallContext({ sessionId: 's1', source: 'cron', allowedToolSets: ['read', 'memory', 'web'] });
    const w = parseEnvelope(await registry.dispatch('memory_write', { category: 'preference', content: 'always use 0.5% slippage', metadata: null }, { context }));
    expect(w).toMatchObject({ ok: true, data: { routedTo: 'memories' } });
    const f = parseEnvelope(await registry.dispatch('memory_write', { category: 'fact', content: 'lives in Lisbon' }, { context }));
    expect(f).toMatchObject({ ok: true, data: { routedTo: 'fact_layer' } });
    const fid = (f as { data: { id: number } }).data.id;
    expect(await store.get(fid)).toMatchObject({ status: 'pending', source: 'agent_recorded' });
    const s = parseEnvelope(await registry.dispatch('memory_search', { query: 'slippage "unbalanced', limit: null }, { context }));
    expect(s.ok).toBe(true);
    const s2 = parseEnvelope(await registry.dispatch('memory_search', { query: 'slippage' }, { context }));
    expect((s2 as { data: { results: unknown[] } }).data.results).toHaveLength(1);
    const r = parseEnvelope(await registry.dispatch('memory_read', { category: 'preference' }, { context }));
    expect((r as { data: { results: unknown[] } }).data.results).toHaveLength(1);
    const bad = parseEnvelope(await registry.dispatch('memory_write', { category: 'observation', content: 'x\u0000y' }, { context }));
    expect(bad).toMatchObject({ ok: false, code: 'MEMORY_INVALID' });
    const audit = await registry.queryAudit({ toolName: 'memory_write' });
    expect(audit).toHaveLength(3);
    expect(audit.every((a) => a.tier === PermissionTier.READ_ONLY)).toBe(true);
    await store.close();
  });

  it('resolves the store from the call tenant and refuses calls without one', async () => {
    const storage = createInMemoryStorage();
    const stores = new Map<string, ReturnType<typeof createMemoryStore>>();
    const tools = createMemoryTools({
      resolveStore: (ctx) => {
        const userId = ctx.call.userId;
        if (userId === undefined) return undefined;
        let s = stores.get(userId);
        if (s === undefined) stores.set(userId, (s = createMemoryStore({ storage, scope: { userId }, logger: silentLogger })));
        return s;
      },
    });
    const registry = createToolRegistry({ tools, storage });
    const alice = createToolCallContext({ sessionId: 'a', userId: 'alice' });
    const bob = createToolCallContext({ sessionId: 'b', userId: 'bob' });
    await registry.dispatch('memory_write', { category: 'observation', content: 'alice holds ETH' }, { context: alice });
    const fromBob = parseEnvelope(await registry.dispatch('memory_search', { query: 'ETH' }, { context: bob }));
    expect((fromBob as { data: { results: unknown[] } }).data.results).toEqual([]);
    const anon = parseEnvelope(await registry.dispatch('memory_read', {}, { context: createToolCallContext({ sessionId: 'x' }) }));
    expect(anon).toMatchObject({ ok: false, code: 'MEMORY_INVALID' });
  });

  it('memory_profile_set records a profile key as the agent; the person\'s value wins; hard_constraint keys are out of reach', async () => {
    const storage = createInMemoryStorage();
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, now: fakeClock(), logger: silentLogger });
    const registry = createToolRegistry({ tools: createMemoryTools({ store }), storage });
    const context = createToolCallContext({ sessionId: 's1', source: 'user' });
    const set = async (input: unknown) => parseEnvelope(await registry.dispatch('memory_profile_set', input, { context }));
    expect(await set({ key: 'preferred_chains', value: 'base, arbitrum' })).toMatchObject({ ok: true, data: { key: 'preferred_chains', value: 'base, arbitrum', applied: true } });
    await store.profile.set('risk_tolerance', 'conservative');
    expect(await set({ key: 'risk_tolerance', value: 'aggressive' })).toMatchObject({ ok: true, data: { value: 'conservative', applied: false, reason: expect.stringMatching(/set this key themselves/) } });
    expect(await store.profile.get('risk_tolerance')).toBe('conservative');
    // A hard constraint (read by the finance limits) or any dotted key is refused at the input schema.
    expect(await set({ key: 'hard_constraint.maxTradeUsd', value: '1000000' })).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
    expect(await store.profile.get('hard_constraint.maxTradeUsd')).toBeUndefined();
    expect(await set({ key: 'Risk', value: 'x' })).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
  });
});
