/**
 * The connection handle every Postgres domain module receives: statements on the pool, transactions on one
 * checked-out connection (retried as a whole on serialization failures and deadlocks), errors wrapped in
 * `StorageError` (an unreachable server as `STORAGE_UNAVAILABLE`, naming host and port), and schema-qualified
 * table names.
 */
import { MinaraError } from '../../errors/minara-error';
import { StorageError } from '../../errors/subclasses';
import type { Logger } from '../../util/logger';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from './pool';

/** A row as the driver returns it. */
export type PgRow = Record<string, unknown>;

/** Statements inside one transaction (one connection). */
export interface PgTx {
  /** Run one statement; returns its rows. */
  all<R = PgRow>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Run one statement; returns the first row or undefined. */
  get<R = PgRow>(sql: string, params?: readonly unknown[]): Promise<R | undefined>;
  /** Run one statement; returns how many rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

/** What each Postgres domain module receives. */
export interface PgHandle extends PgTx {
  /** The quoted schema (`"public"`). */
  readonly schema: string;
  /** The schema name as given. */
  readonly schemaName: string;
  /** `"schema"."name"` for a table of this storage. */
  t(name: string): string;
  readonly logger: Logger;
  readonly closed: boolean;
  /** Run `fn` in one transaction (`BEGIN … COMMIT`), retried as a whole on serialization failure or deadlock. */
  tx<T>(operation: string, fn: (tx: PgTx) => Promise<T>): Promise<T>;
  /** Statements on the pool with `operation` naming them in errors. */
  op(operation: string): PgTx;
  /** Wrap a driver error as the engine reports it. */
  wrap(operation: string, error: unknown): Error;
  /** Mark closed; later calls fail with "storage is closed". */
  close(): void;
}

const RETRYABLE_SQLSTATE = new Set(['40001', '40P01']);
const UNAVAILABLE_SQLSTATE = /^(08|57P0[123])/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const MAX_TX_ATTEMPTS = 6;

/** Where the pool connects to, for error messages (`host:port`), without credentials. */
export interface PgEndpoint {
  readonly host: string;
  readonly port: number;
}

/** True when `error` says the server cannot be reached (refused, dropped, shut down). */
export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && (UNAVAILABLE_ERRNO.has(e.code) || UNAVAILABLE_SQLSTATE.test(e.code))) return true;
  const msg = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection (?:was )?closed|Client has encountered a connection error|terminating connection/i.test(msg);
}

/** True for pg.Pool's "timeout exceeded when trying to connect" (every connection busy past the bound). */
export function isPoolTimeout(error: unknown): boolean {
  const msg = (error as { message?: unknown } | null)?.message;
  return typeof msg === 'string' && /timeout exceeded when trying to connect|timed out waiting for a pool connection/i.test(msg);
}

/** The SQLSTATE of a driver error, if any. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Options of {@link createPgHandle}. */
export interface PgHandleOptions {
  readonly pool: PostgresPool;
  readonly schemaName: string;
  readonly logger: Logger;
  readonly endpoint?: PgEndpoint | undefined;
  /** Most time `connect()` may wait for a free connection before `STORAGE_BUSY`. */
  readonly acquireTimeoutMs: number;
}

/** Create the handle over a pool. */
export function createPgHandle(options: PgHandleOptions): PgHandle {
  const { pool, schemaName, logger, endpoint, acquireTimeoutMs } = options;
  const schema = `"${schemaName.replaceAll('"', '""')}"`;
  let closed = false;
  const guarded = new WeakSet<object>();
  const where = endpoint === undefined ? 'the database server' : `the database server at ${endpoint.host}:${endpoint.port}`;

  const wrap = (operation: string, error: unknown): Error => {
    if (MinaraError.isInstance(error)) return error;
    if (isUnavailable(error)) {
      const reason = error instanceof Error ? error.message : String(error);
      return new StorageError(operation, `cannot reach ${where}: ${reason}`, { code: 'STORAGE_UNAVAILABLE', retryable: true, cause: error });
    }
    if (isPoolTimeout(error)) {
      return new StorageError(operation, `no database connection became free within ${acquireTimeoutMs} ms (every pooled connection is busy); raise the pool size or lower the load`, {
        code: 'STORAGE_BUSY',
        retryable: true,
        cause: error,
      });
    }
    const state = sqlState(error);
    const reason = error instanceof Error ? error.message : String(error);
    return new StorageError(operation, `${reason}${state === undefined ? '' : ` (SQLSTATE ${state})`}`, { cause: error, retryable: state !== undefined && RETRYABLE_SQLSTATE.has(state) });
  };

  const ensureOpen = (operation: string): void => {
    if (closed) throw new StorageError(operation, 'storage is closed');
  };

  /** `pool.connect()` bounded by `acquireTimeoutMs`; a connection that arrives late is handed back. */
  const acquire = async (): Promise<PostgresPoolClient> => {
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const pending = pool.connect();
    try {
      return await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            reject(new Error(`timed out waiting for a pool connection after ${acquireTimeoutMs} ms`));
          }, acquireTimeoutMs);
          timer.unref?.();
        }),
      ]);
    } catch (error) {
      if (timedOut) pending.then((c) => c.release(), () => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };

  const runOn = (run: (sql: string, params?: readonly unknown[]) => Promise<PostgresQueryResult>): PgTx => ({
    async all<R>(sql: string, params?: readonly unknown[]) {
      return (await run(sql, params)).rows as R[];
    },
    async get<R>(sql: string, params?: readonly unknown[]) {
      return (await run(sql, params)).rows[0] as R | undefined;
    },
    async run(sql: string, params?: readonly unknown[]) {
      return (await run(sql, params)).rowCount ?? 0;
    },
  });

  const op = (operation: string): PgTx =>
    runOn(async (sql, params) => {
      ensureOpen(operation);
      try {
        return await pool.query(sql, params ?? []);
      } catch (error) {
        throw wrap(operation, error);
      }
    });

  const handle: PgHandle = {
    schema,
    schemaName,
    logger,
    get closed() {
      return closed;
    },
    t: (name) => `${schema}.${name}`,
    ...op('query'),
    op,
    wrap,
    async tx<T>(operation: string, fn: (tx: PgTx) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        ensureOpen(operation);
        let client: PostgresPoolClient;
        try {
          client = await acquire();
        } catch (error) {
          throw wrap(operation, error);
        }
        let broken = false;
        if (!guarded.has(client) && typeof client.on === 'function') {
          // A socket error on a checked-out connection is emitted on it; the failing query reports it to the caller.
          client.on('error', () => undefined);
          guarded.add(client);
        }
        try {
          await client.query('BEGIN');
          const result = await fn(runOn((sql, params) => client.query(sql, params ?? [])));
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection is gone or unusable; the pool drops it
          }
          const state = sqlState(error);
          if (state !== undefined && RETRYABLE_SQLSTATE.has(state) && attempt < MAX_TX_ATTEMPTS) {
            logger.debug('postgres: transaction retried', { operation, sqlstate: state, attempt });
            await sleep(2 + Math.random() * 10 * attempt);
            continue;
          }
          throw wrap(operation, error);
        } finally {
          client.release(broken);
        }
      }
    },
    close() {
      closed = true;
    },
  };
  return handle;
}
