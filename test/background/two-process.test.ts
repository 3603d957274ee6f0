/**
 * Two processes with a background runner on one SQLite file run each slot of a job once between them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bg-2p-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function worker(name: string, db: string, log: string, ms: number): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'runner-worker.ts'), db, log, name, String(ms)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('the background runner across processes', () => {
  it('two processes on one SQLite file run each slot once', async () => {
    const db = path.join(dir, 'minara.db');
    const log = path.join(dir, 'runs.log');
    // Create and migrate the file first, so the two workers start on an existing database.
    await createSqliteStorage({ path: db }).close();
    const codes = await Promise.all([worker('a', db, log, 4_500), worker('b', db, log, 4_500)]);
    expect(codes).toEqual([0, 0]);
    expect(existsSync(log)).toBe(true);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const slots = lines.map((l) => l.split(' ')[0]);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    // Every slot ran exactly once, by one of the two.
    expect(new Set(slots).size).toBe(slots.length);
    const storage = createSqliteStorage({ path: db });
    const runs = await storage.jobs.listRuns({ jobId: 'tick', limit: 100 });
    await storage.close();
    expect(runs.filter((r) => r.outcome === 'ok')).toHaveLength(lines.length);
    expect(new Set(runs.map((r) => r.slot)).size).toBe(runs.length);
  }, 30_000);
});
