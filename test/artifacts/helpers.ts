import type { ScriptedCall } from '@minara/agent/testing';

/** Every artifact URI the model has seen in its prompt (tool results), in order. */
export function urisInPrompt(call: ScriptedCall): string[] {
  return [...new Set(JSON.stringify(call.prompt).match(/\b(?:chart|report|spreadsheet):\/\/[xr]-[a-z0-9]+/g) ?? [])];
}

/** A line chart spec with `n` points. */
export function lineSpec(n: number, title?: string): Record<string, unknown> {
  return {
    ...(title ? { title } : {}),
    data: { values: Array.from({ length: n }, (_, i) => ({ t: i, equity: 10_000 + Math.round(1000 * Math.sin(i / 25)) })) },
    mark: 'line',
    encoding: { x: { field: 't', type: 'quantitative', title: 'day' }, y: { field: 'equity', type: 'quantitative', title: 'equity (USD)' } },
  };
}
