import { describe, expect, it } from 'vitest';
import { DEFAULT_METHODOLOGY_POLICY, normalizeLearningText, WILSON_Z_95, wilsonLowerBound } from '@minara/agent';

describe('wilsonLowerBound', () => {
  it('matches the published figures of Newcombe (1998), Table I (Wilson score interval, 95 %)', () => {
    // Newcombe RG. Two-sided confidence intervals for the single proportion. Stat Med 1998;17:857-872.
    expect(wilsonLowerBound(81, 263)).toBeCloseTo(0.2553, 4);
    expect(wilsonLowerBound(15, 148)).toBeCloseTo(0.0624, 4);
    expect(wilsonLowerBound(0, 20)).toBe(0);
    expect(wilsonLowerBound(1, 29)).toBeCloseTo(0.0061, 4);
    expect(wilsonLowerBound(29, 29)).toBeCloseTo(0.883, 4);
  });

  it('gives the figures the graduation rule turns on', () => {
    expect(wilsonLowerBound(7, 10)).toBeCloseTo(0.3968, 4); // 70 % of 10: not yet 0.55
    expect(wilsonLowerBound(9, 10)).toBeCloseTo(0.5958, 4); // proposed at 10 uses
    expect(wilsonLowerBound(14, 20)).toBeCloseTo(0.481, 4);
    expect(wilsonLowerBound(28, 40)).toBeCloseTo(0.5457, 4); // 70 % needs more than 40 uses to clear 0.55
    expect(wilsonLowerBound(6, 20)).toBeCloseTo(0.1455, 4); // 30 % of 20: quarantined
    expect(wilsonLowerBound(8, 10)).toBeCloseTo(0.4902, 4);
    expect(wilsonLowerBound(0, 0)).toBe(0);
    expect(WILSON_Z_95).toBeCloseTo(1.96, 2);
    expect(DEFAULT_METHODOLOGY_POLICY).toEqual({ graduationMinConfidence: 0.55, graduationMinUses: 10, demotionMaxConfidence: 0.4, demotionMinUses: 20 });
  });

  it('refuses impossible counts, naming them', () => {
    expect(() => wilsonLowerBound(3, 2)).toThrow(/wins must be an integer from 0 to uses \(2\)/);
    expect(() => wilsonLowerBound(1, -1)).toThrow(/uses must be a non-negative integer/);
    expect(() => wilsonLowerBound(1.5, 3)).toThrow(/wins/);
  });

  it('normalises methodology text for dedup', () => {
    expect(normalizeLearningText('  Buy   BTC breakouts.  ')).toBe('buy btc breakouts');
    expect(normalizeLearningText('做多比特币！')).toBe('做多比特币');
  });
});
