/** The spread of one metric over epochs: mean, sample standard deviation, extremes, and a 95 % interval of the mean. */
export interface MetricSpread {
  readonly n: number;
  readonly mean: number;
  /** Sample standard deviation (n − 1); 0 for one value. */
  readonly std: number;
  readonly min: number;
  readonly max: number;
  /** mean ± t(0.975, n − 1) · std / √n; equal to the mean for one value. */
  readonly ci95: readonly [number, number];
}

/** Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom (then the normal 1.96). */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/** Student's t quantile (0.975) for `df` degrees of freedom. */
export function t975(df: number): number {
  return df >= 1 && df <= 30 ? T975[Math.round(df) - 1]! : 1.96;
}

/** The spread of a metric's values over epochs (non-finite values are skipped). */
export function metricSpread(values: readonly number[]): MetricSpread {
  const xs = values.filter((v) => Number.isFinite(v));
  const n = xs.length;
  if (n === 0) return { n: 0, mean: Number.NaN, std: Number.NaN, min: Number.NaN, max: Number.NaN, ci95: [Number.NaN, Number.NaN] };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const std = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  const half = n > 1 ? (t975(n - 1) * std) / Math.sqrt(n) : 0;
  return { n, mean, std, min: Math.min(...xs), max: Math.max(...xs), ci95: [mean - half, mean + half] };
}

/**
 * A 95 % interval of the difference of two means (Welch: unequal variances, Welch–Satterthwaite degrees of
 * freedom); undefined when either side has fewer than two values.
 */
export function welchInterval(a: MetricSpread, b: MetricSpread): readonly [number, number] | undefined {
  if (a.n < 2 || b.n < 2) return undefined;
  const va = (a.std * a.std) / a.n;
  const vb = (b.std * b.std) / b.n;
  const se = Math.sqrt(va + vb);
  const d = a.mean - b.mean;
  if (se === 0) return [d, d];
  const df = (va + vb) ** 2 / ((va * va) / (a.n - 1) + (vb * vb) / (b.n - 1));
  const half = t975(df) * se;
  return [d - half, d + half];
}
