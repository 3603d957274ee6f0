import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../util/logger';
import { acquireFileLock } from './file-lock';
import { STATE_FILES } from './files';

/** How long a writer waits for the workspace write lock before `WORKSPACE_LOCK_HELD`. */
export const WRITE_LOCK_WAIT_MS = 5_000;
/** A write lock older than this is stale (writers hold it for milliseconds). */
export const WRITE_LOCK_TTL_MS = 30_000;

/**
 * Run `fn` under the workspace write lock (`.workspace-write.lock`, `O_EXCL`), shared by every
 * read-modify-write of a workspace file in any process: editor saves, the heartbeat writer, dreaming
 * appends, bootstrap archiving, importers. It makes check-sha-then-rename atomic across processes.
 */
export async function withWriteLock<T>(root: string, logger: Logger, fn: () => Promise<T>): Promise<T> {
  await mkdir(root, { recursive: true });
  const path = join(await realpath(root), STATE_FILES.writeLock);
  const lock = await acquireFileLock(path, {
    ttlMs: WRITE_LOCK_TTL_MS,
    waitMs: WRITE_LOCK_WAIT_MS,
    now: () => new Date(),
    logger,
    module: 'workspace/write-lock',
  });
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
