/**
 * The mechanisms behind the latency targets: BM25 computed outside FTS5 for the rank window (must equal
 * FTS5's `bm25()` and the in-memory engine), the per-connection document-frequency cache and the in-process
 * vector bit cache (both must see another connection's writes), and `writeMany`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, parseSearchQuery, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemoryQueryNode } from '../../src/storage/memory-types';
import { PREFIX_EXPANSION_LIMIT, countTokenMatches, createFtsStats } from '../../src/storage/sqlite/memory-fts-rank';
import { createSqliteMemorySearch, scopedMatch } from '../../src/storage/sqlite/memory-search';
import { createVectorBitsCache, signBits } from '../../src/storage/sqlite/memory-vector-cache';
import { createFakeEmbedder, engines, fakeClock, makeStore } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'minara-mem-perf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = ['slippage', 'base', 'funding', 'btc', 'eth', 'review', 'breakout', 'exit', 'weekly', 'charts', 'stop', 'loss'];
function corpus(n: number, seed: number): string[] {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, (_, i) => `${Array.from({ length: 3 + Math.floor(next() * 9) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')} 止损 n${i}`);
}
const QUERIES = ['slippage', 'btc eth', '"weekly charts"', 'slip*', 'btc OR exit', 'review AND breakout OR exit', '(btc OR eth) AND stop', '止损', 'category:preference base', 'base base'];

function vec(seed: number, dim = 16): Float32Array {
  return Float32Array.from({ length: dim }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
}

describe('windowed BM25 computed outside FTS5', () => {
  it('equals FTS5 bm25(memories_fts, 1, 0, 0) and the in-memory engine, AND/OR/phrase/prefix/category/CJK', async () => {
    const sqlite = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const mem = createInMemoryStorage();
    for (const storage of [sqlite, mem]) {
      const now = fakeClock();
      const a = createMemoryStore({ storage, scope: { userId: 'a' }, now, logger: silentLogger });
      const b = createMemoryStore({ storage, scope: { userId: 'b' }, now, logger: silentLogger });
      const cats = ['lesson', 'preference', 'trade_outcome'];
      for (const [i, content] of corpus(120, 7).entries()) await (i % 3 === 0 ? b : a).write({ category: cats[i % 3] as string, content });
    }
    const scope = { userId: 'a' };
    for (const q of QUERIES) {
      const parsed = parseSearchQuery(q);
      for (const node of [parsed.root, parsed.relaxed]) {
        if (node === undefined) continue;
        const filter = { categories: parsed.categories, limit: 40, window: 1000 };
        const ours = await sqlite.memory.searchText(scope, node, filter);
        const fts5 = sqlite.handle.db
          .prepare(
            `SELECT m.id AS id, -w.rank AS score FROM (SELECT rowid AS id, bm25(memories_fts, 1.0, 0.0, 0.0) AS rank FROM memories_fts
               WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT 1000) w CROSS JOIN memories m ON m.id = w.id
             WHERE m.user_id = 'a' AND m.agent_id IS NULL ORDER BY w.rank ASC, m.id DESC LIMIT 40`,
          )
          .all(scopedMatch(scope, node, parsed.categories)) as Array<{ id: number; score: number }>;
        expect(ours.length, q).toBeGreaterThan(0);
        expect(ours.map((h) => h.id), q).toEqual(fts5.map((h) => h.id));
        ours.forEach((h, i) => expect(h.score, q).toBeCloseTo((fts5[i] as { score: number }).score, 9));
        const inMemory = await mem.memory.searchText(scope, node, filter);
        expect(inMemory.map((h) => h.id), q).toEqual(ours.map((h) => h.id));
        inMemory.forEach((h, i) => expect(h.score, q).toBeCloseTo((ours[i] as { score: number }).score, 9));
      }
    }
    await sqlite.close();
  });

  it("follows another connection's writes to the scope, and ignores other tenants' (per-scope statistics)", async () => {
    const path = join(dir, 'df.db');
    const one = createSqliteStorage({ path, logger: silentLogger });
    const two = createSqliteStorage({ path, logger: silentLogger });
    const a = createMemoryStore({ storage: one, scope: { userId: 'u' }, logger: silentLogger });
    const other = createMemoryStore({ storage: two, scope: { userId: 'someone-else' }, logger: silentLogger });
    const same = createMemoryStore({ storage: two, scope: { userId: 'u' }, logger: silentLogger });
    for (const c of ['zebra crossing', 'zebra stripes', 'plain text one', 'plain text two', 'plain text three']) await a.write({ category: 'observation', content: c });
    const before = await a.search('zebra', { mode: 'bm25' });
    for (let i = 0; i < 5; i++) await other.write({ category: 'observation', content: `zebra herd ${i}` });
    const afterOther = await a.search('zebra', { mode: 'bm25' });
    expect(afterOther.map((h) => [h.id, h.score])).toEqual(before.map((h) => [h.id, h.score]));
    for (let i = 0; i < 5; i++) await same.write({ category: 'observation', content: `zebra herd ${i}` });
    const after = await a.search('zebra', { mode: 'bm25' });
    expect(after.length).toBe(7);
    expect((after.find((h) => h.id === before[0]?.id) as { score: number }).score).toBeLessThan((before[0] as { score: number }).score);
    const fresh = createSqliteStorage({ path, logger: silentLogger });
    const viaFresh = await createMemoryStore({ storage: fresh, scope: { userId: 'u' }, logger: silentLogger }).search('zebra', { mode: 'bm25' });
    expect(after.map((h) => [h.id, h.score])).toEqual(viaFresh.map((h) => [h.id, h.score]));
    for (const s of [one, two, fresh]) await s.close();
  });
});

describe('in-process vector bit cache (sqlite)', () => {
  it("a second connection's vector writes, re-embeddings and deletes are seen by the first connection's search", async () => {
    const path = join(dir, 'vectors.db');
    const one = createSqliteStorage({ path, logger: silentLogger });
    const two = createSqliteStorage({ path, logger: silentLogger });
    const scope = { userId: 'u' };
    const storeOne = createMemoryStore({ storage: one, scope, logger: silentLogger });
    const storeTwo = createMemoryStore({ storage: two, scope, logger: silentLogger });
    const embed = async (storage: typeof one, id: number, seed: number) => {
      const r = await storage.memory.get(scope, id);
      await storage.memory.upsertVectors(scope, [{ id, contentHash: (r as { contentHash: string }).contentHash, vector: vec(seed) }]);
    };
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { id } = await storeOne.write({ category: 'observation', content: `row number ${i}` });
      await embed(one, id, i + 1);
      ids.push(id);
    }
    const top = async (seed: number) => (await one.memory.searchVector(scope, vec(seed), { limit: 1 }))[0]?.id;
    expect(await top(3)).toBe(ids[2]); // loads the cache

    const { id: added } = await storeTwo.write({ category: 'observation', content: 'written by connection two' });
    await embed(two, added, 99);
    expect(await top(99)).toBe(added);

    await storeTwo.update(ids[0] as number, { content: 'changed by connection two' }); // drops the old vector
    await embed(two, ids[0] as number, 42);
    expect(await top(42)).toBe(ids[0]);

    await storeTwo.hardDelete(added);
    expect(await top(99)).not.toBe(added);

    const { id: own } = await storeOne.write({ category: 'observation', content: 'own connection write' });
    await embed(one, own, 77);
    expect(await top(77)).toBe(own);
    // The other tenant's vectors never enter this scope's cache.
    const { id: foreign } = await createMemoryStore({ storage: two, scope: { userId: 'v' }, logger: silentLogger }).write({ category: 'observation', content: 'other tenant' });
    await two.memory.upsertVectors({ userId: 'v' }, [{ id: foreign, contentHash: (await two.memory.get({ userId: 'v' }, foreign))?.contentHash as string, vector: vec(55) }]);
    expect((await one.memory.searchVector(scope, vec(55), { limit: 10 })).map((h) => h.id)).not.toContain(foreign);
    await one.close();
    await two.close();
  });
});

describe('vector bit cache budget', () => {
  it('declines a scope larger than its budget (sqlite-vec answers) and ranks by Hamming distance otherwise', async () => {
    const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const scope = { userId: 'u' };
    const store = createMemoryStore({ storage, scope, logger: silentLogger });
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { id } = await store.write({ category: 'observation', content: `row ${i}` });
      await storage.memory.upsertVectors(scope, [{ id, contentHash: (await storage.memory.get(scope, id))?.contentHash as string, vector: vec(i + 1) }]);
      ids.push(id);
    }
    const query = signBits(vec(5));
    expect(createVectorBitsCache(storage.handle, 64).nearest(scope, query, 3)).toBeUndefined();
    const nearest = createVectorBitsCache(storage.handle).nearest(scope, query, 3) as number[];
    expect(nearest).toHaveLength(3);
    expect(nearest[0]).toBe(ids[4]);
    // Through the store, a declined scope still searches (vec0 path) and finds the same best row.
    expect((await storage.memory.searchVector(scope, vec(5), { limit: 1 }))[0]?.id).toBe(ids[4]);
    await storage.close();
  });
});

describe.each(engines)('writeMany ($name)', ({ make }) => {
  it('stores all rows in order or none, and routes facts like recordFact', async () => {
    const { store } = makeStore(make);
    const ids = await store.writeMany([
      { category: 'preference', content: 'always use 0.5% slippage on swaps' },
      { category: 'fact', content: 'the user lives in Lisbon' },
      { category: 'lesson', content: 'trail BTC stops by 8%' },
    ]);
    expect(ids).toHaveLength(3);
    expect(ids.map((r) => r.id)).toEqual([...ids.map((r) => r.id)].sort((x, y) => x - y));
    expect((await store.get((ids[1] as { id: number }).id))?.status).toBe('pending');
    expect((await store.search('slippage')).map((h) => h.id)).toEqual([(ids[0] as { id: number }).id]);
    const before = (await store.read({ limit: 100 })).length;
    await expect(
      store.writeMany([
        { category: 'preference', content: 'fine' },
        { category: 'preference', content: 'bad \u0001 control' },
      ]),
    ).rejects.toMatchObject({ code: 'MEMORY_INVALID', message: expect.stringContaining('inputs[1]') });
    await expect(store.writeMany([])).rejects.toMatchObject({ code: 'MEMORY_INVALID' });
    expect((await store.read({ limit: 100 })).length).toBe(before);
    await store.close();
  });
});

describe('document frequencies and token counts of the windowed BM25', () => {
  it('takes a plain term’s frequency from fts5vocab, equal to COUNT(*) of the column-filtered MATCH', async () => {
    const sqlite = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const a = createMemoryStore({ storage: sqlite, scope: { userId: 'a' }, logger: silentLogger });
    const b = createMemoryStore({ storage: sqlite, scope: { userId: 'b' }, logger: silentLogger });
    const written = [];
    for (const [i, content] of corpus(60, 3).entries()) written.push(await (i % 2 === 0 ? a : b).write({ category: i % 5 === 0 ? 'preference' : 'lesson', content }));
    // Category tokens ('preference', 'lesson') live in another column; a deleted row leaves the index.
    await a.write({ category: 'observation', content: 'my preference is a weekly review' });
    await a.hardDelete((written[0] as { id: number }).id);
    const stats = createFtsStats(sqlite.handle);
    const terms = ['slippage', 'btc', 'weekly', 'preference', 'lesson', 'observation', 'absent', 'n7', 'slip'];
    const hits = stats.stats(parseSearchQuery(terms.join(' OR ')).root as MemoryQueryNode).hits;
    const count = sqlite.handle.db.prepare('SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck();
    expect(hits).toEqual(terms.map((t) => count.get(`search_text:"${t}"`)));
    await sqlite.close();
  });

  it('carries cached frequencies forward as rows are indexed (any connection), and recounts after a delete', async () => {
    const path = join(dir, 'df-carry.db');
    const one = createSqliteStorage({ path, logger: silentLogger });
    const two = createSqliteStorage({ path, logger: silentLogger });
    const a = createMemoryStore({ storage: one, scope: { userId: 'a' }, logger: silentLogger });
    const b = createMemoryStore({ storage: two, scope: { userId: 'b' }, logger: silentLogger });
    const ids: number[] = [];
    for (const content of corpus(40, 11)) ids.push((await a.write({ category: 'lesson', content })).id);
    await a.search('btc');
    let counts = 0;
    const counting = new Proxy(one.handle, {
      get(target, key) {
        if (key === 'prepare') {
          return (sql: string) => {
            if (sql.includes('minara_memories_fts_vocab WHERE') || sql.startsWith('SELECT COUNT(*) FROM memories_fts')) counts++;
            return target.prepare(sql);
          };
        }
        return Reflect.get(target, key) as unknown;
      },
    });
    const stats = createFtsStats(counting);
    const query = parseSearchQuery('btc OR "weekly charts" OR slip* OR absent OR 止损').root as MemoryQueryNode;
    const exact = () => {
      const count = one.handle.db.prepare('SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck();
      return ['search_text:"btc"', 'search_text:"weekly charts"', 'search_text:"slip"*', 'search_text:"absent"', 'search_text:"止损"'].map((m) => count.get(m));
    };
    expect(stats.stats(query).hits).toEqual(exact());
    const firstCounts = counts;
    expect(firstCounts).toBeGreaterThan(0);

    for (const content of corpus(30, 12)) await a.write({ category: 'lesson', content: `${content} btc weekly charts slippage` });
    for (const content of corpus(50, 13)) await b.write({ category: 'lesson', content });
    await b.search('btc'); // the other connection indexes every waiting row
    const carried = stats.stats(query).hits;
    expect(carried).toEqual(exact());
    expect(counts).toBe(firstCounts); // brought forward from the new rows, not recounted

    // The connection's own search path: its catch-up of its own writes does not drop the cache either.
    const search = createSqliteMemorySearch(counting);
    const lookup = () => search.text({ userId: 'a' }, query, { limit: 10, window: 1000 });
    lookup();
    const beforeOwn = counts;
    for (const content of corpus(10, 14)) await a.write({ category: 'lesson', content: `${content} btc` });
    lookup(); // indexes the ten waiting rows, then ranks with carried-forward counts
    expect(counts).toBe(beforeOwn);

    await a.hardDelete(ids[0] as number); // an indexed row leaves the index: the cache is dropped
    expect(stats.stats(query).hits).toEqual(exact());
    expect(counts).toBeGreaterThan(firstCounts);
    await one.close();
    await two.close();
  });

  it('keeps exact frequencies when the vocab table is missing or would be created inside a transaction', async () => {
    const sqlite = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const a = createMemoryStore({ storage: sqlite, scope: { userId: 'a' }, logger: silentLogger });
    for (const content of corpus(30, 5)) await a.write({ category: 'lesson', content });
    const db = sqlite.handle.db;
    const count = db.prepare('SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck();
    const expected = [count.get('search_text:"btc"'), count.get('search_text:"eth"')];
    const query = parseSearchQuery('btc OR eth').root as MemoryQueryNode;
    const vocabExists = () => db.prepare("SELECT COUNT(*) FROM sqlite_temp_master WHERE name = 'minara_memories_fts_vocab'").pluck().get();
    // Inside a transaction that rolls back: COUNT(*) is used and no temp table is left half-created.
    expect(() =>
      sqlite.handle.write('test', () => {
        expect(createFtsStats(sqlite.handle).stats(query).hits).toEqual(expected);
        throw new Error('roll back');
      }),
    ).toThrow();
    const stats = createFtsStats(sqlite.handle);
    expect(stats.stats(query).hits).toEqual(expected);
    expect(vocabExists()).toBe(1);
    db.exec('DROP TABLE temp.minara_memories_fts_vocab');
    stats.bump();
    expect(stats.stats(query).hits).toEqual(expected);
    stats.bump();
    expect(stats.stats(query).hits).toEqual(expected);
    expect(vocabExists()).toBe(1);
    await sqlite.close();
  });

  it('counts whole-token matches as the padded-string scan does (prefix, overlapping phrase, edges)', () => {
    const padded = (text: string, needle: string, prefix: boolean): number => {
      const hay = ` ${text} `;
      const n = ` ${needle}${prefix ? '' : ' '}`;
      let c = 0;
      for (let i = hay.indexOf(n); i !== -1; i = hay.indexOf(n, i + 1)) c++;
      return c;
    };
    const texts = ['', 'a', 'a a a', 'ab a ba aba', 'btc eth btc', 'wbtc btcx btc', 'x y x y x', 'slippage slip slipper'];
    const needles = ['a', 'ab', 'btc', 'x y', 'x y x', 'slip', 'y', 'q'];
    for (const text of texts) for (const needle of needles) for (const prefix of [false, true]) expect(countTokenMatches(text, needle, prefix), `${text}|${needle}|${prefix}`).toBe(padded(text, needle, prefix));
  });
});

describe('prefix expansion of the window lookup (sqlite)', () => {
  const native = (storage: ReturnType<typeof createSqliteStorage>, scope: { userId: string }, query: string): number[] => {
    const root = parseSearchQuery(query).root as MemoryQueryNode;
    return storage.handle.db
      .prepare('SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC')
      .pluck()
      .all(scopedMatch(scope, root)) as number[];
  };
  const windowIds = async (storage: ReturnType<typeof createSqliteStorage>, scope: { userId: string }, query: string): Promise<number[]> =>
    (await storage.memory.searchText(scope, parseSearchQuery(query).root as MemoryQueryNode, { limit: 1000, window: 1000 })).map((h) => h.id).sort((x, y) => y - x);

  it('turns a narrow prefix into the OR of its index terms and leaves wide, scope-like and non-ASCII prefixes alone', async () => {
    const sqlite = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const a = createMemoryStore({ storage: sqlite, scope: { userId: 'a' }, logger: silentLogger });
    for (const content of corpus(30, 21)) await a.write({ category: 'lesson', content });
    // 40 distinct 'wide…' terms; 'slipper' only in another tenant's row; 'breakout' also a category token.
    for (let i = 0; i < 40; i++) await a.write({ category: 'lesson', content: `wide${i} note` });
    await createMemoryStore({ storage: sqlite, scope: { userId: 'b' }, logger: silentLogger }).write({ category: 'lesson', content: 'slipper' });
    await a.write({ category: 'breakout_watch', content: 'plain text' });
    await a.search('warm up'); // indexes every row, creates the vocab table
    const stats = createFtsStats(sqlite.handle);
    const expanded = (q: string) => sqlite.handle.read('test', () => stats.windowQuery(parseSearchQuery(q).root as MemoryQueryNode));
    expect(expanded('slip*')).toEqual({ kind: 'or', children: [{ kind: 'term', text: 'slippage' }, { kind: 'term', text: 'slipper' }] });
    expect(expanded('btc AND bre*')).toEqual({ kind: 'and', children: [{ kind: 'term', text: 'btc' }, { kind: 'term', text: 'breakout' }] });
    expect(expanded('wide*')).toEqual({ kind: 'term', text: 'wide', prefix: true }); // 40 terms > PREFIX_EXPANSION_LIMIT
    expect(PREFIX_EXPANSION_LIMIT).toBe(32);
    expect(expanded('s1*')).toEqual({ kind: 'term', text: 's1', prefix: true }); // could reach scope tokens
    expect(expanded('zzz*')).toEqual({ kind: 'term', text: 'zzz', prefix: true }); // no term: FTS5 finds nothing itself
    // Same rows as FTS5's own prefix query, whichever form the lookup used.
    for (const q of ['slip*', 'bre*', 'btc bre*', 'wide*', 'wide1*', 's1*', 'zzz*', 'n1* OR eth', '"weekly charts" slip*']) {
      expect(await windowIds(sqlite, { userId: 'a' }, q), q).toEqual(native(sqlite, { userId: 'a' }, q));
    }
    await sqlite.close();
  });

  it('sees terms another connection indexes after the expansion was cached, and updates and deletes', async () => {
    const path = join(dir, 'prefix-carry.db');
    const one = createSqliteStorage({ path, logger: silentLogger });
    const two = createSqliteStorage({ path, logger: silentLogger });
    const a1 = createMemoryStore({ storage: one, scope: { userId: 'a' }, logger: silentLogger });
    const a2 = createMemoryStore({ storage: two, scope: { userId: 'a' }, logger: silentLogger });
    await a1.write({ category: 'lesson', content: 'breakout on btc' });
    expect((await a1.search('brea*')).map((h) => h.content)).toEqual(['breakout on btc']);
    // Another connection writes new terms with the prefix (its own catch-up and ours both carry them forward).
    const added = [];
    for (let i = 0; i < 70; i++) added.push((await a2.write({ category: 'lesson', content: i === 69 ? 'breakeven stop' : `filler ${i}` })).id);
    await a2.write({ category: 'lesson', content: 'breaker pattern' });
    expect((await a1.search('brea*', { limit: 50 })).map((h) => h.content).sort()).toEqual(['breaker pattern', 'breakeven stop', 'breakout on btc']);
    // An update gives an indexed row a new term: the expansion is rebuilt.
    await a2.update(added[0] as number, { content: 'breach of the range' });
    expect((await a1.search('brea*', { limit: 50 })).map((h) => h.content).sort()).toEqual(['breach of the range', 'breaker pattern', 'breakeven stop', 'breakout on btc']);
    await a2.hardDelete(added[69] as number);
    expect((await a1.search('brea*', { limit: 50 })).map((h) => h.content).sort()).toEqual(['breach of the range', 'breaker pattern', 'breakout on btc']);
    for (const s of [one, two]) expect(await windowIds(s, { userId: 'a' }, 'brea*')).toEqual(native(s, { userId: 'a' }, 'brea*'));
    await one.close();
    await two.close();
  });
});

describe('a search reads each record once', () => {
  /** An in-memory storage whose `memory.getMany` records the ids of each call. */
  function countedStorage() {
    const storage = createInMemoryStorage();
    const reads: number[][] = [];
    const memory = Object.create(storage.memory) as typeof storage.memory;
    memory.getMany = (scope, ids) => {
      reads.push([...ids]);
      return storage.memory.getMany(scope, ids);
    };
    const counted = Object.create(storage) as typeof storage;
    Object.defineProperty(counted, 'memory', { value: memory });
    return { storage: counted, reads };
  }

  it('bm25: the records read to check visibility are the ones returned, with no second read', async () => {
    const { storage, reads } = countedStorage();
    const store = createMemoryStore({ storage, scope: { userId: 'u' }, now: fakeClock(), logger: silentLogger });
    for (const text of corpus(40, 3)) await store.write({ category: 'observation', content: text });
    reads.length = 0;
    const hits = await store.search('slippage', { mode: 'bm25', limit: 5 });
    expect(hits).toHaveLength(5);
    expect(reads).toHaveLength(1);
    expect(hits.every((h) => reads[0]!.includes(h.id))).toBe(true);
  });

  it('hybrid: only the vector hits the lexical lookup did not read are read at the end', async () => {
    const { storage, reads } = countedStorage();
    const store = createMemoryStore({ storage, scope: { userId: 'u' }, now: fakeClock(), logger: silentLogger, embedder: createFakeEmbedder(32) });
    for (const text of corpus(30, 5)) await store.write({ category: 'observation', content: text });
    await store.flushEmbeddings();
    reads.length = 0;
    const info = await store.searchWithInfo('slippage', { limit: 10 });
    expect(info.path).toBe('hybrid');
    expect(reads.length).toBe(2);
    const [lexicalRead, lastRead] = reads as [number[], number[]];
    expect(lastRead.filter((id) => lexicalRead.includes(id))).toEqual([]);
    expect(lastRead.length).toBeGreaterThan(0);
    expect(info.hits.every((h) => lexicalRead.includes(h.id) || lastRead.includes(h.id))).toBe(true);
  });
});
