import { lstat, readdir, realpath, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../util/logger';
import { ensurePrivateDirSync } from '../util/private-fs';
import { acquireFileLock, defaultIsPidAlive } from './file-lock';
import { TEMP_FILE_PATTERN } from './safe-fs';
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
  ensurePrivateDirSync(root);
  const path = join(await realpath(root), STATE_FILES.writeLock);
  const lock = await acquireFileLock(path, {
    ttlMs: WRITE_LOCK_TTL_MS,
    waitMs: WRITE_LOCK_WAIT_MS,
    now: () => new Date(),
    logger,
    module: 'workspace/write-lock',
  });
  // Holding the lock, no writer on this host is between its temp file and its rename: a temp file whose
  // writer is gone is garbage (a kill mid-write, or mid-sweep of an earlier one).
  try {
    await sweepTempFiles(dirname(path), logger);
    return await fn();
  } finally {
    await lock.release();
  }
}

/** How deep below the workspace root a sweep looks for a dead writer's temp files (journals live one level down). */
const SWEEP_DEPTH = 1;

/**
 * Remove the temp files writers killed mid-write left behind (`.<random>.<pid>.tmp`, written before the
 * rename that would have replaced the target): only those whose pid is not alive, so a live writer's temp
 * file is never touched. Symlinked directories are not followed. A directory read costs ~0.1 ms.
 */
async function sweepTempFiles(root: string, logger: Logger): Promise<void> {
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < SWEEP_DEPTH) await walk(path, depth + 1);
      const match = entry.isFile() ? TEMP_FILE_PATTERN.exec(entry.name) : null;
      const pid = match === null ? undefined : Number(match[1]);
      if (pid !== undefined && pid !== process.pid && !defaultIsPidAlive(pid)) {
        const st = await lstat(path).catch(() => undefined);
        if (st?.isFile()) {
          await unlink(path).catch(() => {});
          logger.warn('workspace: removed a temp file left by a writer that died mid-write', { module: 'workspace/write-lock', path, pid });
        }
      }
    }
  };
  await walk(root, 0);
}
