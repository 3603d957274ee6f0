/**
 * Memory rows looked up by id on PostgreSQL must reach them through the primary key whatever the table's
 * statistics say. Right after a bulk load, before autoanalyze has run, the planner believes a tenant holds a few
 * hundred rows: it then combined the scope index (every entry of the tenant) with the primary key for
 * `id = ANY(…) AND user_id = … AND agent_id …`, or filtered a bitmap scan of the whole tenant, 12–235 ms per
 * `getMany` at 100k rows against well under a millisecond (every memory search makes one or two). This file
 * loads one tenant with autovacuum off (no statistics, as after a bulk load), runs a search and an id read
 * through the public API, and EXPLAINs the statements the storage actually sent, with their own parameters.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStorage, type PostgresPool } from '@minara/agent/postgres';
import { createMemoryStore, silentLogger } from '@minara/agent';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** Every node of a plan tree. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe.runIf(available)('memory rows by id on PostgreSQL, with no statistics', () => {
  it('getMany and the index\'s re-read of changed rows use the primary key, never a scan of the tenant, and return only the scope\'s rows', async () => {
    const own = realServerUrl() === undefined ? await startRealPostgres() : undefined;
    const pool = new pg.Pool({ connectionString: own?.url ?? realServerUrl()!, max: 4 });
    const sent: Array<{ text: string; values: readonly unknown[] }> = [];
    const recording: PostgresPool = {
      query: (text, values) => {
        sent.push({ text, values: values ?? [] });
        return pool.query(text, values as unknown[] | undefined);
      },
      connect: () => pool.connect(),
    };
    const schema = freshSchema('ids');
    const storage = await createPostgresStorage({ pool: recording, schema, logger: silentLogger });
    try {
      // As after a bulk load: no ANALYZE has run on the table, and none will while the test runs.
      await pool.query(`ALTER TABLE ${schema}.memories SET (autovacuum_enabled = false)`);
      const scope = { userId: 'tenant-a' };
      const mine = createMemoryStore({ storage, scope, logger: silentLogger });
      const theirs = createMemoryStore({ storage, scope: { userId: 'tenant-b' }, logger: silentLogger });
      for (let batch = 0; batch < 30; batch++) {
        await mine.writeMany(Array.from({ length: 500 }, (_, i) => ({ category: 'observation' as const, content: `row ${batch}-${i} watched ${i % 7 === 0 ? 'SOL staking yields' : 'ETH gas fees'}` })));
      }
      const [other] = await theirs.writeMany([{ category: 'observation', content: 'tenant b watched SOL staking yields' }]);
      const stats = await pool.query(`SELECT last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'memories'`, [schema]);
      expect(stats.rows[0]).toEqual({ last_analyze: null, last_autoanalyze: null });

      sent.length = 0;
      const hits = await mine.search('SOL staking', { mode: 'bm25', limit: 5 });
      expect(hits).toHaveLength(5);
      expect(hits.every((h) => h.content.includes('SOL staking'))).toBe(true);
      // Another tenant's id asked for in this scope: nothing comes back.
      expect(await storage.memory.getMany(scope, [other!.id, hits[0]!.id])).toHaveLength(1);
      // The index re-reads rows whose text changed by id (a content update, then the next lookup).
      await mine.update(hits[1]!.id, { content: 'row edited: watched SOL staking yields closely' });
      await mine.search('SOL staking', { mode: 'bm25', limit: 5 });

      const byIds = sent.filter((s) => /\bid = ANY\(\$\d+::bigint\[\]\)/.test(s.text) && /^\s*(SELECT|WITH)\b/.test(s.text));
      expect(byIds.length).toBeGreaterThanOrEqual(3);
      // Both kinds were sent and are checked below: getMany's full rows and the index's re-read of changed text.
      expect(byIds.some((s) => /SELECT id, user_id, agent_id, category, content/.test(s.text))).toBe(true);
      expect(byIds.some((s) => /SELECT id, content, category, user_id AS/.test(s.text))).toBe(true);
      for (const statement of byIds) {
        const explained = await pool.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values as unknown[]);
        const plan = (explained.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan;
        const used = nodes(plan).filter((n) => n['Relation Name'] === 'memories' || n['Index Name'] !== undefined);
        const context = `${statement.text}\n${JSON.stringify(plan, null, 1)}`;
        expect(used.map((n) => n['Index Name']).filter((name) => name !== undefined && name.startsWith('memories_scope')), context).toEqual([]);
        expect(used.some((n) => n['Index Name'] === 'memories_pkey'), context).toBe(true);
        expect(used.filter((n) => n['Node Type'] === 'Seq Scan'), context).toEqual([]);
      }
    } finally {
      await storage.close();
      await pool.end();
      own?.stop();
    }
  }, 120_000);
});
