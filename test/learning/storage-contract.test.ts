import { describe, expect, it } from 'vitest';
import { DEFAULT_METHODOLOGY_POLICY, MinaraError, type NewTradeExecution, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { postgresEngines } from '../postgres/support';

const engines: ReadonlyArray<{ name: string; make: () => Storage }> = [
  { name: 'sqlite', make: () => createSqliteStorage({ path: ':memory:', logger: silentLogger }) },
  { name: 'in-memory', make: () => createInMemoryStorage() },
  ...postgresEngines(),
];

const S = { userId: 'u1' };
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function exec(over: Partial<NewTradeExecution> & Pick<NewTradeExecution, 'orderId'>): NewTradeExecution {
  return {
    toolName: 'open_perps_position', action: 'open', kind: 'perp', asset: 'BTC', assetClass: 'crypto_major', side: 'long', direction: 'long', quantity: 1,
    price: 100, notionalUsd: 100, feeUsd: 0.05, realizedPnlUsd: -0.05, role: 'minara.core', methodologyIds: [], simulated: true, provider: 'paper', at: at(0),
    ...over,
  };
}

describe.each(engines)('learning storage domain ($name)', ({ make }) => {
  it('records executions once by order id, closes first-in first-out with P&L allocation, attributes outcomes and opens cases', async () => {
    const s = make();
    const { methodology: m } = await s.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: 'Trend', normalizedText: 'trend', origin: 'api', now: at(0) });
    const first = await s.learning.recordExecutions(S, {
      executions: [exec({ orderId: 'o1', quantity: 1, methodologyIds: [m.id] }), exec({ orderId: 'o2', quantity: 3, at: at(1), methodologyIds: [m.id] })],
      policy: DEFAULT_METHODOLOGY_POLICY, now: at(1),
    });
    expect(first.recorded.map((t) => [t.orderId, t.status])).toEqual([['o1', 'open'], ['o2', 'open']]);
    // A close of 2 units: all of o1 (1) and 1 of o2's 3, its +20 P&L split by quantity.
    const close = await s.learning.recordExecutions(S, {
      executions: [exec({ orderId: 'c1', action: 'close', side: 'close', quantity: 2, price: 110, realizedPnlUsd: 20, at: at(61), methodologyIds: [m.id] })],
      policy: DEFAULT_METHODOLOGY_POLICY, now: at(61),
    });
    expect(close.recorded[0]).toMatchObject({ orderId: 'c1', action: 'close', status: 'settled', closesTradeIds: [first.recorded[0]!.id, first.recorded[1]!.id] });
    expect(close.closed).toHaveLength(1);
    expect(close.closed[0]).toMatchObject({ orderId: 'o1', status: 'closed', outcome: 'win', holdingMs: 61 * 60_000, exitPrice: 110, closedQuantity: 1 });
    expect(close.closed[0]!.realizedPnlUsd).toBeCloseTo(9.95, 10);
    const o2 = close.updated.find((t) => t.orderId === 'o2')!;
    expect(o2).toMatchObject({ status: 'open', closedQuantity: 1 });
    expect(o2.realizedPnlUsd).toBeCloseTo(9.95, 10);
    expect(close.methodologyChanges).toEqual([{ methodology: expect.objectContaining({ id: m.id, uses: 1, wins: 1 }), change: 'scored' }]);
    expect(close.cases).toHaveLength(1);
    expect(close.cases[0]).toMatchObject({ tradeId: close.closed[0]!.id, outcome: 'win', role: 'minara.core', asset: 'BTC', methodologyIds: [m.id] });
    expect(close.cases[0]!.summary).toBe(`long BTC perp 1 @ 100 → 110, +$9.95 (win) in 1h 1m; methodologies #${m.id}; role minara.core`);
    // Replaying the same executions changes nothing.
    const replay = await s.learning.recordExecutions(S, { executions: [exec({ orderId: 'o1' }), exec({ orderId: 'c1', action: 'close', side: 'close', quantity: 2 })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(62) });
    expect(replay.recorded).toEqual([]);
    expect(replay.duplicates).toEqual(['o1', 'c1']);
    expect((await s.learning.getMethodology(S, m.id))!.uses).toBe(1);
    // The rest of o2 closes at a loss: o2's outcome is its whole P&L.
    const rest = await s.learning.recordExecutions(S, {
      executions: [exec({ orderId: 'c2', action: 'close', side: 'close', quantity: 5, price: 90, realizedPnlUsd: -40, at: at(120) })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(120),
    });
    expect(rest.closed.map((t) => [t.orderId, t.outcome])).toEqual([['o2', 'loss']]);
    // Only 2 of the close's 5 units were open here, so 2/5 of its P&L is o2's.
    expect(rest.closed[0]!.realizedPnlUsd).toBeCloseTo(9.95 - 16, 10);
    expect((await s.learning.getMethodology(S, m.id))).toMatchObject({ uses: 2, wins: 1 });
    expect((await s.learning.listTrades(S, { action: 'open' })).map((t) => t.orderId)).toEqual(['o2', 'o1']);
    expect((await s.learning.listTrades(S, { status: 'open' }))).toEqual([]);
    expect((await s.learning.listCases(S, { status: 'pending' })).map((c) => c.tradeId)).toEqual([first.recorded[0]!.id, first.recorded[1]!.id]);
    await s.close();
  });

  it('quarantines automatically below the demotion bound with 20 uses, in the same transaction as the outcome', async () => {
    const s = make();
    const { methodology: m } = await s.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: 'Bad', normalizedText: 'bad', origin: 'seed', now: at(0) });
    for (let i = 0; i < 20; i++) {
      const r = await s.learning.recordExecutions(S, {
        executions: [exec({ orderId: `o${i}`, methodologyIds: [m.id], at: at(i) }), exec({ orderId: `c${i}`, action: 'close', side: 'close', realizedPnlUsd: i < 5 ? 5 : -5, at: at(i) })],
        policy: DEFAULT_METHODOLOGY_POLICY, now: at(i),
      });
      expect(r.methodologyChanges[0]!.change).toBe(i === 19 ? 'quarantined' : 'scored');
    }
    const q = (await s.learning.getMethodology(S, m.id))!;
    expect(q).toMatchObject({ state: 'quarantined', uses: 20, wins: 5, quarantinedAt: at(19) });
    expect(q.stateReason).toMatch(/Wilson lower bound 0\.11\d < 0\.4 after 20 uses \(5 wins\)/);
    expect(await s.learning.listMethodologies(S, { states: ['candidate', 'graduated'] })).toEqual([]);
    await s.close();
  });

  it('methodologies: dedup per asset class, compare-and-set transitions, ordering, bad input names the field', async () => {
    const s = make();
    const a = await s.learning.upsertMethodology(S, { assetClass: 'perps', text: 'A', normalizedText: 'a', origin: 'api', now: at(0) });
    expect((await s.learning.upsertMethodology(S, { assetClass: 'perps', text: 'A!', normalizedText: 'a', origin: 'api', now: at(1) })).created).toBe(false);
    const b = await s.learning.upsertMethodology(S, { assetClass: 'forex', text: 'A', normalizedText: 'a', origin: 'api', now: at(0) });
    expect(b.created).toBe(true);
    const g = await s.learning.transitionMethodology(S, a.methodology.id, { from: ['candidate'], to: 'graduated', reason: 'ok', now: at(2) });
    expect(g).toMatchObject({ state: 'graduated', graduatedAt: at(2), stateReason: 'ok' });
    expect(await s.learning.transitionMethodology(S, a.methodology.id, { from: ['candidate'], to: 'graduated', reason: 'again', now: at(3) })).toBeUndefined();
    expect((await s.learning.listMethodologies(S)).map((m) => m.state)).toEqual(['graduated', 'candidate']);
    expect(await s.learning.listMethodologies(S, { assetClasses: ['forex'] })).toHaveLength(1);
    expect(await s.learning.listMethodologies(S, { ids: [b.methodology.id] })).toHaveLength(1);
    await expect(s.learning.upsertMethodology(S, { assetClass: 'Bad Class', text: 'x', normalizedText: 'x', origin: 'api', now: at(0) })).rejects.toThrow(/assetClass must be a lower snake case name/);
    await expect(s.learning.recordExecutions(S, { executions: [exec({ orderId: 'x', quantity: -1 })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(0) })).rejects.toThrow(/executions\[0\]\.quantity must be a non-negative number/);
    await expect(s.learning.recordExecutions(S, { executions: [exec({ orderId: 'x' })], policy: { ...DEFAULT_METHODOLOGY_POLICY, demotionMinUses: 0 }, now: at(0) })).rejects.toThrow(/policy\.demotionMinUses/);
    await expect(s.learning.listMethodologies({ userId: '' })).rejects.toThrow(/scope\.userId/);
    // Nothing was stored by the refused calls.
    expect(await s.learning.listTrades(S)).toEqual([]);
    await s.close();
  });

  it('cases are reflected once: a second reflection changes nothing', async () => {
    const s = make();
    await s.learning.recordExecutions(S, { executions: [exec({ orderId: 'o' }), exec({ orderId: 'c', action: 'close', side: 'close', realizedPnlUsd: 3 })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(0) });
    const [c] = await s.learning.listCases(S, { status: 'pending' });
    expect(await s.learning.markCaseReflected(S, c!.id, { classification: 'variance', reflection: '{"a":1}', lessonMemoryIds: [7], now: at(1) })).toBe(true);
    expect(await s.learning.markCaseReflected(S, c!.id, { classification: 'logic_error', reflection: '{"b":2}', lessonMemoryIds: [8], now: at(2) })).toBe(false);
    const [r] = await s.learning.listCases(S, { status: 'reflected' });
    expect(r).toMatchObject({ classification: 'variance', reflection: '{"a":1}', lessonMemoryIds: [7], reflectedAt: at(1) });
    expect(await s.learning.listCases(S, { status: 'pending' })).toEqual([]);
    await s.close();
  });

  it('preferences: observations add evidence and contradictions; transitions are compare-and-set', async () => {
    const s = make();
    const ob = (v: string, effect: 'support' | 'contradict' = 'support') => ({ dimension: 'slippage', text: `slip ${v}`, normalizedText: `slippage:${v}`, value: v, effect });
    await s.learning.observePreferences(S, [ob('50'), ob('50'), ob('100')], at(0));
    const list = await s.learning.listPreferences(S, { dimension: 'slippage' });
    const p50 = list.find((p) => p.value === '50')!;
    const p100 = list.find((p) => p.value === '100')!;
    expect(p50).toMatchObject({ evidence: 2, contradictions: 1, state: 'proposed', kind: 'behavioural', source: 'mined' });
    expect(p100).toMatchObject({ evidence: 1, contradictions: 0 });
    await s.learning.observePreferences(S, [ob('100', 'contradict')], at(1));
    expect((await s.learning.getPreference(S, p100.id))!.contradictions).toBe(1);
    const active = await s.learning.transitionPreference(S, p50.id, { from: ['proposed'], to: 'active', now: at(2), memoryId: 42 });
    expect(active).toMatchObject({ state: 'active', activatedAt: at(2), memoryId: 42 });
    expect(await s.learning.transitionPreference(S, p50.id, { from: ['proposed'], to: 'active', now: at(3) })).toBeUndefined();
    const hc = await s.learning.upsertPreference(S, { dimension: 'leverage', kind: 'hard_constraint', text: 'Never above 3x', normalizedText: 'never above 3x', value: '{"maxLeverage":3}', source: 'api', now: at(0) });
    expect(hc.preference).toMatchObject({ state: 'proposed', kind: 'hard_constraint', evidence: 0 });
    expect((await s.learning.upsertPreference(S, { dimension: 'leverage', kind: 'hard_constraint', text: 'x', normalizedText: 'never above 3x', source: 'api', now: at(1) })).created).toBe(false);
    expect(await s.learning.listPreferences(S, { states: ['active'] })).toHaveLength(1);
    await expect(s.learning.upsertPreference(S, { dimension: 'x', kind: 'soft' as never, text: 't', normalizedText: 't', source: 'api', now: at(0) })).rejects.toThrow(/kind must be behavioural or hard_constraint/);
    await s.close();
  });

  it('mirror: INSERT OR IGNORE returns inserted counts; the watermark only moves forward; failures count and reset', async () => {
    const s = make();
    const fill = (uid: string, ts: number) => ({ subAccountId: 'sub1', oid: 'o1', tsMs: ts, symbol: 'BTC', side: 'B', size: 1, price: 100, fee: 0.1, closedPnl: 0, fillUid: uid, now: at(0) });
    expect(await s.learning.insertPerpsFills(S, [fill('t1', 1000), fill('t2', 2000), fill('t2', 2000)])).toBe(2);
    expect(await s.learning.insertPerpsFills(S, [fill('t1', 1000), fill('t2', 2000)])).toBe(0);
    expect(await s.learning.insertPerpsFills(S, [{ ...fill('t1', 1000), subAccountId: 'sub2' }])).toBe(1);
    expect((await s.learning.listPerpsFills(S, { subAccountId: 'sub1' })).map((f) => f.fillUid)).toEqual(['t2', 't1']);
    const spot = (h: string) => ({ txHash: h, tsMs: 5, type: 'swap', fromToken: 'USDC', toToken: 'ETH', amount: '100', valueUsd: 100, status: 'success', now: at(0) });
    expect(await s.learning.insertExternalSpot(S, [spot('0xa'), spot('0xb')])).toBe(2);
    expect(await s.learning.insertExternalSpot(S, [spot('0xa')])).toBe(0);
    await expect(s.learning.insertPerpsFills(S, [{ ...fill('t9', -1) }])).rejects.toThrow(/fills\[0\]\.tsMs/);

    expect(await s.learning.recordSyncAttempt(S, { ok: true, source: 'perps_fills', subAccountId: 'sub1', watermarkMs: 2000, now: at(1) })).toMatchObject({ lastSyncedTsMs: 2000, consecutiveFailures: 0 });
    expect(await s.learning.recordSyncAttempt(S, { ok: true, source: 'perps_fills', subAccountId: 'sub1', watermarkMs: 1500, now: at(2) })).toMatchObject({ lastSyncedTsMs: 2000 });
    await s.learning.recordSyncAttempt(S, { ok: false, source: 'perps_fills', subAccountId: 'sub1', error: 'boom', now: at(3) });
    expect(await s.learning.recordSyncAttempt(S, { ok: false, source: 'perps_fills', subAccountId: 'sub1', error: 'boom 2', now: at(4) })).toMatchObject({ consecutiveFailures: 2, lastError: 'boom 2', lastSyncedTsMs: 2000, lastSyncedAt: at(4) });
    expect(await s.learning.recordSyncAttempt(S, { ok: true, source: 'perps_fills', subAccountId: 'sub1', now: at(5) })).toMatchObject({ consecutiveFailures: 0, lastSyncedTsMs: 2000 });
    expect((await s.learning.listSyncStates(S)).map((x) => x.subAccountId)).toEqual(['sub1']);
    expect(await s.learning.getSyncState(S, 'spot_activities', '')).toBeUndefined();

    const snap = await s.learning.recordPersonalizationSnapshot(S, { sessionWatermark: at(9), sessionIds: ['s1'], factHashes: ['h'], writtenIds: [1], now: at(9) });
    expect(await s.learning.latestPersonalizationSnapshot(S)).toEqual(snap);
    expect(await s.learning.latestPersonalizationSnapshot({ userId: 'u2' })).toBeUndefined();
    await s.close();
  });

  it('restores: a methodology and a preference keep state, scores and a free id; a dedup match is returned unchanged; bad restores name the field', async () => {
    const s = make();
    const restore = { id: 41, state: 'graduated' as const, uses: 12, wins: 10, confidence: 0.55, graduatedAt: at(5), stateReason: 'graduated by the operator', createdAt: at(1) };
    const r = await s.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: 'Trend', normalizedText: 'trend', origin: 'import', now: at(9), restore });
    expect(r.created).toBe(true);
    expect(r.methodology).toMatchObject({ id: 41, state: 'graduated', uses: 12, wins: 10, confidence: 0.55, graduatedAt: at(5), createdAt: at(1), updatedAt: at(9) });
    const again = await s.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: 'Trend', normalizedText: 'trend', origin: 'import', now: at(10), restore: { ...restore, state: 'quarantined' } });
    expect(again).toMatchObject({ created: false, methodology: { id: 41, state: 'graduated' } });
    // The id is taken (by another tenant's row here): the restored row gets a new one.
    const other = await s.learning.upsertMethodology({ userId: 'u2' }, { assetClass: 'forex', text: 'Fade', normalizedText: 'fade', origin: 'import', now: at(9), restore: { ...restore, id: 41 } });
    expect(other.methodology.id).not.toBe(41);
    const fresh = await s.learning.upsertMethodology(S, { assetClass: 'forex', text: 'Carry', normalizedText: 'carry', origin: 'api', now: at(11) });
    expect(fresh.methodology.id).toBeGreaterThan(41);
    await expect(s.learning.upsertMethodology(S, { assetClass: 'forex', text: 'X', normalizedText: 'x', origin: 'import', now: at(9), restore: { ...restore, wins: 13 } })).rejects.toThrow(/restore\.uses and restore\.wins/);
    await expect(s.learning.upsertMethodology(S, { assetClass: 'forex', text: 'X', normalizedText: 'x', origin: 'import', now: at(9), restore: { ...restore, state: 'great' as never } })).rejects.toThrow(/restore\.state must be one of/);
    expect(await s.learning.listMethodologies(S, { assetClasses: ['forex'] })).toHaveLength(1);

    const pref = await s.learning.upsertPreference(S, {
      dimension: 'slippage', kind: 'behavioural', text: 'Caps slippage', normalizedText: 'caps slippage', source: 'import', now: at(9),
      restore: { id: 7, state: 'active', evidence: 6, contradictions: 1, lastEvidenceAt: at(3), activatedAt: at(4), createdAt: at(2) },
    });
    expect(pref.preference).toMatchObject({ id: 7, state: 'active', evidence: 6, contradictions: 1, activatedAt: at(4), createdAt: at(2) });
    await expect(s.learning.upsertPreference(S, { dimension: 'x', kind: 'behavioural', text: 'X', normalizedText: 'x', source: 'import', now: at(9), restore: { state: 'active', evidence: -1, contradictions: 0, lastEvidenceAt: at(1), createdAt: at(1) } })).rejects.toThrow(/restore\.evidence/);
  });

  it('imports a reflected trade case with its closed opening trade once per order id; stats count the scope only', async () => {
    const s = make();
    const c = {
      id: 5, orderId: 'import:abc:5', role: 'minara.core', asset: 'BTC', assetClass: 'crypto_major', kind: 'spot' as const, side: 'buy', quantity: 0.01, entryPrice: 60_000,
      exitPrice: 63_000, notionalUsd: 600, summary: 'Bought the breakout.', outcome: 'win' as const, realizedPnlUsd: 30, holdingMs: 3_600_000, methodologyIds: [1],
      openedAt: at(0), closedAt: at(60), simulated: true, reflectedAt: at(70), classification: 'variance' as const, reflection: '{"lessons":[]}', now: at(80),
    };
    const first = await s.learning.importTradeCase(S, c);
    expect(first.created).toBe(true);
    expect(first.case).toMatchObject({ id: 5, asset: 'BTC', outcome: 'win', reflectedAt: at(70), classification: 'variance', methodologyIds: [1] });
    const trade = await s.learning.getTrade(S, first.case.tradeId);
    expect(trade).toMatchObject({ orderId: 'import:abc:5', provider: 'import', status: 'closed', price: 60_000, exitPrice: 63_000, closedAt: at(60), outcome: 'win' });
    expect(await s.learning.importTradeCase(S, c)).toMatchObject({ created: false, case: { id: 5 } });
    await expect(s.learning.importTradeCase(S, { ...c, orderId: 'x2', outcome: 'draw' as never })).rejects.toThrow(/outcome must be win or loss/);
    await s.learning.importTradeCase({ userId: 'u2' }, { ...c, id: undefined, orderId: 'import:abc:6', reflectedAt: undefined, classification: undefined, reflection: undefined, closedAt: at(1) });

    await s.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: 'Trend', normalizedText: 'trend', origin: 'api', now: at(0) });
    const stats = await s.learning.stats(S, { overdueBefore: at(100) });
    expect(stats).toEqual({
      methodologies: { proposed: 0, candidate: 1, graduated: 0, quarantined: 0 }, graduationProposed: 0, preferences: { proposed: 0, active: 0, rejected: 0 },
      hardConstraints: { proposed: 0, active: 0, rejected: 0 }, cases: { pending: 0, overdue: 0, reflected: 1 }, trades: { open: 0, closed: 1, settled: 0 }, perpsFills: 0, externalSpot: 0,
      extractionQueue: { waiting: 0 },
    });
    // The extraction queue: counted per scope, the oldest turn's time.
    await s.learning.enqueueExtraction({ userId: 'u2' }, { sessionId: 's1', turnId: 'q2', text: 'I hold ETH', now: at(2) });
    await s.learning.enqueueExtraction({ userId: 'u2' }, { sessionId: 's1', turnId: 'q1', text: 'I hold BTC', now: at(3) });
    expect((await s.learning.stats({ userId: 'u2' }, { overdueBefore: at(100) })).extractionQueue).toEqual({ waiting: 2, oldestAt: at(2) });
    expect((await s.learning.stats(S, { overdueBefore: at(100) })).extractionQueue).toEqual({ waiting: 0 });
    expect((await s.learning.stats({ userId: 'u2' }, { overdueBefore: at(100) })).cases).toEqual({ pending: 1, overdue: 1, reflected: 0 });
    expect((await s.learning.stats({ userId: 'u2' }, { overdueBefore: at(0) })).cases.overdue).toBe(0);
    await expect(s.learning.stats(S, { overdueBefore: 'yesterday' })).rejects.toThrow(/overdueBefore must be an ISO date/);
  });

  it('the extraction queue: once per turn id and scope, claims under a lease oldest first, takes over an expired claim, completes by id within the scope', async () => {
    const s = make();
    const turn = (turnId: string, minute = 0) => ({ sessionId: 's1', turnId, text: `message of ${turnId}`, now: at(minute) });
    expect(await s.learning.enqueueExtraction(S, turn('t1'))).toBe(true);
    expect(await s.learning.enqueueExtraction(S, turn('t1', 1))).toBe(false);
    expect(await s.learning.enqueueExtraction(S, turn('t2', 1))).toBe(true);
    expect(await s.learning.enqueueExtraction(S, turn('t3', 2))).toBe(true);
    expect(await s.learning.enqueueExtraction({ userId: 'u2' }, turn('t1'))).toBe(true);
    expect(await s.learning.enqueueExtraction({ userId: 'u1', agentId: 'bot' }, turn('t1'))).toBe(true);
    expect(await s.learning.extractionScopes(10)).toEqual([{ userId: 'u1' }, { userId: 'u1', agentId: 'bot' }, { userId: 'u2' }]);
    const a = await s.learning.claimExtractions(S, { owner: 'A', now: at(5), leaseUntil: at(15), limit: 2 });
    expect(a.map((r) => [r.turnId, r.attempts, r.sessionId, r.text, r.userId])).toEqual([['t1', 1, 's1', 'message of t1', 'u1'], ['t2', 1, 's1', 'message of t2', 'u1']]);
    expect(a[0]!.agentId).toBeUndefined();
    // Another claimer gets only what is free; after the lease ends the claimed rows are free again.
    expect((await s.learning.claimExtractions(S, { owner: 'B', now: at(6), leaseUntil: at(16), limit: 10 })).map((r) => r.turnId)).toEqual(['t3']);
    expect(await s.learning.claimExtractions(S, { owner: 'B', now: at(7), leaseUntil: at(17), limit: 10 })).toEqual([]);
    const again = await s.learning.claimExtractions(S, { owner: 'B', now: at(16), leaseUntil: at(26), limit: 10 });
    expect(again.map((r) => [r.turnId, r.attempts])).toEqual([['t1', 2], ['t2', 2]]);
    // Completing is scoped: another tenant's ids are not removed.
    const other = await s.learning.claimExtractions({ userId: 'u2' }, { owner: 'A', now: at(5), leaseUntil: at(15), limit: 10 });
    expect(await s.learning.completeExtractions(S, [...again.map((r) => r.id), other[0]!.id])).toBe(2);
    expect(await s.learning.completeExtractions(S, [])).toBe(0);
    expect((await s.learning.claimExtractions({ userId: 'u2' }, { owner: 'A', now: at(30), leaseUntil: at(40), limit: 10 })).map((r) => r.turnId)).toEqual(['t1']);
    await expect(s.learning.enqueueExtraction(S, { ...turn('t9'), text: '' })).rejects.toThrow(/text must be a non-empty string/);
    await expect(s.learning.claimExtractions(S, { owner: 'A', now: at(0), leaseUntil: at(1), limit: 0 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);
    await expect(s.learning.completeExtractions(S, [0])).rejects.toThrow(/ids\[0\] must be a positive integer/);
  });

  it('case memories: cases start unlinked, link once (compare-and-set) within the scope, and the unlinked scopes are listed', async () => {
    const s = make();
    await s.learning.recordExecutions(S, { executions: [exec({ orderId: 'o1' }), exec({ orderId: 'c1', action: 'close', side: 'close', price: 110, realizedPnlUsd: 10, at: at(5) })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(5) });
    await s.learning.recordExecutions({ userId: 'u2' }, { executions: [exec({ orderId: 'o1' }), exec({ orderId: 'c1', action: 'close', side: 'close', price: 90, realizedPnlUsd: -10, at: at(5) })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(5) });
    const [c] = await s.learning.listCases(S, { withoutMemory: true });
    expect(c?.memoryId).toBeUndefined();
    expect(await s.learning.caseMemoryScopes(10)).toEqual([{ userId: 'u1' }, { userId: 'u2' }]);
    expect(await s.learning.linkCaseMemory({ userId: 'u2' }, c!.id, 41)).toBe(false); // another tenant's case
    expect(await s.learning.linkCaseMemory(S, c!.id, 42)).toBe(true);
    expect(await s.learning.linkCaseMemory(S, c!.id, 43)).toBe(false);
    expect((await s.learning.listCases(S))[0]?.memoryId).toBe(42);
    expect(await s.learning.listCases(S, { withoutMemory: true })).toEqual([]);
    expect(await s.learning.caseMemoryScopes(10)).toEqual([{ userId: 'u2' }]);
    await expect(s.learning.linkCaseMemory(S, c!.id, 0)).rejects.toThrow(/memoryId must be a positive integer/);
  });

  it('a closed storage refuses learning calls', async () => {
    const s = make();
    await s.close();
    const error = await s.learning.listTrades(S).catch((e: unknown) => e);
    expect(MinaraError.isInstance(error)).toBe(true);
  });
});
