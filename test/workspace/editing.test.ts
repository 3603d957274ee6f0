import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWorkspace, MinaraError, WorkspaceConflictError } from '@minara/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, FIXTURES, fixedNow, lastJson, runFixture, tempDir } from './helpers';

afterEach(cleanupTempDirs);

describe('readFile / writeFile', () => {
  it('round-trips content with sha256 optimistic concurrency', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await ws.seed();
    const read = await ws.readFile('MEMORY.md');
    expect(read.exists).toBe(true);
    expect(read.sha256).toMatch(/^[0-9a-f]{64}$/);
    const written = await ws.writeFile('MEMORY.md', '# MEMORY\n## Facts\n- likes BTC\n', { expectedSha256: read.sha256 });
    expect((await ws.readFile('MEMORY.md')).sha256).toBe(written.sha256);
    const stale = ws.writeFile('MEMORY.md', 'clobber', { expectedSha256: read.sha256 });
    await expect(stale).rejects.toBeInstanceOf(WorkspaceConflictError);
    await expect(stale).rejects.toMatchObject({ code: 'WORKSPACE_CONFLICT', expectedSha256: read.sha256, actualSha256: written.sha256 });
    expect(await readFile(join(ws.dir, 'MEMORY.md'), 'utf8')).toContain('likes BTC');
  });

  it('treats a missing file as sha256 null: create-only writes', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    const missing = await ws.readFile('HEARTBEAT.md');
    expect(missing).toEqual({ name: 'HEARTBEAT.md', exists: false, content: '', sha256: null });
    await ws.writeFile('HEARTBEAT.md', 'x', { expectedSha256: null });
    await expect(ws.writeFile('HEARTBEAT.md', 'y', { expectedSha256: null })).rejects.toMatchObject({ code: 'WORKSPACE_CONFLICT' });
  });

  it.each([
    ['../etc/passwd', 'SANDBOX_ESCAPE'],
    ['memory/2026-03-01.md', 'SANDBOX_ESCAPE'],
    ['/etc/passwd', 'SANDBOX_ESCAPE'],
    ['MEMORY.md\0.txt', 'SANDBOX_ESCAPE'],
    ['..', 'SANDBOX_ESCAPE'],
    ['C:\\x.md', 'SANDBOX_ESCAPE'],
    ['notes.md', 'WORKSPACE_FILE_NOT_EDITABLE'],
    ['.dreamed-state.json', 'WORKSPACE_FILE_NOT_EDITABLE'],
    ['memory.md', 'WORKSPACE_FILE_NOT_EDITABLE'],
    ['', 'INVALID_ARGUMENT'],
  ])('rejects the name %j with %s and writes nothing', async (name, code) => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir, now: fixedNow });
    const err = await ws.writeFile(name, 'x', { expectedSha256: null }).catch((e: unknown) => e);
    expect(MinaraError.isInstance(err)).toBe(true);
    expect((err as MinaraError).code).toBe(code);
    await expect(ws.readFile(name)).rejects.toMatchObject({ code });
    expect(await readdir(dir)).toEqual([]);
  });

  it('rejects bad content, a malformed sha and oversized content without writing', async () => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir, now: fixedNow, caps: { maxReadBytes: 2048 } });
    await expect(ws.writeFile('USER.md', 42 as unknown as string, { expectedSha256: null })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.writeFile('USER.md', 'x', { expectedSha256: 'abc' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(ws.writeFile('USER.md', 'x'.repeat(4096), { expectedSha256: null })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('leaves no temp or lock files behind', async () => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir, now: fixedNow });
    await ws.writeFile('SOUL.md', 'a', { expectedSha256: null });
    expect(await readdir(dir)).toEqual(['SOUL.md']);
  });
});

describe('concurrency across processes', () => {
  it('of N processes writing with the same expectedSha256, exactly one wins; the rest get WORKSPACE_CONFLICT', async () => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir });
    await ws.writeFile('MEMORY.md', 'base\n', { expectedSha256: null });
    const { sha256 } = await ws.readFile('MEMORY.md');
    const startAt = String(Date.now() + 1500);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => runFixture('cas-writer', [dir, sha256 ?? '', `writer ${i}\n`, startAt])),
    );
    const outcomes = results.map((r) => lastJson<{ ok: boolean; code?: string }>(r.stdout));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok).every((o) => o.code === 'WORKSPACE_CONFLICT')).toBe(true);
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toMatch(/^writer \d\n$/);
    expect((await readdir(dir)).sort()).toEqual(['MEMORY.md']);
  });

  it('a writer killed mid-write never leaves a half-written file (and its stale lock is reclaimed)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'MEMORY.md'), 'start\n');
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'torn-writer.ts'), dir], {
        cwd: join(FIXTURES, '..', '..', '..'),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 150 + round * 70));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      const content = await readFile(join(dir, 'MEMORY.md'), 'utf8');
      expect(['start\n', `A${'a'.repeat(400_000)}\n`, `B${'b'.repeat(600_000)}\n`]).toContain(content);
    }
    // A dead writer's lock (if any) does not block the next save.
    const ws = createWorkspace({ dir });
    const cur = await ws.readFile('MEMORY.md');
    await ws.writeFile('MEMORY.md', 'after\n', { expectedSha256: cur.sha256 });
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe('after\n');
  });
});
