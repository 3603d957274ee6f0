/** The library analyses a message once per text and shares it between its own rules; what it hands out stays the caller's. */
import { describe, expect, it } from 'vitest';
import { classifyMessage, extractRoutingEntities, inferLifecycleStages } from '@minara/agent';
import { createScenarioClassifier } from '@minara/agent/finance';
import { analyzeText, analyzeTextShared } from '../../src/skills/text-match';

describe('shared message analysis', () => {
  it('the same text gives the same shared analysis; analyzeText still returns the caller a fresh one', () => {
    const text = 'Should I buy $WIF on solana, or swap USDC to ETH? 设置止损';
    expect(analyzeTextShared(text)).toBe(analyzeTextShared(text));
    expect(analyzeTextShared(text)).toEqual(analyzeText(text));
    expect(analyzeText(text)).not.toBe(analyzeText(text));
    expect(analyzeText(text)).not.toBe(analyzeTextShared(text));
  });

  it('results are copies: changing what one call returned changes nothing for the next', () => {
    const text = 'long $PEPE 10x and sell EUR/USD';
    const first = extractRoutingEntities(text);
    const expected = structuredClone(first);
    (first[0] as { value: string }).value = 'CHANGED';
    first.pop();
    expect(extractRoutingEntities(text)).toEqual(expected);
    const stages = inferLifecycleStages(text);
    stages.length = 0;
    expect(inferLifecycleStages(text)).toEqual(['decide']);
    expect(classifyMessage(text)).toEqual(classifyMessage(analyzeText(text)));
  });

  it("a caller's own analysis, changed after one call, is analysed again (never a stale answer)", () => {
    const own = analyzeText('buy BTC');
    expect(inferLifecycleStages(own)).toEqual(['decide']);
    (own.tokens as Set<string>).delete('buy');
    (own.tokens as Set<string>).add('rebalance');
    expect(inferLifecycleStages(own)).toEqual(['manage']);
  });

  it('the scenario classifier answers the same for a repeated message as for a fresh one', () => {
    const a = createScenarioClassifier();
    const b = createScenarioClassifier();
    const message = 'swap 100 USDC to ETH';
    expect(a.rank(message)).toEqual(b.rank(message));
    expect(a.rank(message)).toEqual(a.rank(message));
    expect(a.classify(message, { source: 'cron' })).toEqual(b.classify(message, { source: 'cron' }));
    // CJK bigrams feed the example overlap (the figures the classifier gave before its CJK scan became one match).
    expect(a.rank('把 100 USDC 换成 ETH')[0]).toMatchObject({ id: 'SCENARIO_SPOT_TRADE', score: 18, reasons: ['kw:换成', 'ex:0.40'] });
  });
});
