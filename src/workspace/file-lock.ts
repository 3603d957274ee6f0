import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, lstat, open, readFile, unlink } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import { MinaraError } from '../errors/index';
import type { Logger } from '../util/logger';
import { PRIVATE_FILE_MODE } from '../util/private-fs';

/** What a lock file holds (JSON). */
export interface LockRecord {
  readonly pid: number;
  readonly hostname: string;
  /** ISO time the lock was taken. */
  readonly started_at: string;
  /** Opaque per-acquisition token; release and takeover compare it. */
  readonly token: string;
}

/** Options of {@link tryAcquireFileLock}. */
export interface FileLockOptions {
  /** A lock older than this (by `started_at`) is stale and may be taken over. */
  readonly ttlMs: number;
  readonly now: () => Date;
  readonly logger?: Logger;
  /** Log `module` field. */
  readonly module?: string;
  /** @default os.hostname() */
  readonly hostname?: string;
  /** @default `process.kill(pid, 0)` */
  readonly isPidAlive?: (pid: number) => boolean;
}

/** A lock this process holds. */
export interface HeldLock {
  readonly path: string;
  readonly record: LockRecord;
  /** Remove the lock if it is still ours. Returns false when it was taken over meanwhile. Never throws. */
  release(): Promise<boolean>;
}

/** The outcome of one acquisition attempt. */
export type LockAttempt =
  | { readonly acquired: true; readonly lock: HeldLock; readonly tookOverFrom?: LockRecord | undefined }
  | { readonly acquired: false; readonly holder: LockRecord | undefined };

/** `kill -0`: true while the process exists (EPERM means it exists but is not ours). */
export function defaultIsPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Snapshot {
  readonly raw: string;
  readonly record: LockRecord | undefined;
  readonly ino: number;
  readonly mtimeMs: number;
}

async function snapshot(path: string): Promise<Snapshot | undefined> {
  try {
    const st = await lstat(path);
    const raw = await readFile(path, 'utf8');
    return { raw, record: parseRecord(raw), ino: st.ino, mtimeMs: st.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseRecord(raw: string): LockRecord | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockRecord>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string' && typeof v.started_at === 'string' && typeof v.token === 'string') {
      return v as LockRecord;
    }
  } catch {
    // a half-written or hand-mangled lock: judged by its mtime
  }
  return undefined;
}

/** Why a lock is stale, or `undefined` while it is live. */
export function staleReason(
  snap: { readonly record: LockRecord | undefined; readonly mtimeMs: number },
  nowMs: number,
  options: Pick<FileLockOptions, 'ttlMs' | 'hostname' | 'isPidAlive'>,
): 'ttl' | 'dead_pid' | undefined {
  const { ttlMs, hostname = osHostname(), isPidAlive = defaultIsPidAlive } = options;
  const started = snap.record ? Date.parse(snap.record.started_at) : Number.NaN;
  const since = Number.isNaN(started) ? snap.mtimeMs : started;
  if (nowMs - since > ttlMs) return 'ttl';
  if (snap.record && snap.record.hostname === hostname && !isPidAlive(snap.record.pid)) return 'dead_pid';
  return undefined;
}

/**
 * Create the lock file with its full record, atomically: the record is written to a temp file first and
 * then hard-linked into place (link fails with EEXIST instead of replacing). A process killed at any point
 * leaves either no lock or a complete one, never an empty file that could only go stale by age.
 */
async function createExclusive(path: string, record: LockRecord): Promise<boolean> {
  return createComplete(path, `${JSON.stringify(record, null, 2)}\n`, record.token);
}

/** Create `path` with `content` only if it does not exist; it appears complete or not at all. */
async function createComplete(path: string, content: string, token: string): Promise<boolean> {
  const tmp = `${path}.${token}.tmp`;
  const handle = await open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0), PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** A mutex older than this belonged to a process that died inside the (millisecond-long) critical section. */
const MUTEX_STALE_MS = 10_000;
const MUTEX_WAIT_MS = 3_000;

/**
 * Run `fn` while holding `${path}.mutex` (O_EXCL). Every deletion of the lock file — a release or a stale
 * takeover — happens inside it, after re-reading the file. Creation is O_EXCL and needs no mutex: while the
 * lock file exists nobody can create it, and nobody can delete it without the mutex, so the content checked
 * inside the mutex is the content deleted. (Moving the file aside and linking it back, the earlier design,
 * left a window where a third process could create a lock in between and two processes held it.)
 */
async function withMutex<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const mutex = `${path}.mutex`;
  const deadline = Date.now() + MUTEX_WAIT_MS;
  for (;;) {
    if (!(await createComplete(mutex, `${process.pid} ${osHostname()}\n`, randomBytes(12).toString('hex')))) {
      // A mutex left by a dead process on this host, or an old one, is reclaimed.
      const st = await lstat(mutex).catch(() => undefined);
      const [pid, host] = (await readFile(mutex, 'utf8').catch(() => '')).trim().split(' ');
      const deadHere = host === osHostname() && pid !== undefined && !defaultIsPidAlive(Number(pid));
      if (st && (deadHere || Date.now() - st.mtimeMs > MUTEX_STALE_MS)) {
        // Only the same file we judged (a peer may have reclaimed it and made a new one meanwhile).
        const now = await lstat(mutex).catch(() => undefined);
        if (now?.ino === st.ino) await unlink(mutex).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) {
        throw new MinaraError('WORKSPACE_LOCK_HELD', `The lock mutex ${mutex} stayed held for ${MUTEX_WAIT_MS} ms.`, { retryable: true });
      }
      await new Promise((r) => setTimeout(r, 1 + Math.floor(Math.random() * 4)));
      continue;
    }
    break;
  }
  try {
    return await fn();
  } finally {
    await unlink(mutex).catch(() => {});
  }
}

/** Delete `path` only if it still holds exactly `expected` (same bytes, same inode), under the mutex. */
async function removeIfUnchanged(path: string, expected: Snapshot): Promise<'removed' | 'changed' | 'gone'> {
  return withMutex(path, async () => {
    const again = await snapshot(path);
    if (again === undefined) return 'gone';
    if (again.raw !== expected.raw || again.ino !== expected.ino) return 'changed';
    try {
      await unlink(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw error;
    }
    return 'removed';
  });
}

/**
 * One non-blocking attempt at an `O_EXCL` lock file. A live holder wins; a stale one (age past `ttlMs`,
 * or a dead pid on this host) is removed under the lock's mutex after re-reading it, so a lock written by
 * a peer between "decide stale" and "remove" is detected and yielded to; then creation is tried again.
 */
export async function tryAcquireFileLock(path: string, options: FileLockOptions): Promise<LockAttempt> {
  const { now, logger, module = 'workspace/lock', hostname = osHostname() } = options;
  const token = randomBytes(12).toString('hex');
  const record: LockRecord = { pid: process.pid, hostname, started_at: now().toISOString(), token };
  let tookOverFrom: LockRecord | undefined;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (await createExclusive(path, record)) {
      return { acquired: true, lock: makeHeld(path, record, logger, module), tookOverFrom };
    }
    const held = await snapshot(path);
    if (held === undefined) continue; // released between our attempt and the read: retry
    const reason = staleReason(held, now().getTime(), { ...options, hostname });
    if (reason === undefined) return { acquired: false, holder: held.record };
    const outcome = await removeIfUnchanged(path, held);
    if (outcome === 'changed') {
      const current = await snapshot(path);
      return { acquired: false, holder: current?.record };
    }
    if (outcome === 'removed') {
      tookOverFrom = held.record;
      logger?.warn('stale_lock_reclaimed', { module, path, reason, holder: held.record ?? held.raw.slice(0, 200) });
    }
  }
  const current = await snapshot(path);
  return { acquired: false, holder: current?.record };
}

function makeHeld(path: string, record: LockRecord, logger: Logger | undefined, module: string): HeldLock {
  let released = false;
  return {
    path,
    record,
    async release() {
      if (released) return true;
      released = true;
      try {
        const current = await snapshot(path);
        if (current?.record?.token !== record.token) {
          logger?.warn('lock_lost_before_release', { module, path, holder: current?.record });
          return false;
        }
        return (await removeIfUnchanged(path, current)) === 'removed';
      } catch (error) {
        logger?.error('lock_release_failed', { module, path, error: String(error) });
        return false;
      }
    },
  };
}

/** Like {@link tryAcquireFileLock}, but polls until `waitMs` has passed; then throws `WORKSPACE_LOCK_HELD`. */
export async function acquireFileLock(
  path: string,
  options: FileLockOptions & { readonly waitMs: number; readonly pollMs?: number },
): Promise<HeldLock> {
  const { waitMs, pollMs = 10 } = options;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const attempt = await tryAcquireFileLock(path, options);
    if (attempt.acquired) return attempt.lock;
    if (Date.now() >= deadline) {
      const h = attempt.holder;
      throw new MinaraError(
        'WORKSPACE_LOCK_HELD',
        `The workspace lock ${path} is held${h ? ` by pid ${h.pid} on ${h.hostname} since ${h.started_at}` : ''}; gave up after ${waitMs} ms.`,
        { retryable: true },
      );
    }
    await new Promise((r) => setTimeout(r, pollMs + Math.floor(Math.random() * pollMs)));
  }
}
