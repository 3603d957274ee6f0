import { spawn } from 'node:child_process';
import { existsSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ConfigError } from '@minara/agent';
import { createSqliteStorage, type SqliteBackgroundCheckpointOptions, type SqliteStorage } from '@minara/agent/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKGROUND_AUTOCHECKPOINT_PAGES, createWalCheckpointer, DEFAULT_AUTOCHECKPOINT_PAGES, walCheckpointerOf, type WalCheckpointer } from '../../src/storage/sqlite/checkpointer';
import { auditEntry } from './contract';
import { recordingLogger, tempDir } from './helpers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/**
 * The WAL index header in `<db>-shm` (native byte order), read with plain file reads, without a connection or a lock:
 * `mxFrame` (u32 at 16) is the number of valid frames in the WAL, `nBackfill` (u32 at 96) how many of them a
 * checkpoint has copied into the database file.
 */
function walIndex(path: string): { mxFrame: number; nBackfill: number } {
  const fd = openSync(`${path}-shm`, 'r');
  try {
    const buf = Buffer.alloc(104);
    readSync(fd, buf, 0, 104, 0);
    return { mxFrame: buf.readUInt32LE(16), nBackfill: buf.readUInt32LE(96) };
  } finally {
    closeSync(fd);
  }
}

const autocheckpoint = (storage: SqliteStorage) => Number(storage.handle.db.pragma('wal_autocheckpoint', { simple: true }));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Append (letting the event loop turn now and then) until `done()` holds; fails after `max` appends. */
async function appendUntil(storage: SqliteStorage, done: () => boolean, max = 2000): Promise<number> {
  for (let i = 0; i < max; i++) {
    if (done()) return i;
    await storage.audit.append(auditEntry());
    if (i % 8 === 0) await sleep(1);
  }
  throw new Error(`condition not met after ${max} appends`);
}

/** Append `n` rows back to back and return the largest WAL frame count seen after any commit. */
async function maxWalFramesOver(storage: SqliteStorage, path: string, n: number): Promise<number> {
  let max = 0;
  for (let i = 0; i < n; i++) {
    await storage.audit.append(auditEntry({ sessionId: `s${i % 7}`, traceId: `t${i}` }));
    max = Math.max(max, walIndex(path).mxFrame);
  }
  return max;
}

const cleanups: Array<() => void> = [];
const opened: SqliteStorage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const c of cleanups.splice(0)) c();
});

function open(options: { backgroundCheckpoints?: boolean | SqliteBackgroundCheckpointOptions; path?: string } = {}) {
  const { dir, cleanup } = tempDir('minara-ckpt-');
  cleanups.push(cleanup);
  const path = options.path ?? join(dir, 'a.db');
  const logger = recordingLogger();
  const storage = createSqliteStorage({ path, logger, ...(options.backgroundCheckpoints !== undefined ? { backgroundCheckpoints: options.backgroundCheckpoints } : {}) });
  opened.push(storage);
  return { storage, path, logger, dir, checkpointer: walCheckpointerOf(storage) };
}

async function running(storage: SqliteStorage, checkpointer: WalCheckpointer): Promise<void> {
  await appendUntil(storage, () => checkpointer.status().state === 'running');
  // One more commit applies the safety-net autocheckpoint to the committing connection.
  await appendUntil(storage, () => autocheckpoint(storage) === BACKGROUND_AUTOCHECKPOINT_PAGES);
}

describe('SQLite background WAL checkpoints', () => {
  it('start only after the first commits; the thread checkpoints while the committing connection only keeps a safety net', async () => {
    const { storage, path, checkpointer } = open({ backgroundCheckpoints: { startAfterCommits: 50 } });
    expect(checkpointer!.status().state).toBe('waiting');
    for (let i = 0; i < 40; i++) await storage.audit.append(auditEntry());
    expect(checkpointer!.status().state, 'no thread before startAfterCommits commits').toBe('waiting');
    expect(autocheckpoint(storage)).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);

    await running(storage, checkpointer!);
    // A burst well under the safety net (4000 frames): the committing connection cannot have checkpointed it.
    for (let i = 0; i < 100; i++) await storage.audit.append(auditEntry());
    const before = walIndex(path);
    expect(before.mxFrame).toBeGreaterThan(0);
    expect(before.mxFrame).toBeLessThan(BACKGROUND_AUTOCHECKPOINT_PAGES);
    const checkpointsBefore = checkpointer!.status().checkpoints;
    // The thread catches up with the idle WAL (a checkpoint that began mid-burst leaves the last frames to the next).
    for (let i = 0; i < 200 && walIndex(path).nBackfill !== walIndex(path).mxFrame; i++) await checkpointer!.nextCheckpoint();
    const after = checkpointer!.status();
    expect(after.checkpoints).toBeGreaterThan(checkpointsBefore);
    expect(after.failures).toBe(0);
    // Everything committed so far is in the database file: the WAL index says so, and the thread's pragma row too.
    const index = walIndex(path);
    expect(index.nBackfill).toBe(index.mxFrame);
    expect(after.checkpointedFrames).toBe(after.walFrames);
    expect(after.walFrames).toBe(index.mxFrame);
    // Once copied, the next writer starts the WAL over: it does not grow while the thread keeps up.
    await storage.audit.append(auditEntry());
    expect(walIndex(path).mxFrame).toBeLessThan(before.mxFrame);
    // A second connection sees every row (a checkpoint changes where pages live, never what is committed).
    const reader = new Database(path, { readonly: true });
    try {
      expect(reader.prepare('SELECT COUNT(*) FROM audit_log').pluck().get()).toBe(await storage.audit.count());
    } finally {
      reader.close();
    }
    expect(await storage.audit.verify()).toMatchObject({ ok: true });
  });

  it('keeps the WAL bounded by the safety net under back-to-back commits, and by SQLite’s default with the thread off', async () => {
    const on = open({ backgroundCheckpoints: { startAfterCommits: 1 } });
    await running(on.storage, on.checkpointer!);
    // ~6 frames per row: 1500 rows are ~9000 frames, past the safety net twice. The committing connection's own
    // checkpoint at 4000 frames is skipped (SQLITE_BUSY, never waited for) while the thread holds the checkpoint lock,
    // so the WAL can pass the net by what is committed meanwhile; the next commit after the thread's pass checkpoints it.
    expect(await maxWalFramesOver(on.storage, on.path, 1500)).toBeLessThanOrEqual(2 * BACKGROUND_AUTOCHECKPOINT_PAGES);

    const off = open({ backgroundCheckpoints: false });
    expect(off.checkpointer).toBeUndefined();
    expect(autocheckpoint(off.storage)).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);
    expect(await maxWalFramesOver(off.storage, off.path, 1500)).toBeLessThanOrEqual(DEFAULT_AUTOCHECKPOINT_PAGES + 50);
  });

  it('a killed thread is logged and SQLite checkpoints on the committing connection again (WAL bounded by the default)', async () => {
    const { storage, path, checkpointer, logger } = open({ backgroundCheckpoints: { startAfterCommits: 1 } });
    await running(storage, checkpointer!);
    await checkpointer!.kill();
    expect(checkpointer!.status().state).toBe('stopped');
    expect(logger.lines.some((l) => l.level === 'warn' && l.message.includes('background checkpoint thread stopped'))).toBe(true);
    await storage.audit.append(auditEntry());
    expect(autocheckpoint(storage)).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);
    expect(await maxWalFramesOver(storage, path, 1500)).toBeLessThanOrEqual(DEFAULT_AUTOCHECKPOINT_PAGES + 50);
    expect(await storage.audit.verify()).toMatchObject({ ok: true, checked: await storage.audit.count() });
  });

  it('a thread that cannot open the file is logged, never thrown, and leaves SQLite’s own checkpoints on', async () => {
    const { storage, dir } = open({ backgroundCheckpoints: false });
    const logger = recordingLogger();
    storage.handle.db.pragma(`wal_autocheckpoint = ${BACKGROUND_AUTOCHECKPOINT_PAGES}`);
    const checkpointer = createWalCheckpointer({ path: join(dir, 'missing', 'nope.db'), db: storage.handle.db, logger, busyTimeoutMs: 100, startAfterCommits: 1 });
    checkpointer.noteCommit();
    for (let i = 0; i < 400 && checkpointer.status().state !== 'stopped'; i++) await sleep(5);
    expect(checkpointer.status()).toMatchObject({ state: 'stopped', failures: 1 });
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(String(logger.lines[0]!.fields?.error)).toMatch(/nope\.db|unable to open|directory does not exist/i);
    expect(autocheckpoint(storage)).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);
    for (let i = 0; i < 50; i++) checkpointer.noteCommit(); // nothing restarts
    expect(checkpointer.status().state).toBe('stopped');
    await checkpointer.close();
  });

  it('close() ends the thread first, so the committing connection is the last one and SQLite removes the WAL', async () => {
    const { storage, path, checkpointer } = open({ backgroundCheckpoints: { startAfterCommits: 1 } });
    await running(storage, checkpointer!);
    expect(existsSync(`${path}-wal`)).toBe(true);
    await storage.close();
    expect(checkpointer!.status().state).toBe('closed');
    expect(existsSync(`${path}-wal`), 'a connection left open would keep the WAL').toBe(false);
    await storage.close(); // idempotent
  });

  it('never starts for an in-memory database or when turned off', async () => {
    const mem = createSqliteStorage({ path: ':memory:' });
    opened.push(mem);
    for (let i = 0; i < 300; i++) await mem.audit.append(auditEntry());
    expect(walCheckpointerOf(mem)).toBeUndefined();
    const off = open({ backgroundCheckpoints: false });
    for (let i = 0; i < 300; i++) await off.storage.audit.append(auditEntry());
    expect(off.checkpointer).toBeUndefined();
  });

  it('rejects bad options, naming the field', () => {
    for (const bad of [0, 'yes', null] as unknown[]) {
      expect(() => createSqliteStorage({ path: ':memory:', backgroundCheckpoints: bad as boolean })).toThrow(ConfigError);
    }
    expect(() => createSqliteStorage({ path: ':memory:', backgroundCheckpoints: { startAfterCommits: 0 } })).toThrow(/backgroundCheckpoints\.startAfterCommits must be a positive integer/);
    expect(() => createSqliteStorage({ path: ':memory:', backgroundCheckpoints: { startAfterCommits: 1.5 } })).toThrow(/positive integer/);
  });

  /** Run the fixture and resolve with its exit code, its stderr and the status it printed. */
  async function runFixture(args: readonly string[]): Promise<{ code: number | null; err: string; state: { state: string; checkpoints: number; failures: number } }> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'checkpointer-process.ts'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.split('\n').find((l) => l.startsWith('state '));
    return { code, err, state: line === undefined ? { state: 'none', checkpoints: 0, failures: 0 } : JSON.parse(line.slice(6)) };
  }

  for (const mode of ['close', 'leave'] as const) {
    it(`a process whose thread ran exits on its own (${mode === 'close' ? 'after close()' : 'without close(): the thread is unref’d'})`, async () => {
      const { dir, cleanup } = tempDir('minara-ckpt-proc-');
      cleanups.push(cleanup);
      const path = join(dir, 'p.db');
      const { code, err, state } = await runFixture([path, mode]);
      expect(code, err).toBe(0);
      expect(state.checkpoints, 'the thread ran a checkpoint before the end').toBeGreaterThan(0);
      expect(state.state).toBe('running');
      if (mode === 'close') expect(existsSync(`${path}-wal`)).toBe(false);
      const check = createSqliteStorage({ path, backgroundCheckpoints: false });
      opened.push(check);
      expect(await check.audit.verify()).toMatchObject({ ok: true });
    }, 30_000);
  }

  it('two processes appending to one chain, each with its checkpoint thread running, never fork it', async () => {
    const { dir, cleanup } = tempDir('minara-ckpt-race-');
    cleanups.push(cleanup);
    const path = join(dir, 'shared.db');
    await createSqliteStorage({ path, backgroundCheckpoints: false }).close(); // created and migrated once, before the race
    const ROWS = 600;
    const [a, b] = await Promise.all([runFixture([path, 'race', String(ROWS)]), runFixture([path, 'race', String(ROWS)])]);
    for (const r of [a!, b!]) {
      expect(r.code, r.err).toBe(0);
      expect(r.err).not.toMatch(/SQLITE_BUSY|STORAGE_BUSY|checkpoint/);
      expect(r.state.checkpoints, 'each process\'s thread checkpointed').toBeGreaterThan(0);
      expect(r.state.failures).toBe(0);
    }
    const db = new Database(path, { readonly: true });
    try {
      const writers = db.prepare('SELECT tool_name FROM audit_log ORDER BY id').pluck().all() as string[];
      expect(writers).toHaveLength(2 * ROWS);
      expect(writers.filter((w, i) => i > 0 && w !== writers[i - 1]).length, 'the two writers interleaved').toBeGreaterThanOrEqual(2);
      expect(db.prepare('SELECT seq FROM audit_log ORDER BY id').pluck().all()).toEqual(Array.from({ length: 2 * ROWS }, (_, i) => i + 1));
    } finally {
      db.close();
    }
    const verifier = createSqliteStorage({ path, backgroundCheckpoints: false });
    opened.push(verifier);
    expect(await verifier.audit.verify()).toMatchObject({ ok: true, checked: 2 * ROWS, head: { seq: 2 * ROWS } });
  }, 60_000);
});
