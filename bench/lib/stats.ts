/** Small helpers shared by the benchmark scripts: percentiles and a plain-text table. */

import { mulberry32 } from '../../src/util/prng';

export function percentile(sortedMs: ArrayLike<number>, p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const idx = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return sortedMs[idx]!;
}

export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly mean: number;
}

export function summarize(samplesMs: readonly number[]): Summary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), mean };
}

/** Time `fn` once per iteration; returns per-call milliseconds. */
export async function timeEach(iterations: number, fn: (i: number) => unknown): Promise<number[]> {
  const out = new Array<number>(iterations);
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await fn(i);
    out[i] = performance.now() - t0;
  }
  return out;
}

export function fmt(ms: number, digits = 3): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(digits);
}

export function table(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => String(r[c] ?? '').length)));
  const line = (r: ReadonlyArray<string | number>) => `| ${r.map((v, c) => String(v).padEnd(widths[c]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

export function machine(): string {
  return `node ${process.version}, ${process.platform}/${process.arch}`;
}

/**
 * A 95 % percentile-bootstrap interval for `(p50(ours) − p50(base)) ÷ (p50(peer) − p50(base))`, resampling whole
 * rounds (index i of each array is one round, so a noisy moment stays paired across the three sides). Shows how far
 * the peer's own noise moves a ratio of added times; each resample's p50 is `summarize`'s (the figure the ratio line
 * prints); `resamples` draws from a fixed seed (the SDK's `mulberry32`).
 */
export function bootstrapAddedRatio(
  rounds: { readonly ours: readonly number[]; readonly base: readonly number[]; readonly peer: readonly number[] },
  resamples = 2000,
  seed = 41,
): { readonly low: number; readonly high: number } {
  const n = Math.min(rounds.ours.length, rounds.base.length, rounds.peer.length);
  if (n === 0) return { low: Number.NaN, high: Number.NaN };
  const random = mulberry32(seed);
  const ratios = new Float64Array(resamples);
  const ours = new Float64Array(n);
  const base = new Float64Array(n);
  const peer = new Float64Array(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) {
      const k = Math.floor(random() * n);
      ours[i] = rounds.ours[k]!;
      base[i] = rounds.base[k]!;
      peer[i] = rounds.peer[k]!;
    }
    const b = percentile(base.sort(), 50);
    ratios[r] = (percentile(ours.sort(), 50) - b) / (percentile(peer.sort(), 50) - b);
  }
  ratios.sort();
  return { low: percentile(ratios, 2.5), high: percentile(ratios, 97.5) };
}
