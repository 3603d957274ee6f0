/**
 * Seeded synthetic bars: geometric Brownian motion with a regime's drift and volatility, written straight into
 * typed-array columns (no per-bar objects), so tests, examples and benchmarks run offline with no licensed data.
 */
import { createHash } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { checkCalendar, DAY_MS, inSession, nextSessionTime, parseInterval } from './calendar';
import { createSeededRandom, mixSeed } from './prng';
import type { BarSet, Calendar } from './types';

/** A market regime: annual drift and volatility of the generated path. `crash` rises, then loses ~55 % in 5 % of the bars, then drifts. */
export type SyntheticRegime = 'bull' | 'bear' | 'sideways' | 'crash';

/** Options of {@link generateBars}. */
export interface GenerateBarsOptions {
  readonly seed: number;
  /** Symbol names, or a count (`SYN1`, `SYN2`, …). @default ['SYN'] */
  readonly symbols?: readonly string[] | number;
  /** @default 'bull' */
  readonly regime?: SyntheticRegime;
  /** Number of bars per symbol. @default 1000 */
  readonly bars?: number;
  /** First bar's open time (ISO date or ms). @default '2020-01-01' */
  readonly start?: string | number;
  /** `1d`, `1h`, … or ms. @default '1d' */
  readonly interval?: string | number;
  /** @default { kind: 'crypto' } */
  readonly calendar?: Calendar;
  /** @default 100 */
  readonly startPrice?: number;
  /** Override the regime's annual drift (log). */
  readonly drift?: number;
  /** Override the regime's annual volatility. */
  readonly volatility?: number;
}

const REGIMES: Record<SyntheticRegime, { drift: number; volatility: number }> = {
  bull: { drift: 0.5, volatility: 0.5 },
  bear: { drift: -0.5, volatility: 0.6 },
  sideways: { drift: 0, volatility: 0.35 },
  crash: { drift: 0.3, volatility: 0.6 },
};

/** Generate bars for `symbols` on one clock. Same options, same bars, byte for byte. */
export function generateBars(options: GenerateBarsOptions): BarSet {
  const seed = options.seed;
  if (!Number.isInteger(seed)) throw new MinaraError('INVALID_ARGUMENT', `seed: expected an integer, got ${String(seed)}`);
  const regime = options.regime ?? 'bull';
  const params = REGIMES[regime];
  if (!params) throw new MinaraError('INVALID_ARGUMENT', `regime: expected bull, bear, sideways or crash, got ${JSON.stringify(regime)}`);
  const n = options.bars ?? 1000;
  if (!Number.isInteger(n) || n < 2 || n > 50_000_000) throw new MinaraError('INVALID_ARGUMENT', `bars: expected an integer from 2 to 50,000,000, got ${String(n)}`);
  const symbols = typeof options.symbols === 'number' ? Array.from({ length: options.symbols }, (_, i) => `SYN${i + 1}`) : [...(options.symbols ?? ['SYN'])];
  if (symbols.length === 0 || new Set(symbols).size !== symbols.length) throw new MinaraError('INVALID_ARGUMENT', 'symbols: expected one or more distinct names');
  const intervalMs = parseInterval(options.interval ?? '1d');
  const calendar = checkCalendar(options.calendar ?? { kind: 'crypto' });
  const start = typeof options.start === 'number' ? options.start : Date.parse(`${options.start ?? '2020-01-01'}${/T/.test(String(options.start ?? '')) ? '' : 'T00:00:00Z'}`);
  if (!Number.isFinite(start)) throw new MinaraError('INVALID_ARGUMENT', `start: expected an ISO date or ms, got ${JSON.stringify(options.start)}`);
  const startPrice = options.startPrice ?? 100;
  const times = new Float64Array(n);
  let t = start;
  if (!inSession(calendar, t, intervalMs)) t = nextSessionTime(calendar, t, intervalMs);
  for (let i = 0; i < n; i++) {
    times[i] = t;
    if (i + 1 < n) t = nextSessionTime(calendar, t, intervalMs);
  }
  const yearFraction = calendar.kind === 'crypto' ? intervalMs / (365 * DAY_MS) : intervalMs >= DAY_MS ? intervalMs / (252 * DAY_MS) : intervalMs / (252 * 6.5 * 3_600_000);
  const drift = options.drift ?? params.drift;
  const vol = options.volatility ?? params.volatility;
  const cols = () => symbols.map(() => new Float64Array(n));
  const open = cols(), high = cols(), low = cols(), close = cols(), volume = cols();
  symbols.forEach((_, s) => {
    const rng = createSeededRandom(mixSeed(seed, s + 1));
    const sigma = vol * Math.sqrt(yearFraction) * (0.8 + 0.4 * rng.next());
    const mu = drift * yearFraction - 0.5 * sigma * sigma;
    const crashFrom = Math.floor(n * 0.55);
    const crashTo = crashFrom + Math.max(1, Math.floor(n * 0.05));
    const crashMu = Math.log(0.45) / (crashTo - crashFrom);
    let prev = startPrice * (0.5 + rng.next());
    const o = open[s] as Float64Array, h = high[s] as Float64Array, l = low[s] as Float64Array, c = close[s] as Float64Array, v = volume[s] as Float64Array;
    for (let i = 0; i < n; i++) {
      const m = regime === 'crash' && i >= crashFrom && i < crashTo ? crashMu : regime === 'crash' && i >= crashTo ? 0 : mu;
      const gap = sigma * 0.1 * rng.normal();
      const op = prev * Math.exp(gap);
      const cl = op * Math.exp(m + sigma * rng.normal());
      const wick = sigma * 0.5;
      o[i] = op;
      c[i] = cl;
      h[i] = Math.max(op, cl) * Math.exp(Math.abs(rng.normal()) * wick);
      l[i] = Math.min(op, cl) * Math.exp(-Math.abs(rng.normal()) * wick);
      v[i] = Math.round(1_000_000 * Math.exp(0.5 * rng.normal()) / Math.max(1, cl)) + 1;
      prev = cl;
    }
  });
  return {
    symbols,
    times,
    intervalMs,
    calendar,
    open,
    high,
    low,
    close,
    volume,
    sources: [
      {
        kind: 'synthetic',
        sha256: hashColumns(symbols, times, [open, high, low, close, volume]),
        rows: n * symbols.length,
        options: { seed, symbols, regime, bars: n, start: new Date(start).toISOString(), interval: intervalMs, calendar, startPrice, drift, volatility: vol },
      },
    ],
  };
}


/** sha256 over the columns' bytes (little-endian doubles) and the symbol names. */
export function hashColumns(symbols: readonly string[], times: Float64Array, columns: readonly (readonly Float64Array[])[]): string {
  const h = createHash('sha256');
  h.update(symbols.join(','));
  h.update(new Uint8Array(times.buffer, times.byteOffset, times.byteLength));
  for (const col of columns) for (const a of col) h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest('hex');
}
