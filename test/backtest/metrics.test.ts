/**
 * Metrics against published reference values: empyrical's own test vectors (tests/test_stats.py, the
 * `mixed_returns`, `positive_returns`, `negative_returns`, `weekly_returns` and `monthly_returns` series and the
 * expected numbers there, carried over as numbers), the probabilistic Sharpe ratio and minimum track record
 * length against the worked examples of Bailey & López de Prado (2012), "The Sharpe Ratio Efficient Frontier"
 * (to full precision as esvhd/pypbo's test suite carries them), and the indicators against trading-signals.
 */
import { describe, expect, it } from 'vitest';
import { EMA, ROC, SMA } from 'trading-signals';
import {
  annualVolatility, cagr, calmarRatio, downsideRisk, ema, equityReturns, generateBars, maxDrawdown, minTrackRecordLength, momentum, normalCdf, normalQuantile, probabilisticSharpe, sharpeBootstrapCi, sharpeRatio, sma, sortinoRatio,
  totalReturn,
} from '@minara/agent/backtest';

const pct = (xs: number[]) => xs.map((x) => x / 100);
// empyrical's mixed_returns is [nan, 1, 10, -4, 2, 3, 2, 1, -10] %: the nan-aware statistics (sharpe, volatility,
// sortino, downside risk) see the 8 numbers; the compounding ones (annual return, max drawdown, calmar) count 9
// periods with the nan as 0.
const mixed8 = pct([1, 10, -4, 2, 3, 2, 1, -10]);
const mixed9 = pct([0, 1, 10, -4, 2, 3, 2, 1, -10]);
const positive = pct([1, 2, 1, 1, 1, 1, 1, 1, 1]);
const negative = pct([0, -6, -7, -1, -9, -2, -6, -8, -5]);
const weekly = pct([0, 1, 10, -4, 2, 3, 2, 1, -10]);
const DAILY = 252, WEEKLY = 52, MONTHLY = 12;
const DP8 = 8; // empyrical asserts to 8 decimal places

describe('empyrical test vectors', () => {
  it('sharpe_ratio', () => {
    expect(sharpeRatio(mixed8, DAILY)).toBeCloseTo(1.7238613961706866, DP8);
    expect(sharpeRatio(positive, DAILY)).toBeCloseTo(52.915026221291804, DP8);
    expect(sharpeRatio(negative, DAILY)).toBeCloseTo(-24.406808633910085, DP8);
    expect(sharpeRatio([0.01], DAILY)).toBeNaN();
  });
  it('annual_volatility', () => {
    expect(annualVolatility(mixed8, DAILY)).toBeCloseTo(0.9136465399704637, DP8);
    expect(annualVolatility(weekly, WEEKLY)).toBeCloseTo(0.38851569394870583, DP8);
    expect(annualVolatility(weekly, MONTHLY)).toBeCloseTo(0.18663690238892558, DP8);
  });
  it('annual_return (CAGR), max_drawdown, calmar_ratio, cum_returns_final', () => {
    expect(cagr(mixed9, DAILY)).toBeCloseTo(1.9135925373194231, DP8);
    expect(cagr(weekly, WEEKLY)).toBeCloseTo(0.24690830513998208, DP8);
    expect(cagr(weekly, MONTHLY)).toBeCloseTo(0.052242061386048144, DP8);
    expect(maxDrawdown(mixed9).maxDrawdown).toBeCloseTo(-0.1, DP8);
    expect(maxDrawdown(pct([10, -10, 10])).maxDrawdown).toBeCloseTo(-0.1, DP8);
    expect(maxDrawdown(negative).maxDrawdown).toBeCloseTo(totalReturn(negative), DP8);
    expect(maxDrawdown(positive).maxDrawdown).toBeCloseTo(0, DP8);
    expect(calmarRatio(mixed9, DAILY)).toBeCloseTo(19.135925373194233, DP8);
    expect(calmarRatio(weekly, WEEKLY)).toBeCloseTo(2.4690830513998208, DP8);
    expect(calmarRatio(weekly, MONTHLY)).toBeCloseTo(0.52242061386048144, DP8);
    expect(totalReturn(mixed9)).toBeCloseTo(0.03893, 4);
    expect(totalReturn(negative)).toBeCloseTo(-0.3659, 4);
  });
  it('downside_risk and sortino_ratio', () => {
    expect(downsideRisk(mixed8, DAILY, 0)).toBeCloseTo(0.60448325038829653, DP8);
    expect(downsideRisk(mixed8, DAILY, 0.1)).toBeCloseTo(1.7161730681956295, DP8);
    expect(downsideRisk(weekly, WEEKLY, 0)).toBeCloseTo(0.25888650451930134, DP8);
    expect(downsideRisk(weekly, MONTHLY, 0.1)).toBeCloseTo(0.37148351242013422, DP8);
    expect(sortinoRatio(mixed8, DAILY, 0)).toBeCloseTo(2.605531251673693, DP8);
    expect(sortinoRatio(negative, DAILY, 0)).toBeCloseTo(-13.532743075043401, DP8);
    expect(sortinoRatio(weekly, WEEKLY, 0)).toBeCloseTo(1.1158901056866439, DP8);
    expect(sortinoRatio(weekly, MONTHLY, 0)).toBeCloseTo(0.53605626741889756, DP8);
    expect(sortinoRatio(positive, DAILY, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('probabilistic Sharpe ratio (Bailey & López de Prado 2012)', () => {
  it("reproduces the paper's worked example: 24 monthly returns, annualised SR 1.585, skewness −2.448, kurtosis 10.164", () => {
    const monthly = 1.585 / Math.sqrt(12);
    // The paper reports PSR(0) ≈ 0.913; 0.91323430688486018 is the same example to full precision (pypbo).
    expect(probabilisticSharpe(monthly, 24, -2.448, 10.164, 0)).toBeCloseTo(0.91323430688486018, 12);
    // The same Sharpe with normal returns would look far surer: the fat left tail is what costs the confidence.
    expect(probabilisticSharpe(monthly, 24, 0, 3, 0)).toBeGreaterThan(0.98);
  });
  it("reproduces the paper's minimum track record lengths (its Figure 8 cases), in years", () => {
    // Normal IID returns, an annualised Sharpe of 2 against a true 1, 95 % confidence: daily and weekly sampling.
    expect(minTrackRecordLength(2 / Math.sqrt(250), 0, 3, 1 / Math.sqrt(250)) / 250).toBeCloseTo(2.7311878017281761, 9);
    expect(minTrackRecordLength(2 / Math.sqrt(52), 0, 3, 1 / Math.sqrt(52)) / 52).toBeCloseTo(2.8288335869452368, 9);
    // Monthly, non-normal (skewness −0.72, kurtosis 5.78), 3 against 2.5: decades.
    expect(minTrackRecordLength(3 / Math.sqrt(12), -0.72, 5.78, 2.5 / Math.sqrt(12)) / 12).toBeCloseTo(27.352920196040301, 9);
    // No track record proves a Sharpe that is not above the benchmark; a confidence outside (0, 1) is not one.
    expect(minTrackRecordLength(0.1, 0, 3, 0.1)).toBeNaN();
    expect(minTrackRecordLength(0.1, 0, 3, 0, 1)).toBeNaN();
  });
  it('matches the formula with an exact normal CDF', () => {
    // Φ((SR − SR*)·√(n−1) / √(1 − γ3·SR + (γ4 − 1)/4·SR²)), values from Python's statistics.NormalDist
    expect(probabilisticSharpe(0.1, 100, 0, 3)).toBeCloseTo(0.8395254171844497, 12);
    expect(probabilisticSharpe(0.2, 60, -1, 6)).toBeCloseTo(0.9152861628090514, 12);
    expect(probabilisticSharpe(0.05, 250, 0.5, 4, 0.02)).toBeCloseTo(0.6840173147531722, 12);
    expect(normalCdf(0)).toBeCloseTo(0.5, 15);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 14);
    expect(normalCdf(-1)).toBeCloseTo(0.15865525393145707, 14);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 12);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 12);
  });
  it('falls with negative skew and fat tails, rises with length', () => {
    expect(probabilisticSharpe(0.1, 100, -2, 10)).toBeLessThan(probabilisticSharpe(0.1, 100, 0, 3));
    expect(probabilisticSharpe(0.1, 400, 0, 3)).toBeGreaterThan(probabilisticSharpe(0.1, 100, 0, 3));
  });
});

describe('Sharpe 95 % interval (stationary block bootstrap)', () => {
  it('contains the point estimate, is seeded, and narrows with more data', () => {
    const bars = generateBars({ seed: 4, bars: 3000 });
    const r = equityReturns(bars.close[0]!, bars.close[0]![0]!);
    const short = r.subarray(0, 300);
    const a = sharpeBootstrapCi(short, 365, 0, 1);
    expect(a.ci[0]).toBeLessThan(sharpeRatio(short, 365));
    expect(a.ci[1]).toBeGreaterThan(sharpeRatio(short, 365));
    expect(sharpeBootstrapCi(short, 365, 0, 1).ci).toEqual(a.ci);
    const b = sharpeBootstrapCi(r, 365, 0, 1);
    expect(b.ci[1] - b.ci[0]).toBeLessThan(a.ci[1] - a.ci[0]);
    expect(a.method).toMatch(/stationary block bootstrap/);
  });
});

describe('indicators against trading-signals', () => {
  it('SMA, EMA and momentum (rate of change) agree to 1e-9', () => {
    const closes = generateBars({ seed: 12, bars: 500 }).close[0]!;
    for (const n of [3, 10, 30]) {
      const [mySma, myEma, myMom] = [sma(closes, n), ema(closes, n), momentum(closes, n)];
      const [s, e, roc] = [new SMA(n), new EMA(n), new ROC(n)];
      closes.forEach((c, i) => {
        const rs = s.update(c, false);
        e.update(c, false);
        const rr = roc.update(c, false);
        if (rs !== null && rs !== undefined) expect(Math.abs(mySma[i]! - Number(rs))).toBeLessThan(1e-9 * c);
        if (e.isStable) expect(Math.abs(myEma[i]! - Number(e.getResultOrThrow()))).toBeLessThan(1e-9 * c);
        if (rr !== null && rr !== undefined) expect(Math.abs(myMom[i]! - Number(rr))).toBeLessThan(1e-12);
      });
    }
  });
});

describe('the sma-cross strategy decides as trading-signals SMAs say', () => {
  it('goes long exactly when SMA(fast) crosses above SMA(slow) and flat when below (same-close fills, no costs)', async () => {
    const { runBacktest, smaCross } = await import('@minara/agent/backtest');
    const bars = generateBars({ seed: 33, bars: 600, regime: 'sideways' });
    const closes = bars.close[0]!;
    const r = await runBacktest({ bars, strategy: smaCross({ fast: 7, slow: 25 }), fill: 'same-close', fees: { bps: 0 }, baselines: false });
    const [f, s] = [new SMA(7), new SMA(25)];
    const expected: string[] = [];
    let long = false;
    closes.forEach((c, i) => {
      const a = f.update(c, false);
      const b = s.update(c, false);
      if (b === null || b === undefined || a === null || a === undefined) return;
      const want = Number(a) > Number(b);
      if (want !== long) expected.push(`${i}:${want ? 'buy' : 'sell'}`);
      long = want;
    });
    const got = r.strategy.fills.map((x) => `${Math.round((x.time - bars.intervalMs - bars.times[0]!) / bars.intervalMs)}:${x.side}`);
    expect(got.length).toBeGreaterThan(5);
    expect(got).toEqual(expected);
  });
});
