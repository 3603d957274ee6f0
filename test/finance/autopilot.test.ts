/**
 * Autopilot on the paper adapter through the background runner: a DCA and a grid strategy start only after the
 * user's approval (ALWAYS_CONFIRM), each order is a cron call of buy_token / sell_token through the gate and the
 * safety stack, admitted by a stored grant narrowed to the strategy (another cron call is refused), the budget ends
 * a DCA, failures pause it, stop revokes its grants. Account info and perps sub-accounts (list, sweep) too.
 */
import {
  createBackgroundRunner, createToolCallContext, createToolRegistry, parseEnvelope, type ToolCallContext,
} from '@minara/agent';
import { autopilotIntent, createFinancePack, type MarketDataProvider } from '@minara/agent/finance';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

type Env = { ok: boolean; data?: Record<string, unknown>; code?: string; error?: string; approval?: { approvalId: string } };

function setup() {
  const clock = createFakeClock('2026-03-02T00:00:30.000Z');
  const storage = createInMemoryStorage({ now: clock.now });
  const prices: Record<string, number> = { ETH: 3_000, SOL: 155, BTC: 90_000 };
  const market: MarketDataProvider = {
    name: 'test', simulated: true,
    getPrice: async (symbol) => {
      const p = prices[symbol.toUpperCase()];
      if (p === undefined) throw new Error(`no price for ${symbol}`);
      return { symbol: symbol.toUpperCase(), priceUsd: p, at: clock.now().toISOString(), source: 'test', simulated: true };
    },
    // Token safety verifies every token it trades.
    lookupToken: async ({ symbol }) => (symbol ? { symbol: symbol.toUpperCase(), name: symbol, chain: 'ethereum', address: 'native', verified: true, stable: symbol.toUpperCase() === 'USDC', source: 'test', simulated: true } : undefined),
  };
  const pack = createFinancePack({ storage, market, now: clock.now });
  const registry = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage, now: clock.now }));
  const runner = createBackgroundRunner({ storage, jobs: pack.jobs, now: clock.now, owner: 'test' });
  let n = 0;
  const call = async (ctx: ToolCallContext, name: string, args: unknown, extra: { approvalId?: string; toolCallId?: string } = {}): Promise<Env> =>
    parseEnvelope(await registry.dispatch(name, args, { context: ctx, toolCallId: extra.toolCallId ?? `c${++n}`, ...(extra.approvalId ? { approvalId: extra.approvalId } : {}) })) as unknown as Env;
  const approveAndRun = async (ctx: ToolCallContext, name: string, args: unknown): Promise<{ first: Env; result: Env }> => {
    const toolCallId = `c${++n}`;
    const first = await call(ctx, name, args, { toolCallId });
    if (first.ok || first.code !== 'APPROVAL_REQUIRED') return { first, result: first };
    await registry.approvals.decide(first.approval!.approvalId, { approved: true });
    return { first, result: await call(ctx, name, args, { toolCallId, approvalId: first.approval!.approvalId }) };
  };
  const balances = async () => Object.fromEntries((await storage.trading.listBalances('paper')).map((b) => [b.asset, b.amount]));
  /** Advance the clock and let the runner run what is due. */
  const run = async (ms: number) => {
    clock.advance(ms);
    await runner.tick();
    await runner.idle();
  };
  const user = createToolCallContext({ sessionId: 'ap-user', source: 'user', userId: 'default' });
  return { clock, storage, prices, pack, registry, runner, call, approveAndRun, balances, run, user };
}

describe('autopilot', () => {
  it('DCA: starts after approval, buys on schedule through the gate as cron calls, ends when the budget is spent', async () => {
    const t = setup();
    const args = { kind: 'dca', symbol: 'eth', amountUsd: 50, maxTotalUsd: 150, every: '1d', days: 10 };
    const { first, result } = await t.approveAndRun(t.user, 'autopilot_start', args);
    expect(first.code).toBe('APPROVAL_REQUIRED');
    expect(result.ok).toBe(true);
    const id = (result.data!.started as { id: string }).id;
    expect((await t.pack.autopilot!.list())[0]).toMatchObject({ id, status: 'active', symbol: 'ETH', grantIds: [expect.any(String)] });

    await t.run(60_000);
    expect((await t.balances()).ETH).toBeGreaterThan(0.016);
    const audit = await t.registry.queryAudit({ toolName: 'buy_token' });
    expect(audit.find((a) => a.decision === 'allowed' && a.source === 'cron')).toBeDefined();

    // Not due again until a day later.
    await t.run(60_000);
    expect((await t.pack.autopilot!.list())[0]!.orders).toBe(1);
    await t.run(86_400_000);
    await t.run(86_400_000);
    const s = (await t.pack.autopilot!.list())[0]!;
    expect(s).toMatchObject({ orders: 3, spentUsd: 150 });
    await t.run(86_400_000);
    expect((await t.pack.autopilot!.list())[0]).toMatchObject({ status: 'completed', statusReason: 'its budget is spent', orders: 3 });
    expect((await t.registry.grants.list({ toolName: 'buy_token' })).length).toBe(0);
    const runs = await t.runner.runs({ jobId: 'finance:autopilot' });
    expect(runs.some((r) => r.outcome === 'ok' && r.detail === '1 orders (0 failed)')).toBe(true);
  });

  it('the grant admits only the strategy\'s own orders; the emergency stop fails them and pauses the strategy; stop revokes the grant', async () => {
    const t = setup();
    const { result } = await t.approveAndRun(t.user, 'autopilot_start', { kind: 'dca', symbol: 'ETH', amountUsd: 50, maxTotalUsd: 1_000, every: '1h' });
    const id = (result.data!.started as { id: string }).id;
    const cron = createToolCallContext({ sessionId: 'other-cron', source: 'cron' });
    // Another autonomous call, even of the same size and asset, states another intent: no grant covers it.
    const own = autopilotIntent({ id, symbol: 'ETH', amountUsd: 50 }, 'buy');
    expect(await t.call(cron, 'buy_token', { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', confirm: true })).toMatchObject({ ok: false, code: 'GRANT_REQUIRED' });
    expect(await t.call(cron, 'buy_token', { symbol: 'ETH', amountUsd: 500, intent: own.replace('50 USD', '500 USD'), confirm: true })).toMatchObject({ ok: false, code: 'GRANT_REQUIRED' });
    expect(await t.call(cron, 'buy_token', { symbol: 'BTC', amountUsd: 50, intent: own.replace('ETH', 'BTC'), confirm: true })).toMatchObject({ ok: false, code: 'GRANT_REQUIRED' });

    await t.registry.emergencyStop.engage('test');
    for (let i = 0; i < 3; i++) await t.run(3_600_000);
    const paused = (await t.pack.autopilot!.list())[0]!;
    expect(paused.status).toBe('paused');
    expect(paused.lastError).toContain('EMERGENCY_STOP');
    expect(paused.orders).toBe(0);
    await t.registry.emergencyStop.release();

    // Resume needs approval again (ALWAYS_CONFIRM), then orders flow.
    expect((await t.call(t.user, 'autopilot_modify', { id, paused: false })).code).toBe('APPROVAL_REQUIRED');
    expect((await t.approveAndRun(t.user, 'autopilot_modify', { id, paused: false })).result.ok).toBe(true);
    await t.run(3_600_000);
    expect((await t.pack.autopilot!.list())[0]).toMatchObject({ status: 'active', orders: 1 });

    const stopped = await t.call(t.user, 'autopilot_stop', { id });
    expect(stopped).toMatchObject({ ok: true, data: { stopped: { status: 'stopped' } } });
    expect(await t.registry.grants.list({ toolName: 'buy_token' })).toEqual([]);
    await t.run(3_600_000);
    expect((await t.pack.autopilot!.list())[0]!.orders).toBe(1);
    // An autonomous turn cannot start one (ALWAYS_CONFIRM needs a stored grant).
    expect(await t.call(createToolCallContext({ sessionId: 'cron-2', source: 'cron' }), 'autopilot_start', { kind: 'dca', symbol: 'ETH', amountUsd: 10, maxTotalUsd: 10, every: '1d' })).toMatchObject({ ok: false, code: 'GRANT_REQUIRED' });
    // Bad plans are refused with the field named.
    expect((await t.approveAndRun(t.user, 'autopilot_start', { kind: 'dca', symbol: 'ETH', amountUsd: 50_000, maxTotalUsd: 100_000, every: '1d' })).result).toMatchObject({ ok: false, error: expect.stringContaining('amountUsd') });
    expect((await t.approveAndRun(t.user, 'autopilot_start', { kind: 'grid', symbol: 'SOL', amountUsd: 10, maxTotalUsd: 100 })).result).toMatchObject({ ok: false, error: expect.stringContaining('lower, upper and levels') });
  });

  it('grid: buys a level down, sells a level up, one level per tick', async () => {
    const t = setup();
    const { result } = await t.approveAndRun(t.user, 'autopilot_start', { kind: 'grid', symbol: 'SOL', amountUsd: 20, maxTotalUsd: 100, lower: 100, upper: 200, levels: 11 });
    expect(result.ok).toBe(true);
    expect((await t.registry.grants.list({})).map((g) => g.toolName).sort()).toEqual(['buy_token', 'sell_token']);
    await t.run(60_000); // first look: level 5 (150-160), no order
    expect((await t.pack.autopilot!.list())[0]).toMatchObject({ lastLevel: 5, orders: 0 });
    t.prices.SOL = 133; // level 3: two levels down, walked one per tick
    await t.run(60_000);
    await t.run(60_000);
    const afterDrop = (await t.pack.autopilot!.list())[0]!;
    expect(afterDrop).toMatchObject({ lastLevel: 3, orders: 2, spentUsd: 40 });
    expect(afterDrop.history.map((o) => o.side)).toEqual(['buy', 'buy']);
    const solAfterBuys = (await t.balances()).SOL!;
    t.prices.SOL = 146; // level 4: one level up, sell one level's worth
    await t.run(60_000);
    const afterRise = (await t.pack.autopilot!.list())[0]!;
    expect(afterRise.history.map((o) => o.side)).toEqual(['buy', 'buy', 'sell']);
    expect(afterRise.lastLevel).toBe(4);
    expect((await t.balances()).SOL!).toBeLessThan(solAfterBuys);
    await t.run(60_000); // no level change: nothing
    expect((await t.pack.autopilot!.list())[0]!.orders).toBe(3);
  });
});

describe('account info and perps sub-accounts', () => {
  it('get_account_info reports the paper account, limits and sub-accounts; a sweep previews, then moves funds after approval; never from cron', async () => {
    const t = setup();
    const info = await t.call(t.user, 'get_account_info', {});
    expect(info).toMatchObject({
      ok: true,
      data: { accountId: 'paper', provider: 'paper', simulated: true, totalValueUsd: 10_000, emergencyStop: { engaged: false }, limits: { maxTradeUsd: expect.any(Number) } },
    });
    expect((info.data!.perpsSubAccounts as unknown[])).toEqual([{ id: 'paper', main: true, valueUsd: 10_000 }, { id: 'perps-1', valueUsd: 500 }]);
    const list = await t.call(t.user, 'list_perps_sub_accounts', {});
    expect(list.data!.subAccounts).toEqual([
      { id: 'paper', main: true, balances: { USDC: 10_000 }, valueUsd: 10_000 },
      { id: 'perps-1', balances: { USDC: 500 }, valueUsd: 500 },
    ]);
    const args = { subAccountId: 'perps-1', asset: 'USDC', intent: 'transfer 500 USDC from perps-1 to main' };
    const preview = await t.call(t.user, 'sweep_perps_sub_account', args);
    expect(preview).toMatchObject({ ok: true, data: { preview: true, from: 'perps-1', to: 'paper', amount: 500 } });
    expect((await t.balances()).USDC).toBe(10_000);
    const { first, result } = await t.approveAndRun(t.user, 'sweep_perps_sub_account', { ...args, confirm: true });
    expect(first.code).toBe('APPROVAL_REQUIRED');
    expect(result).toMatchObject({ ok: true, data: { executed: true, fill: { symbol: 'USDC', quantity: 500 } } });
    expect((await t.balances()).USDC).toBe(10_500);
    expect((await t.storage.trading.listBalances('paper:perps-1')).length).toBe(0);
    expect(await t.call(t.user, 'sweep_perps_sub_account', args)).toMatchObject({ ok: false, error: expect.stringContaining('holds no USDC') });
    const cron = await t.call(createToolCallContext({ sessionId: 'sweep-cron', source: 'cron' }), 'sweep_perps_sub_account', { ...args, amount: 1, confirm: true });
    expect(cron.ok).toBe(false);
    expect(await t.call(t.user, 'sweep_perps_sub_account', { subAccountId: 'nope' })).toMatchObject({ ok: false, error: expect.stringContaining('no sub-account "nope"') });
  });
});
