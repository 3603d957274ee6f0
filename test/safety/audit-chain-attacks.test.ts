/**
 * Attacks on the audit chain: someone with write access to the database edits, deletes, reorders, inserts or
 * rehashes rows behind the audit writer's back, directly in the SQLite file (better-sqlite3) and in the
 * PostgreSQL table (PGlite and a real server, plain SQL through their own drivers). `verify` must report each,
 * naming the row; a clean log passes. Rows written before the chain began are the unchained prefix.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditEntryInput, silentLogger, type Storage } from '@minara/agent';
import { createPostgresStorage } from '@minara/agent/postgres';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { tempDir } from '../storage/helpers';
import { freshSchema, realServerUrl, serverBinariesAvailable, sharedPglitePool, startRealPostgres, type RealPostgres } from '../postgres/support';

const row = (i: number, over: Partial<AuditEntryInput> = {}): AuditEntryInput => ({
  at: new Date(Date.UTC(2026, 10, 1, 14, 3, i)).toISOString(), toolName: i % 2 ? 'buy_token' : 'get_price', tier: i % 2 ? 2 : 1, source: 'cron',
  traceId: 't_alert', userId: 'alice', decision: 'allowed', durationMs: i + 0.5, argsJson: JSON.stringify({ symbol: 'ETH', amountUsd: 10 * i }),
  mode: 'execute', ...(i % 2 ? { outcome: { status: 'filled', orderId: `co_${i}`, fill: { quantity: 0.01 * i, priceUsd: 3000, notionalUsd: 30 * i, feeUsd: 0.03 } } } : {}),
  ...over,
});

/** The documented link formula, computed the way an attacker who read the docs would. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
const CONTENT: Readonly<Record<string, string>> = {
  at: 'at', tool_name: 'toolName', tier: 'tier', source: 'source', session_id: 'sessionId', trace_id: 'traceId', tool_call_id: 'toolCallId', approval_id: 'approvalId',
  decision: 'decision', code: 'code', reason: 'reason', duration_ms: 'durationMs', args_json: 'argsJson', mode: 'mode', user_id: 'userId', kind: 'kind',
  outcome_json: 'outcomeJson', detail_json: 'detailJson',
};
function linkHash(r: Record<string, unknown>): string {
  const content: Record<string, unknown> = { seq: Number(r.seq) };
  for (const [col, key] of Object.entries(CONTENT)) if (r[col] !== null && r[col] !== undefined) content[key] = key === 'tier' || key === 'durationMs' ? Number(r[col]) : String(r[col]);
  return createHash('sha256').update(`${String(r.prev_hash)}\n${canonical(content)}`).digest('hex');
}

/** One engine under attack: its storage and a direct SQL handle to the same table. */
interface Target {
  readonly engine: 'sqlite' | 'postgres';
  readonly storage: Storage;
  /** Run SQL directly (`?` placeholders are rewritten to `$n` on Postgres). */
  exec(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  readonly table: string;
  readonly head: string;
  close(): Promise<void>;
}

function attacks(name: string, open: () => Promise<Target>) {
  const seeded = async (n = 8): Promise<Target> => {
    const t = await open();
    for (let i = 1; i <= n; i++) await t.storage.audit.append(row(i));
    expect((await t.storage.audit.verify()).ok).toBe(true);
    return t;
  };
  const kinds = async (t: Target) => (await t.storage.audit.verify()).problems.map((p) => `${p.kind}@${p.seq ?? '-'}`);
  const ids = async (t: Target) => (await t.exec(`SELECT id FROM ${t.table} ORDER BY id`)).map((r) => Number(r.id));

  describe(`audit chain attacks: ${name}`, () => {
    it('a clean log verifies, and the head names the newest row', async () => {
      const t = await seeded();
      try {
        const report = await t.storage.audit.verify();
        expect(report).toMatchObject({ ok: true, checked: 8, unchainedPrefix: 0, head: { seq: 8 } });
      } finally {
        await t.close();
      }
    });

    it('attack: an edited amount in the arguments is reported at its row', async () => {
      const t = await seeded();
      try {
        const [, , third] = await ids(t);
        await t.exec(`UPDATE ${t.table} SET args_json = ? WHERE id = ?`, ['{"symbol":"ETH","amountUsd":5}', third]);
        expect(await kinds(t)).toEqual(['edited@3']);
      } finally {
        await t.close();
      }
    });

    it('attack: an edited fill price (the outcome) and an edited decision are reported', async () => {
      const t = await seeded();
      try {
        const list = await ids(t);
        const [outcome] = await t.exec(`SELECT outcome_json FROM ${t.table} WHERE id = ?`, [list[4]]);
        await t.exec(`UPDATE ${t.table} SET outcome_json = ? WHERE id = ?`, [String(outcome!.outcome_json).replace('"priceUsd":3000', '"priceUsd":2000'), list[4]]);
        await t.exec(`UPDATE ${t.table} SET decision = 'blocked' WHERE id = ?`, [list[6]]);
        expect(await kinds(t)).toEqual(['edited@5', 'edited@7']);
      } finally {
        await t.close();
      }
    });

    it('attack: a deleted row in the middle is reported as missing', async () => {
      const t = await seeded();
      try {
        await t.exec(`DELETE FROM ${t.table} WHERE id = ?`, [(await ids(t))[3]]);
        expect(await kinds(t)).toEqual(['deleted@4']);
      } finally {
        await t.close();
      }
    });

    it('attack: the newest rows deleted are reported against the head', async () => {
      const t = await seeded();
      try {
        const list = await ids(t);
        await t.exec(`DELETE FROM ${t.table} WHERE id >= ?`, [list[6]]);
        const report = await t.storage.audit.verify();
        expect(report.ok).toBe(false);
        expect(report.problems[0]).toMatchObject({ kind: 'deleted', seq: 7, message: expect.stringContaining('newest 2 row(s) are missing') });
      } finally {
        await t.close();
      }
    });

    it('attack: the newest row deleted, then the agent appends again: the hole stays visible', async () => {
      const t = await seeded();
      try {
        const list = await ids(t);
        await t.exec(`DELETE FROM ${t.table} WHERE id = ?`, [list[7]]);
        await t.storage.audit.append(row(9));
        expect(await kinds(t)).toEqual(['deleted@8']);
      } finally {
        await t.close();
      }
    });

    it('attack: two rows swapped (every column but the id) are reported as reordered', async () => {
      const t = await seeded();
      try {
        const list = await ids(t);
        const [a] = await t.exec(`SELECT * FROM ${t.table} WHERE id = ?`, [list[1]]);
        const [b] = await t.exec(`SELECT * FROM ${t.table} WHERE id = ?`, [list[2]]);
        const cols = Object.keys(a!).filter((c) => c !== 'id');
        // Write each row's columns into the other's id.
        for (const [target, source] of [[list[1], b!], [list[2], a!]] as const) {
          await t.exec(`UPDATE ${t.table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map((c) => source[c] ?? null), target]);
        }
        expect(await kinds(t)).toEqual(['reordered@2']);
      } finally {
        await t.close();
      }
    });

    it('attack: an edited row whose own hash is recomputed breaks the link to the next row', async () => {
      const t = await seeded();
      try {
        const list = await ids(t);
        await t.exec(`UPDATE ${t.table} SET reason = 'approved by the owner' WHERE id = ?`, [list[2]]);
        const [edited] = await t.exec(`SELECT * FROM ${t.table} WHERE id = ?`, [list[2]]);
        await t.exec(`UPDATE ${t.table} SET hash = ? WHERE id = ?`, [linkHash(edited!), list[2]]);
        expect(await kinds(t)).toEqual(['edited@3']);
      } finally {
        await t.close();
      }
    });

    it('attack: a forged row inserted without a link, and one with a made-up link, are reported until the head is moved too; an anchor kept elsewhere catches even that', async () => {
      const t = await seeded();
      try {
        await t.exec(`INSERT INTO ${t.table} (at, tool_name, tier, source, decision, duration_ms, args_json) VALUES ('2026-11-01T14:05:00.000Z', 'withdraw_funds', 4, 'user', 'approved', 1, '{}')`);
        expect((await t.storage.audit.verify()).problems.map((p) => p.kind)).toContain('inserted');
        await t.exec(`DELETE FROM ${t.table} WHERE tool_name = 'withdraw_funds'`);
        // On SQLite the head is the AUTOINCREMENT counter: the id the forged row took stays missing once it is deleted.
        expect((await t.storage.audit.verify()).ok).toBe(t.engine !== 'sqlite');
        // A row with a valid link appended at the tail (on SQLite it must take the missing id, bound to its seq)…
        const [last] = await t.exec(`SELECT * FROM ${t.table} WHERE seq = 8`);
        const forged: Record<string, unknown> = { ...last, seq: 9, prev_hash: last!.hash, reason: 'forged' };
        forged.hash = linkHash(forged);
        const cols = ['at', 'tool_name', 'tier', 'source', 'trace_id', 'user_id', 'decision', 'reason', 'duration_ms', 'args_json', 'mode', 'kind', 'outcome_json', 'seq', 'prev_hash', 'hash'];
        if (t.engine === 'sqlite') cols.unshift('id');
        const values = cols.map((c) => (c === 'id' ? Number(last!.id) + 1 : forged[c] ?? null));
        await t.exec(`INSERT INTO ${t.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, values);
        if (t.engine === 'postgres') {
          // …is reported against the head row until the attacker moves it as well.
          expect(await kinds(t)).toEqual(['head_mismatch@9']);
          await t.exec(`UPDATE ${t.head} SET seq = 9, hash = ?`, [forged.hash]);
        }
        expect((await t.storage.audit.verify()).ok).toBe(true);
        // So the head is worth keeping outside the database: an anchor taken earlier catches a rewrite of anything it
        // covers (the operator anchored seq 8; the attacker rewrites seq 8 and relinks seq 9).
        const anchor = `8:${String(last!.hash)}`;
        await t.exec(`UPDATE ${t.table} SET reason = 'rewritten' WHERE seq = 8`);
        const [eight] = await t.exec(`SELECT * FROM ${t.table} WHERE seq = 8`);
        const h8 = linkHash(eight!);
        await t.exec(`UPDATE ${t.table} SET hash = ? WHERE seq = 8`, [h8]);
        const [nine] = await t.exec(`SELECT * FROM ${t.table} WHERE seq = 9`);
        const h9 = linkHash({ ...nine, prev_hash: h8 });
        await t.exec(`UPDATE ${t.table} SET prev_hash = ?, hash = ? WHERE seq = 9`, [h8, h9]);
        if (t.engine === 'postgres') await t.exec(`UPDATE ${t.head} SET hash = ?`, [h9]);
        expect((await t.storage.audit.verify()).ok).toBe(true);
        expect((await t.storage.audit.verify({ anchor })).problems.map((p) => p.kind)).toEqual(['anchor_mismatch']);
      } finally {
        await t.close();
      }
    });

    it('attack: a row renumbered (its seq changed) is reported', async () => {
      const t = await seeded();
      try {
        await t.exec(`UPDATE ${t.table} SET seq = 100 WHERE seq = 5`);
        const report = await t.storage.audit.verify();
        expect(report.ok).toBe(false);
        expect(report.problems.map((p) => p.kind)).toContain('edited');
      } finally {
        await t.close();
      }
    });
  });
}

// ── SQLite: the file edited with better-sqlite3 while the storage is closed ────────────────────────────────
const tmp = tempDir('minara-audit-attack-');
afterAll(() => tmp.cleanup());
let fileSeq = 0;
attacks('sqlite file', async () => {
  const path = join(tmp.dir, `a${++fileSeq}.db`);
  let storage = createSqliteStorage({ path, logger: silentLogger });
  let db: Database.Database | undefined;
  const t: Target = {
    engine: 'sqlite',
    get storage() {
      return storage;
    },
    table: 'audit_log',
    head: 'audit_chain_head',
    async exec(sql, params = []) {
      // The storage is closed while the file is edited by another program, then opened again to verify.
      await storage.close();
      db = new Database(path);
      try {
        const stmt = db.prepare(sql);
        return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
      } finally {
        db.close();
        storage = createSqliteStorage({ path, logger: silentLogger });
      }
    },
    close: () => storage.close(),
  };
  return t;
});

describe('audit chain: rows written before the chain began (sqlite)', () => {
  it('are kept and reported as the unchained prefix; deleting one of them is reported; new rows chain after them', async () => {
    const path = join(tmp.dir, 'legacy.db');
    await createSqliteStorage({ path, logger: silentLogger }).close();
    // Take the file back to the schema before the audit domain existed, with three rows in the old shape.
    const db = new Database(path);
    db.exec(`DELETE FROM schema_migrations WHERE domain = 'audit'; DROP TABLE audit_chain_head; DROP INDEX audit_log_user;`);
    for (const c of ['user_id', 'kind', 'outcome_json', 'detail_json', 'seq', 'prev_hash', 'hash']) db.exec(`ALTER TABLE audit_log DROP COLUMN ${c}`);
    const insert = db.prepare(`INSERT INTO audit_log (at, tool_name, tier, source, decision, duration_ms, args_json) VALUES (?, 'get_price', 1, 'user', 'allowed', 1, '{}')`);
    for (let i = 0; i < 3; i++) insert.run(`2026-10-0${i + 1}T00:00:00.000Z`);
    db.close();

    let storage = createSqliteStorage({ path, logger: silentLogger });
    expect(await storage.schemaVersions()).toMatchObject({ audit: 4 });
    await storage.audit.append(row(1));
    await storage.audit.append(row(2));
    const report = await storage.audit.verify();
    expect(report).toMatchObject({ ok: true, checked: 2, unchainedPrefix: 3, head: { seq: 2, legacyRows: 3 } });
    const listed = await storage.audit.query({ order: 'oldest' });
    expect(listed.map((r) => r.chain?.seq ?? null)).toEqual([null, null, null, 1, 2]);
    await storage.close();

    const edit = new Database(path);
    edit.prepare('DELETE FROM audit_log WHERE id = 2').run();
    edit.close();
    storage = createSqliteStorage({ path, logger: silentLogger });
    expect((await storage.audit.verify()).problems.map((p) => p.kind)).toEqual(['legacy_changed']);
    await storage.close();
  });
});

// ── PostgreSQL: the table edited with plain SQL through the driver, beside the storage ──────────────────────
const toDollar = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

attacks('postgres (PGlite)', async () => {
  const pool = await sharedPglitePool();
  const schema = freshSchema('audit');
  const storage = await createPostgresStorage({ pool, schema, logger: silentLogger });
  return {
    engine: 'postgres',
    storage,
    table: `"${schema}".audit_log`,
    head: `"${schema}".audit_chain_head`,
    exec: async (sql, params = []) => (await pool.query(toDollar(sql), [...params])).rows as Record<string, unknown>[],
    close: () => storage.close(),
  };
});

describe('audit chain: rows written before the chain began (PostgreSQL, PGlite)', () => {
  it('the migration keeps them as the unchained prefix and chains what follows', async () => {
    const pool = await sharedPglitePool();
    const schema = freshSchema('legacy');
    await (await createPostgresStorage({ pool, schema, logger: silentLogger })).close();
    const q = (sql: string) => pool.query(sql, []);
    await q(`DELETE FROM "${schema}".schema_migrations WHERE domain = 'audit'`);
    await q(`DROP TABLE "${schema}".audit_chain_head`);
    await q(`DROP INDEX "${schema}".audit_log_user`);
    for (const c of ['user_id', 'kind', 'outcome_json', 'detail_json', 'seq', 'prev_hash', 'hash']) await q(`ALTER TABLE "${schema}".audit_log DROP COLUMN ${c}`);
    for (let i = 0; i < 2; i++) {
      await q(`INSERT INTO "${schema}".audit_log (at, tool_name, tier, source, decision, duration_ms, args_json) VALUES ('2026-10-0${i + 1}T00:00:00.000Z', 'get_price', 1, 'user', 'allowed', 1, '{}')`);
    }
    const storage = await createPostgresStorage({ pool, schema, logger: silentLogger });
    try {
      await storage.audit.append(row(1));
      expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: 1, unchainedPrefix: 2, head: { seq: 1, legacyRows: 2 } });
    } finally {
      await storage.close();
    }
  });
});

const realAvailable = serverBinariesAvailable() || realServerUrl() !== undefined;
let server: Promise<RealPostgres> | undefined;
afterAll(async () => {
  if (server) (await server).stop();
});
describe.runIf(realAvailable)('real server', () => {
  it('two instances (own pools) appending at once keep one chain: the chain-head row lock serialises them', async () => {
    const url = realServerUrl() ?? (await (server ??= startRealPostgres())).url;
    const schema = freshSchema('audit');
    const a = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 4 });
    const b = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 4 });
    try {
      const N = 60;
      // Each instance fires its appends concurrently too, so within and across instances they race for the head.
      await Promise.all([a, b].flatMap((s, k) => Array.from({ length: N }, (_, i) => s.audit.append(row(i, { toolName: `instance_${k}` })))));
      const report = await a.audit.verify();
      expect(report).toMatchObject({ ok: true, checked: 2 * N, head: { seq: 2 * N } });
      const seqs = (await b.audit.query({ order: 'oldest', limit: 500 })).map((r) => r.chain!.seq);
      expect(seqs).toEqual(Array.from({ length: 2 * N }, (_, i) => i + 1));
    } finally {
      await a.close();
      await b.close();
    }
  });

  attacks('postgres (real server)', async () => {
    const url = realServerUrl() ?? (await (server ??= startRealPostgres())).url;
    const schema = freshSchema('audit');
    const storage = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 2 });
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      engine: 'postgres',
      storage,
      table: `"${schema}".audit_log`,
      head: `"${schema}".audit_chain_head`,
      exec: async (sql, params = []) => (await client.query(toDollar(sql), [...params])).rows as Record<string, unknown>[],
      close: async () => {
        await client.end();
        await storage.close();
      },
    };
  });
});
