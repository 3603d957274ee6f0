/**
 * Attacks on the audit trail by someone who can write the database but does not hold the key kept outside it
 * (issue 37, part 1). Each attack worked on the unkeyed chain: the attacker truncates the tail and rolls the head
 * back (`sqlite_sequence` / `audit_chain_head`), edits a row and recomputes every later link with plain SHA-256,
 * reorders rows and relinks them, inserts a forged row and relinks — and `verify` said "intact". Now the links
 * are HMAC-keyed and a signed checkpoint kept outside the database pins the head: each attack is reported, with
 * the rows involved, on SQLite and PostgreSQL (PGlite and a real server).
 *
 * The suite reaches the new API through `import * as sdk`, so on the old code it still runs (falling back to
 * `storage.audit.verify()`) and each attack test fails there, as it did before the fix.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import * as sdk from '@minara/agent';
import { type AuditEntryInput, type AuditVerifyReport, silentLogger, type Storage } from '@minara/agent';
import { createPostgresStorage } from '@minara/agent/postgres';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { tempDir } from '../storage/helpers';
import { freshSchema, realServerUrl, serverBinariesAvailable, sharedPglitePool, startRealPostgres, type RealPostgres } from '../postgres/support';

const SECRET = new Uint8Array(32).fill(7);

const row = (i: number, over: Partial<AuditEntryInput> = {}): AuditEntryInput => ({
  at: new Date(Date.UTC(2026, 10, 1, 14, 3, i)).toISOString(), toolName: i === 4 ? 'withdraw_funds' : 'buy_token', tier: i === 4 ? 4 : 2, source: 'cron', traceId: 't_alert',
  userId: 'alice', decision: 'allowed', durationMs: i + 0.5, argsJson: JSON.stringify(i === 4 ? { to: '0xOwner', amountUsd: 500 } : { symbol: 'ETH', amountUsd: 10 * i }), mode: 'execute',
  ...over,
});

/** The documented link formula with plain SHA-256, as an attacker who read the docs would compute it. */
function canonical(value: unknown): string {
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
const CONTENT_COLUMNS = Object.keys(CONTENT);
function plainLink(r: Record<string, unknown>, prevHash: string): string {
  const content: Record<string, unknown> = { seq: Number(r.seq) };
  for (const [col, key] of Object.entries(CONTENT)) if (r[col] !== null && r[col] !== undefined) content[key] = key === 'tier' || key === 'durationMs' ? Number(r[col]) : String(r[col]);
  return createHash('sha256').update(`${prevHash}\n${canonical(content)}`).digest('hex');
}

/** PostgreSQL's identity column takes an explicit id only with OVERRIDING SYSTEM VALUE (the attacker writes it). */
const overriding = (t: Target) => (t.engine === 'postgres' ? 'OVERRIDING SYSTEM VALUE ' : '');

type Query = (sql: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** One engine under attack: its storage, and direct SQL to the same tables (the attacker's access). */
interface Target {
  readonly engine: 'sqlite' | 'postgres';
  readonly storage: Storage;
  /** Run the attacker's statements (on SQLite, with the storage closed and the file opened by another program). */
  attack(fn: (q: Query) => Promise<void>): Promise<void>;
  readonly table: string;
  readonly head: string;
  /** A directory outside the database for the checkpoint file. */
  readonly dir: string;
  close(): Promise<void>;
}

/** The integrity layer over the target's current storage (re-attached after SQLite reopens), or undefined on the old code. */
function integrityOf(t: Target): sdk.AuditIntegrity | undefined {
  const create = (sdk as { createAuditIntegrity?: typeof sdk.createAuditIntegrity }).createAuditIntegrity;
  return create?.({ storage: t.storage, secret: SECRET, dataDir: t.dir, checkpointEverySeconds: 0, instance: 'test' });
}
async function verifyTrail(t: Target, checkpoints?: readonly string[]): Promise<AuditVerifyReport> {
  const integrity = integrityOf(t);
  return integrity ? integrity.verify(checkpoints ? { checkpoints } : {}) : t.storage.audit.verify();
}

/** Recompute every link from `fromSeq` on with plain SHA-256 (and move the head), as the attacker does after an edit. */
async function relinkPlain(t: Target, q: Query, fromSeq: number): Promise<void> {
  const rows = await q(`SELECT * FROM ${t.table} WHERE seq IS NOT NULL ORDER BY id`);
  let prev = fromSeq === 1 ? '0'.repeat(64) : String(rows.find((r) => Number(r.seq) === fromSeq - 1)!.hash);
  for (const r of rows) {
    if (Number(r.seq) < fromSeq) continue;
    const hash = plainLink(r, prev);
    await q(`UPDATE ${t.table} SET prev_hash = ?, hash = ? WHERE id = ?`, [prev, hash, r.id]);
    prev = hash;
  }
  const last = rows.at(-1)!;
  if (t.engine === 'postgres') await q(`UPDATE ${t.head} SET seq = ?, hash = ?`, [Number(last.seq), prev]);
  else await q(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'audit_log'`, [Number(last.id)]);
}

function attacks(name: string, open: () => Promise<Target>) {
  const seeded = async (): Promise<Target> => {
    const t = await open();
    integrityOf(t); // keys the links (a no-op on the old code)
    for (let i = 1; i <= 8; i++) await t.storage.audit.append(row(i));
    await integrityOf(t)?.checkpoint(); // signed, written to the file outside the database
    expect((await verifyTrail(t)).ok).toBe(true);
    return t;
  };
  const kinds = (r: AuditVerifyReport) => r.problems.map((p) => `${p.kind}@${p.seq ?? '-'}`);

  describe(`audit integrity attacks: ${name}`, () => {
    it('a clean keyed log verifies against its checkpoint', async () => {
      const t = await seeded();
      try {
        const r = await verifyTrail(t);
        expect(r).toMatchObject({ ok: true, checked: 8, keyed: { from: 1, legacyLinks: 0, keyChecked: true }, checkpoint: { seq: 8 }, checkpoints: { read: 1, valid: 1 } });
      } finally {
        await t.close();
      }
    });

    it('attack: the newest rows deleted and the head rolled back (sqlite_sequence / audit_chain_head) is reported as truncated, naming the rows', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          await q(`DELETE FROM ${t.table} WHERE seq > 6`);
          if (t.engine === 'sqlite') await q(`UPDATE sqlite_sequence SET seq = (SELECT MAX(id) FROM audit_log) WHERE name = 'audit_log'`);
          else await q(`UPDATE ${t.head} SET seq = 6, hash = (SELECT hash FROM ${t.table} WHERE seq = 6)`);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)).toEqual(['truncated@7']);
        expect(r.problems[0]!.message).toContain('rows seq 7–8 were deleted');
      } finally {
        await t.close();
      }
    });

    it('attack: a withdrawal edited and every later link recomputed with plain SHA-256 is reported at the edited row and against the checkpoint', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          await q(`UPDATE ${t.table} SET args_json = ? WHERE seq = 4`, [JSON.stringify({ to: '0xAttacker', amountUsd: 500 })]);
          await relinkPlain(t, q, 4);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)).toEqual(['edited@4', 'edited@5', 'edited@6', 'edited@7', 'edited@8', 'checkpoint_mismatch@8']);
        expect(r.problems[0]!.message).toContain('recomputed without the audit key');
      } finally {
        await t.close();
      }
    });

    it('attack: the same rewrite with the keyed marker cleared (a downgrade to plain links) is reported as a downgrade against the checkpoint', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          await q(`UPDATE ${t.table} SET args_json = ? WHERE seq = 4`, [JSON.stringify({ to: '0xAttacker', amountUsd: 500 })]);
          await relinkPlain(t, q, 1);
          await q(`UPDATE ${t.head} SET keyed_from = NULL`);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)).toEqual(expect.arrayContaining(['key_downgrade@1', 'checkpoint_mismatch@8']));
      } finally {
        await t.close();
      }
    });

    it('attack: two rows swapped and the chain relinked with plain SHA-256 is reported from the first moved row', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          const [a] = await q(`SELECT * FROM ${t.table} WHERE seq = 2`);
          const [b] = await q(`SELECT * FROM ${t.table} WHERE seq = 3`);
          for (const [seq, source] of [[2, b!], [3, a!]] as const) {
            await q(`UPDATE ${t.table} SET ${CONTENT_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`, [...CONTENT_COLUMNS.map((c) => source[c] ?? null), seq]);
          }
          await relinkPlain(t, q, 2);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)[0]).toBe('edited@2');
        expect(kinds(r)).toContain('checkpoint_mismatch@8');
      } finally {
        await t.close();
      }
    });

    it('attack: a forged row inserted in the middle, later rows renumbered and relinked with plain SHA-256, is reported at the forged row', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          const later = await q(`SELECT * FROM ${t.table} WHERE seq >= 5 ORDER BY id`);
          // Make room: the rows from seq 5 on are taken out and put back one place later, the forged row in their gap.
          await q(`DELETE FROM ${t.table} WHERE seq >= 5`);
          const cols = ['id', ...CONTENT_COLUMNS, 'seq', 'prev_hash', 'hash'];
          const insert = (r: Record<string, unknown>) => q(`INSERT INTO ${t.table} (${cols.join(', ')}) ${overriding(t)}VALUES (${cols.map(() => '?').join(', ')})`, cols.map((c) => r[c] ?? null));
          await insert({ ...later[0]!, args_json: JSON.stringify({ to: '0xAttacker', amountUsd: 9000 }), tool_name: 'withdraw_funds', tier: 4 });
          for (const r of later) await insert({ ...r, id: Number(r.id) + 1, seq: Number(r.seq) + 1 });
          await relinkPlain(t, q, 5);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)[0]).toBe('edited@5');
        expect(kinds(r)).toContain('checkpoint_mismatch@8');
      } finally {
        await t.close();
      }
    });

    it('attack: a forged row appended at the tail with a plain link (and the head moved) is reported', async () => {
      const t = await seeded();
      try {
        await t.attack(async (q) => {
          const [last] = await q(`SELECT * FROM ${t.table} WHERE seq = 8`);
          const forged: Record<string, unknown> = { ...last, id: Number(last!.id) + 1, seq: 9, args_json: '{"to":"0xAttacker","amountUsd":9000}' };
          const cols = ['id', ...CONTENT_COLUMNS, 'seq', 'prev_hash', 'hash'];
          await q(`INSERT INTO ${t.table} (${cols.join(', ')}) ${overriding(t)}VALUES (${cols.map(() => '?').join(', ')})`, cols.map((c) => (c === 'prev_hash' ? last!.hash : c === 'hash' ? plainLink(forged, String(last!.hash)) : forged[c] ?? null)));
          if (t.engine === 'postgres') await q(`UPDATE ${t.head} SET seq = 9, hash = (SELECT hash FROM ${t.table} WHERE seq = 9)`);
        });
        const r = await verifyTrail(t);
        expect(r.ok).toBe(false);
        expect(kinds(r)).toEqual(['edited@9']);
      } finally {
        await t.close();
      }
    });

    it('attack: the local checkpoint file cut back with the tail is caught by a copy kept off the machine', async () => {
      const t = await seeded();
      try {
        const file = join(t.dir, 'audit-checkpoints.jsonl');
        const offBox = readFileSync(file, 'utf8').split('\n').filter(Boolean);
        writeFileSync(file, '');
        await t.attack(async (q) => {
          await q(`DELETE FROM ${t.table} WHERE seq > 6`);
          if (t.engine === 'sqlite') await q(`UPDATE sqlite_sequence SET seq = (SELECT MAX(id) FROM audit_log) WHERE name = 'audit_log'`);
          else await q(`UPDATE ${t.head} SET seq = 6, hash = (SELECT hash FROM ${t.table} WHERE seq = 6)`);
        });
        expect((await verifyTrail(t)).ok).toBe(true); // the local evidence is gone with the rows…
        expect(kinds(await verifyTrail(t, offBox))).toEqual(['truncated@7']); // …the off-box copy still holds
      } finally {
        await t.close();
      }
    });

    it('an append without the key, once links are keyed, is refused', async () => {
      const t = await seeded();
      try {
        await t.attack(async () => undefined); // on SQLite: a fresh storage that was never given the key
        if (t.engine === 'sqlite') await expect(t.storage.audit.append(row(9))).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('keyed since seq 1') });
        else {
          const keyless = await (t as Target & { keyless(): Promise<Storage> }).keyless();
          try {
            await expect(keyless.audit.append(row(9))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
          } finally {
            await keyless.close();
          }
        }
      } finally {
        await t.close();
      }
    });
  });
}

// ── SQLite: the file edited with better-sqlite3 while the storage is closed ────────────────────────────────
const tmp = tempDir('minara-audit-integrity-');
afterAll(() => tmp.cleanup());
let fileSeq = 0;
attacks('sqlite file', async () => {
  const dir = join(tmp.dir, `s${++fileSeq}`);
  const path = join(tmp.dir, `a${fileSeq}.db`);
  let storage = createSqliteStorage({ path, logger: silentLogger });
  return {
    engine: 'sqlite',
    get storage() {
      return storage;
    },
    table: 'audit_log',
    head: 'audit_chain_head',
    dir,
    async attack(fn) {
      await storage.close();
      const db = new Database(path);
      try {
        await fn(async (sql, params = []) => {
          const stmt = db.prepare(sql);
          return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
        });
      } finally {
        db.close();
        storage = createSqliteStorage({ path, logger: silentLogger });
      }
    },
    close: () => storage.close(),
  };
});

const toDollar = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
let pgDirSeq = 0;

attacks('postgres (PGlite)', async () => {
  const pool = await sharedPglitePool();
  const schema = freshSchema('integrity');
  const storage = await createPostgresStorage({ pool, schema, logger: silentLogger });
  return {
    engine: 'postgres',
    storage,
    table: `"${schema}".audit_log`,
    head: `"${schema}".audit_chain_head`,
    dir: join(tmp.dir, `p${++pgDirSeq}`),
    attack: async (fn) => fn(async (sql, params = []) => (await pool.query(toDollar(sql), [...params])).rows as Record<string, unknown>[]),
    keyless: () => createPostgresStorage({ pool, schema, logger: silentLogger }),
    close: () => storage.close(),
  } as Target;
});

const realAvailable = serverBinariesAvailable() || realServerUrl() !== undefined;
let server: Promise<RealPostgres> | undefined;
afterAll(async () => {
  if (server) (await server).stop();
});
describe.runIf(realAvailable)('real PostgreSQL server', () => {
  attacks('postgres (real server)', async () => {
    const url = realServerUrl() ?? (await (server ??= startRealPostgres())).url;
    const schema = freshSchema('integrity');
    const storage = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 2 });
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      engine: 'postgres',
      storage,
      table: `"${schema}".audit_log`,
      head: `"${schema}".audit_chain_head`,
      dir: join(tmp.dir, `r${++pgDirSeq}`),
      attack: async (fn) => fn(async (sql, params = []) => (await client.query(toDollar(sql), [...params])).rows as Record<string, unknown>[]),
      keyless: () => createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 1 }),
      close: async () => {
        await client.end();
        await storage.close();
      },
    } as Target;
  });
});
if (!realAvailable) {
  describe('real PostgreSQL server', () => {
    it.skip('SKIPPED: no PostgreSQL server binaries (initdb, pg_ctl) on PATH and no MINARA_TEST_POSTGRES_URL', () => undefined);
  });
}

// ── checkpoints: the file, the signature, the sinks, the schedule ───────────────────────────────────────────
describe('signed checkpoints', () => {
  it('attack: a checkpoint line edited (seq, head) or forged with another key fails its signature, and verify says so', async () => {
    const dir = join(tmp.dir, 'cp-tamper');
    const storage = createSqliteStorage({ path: join(tmp.dir, 'cp-tamper.db'), logger: silentLogger });
    try {
      const integrity = sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: dir, checkpointEverySeconds: 0 });
      for (let i = 1; i <= 3; i++) await storage.audit.append(row(i));
      const cp = await integrity.checkpoint();
      const file = join(dir, sdk.AUDIT_CHECKPOINT_FILE);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const [line] = readFileSync(file, 'utf8').trim().split('\n');
      expect(sdk.verifyAuditCheckpoint(line!, integrity.publicKeyPem)).toMatchObject({ ok: true, checkpoint: { seq: 3, head: cp.head, keyedFrom: 1 } });
      // Moved back to seq 2 (to cover a truncation), head changed to match: the signature no longer holds.
      const edited = JSON.stringify({ ...JSON.parse(line!), seq: 2 });
      expect(sdk.verifyAuditCheckpoint(edited, integrity.publicKeyPem)).toMatchObject({ ok: false, reason: expect.stringContaining('signature does not match') });
      // A line signed with the attacker's own key.
      const other = sdk.deriveAuditKeys(new Uint8Array(32).fill(9));
      const forged = JSON.stringify(sdk.signAuditCheckpoint({ instance: 'x', seq: 1, head: 'f'.repeat(64), at: cp.at }, other));
      expect(sdk.verifyAuditCheckpoint(forged, integrity.publicKeyPem)).toMatchObject({ ok: false, reason: expect.stringContaining('another key') });
      writeFileSync(file, `${edited}\n${forged}\nnot json\n`);
      const r = await integrity.verify();
      expect(r.ok).toBe(false);
      expect(r.problems.map((p) => p.message)).toEqual([
        expect.stringContaining('checkpoint line 1: the Ed25519 signature does not match'), expect.stringContaining('checkpoint line 2: signed with another key'), 'checkpoint line 3: not JSON',
      ]);
      // And the auditor's own check needs only the public key.
      const auditor = await sdk.verifyAuditTrail({ storage, publicKey: integrity.publicKeyPem, checkpoints: [line!] });
      expect(auditor).toMatchObject({ ok: true, checkpoint: { seq: 3 } });
    } finally {
      await storage.close();
    }
  });

  it('are taken every N rows off the append path, every T seconds, and at close; the HTTP sink POSTs each', async () => {
    const dir = join(tmp.dir, 'cp-schedule');
    const storage = createInMemoryStorage();
    const posted: unknown[] = [];
    const fetch = (async (_url: unknown, init: { body: string }) => {
      posted.push(JSON.parse(init.body));
      return new Response(null, { status: 204 });
    }) as unknown as typeof globalThis.fetch;
    const integrity = sdk.createAuditIntegrity({
      storage, secret: SECRET, dataDir: dir, checkpointEveryRows: 5, checkpointEverySeconds: 0, instance: 'node-a',
      sinks: [sdk.createHttpCheckpointSink({ url: 'https://audit.example.com/checkpoints', fetch })],
    });
    for (let i = 1; i <= 5; i++) await storage.audit.append(row(i));
    const file = join(dir, sdk.AUDIT_CHECKPOINT_FILE);
    const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
    // Taken after the fifth append, off the append path: both sinks get it.
    await expect.poll(() => [posted.length, lines().length]).toEqual([1, 1]);
    expect(posted[0]).toMatchObject({ type: 'checkpoint', seq: 5, instance: 'node-a' });
    await storage.audit.append(row(6));
    await integrity.close(); // rows since the last: one more at close
    expect(lines().map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([5, 6]);
    expect(() => sdk.createHttpCheckpointSink({ url: 'http://audit.example.com/x' })).toThrow(/https:\/\/ \(http:\/\/ only on loopback\)/);
    expect(() => sdk.createAuditCheckpointer({ storage, keys: sdk.deriveAuditKeys(SECRET), sinks: [], everyRows: 1 })).toThrow(/sinks/);
  });

  it('the timer takes one after T seconds when rows came', async () => {
    const storage = createInMemoryStorage();
    const written: sdk.SignedAuditCheckpoint[] = [];
    const checkpointer = sdk.createAuditCheckpointer({
      storage, keys: sdk.deriveAuditKeys(SECRET), everyRows: 1000, everySeconds: 0.05, sinks: [{ name: 'memory', write: async (c) => void written.push(c) }],
    });
    await storage.audit.append(row(1));
    checkpointer.noteAppend(1);
    await expect.poll(() => written.length, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    await checkpointer.close();
    expect(written.at(-1)).toMatchObject({ seq: 1 });
  });
});

// ── legacy links: chains written before keyed links keep verifying ─────────────────────────────────────────
describe('legacy (unkeyed) links', () => {
  it('a SQLite file chained before keyed links migrates without losing a row; old links are listed as legacy, new ones keyed', async () => {
    const path = join(tmp.dir, 'legacy-links.db');
    let storage = createSqliteStorage({ path, logger: silentLogger });
    for (let i = 1; i <= 3; i++) await storage.audit.append(row(i)); // plain links, as before this change
    await storage.close();
    // Take the file back to audit schema v1 (no keyed_from or key_id column), as an older version left it.
    const db = new Database(path);
    db.exec(`DELETE FROM schema_migrations WHERE domain = 'audit' AND version >= 2; ALTER TABLE audit_chain_head DROP COLUMN key_id; ALTER TABLE audit_chain_head DROP COLUMN keyed_from;`);
    db.close();
    storage = createSqliteStorage({ path, logger: silentLogger });
    try {
      expect(await storage.schemaVersions()).toMatchObject({ audit: 4 });
      expect(await storage.audit.count()).toBe(3);
      const integrity = sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: join(tmp.dir, 'legacy-links'), checkpointEverySeconds: 0 });
      await storage.audit.append(row(4));
      await storage.audit.append(row(5));
      await integrity.checkpoint();
      const r = await integrity.verify();
      expect(r).toMatchObject({ ok: true, checked: 5, keyed: { from: 4, legacyLinks: 3, keyChecked: true }, head: { seq: 5, keyedFrom: 4 } });
    } finally {
      await storage.close();
    }
  });

  it('a verifier without the key checks order and linkage of keyed rows and says it could not recompute them', async () => {
    const path = join(tmp.dir, 'no-key.db');
    const storage = createSqliteStorage({ path, logger: silentLogger });
    sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: join(tmp.dir, 'no-key'), checkpointEverySeconds: 0 });
    await storage.audit.append(row(1));
    await storage.close();
    const reader = createSqliteStorage({ path, logger: silentLogger });
    try {
      expect(await reader.audit.verify()).toMatchObject({ ok: true, keyed: { from: 1, keyChecked: false } });
    } finally {
      await reader.close();
    }
  });
});

// ── inclusion proofs (RFC 6962 hashing) ────────────────────────────────────────────────────────────────────
describe('inclusion proofs', () => {
  const CT_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) => Buffer.from(h, 'hex'));
  const CT_ROOTS = [
    '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d', 'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
    'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77', 'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4', '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
    'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c', '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
  ];
  const leafHash = (b: Buffer) => createHash('sha256').update(Buffer.concat([Buffer.from([0]), b])).digest();

  it('the Merkle tree matches the Certificate Transparency reference roots and inclusion path', () => {
    const leaves = CT_LEAVES.map(leafHash);
    for (let n = 1; n <= 8; n++) expect(sdk.auditMerkleProof(leaves.slice(0, n), 0).rootHash).toBe(CT_ROOTS[n - 1]);
    expect(sdk.auditMerkleProof(leaves, 0).auditPath).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7', '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(sdk.auditMerkleLeafHash('').toString('hex')).toBe(CT_ROOTS[0]);
  });

  it('prove a row; a third party checks it with the public key alone; a changed row, tree head or key is refused', async () => {
    const storage = createSqliteStorage({ path: join(tmp.dir, 'prove.db'), logger: silentLogger });
    try {
      const integrity = sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: join(tmp.dir, 'prove'), checkpointEverySeconds: 0 });
      for (let i = 1; i <= 11; i++) await storage.audit.append(row(i));
      const pem = integrity.publicKeyPem;
      for (const seq of [1, 4, 8, 11]) {
        const proof = JSON.parse(JSON.stringify(await integrity.prove(seq))) as sdk.AuditInclusionProof;
        const check = sdk.verifyAuditProof(proof, pem);
        expect(check).toMatchObject({ ok: true, seq, treeSize: 11, row: { seq } });
      }
      const proof = await integrity.prove(4);
      expect(sdk.verifyAuditProof(proof, pem)).toMatchObject({ ok: true, row: { toolName: 'withdraw_funds', argsJson: JSON.stringify({ to: '0xOwner', amountUsd: 500 }) } });
      const edited = { ...proof, leaf: proof.leaf.replace('0xOwner', '0xAttacker') };
      expect(sdk.verifyAuditProof(edited, pem)).toMatchObject({ ok: false, reason: expect.stringContaining('audit path does not lead') });
      const moved = { ...proof, treeHead: { ...proof.treeHead, treeSize: 12 } };
      expect(sdk.verifyAuditProof(moved, pem)).toMatchObject({ ok: false, reason: expect.stringContaining('signature does not match') });
      const otherPem = String(generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }));
      expect(sdk.verifyAuditProof(proof, otherPem)).toMatchObject({ ok: false, reason: expect.stringContaining('another key') });
      expect(sdk.verifyAuditProof({ nope: 1 }, pem)).toMatchObject({ ok: false });
      await expect(integrity.prove(12)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      await expect(integrity.prove(0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    } finally {
      await storage.close();
    }
  });

  it('nothing is signed over a broken chain', async () => {
    const path = join(tmp.dir, 'prove-broken.db');
    let storage = createSqliteStorage({ path, logger: silentLogger });
    sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: join(tmp.dir, 'prove-broken'), checkpointEverySeconds: 0 });
    for (let i = 1; i <= 3; i++) await storage.audit.append(row(i));
    await storage.close();
    const db = new Database(path);
    db.prepare('UPDATE audit_log SET reason = ? WHERE seq = 2').run('edited');
    db.close();
    storage = createSqliteStorage({ path, logger: silentLogger });
    try {
      const integrity = sdk.createAuditIntegrity({ storage, secret: SECRET, dataDir: join(tmp.dir, 'prove-broken'), checkpointEverySeconds: 0 });
      await expect(integrity.prove(1)).rejects.toMatchObject({ code: 'STORAGE_ERROR', message: expect.stringContaining('does not verify') });
    } finally {
      await storage.close();
    }
  });
});

// ── the public names, through the package entry ────────────────────────────────────────────────────────────
describe('the audit integrity names', () => {
  it('keys, public keys, leaf text, a file sink read back, proveAuditRow and the instance name', async () => {
    const keys = sdk.deriveAuditKeys(SECRET);
    expect(sdk.deriveAuditKeys(SECRET).keyId).toBe(keys.keyId); // deterministic
    expect(sdk.auditKeyId(sdk.parseAuditPublicKey(keys.publicKeyPem))).toBe(keys.keyId);
    const raw = Buffer.from(String(keys.publicKey.export({ format: 'jwk' }).x), 'base64url');
    expect(sdk.auditKeyId(sdk.parseAuditPublicKey(raw.toString('hex')))).toBe(keys.keyId);
    expect(() => sdk.parseAuditPublicKey('not a key')).toThrow(/Ed25519 public key as SPKI PEM/);
    expect(() => sdk.deriveAuditKeys(new Uint8Array(8))).toThrow(/at least 32 bytes/);
    expect(sdk.defaultAuditInstance({ MINARA_INSTANCE_ID: 'node-7' })).toBe('node-7');
    // The leaf text is the canonical JSON the link covers; a keyed link differs from a plain one.
    const content = { toolName: 'get_price', at: '2026-11-01T00:00:00.000Z', tier: 0 };
    expect(sdk.auditLeafText(3, content)).toBe('{"at":"2026-11-01T00:00:00.000Z","seq":3,"tier":0,"toolName":"get_price"}');
    expect(sdk.auditRowHash('0'.repeat(64), 3, content)).toBe(createHash('sha256').update(`${'0'.repeat(64)}\n${sdk.auditLeafText(3, content)}`).digest('hex'));
    expect(sdk.auditRowHash('0'.repeat(64), 3, content, keys.chainKey)).not.toBe(sdk.auditRowHash('0'.repeat(64), 3, content));
    const sink = sdk.createFileCheckpointSink({ path: join(tmp.dir, 'names', 'cp.jsonl') });
    expect(await sink.read!()).toEqual([]);
    const storage = createInMemoryStorage();
    storage.audit.useChainKey!({ key: keys.chainKey });
    await storage.audit.append(row(1));
    await sink.write(sdk.signAuditCheckpoint({ instance: 'i', seq: 1, head: (await storage.audit.head()).hash, at: '2026-11-01T00:00:00.000Z' }, keys));
    expect(await sdk.verifyAuditTrail({ storage, publicKey: keys.publicKey, checkpoints: await sink.read!() })).toMatchObject({ ok: true, checkpoint: { seq: 1 } });
    const proof = await sdk.proveAuditRow({ storage, keys, seq: 1, instance: 'i' });
    expect(sdk.verifyAuditProof(proof, keys.publicKeyPem)).toMatchObject({ ok: true, treeSize: 1 });
    expect(sdk.AUDIT_PUBLIC_KEY_FILE).toBe('audit-checkpoint.pub.pem');
  });
});
