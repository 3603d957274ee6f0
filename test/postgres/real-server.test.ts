/**
 * The storage contract, the memory degradation without pgvector, and the start-up faults against a real
 * PostgreSQL server started for this file (initdb into a temp dir, pg_ctl on a free loopback port).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore, MinaraError, silentLogger } from '@minara/agent';
import { createPostgresStorage, type PostgresStorage } from '@minara/agent/postgres';
import { realComponent } from '../support/real-component';
import { runStorageContract } from '../storage/contract';
import { freePort, freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');

// The run's server (global setup), or one of this file's own when the file runs alone with another config.
let server: Promise<RealPostgres> | undefined;
const real = async (): Promise<{ url: string }> => {
  const url = realServerUrl();
  if (url !== undefined) return { url };
  server ??= startRealPostgres();
  return server;
};
afterAll(async () => {
  if (server) (await server).stop();
});

const open = async (options: Partial<Parameters<typeof createPostgresStorage>[0]> = {}): Promise<PostgresStorage> =>
  createPostgresStorage({ connectionString: (await real()).url, schema: freshSchema('r'), logger: silentLogger, poolSize: 4, ...options });

describe.runIf(available)('postgres (real server)', () => {
  runStorageContract('postgres (real server)', ({ now }) => open({ now }));

  it('without pgvector reports vector_unavailable, refuses vectors with MEMORY_INVALID, and memory search still works on full text', async () => {
    const storage = await open();
    try {
      expect(storage.capabilities.vector).toBe(false);
      expect(storage.capabilities.vectorUnavailableReason).toMatch(/pgvector unavailable: .*vector/);
      expect(await storage.memory.vectorInfo()).toMatchObject({ available: false });
      const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
      const { id } = await store.write({ content: 'Prefers limit orders on ETH with 50 bps slippage', category: 'preference' });
      await expect(storage.memory.upsertVectors({ userId: 'u1' }, [{ id, contentHash: 'x', vector: new Float32Array([1, 0]) }])).rejects.toMatchObject({ code: 'MEMORY_INVALID' });
      const found = await store.search('slippage');
      expect(found.map((h) => h.id)).toEqual([id]);
    } finally {
      await storage.close();
    }
  });

  it('two instances starting together on a fresh schema migrate once', async () => {
    const schema = freshSchema('m');
    const [a, b] = await Promise.all([open({ schema }), open({ schema })]);
    expect(await a.schemaVersions()).toEqual(await b.schemaVersions());
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses a schema newer than the code and says which version', async () => {
    const schema = freshSchema('n');
    const first = await open({ schema });
    await first.transaction('test.bump', async (tx) => {
      await tx.run(`INSERT INTO "${schema}".schema_migrations (domain, version, name, applied_at) VALUES ('core', 99, 'from the future', 'x')`);
    });
    await first.close();
    const error: unknown = await open({ schema }).catch((e: unknown) => e);
    expect(MinaraError.isInstance(error) && error.code).toBe('MIGRATION_FAILED');
    expect((error as Error).message).toMatch(/domain "core" at schema v99, newer than the v\d+ this version/);
  });

  it('connection refused at start: STORAGE_UNAVAILABLE naming host and port, no stack in the message', async () => {
    const port = await freePort();
    const error: unknown = await createPostgresStorage({ connectionString: `postgres://u:secret@127.0.0.1:${port}/db`, logger: silentLogger }).catch((e: unknown) => e);
    expect(MinaraError.isInstance(error) && error.code).toBe('STORAGE_UNAVAILABLE');
    expect((error as MinaraError).retryable).toBe(true);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).not.toContain('secret');
    expect((error as Error).message).not.toMatch(/\n\s+at /);
  });

  it('a connection dropped mid-transaction: a retryable STORAGE_UNAVAILABLE, nothing half-written, and the next call works', async () => {
    const storage = await open();
    const killer = await open({ schema: storage.schema, migrate: false });
    try {
      await storage.conversations.ensureSession({ id: 's1', now: '2026-03-01T00:00:00.000Z' });
      const error: unknown = await storage
        .transaction('test.dropped', async (tx) => {
          await tx.run(`INSERT INTO "${storage.schema}".messages (session_id, seq, role, json, created_at) VALUES ('s1', 1, 'user', '{}', 'x')`);
          const pid = (await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!.pid;
          await killer.transaction('test.kill', (k) => k.run('SELECT pg_terminate_backend($1)', [pid]));
          await tx.run(`INSERT INTO "${storage.schema}".messages (session_id, seq, role, json, created_at) VALUES ('s1', 2, 'user', '{}', 'x')`);
        })
        .catch((e: unknown) => e);
      expect(MinaraError.isInstance(error) && error.code).toBe('STORAGE_UNAVAILABLE');
      expect((error as MinaraError).retryable).toBe(true);
      expect(await storage.conversations.listMessages('s1')).toEqual([]);
      const [m] = await storage.conversations.appendMessages('s1', [{ role: 'user', json: '{"role":"user","content":"again"}', createdAt: '2026-03-01T00:00:01.000Z' }]);
      expect(m?.seq).toBe(1);
    } finally {
      await killer.close();
      await storage.close();
    }
  });

  it('pool exhaustion waits with a bound, then fails with a clear retryable STORAGE_BUSY', async () => {
    const storage = await open({ poolSize: 1, acquireTimeoutMs: 300 });
    try {
      let release!: () => void;
      const held = storage.transaction('test.hold', () => new Promise<void>((resolve) => (release = resolve)));
      const error: unknown = await storage.meta.get('k').catch((e: unknown) => e);
      release();
      await held;
      expect(MinaraError.isInstance(error) && error.code).toBe('STORAGE_BUSY');
      expect((error as MinaraError).retryable).toBe(true);
      expect((error as Error).message).toMatch(/no database connection became free within 300 ms/);
      expect(await storage.meta.get('k')).toBeUndefined();
    } finally {
      await storage.close();
    }
  });
});
