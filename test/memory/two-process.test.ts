import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryStore, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('./fixtures/writer.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'minara-mem-2p-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(path: string, name: string, count: number): Promise<{ name: string; errors: string[]; searches: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, path, name, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child ${name} exited ${code}: ${err}`))));
  });
}

describe('two processes on one SQLite file', () => {
  it('lose nothing and never surface SQLITE_BUSY', async () => {
    const path = join(dir, 'shared.db');
    await createSqliteStorage({ path, logger: silentLogger }).close();
    const count = 250;
    const results = await Promise.all([run(path, 'a', count), run(path, 'b', count)]);
    for (const r of results) {
      expect(r.errors).toEqual([]);
      expect(r.searches).toBeGreaterThan(0);
    }
    const storage = createSqliteStorage({ path, logger: silentLogger });
    const store = createMemoryStore({ storage, scope: { userId: 'shared' }, logger: silentLogger });
    expect((await store.read({ limit: 1000 })).length).toBe(2 * count);
    for (const name of ['a', 'b']) {
      for (const i of [0, 57, count - 1]) expect((await store.search(`marker${name}x${i}`)).length).toBe(1);
    }
    await storage.close();
  }, 120_000);
});
