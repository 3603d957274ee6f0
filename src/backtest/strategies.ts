/**
 * Built-in strategies. All are long-only, equal-weight across symbols (each symbol's target is equity / N,
 * capped by cash), decide on the close and return a shared empty array when they do nothing (no allocation).
 */
import { MinaraError } from '../errors/minara-error';
import { createSeededRandom, mixSeed, type SeededRandom } from './prng';
import type { OrderIntent, PointInTimeView, Strategy, StrategyContext } from './types';

const NONE: readonly OrderIntent[] = Object.freeze([]);

/** Buy (or sell all) to move `symbol` between flat and its equal-weight target. */
function goLong(view: PointInTimeView, symbol: string, reason: string): OrderIntent | undefined {
  const target = Math.min(view.portfolio.cash, view.portfolio.equity / view.symbols.length);
  return target > 0 ? { symbol, side: 'buy', notionalUsd: target, reason } : undefined;
}
function goFlat(view: PointInTimeView, symbol: string, reason: string): OrderIntent | undefined {
  const q = view.portfolio.position(symbol);
  return q > 0 ? { symbol, side: 'sell', quantity: q, reason } : undefined;
}

/** Trade toward a per-symbol long/flat signal; returns the shared empty array when nothing changes. */
function toward(view: PointInTimeView, wantLong: (view: PointInTimeView, s: number) => boolean | undefined, reason: string): readonly OrderIntent[] {
  let out: OrderIntent[] | undefined;
  const syms = view.symbols;
  for (let s = 0; s < syms.length; s++) {
    const symbol = syms[s] as string;
    const want = wantLong(view, s);
    if (want === undefined) continue;
    const held = view.portfolio.position(symbol) > 0;
    if (want === held) continue;
    const o = want ? goLong(view, symbol, reason) : goFlat(view, symbol, reason);
    if (o) (out ??= []).push(o);
  }
  return out ?? NONE;
}

/** Does nothing (the engine's speed floor). */
export function noopStrategy(): Strategy {
  return { name: 'noop', params: {}, decide: () => NONE };
}

/** Buy every symbol with an equal share of the cash at its first bar and hold to the end. */
export function buyAndHold(): Strategy {
  let bought: boolean[] = [];
  return {
    name: 'buy-and-hold',
    params: {},
    init(ctx: StrategyContext) {
      bought = ctx.symbols.map(() => false);
    },
    decide(view) {
      let out: OrderIntent[] | undefined;
      for (let s = 0; s < view.symbols.length; s++) {
        if (bought[s]) continue;
        const symbol = view.symbols[s] as string;
        if (Number.isNaN(view.value(symbol, 'close'))) continue;
        bought[s] = true;
        const notional = Math.min(view.portfolio.cash, view.portfolio.equity / view.symbols.length);
        if (notional > 0) (out ??= []).push({ symbol, side: 'buy', notionalUsd: notional, reason: 'buy and hold' });
      }
      return out ?? NONE;
    },
  };
}

/** Options of {@link randomStrategy}. */
export interface RandomStrategyOptions {
  /** Probability per bar and symbol of flipping between flat and long. @default 0.05 */
  readonly flipProbability?: number | undefined;
  /** Seed offset (the run's seed is mixed in). @default 0 */
  readonly seed?: number | undefined;
}

/** Flip each symbol between flat and long at random (seeded from the run's seed): the luck baseline. */
export function randomStrategy(options: RandomStrategyOptions = {}): Strategy {
  const p = options.flipProbability ?? 0.05;
  if (!(p > 0 && p <= 1)) throw new MinaraError('INVALID_ARGUMENT', `flipProbability: expected a number in (0, 1], got ${p}`);
  let rng: SeededRandom = createSeededRandom(0);
  let long: boolean[] = [];
  const signal = (view: PointInTimeView, s: number): boolean | undefined => {
    if (Number.isNaN(view.value(view.symbols[s] as string, 'close'))) return undefined;
    if (rng.next() < p) long[s] = !long[s];
    return long[s];
  };
  return {
    name: 'random',
    params: { flipProbability: p, seed: options.seed ?? 0 },
    init(ctx) {
      rng = createSeededRandom(mixSeed(ctx.seed, 0x5eed + (options.seed ?? 0)));
      long = ctx.symbols.map(() => false);
    },
    decide(view) {
      return toward(view, signal, 'random flip');
    },
  };
}

/** Options of {@link momentumStrategy}. */
export interface MomentumOptions {
  /** Bars back. @default 20 */
  readonly lookback?: number | undefined;
  /** Long when the lookback return exceeds this (a fraction). @default 0 */
  readonly threshold?: number | undefined;
}

/** Time-series momentum: long while close / close[lookback bars ago] − 1 > threshold, else flat. */
export function momentumStrategy(options: MomentumOptions = {}): Strategy {
  const lookback = options.lookback ?? 20;
  const threshold = options.threshold ?? 0;
  if (!Number.isInteger(lookback) || lookback < 1) throw new MinaraError('INVALID_ARGUMENT', `lookback: expected an integer ≥ 1, got ${lookback}`);
  const reason = `momentum ${lookback}`;
  const signal = (view: PointInTimeView, s: number): boolean | undefined => {
    const symbol = view.symbols[s] as string;
    const past = view.value(symbol, 'close', lookback);
    const now = view.value(symbol, 'close');
    if (!(past > 0) || Number.isNaN(now)) return undefined;
    return now / past - 1 > threshold;
  };
  return {
    name: 'momentum',
    params: { lookback, threshold },
    decide(view) {
      return toward(view, signal, reason);
    },
  };
}

/** Options of {@link smaCross}. */
export interface SmaCrossOptions {
  /** @default 10 */
  readonly fast?: number | undefined;
  /** @default 30 */
  readonly slow?: number | undefined;
}

/**
 * Long while the fast simple moving average of closes is above the slow one, flat otherwise. The sums roll in
 * O(1) per bar (the SMA matches trading-signals' SMA to 1e-9 in the tests).
 */
export function smaCross(options: SmaCrossOptions = {}): Strategy {
  const fast = options.fast ?? 10;
  const slow = options.slow ?? 30;
  if (!Number.isInteger(fast) || fast < 1) throw new MinaraError('INVALID_ARGUMENT', `fast: expected an integer ≥ 1, got ${fast}`);
  if (!Number.isInteger(slow) || slow <= fast) throw new MinaraError('INVALID_ARGUMENT', `slow: expected an integer greater than fast (${fast}), got ${slow}`);
  let fastSum = new Float64Array(0);
  let slowSum = new Float64Array(0);
  let count = new Float64Array(0);
  const reason = `sma-cross ${fast}/${slow}`;
  const signal = (view: PointInTimeView, s: number): boolean | undefined => {
    const symbol = view.symbols[s] as string;
    const c = view.value(symbol, 'close');
    if (c !== c) return undefined;
    const k = (count[s] as number) + 1;
    count[s] = k;
    let f = (fastSum[s] as number) + c;
    let sl = (slowSum[s] as number) + c;
    if (k > fast) f -= view.value(symbol, 'close', fast);
    if (k > slow) sl -= view.value(symbol, 'close', slow);
    fastSum[s] = f;
    slowSum[s] = sl;
    if (k < slow) return undefined;
    return f / fast > sl / slow;
  };
  return {
    name: 'sma-cross',
    params: { fast, slow },
    init(ctx) {
      fastSum = new Float64Array(ctx.symbols.length);
      slowSum = new Float64Array(ctx.symbols.length);
      count = new Float64Array(ctx.symbols.length);
    },
    decide(view) {
      return toward(view, signal, reason);
    },
  };
}

/** Look up a built-in strategy by name (`buy-and-hold`, `random`, `momentum`, `sma-cross`, `noop`). */
export function builtinStrategy(name: string, params: Readonly<Record<string, unknown>> = {}): Strategy {
  const n = (key: string): number | undefined => (params[key] === undefined ? undefined : Number(params[key]));

  switch (name) {
    case 'buy-and-hold':
      return buyAndHold();
    case 'random':
      return randomStrategy({ flipProbability: n('flipProbability'), seed: n('seed') });
    case 'momentum':
      return momentumStrategy({ lookback: n('lookback'), threshold: n('threshold') });
    case 'sma-cross':
      return smaCross({ fast: n('fast'), slow: n('slow') });
    case 'noop':
      return noopStrategy();
    default:
      throw new MinaraError('INVALID_ARGUMENT', `strategy: expected buy-and-hold, random, momentum, sma-cross or noop, got ${JSON.stringify(name)}`);
  }
}
