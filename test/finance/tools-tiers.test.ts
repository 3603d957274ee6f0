import { describe, expect, it } from 'vitest';
import { createToolCallContext, PermissionTier } from '@minara/agent';
import { ctxOf, setup } from './helpers';

describe('finance tools: tiers and preview/confirm', () => {
  it('read-only tools run from any source and say simulated', async () => {
    const { call } = setup();
    for (const source of ['user', 'cron', 'webhook'] as const) {
      const r = await call(ctxOf(source), 'get_price', { symbol: 'eth' });
      expect(r.ok).toBe(true);
      expect(r.data).toMatchObject({ symbol: 'ETH', simulated: true, source: 'simulated' });
      expect(r.data.priceUsd).toBeGreaterThan(0);
    }
    for (const [name, args] of [
      ['search_tokens', { query: 'pepe' }], ['lookup_token', { symbol: 'USDC' }], ['get_trending', {}], ['get_fear_greed', {}],
      ['get_portfolio', {}], ['minara_total_balance', {}], ['get_perps_positions', {}], ['minara_pnl', {}], ['get_ohlcv', { symbol: 'BTC' }],
    ] as const) {
      const r = await call(ctxOf('cron'), name, args);
      expect(r.ok, `${name}: ${JSON.stringify(r)}`).toBe(true);
      expect(JSON.stringify(r.data)).toContain('"simulated":true');
    }
  });

  it('declares the tiers of the spec', () => {
    const { registry } = setup();
    const tier = (n: string) => registry.get(n)!.permissionTier;
    for (const n of ['get_price', 'search_tokens', 'lookup_token', 'get_trending', 'get_fear_greed', 'get_portfolio', 'minara_total_balance', 'get_perps_positions', 'minara_pnl']) {
      expect(tier(n), n).toBe(PermissionTier.READ_ONLY);
    }
    for (const n of ['swap_tokens', 'buy_token', 'sell_token']) expect(tier(n)).toBe(PermissionTier.CONFIRM_ONCE);
    for (const n of ['open_perps_position', 'close_perps_position']) expect(tier(n)).toBe(PermissionTier.ALWAYS_CONFIRM);
    for (const n of ['transfer_token', 'withdraw_funds']) expect(tier(n)).toBe(PermissionTier.MANUAL_ONLY);
    for (const n of ['swap_tokens', 'buy_token', 'sell_token', 'open_perps_position', 'close_perps_position', 'transfer_token', 'withdraw_funds']) {
      expect(registry.get(n)!.isFundMoving, n).toBe(true);
    }
    // tierFor only raises the floor
    expect(registry.get('buy_token')!.tierFor!({ symbol: 'ETH', amountUsd: 10 })).toBe(PermissionTier.CONFIRM_ONCE);
    expect(registry.get('buy_token')!.tierFor!({ symbol: 'ETH', amountUsd: 501 })).toBe(PermissionTier.ALWAYS_CONFIRM);
  });

  it('without confirm a fund-moving tool previews and moves nothing', async () => {
    const { call, balances } = setup();
    const before = await balances();
    const r = await call(ctxOf(), 'buy_token', { symbol: 'ETH', amountUsd: 100 });
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({ preview: true, executed: false, asset: 'ETH', simulated: true, from: 'USDC', to: 'ETH' });
    expect(r.data.route).toContain('USDC');
    expect(r.data.expectedOutput).toBeGreaterThan(0);
    expect(r.data.feeUsd).toBeCloseTo(0.1, 5);
    expect(r.data.slippageBps).toBeGreaterThan(0);
    expect(r.data.resultingExposure).toMatchObject({ asset: 'ETH', exposureBeforeUsd: 0, exposureAfterUsd: 100 });
    expect(await balances()).toEqual(before);
    for (const [name, args] of [
      ['sell_token', { symbol: 'USDC', amount: 5, receive: 'USDT' }],
      ['open_perps_position', { symbol: 'BTC', side: 'long', sizeUsd: 200, leverage: 2 }],
      ['transfer_token', { asset: 'USDC', amount: 5, to: '0x00000000000000000000000000000000000000aa' }],
      ['withdraw_funds', { asset: 'USDC', amount: 5, destination: 'bank-1' }],
    ] as const) {
      const p = await call(ctxOf(), name, args);
      expect(p.ok, JSON.stringify(p)).toBe(true);
      expect(p.data.preview).toBe(true);
    }
    expect(await balances()).toEqual(before);
  });

  it('CONFIRM_ONCE: first small buy needs approval, then the session grant covers the next', async () => {
    const { call, approveAndRun, balances } = setup();
    const ctx = ctxOf('user', 's1');
    const { first, result } = await approveAndRun(ctx, 'buy_token', { symbol: 'ETH', amountUsd: 100, intent: 'buy 100 USD of ETH', confirm: true });
    expect(first.code).toBe('APPROVAL_REQUIRED');
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(result.data).toMatchObject({ executed: true, status: 'filled', simulated: true });
    const second = await call(ctx, 'buy_token', { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', confirm: true });
    expect(second.ok).toBe(true);
    const b = await balances();
    expect(b.USDC).toBeCloseTo(10_000 - 150, 6);
    expect(b.ETH).toBeGreaterThan(0);
  });

  it('ALWAYS_CONFIRM above confirmOnceMaxUsd: every call, even after a session grant; sells sized in units are raised once priced', async () => {
    const { call, approveAndRun, registry } = setup({ limits: { confirmOnceMaxUsd: 200 } });
    const ctx = ctxOf('user', 's2');
    await approveAndRun(ctx, 'buy_token', { symbol: 'SOL', amountUsd: 100, intent: 'buy 100 USD of SOL', confirm: true });
    for (let i = 0; i < 2; i++) {
      const big = await call(ctx, 'buy_token', { symbol: 'ETH', amountUsd: 1000, intent: 'buy 1000 USD of ETH', confirm: true });
      expect(big.code).toBe('APPROVAL_REQUIRED');
      const apr = await registry.approvals.get(big.approval!.approvalId);
      expect(apr!.tier).toBe(PermissionTier.ALWAYS_CONFIRM);
    }
    const ethHeld = 0; // no ETH yet; sell SOL by units priced above 200 USD? SOL holding is ~100 USD, so buy more first
    expect(ethHeld).toBe(0);
    await approveAndRun(ctx, 'buy_token', { symbol: 'ETH', amountUsd: 1000, intent: 'buy 1000 USD of ETH', confirm: true });
    const port = JSON.parse(JSON.stringify((await call(ctx, 'get_portfolio', {})).data));
    const eth = port.holdings.find((h: { asset: string }) => h.asset === 'ETH');
    const sell = await call(ctx, 'sell_token', { symbol: 'ETH', amount: eth.amount / 2, intent: `sell ${eth.amount / 2} ETH`, confirm: true });
    expect(sell.code).toBe('APPROVAL_REQUIRED');
    expect((await registry.approvals.get(sell.approval!.approvalId))!.tier).toBe(PermissionTier.ALWAYS_CONFIRM);
    const audit = await registry.queryAudit({ toolName: 'finance_safety' });
    expect(audit.some((a) => a.argsJson.includes('raise_tier'))).toBe(true);
  });

  it('perps are ALWAYS_CONFIRM: open and close each need approval; fills update positions', async () => {
    const { call, approveAndRun } = setup();
    const ctx = ctxOf('user', 's3');
    const open = await approveAndRun(ctx, 'open_perps_position', { symbol: 'BTC', side: 'long', sizeUsd: 1000, leverage: 3, intent: 'long BTC 1000 USD 3x', confirm: true });
    expect(open.first.code).toBe('APPROVAL_REQUIRED');
    expect(open.result.ok, JSON.stringify(open.result)).toBe(true);
    const again = await call(ctx, 'open_perps_position', { symbol: 'BTC', side: 'long', sizeUsd: 100, leverage: 3, intent: 'long BTC 100 USD 3x', confirm: true });
    expect(again.code).toBe('APPROVAL_REQUIRED');
    const pos = await call(ctx, 'get_perps_positions', {});
    expect(pos.data.positions).toHaveLength(1);
    expect(pos.data.positions[0]).toMatchObject({ symbol: 'BTC', side: 'long', leverage: expect.closeTo(3, 3) });
    const close = await approveAndRun(ctx, 'close_perps_position', { symbol: 'BTC', intent: 'close BTC', confirm: true });
    expect(close.first.code).toBe('APPROVAL_REQUIRED');
    expect(close.result.ok, JSON.stringify(close.result)).toBe(true);
    expect((await call(ctx, 'get_perps_positions', {})).data.positions).toHaveLength(0);
  });

  it('MANUAL_ONLY transfers: approval every call from a user; refused from cron and webhook (even a preview)', async () => {
    const { call, approveAndRun, balances } = setup();
    const to = '0x00000000000000000000000000000000000000aa';
    for (const source of ['cron', 'webhook', 'workflow'] as const) {
      for (const confirm of [true, undefined]) {
        const r = await call(ctxOf(source), 'transfer_token', { asset: 'USDC', amount: 10, to, intent: 'transfer 10 USDC', ...(confirm ? { confirm } : {}) });
        expect(r.ok).toBe(false);
        expect(r.code).toBe('MANUAL_ONLY_AUTONOMOUS');
      }
      const w = await call(ctxOf(source), 'withdraw_funds', { asset: 'USDC', amount: 10, destination: 'bank', intent: 'withdraw 10 USDC', confirm: true });
      expect(w.code).toBe('MANUAL_ONLY_AUTONOMOUS');
    }
    expect((await balances()).USDC).toBe(10_000);
    const ctx = ctxOf('user', 's4');
    const t = await approveAndRun(ctx, 'transfer_token', { asset: 'USDC', amount: 10, to, intent: 'transfer 10 USDC', confirm: true });
    expect(t.first.code).toBe('APPROVAL_REQUIRED');
    expect(t.result.ok).toBe(true);
    const again = await call(ctx, 'transfer_token', { asset: 'USDC', amount: 10, to, intent: 'transfer 10 USDC', confirm: true });
    expect(again.code).toBe('APPROVAL_REQUIRED');
    expect((await balances()).USDC).toBe(9_990);
  });

  it('emergency_stop: anyone engages (even while engaged); trading halts; release needs an approval and never runs from cron', async () => {
    const { call, registry, approveAndRun } = setup();
    const engaged = await call(ctxOf('cron'), 'emergency_stop', { action: 'engage', reason: 'BTC crash' });
    expect(engaged.data).toMatchObject({ engaged: true, reason: 'BTC crash' });
    expect((await call(ctxOf('webhook'), 'emergency_stop', { action: 'engage', reason: 'again' })).ok).toBe(true);
    const ctx = ctxOf('user', 's5');
    const buy = await call(ctx, 'buy_token', { symbol: 'ETH', amountUsd: 10, intent: 'buy 10 USD of ETH', confirm: true });
    expect(buy.code).toBe('EMERGENCY_STOP');
    expect((await call(ctx, 'get_price', { symbol: 'BTC' })).ok).toBe(true);
    expect((await call(ctxOf('cron'), 'emergency_stop', { action: 'release' })).code).toBe('MANUAL_ONLY_AUTONOMOUS');
    const rel = await approveAndRun(ctx, 'emergency_stop', { action: 'release' });
    expect(rel.first.code).toBe('APPROVAL_REQUIRED');
    expect(rel.result.ok).toBe(true);
    expect(await registry.emergencyStop.status()).toEqual({ engaged: false });
    const releaseRows = await registry.queryAudit({ toolName: 'emergency_stop', decision: 'approved' });
    expect(releaseRows[0]!.tier).toBe(4); // MANUAL_ONLY, recorded as such
    const denied = await call(ctx, 'emergency_stop', { action: 'engage', reason: 'x' });
    expect(denied.ok).toBe(true);
    // A release whose approval is denied does nothing.
    const r2 = await call(ctx, 'emergency_stop', { action: 'release' }, { toolCallId: 'rel-2' });
    await registry.approvals.decide(r2.approval!.approvalId, { approved: false });
    const r3 = await call(ctx, 'emergency_stop', { action: 'release' }, { toolCallId: 'rel-2', approvalId: r2.approval!.approvalId });
    expect(r3.code).toBe('APPROVAL_DENIED');
    expect((await registry.emergencyStop.status()).engaged).toBe(true);
  });

  it("emergency_stop (the tool an MCP host or the REPL's model calls) never releases a stop an operator engaged on the user, even approved", async () => {
    const { registry, approveAndRun } = setup();
    const ctx = createToolCallContext({ sessionId: 's6', source: 'user', userId: 'bob' });
    await registry.emergencyStop.engage('compliance hold', { userId: 'bob', by: 'ops' });
    const rel = await approveAndRun(ctx, 'emergency_stop', { action: 'release' });
    expect(rel.result).toMatchObject({ ok: false, code: 'STOP_RELEASE_FORBIDDEN' });
    expect(await registry.emergencyStop.userStatus('bob')).toMatchObject({ engaged: true, engagedBy: 'operator' });
    // Bob's own stop, engaged through the tool, he releases through it.
    await registry.emergencyStop.release({ userId: 'bob', by: 'ops' });
    expect((await approveAndRun(ctx, 'emergency_stop', { action: 'engage', reason: 'mine' })).first.ok).toBe(true);
    expect(await registry.emergencyStop.userStatus('bob')).toMatchObject({ engaged: true, engagedBy: 'user', by: 'bob' });
    const own = await approveAndRun(ctx, 'emergency_stop', { action: 'release' });
    expect(own.result.ok).toBe(true);
    expect((await registry.emergencyStop.userStatus('bob')).engaged).toBe(false);
  });
});
