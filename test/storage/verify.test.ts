import { join } from 'node:path';
import { createMemoryStore, silentLogger } from '@minara/agent';
import { createSqliteStorage, type SqliteStorage } from '@minara/agent/sqlite';
import { createFakeEmbedder } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A file store with 80 memories (so some wait for the full-text index), vectors for all and one edge-bearing row. */
async function seeded(): Promise<{ storage: SqliteStorage; ids: number[] }> {
  const { dir, cleanup } = tempDir();
  const storage = createSqliteStorage({ path: join(dir, 'v.db'), logger: silentLogger });
  cleanups.push(() => {
    void storage.close().finally(cleanup);
  });
  const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, embedder: createFakeEmbedder(16), logger: silentLogger });
  const ids: number[] = [];
  for (let i = 0; i < 80; i++) ids.push((await memory.write({ category: 'observation', content: `note ${i} about $BTC and staking` })).id);
  await memory.flushEmbeddings();
  return { storage, ids };
}

describe('SqliteStorage.verify', () => {
  it('finds nothing wrong in a store written through the API, and changes nothing', async () => {
    const { storage } = await seeded();
    const before = storage.handle.db.prepare('SELECT indexed_through FROM memory_fts_state').pluck().get();
    const report = await storage.verify();
    expect(report).toMatchObject({ ok: true, problems: [] });
    expect(report.counted.memories).toBe(80);
    expect(report.counted.vectors).toBe(storage.capabilities.vector ? 80 : 0);
    // Rows 65..80 still wait for the full-text index: verify indexed them only inside its rolled-back savepoint.
    expect(storage.handle.db.prepare('SELECT indexed_through FROM memory_fts_state').pluck().get()).toBe(before);
    expect(before).toBeLessThan(80);
  });

  it('reports a full-text index that lost a row', async () => {
    const { storage, ids } = await seeded();
    const db = storage.handle.db;
    const row = db.prepare('SELECT id, search_text, category, scope_key FROM memories WHERE id = ?').get(ids[3]) as Record<string, unknown>;
    db.prepare("INSERT INTO memories_fts(memories_fts, rowid, search_text, category, scope_key) VALUES ('delete', ?, ?, ?, ?)").run(row.id, row.search_text, row.category, row.scope_key);
    const report = await storage.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.check)).toContain('fts');
  });

  it('reports orphan, missing and mismatched vectors, orphan edges and unsigned executions', async () => {
    const { storage, ids } = await seeded();
    if (!storage.capabilities.vector) return expect(storage.capabilities.vectorUnavailableReason).toBeDefined();
    const db = storage.handle.db;
    db.prepare('DELETE FROM memory_vectors WHERE memory_id = ?').run(ids[0]); // embedded row without a vector + stale vec0 entry
    db.prepare('UPDATE memory_vectors SET bits = zeroblob(2) WHERE memory_id = ?').run(ids[1]);
    db.prepare("UPDATE memories SET content_hash = 'changed' WHERE id = ?").run(ids[2]);
    db.prepare("INSERT INTO memory_edges (user_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, created_at) VALUES ('u1', 'memories', 99999, 'asset', 'BTC', 'mentions', '2026-01-01')").run();
    db.prepare(
      "INSERT INTO approvals (id, tool_name, tool_call_id, input_hash, input_json, tier, source, reason, status, created_at, expires_at, signature) VALUES ('a1', 't', 'c', 'h', '{}', 3, 'user', 'r', 'executed', '2026-01-01', '2027-01-01', 'sig')",
    ).run();
    const report = await storage.verify();
    const text = report.problems.map((p) => `${p.check}: ${p.message}`).join('\n');
    expect(text).toContain(`rows marked embedded without a vector: ${ids[0]}`);
    expect(text).toContain(`vec0 entries without a vector: ${ids[0]}`);
    expect(text).toContain(`sign bits that do not match the vector: ${ids[1]}`);
    expect(text).toContain(`vectors without a row of the same content: ${ids[2]}`);
    expect(text).toContain('edges of rows that no longer exist');
    expect(text).toContain('executed approvals without an execution signature: a1');
  });
});
