import type Database from 'better-sqlite3';
import { MinaraError } from '../../errors/minara-error';
import { StorageError } from '../../errors/subclasses';
import type { Logger } from '../../util/logger';
import type { SqliteHandle } from './handle';

/** How many prepared statements the cache keeps before evicting the oldest. */
const STATEMENT_CACHE_SIZE = 512;

/** The handle plus what only the engine itself uses. */
export interface SqliteHandleInternal extends SqliteHandle {
  readonly closed: boolean;
  /**
   * Run the writes `start` begins in one `BEGIN IMMEDIATE … COMMIT`, all or nothing: each runs directly in the
   * transaction (no savepoint of its own), and when any fails the whole batch rolls back and this throws.
   */
  writeAll(operation: string, start: () => void): void;
  /** Close the connection; idempotent. */
  close(): void;
}

/** Options of {@link createSqliteHandle}. */
export interface SqliteHandleOptions {
  readonly db: Database.Database;
  readonly vectorAvailable: boolean;
  readonly logger: Logger;
  /** The connection's busy timeout; retries stop about 4× this long after the first attempt. */
  readonly busyTimeoutMs: number;
  /** Called after each top-level write transaction commits (the background checkpointer counts them). */
  readonly onCommit?: (() => void) | undefined;
}

/** True for SQLITE_BUSY / SQLITE_LOCKED and their extended codes. */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Block the thread for `ms` (better-sqlite3 is synchronous, so the retry loop is too). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleepCell, 0, 0, ms);
}

/** Jittered exponential backoff: about 2, 4, 8, … ms, capped at 50 ms, ±50 %. */
function backoffMs(attempt: number): number {
  const base = Math.min(50, 2 ** (attempt + 1));
  return base * (0.5 + Math.random());
}

/**
 * Run `fn` and retry it while it fails with SQLITE_BUSY / SQLITE_LOCKED, until a deadline of about
 * 4× the busy timeout; then throw StorageError `STORAGE_BUSY`. Other failures are wrapped in
 * StorageError naming `operation` (MinaraErrors pass through unchanged).
 */
export function withBusyRetry<T>(operation: string, busyTimeoutMs: number, fn: () => T, onRetry?: () => void): T {
  const deadline = Date.now() + Math.max(4 * busyTimeoutMs, 0);
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusyError(error)) throw toStorageError(operation, error);
      const wait = backoffMs(attempt);
      if (Date.now() + wait > deadline) {
        throw new StorageError(
          operation,
          `the database stayed locked for ${Math.max(4 * busyTimeoutMs, 0)} ms (busy timeout ${busyTimeoutMs} ms, ${attempt + 1} attempts); another process holds a long write transaction`,
          { code: 'STORAGE_BUSY', cause: error, retryable: true },
        );
      }
      onRetry?.();
      sleepSync(wait);
    }
  }
}

/** Wrap anything that is not already a MinaraError in a StorageError naming the operation. */
export function toStorageError(operation: string, error: unknown): MinaraError {
  if (MinaraError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StorageError(operation, message, { cause: error });
}

function assertSync(operation: string, value: unknown): void {
  if (typeof (value as { then?: unknown } | null)?.then === 'function') {
    throw new StorageError(operation, 'the callback returned a Promise; SQLite transactions must be synchronous');
  }
}

/** Committed: nothing after this may make the write look failed to its caller (the audit chain caches its tip after it). */
function afterCommit(onCommit: () => void, logger: Logger, operation: string): void {
  try {
    onCommit();
  } catch (error) {
    logger.warn('sqlite: the after-commit hook failed', { operation, error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * The one place statements run: `read` and `write` retry on SQLITE_BUSY and wrap failures, `write` opens
 * `BEGIN IMMEDIATE` (nested writes become savepoints), `prepare` caches statements by SQL text.
 */
export function createSqliteHandle(options: SqliteHandleOptions): SqliteHandleInternal {
  const { db, vectorAvailable, logger, busyTimeoutMs, onCommit } = options;
  const cache = new Map<string, Database.Statement>();
  let closed = false;
  let depth = 0;
  let failedNestedWrites = 0;
  let batching = false;

  const assertOpen = (operation: string): void => {
    if (closed) throw new StorageError(operation, 'storage is closed');
  };

  const prepare = (sql: string): Database.Statement => {
    assertOpen('prepare');
    let stmt = cache.get(sql);
    if (stmt === undefined) {
      try {
        stmt = db.prepare(sql);
      } catch (error) {
        throw toStorageError('prepare', error);
      }
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      cache.set(sql, stmt);
    }
    return stmt;
  };

  const rollback = (): void => {
    try {
      if (db.inTransaction) prepare('ROLLBACK').run();
    } catch (error) {
      logger.error('sqlite rollback failed', { error: error instanceof Error ? error.message : String(error) });
    }
  };

  const read = <T>(operation: string, fn: (db: Database.Database) => T): T => {
    assertOpen(operation);
    if (depth > 0) return fn(db);
    return withBusyRetry(operation, busyTimeoutMs, () => {
      const result = fn(db);
      assertSync(operation, result);
      return result;
    });
  };

  /** A write begun directly by a batch: no savepoint (a failure rolls the whole batch back), only counted. */
  const batchedWrite = <T>(operation: string, fn: (db: Database.Database) => T): T => {
    depth++;
    try {
      const result = fn(db);
      assertSync(operation, result);
      return result;
    } catch (error) {
      failedNestedWrites++;
      throw toStorageError(operation, error);
    } finally {
      depth--;
    }
  };

  const nestedWrite = <T>(operation: string, fn: (db: Database.Database) => T): T => {
    if (batching && depth === 1) return batchedWrite(operation, fn);
    const name = `minara_sp_${depth}`;
    db.exec(`SAVEPOINT ${name}`);
    depth++;
    try {
      const result = fn(db);
      assertSync(operation, result);
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      failedNestedWrites++;
      if (db.inTransaction) {
        db.exec(`ROLLBACK TO ${name}`);
        db.exec(`RELEASE ${name}`);
      }
      throw toStorageError(operation, error);
    } finally {
      depth--;
    }
  };

  const write = <T>(operation: string, fn: (db: Database.Database) => T): T => {
    assertOpen(operation);
    if (depth > 0) return nestedWrite(operation, fn);
    const result = withBusyRetry(
      operation,
      busyTimeoutMs,
      () => {
        prepare('BEGIN IMMEDIATE').run();
        depth++;
        try {
          const result = fn(db);
          assertSync(operation, result);
          prepare('COMMIT').run();
          return result;
        } catch (error) {
          rollback();
          throw error;
        } finally {
          depth--;
        }
      },
      () => logger.debug('sqlite busy; retrying write', { operation }),
    );
    if (onCommit !== undefined) afterCommit(onCommit, logger, operation);
    return result;
  };

  const writeAll = (operation: string, start: () => void): void => {
    write(operation, () => {
      const failedBefore = failedNestedWrites;
      batching = true;
      try {
        start();
      } finally {
        batching = false;
      }
      if (failedNestedWrites !== failedBefore) throw new StorageError(operation, 'a write in the batch failed; the batch was rolled back');
    });
  };

  return {
    get db(): Database.Database {
      assertOpen('db');
      return db;
    },
    vectorAvailable,
    logger,
    get closed() {
      return closed;
    },
    writeAll,
    read,
    write,
    prepare,
    close() {
      if (closed) return;
      closed = true;
      cache.clear();
      db.close();
    },
  };
}
