import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { StorageError } from '../../errors/subclasses';
import { assertSupportedNode } from '../../util/node-version';
import type { Logger } from '../../util/logger';
import { ensurePrivateDirSync, ensurePrivateFileSync } from '../../util/private-fs';
import { withBusyRetry } from './sqlite-handle';

/** What {@link openDatabase} needs. */
export interface OpenDatabaseOptions {
  readonly path: string;
  readonly busyTimeoutMs: number;
  /** `PRAGMA mmap_size` for a file database (ignored in memory). */
  readonly mmapSizeBytes: number;
  readonly logger: Logger;
  readonly vector: 'auto' | false;
  readonly loadVectorExtension: ((db: Database.Database) => void) | undefined;
}

/** An open, configured connection. */
export interface OpenedDatabase {
  readonly db: Database.Database;
  readonly vectorAvailable: boolean;
  readonly vectorUnavailableReason: string | undefined;
}

/** True for `:memory:` and the empty (temporary) path, which live in this connection only. */
export function isInMemoryPath(path: string): boolean {
  return path === ':memory:' || path === '' || path.startsWith('file::memory:');
}

/**
 * Open the file (creating parent directories 0700 and the file 0600, so its -wal and -shm are 0600 too), set WAL / synchronous=NORMAL / busy_timeout / foreign_keys / mmap_size,
 * check FTS5 and try to load sqlite-vec. Closes the connection again if any step fails.
 */
export function openDatabase(options: OpenDatabaseOptions): OpenedDatabase {
  const { path, busyTimeoutMs, logger, vector } = options;
  assertSupportedNode(); // the addon crashes an older Node instead of failing
  if (!isInMemoryPath(path)) {
    try {
      ensurePrivateDirSync(dirname(resolve(path)));
    } catch (error) {
      throw new StorageError('open', `cannot create the directory for ${JSON.stringify(path)}: ${(error as Error).message}`, { cause: error });
    }
    // SQLite creates the -wal and -shm files with the database file's mode: a new database starts private.
    if (!path.startsWith('file:')) {
      try {
        ensurePrivateFileSync(resolve(path));
      } catch (error) {
        throw new StorageError('open', `cannot create the database file ${JSON.stringify(path)}: ${(error as Error).message}`, { cause: error });
      }
    }
  }
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new StorageError('open', `cannot open SQLite database ${JSON.stringify(path)}: ${(error as Error).message}`, { cause: error });
  }
  try {
    withBusyRetry('open', busyTimeoutMs, () => {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      if (!isInMemoryPath(path)) db.pragma(`mmap_size = ${options.mmapSizeBytes}`);
    });
    checkFts5(db);
    const { vectorAvailable, vectorUnavailableReason } = loadVector(db, vector, options.loadVectorExtension, logger, path);
    return { db, vectorAvailable, vectorUnavailableReason };
  } catch (error) {
    db.close();
    throw error;
  }
}

function checkFts5(db: Database.Database): void {
  try {
    db.exec('CREATE VIRTUAL TABLE temp.minara_fts5_probe USING fts5(x); DROP TABLE temp.minara_fts5_probe;');
  } catch (error) {
    throw new StorageError(
      'open',
      `this SQLite build has no FTS5 full-text search (${(error as Error).message}); memory search needs it. Use the better-sqlite3 prebuilt binaries, which include FTS5`,
      { cause: error },
    );
  }
}

function loadVector(
  db: Database.Database,
  vector: 'auto' | false,
  loader: ((db: Database.Database) => void) | undefined,
  logger: Logger,
  path: string,
): { vectorAvailable: boolean; vectorUnavailableReason: string | undefined } {
  if (vector === false) return { vectorAvailable: false, vectorUnavailableReason: 'disabled by options (vector: false)' };
  try {
    (loader ?? sqliteVec.load)(db);
    db.prepare('SELECT vec_version()').get();
    return { vectorAvailable: true, vectorUnavailableReason: undefined };
  } catch (error) {
    const reason = `sqlite-vec failed to load: ${error instanceof Error ? error.message : String(error)}`;
    logger.warn('sqlite-vec unavailable; vector search is off and memory search falls back to full-text (BM25)', { path, reason });
    return { vectorAvailable: false, vectorUnavailableReason: reason };
  }
}
