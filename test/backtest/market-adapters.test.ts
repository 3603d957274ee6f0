/**
 * The engine's market and trading adapters as the agent uses them (one implementation for every strategy): symbols
 * only once listed, stablecoins at 1 USD, candles with the bars' interval, orders `queued` until the engine fills
 * them, and `Strategy.onFill` reporting each fill with the very intent it filled.
 */
import { describe, expect, it } from 'vitest';
import {
  type Bar, createBacktestClock, createBacktestMarket, createBacktestTradingProvider, createBarSet, type Fill, listedSymbols, type OrderIntent, orderIdOfIntent, runBacktest, withClock,
} from '@minara/agent/backtest';

const DAY = 86_400_000;
const T0 = Date.UTC(2021, 0, 1);
const bar = (symbol: string, i: number, base: number): Bar => ({ symbol, time: T0 + i * DAY, open: base + i, high: base + i + 2, low: base + i - 1, close: base + i + 0.5, volume: 1_000 });
// AAA trades from day 0; BBB is listed on day 2.
const bars = () => createBarSet([...Array.from({ length: 5 }, (_, i) => bar('AAA', i, 100)), ...Array.from({ length: 3 }, (_, i) => bar('BBB', i + 2, 50))]);

describe('the engine market and trading adapters', () => {
  it('know a symbol only once it has traded, price stablecoins at 1 USD and label candles with the bars\' interval', async () => {
    const clock = createBacktestClock();
    const market = createBacktestMarket(clock);
    const seen: Array<{ index: number; listed: string[]; search: string[]; bbb: string }> = [];
    const strategy = withClock({
      name: 'reads',
      async decide(view) {
        const bbb = await market.getPrice('bbb').then((q) => String(q.priceUsd), (e: Error) => e.message);
        seen.push({ index: view.index, listed: listedSymbols(view), search: (await market.searchTokens!('', { limit: 10 })).map((t) => t.symbol), bbb });
        if (view.index === 4) {
          expect((await market.getPrice('USDC')).priceUsd).toBe(1);
          const ohlcv = await market.getOhlcv!('aaa', { interval: '1h', limit: 3 });
          expect(ohlcv).toMatchObject({ symbol: 'AAA', interval: '1d' });
          expect(ohlcv.candles.map((c) => c.t)).toEqual([T0 + 2 * DAY, T0 + 3 * DAY, T0 + 4 * DAY]);
          expect(await market.lookupToken!({ symbol: 'bbb' })).toMatchObject({ symbol: 'BBB' });
        }
        return [];
      },
    }, clock);
    await runBacktest({ bars: bars(), strategy, baselines: false });
    expect(seen[0]).toMatchObject({ listed: ['AAA'], search: ['AAA'] });
    expect(seen[0]!.bbb).toMatch(/no BBB market at 2021-01-02.*symbols trading: AAA/);
    expect(seen[2]).toMatchObject({ listed: ['AAA', 'BBB'], search: ['AAA', 'BBB'], bbb: '52.5' });
  });

  it('a spot order is queued with an estimate; the engine fills it at the next open and onFill hands back the same intent', async () => {
    const clock = createBacktestClock();
    const trading = createBacktestTradingProvider(clock, { feeBps: 10 });
    const fills: Array<{ fill: Fill; intent: OrderIntent }> = [];
    const placed: OrderIntent[] = [];
    const strategy = withClock({
      name: 'orders',
      async decide(view) {
        if (view.index === 0) {
          const r = await trading.executeSpot({ from: 'USDC', to: 'AAA', amountUsd: 1000, clientOrderId: 'c1' });
          expect(r).toMatchObject({ status: 'queued', source: 'backtest:next-bar', fill: { price: 100.5, feeUsd: 1 } });
          // More than the cash: queued here, rejected by the engine at the fill, never reported as a fill.
          await trading.executeSpot({ from: 'USDC', to: 'AAA', amountUsd: 50_000, clientOrderId: 'c2' });
          await expect(trading.executeSpot({ from: 'USDC', to: 'BBB', amountUsd: 10, clientOrderId: 'c3' })).rejects.toThrow(/no BBB market/);
        }
        const out = trading.drain();
        placed.push(...out);
        return out;
      },
      onFill: (fill, intent) => fills.push({ fill, intent }),
    }, clock);
    const result = await runBacktest({ bars: bars(), strategy, baselines: false });
    expect(placed.map(orderIdOfIntent)).toEqual(['c1', 'c2']);
    expect(result.strategy.rejected.map((r) => r.rule)).toEqual(['insufficient_cash']);
    expect(fills).toHaveLength(1);
    expect(fills[0]!.intent).toBe(placed[0]);
    expect(fills[0]!.fill).toEqual(result.strategy.fills[0]);
    expect(fills[0]!.fill).toMatchObject({ price: 101, time: T0 + DAY });
    expect(orderIdOfIntent({ symbol: 'AAA', side: 'buy', notionalUsd: 1 })).toBeUndefined();
  });
});
