import { describe, expect, it } from 'vitest';
import { createApp, createMemoryStore, createPersonalizationRebuilder, silentLogger } from '@minara/agent';
import { createFakeClock, createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

describe('the personalization rebuild (scripted model)', () => {
  it('writes durable facts as inferred personalization rows, deduplicated; never touches user_manual rows; a rebuild with no new session asks no model', async () => {
    const clock = createFakeClock('2026-03-02T09:00:00.000Z');
    const storage = createInMemoryStorage({ now: clock.now });
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger, now: clock.now });
    const manual = await memory.write({ category: 'personalization', content: 'The user prefers weekly charts.', source: 'user_manual' });
    const before = await memory.get(manual.id);
    const say = async (sessionId: string, text: string) => {
      await storage.conversations.ensureSession({ id: sessionId, userId: 'u1', now: clock.now().toISOString() });
      clock.advance(1000);
      await storage.conversations.appendMessages(sessionId, [{ role: 'user', json: JSON.stringify({ role: 'user', content: text }), createdAt: clock.now().toISOString() }]);
    };
    await say('s1', 'I only look at weekly charts, daily is noise');
    await say('s2', 'keep my BTC perps under 3x please');
    await storage.conversations.ensureSession({ id: 'other', userId: 'u2', now: clock.now().toISOString() });
    await storage.conversations.appendMessages('other', [{ role: 'user', json: JSON.stringify({ role: 'user', content: 'SECRET OTHER TENANT' }), createdAt: clock.now().toISOString() }]);

    const model = createScriptedModel([
      (call) => {
        const prompt = JSON.stringify(call.prompt);
        expect(prompt).toContain('keep my BTC perps under 3x');
        expect(prompt).not.toContain('SECRET OTHER TENANT');
        return { text: JSON.stringify({ facts: [{ content: 'The user prefers weekly charts' }, { content: 'The user keeps BTC perps under 3x leverage.' }, { content: 'The user keeps BTC perps under 3x leverage' }] }) };
      },
    ]);
    const rebuilder = createPersonalizationRebuilder({ storage, scope: { userId: 'u1' }, memory, model, now: clock.now });
    const first = await rebuilder.rebuild();
    expect(first).toMatchObject({ written: 1, duplicates: 2 });
    expect(first.snapshot).toMatchObject({ sessionIds: ['s2', 's1'], factHashes: expect.any(Array), writtenIds: [expect.any(Number)] });
    const rows = await memory.read({ category: 'personalization' });
    expect(rows.map((r) => [r.content, r.source]).sort()).toEqual([
      ['The user keeps BTC perps under 3x leverage.', 'inferred'],
      ['The user prefers weekly charts.', 'user_manual'],
    ]);
    expect(await memory.get(manual.id)).toEqual(before);
    model.assertConsumed();

    // Nothing new: no model call (the scripted model has no step left and would fail the call).
    expect(await rebuilder.rebuild()).toMatchObject({ written: 0, skipped: 'no session changed since the last rebuild' });
    await say('s1', 'also I never touch memecoins');
    model.push({ text: JSON.stringify({ facts: [{ content: 'The user avoids memecoins.' }] }) });
    expect(await rebuilder.rebuild()).toMatchObject({ written: 1, duplicates: 0 });
    model.assertConsumed();
  });

  it('a failing model writes nothing and records no snapshot', async () => {
    const storage = createInMemoryStorage();
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    await storage.conversations.ensureSession({ id: 's', userId: 'u1', now: '2026-03-02T00:00:00.000Z' });
    await storage.conversations.appendMessages('s', [{ role: 'user', json: '{"role":"user","content":"hello there"}', createdAt: '2026-03-02T00:00:00.000Z' }]);
    const rebuilder = createPersonalizationRebuilder({ storage, scope: { userId: 'u1' }, memory, model: createScriptedModel([{ text: 'not json at all' }]) });
    await expect(rebuilder.rebuild()).rejects.toThrow();
    expect(await memory.read({ category: 'personalization' })).toEqual([]);
    expect(await storage.learning.latestPersonalizationSnapshot({ userId: 'u1' })).toBeUndefined();
    expect(() => createPersonalizationRebuilder({ storage, scope: { userId: 'u1' }, memory, model: createScriptedModel([]), sessions: 0 })).toThrow(/sessions must be a positive integer/);
  });
});

describe('personalization from three sources (memory.md: sessions, mirrored perp fills, external spot)', () => {
  const fill = (n: number, tsMs: number) => ({
    subAccountId: 'main', oid: `o${n}`, tsMs, symbol: 'BTC', side: 'B', dir: 'Open Long', size: 0.5, price: 60_000 + n, fee: 1.2, closedPnl: 0, fillUid: `f${n}`, now: new Date(tsMs).toISOString(),
  });

  it('reads the mirrored fills and spot activity beside the sessions; new mirrored rows make the next rebuild run', async () => {
    const clock = createFakeClock('2026-03-02T09:00:00.000Z');
    const storage = createInMemoryStorage({ now: clock.now });
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger, now: clock.now });
    await storage.learning.insertPerpsFills({ userId: 'u1' }, [fill(1, Date.parse('2026-03-01T10:00:00Z'))]);
    await storage.learning.insertExternalSpot({ userId: 'u1' }, [{ txHash: '0xabc', tsMs: Date.parse('2026-03-01T11:00:00Z'), type: 'swap', fromToken: 'USDC', toToken: 'SOL', amount: '250', valueUsd: 250, status: 'success', now: '2026-03-01T11:00:00.000Z' }]);
    await storage.learning.insertPerpsFills({ userId: 'u2' }, [{ ...fill(9, Date.parse('2026-03-01T12:00:00Z')), symbol: 'OTHERTENANTCOIN' }]);
    const model = createScriptedModel([
      (call) => {
        const prompt = JSON.stringify(call.prompt);
        expect(prompt).toContain('perp fill: B 0.5 BTC at 60001 (Open Long)');
        expect(prompt).toContain('spot swap: 250 USDC -> SOL (~$250), success');
        expect(prompt).not.toContain('OTHERTENANTCOIN');
        return { text: JSON.stringify({ facts: [{ content: 'The user trades BTC perps long.' }] }) };
      },
    ]);
    const rebuilder = createPersonalizationRebuilder({ storage, scope: { userId: 'u1' }, memory, model, now: clock.now });
    // No session at all: the mirrored trades alone are a source.
    expect(await rebuilder.rebuild()).toMatchObject({ written: 1 });
    expect(await rebuilder.rebuild()).toMatchObject({ written: 0, skipped: 'no session changed since the last rebuild' });
    clock.advance(60_000);
    await storage.learning.insertPerpsFills({ userId: 'u1' }, [fill(2, Date.parse('2026-03-02T08:00:00Z'))]);
    model.push({ text: JSON.stringify({ facts: [] }) });
    expect(await rebuilder.rebuild()).toMatchObject({ written: 0, duplicates: 0 });
    model.assertConsumed();
    expect(() => createPersonalizationRebuilder({ storage, scope: { userId: 'u1' }, memory, model, mirroredTrades: -1 })).toThrow(/mirroredTrades must be a non-negative integer/);
  });

  it('createApp rebuilds when perps_fills:recorded or external_spot:recorded arrive for its user', async () => {
    const storage = createInMemoryStorage();
    const model = createScriptedModel([{ text: JSON.stringify({ facts: [{ content: 'The user scalps ETH perps.' }] }) }]);
    const app = await createApp({ storage, model, userId: 'u1', env: { MINARA_EXTRACTION: 'disabled' }, logger: silentLogger });
    try {
      const rebuilt = new Promise<{ written: number }>((resolve) => app.bus.on('personalization:rebuilt', (e) => resolve(e)));
      await storage.learning.insertPerpsFills({ userId: 'u1' }, [fill(3, Date.parse('2026-03-01T10:00:00Z'))]);
      app.bus.emit('perps_fills:recorded', { userId: 'someone-else', subAccountId: 'main', inserted: 1 });
      app.bus.emit('perps_fills:recorded', { userId: 'u1', subAccountId: 'main', inserted: 1 });
      expect(await rebuilt).toMatchObject({ written: 1 });
      const rows = await app.memory.read({ category: 'personalization' });
      expect(rows.map((r) => [r.content, r.source])).toEqual([['The user scalps ETH perps.', 'inferred']]);
      model.assertConsumed();
    } finally {
      await app.close();
    }
  });
});
