import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type AuditEntryInput, type AuditQuery, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { AUDIT_LOOKUP_BATCH, auditLookupClause } from '../../src/storage/sqlite/audit-lookup';
import { tempDir } from './helpers';

// SQLite finds audit rows by trace id, session and tool name through `audit_lookup`, filled in batches of 1,024 appends, plus
// the rows above its watermark read by id (docs/operations.md, "Sixth round"). These tests hold it to what the
// per-row indexes gave: the same rows as the in-memory engine for every filter, wherever the rows sit against the
// watermark, after edits made with SQL, across a rolled-back batch and after migrating an older file.

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const TOOLS = ['get_price', 'swap_tokens', 'web_search', 'run_code'] as const;
const entry = (i: number): AuditEntryInput => ({
  at: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString(),
  toolName: TOOLS[i % TOOLS.length]!,
  tier: 1,
  source: 'chat',
  decision: i % 5 === 0 ? 'denied' : 'allowed',
  durationMs: 1,
  argsJson: JSON.stringify({ i }),
  sessionId: `s_${i % 7}`,
  traceId: `trc_${Math.floor(i / 3)}`,
  ...(i % 2 === 0 ? { userId: `u_${i % 3}` } : {}),
});
const numbers = async (storage: Storage, filter: AuditQuery) => (await storage.audit.query(filter)).map((r) => (JSON.parse(r.argsJson) as { i: number }).i);
const through = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT through FROM audit_lookup_state').pluck().get() as number;
  } finally {
    db.close();
  }
};

function sqliteFile(name: string) {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  return join(dir, name);
}

describe('SQLite audit lookups by trace, session and tool', () => {
  it('find the same rows as the in-memory engine, below and above the watermark, for every filter that names a trace, session or tool', async () => {
    const path = sqliteFile('lookup.db');
    const sqlite = createSqliteStorage({ path, logger: silentLogger });
    const memory = createInMemoryStorage();
    const ROWS = AUDIT_LOOKUP_BATCH + 300;
    for (let i = 0; i < ROWS; i++) {
      await sqlite.audit.append(entry(i));
      await memory.audit.append(entry(i));
    }
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH); // one batch indexed; the last 300 rows sit above the watermark
    const below = 'trc_20';
    const above = `trc_${Math.floor((ROWS - 10) / 3)}`;
    const straddling = `trc_${Math.floor(AUDIT_LOOKUP_BATCH / 3)}`; // rows 1023 (indexed), 1024 and 1025 (above)
    const filters: AuditQuery[] = [
      { traceId: below },
      { traceId: above },
      { traceId: straddling, order: 'oldest' },
      { traceId: 'trc_unknown' },
      { traceId: below, sessionId: 's_4' },
      { sessionId: 's_3', limit: 1000 },
      { sessionId: 's_5', limit: 9, order: 'oldest' },
      { sessionId: 's_6', toolName: 'get_price', limit: 1000 },
      { sessionId: 's_2', since: entry(1000).at, limit: 1000 },
      { sessionId: 's_none' },
      { traceId: above, toolName: 'swap_tokens' },
      { toolName: 'web_search', limit: 1000 },
      { toolName: 'web_search', limit: 7, order: 'oldest' },
      { toolName: 'get_price', since: entry(400).at, until: entry(1200).at, limit: 1000 },
      { toolName: 'run_code', userId: 'u_0', limit: 1000 },
      { toolName: 'swap_tokens', decision: 'denied', limit: 1000 },
      { toolName: 'get_price', beforeId: 900, limit: 20 },
      { toolName: 'get_price', afterId: 1000, limit: 1000, order: 'oldest' },
      { toolName: 'no_such_tool' },
    ];
    for (const filter of filters) {
      expect(await numbers(sqlite, filter), JSON.stringify(filter)).toEqual(await numbers(memory, filter));
      const { limit: _limit, order: _order, ...counted } = filter;
      expect(await sqlite.audit.count(counted), JSON.stringify(counted)).toBe(await memory.audit.count(counted));
    }
    expect(await numbers(sqlite, { traceId: straddling, order: 'oldest' })).toEqual([1023, 1024, 1025]);
    expect(await sqlite.audit.count({ toolName: 'web_search' })).toBe(ROWS / 4);
    expect((await sqlite.audit.verify()).ok).toBe(true);
    await sqlite.close();
  });

  it('an append writes two pages, three for a tenant row: the row and the chain counter, plus the tenant index', async () => {
    const path = sqliteFile('pages.db');
    const storage = createSqliteStorage({ path, logger: silentLogger, backgroundCheckpoints: false });
    const raw = new Database(path, { readonly: true });
    // The WAL index header's mxFrame (offset 16 of the -shm file, native byte order): frames the WAL holds. Each frame
    // is a 24-byte header and a 4,096-byte page after the 32-byte WAL header; dbstat names the B-tree of a page.
    const read = (file: string, offset: number) => {
      const fd = openSync(file, 'r');
      try {
        const buf = Buffer.alloc(4);
        readSync(fd, buf, 0, 4, offset);
        return buf;
      } finally {
        closeSync(fd);
      }
    };
    const frames = () => (endianness() === 'LE' ? read(`${path}-shm`, 16).readUInt32LE(0) : read(`${path}-shm`, 16).readUInt32BE(0));
    const treeOf = (frame: number) => {
      const page = read(`${path}-wal`, 32 + frame * (24 + 4096)).readUInt32BE(0);
      return raw.prepare('SELECT name FROM dbstat WHERE pageno = ?').pluck().get(page) as string;
    };
    const written = async (e: AuditEntryInput) => {
      const before = frames();
      await storage.audit.append(e);
      const after = frames();
      return { count: after - before, trees: new Set(Array.from({ length: after - before }, (_, k) => treeOf(before + k))) };
    };
    const mode = (counts: number[]) => [...counts].sort((a, b) => counts.filter((c) => c === b).length - counts.filter((c) => c === a).length)[0];
    for (let i = 0; i < 10; i++) await storage.audit.append(entry(i));
    const plain = [];
    const tenant = [];
    for (let i = 0; i < 20; i++) plain.push(await written(entry(101 + 2 * i))); // odd rows carry no userId
    for (let i = 0; i < 20; i++) tenant.push(await written(entry(200 + 2 * i)));
    // Most appends write exactly these pages; one that fills the table's leaf also writes the new leaf, its parent
    // and the file header (page 1, `sqlite_schema`), never an index page.
    expect(mode(plain.map((w) => w.count))).toBe(2);
    expect(mode(tenant.map((w) => w.count))).toBe(3);
    expect([...new Set(plain.flatMap((w) => [...w.trees]))].sort()).toEqual(expect.arrayContaining(['audit_log', 'sqlite_sequence']));
    for (const w of plain) for (const tree of w.trees) expect(['audit_log', 'sqlite_sequence', 'sqlite_schema']).toContain(tree);
    for (const w of tenant) for (const tree of w.trees) expect(['audit_log', 'sqlite_sequence', 'sqlite_schema', 'audit_log_user']).toContain(tree);
    raw.close();
    await storage.close();
  });

  it('never scans audit_log for a trace, session or tool lookup: the plan reads audit_lookup and rows by id', () => {
    const path = sqliteFile('plan.db');
    createSqliteStorage({ path, logger: silentLogger }).close();
    const db = new Database(path);
    try {
      for (const [column, filter] of [['trace_id', { traceId: 'trc_1' }], ['session_id', { sessionId: 's_1' }], ['tool_name', { toolName: 'get_price' }]] as const) {
        const clause = auditLookupClause(filter)!;
        const plan = (db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM audit_log WHERE ${column} = ? AND ${clause.sql} ORDER BY id DESC LIMIT 100`).all('x', clause.param) as Array<{ detail: string }>).map((r) => r.detail);
        expect(plan.join('\n')).toContain('SEARCH audit_lookup USING PRIMARY KEY (kind=? AND key=?)');
        expect(plan.join('\n')).toContain('SEARCH audit_log USING INTEGER PRIMARY KEY (rowid=?)');
        expect(plan.some((d) => d.startsWith('SCAN audit_log'))).toBe(false);
      }
      // The per-row indexes the lookups replace are gone; the tenant index (circuit breakers read it per call) stays.
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_log' AND sql IS NOT NULL ORDER BY name").pluck().all();
      expect(indexes).toEqual(['audit_log_user']);
    } finally {
      db.close();
    }
  });

  it('a row edited, moved, deleted or inserted with SQL is found under its new values and never under its old ones', async () => {
    const path = sqliteFile('edited.db');
    let storage = createSqliteStorage({ path, logger: silentLogger });
    for (let i = 0; i < AUDIT_LOOKUP_BATCH + 10; i++) await storage.audit.append(entry(i));
    await storage.close();
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH);
    const db = new Database(path);
    db.prepare("UPDATE audit_log SET trace_id = 'trc_moved' WHERE id = 31").run(); // row 30 (ids start at 1), trace trc_10
    db.prepare("UPDATE audit_log SET tool_name = 'forged_tool' WHERE id = 41").run(); // row 40
    db.prepare("UPDATE audit_log SET session_id = 's_forged' WHERE id = 44").run(); // row 43, session s_1
    db.prepare('DELETE FROM audit_log WHERE id = 51').run(); // row 50, trace trc_16
    db.prepare('UPDATE audit_log SET id = 51 WHERE id = 62').run(); // row 61 (trace trc_20) moves into the gap
    db.prepare('DELETE FROM audit_log WHERE id = 71').run(); // row 70, trace trc_23
    db.prepare(`INSERT INTO audit_log (id, at, tool_name, tier, source, decision, duration_ms, args_json, trace_id)
      VALUES (71, '2026-11-01T00:00:00.000Z', 'planted_tool', 1, 'chat', 'allowed', 1, '{"i":-1}', 'trc_planted')`).run();
    db.close();

    storage = createSqliteStorage({ path, logger: silentLogger });
    expect(await numbers(storage, { traceId: 'trc_moved' })).toEqual([30]);
    expect(await numbers(storage, { traceId: 'trc_10', order: 'oldest' })).toEqual([31, 32]);
    expect(await numbers(storage, { toolName: 'forged_tool' })).toEqual([40]);
    expect(await numbers(storage, { toolName: TOOLS[0], limit: 1000 })).not.toContain(40);
    expect(await numbers(storage, { sessionId: 's_forged' })).toEqual([43]);
    expect(await numbers(storage, { sessionId: 's_1', limit: 1000 })).not.toContain(43);
    expect(await numbers(storage, { sessionId: 's_1', limit: 1000 })).toContain(36);
    expect(await numbers(storage, { traceId: 'trc_16', order: 'oldest' })).toEqual([48, 49]);
    expect(await numbers(storage, { traceId: 'trc_20', order: 'oldest' })).toEqual([61, 60, 62]); // id order: 51, 61, 63
    expect(await numbers(storage, { traceId: 'trc_23', order: 'oldest' })).toEqual([69, 71]);
    expect(await numbers(storage, { traceId: 'trc_planted' })).toEqual([-1]);
    expect(await numbers(storage, { toolName: 'planted_tool' })).toEqual([-1]);
    // The evidence still tells: verify reports the edits.
    expect((await storage.audit.verify()).ok).toBe(false);
    await storage.close();

    // The watermark's row deleted with SQL: the next append indexes every row again and writes it back.
    const again = new Database(path);
    again.prepare('DELETE FROM audit_lookup_state').run();
    again.close();
    storage = createSqliteStorage({ path, logger: silentLogger });
    await storage.audit.append(entry(9999));
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH + 11);
    expect(await numbers(storage, { traceId: 'trc_3333' })).toEqual([9999]);
    expect(await numbers(storage, { traceId: 'trc_moved' })).toEqual([30]);
    await storage.audit.append(entry(10_000));
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH + 11); // back to one batch at a time
    await storage.close();
  });

  it('an append rolled back with the batch it would index leaves the watermark and the rows as they were', async () => {
    const path = sqliteFile('rollback.db');
    const storage = createSqliteStorage({ path, logger: silentLogger });
    for (let i = 0; i < 2 * AUDIT_LOOKUP_BATCH - 1; i++) await storage.audit.append(entry(i));
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH);
    // The next append crosses the second batch; the enclosing write fails after it, so both roll back.
    expect(() =>
      storage.handle.write('test', () => {
        void storage.audit.append(entry(5000));
        throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(through(path)).toBe(AUDIT_LOOKUP_BATCH);
    expect(await storage.audit.count()).toBe(2 * AUDIT_LOOKUP_BATCH - 1);
    await storage.audit.append(entry(2 * AUDIT_LOOKUP_BATCH - 1));
    expect(through(path)).toBe(2 * AUDIT_LOOKUP_BATCH);
    expect(await numbers(storage, { traceId: `trc_${Math.floor((2 * AUDIT_LOOKUP_BATCH - 1) / 3)}`, order: 'oldest' })).toEqual([2046, 2047]);
    expect(await numbers(storage, { traceId: 'trc_1666' })).toEqual([]);
    expect((await storage.audit.verify()).ok).toBe(true);
    await storage.close();
  });

  it('a file from before the lookups migrates without losing a row: the old indexes go, every row is found', async () => {
    const path = sqliteFile('older.db');
    let storage = createSqliteStorage({ path, logger: silentLogger });
    for (let i = 0; i < 60; i++) await storage.audit.append(entry(i));
    await storage.close();
    // Take the file back to audit schema v3, as the previous release left it.
    const db = new Database(path);
    db.exec(`DELETE FROM schema_migrations WHERE domain = 'audit' AND version = 4;
      DROP TRIGGER audit_lookup_edited; DROP TRIGGER audit_lookup_inserted; DROP TABLE audit_lookup; DROP TABLE audit_lookup_state;
      CREATE INDEX audit_log_session ON audit_log (session_id); CREATE INDEX audit_log_trace ON audit_log (trace_id);
      CREATE INDEX audit_log_tool_at ON audit_log (tool_name, at);`);
    db.close();

    storage = createSqliteStorage({ path, logger: silentLogger });
    expect(await storage.schemaVersions()).toMatchObject({ audit: 4 });
    expect(through(path)).toBe(60);
    expect(await numbers(storage, { traceId: 'trc_7', order: 'oldest' })).toEqual([21, 22, 23]);
    expect(await storage.audit.count({ toolName: 'run_code' })).toBe(15);
    expect(await storage.audit.count({ sessionId: 's_0' })).toBe(9);
    expect((await storage.audit.verify()).ok).toBe(true);
    await storage.close();
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('audit_log_trace', 'audit_log_session', 'audit_log_tool_at')").pluck().get()).toBe(0);
    after.close();
  });
});
