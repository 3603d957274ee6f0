/**
 * The driver seam of the Postgres engine: the few methods of node-postgres's `pg.Pool` the engine calls,
 * declared here so no `pg` type reaches the public declarations (a `pg.Pool` satisfies them as it is), and
 * {@link pglitePool}, which puts an in-process PGlite database behind the same seam.
 */

/** What one statement returns. */
export interface PostgresQueryResult {
  readonly rows: Array<Record<string, unknown>>;
  /** Rows changed by INSERT/UPDATE/DELETE (`null` when the driver does not say). */
  readonly rowCount: number | null;
}

/** A server notification (`LISTEN`/`NOTIFY`). */
export interface PostgresNotification {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/** One connection checked out of a pool (a `pg.PoolClient` satisfies it). */
export interface PostgresPoolClient {
  query(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult>;
  /** Return the connection; pass `true` (or an error) to destroy it instead. */
  release(destroy?: boolean | Error): void;
  /** Notifications of a connection that ran `LISTEN`; optional (PGlite has none). */
  on?(event: 'notification', listener: (message: PostgresNotification) => void): unknown;
  /** Errors of the connection (a dropped socket); optional. */
  on?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * The pool the engine runs on: `pg.Pool` from node-postgres (`new Pool({ connectionString })`) or
 * {@link pglitePool}. `query` runs one statement on any free connection; `connect` checks one out for a
 * transaction.
 */
export interface PostgresPool {
  query(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult>;
  connect(): Promise<PostgresPoolClient>;
  /** Close every connection (called by `storage.close()` only for a pool the storage created itself). */
  end?(): Promise<void>;
}

/** The parts of a PGlite instance (`@electric-sql/pglite`) that {@link pglitePool} uses. */
export interface PgliteLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; affectedRows?: number | undefined }>;
  exec(text: string): Promise<Array<{ rows: unknown[]; affectedRows?: number | undefined }>>;
}

/**
 * Put a PGlite database (Postgres compiled to WASM, in this process) behind the pool seam, so
 * `createPostgresStorage({ pool: pglitePool(db) })` runs the Postgres engine without a server. PGlite has one
 * session, so the adapter hands it to one caller at a time: `connect()` waits until the previous checkout is
 * released, and a plain `query` waits its turn as well. `LISTEN` is not offered (the engine polls instead).
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * import { createPostgresStorage, pglitePool } from '@minara/agent/postgres';
 *
 * const storage = await createPostgresStorage({ pool: pglitePool(await PGlite.create()) });
 * ```
 */
export function pglitePool(db: PgliteLike): PostgresPool {
  if (typeof db !== 'object' || db === null || typeof db.query !== 'function' || typeof db.exec !== 'function') {
    throw new TypeError('pglitePool: db must be a PGlite instance (with query and exec)');
  }
  let tail: Promise<void> = Promise.resolve();
  /** Wait for the session; resolves with the function that hands it on. */
  const acquire = (): Promise<() => void> => {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = tail;
    tail = previous.then(() => turn);
    return previous.then(() => release);
  };
  const run = async (text: string, values?: readonly unknown[]): Promise<PostgresQueryResult> => {
    if (values === undefined || values.length === 0) {
      // Simple protocol: may hold several statements (migrations); the last result is the answer.
      const results = await db.exec(text);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as Array<Record<string, unknown>>, rowCount: last?.affectedRows ?? null };
    }
    const r = await db.query(text, [...values]);
    return { rows: r.rows as Array<Record<string, unknown>>, rowCount: r.affectedRows ?? null };
  };
  return {
    async query(text, values) {
      const release = await acquire();
      try {
        return await run(text, values);
      } finally {
        release();
      }
    },
    async connect() {
      const release = await acquire();
      let released = false;
      return {
        query: (text, values) => (released ? Promise.reject(new Error('pglitePool: the connection was released')) : run(text, values)),
        release() {
          if (released) return;
          released = true;
          release();
        },
      };
    },
  };
}
