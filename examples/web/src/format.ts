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

/**
 * An approval reason split into its text and its provenance: a call proposed after untrusted content has
 * ` (proposed after reading: <sources>; it read: "<passage>")` appended by the registry (src/tools/dispatch/approval.ts),
 * on the stream's approval request and on the stored record alike.
 */
export function splitProvenance(reason: string | undefined): { readonly text?: string; readonly sources?: readonly string[]; readonly passage?: string } {
  if (!reason) return {};
  const m = /^([\s\S]*?) \(proposed after reading: ([\s\S]*?)(?:; it read: "([\s\S]*)")?\)$/u.exec(reason);
  if (!m) return { text: reason };
  return { text: m[1]!, sources: m[2]!.split(', ').filter((s) => s !== ''), ...(m[3] ? { passage: m[3] } : {}) };
}
