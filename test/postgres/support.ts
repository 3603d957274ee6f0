/**
 * Postgres for the tests: an in-process PGlite database (no server; every schema a fresh, empty storage) and
 * a real PostgreSQL server started from the machine's binaries (`initdb` into a temp dir, `pg_ctl start` on a
 * free loopback port, stopped and removed afterwards).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Storage } from '@minara/agent';
import { createPostgresStorage, pglitePool, type PostgresPool, type PostgresStorage, type PostgresStorageOptions } from '@minara/agent/postgres';

let pglite: Promise<PostgresPool> | undefined;
let schemaSeq = 0;
let pgvector: Promise<unknown> | undefined;

/**
 * PGlite's pgvector extension, when installed: the `@electric-sql/pglite-pgvector` package (PGlite 0.5 ships
 * pgvector separately), or the module at `MINARA_PGLITE_PGVECTOR` (a path to its `dist/index.js`).
 * `undefined` when neither loads: the PGlite runs then check the `vector_unavailable` degradation instead.
 */
export function pglitePgvector(): Promise<unknown> {
  pgvector ??= (async () => {
    for (const specifier of ['@electric-sql/pglite-pgvector', process.env.MINARA_PGLITE_PGVECTOR]) {
      if (specifier === undefined || specifier === '') continue;
      try {
        const mod = (await import(/* @vite-ignore */ specifier)) as { vector?: unknown };
        if (mod.vector !== undefined) return mod.vector;
      } catch {
        // not installed here
      }
    }
    return undefined;
  })();
  return pgvector;
}

/** One PGlite database per test file (starting one costs ~2 s), behind the pool seam; with pgvector when it loads. */
export function sharedPglitePool(): Promise<PostgresPool> {
  pglite ??= (async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const vector = await pglitePgvector();
    return pglitePool(vector === undefined ? await PGlite.create() : await PGlite.create({ extensions: { vector } as never }));
  })();
  return pglite;
}

/** A unique schema name for one storage. */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${++schemaSeq}_${Math.random().toString(36).slice(2, 8)}`;
}

/** A fresh, empty Postgres storage on the shared PGlite database. */
export async function pgliteStorage(options: Partial<PostgresStorageOptions> = {}): Promise<PostgresStorage> {
  return createPostgresStorage({ pool: await sharedPglitePool(), schema: freshSchema(), logger: silentLogger, ...options });
}

/** Whether the PostgreSQL server binaries are on PATH. */
export function serverBinariesAvailable(): boolean {
  return ['initdb', 'pg_ctl', 'postgres'].every((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0);
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A running throwaway server. */
export interface RealPostgres {
  readonly url: string;
  readonly port: number;
  /** A URL for a new database created on this server. */
  createDatabase(name: string): string;
  stop(): void;
}

/**
 * Start a throwaway PostgreSQL server: `initdb` (trust auth, C locale) into a temp dir, `pg_ctl start` on a
 * free loopback port with the socket in the same dir. Running as root is refused by Postgres, so as root the
 * server runs as the `nobody` user (the temp dir is handed to it).
 */
export async function startRealPostgres(options: { readonly durable?: boolean } = {}): Promise<RealPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'minara-pg-'));
  const data = join(dir, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    if (!asRoot) return execFileSync(cmd, args, { stdio: 'pipe' });
    // No chown here: while the server runs it creates and deletes files under `dir` (as nobody already), and a
    // recursive chown racing a deleted temp file failed the run's teardown (ENOENT). The two chowns below suffice.
    return execFileSync('su', ['-s', '/bin/sh', 'nobody', '-c', [cmd, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')], { stdio: 'pipe' });
  };
  if (asRoot) {
    execFileSync('chmod', ['755', dir]);
    execFileSync('chown', ['-R', 'nobody', dir]);
  }
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--locale=C', '--encoding=UTF8', '--no-sync']);
  // Tests trade durability for speed; the benchmark runs the server's durable defaults (fsync, synchronous commit).
  const tuning = options.durable === true ? 'shared_buffers = 512MB\n' : 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n';
  writeFileSync(join(data, 'postgresql.auto.conf'), `${tuning}max_connections = 200\n`, { flag: 'a' });
  if (asRoot) execFileSync('chown', ['-R', 'nobody', dir]);
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`, 'start']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    url,
    port,
    createDatabase(name) {
      run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-c', `CREATE DATABASE ${name}`]);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

const DOMAINS = ['meta', 'audit', 'approvals', 'grants', 'conversations', 'memory', 'trading', 'jobs', 'usage', 'learning', 'workflows', 'alerts'] as const;

/**
 * A storage returned synchronously whose calls wait for `open()` (test glue for suites whose engine factories
 * are synchronous, like `createSqliteStorage`). `capabilities` reads the opened storage's once it is open.
 */
export function lazyStorage(open: () => Promise<Storage>): Storage {
  const ready = open();
  let opened: Storage | undefined;
  ready.then(
    (s) => {
      opened = s;
    },
    () => undefined,
  );
  const domain = (name: (typeof DOMAINS)[number]) =>
    new Proxy(
      {},
      {
        get: (_target, prop) =>
          prop === 'then' ? undefined : async (...args: unknown[]) => {
            const target = (await ready)[name] as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>;
            return target[prop]!(...args);
          },
      },
    );
  const out: Record<string, unknown> = {
    kind: 'postgres',
    get capabilities() {
      return opened?.capabilities ?? { fullText: true, vector: false, multiProcess: true };
    },
    schemaVersions: async () => (await ready).schemaVersions(),
    close: async () => (await ready).close(),
  };
  for (const name of DOMAINS) out[name] = domain(name);
  return out as unknown as Storage;
}

/** The run's real server URL (set by the global setup), if one is running. */
export function realServerUrl(): string | undefined {
  const url = process.env.MINARA_TEST_POSTGRES_URL;
  return url === undefined || url === '' ? undefined : url;
}

/** A fresh, empty Postgres storage (own schema) on the run's real server. */
export async function realServerStorage(options: Partial<PostgresStorageOptions> = {}): Promise<PostgresStorage> {
  const url = realServerUrl();
  if (url === undefined) throw new Error('no real PostgreSQL server in this run (MINARA_TEST_POSTGRES_URL is unset)');
  return createPostgresStorage({ connectionString: url, schema: freshSchema('r'), logger: silentLogger, poolSize: 4, ...options });
}

/** The Postgres engines of the shared suites: PGlite always, the real server when the run has one. */
export function postgresEngines(): Array<{ name: string; make: () => Storage }> {
  return [
    { name: 'postgres (PGlite)', make: () => lazyStorage(() => pgliteStorage()) },
    ...(realServerUrl() === undefined ? [] : [{ name: 'postgres (real server)', make: () => lazyStorage(() => realServerStorage()) }]),
  ];
}
