import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, lstat, open, readFile, rename, unlink } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import { MinaraError } from '../errors/index';
import type { Logger } from '../util/logger';

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

async function createExclusive(path: string, record: LockRecord): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | (fsConstants.O_NOFOLLOW ?? 0), 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw error;
  }
  await handle.close();
  return true;
}

/**
 * Move `path` aside only if it still holds exactly `expected`. Rename is atomic, so whatever we moved is
 * what we verify; a fresh lock moved by mistake is linked back (link fails rather than clobbers).
 */
async function removeIfUnchanged(path: string, expected: Snapshot, token: string): Promise<'removed' | 'changed' | 'gone'> {
  const again = await snapshot(path);
  if (again === undefined) return 'gone';
  if (again.raw !== expected.raw || again.ino !== expected.ino) return 'changed';
  const aside = `${path}.${token}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  const moved = await snapshot(aside);
  if (moved !== undefined && (moved.raw !== expected.raw || moved.ino !== expected.ino)) {
    await link(aside, path).catch(() => {});
    await unlink(aside).catch(() => {});
    return 'changed';
  }
  await unlink(aside).catch(() => {});
  return 'removed';
}

/**
 * One non-blocking attempt at an `O_EXCL` lock file. A live holder wins; a stale one (age past `ttlMs`,
 * or a dead pid on this host) is taken over after re-reading it, so a lock written by a peer between
 * "decide stale" and "remove" is detected and yielded to.
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
    const outcome = await removeIfUnchanged(path, held, token);
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
        return (await removeIfUnchanged(path, current, record.token)) === 'removed';
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
