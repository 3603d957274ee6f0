/**
 * Issue 32, part 2: a fresh process's first lookup loads the scope's saved lexical index (a snapshot in the
 * engine, keyed by the change-log position) instead of reading and tokenising every row. The results must be
 * identical to the brute-force reference whatever happened since the snapshot was saved (writes, updates,
 * soft and hard deletes), and a snapshot that is corrupt, of another scope or inconsistent is ignored.
 */
import {
  createMemoryStore,
  parseSearchQuery,
  rankBruteForce,
  silentLogger,
  type MemoryQueryNode,
  type MemoryScope,
  type MemoryStorage,
  type MemoryTextIndexSnapshot,
  type RankDoc,
} from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLexicalCache } from '../../src/memory/lexical-cache';
import { createScopeIndex } from '../../src/memory/lexical-index';
import { decodeIndexSnapshot, encodeIndexSnapshot } from '../../src/memory/lexical-snapshot';
import { engines, fakeClock } from './helpers';

const WORDS = ['cat', 'cats', 'salmon', 'dinner', 'allergy', 'allergic', 'btc', 'eth', 'weekly', 'charts', 'charting', 'the', 'a', 'funding', 'fund', '山寨币', '2024'];
const LABELS = ['Maria', 'cat', 'Note', 'btc eth', 'salmon dinner'];
const CATEGORIES = ['observation', 'preference', 'lesson'];
const QUERIES = ['cat', 'salmon dinner', 'what is the cat allergic to?', 'charts OR funding', '"weekly charts"', 'cha*', 'maria AND cat', 'category:lesson cat', 'what did Maria say about btc?'];
const scopeKey = (s: MemoryScope) => JSON.stringify([s.userId, s.agentId ?? null]);

function nodesOf(q: string): Array<{ node: MemoryQueryNode; neighbours: boolean; categories: readonly string[] }> {
  const p = parseSearchQuery(q);
  const out: Array<{ node: MemoryQueryNode; neighbours: boolean; categories: readonly string[] }> = [];
  if (p.root !== undefined) out.push({ node: p.root, neighbours: false, categories: p.categories });
  if (p.relaxed !== undefined) out.push({ node: p.relaxed, neighbours: true, categories: p.categories });
  return out;
}

const contentArb = fc
  .record({
    label: fc.option(fc.constantFrom(...LABELS), { nil: undefined }),
    words: fc.array(fc.constantFrom(...WORDS, 'maria', 'note'), { minLength: 0, maxLength: 10 }),
    asks: fc.boolean(),
  })
  .map((d) => `${d.label === undefined ? '' : `${d.label}: `}${d.words.join(' ')}${d.asks ? '?' : ''}`);

/**
 * A memory domain that counts full scans and keeps snapshots as a minimal third-party engine might: it never
 * drops one and stores whatever it is given (no change check), so a stored snapshot can be stale relative to
 * any later write, update or delete. The cache must still answer exactly.
 */
function staleSnapshotEngine(inner: MemoryStorage) {
  const saved = new Map<string, Uint8Array>();
  const counts = { fullScans: 0, loads: 0, saves: 0 };
  const memory: MemoryStorage = Object.create(inner) as MemoryStorage;
  Object.assign(memory, {
    textRows: (scope: MemoryScope, query?: Parameters<MemoryStorage['textRows']>[1]) => {
      if (query === undefined) counts.fullScans++;
      return inner.textRows(scope, query);
    },
    loadTextIndex: async (scope: MemoryScope) => {
      counts.loads++;
      return saved.get(scopeKey(scope));
    },
    saveTextIndex: async (scope: MemoryScope, snapshot: MemoryTextIndexSnapshot) => {
      counts.saves++;
      saved.set(scopeKey(scope), snapshot.data.slice());
      return true;
    },
  });
  return { memory, saved, counts };
}

/** The exact expected top-k: brute force over every stored row of the scope, skipping what is not visible. */
async function expected(memory: MemoryStorage, scope: MemoryScope, q: { node: MemoryQueryNode; neighbours: boolean; categories: readonly string[] }, limit: number) {
  const rows = await memory.textRows(scope);
  const records = await memory.getMany(
    scope,
    rows.map((r) => r.id),
  );
  const visible = new Set(records.filter((r) => r.deletedAt === undefined && (r.status === 'active' || r.status === 'pending')).map((r) => r.id));
  return rankBruteForce(q.node, rows, { limit, neighbours: q.neighbours, categories: q.categories, skip: (id) => !visible.has(id) });
}

describe('the saved index state', () => {
  it('restores to an index that ranks exactly as the original and as brute force, before and after more changes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(contentArb, fc.constantFrom(...CATEGORIES)), { minLength: 1, maxLength: 50 }),
        fc.array(fc.nat(60), { maxLength: 10 }),
        fc.array(fc.tuple(contentArb, fc.constantFrom(...CATEGORIES)), { maxLength: 15 }),
        fc.array(fc.nat(80), { maxLength: 10 }),
        fc.integer({ min: 1, max: 12 }),
        (first, removals, later, laterRemovals, limit) => {
          const docs = new Map<number, RankDoc>();
          const original = createScopeIndex();
          first.forEach(([content, category], i) => {
            const doc = { id: i * 2 + 1, content, category };
            docs.set(doc.id, doc);
            original.add(doc);
          });
          for (const r of removals) {
            original.remove(r * 2 + 1);
            docs.delete(r * 2 + 1);
          }
          const bytes = encodeIndexSnapshot({ scopeKey: 'k', seq: 7, state: original.state() });
          expect(bytes).toBeDefined();
          const decoded = decodeIndexSnapshot(bytes as Uint8Array, 'k');
          expect(decoded?.seq).toBe(7);
          const restored = createScopeIndex(decoded?.state);
          const check = () => {
            for (const q of QUERIES) {
              for (const n of nodesOf(q)) {
                const options = { limit, neighbours: n.neighbours, categories: n.categories };
                const want = rankBruteForce(n.node, [...docs.values()], options);
                expect(restored.rank(n.node, options), q).toEqual(want);
                expect(original.rank(n.node, options), q).toEqual(want);
              }
            }
          };
          check();
          // Later changes: new rows (ids above and below the highest), re-added rows, removals.
          later.forEach(([content, category], i) => {
            const id = i % 3 === 0 ? (i % 60) * 2 + 1 : 200 + i;
            for (const index of [restored, original]) index.remove(id);
            const doc = { id, content, category };
            docs.set(id, doc);
            for (const index of [restored, original]) index.add(doc);
          });
          for (const r of laterRemovals) {
            for (const index of [restored, original]) index.remove(r * 2 + 1);
            docs.delete(r * 2 + 1);
          }
          check();
          expect(restored.size).toBe(docs.size);
        },
      ),
      { numRuns: 120, seed: 32 },
    );
  });

  it('is refused when corrupt, truncated, of another scope, or inconsistent under a valid checksum', () => {
    const index = createScopeIndex();
    for (let i = 1; i <= 50; i++) index.add({ id: i, content: `Maria: cat ${WORDS[i % WORDS.length]} salmon ${i}`, category: CATEGORIES[i % 3] as string });
    const state = index.state();
    const bytes = encodeIndexSnapshot({ scopeKey: 'k', seq: 3, state }) as Uint8Array;
    expect(decodeIndexSnapshot(bytes, 'k')).toBeDefined();
    expect(decodeIndexSnapshot(bytes, 'other')).toBeUndefined();
    expect(decodeIndexSnapshot(bytes.subarray(0, bytes.length - 4), 'k')).toBeUndefined();
    expect(decodeIndexSnapshot(new Uint8Array(0), 'k')).toBeUndefined();
    expect(decodeIndexSnapshot(new Uint8Array(4096).fill(7), 'k')).toBeUndefined();
    for (const at of [0, 9, 70, Math.floor(bytes.length / 2), bytes.length - 40, bytes.length - 1]) {
      const bad = bytes.slice();
      bad[at] = (bad[at] as number) ^ 0x10;
      expect(decodeIndexSnapshot(bad, 'k'), `byte ${at}`).toBeUndefined();
    }
    // Well-formed bytes around a state that lies: the restore refuses it.
    const lies: Array<Partial<typeof state>> = [
      { df: state.df.map((d, i) => (i === 0 ? d + 1 : d)) },
      { ids: state.ids.map((id, i) => (i === 1 ? 1 : id)) },
      { termIds: state.termIds.map((t, i) => (i === 0 ? state.terms.length : t)) },
      { cats: state.cats.map((c, i) => (i === 0 ? 9 : c)) },
      { terms: [...state.terms].reverse() },
      { maxId: 2 },
    ];
    for (const lie of lies) {
      const forged = encodeIndexSnapshot({ scopeKey: 'k', seq: 3, state: { ...state, ...lie } }) as Uint8Array;
      const decoded = decodeIndexSnapshot(forged, 'k');
      expect(decoded, JSON.stringify(Object.keys(lie))).toBeDefined();
      expect(() => createScopeIndex(decoded?.state), JSON.stringify(Object.keys(lie))).toThrow(/inconsistent index state/);
    }
  });
});

describe('a fresh cache over a stale snapshot answers exactly (fast-check)', () => {
  type Op = { kind: 'write'; content: string; category: string } | { kind: 'update'; at: number; content: string } | { kind: 'category'; at: number; category: string } | { kind: 'soft' | 'restore' | 'hard'; at: number };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('write' as const), content: contentArb, category: fc.constantFrom(...CATEGORIES) }),
    fc.record({ kind: fc.constant('update' as const), at: fc.nat(), content: contentArb }),
    fc.record({ kind: fc.constant('category' as const), at: fc.nat(), category: fc.constantFrom(...CATEGORIES) }),
    fc.record({ kind: fc.constantFrom('soft' as const, 'restore' as const, 'hard' as const), at: fc.nat() }),
  );

  it('after writes, updates, soft and hard deletes since the snapshot; and ignores a corrupt one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(contentArb, fc.constantFrom(...CATEGORIES)), { minLength: 1, maxLength: 30 }),
        fc.array(opArb, { maxLength: 25 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 10 }),
        async (initial, ops, corrupt, limit) => {
          const storage = createInMemoryStorage();
          const scope = { userId: 'u' };
          const store = createMemoryStore({ storage, scope, now: fakeClock(), logger: silentLogger });
          const other = createMemoryStore({ storage, scope: { userId: 'v' }, now: fakeClock(), logger: silentLogger });
          const ids: number[] = [];
          for (const [content, category] of initial) {
            ids.push((await store.write({ content: content || 'cat', category })).id);
            await other.write({ content: 'cat salmon maria', category: 'observation' });
          }
          const engine = staleSnapshotEngine(storage.memory);
          const opts = { snapshotMinRows: 1, snapshotMinChanges: 1 };
          const first = createLexicalCache(engine.memory, opts);
          const probe = nodesOf('cat')[0] as { node: MemoryQueryNode };
          await first.search(scope, probe.node, { limit: 5 });
          await first.settled();
          expect(engine.counts.saves).toBe(1);
          // Changes after the snapshot; the engine keeps the old one.
          for (const op of ops) {
            const id = ids[op.kind === 'write' ? 0 : op.at % ids.length] as number;
            if (op.kind === 'write') ids.push((await store.write({ content: op.content || 'btc', category: op.category })).id);
            else if (op.kind === 'update') await store.update(id, { content: op.content || 'eth' }).catch(() => undefined);
            else if (op.kind === 'category') await store.update(id, { category: op.category }).catch(() => undefined);
            else if (op.kind === 'soft') await store.softDelete(id).catch(() => undefined);
            else if (op.kind === 'restore') await store.restore(id).catch(() => undefined);
            else await store.hardDelete(id).catch(() => undefined);
          }
          if (corrupt) {
            const bytes = engine.saved.get(scopeKey(scope)) as Uint8Array;
            bytes[Math.floor(bytes.length / 3)] = (bytes[Math.floor(bytes.length / 3)] as number) ^ 1;
          }
          const scansBefore = engine.counts.fullScans;
          const fresh = createLexicalCache(engine.memory, opts);
          for (const q of QUERIES) {
            for (const n of nodesOf(q)) {
              const got = await fresh.search(scope, n.node, { limit, categories: n.categories }, { neighbours: n.neighbours });
              expect(got, q).toEqual(await expected(storage.memory, scope, n, limit));
            }
          }
          // The fresh cache used the snapshot (no full scan of the scope), unless it was corrupt.
          expect(engine.counts.fullScans - scansBefore).toBe(corrupt ? 1 : 0);
          await storage.close();
        },
      ),
      { numRuns: 60, seed: 32 },
    );
  }, 120_000);
});

describe.each(engines)('snapshots in the $name engine', ({ make }) => {
  it('a fresh cache loads the saved snapshot, answers exactly, and the engine drops it on a hard delete or a content change', async () => {
    const storage = make();
    const scope = { userId: 'u', agentId: 'a' };
    const store = createMemoryStore({ storage, scope, now: fakeClock(), logger: silentLogger });
    const neighbour = createMemoryStore({ storage, scope: { userId: 'u' }, now: fakeClock(), logger: silentLogger });
    const ids: number[] = [];
    const rows = Array.from({ length: 120 }, (_, i) => ({
      category: CATEGORIES[i % 3] as string,
      content: `${i % 4 === 0 ? 'Maria: ' : ''}${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 11) % WORDS.length]}${i % 5 === 0 ? '?' : ''}`,
    }));
    for (const r of rows) ids.push((await store.write(r)).id);
    await neighbour.write({ category: 'observation', content: 'cat cat salmon' });
    let fullScans = 0;
    const counted: MemoryStorage = Object.create(storage.memory) as MemoryStorage;
    counted.textRows = (s, q) => {
      if (q === undefined) fullScans++;
      return storage.memory.textRows(s, q);
    };
    const opts = { snapshotMinRows: 10, snapshotMinChanges: 1 };
    const check = async (cache: ReturnType<typeof createLexicalCache>) => {
      for (const q of QUERIES) {
        for (const n of nodesOf(q)) {
          expect(await cache.search(scope, n.node, { limit: 15, categories: n.categories }, { neighbours: n.neighbours }), q).toEqual(await expected(storage.memory, scope, n, 15));
        }
      }
    };
    const first = createLexicalCache(counted, opts);
    await check(first);
    await first.settled();
    expect(fullScans).toBe(1);
    expect(await storage.memory.loadTextIndex?.(scope)).toBeInstanceOf(Uint8Array);
    expect(await storage.memory.loadTextIndex?.({ userId: 'u' })).toBeUndefined();

    // New rows, a category change and a soft delete keep the snapshot; a fresh cache catches it up.
    await store.write({ category: 'lesson', content: 'cat allergy noted' });
    await store.update(ids[4] as number, { category: 'lesson' });
    await store.softDelete(ids[5] as number);
    await check(createLexicalCache(counted, opts));
    expect(fullScans).toBe(1);

    // A content change drops it: the next fresh cache builds from the rows (and saves anew).
    await store.update(ids[3] as number, { content: 'allergic cat salmon salmon' });
    expect(await storage.memory.loadTextIndex?.(scope)).toBeUndefined();
    const rebuilt = createLexicalCache(counted, opts);
    await check(rebuilt);
    await rebuilt.settled();
    expect(fullScans).toBe(2);
    expect(await storage.memory.loadTextIndex?.(scope)).toBeInstanceOf(Uint8Array);

    // So does a hard delete (an erased memory leaves no trace in a stored snapshot).
    await store.hardDelete(ids[10] as number);
    expect(await storage.memory.loadTextIndex?.(scope)).toBeUndefined();
    await check(createLexicalCache(counted, opts));
    expect(fullScans).toBe(3);
    await storage.close();
  }, 60_000);

  it('refuses to store a snapshot older than a change to a row it holds', async () => {
    const storage = make();
    const scope = { userId: 'w' };
    const store = createMemoryStore({ storage, scope, now: fakeClock(), logger: silentLogger });
    const a = await store.write({ category: 'observation', content: 'cat salmon' });
    const b = await store.write({ category: 'observation', content: 'btc weekly charts' });
    const data = new Uint8Array([1, 2, 3, 4]);
    // On PostgreSQL the position is the oldest transaction running in the whole server, and another test file's
    // open transaction on a shared server can hold it behind the writes just made: a save is then refused, rightly
    // (the snapshot could predate them). A current one is stored once the position has moved past them.
    const saveWhenCurrent = async (maxId: number): Promise<{ saved: boolean; seq: number }> => {
      let last = { saved: false, seq: 0 };
      for (const started = Date.now(); !last.saved && Date.now() - started < 20_000; await new Promise((r) => setTimeout(r, 50))) {
        const { seq } = await storage.memory.textChanges(scope, Number.MAX_SAFE_INTEGER);
        last = { saved: (await storage.memory.saveTextIndex?.(scope, { data, seq, maxId })) === true, seq };
      }
      return last;
    };
    const { saved, seq } = await saveWhenCurrent(b.id);
    expect(saved).toBe(true);
    expect(await storage.memory.loadTextIndex?.(scope)).toEqual(data);
    await store.update(a.id, { content: 'the secret that was removed' });
    // The snapshot read before that change could hold the old text: not stored.
    expect(await storage.memory.saveTextIndex?.(scope, { data, seq, maxId: b.id })).toBe(false);
    expect(await storage.memory.loadTextIndex?.(scope)).toBeUndefined();
    // A row added after a later position is above maxId: no conflict.
    await store.write({ category: 'observation', content: 'new row' });
    expect((await saveWhenCurrent(b.id)).saved).toBe(true);
    await storage.close();
  });
});
