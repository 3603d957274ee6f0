import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry, defineTool, parseEnvelope, PermissionTier, type ToolEntry } from '@minara/agent';
import { createFinancePack, createSimulatedMarket, intentSchema, SAFETY_AUDIT_TOOL } from '@minara/agent/finance';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';
import { ctxOf, setup, T0, type Env } from './helpers';

// Attacks on the size of an order (issue: limits, grants, risk caps and previews must judge the same
// normalised order facts, computed once; an input with conflicting size fields is refused).

describe('conflicting size fields', () => {
  it('swap_tokens with amount and amountUsd is refused before any check, naming both fields; nothing moves', async () => {
    const { call, registry, balances } = setup();
    await registry.grants.create({ toolName: 'swap_tokens', sources: ['cron'], argLimits: { amountUsd: { max: 50 } } });
    // The attack: the grant reads amountUsd (10), the order is sized by amount (3,000 USDC).
    const r = await call(ctxOf('cron'), 'swap_tokens', { from: 'USDC', to: 'ETH', amount: 3000, amountUsd: 10, intent: 'swap 10 USD of USDC to ETH', confirm: true });
    expect(r.ok).toBe(false);
    expect(r.code).toBe('TOOL_INPUT_INVALID');
    expect(r.error).toMatch(/amount.*amountUsd/);
    expect(await balances()).toEqual({ USDC: 10_000 });
  });

  it('sell_token with more than one of amount, amountUsd, fraction is refused', async () => {
    const { call } = setup();
    for (const args of [{ amount: 1, amountUsd: 10 }, { amount: 1, fraction: 0.5 }, { amountUsd: 10, fraction: 1 }]) {
      const r = await call(ctxOf(), 'sell_token', { symbol: 'ETH', ...args });
      expect(r.code, JSON.stringify(args)).toBe('TOOL_INPUT_INVALID');
    }
    // null does not count as given (models send null for absent optional fields).
    const ok = await call(ctxOf(), 'sell_token', { symbol: 'ETH', amount: null, amountUsd: 10, fraction: null });
    expect(ok.code).not.toBe('TOOL_INPUT_INVALID');
  });
});

describe('stored grants judge the real notional', () => {
  it('a cron grant of amountUsd ≤ 50 does not cover a swap sized in units worth 3,000 USD', async () => {
    const { call, registry, balances } = setup();
    await registry.grants.create({ toolName: 'swap_tokens', sources: ['cron'], argLimits: { amountUsd: { max: 50 } } });
    const big = await call(ctxOf('cron'), 'swap_tokens', { from: 'USDC', to: 'ETH', amount: 3000, intent: 'swap 3000 USDC to ETH', confirm: true });
    expect(big.code).toBe('GRANT_REQUIRED');
    expect(await balances()).toEqual({ USDC: 10_000 });
    const small = await call(ctxOf('cron'), 'swap_tokens', { from: 'USDC', to: 'ETH', amount: 40, intent: 'swap 40 USDC to ETH', confirm: true });
    expect(small.ok).toBe(true);
    expect(small.data.executed).toBe(true);
  });

  it('a sell by fraction is judged by what the fraction is worth', async () => {
    const { call, approveAndRun, registry } = setup();
    const bought = await approveAndRun(ctxOf('user', 'owner'), 'buy_token', { symbol: 'ETH', amountUsd: 400, intent: 'buy 400 USD of ETH', confirm: true });
    expect(bought.result.ok).toBe(true);
    await registry.grants.create({ toolName: 'sell_token', sources: ['cron'], argLimits: { notionalUsd: { max: 50 } } });
    expect((await call(ctxOf('cron'), 'sell_token', { symbol: 'ETH', fraction: 1, intent: 'sell all ETH', confirm: true })).code).toBe('GRANT_REQUIRED');
    const part = await call(ctxOf('cron'), 'sell_token', { symbol: 'ETH', fraction: 0.1, intent: 'sell 10% of ETH', confirm: true });
    expect(part.ok).toBe(true);
  });

  it('asset and side limits read the normalised facts, not the raw spelling', async () => {
    const { call, registry } = setup();
    await registry.grants.create({ toolName: 'buy_token', sources: ['cron'], argLimits: { asset: { oneOf: ['ETH'] }, notionalUsd: { max: 100 } } });
    expect((await call(ctxOf('cron'), 'buy_token', { symbol: 'BTC', amountUsd: 40, intent: 'buy 40 USD of BTC', confirm: true })).code).toBe('GRANT_REQUIRED');
    expect((await call(ctxOf('cron'), 'buy_token', { symbol: 'eth', amountUsd: 40, intent: 'buy 40 USD of ETH', confirm: true })).ok).toBe(true);
  });
});

/** A registry with the finance pack and one host fund-moving tool. */
function withHostTool(host: ToolEntry) {
  const clock = createFakeClock(T0);
  const storage = createInMemoryStorage({ now: clock.now });
  const pack = createFinancePack({ market: createSimulatedMarket({ seed: 7, now: clock.now }), now: clock.now, storage, limits: { maxAssetConcentrationPct: 100 } });
  const registry = pack.attach(createToolRegistry({ tools: [...pack.tools, host], hooks: pack.hooks, storage, now: clock.now }));
  const call = async (source: 'user' | 'cron', args: unknown, approvalId?: string): Promise<Env> =>
    parseEnvelope(await registry.dispatch(host.name, args, { context: ctxOf(source, 'host-session'), toolCallId: 'c1', ...(approvalId ? { approvalId } : {}) })) as unknown as Env;
  return { registry, call };
}

describe("a host's fund-moving tool goes through the finance safety stack", () => {
  const executed: unknown[] = [];
  const hostBuy = defineTool({
    name: 'broker_buy', toolSet: 'trade', description: 'Buy through my broker',
    inputSchema: z.object({ symbol: z.string(), usd: z.number().positive(), intent: intentSchema }),
    permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
    orderFacts: ({ symbol, usd }) => ({ notionalUsd: usd, asset: symbol, side: 'buy' }),
    preview: ({ symbol, usd }) => ({ preview: true, symbol, usd }),
    execute: (input) => { executed.push(input); return { filled: true }; },
  });

  it('risk caps and token safety apply, and every stage is audited', async () => {
    const { registry, call } = withHostTool(hostBuy);
    const tooBig = await call('user', { symbol: 'ETH', usd: 6_000, intent: 'buy 6000 USD of ETH', confirm: true });
    expect(tooBig.code).toBe('TOOL_BLOCKED');
    expect(tooBig.error).toContain('per-trade limit');
    const scam = await call('user', { symbol: 'SCAMX', usd: 50, intent: 'buy 50 USD of SCAMX', confirm: true });
    expect(scam.code).toBe('TOOL_BLOCKED');
    const fine = await call('user', { symbol: 'ETH', usd: 50, intent: 'buy 50 USD of ETH', confirm: true });
    expect(fine.code).toBe('APPROVAL_REQUIRED');
    const rows = await registry.queryAudit({ toolName: SAFETY_AUDIT_TOOL });
    expect(rows).toHaveLength(3);
    expect(JSON.parse(rows[0]!.argsJson).stages.map((s: { stage: string }) => s.stage)).toEqual(['intent', 'token_safety', 'exposure', 'slippage', 'risk_caps', 'confirm_gate']);
    expect(executed).toEqual([]);
  });

  it('a mismatched intent blocks a host tool too', async () => {
    const { call } = withHostTool(hostBuy);
    const r = await call('user', { symbol: 'ETH', usd: 50, intent: 'buy 50 USD of BTC', confirm: true });
    expect(r.code).toBe('TOOL_BLOCKED');
    expect(r.error).toContain('intent');
  });

  it('funds never leave from cron through a host withdrawal tool in another tool set, grant or not', async () => {
    const sent: unknown[] = [];
    const payout = defineTool({
      name: 'bank_payout', toolSet: 'payments', description: 'Pay out to a bank account',
      inputSchema: z.object({ iban: z.string(), usd: z.number().positive(), intent: intentSchema }),
      permissionTier: PermissionTier.ALWAYS_CONFIRM, isFundMoving: true,
      orderFacts: ({ iban, usd }) => ({ notionalUsd: usd, asset: 'USDC', side: 'withdraw', destination: iban }),
      preview: (i) => ({ preview: true, ...i }),
      execute: (i) => { sent.push(i); return { sent: true }; },
    });
    const { registry, call } = withHostTool(payout);
    await registry.grants.create({ toolName: 'bank_payout', sources: ['cron'] });
    const r = await call('cron', { iban: 'DE89370400440532013000', usd: 100, intent: 'withdraw 100 USDC', confirm: true });
    expect(r.code).toBe('MANUAL_ONLY_AUTONOMOUS');
    expect(sent).toEqual([]);
  });
});

describe('order facts are required and checked', () => {
  it('a fund-moving entry without orderFacts is refused at registration', () => {
    const t = defineTool({
      name: 'pay', toolSet: 'trade', description: 'x', inputSchema: z.object({ usd: z.number() }), permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
      orderFacts: ({ usd }) => ({ notionalUsd: usd, asset: 'USD', side: 'transfer' }), preview: () => 'p', execute: () => 1,
    });
    const stripped: ToolEntry = { ...t, orderFacts: undefined };
    expect(() => createToolRegistry({ tools: [stripped] })).toThrow(/"pay" moves funds but has no "orderFacts"/);
  });

  it('facts that are not finite, or that throw, block the call before any handler runs', async () => {
    let ran = 0;
    for (const facts of [() => ({ notionalUsd: Number.NaN, asset: 'ETH', side: 'buy' as const }), () => { throw new Error('no price'); }, () => ({ notionalUsd: 5, asset: '', side: 'buy' as const })]) {
      const t = defineTool({
        name: 'odd_buy', toolSet: 'trade', description: 'x', inputSchema: z.object({ usd: z.number() }), permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
        orderFacts: facts, preview: () => { ran++; return 'p'; }, execute: () => { ran++; return 1; },
      });
      const registry = createToolRegistry({ tools: [t] });
      const env = parseEnvelope(await registry.dispatch('odd_buy', { usd: 5 })) as unknown as Env;
      expect(env.code).toBe('TOOL_BLOCKED');
      expect(env.error).toContain('could not price or check this order');
    }
    expect(ran).toBe(0);
  });

  it('the handler and the hooks receive the very facts the grant judged', async () => {
    const seen: unknown[] = [];
    let computed = 0;
    const t = defineTool({
      name: 'count_buy', toolSet: 'trade', description: 'x', inputSchema: z.object({ usd: z.number() }), permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
      orderFacts: ({ usd }) => { computed++; return { notionalUsd: usd, asset: 'eth', side: 'buy' }; },
      preview: (_i, ctx) => { seen.push(ctx.orderFacts); return 'p'; }, execute: () => 1,
    });
    const registry = createToolRegistry({ tools: [t], hooks: [{ name: 'spy', before: (c) => { seen.push(c.orderFacts); } }] });
    await registry.dispatch('count_buy', { usd: 5 });
    expect(computed).toBe(1);
    expect(seen).toEqual([{ notionalUsd: 5, asset: 'ETH', side: 'buy' }, { notionalUsd: 5, asset: 'ETH', side: 'buy' }]);
  });
});

describe('client order ids are unique per session, call and input', () => {
  it("session B's call_1 is placed as its own order, never answered with session A's fill", async () => {
    const { call, registry, balances } = setup();
    const run = async (sessionId: string, amountUsd: number) => {
      const args = { symbol: 'ETH', amountUsd, intent: `buy ${amountUsd} USD of ETH`, confirm: true };
      const first = await call(ctxOf('user', sessionId), 'buy_token', args, { toolCallId: 'call_1' });
      await registry.approvals.decide(first.approval!.approvalId, { approved: true });
      return call(ctxOf('user', sessionId), 'buy_token', args, { toolCallId: 'call_1', approvalId: first.approval!.approvalId });
    };
    const a = await run('session-a', 50);
    const b = await run('session-b', 400);
    expect(a.data).toMatchObject({ executed: true, status: 'filled' });
    expect(b.data).toMatchObject({ executed: true, status: 'filled' });
    expect(b.data.orderId).not.toBe(a.data.orderId);
    expect(b.data.fill.notionalUsd).toBeCloseTo(400, 0);
    expect((await balances()).USDC).toBeCloseTo(10_000 - 450, 0);
  });

  it('a replay of the same call is reported as a duplicate, not as a new execution', async () => {
    const { call, registry, balances } = setup();
    const args = { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', confirm: true };
    const ctx = ctxOf('user', 'replay');
    const first = await call(ctx, 'buy_token', args, { toolCallId: 'call_7' });
    await registry.approvals.decide(first.approval!.approvalId, { approved: true });
    const done = await call(ctx, 'buy_token', args, { toolCallId: 'call_7', approvalId: first.approval!.approvalId });
    expect(done.data.executed).toBe(true);
    // The CONFIRM_ONCE session grant lets the identical call through again: the provider sees the same key.
    const again = await call(ctx, 'buy_token', args, { toolCallId: 'call_7' });
    expect(again.data).toMatchObject({ executed: false, duplicate: true, status: 'duplicate', orderId: done.data.orderId });
    expect((await balances()).USDC).toBeCloseTo(9_950, 0);
    // A different amount under the same call id is a different order.
    const other = await call(ctx, 'buy_token', { ...args, amountUsd: 60, intent: 'buy 60 USD of ETH' }, { toolCallId: 'call_7' });
    expect(other.data).toMatchObject({ executed: true, status: 'filled' });
  });
});
