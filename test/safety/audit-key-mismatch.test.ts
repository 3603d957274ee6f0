/**
 * A fleet sharing one database needs one audit key. An instance started without the shared `MINARA_APPROVAL_KEY`
 * (each then makes its own key file) used to append links every other instance reports as edited, silently. The
 * log's head now records the id of the key its links are keyed with; an instance holding another key is refused
 * before it appends (`createApp` does not start), and its appends are refused too, on every engine. Nothing stored
 * changes.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AuditEntryInput, checkAuditChainKey, createApp, createAuditIntegrity, MinaraError, silentLogger, type Storage } from '@minara/agent';
import { createPostgresStorage } from '@minara/agent/postgres';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import Database from 'better-sqlite3';
import { tempDir as tempDirOf } from '../storage/helpers';
import { freshSchema, sharedPglitePool } from '../postgres/support';

const KEY_A = new Uint8Array(32).fill(7);
const KEY_B = new Uint8Array(32).fill(9);
const row = (i: number): AuditEntryInput => ({
  at: new Date(Date.UTC(2026, 10, 1, 14, 3, i)).toISOString(), toolName: 'get_price', tier: 1, source: 'user', userId: 'alice',
  decision: 'allowed', durationMs: 1, argsJson: JSON.stringify({ symbol: 'ETH', i }), mode: 'execute',
});

const closers: Array<() => Promise<unknown>> = [];
/** A temporary directory, removed after the suite. */
const tempDir = (prefix: string): string => {
  const t = tempDirOf(prefix);
  closers.unshift(async () => t.cleanup());
  return t.dir;
};
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** Two connections to one log (two instances of a fleet), opened by `open`. */
const engines: Array<{ name: string; open: () => Promise<() => Promise<Storage>> }> = [
  {
    name: 'SQLite (two connections to one file)',
    async open() {
      const file = join(tempDir('minara-audit-key-'), 'fleet.db');
      return async () => {
        const s = createSqliteStorage({ path: file, logger: silentLogger });
        closers.push(() => s.close());
        return s;
      };
    },
  },
  {
    name: 'PostgreSQL (PGlite, two storages on one schema)',
    async open() {
      const pool = await sharedPglitePool();
      const schema = freshSchema('k');
      return async () => {
        const s = await createPostgresStorage({ pool, schema, logger: silentLogger });
        closers.push(() => s.close());
        return s;
      };
    },
  },
];

describe.each(engines)('audit key of a shared log: $name', ({ open }) => {
  it('records the first keyed append\'s key id; an instance with another key is refused before and at append; nothing changes', async () => {
    const connect = await open();
    const a = await connect();
    const integrityA = createAuditIntegrity({ storage: a, secret: KEY_A, dataDir: tempDir('minara-audit-key-a-'), logger: silentLogger });
    closers.push(() => integrityA.close());
    expect((await a.audit.head()).keyId).toBeUndefined();
    await a.audit.append(row(1));
    await a.audit.append(row(2));
    expect((await a.audit.head()).keyId).toBe(integrityA.chainKeyId);
    expect(integrityA.chainKeyId).toMatch(/^[0-9a-f]{16}$/);

    const b = await connect();
    const integrityB = createAuditIntegrity({ storage: b, secret: KEY_B, dataDir: tempDir('minara-audit-key-b-'), logger: silentLogger });
    closers.push(() => integrityB.close());
    expect(integrityB.chainKeyId).not.toBe(integrityA.chainKeyId);
    const refused = await checkAuditChainKey(b, integrityB).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(MinaraError);
    expect((refused as MinaraError).code).toBe('CONFIG_INVALID');
    expect((refused as MinaraError).message).toContain(integrityA.chainKeyId);
    expect((refused as MinaraError).message).toContain(integrityB.chainKeyId);
    expect((refused as MinaraError).message).toMatch(/MINARA_APPROVAL_KEY or MINARA_AUDIT_KEY/);
    // Its append is refused as well (a host that skipped the check), and nothing is written.
    await expect(b.audit.append(row(3))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    // Its verify says which key the log was keyed with, first.
    const wrong = await b.audit.verify();
    expect(wrong.ok).toBe(false);
    expect(wrong.problems[0]).toMatchObject({ kind: 'key_mismatch' });
    expect(wrong.problems[0]!.message).toContain(integrityA.chainKeyId);
    expect(wrong.problems[0]!.message).toContain(integrityB.chainKeyId);
    expect(await a.audit.count()).toBe(2);
    expect((await a.audit.head()).keyId).toBe(integrityA.chainKeyId);
    // The instances with the fleet's key go on, and the log verifies whole.
    await checkAuditChainKey(a, integrityA);
    const c = await connect();
    const integrityC = createAuditIntegrity({ storage: c, secret: KEY_A, dataDir: tempDir('minara-audit-key-c-'), logger: silentLogger });
    closers.push(() => integrityC.close());
    await checkAuditChainKey(c, integrityC);
    await c.audit.append(row(3));
    await a.audit.append(row(4));
    const report = await integrityA.verify();
    expect(report.ok, JSON.stringify(report.problems)).toBe(true);
    expect(await a.audit.count()).toBe(4);
  });
});

describe.each(engines)('instances starting together on a fresh log: $name', ({ open }) => {
  it('the first to start records its key; the second, with another key, is refused at start, before any row', async () => {
    const connect = await open();
    const a = await connect();
    const b = await connect();
    const integrityA = createAuditIntegrity({ storage: a, secret: KEY_A, dataDir: tempDir('minara-audit-key-sa-'), logger: silentLogger });
    const integrityB = createAuditIntegrity({ storage: b, secret: KEY_B, dataDir: tempDir('minara-audit-key-sb-'), logger: silentLogger });
    closers.push(() => integrityA.close(), () => integrityB.close());
    await checkAuditChainKey(a, integrityA);
    expect((await b.audit.head()).keyId).toBe(integrityA.chainKeyId);
    await expect(checkAuditChainKey(b, integrityB)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await a.audit.count()).toBe(0);
    // Starting again with the recorded key is fine, and changes nothing; a claim never overwrites a recorded key.
    await checkAuditChainKey(a, integrityA);
    expect(await a.audit.claimChainKey?.()).toBe(integrityA.chainKeyId);
    expect(await b.audit.claimChainKey?.()).toBe(integrityA.chainKeyId);
    expect((await a.audit.head()).keyId).toBe(integrityA.chainKeyId);
  });
});

describe('audit key of a shared log: in memory and on logs keyed before key ids', () => {
  it('in memory: the same storage handed another key refuses to append with it', async () => {
    const storage = createInMemoryStorage();
    const first = createAuditIntegrity({ storage, secret: KEY_A, dataDir: tempDir('minara-audit-key-m-'), logger: silentLogger });
    await storage.audit.append(row(1));
    await first.close();
    const second = createAuditIntegrity({ storage, secret: KEY_B, dataDir: tempDir('minara-audit-key-n-'), logger: silentLogger });
    await expect(checkAuditChainKey(storage, second)).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(storage.audit.append(row(2))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await storage.audit.count()).toBe(1);
    await second.close();
  });

  it('a SQLite log keyed before key ids were recorded takes the key of its next keyed append, then refuses another', async () => {
    const file = join(tempDir('minara-audit-key-legacy-'), 'old.db');
    const a = createSqliteStorage({ path: file, logger: silentLogger });
    const integrityA = createAuditIntegrity({ storage: a, secret: KEY_A, dataDir: tempDir('minara-audit-key-la-'), logger: silentLogger });
    await a.audit.append(row(1));
    await integrityA.close();
    await a.close();
    // As a log keyed by an earlier version stands: keyed links, no key id.
    const raw = new Database(file);
    raw.prepare('UPDATE audit_chain_head SET key_id = NULL').run();
    raw.close();
    const again = createSqliteStorage({ path: file, logger: silentLogger });
    closers.push(() => again.close());
    expect((await again.audit.head()).keyId).toBeUndefined();
    const integrity = createAuditIntegrity({ storage: again, secret: KEY_A, dataDir: tempDir('minara-audit-key-lb-'), logger: silentLogger });
    closers.push(() => integrity.close());
    await checkAuditChainKey(again, integrity);
    await again.audit.append(row(2));
    expect((await again.audit.head()).keyId).toBe(integrity.chainKeyId);
    const other = createSqliteStorage({ path: file, logger: silentLogger });
    closers.push(() => other.close());
    const wrong = createAuditIntegrity({ storage: other, secret: KEY_B, dataDir: tempDir('minara-audit-key-lc-'), logger: silentLogger });
    closers.push(() => wrong.close());
    await expect(other.audit.append(row(3))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(await again.audit.count()).toBe(2);
  });

  it('createApp does not start on a data directory whose log is keyed with another key', async () => {
    const dataDir = tempDir('minara-audit-key-app-');
    const hexA = Buffer.from(KEY_A).toString('hex');
    const hexB = Buffer.from(KEY_B).toString('hex');
    const first = await createApp({ envFileDir: false, env: { MINARA_APPROVAL_KEY: hexA }, logger: silentLogger, config: { dataDir } });
    await first.storage.audit.append(row(1));
    await first.close();
    const refused = await createApp({ envFileDir: false, env: { MINARA_APPROVAL_KEY: hexB }, logger: silentLogger, config: { dataDir } }).then(
      async (app) => {
        await app.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(MinaraError);
    expect((refused as MinaraError).code).toBe('CONFIG_INVALID');
    expect((refused as MinaraError).message).toMatch(/keyed with another key/);
    // The right key starts, and finds the row.
    const again = await createApp({ envFileDir: false, env: { MINARA_APPROVAL_KEY: hexA }, logger: silentLogger, config: { dataDir } });
    expect(await again.storage.audit.count()).toBe(1);
    await again.close();
  });
});
