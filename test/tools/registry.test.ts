import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createToolCallContext,
  createToolRegistry,
  defineTool,
  defineToolFactory,
  err,
  MinaraError,
  PermissionTier,
  parseEnvelope,
} from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { parse, sampleTools } from './helpers';

describe('defineTool', () => {
  it('names the bad field', () => {
    expect(() =>
      defineTool({ name: 'Bad Name', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1, execute: () => 1 }),
    ).toThrow(/field "name"/);
    expect(() =>
      defineTool({ name: 'ok_name', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 7 as never, execute: () => 1 }),
    ).toThrow(/field "permissionTier"/);
    expect(() =>
      defineTool({ name: 'ok_name', toolSet: 'read', description: '', inputSchema: z.object({}), permissionTier: 1, execute: () => 1 }),
    ).toThrow(/field "description"/);
  });

  it('requires a preview for fund-moving tools and adds the confirm flag', () => {
    expect(() =>
      defineTool({ name: 'buy', toolSet: 'trade', description: 'x', inputSchema: z.object({ a: z.number() }), permissionTier: 2, isFundMoving: true, execute: () => 1 }),
    ).toThrow(/field "preview"/);
    expect(() =>
      defineTool({ name: 'buy', toolSet: 'trade', description: 'x', inputSchema: z.object({ a: z.number() }), permissionTier: 2, isFundMoving: true, preview: () => 'p', execute: () => 1 }),
    ).toThrow(/field "orderFacts"/);
    const t = defineTool({
      name: 'buy', toolSet: 'trade', description: 'x', inputSchema: z.object({ a: z.number() }), permissionTier: 2, isFundMoving: true,
      orderFacts: ({ a }) => ({ notionalUsd: a, asset: 'ETH', side: 'buy' }),
      preview: () => 'p', execute: () => 1,
    });
    expect(t.inputSchema.safeParse({ a: 1, confirm: true }).success).toBe(true);
    expect(t.isFundMoving).toBe(true);
  });

  it('infers the handler input from the schema (compile-time) and keeps many tools cheap', () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      defineTool({
        name: `tool_${i}`, toolSet: 'read', description: 'x', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ n: z.number(), tags: z.array(z.string()).nullish(), nested: z.object({ deep: z.object({ x: z.string() }) }).optional() }),
        execute: ({ n, nested }) => n + (nested?.deep.x.length ?? 0),
      }),
    );
    const registry = createToolRegistry({ tools: many, audit: false });
    expect(registry.list()).toHaveLength(60);
  });
});

describe('createToolRegistry.dispatch', () => {
  it('returns the ok envelope as a JSON string', async () => {
    const registry = createToolRegistry({ tools: sampleTools(), storage: createInMemoryStorage() });
    const json = await registry.dispatch('get_price', { symbol: 'BTC' });
    expect(typeof json).toBe('string');
    expect(JSON.parse(json)).toEqual({ ok: true, data: { symbol: 'BTC', currency: 'USD', price: 100 } });
    expect(parseEnvelope(json).ok).toBe(true);
  });

  it('suggests close names for an unknown tool', async () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    const r = parse(await registry.dispatch('get_prices', {}));
    expect(r).toMatchObject({ ok: false, code: 'TOOL_NOT_FOUND', retryable: false });
    expect(r.error).toContain('get_price');
  });

  it('names every bad field and lets the model retry', async () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    const r = parse(await registry.dispatch('swap_tokens', { from: 1, amountUsd: -5 }));
    expect(r.code).toBe('TOOL_INPUT_INVALID');
    expect(r.retryable).toBe(true);
    expect(r.error).toMatch(/from:/);
    expect(r.error).toMatch(/to:/);
    expect(r.error).toMatch(/amountUsd:/);
  });

  it('treats null as absent for optional fields (models send null)', async () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    const r = parse(await registry.dispatch('get_price', { symbol: 'ETH', currency: null }));
    expect(r).toEqual({ ok: true, data: { symbol: 'ETH', currency: 'USD', price: 100 } });
    const bad = parse(await registry.dispatch('get_price', { symbol: null }));
    expect(bad.code).toBe('TOOL_INPUT_INVALID');
  });

  it('wraps thrown errors, keeps MinaraError codes, and passes handler envelopes through', async () => {
    const registry = createToolRegistry({
      tools: [
        defineTool({ name: 'boom', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1, execute: () => { throw new Error('kaput'); } }),
        defineTool({ name: 'typed', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1, execute: () => { throw new MinaraError('PROVIDER_RATE_LIMITED', 'slow down', { retryable: true }); } }),
        defineTool({ name: 'soft', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1, execute: () => err('no quote', { code: 'PROVIDER_ERROR', retryable: true }) }),
      ],
    });
    expect(parse(await registry.dispatch('boom', {}))).toEqual({ ok: false, error: 'kaput', code: 'TOOL_EXECUTION_FAILED', retryable: false });
    expect(parse(await registry.dispatch('typed', {}))).toMatchObject({ code: 'PROVIDER_RATE_LIMITED', retryable: true });
    expect(parse(await registry.dispatch('soft', {}))).toEqual({ ok: false, error: 'no quote', code: 'PROVIDER_ERROR', retryable: true });
  });

  it('honours timeouts and AbortSignal, and the handler sees the abort', async () => {
    let sawAbort = false;
    const slow = defineTool({
      name: 'slow', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1, timeoutMs: 30,
      execute: (_i, ctx) => new Promise((resolve) => { ctx.signal.addEventListener('abort', () => { sawAbort = true; resolve('late'); }); }),
    });
    const registry = createToolRegistry({ tools: [slow] });
    expect(parse(await registry.dispatch('slow', {}))).toMatchObject({ ok: false, code: 'TOOL_TIMEOUT', retryable: true });
    expect(sawAbort).toBe(true);

    const controller = new AbortController();
    const pending = registry.dispatch('slow', {}, { signal: controller.signal });
    controller.abort();
    expect(parse(await pending)).toMatchObject({ code: 'TOOL_ABORTED' });
    const pre = new AbortController();
    pre.abort();
    expect(parse(await registry.dispatch('slow', {}, { signal: pre.signal }))).toMatchObject({ code: 'TOOL_ABORTED' });
  });

  it('hides tools whose checkFn says no, and a throwing checkFn hides too', async () => {
    let available = false;
    const registry = createToolRegistry({
      tools: [
        defineTool({ name: 'maybe', toolSet: 'web', description: 'x', inputSchema: z.object({}), permissionTier: 1, checkFn: () => available, execute: () => 'yes' }),
        defineTool({ name: 'broken', toolSet: 'web', description: 'x', inputSchema: z.object({}), permissionTier: 1, checkFn: () => { throw new Error('x'); }, execute: () => 'yes' }),
      ],
    });
    expect(registry.get('maybe')).toBeUndefined();
    expect(registry.list().map((t) => t.name)).toEqual([]);
    expect(parse(await registry.dispatch('maybe', {})).code).toBe('TOOL_UNAVAILABLE');
    available = true;
    expect(registry.has('maybe')).toBe(true);
    expect(parse(await registry.dispatch('maybe', {}))).toEqual({ ok: true, data: 'yes' });
    expect(registry.has('broken')).toBe(false);
  });

  it('refuses duplicate names and non-tools at registration', () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    expect(() => registry.register(sampleTools()[0]!)).toThrow(/already registered/);
    expect(() => registry.register({ name: 'x' } as never)).toThrow(/defineTool/);
  });

  it('lists tools by tool set with includes composition', () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    expect(registry.list({ toolSets: ['read'] }).map((t) => t.name)).toEqual(['get_price']);
    expect(registry.list({ toolSets: ['trade'] }).map((t) => t.name).sort()).toEqual(['get_price', 'swap_tokens']);
    expect([...registry.expandToolSets(['analysis'])].sort()).toEqual(['analysis', 'read', 'web']);
    expect(registry.toolSets().map((s) => s.name)).toContain('memory');
  });
});

describe('tool factories', () => {
  it('return [] when env keys are missing, and never throw', () => {
    const factory = defineToolFactory({ requiresEnv: ['MINARA_API_KEY'], create: () => sampleTools().slice(0, 1) });
    expect(factory({})).toEqual([]);
    expect(factory({ MINARA_API_KEY: 'k' })).toHaveLength(1);
    const throwing = defineToolFactory({ create: () => { throw new Error('bad'); } });
    expect(throwing({})).toEqual([]);
  });
});

describe('call context (AsyncLocalStorage)', () => {
  it('threads the ambient context; inside it an explicit context can only narrow (the session stays the caller\'s); nested calls see the same one', async () => {
    const seen: string[] = [];
    const registry = createToolRegistry({
      tools: [
        defineTool({
          name: 'outer', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1,
          execute: async (_i, ctx) => {
            seen.push(`outer:${ctx.call.sessionId}`);
            return registry.dispatch('inner', {});
          },
        }),
        defineTool({
          name: 'inner', toolSet: 'read', description: 'x', inputSchema: z.object({}), permissionTier: 1,
          execute: (_i, ctx) => {
            seen.push(`inner:${ctx.call.sessionId}:${registry.currentContext()?.sessionId}`);
            return 'ok';
          },
        }),
      ],
    });
    const a = createToolCallContext({ sessionId: 'A' });
    await registry.runInContext(a, () => registry.dispatch('outer', {}));
    expect(seen).toEqual(['outer:A', 'inner:A:A']);
    expect(a.usedTools.has('outer') && a.usedTools.has('inner')).toBe(true);
    seen.length = 0;
    const b = createToolCallContext({ sessionId: 'B' });
    await registry.runInContext(a, () => registry.dispatch('inner', {}, { context: b }));
    expect(seen).toEqual(['inner:A:A']);
    seen.length = 0;
    await registry.dispatch('inner', {}, { context: b }); // outside any call, the explicit context is used as given
    expect(seen).toEqual(['inner:B:B']);
    expect(registry.currentContext()).toBeUndefined();
  });

  it('never leaks state between concurrent calls', async () => {
    const registry = createToolRegistry({
      tools: [
        defineTool({
          name: 'echo_session', toolSet: 'read', description: 'x', inputSchema: z.object({ delay: z.number() }), permissionTier: 1,
          execute: async ({ delay }) => {
            await new Promise((r) => setTimeout(r, delay));
            return registry.currentContext()?.sessionId;
          },
        }),
      ],
    });
    const runs = Array.from({ length: 20 }, (_, i) => {
      const ctx = createToolCallContext({ sessionId: `s${i}` });
      return registry.runInContext(ctx, () => registry.dispatch('echo_session', { delay: (i * 7) % 13 })).then((j) => [ctx.sessionId, JSON.parse(j).data]);
    });
    for (const [expected, got] of await Promise.all(runs)) expect(got).toBe(expected);
  });

  it('validates the context init', () => {
    expect(() => createToolCallContext({ sessionId: '' })).toThrow(/sessionId/);
    expect(() => createToolCallContext({ sessionId: 's', source: 'martian' as never })).toThrow(/source/);
  });
});

describe('audit log', () => {
  it('writes one row per dispatch with decision, tier, source and redacted arguments', async () => {
    const storage = createInMemoryStorage();
    const registry = createToolRegistry({
      tools: [
        ...sampleTools(),
        defineTool({ name: 'login', toolSet: 'web', description: 'x', inputSchema: z.object({ user: z.string(), password: z.string(), note: z.string() }), permissionTier: 1, execute: () => 'in' }),
      ],
      storage,
    });
    const ctx = createToolCallContext({ sessionId: 'S', source: 'cron', traceId: 'T1' });
    await registry.runInContext(ctx, async () => {
      await registry.dispatch('get_price', { symbol: 'BTC' });
      await registry.dispatch('login', { user: 'u', password: 'hunter2', note: 'key sk-ant-abcdefghijklmnopqrstuvwxyz' });
      await registry.dispatch('withdraw', { address: '0xabc', amount: 1 });
      await registry.dispatch('nope', {});
    });
    const rows = await registry.queryAudit({ traceId: 'T1' });
    expect(rows).toHaveLength(4);
    const byTool = Object.fromEntries(rows.map((r) => [r.toolName, r]));
    expect(byTool.get_price).toMatchObject({ decision: 'allowed', tier: 1, source: 'cron', sessionId: 'S' });
    expect(byTool.withdraw).toMatchObject({ decision: 'blocked', tier: 4, code: 'MANUAL_ONLY_AUTONOMOUS' });
    expect(byTool.nope).toMatchObject({ decision: 'error', code: 'TOOL_NOT_FOUND' });
    expect(byTool.login!.argsJson).not.toContain('hunter2');
    expect(byTool.login!.argsJson).not.toContain('sk-ant-abc');
    expect(byTool.login!.argsJson).toContain('[REDACTED');
    expect(byTool.get_price!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('can be turned off', async () => {
    const storage = createInMemoryStorage();
    const registry = createToolRegistry({ tools: sampleTools(), storage, audit: false });
    await registry.dispatch('get_price', { symbol: 'BTC' });
    expect(await storage.audit.count()).toBe(0);
  });
});
