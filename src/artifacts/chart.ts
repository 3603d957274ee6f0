import type { TopLevelSpec } from 'vega-lite';
import { MinaraError } from '../errors/minara-error';

/** Limits of a chart spec. */
export interface ChartLimits {
  /** Largest spec, as JSON. @default 2000000 */
  readonly maxSpecBytes: number;
  /** Most data rows across every inline dataset. @default 100000 */
  readonly maxDataPoints: number;
}

export const DEFAULT_CHART_LIMITS: ChartLimits = Object.freeze({ maxSpecBytes: 2_000_000, maxDataPoints: 100_000 });

const MARKS = new Set(['arc', 'area', 'bar', 'boxplot', 'circle', 'errorband', 'errorbar', 'geoshape', 'image', 'line', 'point', 'rect', 'rule', 'square', 'text', 'tick', 'trail']);

/** A checked chart: the Vega-Lite spec as given (title applied) and the Vega spec it compiles to. */
export interface CompiledChart {
  readonly spec: Record<string, unknown>;
  readonly vega: Record<string, unknown>;
  readonly dataPoints: number;
  readonly warnings: readonly string[];
}

let vegaLite: Promise<typeof import('vega-lite')> | undefined;

const invalid = (message: string) => new MinaraError('ARTIFACT_INVALID', message);

/**
 * Check a Vega-Lite spec and compile it to Vega on the server, so a spec that cannot render fails in the tool
 * call (where the model can fix it) rather than in the viewer. Data must be inline (`data.values`): a `url`
 * anywhere in the spec is refused, so neither the viewer nor the PNG renderer fetches anything.
 *
 * Vega-Lite is loaded on the first call (importing the package does not load it).
 *
 * @throws MinaraError `ARTIFACT_INVALID` naming the field.
 * @example
 * ```ts
 * const { vega, dataPoints } = await compileChart({ data: { values: [{ x: 1, y: 2 }] }, mark: 'point', encoding: { x: { field: 'x', type: 'quantitative' } } });
 * ```
 */
export async function compileChart(input: unknown, options: { readonly title?: string | undefined; readonly limits?: Partial<ChartLimits> | undefined } = {}): Promise<CompiledChart> {
  const limits = { ...DEFAULT_CHART_LIMITS, ...options.limits };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('spec: expected a Vega-Lite spec object ({ data: { values }, mark, encoding }).');
  let json: string;
  try {
    json = JSON.stringify(input);
  } catch (error) {
    throw invalid(`spec: not serialisable as JSON (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (Buffer.byteLength(json) > limits.maxSpecBytes) throw invalid(`spec: ${Buffer.byteLength(json)} bytes of JSON; the limit is ${limits.maxSpecBytes}. Aggregate or sample the data first.`);
  const spec = JSON.parse(json) as Record<string, unknown>;
  let points = 0;
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${at}[${i}]`));
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [k, v] of Object.entries(value)) {
      if (k === 'url') throw invalid(`${at}.url: data and images must be inline (data.values); a chart never fetches from a URL.`);
      if (k === 'mark') {
        const type = typeof v === 'string' ? v : (v as { type?: unknown } | null)?.type;
        if (typeof type !== 'string' || !MARKS.has(type)) throw invalid(`${at}.mark: expected one of ${[...MARKS].join(', ')}, got ${JSON.stringify(type)}.`);
      }
      if (k === 'values' && Array.isArray(v)) points += v.length;
      if (k !== 'values') walk(v, `${at}.${k}`);
    }
  };
  walk(spec, 'spec');
  if (points > limits.maxDataPoints) throw invalid(`spec: ${points} data rows; the limit is ${limits.maxDataPoints}. Aggregate or sample the data first.`);
  if (options.title !== undefined && spec.title === undefined) spec.title = options.title;
  delete spec.$schema;
  const warnings: string[] = [];
  const note = (level: string) => (...args: readonly unknown[]) => {
    warnings.push(`${level}: ${args.map(String).join(' ')}`);
    return logger;
  };
  const logger = { level: () => logger, error: note('error'), warn: note('warn'), info: () => logger, debug: () => logger };
  vegaLite ??= import('vega-lite');
  const { compile } = await vegaLite;
  let vega: Record<string, unknown>;
  try {
    vega = compile(spec as unknown as TopLevelSpec, { logger: logger as never }).spec as unknown as Record<string, unknown>;
  } catch (error) {
    throw invalid(`spec: Vega-Lite cannot compile it: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { spec, vega, dataPoints: points, warnings };
}
