/**
 * `@minara/agent/sqlite`: the embedded default {@link Storage} on one SQLite file (better-sqlite3, WAL,
 * FTS5, and sqlite-vec when it loads).
 *
 * @module sqlite
 * @example
 * ```ts
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const { instanceId } = await storage.meta.getInstance();
 * await storage.audit.append({
 *   at: new Date().toISOString(), toolName: 'get_price', tier: 1, source: 'chat',
 *   decision: 'allowed', durationMs: 12, argsJson: '{"symbol":"BTC"}',
 * });
 * console.log(instanceId, storage.capabilities.vector, await storage.schemaVersions());
 * await storage.close();
 * ```
 */
import { assertSupportedNode } from '../../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

import { resolve as resolvePath } from 'node:path';
import type Database from 'better-sqlite3';
import { ConfigError } from '../../errors/subclasses';
import { createConsoleLogger, type Logger } from '../../util/logger';
import type { Storage } from '../types';
import { createSqliteApprovalStorage } from './approvals';
import { auditMigrations, createSqliteAuditStorage } from './audit';
import { createSqliteConversationStorage } from './conversations';
import { coreMigrations } from './core-migrations';
import { createSqliteGrantStorage } from './grants';
import type { SqliteHandle, SqliteMigration } from './handle';
import { createSqliteMemoryStorage, memoryMigrations } from './memory';
import { createSqliteMetaStorage } from './meta';
import { readSchemaVersions, runMigrations } from './migrate';
import { isInMemoryPath, openDatabase } from './open-database';
import { createSqliteHandle } from './sqlite-handle';
import { hostHandle, trackCommits } from './read-cache';
import { createWalCheckpointer, registerWalCheckpointer, type SqliteBackgroundCheckpointOptions, type WalCheckpointer } from './checkpointer';
import { createSqliteJobStorage, jobMigrations } from './jobs';
import { createSqliteUsageStorage, usageMigrations } from './usage';
import { createSqliteTradingStorage, tradingMigrations } from './trading';
import { createSqliteLearningStorage, learningMigrations } from './learning';
import { artifactMigrations, createSqliteArtifactStorage, createSqliteFileStorage } from './artifacts';
import { automationMigrations, createSqliteAlertStorage, createSqliteWorkflowRunStorage } from './automation';
import { type SqliteVerifyReport, verifySqliteStorage } from './verify';
import { controlMigrations, createSqliteControlStorage } from './controls';

export type { SqliteHandle, SqliteMigration } from './handle';
export type { SqliteVerifyProblem, SqliteVerifyReport } from './verify';
export type { SqliteBackgroundCheckpointOptions } from './checkpointer';

/** Domains whose migrations ship with `@minara/agent`; {@link SqliteStorageOptions.migrations} may not use them. */
const BUILT_IN_DOMAINS: readonly string[] = ['core', 'audit', 'memory', 'trading', 'jobs', 'usage', 'learning', 'artifacts', 'controls', 'workflows', 'alerts'];
/** Default of {@link SqliteStorageOptions.mmapSizeBytes}: 256 MiB. */
const DEFAULT_MMAP_SIZE_BYTES = 256 * 1024 * 1024;

/** Options of {@link createSqliteStorage}. */
export interface SqliteStorageOptions {
  /**
   * Database file path, or `':memory:'` for a private in-process database. Parent directories are created.
   * The file is created and migrated on open.
   */
  readonly path: string;
  /**
   * How long one statement waits for another connection's lock (`PRAGMA busy_timeout`). Writes retry as a
   * whole on SQLITE_BUSY with jittered backoff until about 4× this long, then fail with `STORAGE_BUSY`.
   * @default 5000
   */
  readonly busyTimeoutMs?: number | undefined;
  /**
   * How much of the file reads may memory-map (`PRAGMA mmap_size`), in bytes; `0` turns memory-mapped reads
   * off. Mapped pages are read without a system call per page, which makes a full-text search at 100k memories
   * ~15 % faster on the reference machine. Writes are unaffected (they still go through the WAL). The SQLite
   * caveat applies: an I/O error on a mapped page (a failing disk, a network filesystem) becomes a signal that
   * ends the process instead of an error; set `0` on such storage. Ignored for `':memory:'`.
   * @default 268435456 (256 MiB)
   */
  readonly mmapSizeBytes?: number | undefined;
  /**
   * Where warnings go (for example the one line logged when sqlite-vec cannot load).
   * @default createConsoleLogger({ level: 'warn' })
   */
  readonly logger?: Logger | undefined;
  /**
   * `'auto'` loads sqlite-vec into the connection and degrades to full-text search (with one warning) when
   * it cannot load; `false` does not try.
   * @default 'auto'
   */
  readonly vector?: 'auto' | false | undefined;
  /**
   * Loads the vector extension into the connection; throw to report that it is unavailable. A seam for
   * tests and for hosts that ship the extension elsewhere.
   * @default sqliteVec.load (from the `sqlite-vec` package)
   */
  readonly loadVectorExtension?: ((db: Database.Database) => void) | undefined;
  /**
   * The clock for timestamps storage sets itself (instance creation, `updatedAt` on append, migration log).
   * @default () => new Date()
   */
  readonly now?: (() => Date) | undefined;
  /**
   * Migrations of host-defined domains, applied after the built-in `core`, `memory`, `trading`, `jobs`, `usage`, `learning`, `artifacts`, `workflows` and `alerts` ones in the same
   * transaction. Versions run 1..n per domain; `core`, `memory`, `trading`, `jobs`, `usage`, `learning`, `artifacts`, `workflows` and `alerts` are reserved. Reach the tables through
   * {@link SqliteStorage.handle}.
   * @default []
   */
  readonly migrations?: readonly SqliteMigration[] | undefined;
  /**
   * Run WAL checkpoints on a worker thread with its own connection, so the connection that commits no longer
   * copies the WAL into the database file and fsyncs it every ~1000 pages (about a third of an audit append's cost
   * under load). Nothing starts at open: the thread starts after the connection's first `startAfterCommits` (256)
   * commits, is unref'd (it never keeps the process alive) and ends on `close()`. While it runs, SQLite's own
   * autocheckpoint stays on at 4000 pages as a safety net (the WAL stays bounded if the thread falls behind); if the
   * thread fails or dies, that is logged and the autocheckpoint returns to SQLite's default of 1000 pages.
   * Durability and what readers see do not change. `false` keeps every checkpoint on the committing connection.
   * Ignored for `':memory:'`. See docs/storage.md, "Checkpoints".
   * @default true
   */
  readonly backgroundCheckpoints?: boolean | SqliteBackgroundCheckpointOptions | undefined;
}

/** The SQLite {@link Storage}, plus the file path and the connection handle for host-defined domains. */
export interface SqliteStorage extends Storage {
  /** Always `'sqlite'`. */
  readonly kind: 'sqlite';
  /** The path the database was opened with. */
  readonly path: string;
  /**
   * The connection: `read`/`write` with busy retries, cached `prepare`. Fails once the storage is closed. The
   * engine's read caches cannot see what host statements change: a `read`/`write` through this handle clears them
   * when it returns, and taking `db` or a statement from `prepare` turns them off (docs/storage.md, "Read caches").
   */
  readonly handle: SqliteHandle;
  /**
   * Check the file and every structure derived from rows, changing nothing: `PRAGMA integrity_check` and
   * `foreign_key_check`; the full-text index against the memories (FTS5's own `integrity-check`, after indexing
   * the rows still waiting, inside a savepoint that is rolled back); float vectors, their sign bits and the
   * sqlite-vec index against the rows and each other; memory edges against their rows; executed approvals
   * carrying their execution signature. Used by the crash test after every kill; run it after a host crash or
   * before a backup. It takes the write lock briefly (the full-text comparison), like any write.
   *
   * @example
   * ```ts
   * const report = await storage.verify();
   * if (!report.ok) for (const p of report.problems) console.error(`${p.check}: ${p.message}`);
   * ```
   */
  verify(): Promise<SqliteVerifyReport>;
}

function checkOptions(options: unknown): asserts options is SqliteStorageOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('createSqliteStorage: options must be an object with at least a `path`', ['options']);
  }
  const o = options as Record<string, unknown>;
  if (typeof o.path !== 'string' || o.path.length === 0) {
    throw new ConfigError(`createSqliteStorage: path must be a file path or ':memory:', got ${JSON.stringify(o.path) ?? 'undefined'}`, ['path']);
  }
  const mmap = o.mmapSizeBytes;
  if (mmap !== undefined && (typeof mmap !== 'number' || !Number.isSafeInteger(mmap) || mmap < 0)) {
    throw new ConfigError(`createSqliteStorage: mmapSizeBytes must be a non-negative integer (bytes; 0 turns memory-mapped reads off), got ${String(mmap)}`, ['mmapSizeBytes']);
  }
  const busy = o.busyTimeoutMs;
  if (busy !== undefined && (typeof busy !== 'number' || !Number.isSafeInteger(busy) || busy < 0)) {
    throw new ConfigError(`createSqliteStorage: busyTimeoutMs must be a non-negative integer (milliseconds), got ${String(busy)}`, ['busyTimeoutMs']);
  }
  if (o.vector !== undefined && o.vector !== 'auto' && o.vector !== false) {
    throw new ConfigError(`createSqliteStorage: vector must be 'auto' or false, got ${JSON.stringify(o.vector)}`, ['vector']);
  }
  for (const field of ['loadVectorExtension', 'now'] as const) {
    if (o[field] !== undefined && typeof o[field] !== 'function') {
      throw new ConfigError(`createSqliteStorage: ${field} must be a function, got ${typeof o[field]}`, [field]);
    }
  }
  checkBackgroundCheckpoints(o.backgroundCheckpoints);
  if (o.migrations !== undefined) {
    if (!Array.isArray(o.migrations)) throw new ConfigError('createSqliteStorage: migrations must be an array of SqliteMigration', ['migrations']);
    (o.migrations as unknown[]).forEach((m, i) => {
      const domain = (m as { domain?: unknown } | null)?.domain;
      if (typeof domain === 'string' && BUILT_IN_DOMAINS.includes(domain)) {
        throw new ConfigError(`createSqliteStorage: migrations[${i}].domain "${domain}" is reserved for @minara/agent; use a domain of your own`, [`migrations[${i}].domain`]);
      }
    });
  }
}

function checkBackgroundCheckpoints(value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  if (typeof value !== 'object' || value === null) {
    throw new ConfigError(`createSqliteStorage: backgroundCheckpoints must be true, false or { startAfterCommits? }, got ${JSON.stringify(value)}`, ['backgroundCheckpoints']);
  }
  for (const field of ['startAfterCommits'] as const) {
    const n = (value as Record<string, unknown>)[field];
    if (n !== undefined && (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1)) {
      throw new ConfigError(`createSqliteStorage: backgroundCheckpoints.${field} must be a positive integer (commits), got ${String(n)}`, [`backgroundCheckpoints.${field}`]);
    }
  }
}

/** The background checkpointer for a file database, unless turned off. */
function checkpointerFor(path: string, db: Database.Database, logger: Logger, busyTimeoutMs: number, option: SqliteStorageOptions['backgroundCheckpoints']): WalCheckpointer | undefined {
  if (option === false || isInMemoryPath(path)) return undefined;
  const tuning = typeof option === 'object' ? option : {};
  return createWalCheckpointer({
    path: path.startsWith('file:') ? path : resolvePath(path), db, logger, busyTimeoutMs,
    startAfterCommits: tuning.startAfterCommits,
  });
}

/**
 * Open (creating and migrating as needed) a SQLite {@link Storage}. The connection runs in WAL mode with
 * `synchronous = NORMAL`, `foreign_keys = ON` and a busy timeout; writes are `BEGIN IMMEDIATE` transactions
 * retried on SQLITE_BUSY, so two processes (say a REPL and a gateway) can share one file. FTS5 is required;
 * sqlite-vec is optional and reported in `capabilities.vector`.
 *
 * Throws `ConfigError` for bad options, StorageError `MIGRATION_FAILED` when a migration fails (nothing is
 * applied), and StorageError `STORAGE_ERROR` when the file cannot be opened or lacks FTS5.
 *
 * @example
 * ```ts
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db', busyTimeoutMs: 5000 });
 * if (!storage.capabilities.vector) console.warn(storage.capabilities.vectorUnavailableReason);
 * await storage.conversations.ensureSession({ id: 's1', now: new Date().toISOString() });
 * await storage.conversations.appendMessages('s1', [
 *   { role: 'user', json: JSON.stringify({ role: 'user', content: 'price of BTC?' }), createdAt: new Date().toISOString() },
 * ]);
 * await storage.close();
 * ```
 */
export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  checkOptions(options);
  const {
    path,
    busyTimeoutMs = 5000,
    mmapSizeBytes = DEFAULT_MMAP_SIZE_BYTES,
    logger = createConsoleLogger({ level: 'warn' }),
    vector = 'auto',
    loadVectorExtension,
    now = () => new Date(),
    migrations: extraMigrations = [],
    backgroundCheckpoints,
  } = options;

  const opened = openDatabase({ path, busyTimeoutMs, mmapSizeBytes, logger, vector, loadVectorExtension });
  const checkpointer = checkpointerFor(path, opened.db, logger, busyTimeoutMs, backgroundCheckpoints);
  const onCommit = checkpointer === undefined ? undefined : () => checkpointer.noteCommit();
  // The domains share one connection through a handle that knows where each write transaction commits: the read
  // caches (capability switches, approvals, kv, sessions, last seq) update only after a commit.
  const handle = trackCommits(createSqliteHandle({ db: opened.db, vectorAvailable: opened.vectorAvailable, logger, busyTimeoutMs, onCommit }));
  const { reads } = handle;
  const migrations = [...coreMigrations, ...auditMigrations, ...memoryMigrations, ...tradingMigrations, ...jobMigrations, ...usageMigrations, ...learningMigrations, ...artifactMigrations, ...controlMigrations, ...automationMigrations, ...extraMigrations];
  try {
    runMigrations(opened.db, migrations, { vectorAvailable: opened.vectorAvailable, busyTimeoutMs, now });
  } catch (error) {
    handle.close();
    throw error;
  }
  const knownDomains = new Set([...BUILT_IN_DOMAINS, ...migrations.map((m) => m.domain)]);
  const memory = createSqliteMemoryStorage(handle);

  const storage: SqliteStorage = {
    kind: 'sqlite',
    path,
    handle: hostHandle(handle),
    capabilities: Object.freeze({
      fullText: true,
      vector: opened.vectorAvailable,
      ...(opened.vectorUnavailableReason === undefined ? {} : { vectorUnavailableReason: opened.vectorUnavailableReason }),
      multiProcess: !isInMemoryPath(path),
    }),
    meta: createSqliteMetaStorage(handle, now, reads),
    audit: createSqliteAuditStorage(handle, reads),
    approvals: createSqliteApprovalStorage(handle, reads),
    grants: createSqliteGrantStorage(handle),
    conversations: createSqliteConversationStorage(handle, now, reads),
    memory,
    trading: createSqliteTradingStorage(handle),
    jobs: createSqliteJobStorage(handle),
    usage: createSqliteUsageStorage(handle),
    learning: createSqliteLearningStorage(handle),
    artifacts: createSqliteArtifactStorage(handle),
    files: createSqliteFileStorage(handle),
    controls: createSqliteControlStorage(handle, reads),
    workflows: createSqliteWorkflowRunStorage(handle),
    alerts: createSqliteAlertStorage(handle),
    batchWrites(start) {
      handle.writeAll('storage.batchWrites', start);
    },
    batchReads(start) {
      reads.burst(start);
    },
    async verify() {
      return verifySqliteStorage(handle);
    },
    async schemaVersions() {
      return handle.read('schemaVersions', (db) => readSchemaVersions(db, knownDomains));
    },
    async close() {
      if (!handle.closed) {
        try {
          memory.catchUpIndex();
        } catch (error) {
          logger.warn('memory: could not index the rows still waiting for the full-text index on close; the next search will', {
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }
      // The thread's connection closes first, so this one is the last: SQLite checkpoints and removes the WAL.
      await checkpointer?.close();
      handle.close();
    },
  };
  if (checkpointer !== undefined) registerWalCheckpointer(storage, checkpointer);
  return storage;
}
