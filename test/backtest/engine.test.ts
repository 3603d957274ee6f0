import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Bar, buyAndHold, buyWithCash, createBacktestClock, createBacktestMarket, createBacktestTradingProvider, createBarSet, generateBars, momentumStrategy, noopStrategy,
  type OrderIntent, type PointInTimeView, randomStrategy, runBacktest, sellQuantity, smaCross, type Strategy, withClock, writeBacktestReport,
} from '@minara/agent/backtest';
import { planSpot } from '../../src/finance/paper-accounting';
import type { TradingAccountState } from '../../src/storage/trading-types';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
/** Bars with known opens and closes: open = 100 + i, close = 100.5 + i. */
function ladder(n: number, volume = 1_000): Bar[] {
  return Array.from({ length: n }, (_, i) => ({ symbol: 'AAA', time: T0 + i * DAY, open: 100 + i, high: 101.5 + i, low: 99 + i, close: 100.5 + i, volume }));
}
/** A strategy that places the given orders at the given bar indexes. */
function scripted(plan: Record<number, OrderIntent[]>): Strategy {
  return { name: 'scripted', decide: (view) => plan[view.index] ?? [] };
}

describe('point in time', () => {
  it('a strategy sees only bars at or before now, and cannot ask for the future', async () => {
    const bars = generateBars({ seed: 5, symbols: ['A', 'B'], bars: 50 });
    const seen: number[] = [];
    const spy: Strategy = {
      name: 'spy',
      decide(view: PointInTimeView) {
        const all = view.bars('A');
        expect(all.length).toBe(view.index + 1);
        expect(all[all.length - 1]?.time).toBe(bars.times[view.index]);
        expect(all.every((b) => b.time + bars.intervalMs <= view.now)).toBe(true);
        expect(view.closes('B').length).toBe(view.index + 1);
        expect(view.last('A')?.close).toBe(bars.close[0]![view.index]);
        expect(() => view.value('A', 'close', -1)).toThrow(/cannot read the future/);
        seen.push(view.index);
        return [];
      },
    };
    await runBacktest({ bars, strategy: spy, baselines: false });
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

describe('fills', () => {
  const set = () => createBarSet(ladder(6));
  it('decides on bar t and fills at bar t+1 open by default; same-close only when asked', async () => {
    const r = await runBacktest({ bars: set(), strategy: scripted({ 1: [{ symbol: 'AAA', side: 'buy', quantity: 10 }] }), fees: { bps: 0 }, baselines: false });
    expect(r.strategy.fills[0]).toMatchObject({ time: T0 + 2 * DAY, price: 102, quantity: 10 });
    const c = await runBacktest({ bars: set(), strategy: scripted({ 1: [{ symbol: 'AAA', side: 'buy', quantity: 10 }] }), fees: { bps: 0 }, fill: 'same-close', baselines: false });
    expect(c.strategy.fills[0]).toMatchObject({ time: T0 + 2 * DAY, price: 101.5 });
    expect(r.strategy.equity[1]).toBe(10_000); // nothing filled yet at the decision bar
  });

  it('charges fees in bps with a minimum, and fixed or volume-share slippage', async () => {
    const buy = (bps: number, minUsd: number) => runBacktest({ bars: set(), strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', notionalUsd: 1000 }] }), fees: { bps, minUsd }, baselines: false });
    expect((await buy(10, 0)).strategy.fills[0]?.feeUsd).toBeCloseTo(1, 12);
    expect((await buy(10, 5)).strategy.fills[0]?.feeUsd).toBe(5);
    const slipped = await runBacktest({ bars: set(), strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', quantity: 5 }] }), fees: { bps: 0 }, slippage: { kind: 'fixed', bps: 50 }, baselines: false });
    expect(slipped.strategy.fills[0]?.price).toBeCloseTo(101 / (1 - 0.005), 9);
    expect(slipped.strategy.fills[0]?.quantity).toBeCloseTo(5, 9);
    const vol = await runBacktest({ bars: set(), strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', quantity: 50 }] }), fees: { bps: 0 }, slippage: { kind: 'volume-share', bpsPerVolumeShare: 100 }, baselines: false });
    expect(vol.strategy.fills[0]?.slippageBps).toBeCloseTo(5, 9); // 50 of 1000 = 5 % of volume → 5 bps
  });

  it('caps a fill at a share of the bar volume and records the partial fill', async () => {
    const r = await runBacktest({ bars: set(), strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', quantity: 300 }] }), fees: { bps: 0 }, volumeCap: 0.1, initialCash: 100_000, baselines: false });
    expect(r.strategy.fills[0]?.quantity).toBeCloseTo(100, 9);
    expect(r.strategy.orders[0]).toMatchObject({ status: 'partial', requestedQuantity: 300 });
  });

  it('refuses a sell beyond the position and a buy beyond the cash, each recorded by rule', async () => {
    const r = await runBacktest({
      bars: set(), baselines: false,
      strategy: scripted({ 0: [{ symbol: 'AAA', side: 'sell', quantity: 1 }, { symbol: 'AAA', side: 'buy', notionalUsd: 20_000 }, { symbol: 'ZZZ', side: 'buy', quantity: 1 }] }),
    });
    expect(r.strategy.rejected.map((x) => x.rule)).toEqual(['insufficient_position', 'insufficient_cash', 'invalid_order']);
    expect(r.strategy.metrics.blockedOrders).toEqual({ insufficient_cash: 1, insufficient_position: 1, invalid_order: 1 });
  });

  it('an order decided on the last bar stays unfilled (there is no next open)', async () => {
    const r = await runBacktest({ bars: set(), strategy: scripted({ 5: [{ symbol: 'AAA', side: 'buy', quantity: 1 }] }), baselines: false });
    expect(r.strategy.orders[0]?.status).toBe('unfilled');
    expect(r.strategy.fills).toEqual([]);
  });
});

describe("the finance pack's limits, enforced and recorded by rule", () => {
  it('blocks per-trade, concentration, exposure, deny-list and daily-loss breaches', async () => {
    const bars = createBarSet(ladder(8));
    const r = await runBacktest({
      bars, baselines: false, initialCash: 10_000, fees: { bps: 0 },
      limits: { maxTradeUsd: 2_000, maxAssetConcentrationPct: 30, maxTotalExposureUsd: 2_500, denyList: ['aaa'] },
      strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', notionalUsd: 3_000 }] }),
    });
    expect(r.strategy.rejected[0]?.rule).toBe('denyList');
    const rules = async (limits: object, intents: Record<number, OrderIntent[]>) => (await runBacktest({ bars, baselines: false, fees: { bps: 0 }, limits, strategy: scripted(intents) })).strategy.rejected.map((x) => x.rule);
    expect(await rules({ maxTradeUsd: 2_000 }, { 0: [{ symbol: 'AAA', side: 'buy', notionalUsd: 3_000 }] })).toEqual(['maxTradeUsd']);
    expect(await rules({ maxAssetConcentrationPct: 30 }, { 0: [{ symbol: 'AAA', side: 'buy', notionalUsd: 4_000 }] })).toEqual(['maxAssetConcentrationPct']);
    expect(await rules({ maxTotalExposureUsd: 2_500 }, { 0: [{ symbol: 'AAA', side: 'buy', notionalUsd: 2_000 }], 1: [{ symbol: 'AAA', side: 'buy', notionalUsd: 1_000 }] })).toEqual(['maxTotalExposureUsd']);
    expect(await rules({ maxSlippageBps: 10 }, {})).toEqual([]);
    // a losing round trip inside one day, then a buy the same day: blocked by the daily loss limit
    const falling = createBarSet(Array.from({ length: 6 }, (_, i) => ({ symbol: 'AAA', time: T0 + i * 3_600_000, open: 100 - 10 * i, high: 101 - 10 * i, low: 90 - 10 * i, close: 95 - 10 * i, volume: 1e6 })));
    const daily = await runBacktest({
      bars: falling, baselines: false, fees: { bps: 0 }, limits: { maxDailyLossUsd: 100 },
      strategy: scripted({ 0: [{ symbol: 'AAA', side: 'buy', quantity: 10 }], 2: [{ symbol: 'AAA', side: 'sell', quantity: 10 }], 3: [{ symbol: 'AAA', side: 'buy', quantity: 1 }] }),
    });
    expect(daily.strategy.rejected.map((x) => x.rule)).toEqual(['maxDailyLossUsd']);
    await expect(runBacktest({ bars, strategy: noopStrategy(), limits: { maxTradeUsd: -1 } })).rejects.toThrow(/limits.maxTradeUsd/);
  });
});

describe("accounting agrees with the paper engine's planSpot", () => {
  it('over random buys and sells, cash, position, cost basis and realised P&L match', () => {
    let seed = 11;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const state = (usd: number, qty: number, basis: number): TradingAccountState => ({
      account: { id: 'a', baseCurrency: 'USDC' } as TradingAccountState['account'],
      balances: [{ accountId: 'a', asset: 'USDC', amount: usd, costBasisUsd: usd, updatedAt: '' }, ...(qty > 0 ? [{ accountId: 'a', asset: 'ETH', amount: qty, costBasisUsd: basis, updatedAt: '' }] : [])],
      positions: [],
    });
    const out = { quantity: 0, price: 0, notionalUsd: 0, feeUsd: 0, cashDelta: 0, basisDelta: 0, realizedPnlUsd: 0 };
    for (let k = 0; k < 200; k++) {
      const mark = 50 + 100 * rnd();
      const slip = 30 * rnd();
      const feeBps = 20 * rnd();
      const amountIn = 10 + 1000 * rnd();
      const fee = (amountIn * feeBps) / 10_000;
      const plan = planSpot(state(5_000, 0, 0), { from: 'USDC', to: 'ETH', amountIn, priceIn: 1, priceOut: mark, slippageBps: slip, feeUsd: fee, at: '', baseCurrency: 'USDC' });
      buyWithCash(amountIn, mark, { feeBps, feeMinUsd: 0, slippageBps: slip }, out);
      if (!('fill' in plan)) throw new Error('rejected');
      expect(out.quantity).toBeCloseTo(plan.balances[1]!.amount, 9);
      expect(out.basisDelta).toBeCloseTo(plan.balances[1]!.costBasisUsd, 9);
      expect(out.realizedPnlUsd).toBeCloseTo(plan.fill.realizedPnlUsd, 9);
      expect(out.cashDelta).toBeCloseTo(plan.balances[0]!.amount, 9);
      const held = 1 + 10 * rnd();
      const basis = held * mark * (0.5 + rnd());
      const q = held * rnd();
      const sellFee = (q * mark * feeBps) / 10_000;
      const sp = planSpot(state(0, held, basis), { from: 'ETH', to: 'USDC', amountIn: q, priceIn: mark, priceOut: 1, slippageBps: slip, feeUsd: sellFee, at: '', baseCurrency: 'USDC' });
      sellQuantity(q, held, basis, mark, { feeBps, feeMinUsd: 0, slippageBps: slip }, out);
      if (!('fill' in sp)) throw new Error('rejected');
      expect(out.cashDelta).toBeCloseTo(sp.balances[1]!.amount, 9);
      expect(out.basisDelta).toBeCloseTo(sp.balances[0]!.costBasisUsd, 9);
      expect(out.realizedPnlUsd).toBeCloseTo(sp.fill.realizedPnlUsd, 9);
    }
  });
});

describe('strategies and baselines', () => {
  it('every run reports buy-and-hold and random under the same costs; built-ins are deterministic by seed', async () => {
    const bars = generateBars({ seed: 9, symbols: ['A', 'B'], bars: 400 });
    const a = await runBacktest({ bars, strategy: smaCross({ fast: 5, slow: 20 }), fees: { bps: 10 }, seed: 3 });
    expect(a.baselines.map((b) => b.name)).toEqual(['buy-and-hold', 'random']);
    expect(a.baselines[0]?.metrics.feesUsd).toBeCloseTo(10, 6); // 10 bps on the 10,000 USD bought once
    const b = await runBacktest({ bars, strategy: smaCross({ fast: 5, slow: 20 }), fees: { bps: 10 }, seed: 3 });
    expect(b.baselines[1]?.metrics.finalEquity).toBe(a.baselines[1]?.metrics.finalEquity);
    const c = await runBacktest({ bars, strategy: randomStrategy(), seed: 4, baselines: false });
    expect(c.strategy.metrics.finalEquity).not.toBe(a.baselines[1]?.metrics.finalEquity);
    const m = await runBacktest({ bars, strategy: momentumStrategy({ lookback: 10 }), baselines: false });
    expect(m.strategy.metrics.trades).toBeGreaterThan(0);
    const h = await runBacktest({ bars, strategy: buyAndHold(), fees: { bps: 0 }, baselines: false });
    const expected = 5_000 * (bars.close[0]![399]! / bars.open[0]![1]!) + 5_000 * (bars.close[1]![399]! / bars.open[1]![1]!);
    expect(h.strategy.metrics.finalEquity).toBeCloseTo(expected, 6);
    expect(() => smaCross({ fast: 30, slow: 10 })).toThrow(/slow: expected an integer greater than fast/);
  });

  it('an async decide (the agent) is awaited', async () => {
    const bars = generateBars({ seed: 1, bars: 30 });
    const r = await runBacktest({ bars, baselines: false, strategy: { name: 'async', decide: async (v) => (v.index === 2 ? [{ symbol: 'SYN', side: 'buy', notionalUsd: 100 }] : []) } });
    expect(r.strategy.fills).toHaveLength(1);
  });
});

describe('market and trading adapters over the clock', () => {
  it('prices and candles come from the current bar; spot orders become intents filled at the next open', async () => {
    const bars = createBarSet(ladder(5));
    const clock = createBacktestClock();
    const market = createBacktestMarket(clock);
    const trading = createBacktestTradingProvider(clock);
    const prices: number[] = [];
    const strategy = withClock({
      name: 'tools',
      async decide(view) {
        prices.push((await market.getPrice('aaa')).priceUsd);
        const ohlcv = await market.getOhlcv!('AAA', { limit: 3 });
        expect(ohlcv.candles.at(-1)?.t).toBe(bars.times[view.index]);
        if (view.index === 1) {
          const r = await trading.executeSpot({ from: 'USDC', to: 'AAA', amountUsd: 500, clientOrderId: 'c1' });
          expect(r.source).toBe('backtest:next-bar');
          expect((await trading.executeSpot({ from: 'USDC', to: 'AAA', amountUsd: 500, clientOrderId: 'c1' })).status).toBe('duplicate');
        }
        if (view.index === 3) expect((await trading.getPortfolio()).holdings.find((h) => h.asset === 'AAA')?.amount).toBeGreaterThan(0);
        return trading.drain();
      },
    }, clock);
    const r = await runBacktest({ bars, strategy, baselines: false });
    expect(prices).toEqual([100.5, 101.5, 102.5, 103.5, 104.5]);
    expect(r.strategy.fills).toHaveLength(1);
    expect(r.strategy.fills[0]).toMatchObject({ time: T0 + 2 * DAY, price: 102 });
    await expect(trading.executeTransfer({ asset: 'USDC', amount: 1, to: 'x', kind: 'transfer', clientOrderId: 't' })).rejects.toThrow(/not available in a backtest/);
  });
});

describe('the run folder', () => {
  it('writes every file, and the same run twice is byte-identical apart from createdAt', async () => {
    const bars = generateBars({ seed: 21, symbols: ['BTC', 'ETH'], bars: 300 });
    const dirs = [mkdtempSync(path.join(tmpdir(), 'bt-a-')), mkdtempSync(path.join(tmpdir(), 'bt-b-'))];
    for (const dir of dirs) {
      const r = await runBacktest({ bars, strategy: smaCross({ fast: 5, slow: 20 }), fees: { bps: 10, minUsd: 1 }, slippage: { kind: 'fixed', bps: 5 }, limits: { maxTradeUsd: 3_000 }, seed: 2 });
      await writeBacktestReport(r, dir, { png: false });
    }
    const files = readdirSync(dirs[0]!).sort();
    expect(files).toEqual(['equity_curve.csv', 'metrics.json', 'orders.csv', 'rejected_orders.csv', 'report.html', 'run_config.json', 'trades.csv']);
    for (const f of files) {
      const [a, b] = dirs.map((d) => readFileSync(path.join(d, f), 'utf8'));
      if (f === 'run_config.json') {
        const [ca, cb] = [JSON.parse(a!), JSON.parse(b!)];
        expect(ca.timestampFields).toEqual(['createdAt']);
        delete ca.createdAt;
        delete cb.createdAt;
        expect(ca).toEqual(cb);
      } else expect(a, f).toBe(b);
    }
    const config = JSON.parse(readFileSync(path.join(dirs[0]!, 'run_config.json'), 'utf8'));
    expect(config).toMatchObject({ strategy: { name: 'sma-cross', params: { fast: 5, slow: 20 } }, fees: { bps: 10, minUsd: 1 }, fill: 'next-open', seed: 2, limits: { maxTradeUsd: 3000 } });
    expect(config.data[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    const metrics = JSON.parse(readFileSync(path.join(dirs[0]!, 'metrics.json'), 'utf8'));
    for (const k of ['totalReturn', 'cagr', 'volatility', 'sharpe', 'sharpeCi95', 'probabilisticSharpe', 'sortino', 'maxDrawdown', 'maxDrawdownDuration', 'calmar', 'turnover', 'exposure', 'trades', 'winRate', 'profitFactor', 'feesUsd', 'blockedOrders'])
      expect(metrics.metrics, k).toHaveProperty(k);
    expect(Object.keys(metrics.baselines)).toEqual(['buy-and-hold', 'random']);
    expect(metrics.metrics.blockedOrders.maxTradeUsd).toBeGreaterThan(0);
    const html = readFileSync(path.join(dirs[0]!, 'report.html'), 'utf8');
    expect(html).toContain('id="chart-spec"');
    expect(html).toContain('id="drawdown-spec"');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/); // self-contained: nothing loaded from elsewhere
    expect(html).toContain("default-src 'none'");
    expect(readFileSync(path.join(dirs[0]!, 'rejected_orders.csv'), 'utf8')).toMatch(/maxTradeUsd/);
  });
});
