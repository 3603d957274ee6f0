import { createMemoryStore, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { describe, expect, it } from 'vitest';
import { clearEmbeddingCache } from '../../src/memory/embedding-queue';
import { createFakeEmbedder, fakeClock, makeStore, vectorEngines as engines, warnNoPgliteVector } from './helpers';

warnNoPgliteVector();

const CORPUS = [
  ['observation', '昨晚山寨币全线下跌，altcoin drawdown overnight'],
  ['preference', 'always use 0.5% slippage on swaps'],
  ['lesson', 'stop-losses on BTC should trail by 8% not 5%'],
  ['observation', 'user prefers weekly charts for ETH'],
] as const;

describe.each(engines)('hybrid search ($name)', ({ make }) => {
  it('write returns before embedding; states go pending → embedded; identical content is embedded once', async () => {
    clearEmbeddingCache();
    const embedder = createFakeEmbedder({ dimensions: 48, delayMs: 5 });
    const { store } = makeStore(make, { embedder });
    const a = await store.write({ category: 'observation', content: 'altcoin drawdown overnight' });
    expect((await store.get(a.id))?.embeddingState).toBe('pending');
    const b = await store.write({ category: 'lesson', content: 'Altcoin   drawdown overnight.' });
    const c = await store.write({ category: 'alert', content: '!!' });
    expect((await store.get(c.id))?.embeddingState).toBe('skipped');
    await store.flushEmbeddings();
    expect((await store.get(a.id))?.embeddingState).toBe('embedded');
    expect((await store.get(b.id))?.embeddingState).toBe('embedded');
    expect(embedder.embeddedValues).toBe(1);
    const d = await store.write({ category: 'observation', content: 'altcoin drawdown overnight' });
    await store.flushEmbeddings();
    expect((await store.get(d.id))?.embeddingState).toBe('embedded');
    expect(embedder.embeddedValues).toBe(1);
    await store.update(d.id, { content: 'ETH gas spiked' });
    expect((await store.get(d.id))?.embeddingState).toBe('pending');
    await store.flushEmbeddings();
    expect((await store.get(d.id))?.embeddingState).toBe('embedded');
    expect(embedder.embeddedValues).toBe(2);
    await store.close();
  });

  it('fuses BM25 and vectors with RRF: semantic recall across vocabulary', async () => {
    const { store } = makeStore(make, { embedder: createFakeEmbedder(64) });
    const ids: number[] = [];
    for (const [category, content] of CORPUS) ids.push((await store.write({ category, content })).id);
    await store.flushEmbeddings();
    const lexical = await store.searchWithInfo('crash of alts', { mode: 'bm25' });
    expect(lexical.hits).toEqual([]);
    const hybrid = await store.searchWithInfo('crash of alts');
    expect(hybrid.path).toBe('hybrid');
    expect(hybrid.hits[0]?.id).toBe(ids[0]);
    const both = await store.searchWithInfo('slippage');
    expect(both.hits[0]?.id).toBe(ids[1]);
    expect(both.hits[0]?.score).toBeCloseTo(1 / 61 + 1 / 61, 6);
  });

  it('degradation 1: no embedder → BM25 results, identical to mode bm25', async () => {
    const { store } = makeStore(make);
    for (const [category, content] of CORPUS) await store.write({ category, content });
    const info = await store.searchWithInfo('slippage OR charts');
    expect(info).toMatchObject({ path: 'bm25', degraded: 'no_embedder' });
    expect(info.hits.map((h) => [h.id, h.score])).toEqual((await store.search('slippage OR charts', { mode: 'bm25' })).map((h) => [h.id, h.score]));
    expect((await store.get(1))?.embeddingState).toBe('pending');
  });

  it('degradation 3: query embedding fails → BM25 results', async () => {
    const embedder = createFakeEmbedder(32);
    const { store } = makeStore(make, { embedder });
    for (const [category, content] of CORPUS) await store.write({ category, content });
    await store.flushEmbeddings();
    embedder.setFailing(true);
    const info = await store.searchWithInfo('weekly charts');
    expect(info).toMatchObject({ path: 'bm25', degraded: 'query_embedding_failed' });
    expect(info.hits[0]?.content).toBe('user prefers weekly charts for ETH');
    expect(info.hits.filter((h) => /weekly|chart/iu.test(h.content)).map((h) => h.content)).toEqual(['user prefers weekly charts for ETH']);
    const slow = createFakeEmbedder({ dimensions: 32, delayMs: 200 });
    const timed = makeStore(make, { embedder: slow, queryEmbeddingTimeoutMs: 20 }).store;
    await timed.write({ category: 'observation', content: 'weekly charts again' });
    expect(await timed.searchWithInfo('weekly timeframe')).toMatchObject({ path: 'bm25', degraded: 'query_embedding_failed' });
    await timed.close();
  });

  it('a failed write embedding marks the row failed and backfill retries it', async () => {
    const embedder = createFakeEmbedder({ dimensions: 16, fail: true });
    const { store } = makeStore(make, { embedder, embeddingRetries: 0 });
    const { id } = await store.write({ category: 'observation', content: 'ETH staking yield fell' });
    await store.flushEmbeddings();
    expect((await store.get(id))?.embeddingState).toBe('failed');
    embedder.setFailing(false);
    expect(await store.backfillEmbeddings()).toBe(0);
    expect(await store.backfillEmbeddings({ includeFailed: true })).toBe(1);
    await store.flushEmbeddings();
    expect((await store.get(id))?.embeddingState).toBe('embedded');
  });

  it('vector dimension is fixed at first use; a mismatch is a clear error and does not break search', async () => {
    const storage = make();
    const logs: string[] = [];
    const logger = { ...silentLogger, error: (m: string, f?: Record<string, unknown>) => logs.push(`${m} ${JSON.stringify(f)}`) };
    const s1 = createMemoryStore({ storage, scope: { userId: 'u1' }, embedder: createFakeEmbedder(16), now: fakeClock(), logger });
    await s1.write({ category: 'observation', content: 'first vectors are sixteen wide' });
    await s1.flushEmbeddings();
    const s2 = createMemoryStore({ storage, scope: { userId: 'u1' }, embedder: createFakeEmbedder({ dimensions: 24, modelId: 'other' }), now: fakeClock(), logger });
    const { id } = await s2.write({ category: 'observation', content: 'these vectors are twenty-four wide' });
    await s2.flushEmbeddings();
    expect((await s2.get(id))?.embeddingState).toBe('failed');
    expect(logs.join('\n')).toMatch(/24 dimensions.*16/);
    const info = await s2.searchWithInfo('vectors');
    expect(info.path).toBe('bm25');
    expect(info.hits).toHaveLength(2);
  });
});

describe('degradation 2: sqlite-vec fails to load', () => {
  it('search answers with BM25 and rows stay pending', async () => {
    const storage = createSqliteStorage({
      path: ':memory:',
      logger: silentLogger,
      loadVectorExtension: () => {
        throw new Error('simulated: no binary for this platform');
      },
    });
    expect(storage.capabilities.vector).toBe(false);
    const embedder = createFakeEmbedder(32);
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, embedder, now: fakeClock(), logger: silentLogger });
    for (const [category, content] of CORPUS) await store.write({ category, content });
    await store.flushEmbeddings();
    expect(embedder.embeddedValues).toBe(0);
    expect((await store.get(1))?.embeddingState).toBe('pending');
    const info = await store.searchWithInfo('slippage');
    expect(info).toMatchObject({ path: 'bm25', degraded: 'vector_unavailable' });
    expect(info.hits.map((h) => h.content)).toEqual(['always use 0.5% slippage on swaps']);
    expect(embedder.doEmbedCalls).toHaveLength(0);
  });
});
