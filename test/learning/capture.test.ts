import { describe, expect, it } from 'vitest';
import {
  ABSENCE_PREFERENCE_EVIDENCE, absenceEvidenceEnough, createLearningStore, createMemoryStore, createTurnLearning, type LearningStore, MinaraError, readHardConstraints, silentLogger, type PostTurnRecord, type TurnLearning,
} from '@minara/agent';
import { createInMemoryStorage, recordEvents } from '@minara/agent/testing';
import { setup, systemTexts } from '../runtime/helpers';

function withLearning(script: Parameters<typeof setup>[0], over: { learning?: TurnLearning } = {}) {
  const storage = createInMemoryStorage();
  const memory = createMemoryStore({ storage, scope: { userId: 'default' }, logger: silentLogger });
  const store = createLearningStore({ storage, scope: { userId: 'default' }, memory, logger: silentLogger });
  const learning = over.learning ?? createTurnLearning({ learningFor: () => store });
  return { ...setup(script, { storage, learning }), store, memory };
}

describe('decision capture through the runtime', () => {
  it('emits one post-turn record before turn-end with the execution, its order facts and the role (the active skill), and writes trade_history', async () => {
    const swap = { toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } }] };
    const { runtime, store, tools } = withLearning([{ toolCalls: [{ toolName: 'activate_skills', input: { ids: ['minara.core'] } }] }, swap, { text: 'swapped' }]);
    const first = await runtime.generate({ sessionId: 'c1', message: 'swap 50 USDC to ETH' });
    const r = first.pendingApprovals.length > 0 ? await runtime.generate({ sessionId: 'c1', approvals: [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }] }) : first;
    const types = r.events.map((e) => e.type);
    expect(types.at(-1)).toBe('turn-end');
    expect(types.at(-2)).toBe('post-turn');
    const post = r.events.find((e) => e.type === 'post-turn');
    const record = (post as { record: PostTurnRecord }).record;
    expect(record.executions).toHaveLength(1);
    expect(record.executions[0]).toMatchObject({ toolName: 'swap_tokens', orderFacts: { notionalUsd: 50, asset: 'ETH', side: 'swap' }, role: 'minara.core' });
    expect(record.activeSkills).toEqual(['minara.core']);
    const [trade] = await store.listTrades();
    expect(trade).toMatchObject({ action: 'open', kind: 'spot', asset: 'ETH', assetClass: 'crypto_major', role: 'minara.core', turnId: record.turnId, sessionId: 'c1', notionalUsd: 50, provider: 'unknown', simulated: false });
    // A host tool whose result has no order id is keyed by turn and call.
    expect(trade!.orderId).toBe(`${record.turnId}:${record.executions[0]!.toolCallId}`);
  });

  it('a failing learning loop never breaks the turn: the model answers without the learned block', async () => {
    const failing: TurnLearning = {
      prepareTurn: async () => { throw new Error('db down'); },
      captureTurn: async () => { throw new Error('db down'); },
    };
    const { runtime, model } = withLearning([{ text: 'fine' }], { learning: failing });
    const r = await recordEvents(runtime.run({ sessionId: 'f1', message: 'price of BTC?' }));
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('finished');
    expect(systemTexts(model.calls[0]!.prompt).some((t) => t.startsWith('## Learned'))).toBe(false);
  });
});

describe('the learning store', () => {
  const make = () => {
    const storage = createInMemoryStorage();
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    let t = Date.parse('2026-03-01T00:00:00Z');
    const store = createLearningStore({ storage, scope: { userId: 'u1' }, memory, logger: silentLogger, now: () => new Date((t += 1000)) });
    return { storage, memory, store };
  };
  const record = (over: Partial<PostTurnRecord>): PostTurnRecord => ({
    sessionId: 's', turnId: 't', traceId: 'tr', source: 'user', userId: 'u1', text: '', stopReason: 'finished', steps: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, toolCalls: [], pendingApprovals: [], turnCount: 1,
    activeSkills: [], methodologyIds: [], preferenceIds: [], executions: [], ...over,
  });
  const buy = (i: number, slippageBps: number, symbol = 'ETH') => ({
    toolCallId: `c${i}`, toolName: 'buy_token', input: { symbol, amountUsd: 10, slippageBps }, orderFacts: { notionalUsd: 10, asset: symbol, side: 'buy' as const, quantity: 0.01 },
    orderId: `o${i}`, at: '2026-03-01T00:00:00.000Z', role: 'agent',
  });

  it('graduation refusals and operator calls: not proposed, quarantined, reinstated, forced', async () => {
    const { store } = make();
    const { methodology: m } = await store.createMethodology({ assetClass: 'perps', text: 'Scale into funding extremes' });
    const e = await store.graduateMethodology(m.id).catch((x: unknown) => x);
    expect(MinaraError.isInstance(e) && e.code).toBe('LEARNING_TRANSITION_REFUSED');
    expect((e as Error).message).toMatch(/not proposed for graduation \(Wilson 0\.000 with 0 uses; needs ≥ 0\.55 with ≥ 10\)/);
    await store.quarantineMethodology(m.id, 'operator doubts it');
    await expect(store.graduateMethodology(m.id, { force: true })).rejects.toThrow(/quarantined \(operator doubts it\); reinstate it first/);
    expect((await store.reinstateMethodology(m.id)).state).toBe('candidate');
    expect((await store.graduateMethodology(m.id, { force: true })).state).toBe('graduated');
    await expect(store.graduateMethodology(999)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.createMethodology({ text: 'x', asset: 'NOTATOKEN' })).rejects.toMatchObject({ code: 'LEARNING_INVALID' });
    await expect(store.createMethodology({ text: '', assetClass: 'perps' })).rejects.toThrow(/text must be a non-empty string/);
  });

  it('seeds methodologies from markdown or JSON, deduplicated; a bad seed names the line', async () => {
    const { store } = make();
    expect(await store.seedMethodologies('## crypto_major\n- Buy pullbacks in an uptrend.\n- Buy pullbacks in an uptrend\n\n## forex\n- Fade London-open spikes on EUR/USD\n', { sourceRef: 'seed.md' })).toEqual({ created: 2, existing: 1 });
    expect(await store.seedMethodologies('[{"assetClass":"perps","text":"Cut at -2R"}]')).toEqual({ created: 1, existing: 0 });
    expect((await store.listMethodologies()).map((m) => [m.assetClass, m.origin, m.sourceRef ?? null])).toEqual(
      expect.arrayContaining([['crypto_major', 'seed', 'seed.md'], ['forex', 'seed', 'seed.md'], ['perps', 'seed', null]]),
    );
    await expect(store.seedMethodologies('- orphan line')).rejects.toThrow(/seed line 1: a methodology before any "## <asset_class>" heading/);
  });

  it('mines behavioural preferences and graduates them at turn start; the learned_preference memory is written once', async () => {
    const { store, memory } = make();
    // "Avoids memecoins" is inferred from absence: counted from the 10th opened trade in 3+ assets (ABSENCE_PREFERENCE_EVIDENCE).
    for (let i = 0; i < 14; i++) await store.captureTurn(record({ executions: [buy(i, 50, ['ETH', 'BTC', 'SOL'][i % 3])] }));
    const [slip] = await store.listPreferences({ dimension: 'slippage' });
    expect(slip).toMatchObject({ state: 'proposed', evidence: 14, contradictions: 0, value: '50', text: 'Caps slippage at 0.5% (50 bps) on trades' });
    const memes = (await store.listPreferences({ dimension: 'asset_class' }))[0]!;
    expect(memes).toMatchObject({ text: 'Avoids memecoins', evidence: 5 });
    const activated = await store.graduatePreferences();
    expect(activated.map((p) => p.dimension).sort()).toEqual(['asset_class', 'slippage']);
    expect(await store.graduatePreferences()).toEqual([]);
    const learned = await memory.read({ limit: 10 });
    expect(learned.filter((h) => h.source === 'learned_preference').map((h) => h.content).sort()).toEqual(['Avoids memecoins', 'Caps slippage at 0.5% (50 bps) on trades']);
    const ctx = await store.promptContext('buy ETH');
    expect(ctx.block).toContain('### Preferences\n- [asset_class] Avoids memecoins\n- [slippage] Caps slippage at 0.5% (50 bps) on trades');
    // A memecoin trade contradicts it; a rejected preference's memory is soft-deleted, not lost.
    await store.captureTurn(record({ executions: [buy(99, 50, 'PEPE')] }));
    expect((await store.listPreferences({ dimension: 'asset_class' }))[0]!.contradictions).toBe(1);
    const rejected = await store.rejectPreference(memes.id);
    expect(rejected.state).toBe('rejected');
    expect(await memory.get(rejected.memoryId!, { includeDeleted: true })).toMatchObject({ deletedAt: expect.any(String) });
  });

  it('two ETH buys propose no "Avoids memecoins": absence needs 10 opened trades in 3 assets, none a memecoin', async () => {
    expect(ABSENCE_PREFERENCE_EVIDENCE).toEqual({ minTrades: 10, minAssets: 3 });
    const { store } = make();
    await store.captureTurn(record({ executions: [buy(1, 50)] }));
    await store.captureTurn(record({ executions: [buy(2, 50)] }));
    expect(await store.listPreferences({ dimension: 'asset_class' })).toEqual([]);
    // What they did do is evidence (a slippage cap they asked for twice), proposed for review.
    expect((await store.listPreferences({ dimension: 'slippage' }))[0]).toMatchObject({ state: 'proposed', evidence: 2 });
    // Nine trades in three assets: still not enough; the tenth is.
    for (let i = 3; i <= 9; i++) await store.captureTurn(record({ executions: [buy(i, 50, ['BTC', 'SOL', 'ETH'][i % 3])] }));
    expect(await store.listPreferences({ dimension: 'asset_class' })).toEqual([]);
    await store.captureTurn(record({ executions: [buy(10, 50, 'BTC')] }));
    expect((await store.listPreferences({ dimension: 'asset_class' }))[0]).toMatchObject({ text: 'Avoids memecoins', state: 'proposed', evidence: 1 });
    // Ten trades in one asset, or any memecoin among them, is not enough either.
    expect(absenceEvidenceEnough(Array.from({ length: 12 }, () => ({ asset: 'ETH', assetClass: 'crypto_major' })), 'crypto_meme')).toBe(false);
    const mixed = [...Array.from({ length: 11 }, (_, i) => ({ asset: ['ETH', 'BTC', 'SOL'][i % 3]!, assetClass: 'crypto_major' })), { asset: 'PEPE', assetClass: 'crypto_meme' }];
    expect(absenceEvidenceEnough(mixed, 'crypto_meme')).toBe(false);
    expect(absenceEvidenceEnough(mixed.slice(0, 11), 'crypto_meme')).toBe(true);
  });

  it('a hard constraint never activates without the explicit call; approval writes its limits to the profile', async () => {
    const { store, memory } = make();
    const { preference } = await store.proposePreference({ dimension: 'leverage', kind: 'hard_constraint', text: 'Never use more than 3x leverage', value: '{"maxLeverage":3}' });
    for (let i = 0; i < 3; i++) expect(await store.graduatePreferences()).toEqual([]);
    expect((await store.listPreferences({ states: ['proposed'] })).map((p) => p.id)).toEqual([preference.id]);
    expect(await readHardConstraints(memory)).toEqual({});
    const active = await store.approvePreference(preference.id);
    expect(active).toMatchObject({ state: 'active', kind: 'hard_constraint' });
    expect(await readHardConstraints(memory)).toEqual({ maxLeverage: 3 });
    await expect(store.approvePreference(preference.id)).rejects.toMatchObject({ code: 'LEARNING_TRANSITION_REFUSED' });
    await expect(store.proposePreference({ dimension: 'Bad Dim', text: 'x' })).rejects.toMatchObject({ code: 'LEARNING_INVALID' });
  });

  it('the learned block: quarantined methodologies never appear; same rows, same bytes', async () => {
    const { store } = make();
    const { methodology: good } = await store.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts' });
    const { methodology: bad } = await store.createMethodology({ asset: 'ETH', text: 'Short ETH into unlocks' });
    const { methodology: fx } = await store.createMethodology({ asset: 'EUR/USD', text: 'Fade the London open' });
    expect(fx.assetClass).toBe('forex');
    await store.quarantineMethodology(bad.id);
    const a = await store.promptContext('BTC or ETH?');
    const b = await store.promptContext('BTC or ETH?');
    expect(a.block).toBe(b.block);
    expect(a.methodologyIds).toEqual([good.id]);
    expect(a.block).toBe(`## Learned from outcomes\nDerived from past trades and behaviour; the workspace files above win on any conflict. Methodologies on trial are scored by the trades that use them.\n\n### Methodologies (BTC, ETH, crypto_major)\n- #${good.id} [on trial · no outcomes yet] Buy BTC breakouts`);
    expect((await store.promptContext('EUR/USD outlook')).methodologyIds).toEqual([fx.id]);
    expect(await store.promptContext('hello')).toEqual({ methodologyIds: [], preferenceIds: [] });
  });
});

describe('createLearningStore', () => {
  it('refuses misconfiguration at construction, naming the field', () => {
    expect(() => createLearningStore({ storage: {} as never, scope: { userId: 'u' } })).toThrow(/storage/);
    expect(() => createLearningStore({ storage: createInMemoryStorage(), scope: { userId: '' } })).toThrow(/scope\.userId/);
    expect(() => createLearningStore({ storage: createInMemoryStorage(), scope: { userId: 'u' }, maxPromptMethodologies: -1 })).toThrow(/maxPromptMethodologies/);
  });

  it('keeps tenants apart: one store never sees another scope’s rows', async () => {
    const storage = createInMemoryStorage();
    const a: LearningStore = createLearningStore({ storage, scope: { userId: 'a' } });
    const b: LearningStore = createLearningStore({ storage, scope: { userId: 'a', agentId: 'bot' } });
    const { methodology } = await a.createMethodology({ asset: 'BTC', text: 'x' });
    expect(await b.getMethodology(methodology.id)).toBeUndefined();
    await expect(b.graduateMethodology(methodology.id, { force: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
