/**
 * `@minara/agent/postgres`: the {@link Storage} on PostgreSQL, so a fleet of gateways and background workers
 * shares one database. Runs on node-postgres (`pg`, an optional peer dependency, loaded only when a
 * `connectionString` is given) or on any pool with `pg.Pool`'s `query`/`connect`, including an in-process
 * PGlite database through {@link pglitePool}.
 *
 * @module postgres
 * @example
 * ```ts
 * import { createPostgresStorage } from '@minara/agent/postgres';
 *
 * const storage = await createPostgresStorage({ connectionString: process.env.MINARA_DATABASE_URL });
 * const { instanceId } = await storage.meta.getInstance();
 * console.log(instanceId, await storage.schemaVersions());
 * await storage.close();
 * ```
 */
import { assertSupportedNode } from '../../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

import { ConfigError, StorageError } from '../../errors/subclasses';
import { createConsoleLogger, type Logger } from '../../util/logger';
import { guardClosed } from '../in-memory/guard';
import { checkId, invalidArgument } from '../sqlite/checks';
import type { Storage } from '../types';
import { createPgAuditStorage, pgAuditMigrations } from './audit';
import { createPgApprovalStorage, createPgConversationStorage, createPgGrantStorage, createPgMetaStorage } from './core';
import { createPgHandle, isUnavailable, type PgEndpoint, type PgHandle } from './handle';
import { createPgLearningStorage } from './learning';
import { createPgMemoryStorage } from './memory';
import { readPgSchemaVersions, runPgMigrations, type PostgresMigration } from './migrate';
import { artifactMigrations, createPgArtifactStorage, createPgFileStorage } from './artifacts';
import { automationMigrations, createPgAlertStorage, createPgWorkflowRunStorage } from './automation';
import { createPgJobStorage, createPgTradingStorage, createPgUsageStorage } from './ops';
import { createPgNotifier, type PostgresChange } from './notify';
import type { PostgresPool, PostgresPoolClient } from './pool';
import { controlMigrations, createPgControlStorage } from './controls';
import { coreMigrations, jobMigrations, learningMigrations, memoryMigrations, tradingMigrations, usageMigrations } from './schema';

export { pglitePool } from './pool';
export type { PgliteLike, PostgresNotification, PostgresPool, PostgresPoolClient, PostgresQueryResult } from './pool';
export type { PgRow as PostgresRow, PgTx as PostgresTx } from './handle';
export type { PostgresMigration } from './migrate';
export type { PostgresChange } from './notify';

const BUILT_IN_DOMAINS: readonly string[] = ['core', 'audit', 'memory', 'trading', 'jobs', 'usage', 'learning', 'artifacts', 'controls', 'workflows', 'alerts'];
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Options of {@link createPostgresStorage}. Give exactly one of `pool` and `connectionString`. */
export interface PostgresStorageOptions {
  /**
   * A pool to run on: a `pg.Pool`, or {@link pglitePool} over a PGlite database. The storage does not close a
   * pool it was given.
   */
  readonly pool?: PostgresPool | undefined;
  /**
   * A `postgres://user:password@host:port/database` URL; the storage creates (and on `close()` ends) a
   * `pg.Pool` of `poolSize` connections. Needs the `pg` package installed.
   */
  readonly connectionString?: string | undefined;
  /**
   * The schema the tables live in (created when missing). Several storages can share a database under
   * different schemas. Lower-case letters, digits and `_`.
   * @default 'public'
   */
  readonly schema?: string | undefined;
  /**
   * Apply pending migrations at open (under an advisory lock, so instances starting together migrate once).
   * With `false` the storage refuses to open a schema that is not current.
   * @default true
   */
  readonly migrate?: boolean | undefined;
  /** Where warnings go. @default createConsoleLogger({ level: 'warn' }) */
  readonly logger?: Logger | undefined;
  /** `'auto'`: use pgvector when `CREATE EXTENSION IF NOT EXISTS vector` succeeds; `false`: never. @default 'auto' */
  readonly vector?: 'auto' | false | undefined;
  /** Clock for timestamps storage sets itself. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** Connections of the pool created from `connectionString`. @default 10 */
  readonly poolSize?: number | undefined;
  /**
   * Longest wait for a free pooled connection; past it a call fails with `STORAGE_BUSY` (retryable) instead
   * of queueing forever.
   * @default 10000
   */
  readonly acquireTimeoutMs?: number | undefined;
  /**
   * How often change notices are polled when the driver cannot deliver `NOTIFY` (PGlite); with node-postgres
   * one held connection `LISTEN`s instead.
   * @default 500
   */
  readonly pollIntervalMs?: number | undefined;
  /** Migrations of host-defined domains, after the built-in ones (which are reserved). @default [] */
  readonly migrations?: readonly PostgresMigration[] | undefined;
}

/** The Postgres {@link Storage}. */
export interface PostgresStorage extends Storage {
  /** Always `'postgres'`. */
  readonly kind: 'postgres';
  /** The schema the tables live in. */
  readonly schema: string;
  /** Run `fn` in one transaction on this storage's pool (host-defined domains); tables as `schema.name`. */
  transaction<T>(operation: string, fn: (tx: import('./handle').PgTx) => Promise<T>): Promise<T>;
  /**
   * Call `listener` for every change notice on `channel`, from this instance (`local: true`) and every other
   * instance on the database. `meta` carries the key of each `meta.set`/`meta.delete` (the emergency stop is
   * `emergency_stop`). Delivered through `LISTEN/NOTIFY` (milliseconds) or, on PGlite, polled. Returns the
   * unsubscribe function.
   *
   * @example
   * ```ts
   * storage.listen('meta', ({ payload, local }) => { if (payload === 'emergency_stop' && !local) refreshStopBanner(); });
   * ```
   */
  listen(channel: string, listener: (change: PostgresChange) => void): () => void;
  /** Publish a notice on `channel` to every instance (for host-defined changes, e.g. a workspace file edited). */
  publish(channel: string, payload: string): Promise<void>;
  /** `'notify'` when notices arrive by `LISTEN`, `'poll'` when polled, `'idle'` before the first `listen`. */
  readonly changeDelivery: 'notify' | 'poll' | 'idle';
}

/** `host:port` of a connection string, without credentials, for error messages. */
function endpointOf(connectionString: string): PgEndpoint | undefined {
  try {
    const url = new URL(connectionString);
    const host = url.searchParams.get('host') ?? (url.hostname === '' ? 'localhost' : decodeURIComponent(url.hostname));
    return { host, port: Number(url.port === '' ? (url.searchParams.get('port') ?? 5432) : url.port) };
  } catch {
    return undefined;
  }
}

function checkOptions(options: unknown): asserts options is PostgresStorageOptions {
  if (typeof options !== 'object' || options === null) throw new ConfigError('createPostgresStorage: options must be an object with `pool` or `connectionString`', ['options']);
  const o = options as Record<string, unknown>;
  const hasPool = o.pool !== undefined;
  const hasUrl = o.connectionString !== undefined;
  if (hasPool === hasUrl) throw new ConfigError('createPostgresStorage: give exactly one of `pool` and `connectionString`', ['pool', 'connectionString']);
  if (hasPool && (typeof (o.pool as PostgresPool).query !== 'function' || typeof (o.pool as PostgresPool).connect !== 'function')) {
    throw new ConfigError('createPostgresStorage: pool must have query() and connect() (a pg.Pool, or pglitePool(db))', ['pool']);
  }
  if (hasUrl && (typeof o.connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(o.connectionString))) {
    throw new ConfigError('createPostgresStorage: connectionString must be a postgres:// or postgresql:// URL', ['connectionString']);
  }
  if (o.schema !== undefined && (typeof o.schema !== 'string' || !SCHEMA_NAME.test(o.schema))) {
    throw new ConfigError(`createPostgresStorage: schema must match ${String(SCHEMA_NAME)}, got ${JSON.stringify(o.schema)}`, ['schema']);
  }
  if (o.vector !== undefined && o.vector !== 'auto' && o.vector !== false) throw new ConfigError(`createPostgresStorage: vector must be 'auto' or false, got ${JSON.stringify(o.vector)}`, ['vector']);
  for (const field of ['poolSize', 'acquireTimeoutMs', 'pollIntervalMs'] as const) {
    const v = o[field];
    if (v !== undefined && !(typeof v === 'number' && Number.isSafeInteger(v) && v > 0)) throw new ConfigError(`createPostgresStorage: ${field} must be a positive integer, got ${String(v)}`, [field]);
  }
  if (o.migrate !== undefined && typeof o.migrate !== 'boolean') throw new ConfigError('createPostgresStorage: migrate must be a boolean', ['migrate']);
  if (o.migrations !== undefined) {
    if (!Array.isArray(o.migrations)) throw new ConfigError('createPostgresStorage: migrations must be an array of PostgresMigration', ['migrations']);
    (o.migrations as unknown[]).forEach((m, i) => {
      const domain = (m as { domain?: unknown } | null)?.domain;
      if (typeof domain === 'string' && BUILT_IN_DOMAINS.includes(domain)) {
        throw new ConfigError(`createPostgresStorage: migrations[${i}].domain "${domain}" is reserved for @minara/agent; use a domain of your own`, [`migrations[${i}].domain`]);
      }
    });
  }
}

async function createPgPool(connectionString: string, max: number, acquireTimeoutMs: number): Promise<PostgresPool> {
  let mod: { default?: { Pool?: unknown }; Pool?: unknown };
  try {
    mod = (await import('pg')) as typeof mod;
  } catch (error) {
    throw new ConfigError('createPostgresStorage: `connectionString` needs the `pg` package (npm install pg), or pass a `pool`', ['connectionString'], { cause: error });
  }
  const Pool = (mod.Pool ?? mod.default?.Pool) as new (config: Record<string, unknown>) => PostgresPool & {
    on(event: 'error', fn: (e: Error) => void): unknown;
    on(event: 'connect', fn: (client: PostgresPoolClient) => void): unknown;
  };
  const pool = new Pool({ connectionString, max, connectionTimeoutMillis: acquireTimeoutMs });
  // An idle connection the server drops emits 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => undefined);
  // No JIT: the engine runs short indexed statements, and a planner estimate above `jit_above_cost` (after an ANALYZE
  // the catch-up read of memory search is estimated at ~all of a tenant's rows) made each one pay ~50–250 ms of JIT
  // start-up for a 0.04 ms index scan: the search tail after a bulk load (docs/storage.md). A `SET` (not the startup
  // `options` parameter, which PgBouncer refuses) sent when the connection opens; the connection is handed out only
  // once it has finished, so no statement runs beside it (node-postgres warns about that, and pg@9 refuses it).
  const settingUp = new WeakMap<PostgresPoolClient, Promise<unknown>>();
  pool.on('connect', (client) => {
    // A checked-out connection has no pool listener: a socket error is emitted on it, and its query reports it.
    client.on?.('error', () => undefined);
    settingUp.set(client, client.query('SET jit = off').catch(() => undefined));
  });
  const connect = async (): Promise<PostgresPoolClient> => {
    const client = await pool.connect();
    const setUp = settingUp.get(client);
    if (setUp !== undefined) {
      settingUp.delete(client);
      await setUp;
    }
    return client;
  };
  return {
    connect,
    // As pg.Pool's own `query`: check a connection out, run one statement, hand it back (destroyed after an error).
    async query(text, values) {
      const client = await connect();
      try {
        const result = await client.query(text, values);
        client.release();
        return result;
      } catch (error) {
        client.release(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    },
    end: () => pool.end?.() ?? Promise.resolve(),
  };
}

/** Probe pgvector: `CREATE EXTENSION IF NOT EXISTS vector`, then the `embedding_v` column. */
async function probeVector(handle: PgHandle, logger: Logger): Promise<{ available: boolean; reason?: string }> {
  try {
    await handle.tx('vector', async (tx) => {
      await tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.vector:${handle.schemaName}`]);
      await tx.run('CREATE EXTENSION IF NOT EXISTS vector');
      await tx.run(`ALTER TABLE ${handle.t('memory_vectors')} ADD COLUMN IF NOT EXISTS embedding_v vector`);
    });
    return { available: true };
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    const reason = `pgvector unavailable: ${cause instanceof Error ? cause.message : String(cause)}`;
    logger.warn('pgvector unavailable; vector search is off and memory search uses full text only', { reason });
    return { available: false, reason };
  }
}

/**
 * Open a {@link Storage} on PostgreSQL: connect, apply pending migrations under an advisory lock, probe
 * pgvector, and return the storage. Every domain behaves as on SQLite (the same contract suite passes);
 * concurrency across instances uses Postgres's own tools: compare-and-set `UPDATE … RETURNING` for approvals
 * and job claims, row locks for message `seq` and paper-trading fills, advisory locks for migrations and the
 * learning capture.
 *
 * Throws `ConfigError` for bad options; StorageError `STORAGE_UNAVAILABLE` (naming host and port) when the
 * server cannot be reached; `MIGRATION_FAILED` when a migration fails or the database schema is newer than
 * this code (the message names the version).
 *
 * @example
 * ```ts
 * import { createPostgresStorage } from '@minara/agent/postgres';
 * const storage = await createPostgresStorage({ connectionString: 'postgres://minara@db:5432/minara', poolSize: 20 });
 * ```
 */
export async function createPostgresStorage(options: PostgresStorageOptions): Promise<PostgresStorage> {
  checkOptions(options);
  const {
    schema = 'public',
    migrate = true,
    logger = createConsoleLogger({ level: 'warn' }),
    vector = 'auto',
    now = () => new Date(),
    poolSize = 10,
    acquireTimeoutMs = 10_000,
    pollIntervalMs = 500,
    migrations: extra = [],
  } = options;
  const owned = options.pool === undefined;
  const endpoint = options.connectionString === undefined ? undefined : endpointOf(options.connectionString);
  const pool = options.pool ?? (await createPgPool(options.connectionString as string, poolSize, acquireTimeoutMs));
  const handle = createPgHandle({ pool, schemaName: schema, logger, endpoint, acquireTimeoutMs });
  const migrations = [...coreMigrations, ...pgAuditMigrations, ...memoryMigrations, ...tradingMigrations, ...jobMigrations, ...usageMigrations, ...learningMigrations, ...artifactMigrations, ...controlMigrations, ...automationMigrations, ...extra];
  const known = new Set([...BUILT_IN_DOMAINS, ...migrations.map((m) => m.domain)]);
  let vectorState: { available: boolean; reason?: string };
  try {
    if (migrate) await runPgMigrations(handle, migrations, now);
    else {
      const versions = await readPgSchemaVersions(handle, known);
      const latest = new Map<string, number>();
      for (const m of migrations) latest.set(m.domain, Math.max(latest.get(m.domain) ?? 0, m.version));
      for (const [domain, v] of latest) {
        const have = versions[domain] ?? 0;
        if (have !== v) {
          throw new StorageError('migrate', `domain "${domain}" is at schema v${have}, this code needs v${v}; ${have < v ? 'open once with migrate: true' : 'upgrade the package'}`, { code: 'MIGRATION_FAILED' });
        }
      }
    }
    vectorState = vector === false ? { available: false, reason: 'disabled by options (vector: false)' } : await probeVector(handle, logger);
  } catch (error) {
    handle.close();
    if (owned) await pool.end?.().catch(() => undefined);
    if (isUnavailable((error as { cause?: unknown }).cause ?? error) || (error as { code?: unknown }).code === 'STORAGE_UNAVAILABLE') {
      const where = endpoint === undefined ? 'the database server' : `${endpoint.host}:${endpoint.port}`;
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw new StorageError('createPostgresStorage', `cannot connect to PostgreSQL at ${where}: ${cause instanceof Error ? cause.message : String(cause)}`, {
        code: 'STORAGE_UNAVAILABLE', retryable: true, cause,
      });
    }
    throw error;
  }
  const notifier = createPgNotifier({ pool, handle, logger, pollIntervalMs });
  const isClosed = () => handle.closed;
  const g = <T extends object>(domain: string, target: T): T => guardClosed(domain, target, isClosed);

  return {
    kind: 'postgres',
    schema,
    capabilities: Object.freeze({
      fullText: true,
      vector: vectorState.available,
      ...(vectorState.reason === undefined ? {} : { vectorUnavailableReason: vectorState.reason }),
      multiProcess: true,
    }),
    meta: g('meta', createPgMetaStorage(handle, now, (first, payloadSql) => notifier.inline(first, 'meta', payloadSql))),
    audit: g('audit', createPgAuditStorage(handle)),
    approvals: g('approvals', createPgApprovalStorage(handle)),
    grants: g('grants', createPgGrantStorage(handle)),
    conversations: g('conversations', createPgConversationStorage(handle, now)),
    memory: g('memory', createPgMemoryStorage(handle, { vectorAvailable: vectorState.available, vectorUnavailableReason: vectorState.reason })),
    trading: g('trading', createPgTradingStorage(handle)),
    jobs: g('jobs', createPgJobStorage(handle)),
    usage: g('usage', createPgUsageStorage(handle)),
    artifacts: g('artifacts', createPgArtifactStorage(handle)),
    files: g('files', createPgFileStorage(handle)),
    learning: g('learning', createPgLearningStorage(handle)),
    controls: g('controls', createPgControlStorage(handle)),
    workflows: g('workflows', createPgWorkflowRunStorage(handle)),
    alerts: g('alerts', createPgAlertStorage(handle)),
    async transaction(operation, fn) {
      return handle.tx(operation, fn);
    },
    listen(channel, listener) {
      if (handle.closed) throw new StorageError('listen', 'storage is closed');
      return notifier.listen(channel, listener);
    },
    async publish(channel, payload) {
      checkId('publish', 'channel', channel);
      if (typeof payload !== 'string') throw invalidArgument('publish', `payload must be a string, got ${typeof payload}`);
      await handle.tx('publish', (tx) => notifier.publish(tx, channel, payload));
    },
    get changeDelivery() {
      return notifier.mode;
    },
    async schemaVersions() {
      if (handle.closed) throw new StorageError('schemaVersions', 'storage is closed');
      return readPgSchemaVersions(handle, known);
    },
    async close() {
      if (handle.closed) return;
      await notifier.close();
      handle.close();
      if (owned) await pool.end?.().catch(() => undefined);
    },
  };
}
