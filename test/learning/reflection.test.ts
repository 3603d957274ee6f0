import { describe, expect, it } from 'vitest';
import { createEventBus, createLearningStore, createMemoryStore, type MinaraBusEvents, type PostTurnRecord, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const record = (turnId: string, side: 'buy' | 'sell', pnl: number, asset = 'BTC'): PostTurnRecord => ({
  sessionId: 's', turnId, traceId: turnId, source: 'user', userId: 'u1', text: '', stopReason: 'finished', steps: 1,
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, toolCalls: [], pendingApprovals: [], turnCount: 1,
  activeSkills: [], methodologyIds: [], preferenceIds: [],
  executions: [{
    toolCallId: 'c', toolName: `${side}_token`, input: {}, orderFacts: { notionalUsd: 100, asset, side, quantity: 1 }, orderId: `o-${turnId}`,
    fill: { symbol: asset, side, quantity: 1, price: 100, notionalUsd: 100, feeUsd: 0, realizedPnlUsd: pnl }, at: '2026-03-01T00:00:00.000Z', role: 'minara.core',
  }],
});

async function withCases(n: number) {
  const storage = createInMemoryStorage();
  const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
  const bus = createEventBus();
  const learning = createLearningStore({ storage, scope: { userId: 'u1' }, memory, bus, logger: silentLogger });
  for (let i = 0; i < n; i++) {
    await learning.captureTurn(record(`open${i}`, 'buy', 0));
    await learning.captureTurn(record(`close${i}`, 'sell', i % 2 === 0 ? -12 : 8));
  }
  return { storage, memory, learning, bus };
}

const json = (v: unknown) => ({ text: JSON.stringify(v) });

describe('the role reflector (scripted model)', () => {
  it('classifies, writes lessons once as lesson memories linked to the case, proposes a methodology; a malformed answer leaves its case pending', async () => {
    const { memory, learning, bus } = await withCases(2);
    const events: Array<MinaraBusEvents['role_memory:reflected']> = [];
    bus.on('role_memory:reflected', (e) => events.push(e));
    const [c1, c2] = await learning.listCases({ status: 'pending' });
    const model = createScriptedModel([
      json({ classification: 'logic_error', rationale: 'Bought into resistance without a stop.' }),
      json({ lessons: ['Set a stop before entering BTC breakouts.', 'Skip breakouts into weekly resistance.'], methodology: 'Enter BTC breakouts only with a stop 2% below the breakout level.' }),
      { text: 'I think it was bad luck' },
    ]);
    const r = await learning.reflect({ model });
    expect(r).toEqual({ reflected: 1, lessons: 2, methodologies: 1, failed: 1, skipped: 0 });
    model.assertConsumed();
    const done = (await learning.listCases({ status: 'reflected' }))[0]!;
    expect(done).toMatchObject({ id: c1!.id, classification: 'logic_error', lessonMemoryIds: expect.any(Array) });
    expect(JSON.parse(done.reflection!)).toMatchObject({ rationale: 'Bought into resistance without a stop.', methodology: expect.stringContaining('stop 2%') });
    const lessons = await memory.read({ category: 'lesson' });
    expect(lessons.map((l) => l.content).sort()).toEqual(['Set a stop before entering BTC breakouts.', 'Skip breakouts into weekly resistance.']);
    expect(lessons.every((l) => l.metadata?.caseId === c1!.id && l.source === 'role_reflection')).toBe(true);
    expect(done.lessonMemoryIds.slice().sort()).toEqual(lessons.map((l) => l.id).sort());
    const [m] = await learning.listMethodologies();
    expect(m).toMatchObject({ origin: 'lesson', sourceRef: `case:${c1!.id}`, assetClass: 'crypto_major', state: 'candidate' });
    expect(events).toEqual([{ userId: 'u1', caseId: c1!.id, classification: 'logic_error', lessons: 2 }]);
    expect((await learning.listCases({ status: 'pending' })).map((c) => c.id)).toEqual([c2!.id]);

    // The next pass only sees the pending case; the reflected one is never rewritten.
    const again = createScriptedModel([json({ classification: 'variance', rationale: 'Noise.' }), json({ lessons: [], methodology: null })]);
    expect(await learning.reflect({ model: again })).toEqual({ reflected: 1, lessons: 0, methodologies: 0, failed: 0, skipped: 0 });
    again.assertConsumed();
    expect((await learning.listCases({ status: 'reflected' })).find((c) => c.id === c1!.id)).toEqual(done);
    expect(await memory.read({ category: 'lesson' })).toHaveLength(2);
  });

  it('a failing model changes nothing: no lessons, no reflection, no methodology', async () => {
    const { memory, learning } = await withCases(1);
    const model = createScriptedModel([{ error: 'overloaded' }, { error: 'overloaded' }]);
    expect(await learning.reflect({ model, limit: 1 })).toMatchObject({ reflected: 0, failed: 1 });
    expect(await learning.listCases({ status: 'pending' })).toHaveLength(1);
    expect(await memory.read({ category: 'lesson' })).toEqual([]);
    expect(await learning.listMethodologies()).toEqual([]);
    // An answer outside the schema (an unknown class) is refused the same way.
    const wrong = createScriptedModel([json({ classification: 'bad_luck', rationale: 'x' })]);
    expect(await learning.reflect({ model: wrong })).toMatchObject({ reflected: 0, failed: 1 });
    expect(await learning.listCases({ status: 'reflected' })).toEqual([]);
  });

  it('needs memory and a positive limit', async () => {
    const storage = createInMemoryStorage();
    const bare = createLearningStore({ storage, scope: { userId: 'u1' } });
    await expect(bare.reflect({ model: createScriptedModel([]) })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    const { learning } = await withCases(0);
    await expect(learning.reflect({ model: createScriptedModel([]), limit: 0 })).rejects.toThrow(/limit must be a positive integer/);
  });
});
