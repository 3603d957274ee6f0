/**
 * Fills, trades and the equity curve against an independent reference backtester written in Python with pandas
 * (test/backtest/reference/backtester.py: a plain per-bar loop, its conventions at its top), over random bars and
 * random order sequences from fast-check. Agreement: |a − b| ≤ 1e-9 · max(1, |b|).
 * Needs /usr/bin/python3 with pandas (Debian python3-pandas; .ci/run installs it). Without it the test skips
 * loudly, or fails when MINARA_REQUIRE_REAL_COMPONENTS=1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Bar, createBarSet, type OrderIntent, runBacktest, type Strategy } from '@minara/agent/backtest';
import { realComponent } from '../support/real-component';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reference', 'backtester.py');
const PYTHONS = ['/usr/bin/python3', 'python3'];
const python = PYTHONS.find((p) => (p.startsWith('/') ? existsSync(p) : true) && spawnSync(p, ['-c', 'import pandas'], { stdio: 'ignore' }).status === 0);
const hasPandas = realComponent('python3 with pandas (the reference backtester)', python !== undefined, 'apt-get install -y python3-pandas (Debian), then run the tests again');

interface Order { index: number; symbol: string; side: 'buy' | 'sell'; quantity?: number; notional?: number }
interface Case { symbols: string[]; times: number[]; open: Record<string, number[]>; close: Record<string, number[]>; cash: number; fee_bps: number; fee_min: number; slip_bps: number; orders: Order[] }

const DAY = 86_400_000;
const arbCase: fc.Arbitrary<Case> = fc
  .record({
    n: fc.integer({ min: 3, max: 40 }),
    nSym: fc.integer({ min: 1, max: 3 }),
    seedPrices: fc.array(fc.double({ min: -0.2, max: 0.2, noNaN: true }), { minLength: 240, maxLength: 240 }),
    start: fc.array(fc.double({ min: 1, max: 5000, noNaN: true }), { minLength: 3, maxLength: 3 }),
    cash: fc.double({ min: 100, max: 100_000, noNaN: true }),
    fee_bps: fc.double({ min: 0, max: 50, noNaN: true }),
    fee_min: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 5, noNaN: true })),
    slip_bps: fc.double({ min: 0, max: 100, noNaN: true }),
    orders: fc.array(
      fc.record({ index: fc.nat(), sym: fc.nat(), side: fc.constantFrom('buy' as const, 'sell' as const), byQty: fc.boolean(), size: fc.double({ min: 0.01, max: 1, noNaN: true }) }),
      { maxLength: 30 },
    ),
  })
  .map(({ n, nSym, seedPrices, start, cash, fee_bps, fee_min, slip_bps, orders }) => {
    const symbols = ['AAA', 'BBB', 'CCC'].slice(0, nSym);
    const open: Record<string, number[]> = {};
    const close: Record<string, number[]> = {};
    symbols.forEach((s, k) => {
      let p = start[k] as number;
      open[s] = [];
      close[s] = [];
      for (let i = 0; i < n; i++) {
        const o = p * Math.exp((seedPrices[(k * 80 + 2 * i) % 240] as number) / 4);
        const c = o * Math.exp(seedPrices[(k * 80 + 2 * i + 1) % 240] as number);
        open[s]!.push(o);
        close[s]!.push(c);
        p = c;
      }
    });
    const mapped: Order[] = orders.map((o) => {
      const symbol = symbols[o.sym % nSym] as string;
      const index = o.index % n;
      // sizes relative to the cash / a typical price, so both fills and refusals happen
      const ref = (open[symbol]![0] as number);
      return o.byQty ? { index, symbol, side: o.side, quantity: (o.size * cash * 0.6) / ref } : { index, symbol, side: o.side, notional: o.size * cash * 0.6 };
    });
    return { symbols, times: Array.from({ length: n }, (_, i) => Date.UTC(2024, 0, 1) + i * DAY), open, close, cash, fee_bps, fee_min, slip_bps, orders: mapped };
  });

async function runEngine(c: Case) {
  const bars: Bar[] = [];
  for (const s of c.symbols) c.times.forEach((time, i) => {
    const o = c.open[s]![i]!, cl = c.close[s]![i]!;
    bars.push({ symbol: s, time, open: o, high: Math.max(o, cl), low: Math.min(o, cl), close: cl, volume: 1e12 });
  });
  const byIndex = new Map<number, OrderIntent[]>();
  c.orders.forEach((o) => {
    const list = byIndex.get(o.index) ?? [];
    list.push(o.quantity !== undefined ? { symbol: o.symbol, side: o.side, quantity: o.quantity } : { symbol: o.symbol, side: o.side, notionalUsd: o.notional as number });
    byIndex.set(o.index, list);
  });
  const strategy: Strategy = { name: 'scripted', decide: (v) => byIndex.get(v.index) ?? [] };
  return runBacktest({ bars: createBarSet(bars, { intervalMs: DAY }), strategy, initialCash: c.cash, fees: { bps: c.fee_bps, minUsd: c.fee_min }, slippage: { kind: 'fixed', bps: c.slip_bps }, baselines: false });
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

describe.skipIf(!hasPandas)('engine vs the Python + pandas reference backtester (fast-check)', () => {
  it('fills, refusals, trades and the equity curve agree to 1e-9 over random bars and orders', async () => {
    const cases = fc.sample(arbCase, { numRuns: 150, seed: 20261127 });
    const r = spawnSync(python as string, [SCRIPT], { input: JSON.stringify({ cases }), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(r.status, r.stderr).toBe(0);
    const ref = (JSON.parse(r.stdout) as { results: { fills: { time: number; symbol: string; side: string; quantity: number; price: number; fee: number; realized: number }[]; equity: number[]; rejected: { rule: string }[]; trades: { pnl: number; fees: number; exit: number }[] }[] }).results;
    let fillsCompared = 0;
    let rejectedCompared = 0;
    for (let k = 0; k < cases.length; k++) {
      const c = cases[k] as Case;
      const mine = (await runEngine(c)).strategy;
      const theirs = ref[k]!;
      const where = `case ${k}: ${JSON.stringify(c).slice(0, 400)}`;
      expect(mine.fills.length, where).toBe(theirs.fills.length);
      mine.fills.forEach((f, j) => {
        const g = theirs.fills[j]!;
        expect([f.time, f.symbol, f.side], where).toEqual([g.time, g.symbol, g.side]);
        for (const [a, b] of [[f.quantity, g.quantity], [f.price, g.price], [f.feeUsd, g.fee], [f.realizedPnlUsd, g.realized]] as const) expect(close(a, b), `${where} fill ${j}: ${a} vs ${b}`).toBe(true);
        fillsCompared++;
      });
      expect(mine.rejected.map((x) => x.rule), where).toEqual(theirs.rejected.map((x) => x.rule));
      rejectedCompared += mine.rejected.length;
      expect(mine.equity.length).toBe(theirs.equity.length);
      mine.equity.forEach((e, i) => expect(close(e, theirs.equity[i]!), `${where} equity ${i}: ${e} vs ${theirs.equity[i]}`).toBe(true));
      expect(mine.trades.length, where).toBe(theirs.trades.length);
      mine.trades.forEach((t, j) => {
        expect(close(t.pnlUsd, theirs.trades[j]!.pnl), where).toBe(true);
        expect(close(t.feesUsd, theirs.trades[j]!.fees), where).toBe(true);
      });
    }
    // the sample exercised both fills and refusals
    expect(fillsCompared).toBeGreaterThan(200);
    expect(rejectedCompared).toBeGreaterThan(20);
  });
});
