/**
 * The doctor's fixes and the memory import from two processes at once on one SQLite file: every row lands once
 * (methodologies, preferences, trade cases, memories), and concurrent fixes leave the same state one run would.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore, exportMemory, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';

const root = path.join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const S = { userId: 'default' };

function worker(db: string, mode: 'import' | 'doctor', from: string, barrier: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/ops/fixtures/import-worker.ts', db, mode, from, barrier], { cwd: root });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

describe('two processes on one SQLite file', () => {
  it('import the same tree at once: each methodology, preference, trade case and memory lands once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-import-2p-'));
    dirs.push(dir);
    // A source store with something of every kind.
    const source = createSqliteStorage({ path: path.join(dir, 'source.db'), logger: silentLogger });
    const memory = createMemoryStore({ storage: source, scope: S, logger: silentLogger });
    const now = '2026-05-01T00:00:00.000Z';
    for (let i = 0; i < 20; i++) await source.learning.upsertMethodology(S, { assetClass: 'crypto_major', text: `Rule ${i}`, normalizedText: `rule ${i}`, origin: 'api', now });
    await source.learning.upsertPreference(S, { dimension: 'slippage', kind: 'behavioural', text: 'Caps slippage', normalizedText: 'caps slippage', source: 'mined', now, restore: { state: 'active', evidence: 6, contradictions: 0, lastEvidenceAt: now, activatedAt: now, createdAt: now } });
    for (let i = 0; i < 5; i++) {
      await source.learning.importTradeCase(S, {
        orderId: `o${i}`, role: 'minara.core', asset: 'BTC', kind: 'spot', side: 'buy', quantity: 1, entryPrice: 1, notionalUsd: 1, summary: `case ${i}`, outcome: 'win',
        realizedPnlUsd: 1, holdingMs: 1, methodologyIds: [], openedAt: now, closedAt: now, simulated: true, reflectedAt: now, classification: 'variance', reflection: '{}', now,
      });
    }
    await memory.writeMany(Array.from({ length: 30 }, (_, i) => ({ category: 'note', content: `Note number ${i} about BTC` })));
    const tree = await exportMemory({ storage: source, out: path.join(dir, 'export') });
    await memory.close();
    await source.close();

    const target = path.join(dir, 'target.db');
    await createSqliteStorage({ path: target, logger: silentLogger }).close();
    const barrier = path.join(dir, 'go');
    const runs = Promise.all([worker(target, 'import', tree.dir, barrier), worker(target, 'import', tree.dir, barrier)]);
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(barrier, '');
    const counts = (await runs).map((o) => JSON.parse(o) as { create: number; exists: number; reject: number });
    expect(counts.map((c) => c.reject)).toEqual([5, 5]); // the unsigned trade cases, in both

    const check = createSqliteStorage({ path: target, logger: silentLogger });
    expect(await check.learning.listMethodologies(S, { limit: 100 })).toHaveLength(20);
    expect(await check.learning.listPreferences(S, { limit: 100 })).toHaveLength(1);
    const notes = await check.memory.list(S, { categories: ['note'], limit: 100 });
    expect(notes).toHaveLength(30);
    expect(new Set(notes.map((n) => n.content)).size).toBe(30);
    await check.close();
  }, 60_000);

  it('run the doctor\'s fixes at once: the same end state as one run, and a third run changes nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-doctor-2p-'));
    dirs.push(dir);
    const db = path.join(dir, 'd.db');
    const storage = createSqliteStorage({ path: db, logger: silentLogger });
    const now = '2026-05-01T00:00:00.000Z';
    for (let i = 0; i < 10; i++) {
      await storage.learning.upsertMethodology(S, { assetClass: 'crypto_meme', text: `Chase ${i}`, normalizedText: `chase ${i}`, origin: 'api', now, restore: { state: 'candidate', uses: 20, wins: 6, confidence: 0.145, createdAt: now } });
    }
    const memory = createMemoryStore({ storage, scope: S, logger: silentLogger });
    const ids = await memory.writeMany(Array.from({ length: 10 }, (_, i) => ({ category: 'note', content: `Holding ETH and SOL ${i}` })));
    for (const { id } of ids) await storage.memory.update(S, id, { edges: [], now });
    await memory.close();
    await storage.close();
    const barrier = path.join(dir, 'go');
    const runs = Promise.all([worker(db, 'doctor', '-', barrier), worker(db, 'doctor', '-', barrier)]);
    await new Promise((r) => setTimeout(r, 1500));
    writeFileSync(barrier, '');
    const applied = (await runs).map((o) => JSON.parse(o) as number[]);
    // Demotion is compare-and-set: the two runs quarantined the 10 between them, never one twice.
    // [permissions (no paths given: skipped), embeddings, edges, methodology_demotion]
    expect(applied[0]![3]! + applied[1]![3]!).toBe(10);
    const check = createSqliteStorage({ path: db, logger: silentLogger });
    expect((await check.learning.listMethodologies(S, { states: ['quarantined'], limit: 100 }))).toHaveLength(10);
    for (const { id } of ids) expect((await check.memory.edgesForMemories(S, [id])).length).toBeGreaterThan(0);
    await check.close();
    expect(JSON.parse(await worker(db, 'doctor', '-', barrier))).toEqual([0, 0, 0, 0]);
  }, 60_000);
});
