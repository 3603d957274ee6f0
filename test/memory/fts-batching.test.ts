/**
 * Batched full-text indexing (SQLite memory, migration v4): a row is durable when its insert commits and the
 * FTS5 index catches up in batches. These tests hold the invariant "every row at or below the watermark is
 * indexed with its current values, no row above it is" through inserts, updates, deletes, explicit ids, a
 * second connection and close, and check that search never misses a committed row. FTS5's own
 * `integrity-check` compares the index against the `memories` table after each scenario.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, silentLogger } from '@minara/agent';
import { createSqliteStorage, type SqliteStorage } from '@minara/agent/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { coreMigrations } from '../../src/storage/sqlite/core-migrations';
import { FTS_BATCH_ROWS } from '../../src/storage/sqlite/memory-fts-sync';
import { memoryMigrations } from '../../src/storage/sqlite/memory-schema';
import { runMigrations } from '../../src/storage/sqlite/migrate';

const dir = mkdtempSync(join(tmpdir(), 'minara-fts-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
const freshPath = () => join(dir, `m${fileNo++}.db`);

function open(path: string): SqliteStorage {
  return createSqliteStorage({ path, logger: silentLogger, vector: false });
}
function watermark(storage: SqliteStorage): { through: number; maxId: number } {
  const db = storage.handle.db;
  return {
    through: db.prepare('SELECT indexed_through FROM memory_fts_state WHERE id = 1').pluck().get() as number,
    maxId: (db.prepare('SELECT COALESCE(MAX(id), 0) FROM memories').pluck().get() as number) ?? 0,
  };
}
/**
 * FTS5 checks its index against the content table; throws SQLITE_CORRUPT_VTAB on any difference. It compares
 * every row, so it only passes once no row waits (as docs/memory.md tells operators).
 */
function integrityCheck(storage: SqliteStorage): void {
  storage.handle.db.exec("INSERT INTO memories_fts(memories_fts, rank) VALUES('integrity-check', 1)");
}
/** Rows of the index matching `word` in the text column (any tenant), straight from FTS5. */
function indexed(storage: SqliteStorage, word: string): number {
  return storage.handle.db.prepare('SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck().get(`search_text:"${word}"`) as number;
}

describe('batched full-text indexing (sqlite)', () => {
  it('single writes wait for the index, search sees them at once, and the index catches up exactly', async () => {
    const storage = open(freshPath());
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.write({ category: 'observation', content: `zebrafish sighting number w${i}` })).id);
    const before = watermark(storage);
    expect(before.maxId).toBe(ids[4]);
    expect(before.through).toBeLessThan(before.maxId);
    expect(indexed(storage, 'zebrafish')).toBe(0);

    const hits = await store.search('zebrafish', { limit: 10, mode: 'bm25' });
    expect(hits.map((h) => h.id).sort((a, b) => a - b)).toEqual(ids);
    expect(watermark(storage).through).toBe(ids[4]);
    expect(indexed(storage, 'zebrafish')).toBe(5);
    integrityCheck(storage);
    await storage.close();
  });

  it(`indexes in the write path once ${FTS_BATCH_ROWS} rows wait, without any search`, async () => {
    const storage = open(freshPath());
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const ids: number[] = [];
    for (let i = 0; i < FTS_BATCH_ROWS + 3; i++) ids.push((await store.write({ category: 'observation', content: `batch row b${i} heron` })).id);
    const w = watermark(storage);
    expect(w.through).toBe(ids[FTS_BATCH_ROWS - 1]);
    expect(indexed(storage, 'heron')).toBe(FTS_BATCH_ROWS);
    expect(() => integrityCheck(storage)).toThrow(/malformed/); // three rows still wait
    expect((await store.search('heron', { limit: 100, mode: 'bm25' })).length).toBe(FTS_BATCH_ROWS + 3);
    integrityCheck(storage);
    await storage.close();
  });

  it('writeMany and concurrent writes in one tick: writeMany is indexed at once, a group commit joins the batch', async () => {
    const storage = open(freshPath());
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const many = await store.writeMany(Array.from({ length: 10 }, (_, i) => ({ category: 'observation', content: `many otter m${i}` })));
    expect(watermark(storage).through).toBe(many[9]?.id);
    const concurrent = await Promise.all(Array.from({ length: 8 }, (_, i) => store.write({ category: 'observation', content: `tick otter t${i}` })));
    expect(concurrent.map((c) => c.id)).toEqual(Array.from({ length: 8 }, (_, i) => (many[9]?.id as number) + 1 + i));
    expect((await store.search('otter', { limit: 50, mode: 'bm25' })).length).toBe(18);
    integrityCheck(storage);
    await storage.close();
  });

  it('updates and deletes of rows above and below the watermark keep the index equal to the table', async () => {
    const storage = open(freshPath());
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const a = await store.write({ category: 'observation', content: 'indexed walrus alpha' });
    const b = await store.write({ category: 'observation', content: 'indexed walrus beta' });
    await store.search('walrus'); // a and b are now indexed
    const c = await store.write({ category: 'observation', content: 'waiting walrus gamma' });
    const d = await store.write({ category: 'observation', content: 'waiting walrus delta' });
    expect(watermark(storage).through).toBe(b.id);

    await store.update(a.id, { content: 'indexed narwhal alpha' }); // indexed row: the trigger re-indexes it
    await store.update(c.id, { content: 'waiting narwhal gamma' }); // waiting row: indexed later with these values
    expect(await store.hardDelete(b.id)).toBe(true); // indexed row: removed from the index
    expect(await store.hardDelete(d.id)).toBe(true); // waiting row: never reaches the index
    expect(indexed(storage, 'walrus')).toBe(0);
    expect(indexed(storage, 'narwhal')).toBe(1);

    expect((await store.search('walrus', { mode: 'bm25' })).map((h) => h.id)).toEqual([]);
    expect((await store.search('narwhal', { mode: 'bm25' })).map((h) => h.id).sort((x, y) => x - y)).toEqual([a.id, c.id]);
    expect(indexed(storage, 'walrus')).toBe(0);
    expect(indexed(storage, 'narwhal')).toBe(2);
    integrityCheck(storage);
    await storage.close();
  });

  it('a row inserted with an explicit id at or below the watermark is indexed at once', async () => {
    const storage = open(freshPath());
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const first = await store.write({ category: 'observation', content: 'placeholder one' });
    await store.write({ category: 'observation', content: 'placeholder two' });
    await store.hardDelete(first.id);
    await store.search('placeholder');
    storage.handle.db
      .prepare(
        `INSERT INTO memories (id, user_id, agent_id, scope_key, category, content, search_text, status, content_hash, embedding_state, created_at, updated_at)
         SELECT ?, user_id, agent_id, scope_key, category, 'restored pelican', 'restored pelican', 'active', 'h', 'skipped', created_at, updated_at FROM memories LIMIT 1`,
      )
      .run(first.id);
    expect(indexed(storage, 'pelican')).toBe(1);
    expect((await store.search('pelican', { mode: 'bm25' })).map((h) => h.id)).toEqual([first.id]);
    integrityCheck(storage);
    await storage.close();
  });

  it("another connection's search indexes and finds rows this connection left waiting; close catches up", async () => {
    const path = freshPath();
    const writer = open(path);
    const reader = open(path);
    const w = createMemoryStore({ storage: writer, scope: { userId: 'u1' }, logger: silentLogger });
    const r = createMemoryStore({ storage: reader, scope: { userId: 'u1' }, logger: silentLogger });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await w.write({ category: 'observation', content: `lemur note l${i}` })).id);
    expect(watermark(writer).through).toBe(0);
    expect((await r.search('lemur', { mode: 'bm25' })).map((h) => h.id).sort((a, b) => a - b)).toEqual(ids);
    expect(watermark(writer).through).toBe(ids[2]);

    const late = await w.write({ category: 'observation', content: 'lemur late entry' });
    expect(watermark(reader).through).toBe(ids[2]);
    await writer.close(); // a clean close leaves nothing waiting
    expect(watermark(reader)).toEqual({ through: late.id, maxId: late.id });
    integrityCheck(reader);
    await reader.close();
  });

  it('rows left waiting by a connection that never closed (a crash) are found by the next process', async () => {
    const path = freshPath();
    const crashed = open(path);
    const store = createMemoryStore({ storage: crashed, scope: { userId: 'u1' }, logger: silentLogger });
    for (let i = 0; i < 4; i++) await store.write({ category: 'observation', content: `ibis record i${i}` });
    // Simulate the process dying: the connection goes away without the storage's close().
    crashed.handle.db.close();
    const raw = new Database(path);
    expect(raw.prepare('SELECT indexed_through FROM memory_fts_state').pluck().get()).toBe(0);
    raw.close();

    const next = open(path);
    const again = createMemoryStore({ storage: next, scope: { userId: 'u1' }, logger: silentLogger });
    expect((await again.search('ibis', { mode: 'bm25', limit: 10 })).length).toBe(4);
    integrityCheck(next);
    await next.close();
  });

  it('one failing row in a group commit is retried alone: the others are stored and indexed', async () => {
    const storage = open(freshPath());
    const scope = { userId: 'u1' };
    const row = (content: string, status: string) => ({
      category: 'observation',
      content,
      searchText: content,
      status: status as 'active',
      contentHash: content,
      embeddingState: 'skipped' as const,
      edges: [],
      now: '2026-01-01T00:00:00.000Z',
    });
    const results = await Promise.allSettled([
      storage.memory.insert(scope, row('good crane one', 'active')),
      storage.memory.insert(scope, row('bad crane', 'not-a-status')),
      storage.memory.insert(scope, row('good crane two', 'active')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const store = createMemoryStore({ storage, scope, logger: silentLogger });
    expect((await store.search('crane', { mode: 'bm25' })).map((h) => h.content).sort()).toEqual(['good crane one', 'good crane two']);
    integrityCheck(storage);
    await storage.close();
  });

  it('migrating a v3 file keeps its rows searchable and starts the watermark at the highest id ever used', async () => {
    const path = freshPath();
    const v3 = new Database(path);
    v3.pragma('journal_mode = WAL');
    runMigrations(v3, [...coreMigrations, ...memoryMigrations.filter((m) => m.version <= 3)], { vectorAvailable: false, busyTimeoutMs: 1000, now: () => new Date() });
    const insert = v3.prepare(
      `INSERT INTO memories (user_id, agent_id, scope_key, category, content, search_text, status, content_hash, embedding_state, created_at, updated_at)
       VALUES ('u1', NULL, ?, 'observation', ?, ?, 'active', ?, 'skipped', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
    );
    const probe = open(freshPath()); // the scope token this version derives for u1
    const probeStore = createMemoryStore({ storage: probe, scope: { userId: 'u1' }, logger: silentLogger });
    await probeStore.write({ category: 'observation', content: 'probe' });
    const key = probe.handle.db.prepare('SELECT scope_key FROM memories LIMIT 1').pluck().get() as string;
    await probe.close();
    for (let i = 0; i < 5; i++) insert.run(key, `old puffin p${i}`, `old puffin p${i}`, `h${i}`);
    v3.prepare('DELETE FROM memories WHERE id = 5').run(); // the highest id ever used stays 5
    v3.close();

    const storage = open(path);
    expect(watermark(storage)).toEqual({ through: 5, maxId: 4 });
    const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    expect((await store.search('puffin', { mode: 'bm25' })).length).toBe(4);
    integrityCheck(storage);
    const fresh = await store.write({ category: 'observation', content: 'new puffin' });
    expect(fresh.id).toBe(6);
    expect(watermark(storage).through).toBe(5);
    expect((await store.search('puffin', { mode: 'bm25' })).length).toBe(5);
    integrityCheck(storage);
    await storage.close();
  });
});
