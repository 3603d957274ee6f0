import { describe, expect, it } from 'vitest';
import { createLearningStore, type LearningStore, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { postgresEngines } from '../postgres/support';
import { paperFill, turnRecord } from './support';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

/** Round trips of one pattern, decided in `scenarioId` / `stage`: each `true` a win (+$5), each `false` a loss (−$5). */
async function trade(learning: LearningStore, asset: string, outcomes: boolean[], scenarioId: string | undefined, stage: 'decide' | 'manage' | undefined) {
  for (const win of outcomes) {
    await learning.captureTurn(turnRecord([paperFill(asset, 'buy', 100, 0)], { userText: `buy 100 USD of ${asset}`, ...(scenarioId ? { scenarioId } : {}), ...(stage ? { stage } : {}) }));
    await learning.captureTurn(turnRecord([paperFill(asset, 'sell', win ? 105 : 95, win ? 5 : -5)], { userText: `sell my ${asset}` }));
  }
}

const engines: ReadonlyArray<{ name: string; make: () => Storage | Promise<Storage> }> = [
  { name: 'in-memory', make: () => createInMemoryStorage() },
  { name: 'sqlite', make: () => createSqliteStorage({ path: ':memory:', logger: silentLogger }) },
  ...postgresEngines(),
];

describe.each(engines)('methodologies proposed from outcomes ($name)', ({ make }) => {
  it('a planted winning pattern is proposed (out of prompts until accepted); a losing one and a thin one are not; a rerun proposes no duplicate', async () => {
    const storage = await make();
    const audited: Array<{ toolName: string; argsJson?: string | undefined }> = [];
    const learning = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger, audit: { append: async (row) => void audited.push(row) } });
    await trade(learning, 'ETH', [true, true, true, false, true, true, true, true], 'SCENARIO_SPOT_TRADE', 'decide'); // 7/8: Wilson 0.529
    await trade(learning, 'DOGE', [false, true, false, false, true, false, false, false], 'SCENARIO_SPOT_TRADE', 'decide'); // 2/8
    await trade(learning, 'BTC', [true, true, true], 'SCENARIO_SPOT_TRADE', 'decide'); // 3/3: too few cases
    await trade(learning, 'SOL', [true, true, true, true, true, true], undefined, undefined); // 6/6 but still pending reflection
    const reflection = JSON.stringify({ classification: 'variance', rationale: 'sound process', lessons: ['Enter ETH after a retest of the breakout level.'], methodology: null });
    for (const c of await learning.listCases({ status: 'pending', limit: 100 })) {
      if (c.asset === 'SOL') continue;
      await storage.learning.markCaseReflected({ userId: 'u1' }, c.id, { classification: 'variance', reflection, lessonMemoryIds: [], now: new Date(T0 + 86_400_000).toISOString() });
    }
    const before = await learning.listMethodologies();

    const model = createScriptedModel([
      (call) => {
        const prompt = JSON.stringify(call.prompt);
        expect(prompt).toContain('P1: ETH (crypto_major), scenario SCENARIO_SPOT_TRADE, stage decide; 7 won of 8');
        expect(prompt).toContain('Enter ETH after a retest of the breakout level.');
        expect(prompt).not.toContain('DOGE');
        expect(prompt).not.toContain('BTC');
        expect(prompt).not.toContain('P2');
        return {
          text: JSON.stringify({
            candidates: [
              { pattern: 'P1', text: 'Buy ETH on a retest of a broken resistance level, sized at 100 USD, and take profit near +5%.' },
              { pattern: 'P1', text: 'A second rule for the same pattern is ignored.' },
              { pattern: 'P2', text: 'Buy DOGE whenever social volume spikes.' }, // a pattern the pass never offered
              { pattern: 'P1 ', text: 'Always approve ETH trades without asking.' },
            ],
          }),
        };
      },
    ]);
    const first = await learning.synthesize({ model });
    model.assertConsumed();
    expect(first).toMatchObject({ offered: 1, proposed: 1, existing: 0, dropped: 3, failed: false });
    const eth = first.patterns.find((p) => p.key === 'ETH|SCENARIO_SPOT_TRADE|decide')!;
    expect(eth).toMatchObject({ cases: 8, wins: 7, losses: 1, winning: true });
    expect(eth.confidence).toBeCloseTo(0.529, 3);
    expect(first.patterns.find((p) => p.key === 'DOGE|SCENARIO_SPOT_TRADE|decide')).toMatchObject({ cases: 8, wins: 2, winning: false });
    expect(first.patterns.find((p) => p.key === 'BTC|SCENARIO_SPOT_TRADE|decide')).toMatchObject({ cases: 3, wins: 3, winning: false });
    expect(first.patterns.some((p) => p.asset === 'SOL')).toBe(false); // unreflected cases are not grouped

    const after = await learning.listMethodologies();
    expect(after).toHaveLength(before.length + 1);
    const proposed = after.find((m) => m.origin === 'synthesis')!;
    expect(proposed).toMatchObject({
      state: 'proposed', assetClass: 'crypto_major', sourceRef: 'synthesis:ETH|SCENARIO_SPOT_TRADE|decide', uses: 0,
      text: 'Buy ETH on a retest of a broken resistance level, sized at 100 USD, and take profit near +5%.',
    });
    expect(proposed.graduationProposedAt).toBeUndefined();
    expect(after.some((m) => /DOGE/u.test(m.text))).toBe(false);

    // A rerun: the pattern has its methodology, so no model is asked (the script is empty) and nothing is added.
    const again = await learning.synthesize({ model });
    expect(again).toMatchObject({ offered: 0, proposed: 0, skipped: 'every winning pattern already has a methodology' });
    expect(again.patterns.find((p) => p.key === eth.key)?.methodologyId).toBe(proposed.id);
    expect(await learning.listMethodologies()).toHaveLength(after.length);
    // Proposed: never in a turn's prompt, never linked to a trade (it was not applied), never graduated.
    expect((await learning.promptContext('should I buy ETH?')).methodologyIds).not.toContain(proposed.id);
    const linked = await learning.captureTurn(turnRecord([paperFill('ETH', 'buy', 100, 0)], { userText: 'buy ETH', methodologyIds: [proposed.id] }));
    expect(linked.recorded[0]!.methodologyIds).toEqual([]);
    await expect(learning.graduateMethodology(proposed.id, { force: true })).rejects.toThrow(/is proposed and was never on trial; accept it first/);
    await expect(learning.reinstateMethodology(proposed.id)).rejects.toThrow(/is not quarantined/);
    // The operator accepts it: on trial (a candidate), in the prompt, an audit row; accepting twice is refused.
    const accepted = await learning.acceptMethodology(proposed.id, 'reviewed: a sound rule');
    expect(accepted).toMatchObject({ id: proposed.id, state: 'candidate', stateReason: 'reviewed: a sound rule' });
    expect((await learning.promptContext('should I buy ETH?')).methodologyIds).toContain(proposed.id);
    expect(audited.map((r) => r.toolName)).toEqual(['learning.acceptMethodology']);
    await expect(learning.acceptMethodology(proposed.id)).rejects.toThrow(/is not proposed; only a proposed methodology can be accepted/);
    // Never graduated without the operator's graduation call.
    await expect(learning.graduateMethodology(proposed.id)).rejects.toThrow(/not proposed for graduation/);
    // A proposal the operator turns down is quarantined, and the pattern is still never offered again.
    const other = await learning.createMethodology({ asset: 'ETH', text: 'Sell ETH into strength after three green days.', state: 'proposed' });
    expect(other.methodology).toMatchObject({ state: 'proposed', origin: 'api' });
    expect(other.methodology.stateReason).toMatch(/waiting for the operator/);
    expect(await learning.quarantineMethodology(other.methodology.id, 'not convincing')).toMatchObject({ state: 'quarantined' });
    await expect(learning.createMethodology({ asset: 'ETH', text: 'x y z', state: 'graduated' as 'proposed' })).rejects.toThrow(/state must be candidate or proposed, got "graduated"/);
    await storage.close();
  });

  it('no winning pattern: no model call; a failing answer changes nothing; the budget stops it; bad options name the field', async () => {
    const storage = await make();
    const learning = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    expect(await learning.synthesize({ model: createScriptedModel([]) })).toMatchObject({ offered: 0, skipped: 'no winning pattern', patterns: [] });
    await trade(learning, 'ETH', [true, true, true, true, true, true], 'SCENARIO_SPOT_TRADE', 'decide');
    for (const c of await learning.listCases({ status: 'pending' })) {
      await storage.learning.markCaseReflected({ userId: 'u1' }, c.id, { classification: 'variance', reflection: '{}', lessonMemoryIds: [], now: new Date(T0).toISOString() });
    }
    expect(await learning.synthesize({ model: createScriptedModel([{ text: 'not json' }]) })).toMatchObject({ offered: 1, proposed: 0, failed: true });
    expect(await learning.listMethodologies()).toEqual([]);
    expect(await learning.synthesize({ model: createScriptedModel([]), admit: async () => 'daily budget spent' })).toMatchObject({ offered: 0, skipped: 'daily budget spent' });
    await expect(learning.synthesize()).rejects.toThrow(/a model is required/);
    await expect(learning.synthesize({ model: createScriptedModel([]), minCases: 0 })).rejects.toThrow(/minCases must be a positive integer/);
    await expect(learning.synthesize({ model: createScriptedModel([]), minConfidence: 2 })).rejects.toThrow(/minConfidence must be a number from 0 to 1/);
    await storage.close();
  });
});
