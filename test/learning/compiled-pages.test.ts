import { describe, expect, it } from 'vitest';
import {
  createEventBus, createLearningStore, createLearningTools, createMemoryStore, createToolRegistry, DEFAULT_METHODOLOGY_POLICY, type NewTradeExecution, parseEnvelope, silentLogger,
} from '@minara/agent';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

async function world() {
  const clock = createFakeClock('2026-03-02T12:00:00.000Z');
  const storage = createInMemoryStorage({ now: clock.now });
  const bus = createEventBus();
  const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, bus, logger: silentLogger, now: clock.now });
  const learning = createLearningStore({ storage, scope: { userId: 'u1' }, memory, bus, now: clock.now, logger: silentLogger });
  const { methodology: good } = await learning.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts above the prior day high' });
  const { methodology: bad } = await learning.createMethodology({ asset: 'BTC', text: 'Buy BTC whenever funding is negative' });
  const { methodology: trial } = await learning.createMethodology({ asset: 'BTC', text: 'Scale out of BTC at +3R' });
  await learning.graduateMethodology(good.id, { force: true });
  await learning.quarantineMethodology(bad.id, 'lost money');
  const hc = (await learning.proposePreference({ dimension: 'position_size', kind: 'hard_constraint', text: 'Never hold more than 0.5 BTC' })).preference;
  await learning.approvePreference(hc.id);
  await learning.proposePreference({ dimension: 'leverage', kind: 'hard_constraint', text: 'Never above 3x on ETH' }).then(({ preference }) => learning.approvePreference(preference.id));
  const exec = (over: Partial<NewTradeExecution> & Pick<NewTradeExecution, 'orderId'>): NewTradeExecution => ({
    toolName: 'buy_token', action: 'open', kind: 'spot', asset: 'BTC', assetClass: 'crypto_major', side: 'buy', direction: 'long', quantity: 0.01, price: 60000,
    notionalUsd: 600, feeUsd: 0.6, realizedPnlUsd: -0.6, role: 'minara.core', methodologyIds: [good.id], simulated: true, provider: 'paper', at: '2026-03-02T12:00:00.000Z', ...over,
  });
  await storage.learning.recordExecutions({ userId: 'u1' }, {
    executions: [exec({ orderId: 'o1' }), exec({ orderId: 'c1', action: 'close', side: 'sell', price: 63000, realizedPnlUsd: 29.4, at: '2026-03-02T14:00:00.000Z', methodologyIds: [] })],
    policy: DEFAULT_METHODOLOGY_POLICY, now: '2026-03-02T14:00:00.000Z',
  });
  const [c] = await learning.listCases({ status: 'pending' });
  await storage.learning.markCaseReflected({ userId: 'u1' }, c!.id, { classification: 'variance', reflection: JSON.stringify({ lessons: ['Breakouts held; keep the stop rule.'] }), lessonMemoryIds: [], now: '2026-03-02T15:00:00.000Z' });
  return { clock, storage, bus, memory, learning, good, bad, trial };
}

describe('compiled pages', () => {
  it('one byte-deterministic page per asset: graduated methodologies and hard constraints that mention it, then reflected cases and trades; never quarantined or on-trial ones', async () => {
    const { learning, good, bad, trial } = await world();
    const page = await learning.compiledPage('$btc');
    expect(page).toBe([
      '# BTC (crypto_major)',
      '',
      '## Compiled truth',
      '',
      '### Graduated methodologies',
      `- #${good.id} [graduated · Wilson 0.21 · 1/1 won] Buy BTC breakouts above the prior day high`,
      '',
      '### Hard constraints',
      '- [position_size, hard constraint] Never hold more than 0.5 BTC',
      '',
      '## Timeline',
      '',
      '### Reflected cases',
      `- 2026-03-02T15:00:00.000Z [variance] long BTC spot 0.01 @ 60000 → 63000, +$28.80 (win) in 2h 0m; methodologies #${good.id}; role minara.core Lessons: Breakouts held; keep the stop rule.`,
      '',
      '### Trades',
      '- 2026-03-02T14:00:00.000Z close sell BTC spot 0.01 @ 63000 · buy_token',
      '- 2026-03-02T12:00:00.000Z open long BTC spot 0.01 @ 60000 · closed 2026-03-02T14:00:00.000Z at 63000, +$28.80 (win)',
      '',
    ].join('\n'));
    expect(page).not.toContain(`#${bad.id}`);
    expect(page).not.toContain(`#${trial.id}`);
    expect(page).not.toContain('ETH');
    const nohc = await learning.compiledPage('BTC', { includeHardConstraints: false });
    expect(nohc).not.toContain('Hard constraints');
    expect(nohc).not.toContain('0.5 BTC');
  });

  it('keeps forex pairs as pairs, and says so when an asset class is unknown', async () => {
    const { learning } = await world();
    const { methodology } = await learning.createMethodology({ asset: 'EUR/USD', text: 'Fade the London open' });
    await learning.graduateMethodology(methodology.id, { force: true });
    const page = await learning.compiledPage('EUR/USD');
    expect(page.split('\n')[0]).toBe('# EURUSD (forex)');
    expect(page).toContain('Fade the London open');
    expect(await learning.compiledPage('eurusd')).toBe(page);
    expect(await learning.compiledPage('ZZZQ')).toBe('# ZZZQ\n\nNo compiled knowledge: the asset class of ZZZQ is unknown.\n');
    await expect(learning.compiledPage('')).rejects.toMatchObject({ code: 'LEARNING_INVALID' });
  });

  it('serves from a 60 s LRU per entity and variant; this tenant’s memory:written, trade:recorded and trade:outcome_updated invalidate it, another tenant’s do not', async () => {
    const { learning, storage, bus, clock } = await world();
    const first = await learning.compiledPage('BTC');
    // A write behind the store's back (another process): the cache still answers…
    await storage.learning.recordExecutions({ userId: 'u1' }, {
      executions: [{ orderId: 'o9', toolName: 'buy_token', action: 'open', kind: 'spot', asset: 'BTC', side: 'buy', quantity: 1, price: 1, notionalUsd: 1, feeUsd: 0, realizedPnlUsd: 0, role: 'x', methodologyIds: [], simulated: true, provider: 'p', at: '2026-03-02T16:00:00.000Z' }],
      policy: DEFAULT_METHODOLOGY_POLICY, now: '2026-03-02T16:00:00.000Z',
    });
    expect(await learning.compiledPage('BTC')).toBe(first);
    bus.emit('trade:recorded', { userId: 'someone-else', tradeId: 1, asset: 'BTC', action: 'open' });
    expect(await learning.compiledPage('BTC')).toBe(first);
    // …until this tenant's event says something changed.
    bus.emit('trade:recorded', { userId: 'u1', tradeId: 99, asset: 'BTC', action: 'open' });
    const second = await learning.compiledPage('BTC');
    expect(second).not.toBe(first);
    expect(second).toContain('2026-03-02T16:00:00.000Z open buy BTC');
    // memory:written and trade:outcome_updated clear it too; so does the TTL.
    for (const emit of [
      () => bus.emit('memory:written', { id: 1, userId: 'u1', category: 'lesson' }),
      () => bus.emit('trade:outcome_updated', { userId: 'u1', tradeId: 1, asset: 'BTC' }),
      () => clock.advance(60_000),
    ]) {
      await storage.learning.recordExecutions({ userId: 'u1' }, {
        executions: [{ orderId: `o-${Math.random()}`, toolName: 't', action: 'open', kind: 'spot', asset: 'BTC', side: 'buy', quantity: 1, price: 1, notionalUsd: 1, feeUsd: 0, realizedPnlUsd: 0, role: 'x', methodologyIds: [], simulated: true, provider: 'p', at: clock.now().toISOString() }],
        policy: DEFAULT_METHODOLOGY_POLICY, now: clock.now().toISOString(),
      });
      const before = await learning.compiledPage('BTC');
      emit();
      expect(await learning.compiledPage('BTC')).not.toBe(before);
    }
    learning.close();
  });
});

describe('learning tools', () => {
  it('memory_learn writes to the learning tables, never to memories; memory_compiled_page reads a page; both through dispatch', async () => {
    const { storage, memory, learning } = await world();
    const tools = createToolRegistry({ storage, tools: createLearningTools({ learningFor: () => learning }) });
    const memoriesBefore = (await memory.read({ limit: 100 })).length;
    const m = parseEnvelope(await tools.dispatch('memory_learn', { kind: 'methodology', text: 'Fade EUR/USD spikes at the London open', asset: 'EUR/USD' }));
    expect(m).toMatchObject({ ok: true, data: { kind: 'methodology', created: true, assetClass: 'forex', state: 'proposed' } });
    const hc = parseEnvelope(await tools.dispatch('memory_learn', { kind: 'hard_constraint', text: 'Never risk more than 1% per trade', dimension: 'position_size' }));
    expect(hc).toMatchObject({ ok: true, data: { kind: 'hard_constraint', state: 'proposed' } });
    const pref = parseEnvelope(await tools.dispatch('memory_learn', { kind: 'preference', text: 'Prefers limit orders', dimension: 'order_type' }));
    expect(pref).toMatchObject({ ok: true, data: { state: 'proposed' } });
    expect((await memory.read({ limit: 100 })).length).toBe(memoriesBefore);
    expect((await learning.listMethodologies({ assetClasses: ['forex'] })).map((x) => x.origin)).toEqual(['memory_learn']);
    const missing = parseEnvelope(await tools.dispatch('memory_learn', { kind: 'preference', text: 'no dimension' }));
    expect(missing).toMatchObject({ ok: false, code: 'LEARNING_INVALID' });
    expect(missing.ok ? '' : missing.error).toMatch(/needs a dimension/);
    const page = parseEnvelope(await tools.dispatch('memory_compiled_page', { entity: 'BTC', includeHardConstraints: false }));
    expect(page.ok && (page.data as { page: string }).page).toBe(await learning.compiledPage('BTC', { includeHardConstraints: false }));
    expect(tools.get('memory_compiled_page')!.permissionTier).toBe(1);
    expect(() => createLearningTools({} as never)).toThrow(/learningFor/);
  });
});
