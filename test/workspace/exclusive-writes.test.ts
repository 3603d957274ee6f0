/**
 * The exclusive workspace's heartbeat is written in synchronous calls (no thread-pool round trips): the same
 * guarantees as the asynchronous writer — confined, atomic, owner-only, never through a symlink — checked by attack.
 */
import { lstat, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorkspace, parseHeartbeat } from '@minara/agent';
import { atomicWriteConfinedSync } from '../../src/workspace/safe-fs';
import { cleanupTempDirs, fixedNow, tempDir } from './helpers';

afterEach(cleanupTempDirs);

describe('the exclusive workspace heartbeat (synchronous atomic write)', () => {
  it('is on disk, owner-only, when writeHeartbeat resolves, and is what the next prompt shows', async () => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir, now: fixedNow, exclusive: true });
    await ws.seed();
    await ws.writeHeartbeat({ sessionId: 'bt-1', surface: 'backtest', turnCount: 1, openLoops: ['watch BTC'] });
    const onDisk = await readFile(join(dir, 'HEARTBEAT.md'), 'utf8');
    expect(parseHeartbeat(onDisk)).toMatchObject({ sessionId: 'bt-1', turnCount: 1, openLoops: ['watch BTC'] });
    if (process.platform !== 'win32') expect((await stat(join(dir, 'HEARTBEAT.md'))).mode & 0o777).toBe(0o600);
    await ws.writeHeartbeat({ sessionId: 'bt-2', surface: 'backtest', turnCount: 2 });
    expect((await ws.loadPromptBlocks()).dynamic).toContain('session_id: bt-2');
    expect(parseHeartbeat(await readFile(join(dir, 'HEARTBEAT.md'), 'utf8'))).toMatchObject({ sessionId: 'bt-2', openLoops: ['watch BTC'] });
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('attack: a HEARTBEAT.md symlink to a file outside is replaced by a regular file, never written through', async () => {
    const dir = await tempDir();
    const outside = await tempDir('minara-outside-');
    const victim = join(outside, 'victim.txt');
    await writeFile(victim, 'keep me\n');
    const ws = createWorkspace({ dir, now: fixedNow, exclusive: true });
    await ws.seed();
    await ws.writeHeartbeat({ sessionId: 's', surface: 'backtest', turnCount: 1 }); // the cache now trusts its own copy
    await rm(join(dir, 'HEARTBEAT.md'));
    await symlink(victim, join(dir, 'HEARTBEAT.md'));
    await ws.writeHeartbeat({ sessionId: 's', surface: 'backtest', turnCount: 2 });
    expect(await readFile(victim, 'utf8')).toBe('keep me\n');
    expect((await lstat(join(dir, 'HEARTBEAT.md'))).isSymbolicLink()).toBe(false);
    expect(parseHeartbeat(await readFile(join(dir, 'HEARTBEAT.md'), 'utf8'))).toMatchObject({ turnCount: 2 });
  });

  it('attack: a directory symlinked out of the workspace is refused, and nothing is written outside', async () => {
    const dir = await tempDir();
    const outside = await tempDir('minara-outside-');
    await symlink(outside, join(dir, 'memory'));
    expect(() => atomicWriteConfinedSync(dir, 'memory/escape.md', 'x')).toThrow(/outside the workspace/);
    expect(() => atomicWriteConfinedSync(dir, '../escape.md', 'x')).toThrow(/outside the workspace/);
    expect(() => atomicWriteConfinedSync(dir, '/etc/escape.md', 'x')).toThrow(/absolute path/);
    expect(await readdir(outside)).toEqual([]);
  });

  it('returns the identity of what it wrote; a failed replace leaves no temp file and the target as it was', async () => {
    const dir = await tempDir();
    const written = atomicWriteConfinedSync(dir, 'notes/a.md', 'hello');
    const st = await lstat(join(dir, 'notes', 'a.md'));
    expect(written).toMatchObject({ size: 5, ino: st.ino, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs });
    expect(written.realPath.endsWith(join('notes', 'a.md'))).toBe(true);
    await mkdir(join(dir, 'notes', 'busy.md', 'inner'), { recursive: true });
    expect(() => atomicWriteConfinedSync(dir, 'notes/busy.md', 'x')).toThrow();
    expect((await readdir(join(dir, 'notes'))).sort()).toEqual(['a.md', 'busy.md']);
    expect((await stat(join(dir, 'notes', 'busy.md'))).isDirectory()).toBe(true);
  });
});

describe('atomicWriteConfinedSync directories', () => {
  it('creates a missing parent (owner-only) and a missing root, then writes', async () => {
    const base = await tempDir();
    const root = join(base, 'ws');
    atomicWriteConfinedSync(root, 'HEARTBEAT.md', 'a');
    atomicWriteConfinedSync(root, 'memory/deep/x.md', 'b');
    expect(await readFile(join(root, 'HEARTBEAT.md'), 'utf8')).toBe('a');
    expect(await readFile(join(root, 'memory', 'deep', 'x.md'), 'utf8')).toBe('b');
    if (process.platform !== 'win32') expect((await stat(join(root, 'memory', 'deep'))).mode & 0o777).toBe(0o700);
  });

  it('attack: a missing directory under a symlink out of the workspace is refused after it is made, and nothing is written there', async () => {
    const dir = await tempDir();
    const outside = await tempDir('minara-outside-');
    await symlink(outside, join(dir, 'link'));
    expect(() => atomicWriteConfinedSync(dir, 'link/new/escape.md', 'x')).toThrow(/outside the workspace/);
    expect(await readdir(join(outside, 'new'))).toEqual([]);
  });
});
