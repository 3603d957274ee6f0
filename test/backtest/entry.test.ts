/** Every public name of @minara/agent/backtest is reachable through the entry (the rest are exercised elsewhere). */
import { describe, expect, it } from 'vitest';
import * as bt from '@minara/agent/backtest';

describe('@minara/agent/backtest entry', () => {
  it('exports the parsers, the seeded random source, the report pieces and the accounting helpers', async () => {
    expect(bt.parseGenericCsv('time,open,high,low,close\n2024-01-01,1,2,0.5,1.5\n', { symbol: 'X' }).bars[0]).toMatchObject({ symbol: 'X', close: 1.5, volume: 0 });
    expect(bt.parseBinanceKlines([[1704067200000, '1', '2', '0.5', '1.5', '10']], { symbol: 'B' }).bars[0]?.volume).toBe(10);
    expect(bt.parseCoinGeckoMarketChart({ prices: [[1704067200000, 2]] }, { symbol: 'C' }).bars[0]?.high).toBe(2);
    expect(bt.parseHyperliquidCandles([{ t: 1704067200000, o: '1', h: '2', l: '0.5', c: '1.5', v: '3', s: 'H' }]).bars[0]?.symbol).toBe('H');
    expect(bt.parseBars('{"prices":[[1704067200000,2]]}', { symbol: 'C' }).format).toBe('coingecko');
    expect(bt.hashBars([{ symbol: 'X', time: 0, open: 1, high: 1, low: 1, close: 1, volume: 0 }])).toMatch(/^[0-9a-f]{64}$/);
    const rng = bt.createSeededRandom(5);
    const again = bt.createSeededRandom(5);
    expect([rng.next(), rng.normal(), rng.int(10)]).toEqual([again.next(), again.normal(), again.int(10)]);
    expect(bt.builtinStrategy('noop').name).toBe('noop');
    expect(() => bt.builtinStrategy('agent')).toThrow(/strategy: expected/);
    const result = await bt.runBacktest({ bars: bt.generateBars({ seed: 2, bars: 120 }), strategy: bt.momentumStrategy({ lookback: 5 }) });
    expect(bt.metricsDocument(result)).toMatchObject({ strategy: 'momentum' });
    expect(Object.keys(bt.reportCsvFiles(result)).sort()).toEqual(['equity_curve.csv', 'orders.csv', 'rejected_orders.csv', 'trades.csv']);
    expect(bt.stableJson({ a: Number.NaN, b: Infinity })).toBe('{\n  "a": null,\n  "b": null\n}\n');
    expect(await bt.renderReportHtml(result)).toContain('<h1>Backtest: momentum</h1>');
    expect(bt.backtestMarkdown(result)).toMatch(/\| Metric \| momentum \| buy-and-hold \| random \|/);
    expect(bt.computeMetrics({ equity: result.strategy.equity, exposure: result.strategy.exposure, initialCash: 10_000, fills: result.strategy.fills, trades: result.strategy.trades, rejected: [], feesUsd: 0, periodsPerYear: 365, riskFreeRate: 0, seed: 1 }).sharpe).toBeCloseTo(result.strategy.metrics.sharpe, 12);
    const out = { quantity: 0, price: 0, notionalUsd: 0, feeUsd: 0, cashDelta: 0, basisDelta: 0, realizedPnlUsd: 0 };
    const costs = { feeBps: 10, feeMinUsd: 2, slippageBps: 5 };
    bt.buyWithCash(bt.cashForQuantity(3, 100, costs), 100, costs, out);
    expect(out.quantity).toBeCloseTo(3, 12);
    expect(bt.BACKTEST_REPORT_TITLE_PREFIX).toBe('Backtest: ');
  });
});
