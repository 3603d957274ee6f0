/**
 * Attacks on signed memory exports (issue 33, item 6). An export is signed with a key derived from the approval
 * key (outside the database), bound to the user and the instance; a tree signed any other way — re-signed with
 * the key stored in the database, signed for another user, by another instance, or with another approval key —
 * lands for review (channel B) and never restores a methodology as graduated.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore, exportMemory, importMemory, type MemoryScope, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-export-sign-'));
  dirs.push(d);
  return d;
};
const T = (m: number) => new Date(Date.parse('2026-05-01T00:00:00.000Z') + m * 60_000).toISOString();
const approvalKey = new Uint8Array(randomBytes(32));

async function seedMethodology(storage: Storage, scope: MemoryScope): Promise<void> {
  await storage.learning.upsertMethodology(scope, { assetClass: 'forex', text: 'Fade the London open on EUR/USD.', normalizedText: 'fade the london open on eur/usd', origin: 'memory_learn', now: T(1) });
}

/** Every file of a tree (relative path → bytes). */
function files(dir: string, rel = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of readdirSync(path.join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    if (statSync(path.join(dir, r)).isDirectory()) for (const [k, v] of files(dir, r)) out.set(k, v);
    else out.set(r, readFileSync(path.join(dir, r)));
  }
  return out;
}

/**
 * What someone with read access to the database file does: read `instance_meta.hmac_key`, rewrite a
 * methodology as graduated with confidence 0.99, and re-sign every file with that key — once in the format
 * v1 used ("<path>\0<bytes>"), once in every binding the current signature.txt describes (instance, user, path).
 */
function tamperAndResign(dir: string, dbKey: Uint8Array, instanceId: string, userId: string, format: 'v1' | 'bound'): void {
  const file = path.join(dir, 'methodologies/forex/1.md');
  writeFileSync(file, readFileSync(file, 'utf8').replace('state: candidate', 'state: graduated').replace(/^uses: 0$/m, 'uses: 40').replace(/^wins: 0$/m, 'wins: 39').replace(/^confidence: 0$/m, 'confidence: 0.99'));
  const all = [...files(dir)].filter(([rel]) => rel !== 'signature.txt').sort(([a], [b]) => (a < b ? -1 : 1));
  const mac = (rel: string, bytes: Buffer) => {
    const h = createHmac('sha256', dbKey);
    if (format === 'bound') return h.update(JSON.stringify(['minara-memory-export v2', instanceId, userId, '', rel])).update('\0').update(bytes).digest('hex');
    return h.update(rel).update('\0').update(bytes).digest('hex');
  };
  const header = format === 'v1'
    ? 'minara-memory-export-signature v1\ninstance_id: ' + instanceId + '\nalgorithm: HMAC-SHA256\n'
    : readFileSync(path.join(dir, 'signature.txt'), 'utf8').split('\n').filter((l) => !/^[0-9a-f]{64} {2}/u.test(l)).join('\n').replace(/\n*$/u, '\n');
  writeFileSync(path.join(dir, 'signature.txt'), header + all.map(([rel, bytes]) => `${mac(rel, bytes)}  ${rel}`).join('\n') + '\n');
}

describe('signed memory exports (attacks)', () => {
  it.each(['v1', 'bound'] as const)('a tampered export re-signed with the database key (%s format) lands for review, never graduated', async (format) => {
    const dir = tmp();
    const db = path.join(dir, 'minara.db');
    const storage = createSqliteStorage({ path: db, logger: silentLogger });
    const S = { userId: 'default' };
    await seedMethodology(storage, S);
    const out = await exportMemory({ storage, out: path.join(dir, 'export'), sign: true, approvalKey });
    // The attacker reads the key stored in the database file.
    const row = new Database(db, { readonly: true }).prepare('SELECT instance_id, hmac_key FROM instance_meta').get() as { instance_id: string; hmac_key: Buffer };
    tamperAndResign(out.dir, new Uint8Array(row.hmac_key), row.instance_id, S.userId, format);

    // Same instance identity and key as the original (the strongest position for the attacker): restore the DB.
    const restored = createSqliteStorage({ path: path.join(dir, 'restore.db'), logger: silentLogger });
    await restored.meta.getInstance();
    const rdb = new Database(path.join(dir, 'restore.db'));
    rdb.prepare('UPDATE instance_meta SET instance_id = ?, hmac_key = ?').run(row.instance_id, row.hmac_key);
    rdb.close();
    const memory = createMemoryStore({ storage: restored, scope: S, logger: silentLogger });
    const r = await importMemory({ storage: restored, memory, from: out.dir, apply: true, approvalKey });
    expect(r.signedByThisInstance).toBe(false);
    expect(r.files.find((f) => f.path === 'methodologies/forex/1.md')).toMatchObject({ channel: 'unsigned' });
    const ms = await restored.learning.listMethodologies(S);
    expect(ms.map((m) => [m.state, m.confidence, m.uses])).toEqual([['quarantined', 0, 0]]);
    await memory.close();
    for (const s of [storage, restored]) await s.close();
  });

  it("alice's signed export imported into dave's scope lands for review", async () => {
    const storage = createInMemoryStorage({});
    const alice = { userId: 'alice' };
    const dave = { userId: 'dave' };
    await storage.learning.upsertMethodology(alice, {
      assetClass: 'forex', text: 'Fade the London open on EUR/USD.', normalizedText: 'fade the london open on eur/usd', origin: 'lesson', now: T(9),
      restore: { state: 'graduated', uses: 30, wins: 25, confidence: 0.7, graduatedAt: T(5), createdAt: T(0) },
    });
    const out = await exportMemory({ storage, scope: alice, out: path.join(tmp(), 'alice'), sign: true, approvalKey });
    const daveMemory = createMemoryStore({ storage, scope: dave, logger: silentLogger });
    const r = await importMemory({ storage, scope: dave, memory: daveMemory, from: out.dir, apply: true, approvalKey });
    expect(r.signedByThisInstance).toBe(false);
    expect(r.files.filter((f) => f.action === 'create').every((f) => f.channel === 'unsigned')).toBe(true);
    expect((await storage.learning.listMethodologies(dave)).map((m) => m.state)).toEqual(['quarantined']);
    // Alice's own scope still takes it back as signed (into a restore of the same instance).
    const aliceMemory = createMemoryStore({ storage, scope: alice, logger: silentLogger });
    const back = await importMemory({ storage, scope: alice, memory: aliceMemory, from: out.dir, approvalKey });
    expect(back.signedByThisInstance).toBe(true);
    for (const m of [daveMemory, aliceMemory]) await m.close();
    await storage.close();
  });

  it('another approval key, another instance sharing the approval key, or no key at import: channel B', async () => {
    const instanceKey = new Uint8Array(randomBytes(32));
    const storage = createInMemoryStorage({ instanceKey });
    const S = { userId: 'default' };
    await seedMethodology(storage, S);
    const out = await exportMemory({ storage, out: path.join(tmp(), 'x'), sign: true, approvalKey });
    const sameInstance = createInMemoryStorage({ instanceKey });
    expect((await sameInstance.meta.getInstance()).instanceId).toBe((await storage.meta.getInstance()).instanceId);
    const mem = createMemoryStore({ storage: sameInstance, scope: S, logger: silentLogger });
    expect((await importMemory({ storage: sameInstance, memory: mem, from: out.dir, approvalKey })).signedByThisInstance).toBe(true);
    expect((await importMemory({ storage: sameInstance, memory: mem, from: out.dir, approvalKey: new Uint8Array(randomBytes(32)) })).signedByThisInstance).toBe(false);
    expect((await importMemory({ storage: sameInstance, memory: mem, from: out.dir })).signedByThisInstance).toBe(false);
    const otherInstance = createInMemoryStorage({});
    const otherMem = createMemoryStore({ storage: otherInstance, scope: S, logger: silentLogger });
    expect((await importMemory({ storage: otherInstance, memory: otherMem, from: out.dir, approvalKey })).signedByThisInstance).toBe(false);
    // The signature file names what it binds, never a key.
    const sig = readFileSync(path.join(out.dir, 'signature.txt'), 'utf8');
    expect(sig).toContain('user_id: "default"');
    expect(sig).not.toContain(Buffer.from(approvalKey).toString('hex'));
    for (const m of [mem, otherMem]) await m.close();
    for (const s of [storage, sameInstance, otherInstance]) await s.close();
  });

  it('signing without an approval key is refused, naming the field', async () => {
    const storage = createInMemoryStorage({});
    await expect(exportMemory({ storage, out: path.join(tmp(), 'y'), sign: true })).rejects.toThrow(/approvalKey/);
    await expect(exportMemory({ storage, out: path.join(tmp(), 'z'), sign: true, approvalKey: new Uint8Array(8) })).rejects.toThrow(/approvalKey/);
    await storage.close();
  });
});
