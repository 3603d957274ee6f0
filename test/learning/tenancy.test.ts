import { describe, expect, it } from 'vitest';
import { DEFAULT_METHODOLOGY_POLICY, type LearningScope, type NewTradeExecution, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { postgresEngines } from '../postgres/support';
// A seeded PRNG (an internal helper, not package API) so failures replay.
import { mulberry32 as prng } from '../../src/util/prng';

const engines: ReadonlyArray<{ name: string; make: () => Storage }> = [
  { name: 'sqlite', make: () => createSqliteStorage({ path: ':memory:', logger: silentLogger }) },
  { name: 'in-memory', make: () => createInMemoryStorage() },
  ...postgresEngines(),
];
const SCOPES: LearningScope[] = [
  { userId: 'alice' },
  { userId: 'bob' },
  { userId: 'alice', agentId: 'trader' },
  { userId: 'alice', agentId: 'analyst' },
  { userId: "bob'; DROP TABLE trade_history; --" },
];
const ASSETS = ['BTC', 'ETH', 'DOGE', 'EURUSD'];

describe.each(engines)('learning tenancy property ($name)', ({ make }) => {
  it.each([1, 2, 3])('no call returns another tenant’s rows from any learning table (seed %i)', async (seed) => {
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const s = make();
    const L = s.learning;
    const mark = (i: number) => `tenant${i}x`;
    const owned = SCOPES.map(() => ({ trades: new Set<number>(), methodologies: new Set<number>(), preferences: new Set<number>(), cases: new Set<number>() }));
    let seen = 0;
    const t = (n: number) => new Date(Date.UTC(2026, 2, 1) + n * 1000).toISOString();
    const exec = (i: number, n: number, over: Partial<NewTradeExecution>): NewTradeExecution => ({
      orderId: `shared-order-${n}`, toolName: 'buy_token', action: 'open', kind: 'spot', asset: pick(ASSETS), side: 'buy', direction: 'long', quantity: 1, price: 10,
      notionalUsd: 10, feeUsd: 0, realizedPnlUsd: 0, role: mark(i), methodologyIds: [], simulated: true, provider: 'paper', at: t(n), ...over,
    });

    for (let step = 0; step < 200; step++) {
      const i = Math.floor(rnd() * SCOPES.length);
      const other = (i + 1 + Math.floor(rnd() * (SCOPES.length - 1))) % SCOPES.length;
      const scope = SCOPES[i]!;
      const mine = owned[i]!;
      const op = rnd();
      if (op < 0.2) {
        // Same order id in every tenant: each gets its own row. Methodology ids of another tenant are not attributed.
        const foreign = [...owned[other]!.methodologies];
        const ids = [...[...mine.methodologies].slice(0, 1), ...foreign.slice(0, 1)];
        const n = Math.floor(rnd() * 30);
        const r = await L.recordExecutions(scope, { executions: [exec(i, n, { methodologyIds: ids })], policy: DEFAULT_METHODOLOGY_POLICY, now: t(step) });
        for (const row of r.recorded) mine.trades.add(row.id);
      } else if (op < 0.3) {
        const asset = pick(ASSETS);
        const r = await L.recordExecutions(scope, {
          executions: [exec(i, 1000 + step, { action: 'close', side: 'sell', asset, quantity: 5, realizedPnlUsd: rnd() < 0.5 ? 5 : -5 })], policy: { ...DEFAULT_METHODOLOGY_POLICY, demotionMinUses: 2 }, now: t(step),
        });
        for (const row of r.recorded) mine.trades.add(row.id);
        for (const row of [...r.closed, ...r.updated]) expect(mine.trades.has(row.id), `tenant ${i} closed a foreign trade`).toBe(true);
        for (const c of r.methodologyChanges) expect(mine.methodologies.has(c.methodology.id), `tenant ${i} scored a foreign methodology`).toBe(true);
        for (const c of r.cases) mine.cases.add(c.id);
      } else if (op < 0.4) {
        const { methodology } = await L.upsertMethodology(scope, { assetClass: pick(['crypto_major', 'crypto_meme', 'forex']), text: `${mark(i)} same text`, normalizedText: 'same text', origin: 'api', now: t(step) });
        mine.methodologies.add(methodology.id);
      } else if (op < 0.5) {
        const r = await L.observePreferences(scope, [{ dimension: 'slippage', text: `${mark(i)} slip`, normalizedText: 'slippage:50', value: '50', effect: 'support' }], t(step));
        for (const p of r) expect(p.userId === scope.userId && (p.agentId ?? '') === (scope.agentId ?? '')).toBe(true);
        for (const p of r) mine.preferences.add(p.id);
      } else if (op < 0.6) {
        // Reaching for another tenant's rows by id finds nothing and changes nothing.
        const theirs = owned[other]!;
        for (const id of theirs.methodologies) {
          expect(await L.getMethodology(scope, id)).toBeUndefined();
          expect(await L.transitionMethodology(scope, id, { from: ['candidate', 'graduated', 'quarantined'], to: 'quarantined', reason: 'hijack', now: t(step) })).toBeUndefined();
        }
        for (const id of theirs.preferences) {
          expect(await L.getPreference(scope, id)).toBeUndefined();
          expect(await L.transitionPreference(scope, id, { from: ['proposed', 'active'], to: 'rejected', now: t(step) })).toBeUndefined();
        }
        for (const id of theirs.trades) expect(await L.getTrade(scope, id)).toBeUndefined();
        for (const id of theirs.cases) expect(await L.markCaseReflected(scope, id, { classification: 'variance', reflection: 'hijack', lessonMemoryIds: [], now: t(step) })).toBe(false);
      } else if (op < 0.7) {
        expect(await L.insertPerpsFills(scope, [{ subAccountId: 'shared', oid: 'o', tsMs: step, symbol: mark(i), side: 'B', size: 1, price: 1, fee: 0, closedPnl: 0, fillUid: `uid${step % 7}`, now: t(step) }])).toBeLessThanOrEqual(1);
        await L.insertExternalSpot(scope, [{ txHash: `0x${step % 5}`, tsMs: step, type: 'swap', fromToken: mark(i), status: 'ok', now: t(step) }]);
        await L.recordSyncAttempt(scope, { ok: rnd() < 0.5, source: 'perps_fills', subAccountId: 'shared', watermarkMs: step, error: mark(i), now: t(step) } as never);
        await L.recordPersonalizationSnapshot(scope, { sessionWatermark: mark(i), sessionIds: [mark(i)], factHashes: [], writtenIds: [], now: t(step) });
      } else {
        const trades = await L.listTrades(scope, { limit: 1000 });
        const methodologies = await L.listMethodologies(scope, { limit: 1000 });
        const prefs = await L.listPreferences(scope, { limit: 1000 });
        const cases = await L.listCases(scope, { limit: 1000 });
        seen += trades.length + methodologies.length + prefs.length + cases.length;
        for (const r of trades) expect(mine.trades.has(r.id) && r.role === mark(i)).toBe(true);
        for (const r of methodologies) expect(mine.methodologies.has(r.id) && r.text.startsWith(mark(i))).toBe(true);
        for (const r of prefs) expect(r.text.startsWith(mark(i))).toBe(true);
        for (const r of cases) expect(mine.cases.has(r.id) && r.role === mark(i)).toBe(true);
        for (const r of trades) for (const m of r.methodologyIds) expect(mine.methodologies.has(m), 'a foreign methodology id on a trade').toBe(true);
        for (const f of await L.listPerpsFills(scope, { limit: 1000 })) expect(f.symbol).toBe(mark(i));
        for (const a of await L.listExternalSpot(scope, { limit: 1000 })) expect(a.fromToken).toBe(mark(i));
        for (const st of await L.listSyncStates(scope)) if (st.lastError !== undefined) expect(st.lastError).toBe(mark(i));
        const snap = await L.latestPersonalizationSnapshot(scope);
        if (snap) expect(snap.sessionWatermark).toBe(mark(i));
      }
    }
    expect(seen).toBeGreaterThan(50);
    await s.close();
  });
});
