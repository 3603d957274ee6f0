/** Small helpers shared by the benchmark scripts: percentiles and a plain-text table. */

export function percentile(sortedMs: readonly number[], p: number): number {
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
