/**
 * Memory rows looked up by id on PostgreSQL must reach them through the primary key whatever the table's
 * statistics say. Right after a bulk load, before autoanalyze has run, the planner believes a tenant holds a few
 * hundred rows: it then combined the scope index (every entry of the tenant) with the primary key for
 * `id = ANY(…) AND user_id = … AND agent_id …`, or filtered a bitmap scan of the whole tenant, 12–235 ms per
 * `getMany` at 100k rows against well under a millisecond (every memory search makes one or two). This file
 * loads one tenant with autovacuum off (no statistics, as after a bulk load), runs a search and an id read
 * through the public API, and EXPLAINs the statements the storage actually sent, with their own parameters.
 * The writes by id (an embedding state for a batch, the purge of soft-deleted rows with their edges, a hard
 * delete) and the edges of a set of memories are held to the same rule: they reach rows and edges by key.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStorage, type PostgresStorage } from '@minara/agent/postgres';
import { createMemoryStore, silentLogger, type MemoryStore } from '@minara/agent';
import { realComponent } from '../support/real-component';
import { explainSent, recordingPool, type SentStatement } from './plans';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');

describe.runIf(available)('memory rows by id on PostgreSQL, with no statistics', () => {
  let own: Awaited<ReturnType<typeof startRealPostgres>> | undefined;
  let pool: pg.Pool;
  let storage: PostgresStorage;
  let schema: string;
  let mine: MemoryStore;
  let otherId: number;
  const scope = { userId: 'tenant-a' };
  const sent: SentStatement[] = [];

  beforeAll(async () => {
    own = realServerUrl() === undefined ? await startRealPostgres() : undefined;
    pool = new pg.Pool({ connectionString: own?.url ?? realServerUrl()!, max: 4 });
    const recording = recordingPool(pool, sent);
    schema = freshSchema('ids');
    storage = await createPostgresStorage({ pool: recording, schema, logger: silentLogger });
    // As after a bulk load: no ANALYZE has run on the tables, and none will while the tests run.
    await pool.query(`ALTER TABLE ${schema}.memories SET (autovacuum_enabled = false)`);
    await pool.query(`ALTER TABLE ${schema}.memory_edges SET (autovacuum_enabled = false)`);
    mine = createMemoryStore({ storage, scope, logger: silentLogger });
    const theirs = createMemoryStore({ storage, scope: { userId: 'tenant-b' }, logger: silentLogger });
    for (let batch = 0; batch < 30; batch++) {
      await mine.writeMany(Array.from({ length: 500 }, (_, i) => ({ category: 'observation' as const, content: `row ${batch}-${i} watched ${i % 7 === 0 ? 'SOL staking yields' : 'ETH gas fees'}` })));
    }
    const [other] = await theirs.writeMany([{ category: 'observation', content: 'tenant b watched SOL staking yields' }]);
    otherId = other!.id;
    const stats = await pool.query(`SELECT relname, last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE schemaname = $1 AND relname IN ('memories', 'memory_edges') ORDER BY relname`, [schema]);
    expect(stats.rows).toEqual([
      { relname: 'memories', last_analyze: null, last_autoanalyze: null },
      { relname: 'memory_edges', last_analyze: null, last_autoanalyze: null },
    ]);
  }, 120_000);

  afterAll(async () => {
    await storage?.close();
    await pool?.end();
    own?.stop();
  });

  it('getMany and the index\'s re-read of changed rows use the primary key, never a scan of the tenant, and return only the scope\'s rows', async () => {
    sent.length = 0;
    const hits = await mine.search('SOL staking', { mode: 'bm25', limit: 5 });
    expect(hits).toHaveLength(5);
    expect(hits.every((h) => h.content.includes('SOL staking'))).toBe(true);
    // Another tenant's id asked for in this scope: nothing comes back.
    expect(await storage.memory.getMany(scope, [otherId, hits[0]!.id])).toHaveLength(1);
    // The index re-reads rows whose text changed by id (a content update, then the next lookup).
    await mine.update(hits[1]!.id, { content: 'row edited: watched SOL staking yields closely' });
    await mine.search('SOL staking', { mode: 'bm25', limit: 5 });

    const byIds = sent.filter((s) => /\bid = ANY\(\$\d+::bigint\[\]\)/.test(s.text) && /^\s*(SELECT|WITH)\b/.test(s.text));
    expect(byIds.length).toBeGreaterThanOrEqual(3);
    // Both kinds were sent and are checked below: getMany's full rows and the index's re-read of changed text.
    expect(byIds.some((s) => /SELECT id, user_id, agent_id, category, content/.test(s.text))).toBe(true);
    expect(byIds.some((s) => /SELECT id, content, category, user_id AS/.test(s.text))).toBe(true);
    for (const statement of byIds) {
      const { used, context } = await explainSent(pool, statement);
      const touched = used.filter((n) => n['Relation Name'] === 'memories' || n['Index Name'] !== undefined);
      expect(touched.map((n) => n['Index Name']).filter((name) => name !== undefined && name.startsWith('memories_scope')), context).toEqual([]);
      expect(touched.some((n) => n['Index Name'] === 'memories_pkey'), context).toBe(true);
      expect(touched.filter((n) => n['Node Type'] === 'Seq Scan'), context).toEqual([]);
    }
  }, 120_000);

  it('the writes by id and the edges of a set of memories reach rows and edges by key, and stay in the scope', async () => {
    const ids = (await storage.memory.list(scope, { limit: 60 })).map((r) => r.id);
    expect(ids).toHaveLength(60);
    const edgesBefore = await storage.memory.edgesForMemories(scope, ids.slice(0, 10));
    expect(edgesBefore.length).toBeGreaterThan(0);
    sent.length = 0;

    // An embedding state for a batch (another tenant's id among them is left alone).
    await storage.memory.setEmbeddingState(scope, [...ids.slice(0, 20), otherId], 'failed');
    // The edges of a set of memories (another tenant's id among them: none of its edges).
    const edges = await storage.memory.edgesForMemories(scope, [...ids.slice(0, 10), otherId]);
    expect(edges.map((e) => e.memoryId).filter((id) => id === otherId)).toEqual([]);
    expect(edges.length).toBe(edgesBefore.length);
    // Soft-deleted rows purged for good, with their edges; then one row deleted at once.
    for (const id of ids.slice(20, 50)) expect(await storage.memory.softDelete(scope, id, '2020-01-01T00:00:00.000Z')).toBe(true);
    expect(await storage.memory.purgeSoftDeleted(scope, '2021-01-01T00:00:00.000Z')).toBe(30);
    expect(await storage.memory.hardDelete(scope, ids[50]!)).toBe(true);
    expect(await storage.memory.hardDelete(scope, otherId)).toBe(false);

    const failed = await storage.memory.listByEmbeddingState(scope, ['failed'], 100);
    expect(failed.map((r) => r.id).sort((a, b) => a - b)).toEqual(ids.slice(0, 20).sort((a, b) => a - b));
    expect(await storage.memory.getMany(scope, ids.slice(20, 51))).toEqual([]);
    expect(await storage.memory.edgesForMemories(scope, ids.slice(20, 51))).toEqual([]);
    const theirs = await storage.memory.getMany({ userId: 'tenant-b' }, [otherId]);
    expect(theirs.map((r) => [r.id, r.embeddingState])).toEqual([[otherId, theirs[0]!.embeddingState]]);
    expect(theirs[0]!.embeddingState).not.toBe('failed');

    const byIds = sent.filter((s) => /\b(src_)?id = ANY\(\$\d+::bigint\[\]\)/.test(s.text));
    const kinds = ['UPDATE', 'DELETE FROM', 'src_id'];
    for (const kind of kinds) expect(byIds.some((s) => s.text.includes(kind)), kind).toBe(true);
    for (const statement of byIds) {
      const { used, context } = await explainSent(pool, statement);
      expect(used.map((n) => n['Index Name']).filter((name) => name !== undefined && /^(memories_scope|memory_edges_entity)/.test(name)), context).toEqual([]);
      expect(used.filter((n) => n['Node Type'] === 'Seq Scan' || n['Node Type'] === 'BitmapAnd'), context).toEqual([]);
      if (/\bFROM \S*memories\b|UPDATE \S*memories\b/.test(statement.text)) expect(used.some((n) => n['Index Name'] === 'memories_pkey'), context).toBe(true);
      // The edges by their unique key (src_table, src_id, …), which PostgreSQL names after its columns.
      if (/\bFROM \S*memory_edges\b/.test(statement.text)) expect(used.some((n) => n['Index Name']?.startsWith('memory_edges_src_table_src_id') === true), context).toBe(true);
    }
  }, 120_000);
});
