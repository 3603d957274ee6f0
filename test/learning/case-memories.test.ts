import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createApp, createLearningStore, createMemoryStore, type LearningStore, type MemoryStore, silentLogger, type Storage,
} from '@minara/agent';
import { createPostgresStorage, type PostgresStorage } from '@minara/agent/postgres';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createFakeEmbedder, createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { engines, vectorEngines } from '../memory/helpers';
import { freshSchema, realServerUrl, sharedPglitePool } from '../postgres/support';
import { paperFill, turnRecord } from './support';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
/** One closed round trip of `asset`, decided in the spot-trade scenario. */
async function roundTrip(learning: LearningStore, asset: string, win: boolean) {
  await learning.captureTurn(turnRecord([paperFill(asset, 'buy', 100, 0)], { userText: `buy ${asset}`, scenarioId: 'SCENARIO_SPOT_TRADE', stage: 'decide' }));
  return learning.captureTurn(turnRecord([paperFill(asset, 'sell', win ? 110 : 90, win ? 10 : -10)], { userText: `sell ${asset}` }));
}

describe.each(engines)('trade cases are first-class memories ($name)', ({ make }) => {
  it('each new case gets a trade_case memory with entity edges; getEntityNeighborhood and search find it; the snapshot leaves it out; reflection rewrites it', async () => {
    const storage = make() as Storage;
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const learning = createLearningStore({ storage, scope: { userId: 'u1' }, memory, logger: silentLogger });
    await memory.write({ category: 'preference', content: 'Prefers weekly charts.' });
    const closed = await roundTrip(learning, 'ETH', true);
    const [c] = await learning.listCases();
    expect(c?.memoryId).toBeDefined();
    expect(closed.cases[0]?.id).toBe(c!.id);
    const row = (await memory.get(c!.memoryId!))!;
    expect(row).toMatchObject({ category: 'trade_outcome', source: 'trade_case', metadata: { caseId: c!.id, asset: 'ETH', outcome: 'win', scenario_id: 'SCENARIO_SPOT_TRADE', stage: 'decide' } });
    expect(row.content).toMatch(/^Traded ETH: trade case #\d+, long ETH spot 1 @ 100 → 110, \+\$10\.00 \(win\)/);

    const eth = await memory.getEntityNeighborhood('ETH');
    expect(eth.memories.find((m) => m.id === c!.memoryId)?.edgeTypes).toContain('traded');
    expect(eth.related).toContainEqual({ kind: 'scenario', key: 'SCENARIO_SPOT_TRADE', count: 1 });
    expect((await memory.getEntityNeighborhood('$eth')).memories.map((m) => m.id)).toContain(c!.memoryId);
    expect((await memory.getEntityNeighborhood('SCENARIO_SPOT_TRADE')).memories.map((m) => m.id)).toEqual([c!.memoryId]);
    expect((await memory.search('ETH trade case win')).map((h) => h.id)).toContain(c!.memoryId);
    // Episodes never crowd the frozen block.
    const snap = await memory.loadSnapshot();
    expect(snap.memoryIds).not.toContain(c!.memoryId);
    expect(snap.text).toContain('Prefers weekly charts.');

    // Reflection: the case memory now carries the class and the lessons, and search finds it by them.
    const model = createScriptedModel([
      { text: JSON.stringify({ classification: 'variance', rationale: 'sound entry' }) },
      { text: JSON.stringify({ lessons: ['Wait for the breakout retest before entering.'], methodology: null }) },
    ]);
    expect(await learning.reflect({ model })).toMatchObject({ reflected: 1 });
    expect((await memory.get(c!.memoryId!))!.content).toContain('Reflection: variance. Lessons: Wait for the breakout retest before entering.');
    expect((await memory.search('breakout retest')).map((h) => h.id)).toContain(c!.memoryId);
    // Indexing again changes nothing (every case is linked).
    expect(await learning.indexCases()).toEqual({ linked: 0 });
    await memory.close();
    await storage.close();
  });

  it('backfill: cases recorded without a memory store (as before the migration) are indexed once, also by two stores at once; a deleted case memory is not rewritten', async () => {
    const storage = make() as Storage;
    const bare = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    await roundTrip(bare, 'ETH', true);
    await roundTrip(bare, 'BTC', false);
    await roundTrip(bare, 'SOL', true);
    expect((await bare.listCases()).every((c) => c.memoryId === undefined)).toBe(true);
    expect(await storage.learning.caseMemoryScopes(10)).toEqual([{ userId: 'u1' }]);
    await expect(bare.indexCases()).rejects.toThrow(/needs `memory`/);
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
    const a = createLearningStore({ storage, scope: { userId: 'u1' }, memory, logger: silentLogger });
    const b = createLearningStore({ storage, scope: { userId: 'u1' }, memory, logger: silentLogger });
    const [ra, rb] = await Promise.all([a.indexCases(), b.indexCases()]);
    expect(ra.linked + rb.linked).toBe(3);
    expect(await memory.read({ source: 'trade_case', limit: 50 })).toHaveLength(3);
    expect(await storage.learning.caseMemoryScopes(10)).toEqual([]);
    expect((await memory.getEntityNeighborhood('BTC')).memories.map((m) => m.category)).toEqual(['trade_outcome']);
    const sol = (await a.listCases({ asset: 'SOL' }))[0]!;
    await memory.softDelete(sol.memoryId!);
    expect(await a.indexCases()).toEqual({ linked: 0 });
    await memory.close();
    await storage.close();
  });
});

describe.each(vectorEngines)('hybrid search finds trade cases ($name)', ({ make }) => {
  it('the case memory is embedded and the hybrid path ranks it', async () => {
    const storage = make() as Storage;
    const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger, embedder: createFakeEmbedder({ dimensions: 48 }) });
    const learning = createLearningStore({ storage, scope: { userId: 'u1' }, memory, logger: silentLogger });
    for (let i = 0; i < 5; i++) await memory.write({ category: 'observation', content: `unrelated note number ${i} about the weather in Lisbon` });
    await roundTrip(learning, 'ETH', false);
    const [c] = await learning.listCases();
    await memory.flushEmbeddings();
    expect((await memory.get(c!.memoryId!))!.embeddingState).toBe('embedded');
    const r = await memory.searchWithInfo('ETH loss trade case', { mode: 'hybrid', limit: 3 });
    expect(r.path).toBe('hybrid');
    expect(r.hits[0]?.id).toBe(c!.memoryId);
    await memory.close();
    await storage.close();
  });
});

/**
 * Take a migrated learning domain back to v2 (no `memory_id`), as a database written before migration v3 (v4, which
 * only widens a CHECK constraint, runs again on open).
 */
const DOWNGRADE = ['DROP INDEX IF EXISTS §role_memory_unindexed', 'ALTER TABLE §role_memory DROP COLUMN memory_id', "DELETE FROM §schema_migrations WHERE domain = 'learning' AND version IN (3, 4)"];

async function recordOldCases(storage: Storage) {
  const bare = createLearningStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
  await roundTrip(bare, 'ETH', true);
  await roundTrip(bare, 'DOGE', false);
}

describe('learning migration v3 backfills existing cases', () => {
  it('SQLite: a v2 database is migrated on open and createApp indexes its cases', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-case-migration-'));
    dirs.push(dir);
    const file = path.join(dir, 'minara.db');
    const first = createSqliteStorage({ path: file, logger: silentLogger });
    await recordOldCases(first);
    await first.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    for (const sql of DOWNGRADE) db.exec(sql.replaceAll('§', ''));
    expect((db.prepare("SELECT MAX(version) AS v FROM schema_migrations WHERE domain = 'learning'").get() as { v: number }).v).toBe(2);
    db.close();

    const app = await createApp({ storage: createSqliteStorage({ path: file, logger: silentLogger }), model: createScriptedModel([]), envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger });
    try {
      expect((await app.storage.schemaVersions()).learning).toBe(4);
      const eth = await app.memoryFor('u1').getEntityNeighborhood('ETH');
      expect(eth.memories.map((m) => [m.category, m.edgeTypes.includes('traded')])).toEqual([['trade_outcome', true]]);
      expect((await app.learningFor('u1')!.listCases()).every((c) => c.memoryId !== undefined)).toBe(true);
    } finally {
      await app.close();
      await app.storage.close();
    }
  });

  const pg: Array<[string, (schema: string) => Promise<PostgresStorage>]> = [
    ['PGlite', async (schema) => createPostgresStorage({ pool: await sharedPglitePool(), schema, logger: silentLogger })],
    ...(realServerUrl() === undefined ? [] : [['real server', (schema: string) => createPostgresStorage({ connectionString: realServerUrl()!, schema, logger: silentLogger, poolSize: 2 })] as [string, (schema: string) => Promise<PostgresStorage>]]),
  ];
  it.each(pg)('PostgreSQL (%s): a v2 schema is migrated on open and createApp indexes its cases', async (_name, open) => {
    const schema = freshSchema('m');
    const first = await open(schema);
    await recordOldCases(first);
    await first.transaction('downgrade', async (tx) => {
      for (const sql of DOWNGRADE) await tx.run(sql.replaceAll('§', `"${schema}".`));
    });
    await first.close();
    const storage = await open(schema);
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-case-migration-pg-'));
    dirs.push(dir);
    const app = await createApp({ storage, model: createScriptedModel([]), envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger });
    try {
      expect((await storage.schemaVersions()).learning).toBe(4);
      expect((await app.memoryFor('u1').getEntityNeighborhood('ETH')).memories.map((m) => m.category)).toEqual(['trade_outcome']);
      expect((await app.memoryFor('u1').getEntityNeighborhood('DOGE')).memories).toHaveLength(1);
    } finally {
      await app.close();
      await storage.close();
    }
  });

  it('in-memory storage: createApp indexes the cases a store without memory recorded', async () => {
    const storage = createInMemoryStorage();
    await recordOldCases(storage);
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-case-migration-mem-'));
    dirs.push(dir);
    const app = await createApp({ storage, model: createScriptedModel([]), envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger });
    expect((await app.memoryFor('u1').getEntityNeighborhood('ETH')).memories).toHaveLength(1);
    await app.close();
  });
});
