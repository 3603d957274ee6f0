/**
 * Indicators over a price series (typed arrays in, typed arrays out, NaN until defined), in the conventions of
 * trading-signals (checked against it in the tests): the simple moving average of the last n values; the
 * exponential moving average with weight 2 / (n + 1), seeded with the first price; momentum as the rate of
 * change close / close[n bars ago] − 1 (what the momentum strategy thresholds).
 */
import { MinaraError } from '../errors/minara-error';

const check = (n: number, name: string) => {
  if (!Number.isInteger(n) || n < 1) throw new MinaraError('INVALID_ARGUMENT', `${name}: expected an integer period ≥ 1, got ${n}`);
};

/** Simple moving average; `out[i]` is NaN for i < n − 1. */
export function sma(values: ArrayLike<number>, n: number): Float64Array {
  check(n, 'sma period');
  const out = new Float64Array(values.length).fill(Number.NaN);
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i] as number;
    if (i >= n) sum -= values[i - n] as number;
    if (i >= n - 1) out[i] = sum / n;
  }
  return out;
}

/** Exponential moving average (weight 2 / (n + 1), seeded with the first value); NaN for i < n − 1 (not yet stable). */
export function ema(values: ArrayLike<number>, n: number): Float64Array {
  check(n, 'ema period');
  const out = new Float64Array(values.length).fill(Number.NaN);
  const k = 2 / (n + 1);
  let prev = Number.NaN;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    prev = Number.isNaN(prev) ? v : v * k + prev * (1 - k);
    if (i >= n - 1) out[i] = prev;
  }
  return out;
}

/** Rate of change over n bars: v[i] / v[i − n] − 1; NaN for i < n. */
export function momentum(values: ArrayLike<number>, n: number): Float64Array {
  check(n, 'momentum period');
  const out = new Float64Array(values.length).fill(Number.NaN);
  for (let i = n; i < values.length; i++) out[i] = (values[i] as number) / (values[i - n] as number) - 1;
  return out;
}
