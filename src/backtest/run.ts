/**
 * `runBacktest`: the strategy and its baselines (buy-and-hold, random) over the same bars under the same
 * costs and limits, each run's metrics, and the config that reruns it.
 */
import { MinaraError } from '../errors/minara-error';
import { periodsPerYear as defaultPeriodsPerYear } from './calendar';
import { type EngineConfig, resolveLimits, simulate } from './engine';
import { computeMetrics } from './metrics';
import { buyAndHold, randomStrategy } from './strategies';
import type { BacktestOptions, BacktestResult, BacktestRunConfig, SlippageModel, Strategy, StrategyRun } from './types';

const positive = (v: unknown, field: string, allowZero = false) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) throw new MinaraError('INVALID_ARGUMENT', `${field}: expected a ${allowZero ? 'non-negative' : 'positive'} number, got ${String(v)}`);
  return v;
};

/** Check and default the options (every bad field named). */
export function resolveOptions(o: BacktestOptions): { engine: EngineConfig; periodsPerYear: number; riskFreeRate: number; baselines: boolean } {
  if (!o || typeof o !== 'object') throw new MinaraError('INVALID_ARGUMENT', 'options: expected { bars, strategy, … }');
  if (!o.bars || !(o.bars.times instanceof Float64Array) || o.bars.times.length === 0) throw new MinaraError('INVALID_ARGUMENT', 'bars: expected a BarSet (createBarSet, loadBars or generateBars) with at least one bar');
  if (!o.strategy || typeof o.strategy.decide !== 'function' || typeof o.strategy.name !== 'string') throw new MinaraError('INVALID_ARGUMENT', 'strategy: expected { name, decide(view) }');
  const slippage: SlippageModel = o.slippage ?? { kind: 'fixed', bps: 0 };
  if (slippage.kind === 'fixed') positive(slippage.bps, 'slippage.bps', true);
  else if (slippage.kind === 'volume-share') positive(slippage.bpsPerVolumeShare, 'slippage.bpsPerVolumeShare', true);
  else throw new MinaraError('INVALID_ARGUMENT', `slippage.kind: expected 'fixed' or 'volume-share', got ${JSON.stringify((slippage as { kind: unknown }).kind)}`);
  const fill = o.fill ?? 'next-open';
  if (fill !== 'next-open' && fill !== 'same-close') throw new MinaraError('INVALID_ARGUMENT', `fill: expected 'next-open' or 'same-close', got ${JSON.stringify(fill)}`);
  const volumeCap = o.volumeCap ?? Number.POSITIVE_INFINITY;
  if (volumeCap !== Number.POSITIVE_INFINITY && !(volumeCap > 0 && volumeCap <= 1)) throw new MinaraError('INVALID_ARGUMENT', `volumeCap: expected a share of bar volume in (0, 1], got ${String(volumeCap)}`);
  const seed = o.seed ?? 1;
  if (!Number.isInteger(seed)) throw new MinaraError('INVALID_ARGUMENT', `seed: expected an integer, got ${String(seed)}`);
  const feeBps = positive(o.fees?.bps ?? 10, 'fees.bps', true);
  if (feeBps >= 10_000) throw new MinaraError('INVALID_ARGUMENT', `fees.bps: expected less than 10000, got ${feeBps}`);
  const engine: EngineConfig = {
    initialCash: positive(o.initialCash ?? 10_000, 'initialCash'),
    feeBps,
    feeMinUsd: positive(o.fees?.minUsd ?? 0, 'fees.minUsd', true),
    slippage,
    fill,
    volumeCap,
    limits: resolveLimits(o.limits),
    seed,
    onProgress: o.onProgress,
    progressEvery: o.progressEvery ?? 0,
  };
  const periodsPerYear = o.periodsPerYear ?? defaultPeriodsPerYear(o.bars.calendar, o.bars.intervalMs);
  positive(periodsPerYear, 'periodsPerYear');
  const riskFreeRate = o.riskFreeRate ?? 0;
  if (!Number.isFinite(riskFreeRate)) throw new MinaraError('INVALID_ARGUMENT', `riskFreeRate: expected an annual rate (0.04 = 4 %), got ${String(riskFreeRate)}`);
  return { engine, periodsPerYear, riskFreeRate, baselines: o.baselines ?? true };
}

async function runOne(o: BacktestOptions, strategy: Strategy, engine: EngineConfig, periodsPerYear: number, riskFreeRate: number): Promise<StrategyRun> {
  const sim = await simulate(o.bars, strategy, engine);
  const metrics = computeMetrics({ ...sim, initialCash: engine.initialCash, periodsPerYear, riskFreeRate, seed: engine.seed });
  return { name: strategy.name, params: { ...(strategy.params ?? {}) }, equity: sim.equity, exposure: sim.exposure, fills: sim.fills, orders: sim.orders, rejected: sim.rejected, trades: sim.trades, metrics };
}

/**
 * Run `strategy` over the bars and, unless `baselines: false`, buy-and-hold and a seeded random strategy under
 * the same costs and limits.
 *
 * @example
 * ```ts
 * import { generateBars, runBacktest, smaCross } from '@minara/agent/backtest';
 * const result = await runBacktest({ bars: generateBars({ seed: 7, regime: 'bull' }), strategy: smaCross({ fast: 10, slow: 30 }) });
 * console.log(result.strategy.metrics.sharpe, result.baselines.map((b) => b.metrics.totalReturn));
 * ```
 */
export async function runBacktest(o: BacktestOptions): Promise<BacktestResult> {
  const { engine, periodsPerYear, riskFreeRate, baselines } = resolveOptions(o);
  const strategy = await runOne(o, o.strategy, engine, periodsPerYear, riskFreeRate);
  const quiet = { ...engine, onProgress: undefined };
  const base = baselines ? [await runOne(o, buyAndHold(), quiet, periodsPerYear, riskFreeRate), await runOne(o, randomStrategy(), quiet, periodsPerYear, riskFreeRate)] : [];
  const strategyReport = o.strategy.report ? await o.strategy.report() : undefined;
  const bars = o.bars;
  const config: BacktestRunConfig = {
    version: 1,
    createdAt: new Date().toISOString(),
    strategy: { name: o.strategy.name, params: { ...(o.strategy.params ?? {}) } },
    initialCash: engine.initialCash,
    fees: { bps: engine.feeBps, minUsd: engine.feeMinUsd },
    slippage: engine.slippage,
    fill: engine.fill,
    volumeCap: Number.isFinite(engine.volumeCap) ? engine.volumeCap : null,
    limits: o.limits ? { ...o.limits } : null,
    seed: engine.seed,
    periodsPerYear,
    riskFreeRate,
    symbols: bars.symbols,
    intervalMs: bars.intervalMs,
    calendar: bars.calendar,
    start: new Date(bars.times[0] as number).toISOString(),
    end: new Date((bars.times[bars.times.length - 1] as number) + bars.intervalMs).toISOString(),
    data: bars.sources,
    timestampFields: ['createdAt'],
    ...(strategyReport?.config ? { strategyReport: strategyReport.config } : {}),
  };
  return { strategy, baselines: base, bars, config, ...(strategyReport ? { strategyReport } : {}) };
}
