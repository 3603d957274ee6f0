/**
 * Performance statistics in empyrical's conventions (the library quantstats and pyfolio build on), so numbers
 * match what Lean, backtrader and empyrical users read. Returns are simple per-bar returns of equity, the first
 * measured against the initial cash; annualisation uses `periodsPerYear`; the risk-free rate is annual, turned
 * into a per-period rate by division. Every formula is in docs/backtest.md.
 */
// vega-statistics ships no type declarations; the two functions used are typed by the cast below, here rather than
// in an ambient .d.ts that every program compiling these sources (the web app, the docs' programs) would have to include.
// @ts-ignore TS7016: no declaration file for 'vega-statistics'
import * as vegaStatistics from 'vega-statistics';
import { createSeededRandom, mixSeed } from './prng';
import type { BacktestMetrics, Fill, RejectedOrder, Trade } from './types';

const { cumulativeNormal, quantileNormal } = vegaStatistics as {
  /** Normal CDF at `value` (West 2005, double precision). */
  cumulativeNormal(value: number, mean?: number, stdev?: number): number;
  /** Normal quantile of `p` (Giles' erfinv). */
  quantileNormal(p: number, mean?: number, stdev?: number): number;
};

/** Simple returns of an equity curve, the first against `initial`. */
export function equityReturns(equity: ArrayLike<number>, initial: number): Float64Array {
  const r = new Float64Array(equity.length);
  let prev = initial;
  for (let i = 0; i < equity.length; i++) {
    const e = equity[i] as number;
    r[i] = prev !== 0 ? e / prev - 1 : 0;
    prev = e;
  }
  return r;
}

function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] as number;
  return x.length ? s / x.length : Number.NaN;
}

function std(x: ArrayLike<number>, ddof = 1): number {
  const m = mean(x);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += ((x[i] as number) - m) ** 2;
  return x.length - ddof > 0 ? Math.sqrt(s / (x.length - ddof)) : Number.NaN;
}

/** empyrical `cum_returns_final` − 1: the total compounded return. */
export function totalReturn(r: ArrayLike<number>): number {
  let v = 1;
  for (let i = 0; i < r.length; i++) v *= 1 + (r[i] as number);
  return v - 1;
}

/** empyrical `annual_return` (CAGR): (1 + total)^(periodsPerYear / n) − 1. */
export function cagr(r: ArrayLike<number>, periodsPerYear: number): number {
  if (r.length === 0) return Number.NaN;
  return (1 + totalReturn(r)) ** (periodsPerYear / r.length) - 1;
}

/** empyrical `annual_volatility`: sample standard deviation (ddof 1) × √periodsPerYear. */
export function annualVolatility(r: ArrayLike<number>, periodsPerYear: number): number {
  return std(r) * Math.sqrt(periodsPerYear);
}

/** empyrical `sharpe_ratio`: mean(r − rf) / std(r − rf, ddof 1) × √periodsPerYear; `rf` per period. */
export function sharpeRatio(r: ArrayLike<number>, periodsPerYear: number, rfPerPeriod = 0): number {
  if (r.length < 2) return Number.NaN;
  const m = mean(r) - rfPerPeriod;
  const sd = std(r); // the standard deviation is unchanged by subtracting a constant rate
  return sd === 0 ? Number.NaN : (m / sd) * Math.sqrt(periodsPerYear);
}

/** empyrical `downside_risk`: √mean(min(r − required, 0)²) × √periodsPerYear. */
export function downsideRisk(r: ArrayLike<number>, periodsPerYear: number, required = 0): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) s += Math.min((r[i] as number) - required, 0) ** 2;
  return Math.sqrt(s / r.length) * Math.sqrt(periodsPerYear);
}

/** empyrical `sortino_ratio`: mean(r − required) × periodsPerYear / downside risk. */
export function sortinoRatio(r: ArrayLike<number>, periodsPerYear: number, required = 0): number {
  if (r.length < 2) return Number.NaN;
  const dr = downsideRisk(r, periodsPerYear, required);
  let m = 0;
  for (let i = 0; i < r.length; i++) m += (r[i] as number) - required;
  m /= r.length;
  return dr === 0 ? Number.POSITIVE_INFINITY : (m * periodsPerYear) / dr;
}

/** empyrical `max_drawdown` (a negative fraction) and the longest time under water in periods. */
export function maxDrawdown(r: ArrayLike<number>): { maxDrawdown: number; duration: number } {
  let v = 100;
  let peak = 100;
  let mdd = 0;
  let under = 0;
  let longest = 0;
  for (let i = 0; i < r.length; i++) {
    v *= 1 + (r[i] as number);
    if (v >= peak) {
      peak = v;
      under = 0;
    } else {
      under++;
      if (under > longest) longest = under;
      const dd = (v - peak) / peak;
      if (dd < mdd) mdd = dd;
    }
  }
  return { maxDrawdown: mdd, duration: longest };
}

/** empyrical `calmar_ratio`: CAGR / |max drawdown| (NaN without a drawdown). */
export function calmarRatio(r: ArrayLike<number>, periodsPerYear: number): number {
  const dd = maxDrawdown(r).maxDrawdown;
  return dd < 0 ? cagr(r, periodsPerYear) / Math.abs(dd) : Number.NaN;
}

/**
 * Standard normal CDF: West (2005)'s double-precision form of Hart's algorithm, from vega-statistics (already in
 * the tree through `vega`, which draws the reports' charts), accurate to about 1e-15.
 */
export function normalCdf(x: number): number {
  return cumulativeNormal(x, 0, 1);
}

/** Standard normal quantile (probit), through Giles' double-precision inverse error function from vega-statistics. */
export function normalQuantile(p: number): number {
  return quantileNormal(p, 0, 1);
}

/** Sample skewness (biased, as Bailey & López de Prado use) and kurtosis (non-excess: 3 for a normal). */
export function skewKurt(r: ArrayLike<number>): { skew: number; kurtosis: number } {
  const m = mean(r);
  let m2 = 0, m3 = 0, m4 = 0;
  for (let i = 0; i < r.length; i++) {
    const d = (r[i] as number) - m;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m2 /= r.length;
  m3 /= r.length;
  m4 /= r.length;
  return { skew: m2 > 0 ? m3 / m2 ** 1.5 : 0, kurtosis: m2 > 0 ? m4 / (m2 * m2) : 3 };
}

/**
 * Probabilistic Sharpe ratio (Bailey & López de Prado 2012): the probability that the true Sharpe exceeds
 * `benchmark`, given n observations of a per-period Sharpe `sr` with skewness and (non-excess) kurtosis:
 * Φ((sr − sr*)·√(n − 1) / √(1 − skew·sr + (kurtosis − 1)/4·sr²)). All Sharpe ratios per period (not annualised).
 */
export function probabilisticSharpe(sr: number, n: number, skew: number, kurtosis: number, benchmark = 0): number {
  const denom = Math.sqrt(1 - skew * sr + ((kurtosis - 1) / 4) * sr * sr);
  if (!(n > 1) || !(denom > 0) || Number.isNaN(sr)) return Number.NaN;
  return normalCdf(((sr - benchmark) * Math.sqrt(n - 1)) / denom);
}

/**
 * Minimum track record length (Bailey & López de Prado 2012): how many observations a per-period Sharpe `sr`
 * with these skewness and (non-excess) kurtosis needs before PSR(benchmark) reaches `confidence`:
 * 1 + (1 − γ3·sr + (γ4 − 1)/4·sr²)·(z_confidence / (sr − benchmark))². NaN when `sr` is not above the benchmark
 * (no track record is long enough) or `confidence` is not in (0, 1).
 */
export function minTrackRecordLength(sr: number, skew: number, kurtosis: number, benchmark = 0, confidence = 0.95): number {
  if (!(sr > benchmark) || !(confidence > 0 && confidence < 1)) return Number.NaN;
  const z = normalQuantile(confidence);
  return 1 + (1 - skew * sr + ((kurtosis - 1) / 4) * sr * sr) * (z / (sr - benchmark)) ** 2;
}

/**
 * 95 % interval of the annualised Sharpe ratio by the stationary block bootstrap (Politis & Romano 1994):
 * blocks start at uniform positions (wrapping round) with geometric lengths of mean ⌈n^(1/3)⌉, which keeps
 * the returns' autocorrelation; 1000 resamples (250 above 250,000 bars), percentile interval, seeded. Block sums come from prefix sums,
 * so a resample costs O(n / block).
 */
export function sharpeBootstrapCi(r: ArrayLike<number>, periodsPerYear: number, rfPerPeriod: number, seed: number, resamples = r.length > 250_000 ? 250 : 1000): { ci: [number, number]; method: string } {
  const n = r.length;
  const block = Math.max(1, Math.ceil(Math.cbrt(n)));
  const B = resamples;
  const method = `stationary block bootstrap (Politis-Romano), ${B} resamples, mean block ${block} bars, percentile`;
  if (n < 3) return { ci: [Number.NaN, Number.NaN], method };
  const S = new Float64Array(n + 1);
  const Q = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    const x = (r[i] as number) - rfPerPeriod;
    S[i + 1] = (S[i] as number) + x;
    Q[i + 1] = (Q[i] as number) + x * x;
  }
  const rng = createSeededRandom(mixSeed(seed, 0xb007));
  const logq = Math.log(1 - 1 / block);
  const stats = new Float64Array(B);
  const ann = Math.sqrt(periodsPerYear);
  for (let b = 0; b < B; b++) {
    let taken = 0, s = 0, s2 = 0;
    while (taken < n) {
      const start = rng.uint32() % n;
      let len = block === 1 ? 1 : 1 + Math.floor(Math.log((rng.uint32() + 1) / 4294967296) / logq);
      if (len > n - taken) len = n - taken;
      const end = start + len;
      if (end <= n) {
        s += (S[end] as number) - (S[start] as number);
        s2 += (Q[end] as number) - (Q[start] as number);
      } else {
        s += (S[n] as number) - (S[start] as number) + (S[end - n] as number);
        s2 += (Q[n] as number) - (Q[start] as number) + (Q[end - n] as number);
      }
      taken += len;
    }
    const m = s / n;
    const v = (s2 - n * m * m) / (n - 1);
    stats[b] = v > 0 ? (m / Math.sqrt(v)) * ann : 0;
  }
  stats.sort();
  const q = (f: number) => stats[Math.min(B - 1, Math.max(0, Math.round(f * (B - 1))))] as number;
  return { ci: [q(0.025), q(0.975)], method };
}

/** Inputs of {@link computeMetrics}. */
export interface MetricsInput {
  readonly equity: Float64Array;
  readonly exposure: Float64Array;
  readonly initialCash: number;
  readonly fills: readonly Fill[];
  readonly trades: readonly Trade[];
  readonly rejected: readonly RejectedOrder[];
  readonly feesUsd: number;
  readonly periodsPerYear: number;
  readonly riskFreeRate: number;
  readonly seed: number;
}

/** Every metric of a run (see {@link BacktestMetrics}). */
export function computeMetrics(m: MetricsInput): BacktestMetrics {
  const r = equityReturns(m.equity, m.initialCash);
  const ppy = m.periodsPerYear;
  const rf = m.riskFreeRate / ppy;
  const dd = maxDrawdown(r);
  const sharpe = sharpeRatio(r, ppy, rf);
  const srPeriod = sharpe / Math.sqrt(ppy);
  const { skew, kurtosis } = skewKurt(r);
  const { ci, method } = sharpeBootstrapCi(r, ppy, rf, m.seed);
  let traded = 0;
  for (const f of m.fills) traded += Math.abs(f.notionalUsd);
  let eqSum = 0, expFrac = 0;
  for (let i = 0; i < m.equity.length; i++) {
    const e = m.equity[i] as number;
    eqSum += e;
    expFrac += e > 0 ? (m.exposure[i] as number) / e : 0;
  }
  const years = m.equity.length / ppy;
  const wins = m.trades.filter((t) => t.pnlUsd > 0);
  const grossWin = wins.reduce((a, t) => a + t.pnlUsd, 0);
  const grossLoss = m.trades.filter((t) => t.pnlUsd < 0).reduce((a, t) => a - t.pnlUsd, 0);
  const blocked: Record<string, number> = {};
  for (const x of m.rejected) blocked[x.rule] = (blocked[x.rule] ?? 0) + 1;
  const sortedBlocked = Object.fromEntries(Object.entries(blocked).sort(([a], [b]) => (a < b ? -1 : 1)));
  const cg = cagr(r, ppy);
  return {
    totalReturn: totalReturn(r),
    cagr: cg,
    volatility: annualVolatility(r, ppy),
    sharpe,
    sharpeCi95: ci,
    sharpeCiMethod: method,
    probabilisticSharpe: probabilisticSharpe(srPeriod, r.length, skew, kurtosis),
    sortino: sortinoRatio(r, ppy, rf),
    maxDrawdown: dd.maxDrawdown,
    maxDrawdownDuration: dd.duration,
    calmar: dd.maxDrawdown < 0 ? cg / Math.abs(dd.maxDrawdown) : Number.NaN,
    turnover: eqSum > 0 && years > 0 ? traded / (eqSum / m.equity.length) / years : 0,
    exposure: m.equity.length ? expFrac / m.equity.length : 0,
    trades: m.trades.length,
    winRate: m.trades.length ? wins.length / m.trades.length : Number.NaN,
    profitFactor: grossLoss > 0 ? grossWin / grossLoss : grossWin > 0 ? Number.POSITIVE_INFINITY : Number.NaN,
    feesUsd: m.feesUsd,
    blockedOrders: sortedBlocked,
    finalEquity: m.equity.length ? (m.equity[m.equity.length - 1] as number) : m.initialCash,
    periods: r.length,
    periodsPerYear: ppy,
  };
}
