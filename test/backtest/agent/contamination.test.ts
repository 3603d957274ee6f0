import { describe, expect, it } from 'vitest';
import { anonymiseBars, contaminationReport, createCostLedger, DEFAULT_TRAINING_CUTOFFS, trainingCutoffFor } from '@minara/agent/backtest';

describe('contamination', () => {
  it('puts the training cutoff beside the window and flags overlap, with the share before the cutoff', () => {
    const before = contaminationReport({ modelId: 'anthropic:claude-sonnet-4-5-20250929', start: Date.parse('2025-01-01'), end: Date.parse('2026-01-01') });
    expect(before).toMatchObject({ trainingCutoff: '2025-07-01', overlap: true, windowStart: '2025-01-01', windowEnd: '2026-01-01' });
    expect(before.overlapShare).toBeCloseTo(181 / 365, 3);
    const after = contaminationReport({ modelId: 'gpt-4o-2024-08-06', start: Date.parse('2024-01-01'), end: Date.parse('2024-06-01') });
    expect(after).toMatchObject({ trainingCutoff: '2023-10-01', overlap: false, overlapShare: 0 });
    expect(after.note).toContain('after the model');
  });

  it('an unknown model is unknown and treated as overlapping; cutoffs override the table', () => {
    expect(contaminationReport({ modelId: 'my-model', start: 0, end: 1 })).toMatchObject({ trainingCutoff: 'unknown', overlap: true, overlapShare: null });
    expect(trainingCutoffFor('my-model-7b', { ...DEFAULT_TRAINING_CUTOFFS, 'my-model': '2020-01-01' })).toBe('2020-01-01');
    expect(() => contaminationReport({ modelId: 'x', start: 0, end: 1, cutoffs: { x: 'soon' } })).toThrow(/not a date/);
  });

  it('anonymised bars: renamed, shifted, rescaled; returns unchanged; bad options named', () => {
    const bars = [100, 110, 99].map((c, i) => ({ symbol: 'BTC', time: Date.parse('2021-01-01') + i * 86_400_000, open: c, high: c * 1.01, low: c * 0.99, close: c, volume: 5 }));
    const { bars: out, mapping } = anonymiseBars(bars, { shiftDays: -1000, priceScale: 0.5 });
    expect(out[0]).toMatchObject({ symbol: 'ASSET1', close: 50, volume: 5, time: bars[0]!.time - 1000 * 86_400_000 });
    expect(out[2]!.close / out[1]!.close).toBeCloseTo(99 / 110, 12);
    expect(mapping.symbols).toEqual({ BTC: 'ASSET1' });
    expect(() => anonymiseBars(bars, { priceScale: 0 })).toThrow(/priceScale/);
  });
});

describe('llm_costs.csv', () => {
  it('prices from the runtime table, cached tokens at their rate; unknown models unpriced, never 0', () => {
    const ledger = createCostLedger();
    const a = ledger.add({ decision: 1, time: 't1', modelId: 'claude-sonnet-4-5', inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 500_000, cacheWriteTokens: 0 });
    expect(a.costUsd).toBeCloseTo(0.5 * 3 + 0.5 * 0.3 + 0.1 * 15, 6);
    const b = ledger.add({ decision: 2, time: 't2', modelId: 'local:llama', inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(b.costUsd).toBe('unpriced');
    expect(ledger.unpriced).toBe(1);
    expect(ledger.totalUsd).toBeCloseTo(3.15, 6);
    expect(ledger.toCsv().trim().split('\n')[2]).toBe('2,t2,local:llama,10,1,0,0,unpriced');
    expect(createCostLedger({ llama: { inputPerMTok: 1, outputPerMTok: 1 } }).add({ decision: 1, time: 't', modelId: 'local:llama', inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }).costUsd).toBe(1);
  });
});
