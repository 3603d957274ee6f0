import { MinaraError } from '../../errors/minara-error';
import type { Bar } from '../types';

/**
 * Published training-data cutoffs of common models (the provider's model card at the time of writing; keys match a
 * model id or its start, like the price table). Override or extend with `cutoffs` where a provider states another date.
 */
export const DEFAULT_TRAINING_CUTOFFS: Readonly<Record<string, string>> = Object.freeze({
  'claude-opus-4-5': '2025-03-01',
  'claude-sonnet-4-5': '2025-07-01',
  'claude-haiku-4-5': '2025-02-01',
  'claude-opus-4': '2025-03-01',
  'claude-sonnet-4': '2025-03-01',
  'claude-3-7-sonnet': '2024-11-01',
  'claude-3-5-sonnet': '2024-04-01',
  'claude-3-5-haiku': '2024-07-01',
  'gpt-4.1': '2024-06-01',
  'gpt-4o': '2023-10-01',
  'gpt-4o-mini': '2023-10-01',
  'gpt-5': '2024-09-30',
  o3: '2024-06-01',
  'o4-mini': '2024-06-01',
  'gemini-2.5': '2025-01-01',
  'llama-3.1': '2023-12-01',
  'deepseek-v3': '2024-07-01',
});

/** How the test window sits against the model's training cutoff. */
export interface ContaminationReport {
  readonly modelId: string;
  /** The model's training cutoff (YYYY-MM-DD), or `'unknown'` when the table has none (stated, never assumed safe). */
  readonly trainingCutoff: string;
  readonly windowStart: string;
  readonly windowEnd: string;
  /** True when any of the window lies before the cutoff (the model may remember what happened), or the cutoff is unknown. */
  readonly overlap: boolean;
  /** Share of the window (by time) before the cutoff; null when unknown. */
  readonly overlapShare: number | null;
  readonly anonymised: boolean;
  readonly note: string;
}

/** The cutoff of a model id: the longest key it equals or starts with (after any `provider:` prefix). */
export function trainingCutoffFor(modelId: string, cutoffs: Readonly<Record<string, string>> = DEFAULT_TRAINING_CUTOFFS): string | undefined {
  const id = modelId.includes(':') ? modelId.slice(modelId.indexOf(':') + 1) : modelId;
  let best: string | undefined;
  for (const key of Object.keys(cutoffs)) if (id.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : cutoffs[best];
}

/** Compare the test window with the model's training cutoff (the report's contamination section). */
export function contaminationReport(input: { readonly modelId: string; readonly start: number; readonly end: number; readonly anonymised?: boolean | undefined; readonly cutoffs?: Readonly<Record<string, string>> | undefined }): ContaminationReport {
  const cutoff = trainingCutoffFor(input.modelId, { ...DEFAULT_TRAINING_CUTOFFS, ...input.cutoffs });
  const windowStart = new Date(input.start).toISOString().slice(0, 10);
  const windowEnd = new Date(input.end).toISOString().slice(0, 10);
  const anonymised = input.anonymised ?? false;
  if (cutoff === undefined) {
    const how = anonymised ? ' The run was anonymised (tickers renamed, dates shifted, prices rescaled).' : ' Compare with an anonymised run.';
    return { modelId: input.modelId, trainingCutoff: 'unknown', windowStart, windowEnd, overlap: true, overlapShare: null, anonymised, note: `The model is not in the cutoff table: assume it may have seen the window (pass cutoffs to state its date).${how}` };
  }
  const c = Date.parse(cutoff);
  if (!Number.isFinite(c)) throw new MinaraError('INVALID_ARGUMENT', `cutoffs: "${cutoff}" for ${input.modelId} is not a date (YYYY-MM-DD expected)`);
  const span = Math.max(1, input.end - input.start);
  const share = Math.min(1, Math.max(0, (c - input.start) / span));
  const overlap = input.start < c;
  const note = overlap
    ? `${Math.round(share * 100)} % of the window is before the model's training cutoff ${cutoff}: it may remember what happened${anonymised ? ' (the run was anonymised: tickers renamed, dates shifted, prices rescaled)' : '; compare with an anonymised run'}.`
    : `The window starts after the model's training cutoff ${cutoff}.`;
  return { modelId: input.modelId, trainingCutoff: cutoff, windowStart, windowEnd, overlap, overlapShare: share, anonymised, note };
}

/** Options of {@link anonymiseBars}. */
export interface AnonymiseOptions {
  /** Shift every time by this many days (negative moves back). @default -3653 (about ten years back) */
  readonly shiftDays?: number | undefined;
  /** Multiply every price by this factor (volumes unchanged). @default 0.0137 */
  readonly priceScale?: number | undefined;
  /** New names by symbol. @default ASSET1, ASSET2, … in the order the symbols are first seen */
  readonly rename?: Readonly<Record<string, string>> | undefined;
}

/** What anonymising did (so a report can map the agent's names back). */
export interface AnonymiseMapping {
  readonly symbols: Readonly<Record<string, string>>;
  readonly shiftMs: number;
  readonly priceScale: number;
}

/**
 * The bars the agent sees in anonymised mode: tickers renamed, dates shifted, prices rescaled (returns, and so the
 * strategy's P&L in percent, are unchanged), so a model cannot recognise the window from memory. Run the same window
 * both ways to see how much of a result memory explains.
 */
export function anonymiseBars(bars: readonly Bar[], options: AnonymiseOptions = {}): { readonly bars: Bar[]; readonly mapping: AnonymiseMapping } {
  const shiftDays = options.shiftDays ?? -3653;
  const priceScale = options.priceScale ?? 0.0137;
  if (!Number.isFinite(shiftDays)) throw new MinaraError('INVALID_ARGUMENT', `anonymise.shiftDays: expected a number of days, got ${String(options.shiftDays)}`);
  if (!(priceScale > 0) || !Number.isFinite(priceScale)) throw new MinaraError('INVALID_ARGUMENT', `anonymise.priceScale: expected a positive number, got ${String(options.priceScale)}`);
  const symbols: Record<string, string> = { ...options.rename };
  const taken = new Set(Object.values(symbols));
  let n = 0;
  const nameOf = (s: string) => {
    if (symbols[s] === undefined) {
      let name: string;
      do name = `ASSET${++n}`;
      while (taken.has(name));
      symbols[s] = name;
      taken.add(name);
    }
    return symbols[s];
  };
  const shiftMs = Math.round(shiftDays * 86_400_000);
  const out = bars.map((b) => ({ symbol: nameOf(b.symbol), time: b.time + shiftMs, open: b.open * priceScale, high: b.high * priceScale, low: b.low * priceScale, close: b.close * priceScale, volume: b.volume }));
  return { bars: out, mapping: { symbols, shiftMs, priceScale } };
}
