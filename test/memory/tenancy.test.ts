import { type MemoryScope, type MemoryStore, createMemoryStore, silentLogger } from '@minara/agent';
import { describe, expect, it } from 'vitest';
import { createFakeEmbedder, engines, fakeClock } from './helpers';

/** mulberry32: a small seeded PRNG so failures replay. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SCOPES: MemoryScope[] = [
  { userId: 'alice' },
  { userId: 'bob' },
  { userId: 'alice', agentId: 'trader' },
  { userId: 'alice', agentId: 'analyst' },
  { userId: "bob'; DROP TABLE memories; --" },
];
const WORDS = ['slippage', 'bought', 'sold', 'watching', 'ETH', 'BTC', '$SOL', 'EUR/USD', 'base', 'prefers', 'weekly', 'charts', '山寨币', '止损', 'risk'];
const CATEGORIES = ['preference', 'observation', 'lesson', 'fact', 'alert'];

describe.each(engines)('tenancy property ($name)', ({ make }) => {
  it.each([1, 2, 3])('no call ever returns another tenant’s data (seed %i)', async (seed) => {
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
    const storage = make();
    const embedder = createFakeEmbedder(32);
    const clock = fakeClock();
    const stores: MemoryStore[] = SCOPES.map((scope) =>
      createMemoryStore({ storage, scope, embedder, now: clock, logger: silentLogger, factSweepDebounceMs: 1 }),
    );
    const owned: Array<Set<number>> = SCOPES.map(() => new Set());
    const marker = (i: number) => `tenantmark${i}x`;
    let seen = 0;
    const checkHits = (i: number, hits: ReadonlyArray<{ id: number; content: string }>) => {
      seen += hits.length;
      for (const h of hits) {
        expect(owned[i]?.has(h.id), `tenant ${i} saw foreign id ${h.id}`).toBe(true);
        SCOPES.forEach((_, j) => {
          if (j !== i) expect(h.content).not.toContain(marker(j));
        });
      }
    };

    for (let step = 0; step < 160; step++) {
      const i = Math.floor(rnd() * SCOPES.length);
      const other = (i + 1 + Math.floor(rnd() * (SCOPES.length - 1))) % SCOPES.length;
      const store = stores[i] as MemoryStore;
      const op = rnd();
      if (op < 0.4) {
        const content = `${marker(i)} ${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} near-duplicate text`;
        const metadata = { userId: SCOPES[other]?.userId, user_id: SCOPES[other]?.userId, agentId: 'trader', scenario_id: 'shared', source: 'user_manual' };
        const { id } = await store.write({ category: pick(CATEGORIES), content, metadata });
        owned[i]?.add(id);
      } else if (op < 0.5) {
        const foreign = Array.from(owned[other] ?? []);
        if (foreign.length > 0) {
          const id = pick(foreign);
          expect(await store.get(id, { includeDeleted: true })).toBeUndefined();
          expect(await store.softDelete(id)).toBe(false);
          expect(await store.restore(id)).toBe(false);
          expect(await store.hardDelete(id)).toBe(false);
          await expect(store.update(id, { content: 'hijack' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
        }
      } else if (op < 0.55) {
        const mine = Array.from(owned[i] ?? []);
        if (mine.length > 0) await store.softDelete(pick(mine));
      } else if (op < 0.62) {
        await store.profile.set(pick(['risk', 'lang', 'chains']), `${marker(i)} value`);
      } else if (op < 0.8) {
        const q = pick([...WORDS, 'near-duplicate', `${marker(other)}`, 'text', 'slip*', 'category:fact text']);
        checkHits(i, await store.search(q, { limit: 50 }));
        checkHits(i, await store.search(q, { limit: 50, mode: 'bm25' }));
      } else if (op < 0.86) {
        checkHits(i, await store.read({ limit: 1000 }));
      } else if (op < 0.92) {
        const snap = await store.loadSnapshot();
        SCOPES.forEach((_, j) => {
          if (j !== i) expect(snap.text).not.toContain(marker(j));
        });
        for (const id of snap.memoryIds) expect(owned[i]?.has(id)).toBe(true);
        for (const e of await store.profile.list()) expect(e.value).toContain(marker(i));
      } else {
        const n = await store.getEntityNeighborhood(pick(['ETH', 'BTC', 'SOL', 'EURUSD', 'shared']));
        checkHits(i, n.memories);
        for (const e of await store.topEntities({ limit: 100 })) expect(e.count).toBeLessThanOrEqual(owned[i]?.size ?? 0);
        const scen = await store.topEntities({ kind: 'scenario' });
        expect((scen[0]?.count ?? 0) <= (owned[i]?.size ?? 0)).toBe(true);
      }
    }
    for (const s of stores) await s.flushEmbeddings();
    for (let i = 0; i < SCOPES.length; i++) {
      const store = stores[i] as MemoryStore;
      await store.consolidatePending();
      checkHits(i, await store.search('near-duplicate', { limit: 1000 }));
      checkHits(i, await store.read({ limit: 1000 }));
      for (const e of await store.consolidationEvents({ limit: 1000 })) expect(owned[i]?.has(e.factId)).toBe(true);
      await store.close();
    }
    expect(seen).toBeGreaterThan(100);
  });
});
