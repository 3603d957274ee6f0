/**
 * Backtest engine speed (issue 39). Anchor: backtrader publishes ~14.7k bars/s on CPython.
 *   - engine pass, 1,000,000 daily bars, one symbol: the no-op strategy (goal ≥ 1,000,000 bars/s) and sma-cross 10/30
 *     (goal ≥ 300,000 bars/s), measured on `simulate` (the per-bar loop: fills, marking, the strategy);
 *   - the same end to end through `runBacktest` (metrics and the bootstrap included, baselines off);
 *   - 10 symbols × 10 years of daily bars end to end: CSV files written, loaded (parsed, hashed, validated),
 *     run with baselines, the run folder written without the PNG (goal < 1 s);
 *   - memory: heap + array buffers per million bars held (the five Float64 columns and the equity curve).
 * Run: `npm run bench -- backtest`. `BENCH_BACKTEST_RUNS` sets the runs (default 3; the best run counts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { generateBars, loadBars, noopStrategy, runBacktest, smaCross, writeBacktestReport } from '../../src/backtest/index';
import { simulate, type EngineConfig } from '../../src/backtest/engine';
import { fmt, machine, table } from '../lib/stats';

const runs = Number(process.env['BENCH_BACKTEST_RUNS'] ?? 3);
const N = 1_000_000;
const cfg: EngineConfig = { initialCash: 10_000, feeBps: 10, feeMinUsd: 0, slippage: { kind: 'fixed', bps: 5 }, fill: 'next-open', volumeCap: Number.POSITIVE_INFINITY, limits: undefined, seed: 1, progressEvery: 0 };

const heapBefore = process.memoryUsage();
const bars = generateBars({ seed: 1, bars: N });
const heapAfter = process.memoryUsage();
const mbPerMillion = ((heapAfter.heapUsed + heapAfter.arrayBuffers - heapBefore.heapUsed - heapBefore.arrayBuffers) / 1e6) * (1_000_000 / N);

async function best(fn: () => Promise<unknown>): Promise<number> {
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    b = Math.min(b, performance.now() - t);
  }
  return b;
}

const noopMs = await best(() => simulate(bars, noopStrategy(), cfg));
const smaMs = await best(() => simulate(bars, smaCross({ fast: 10, slow: 30 }), cfg));
const noopE2e = await best(() => runBacktest({ bars, strategy: noopStrategy(), baselines: false }));
const smaE2e = await best(() => runBacktest({ bars, strategy: smaCross({ fast: 10, slow: 30 }), baselines: false }));

// 10 symbols × 10 years of daily bars, from CSV files to the run folder.
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bt-bench-'));
const ten = generateBars({ seed: 2, symbols: 10, bars: 3650 });
const files = ten.symbols.map((symbol, s) => {
  const lines = ['time,open,high,low,close,volume'];
  for (let i = 0; i < ten.times.length; i++) lines.push(`${new Date(ten.times[i] as number).toISOString()},${ten.open[s]![i]},${ten.high[s]![i]},${ten.low[s]![i]},${ten.close[s]![i]},${ten.volume[s]![i]}`);
  const file = path.join(dir, `${symbol}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { path: file, symbol };
});
const e2eMs = await best(async () => {
  const loaded = await loadBars(files);
  const result = await runBacktest({ bars: loaded, strategy: smaCross({ fast: 10, slow: 30 }), fees: { bps: 10 } });
  await writeBacktestReport(result, path.join(dir, 'run'), { png: false });
});
rmSync(dir, { recursive: true, force: true });

const rate = (ms: number) => N / (ms / 1000);
console.log(`backtest engine (${machine()}, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}; best of ${runs})`);
console.log(
  table(
    ['case', 'time ms', 'bars/s'],
    [
      ['no-op, engine pass, 1M bars', fmt(noopMs, 0), fmt(rate(noopMs), 0)],
      ['sma-cross 10/30, engine pass, 1M bars', fmt(smaMs, 0), fmt(rate(smaMs), 0)],
      ['no-op, runBacktest (metrics incl.), 1M bars', fmt(noopE2e, 0), fmt(rate(noopE2e), 0)],
      ['sma-cross, runBacktest (metrics incl.), 1M bars', fmt(smaE2e, 0), fmt(rate(smaE2e), 0)],
      ['10 symbols × 10 y daily: CSV → run folder (baselines, no PNG)', fmt(e2eMs, 0), fmt((36_500 / e2eMs) * 1000, 0)],
    ],
  ),
);
console.log(`memory: ${fmt(mbPerMillion, 1)} MB per million bars held (five Float64 columns + clock)`);
console.log(
  `target: no-op ≥ 1,000,000 bars/s (${fmt(rate(noopMs), 0)} ${rate(noopMs) >= 1e6 ? 'met' : 'NOT met'}); sma-cross ≥ 300,000 bars/s (${fmt(rate(smaMs), 0)} ${rate(smaMs) >= 3e5 ? 'met' : 'NOT met'}); ` +
    `10×10y end to end < 1000 ms (${fmt(e2eMs, 0)} ms ${e2eMs < 1000 ? 'met' : 'NOT met'}); backtrader anchor ~14,700 bars/s`,
);
