/** Numbers and sentences for the trading views; the wording is the finance pack's own (shared with the REPL). */
export { describeOrder, describeToolResult, formatBps, formatPrice, formatSignedUsd, formatUnits, formatUsd } from '@minara/agent/finance';

/** Pretty JSON for the raw view (never throws). */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export type Json = Readonly<Record<string, unknown>>;
export const asObj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
export const asNum = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
export const asStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
