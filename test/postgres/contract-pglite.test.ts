import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@minara/agent';
import { createPostgresStorage, type PostgresMigration } from '@minara/agent/postgres';
import { runStorageContract } from '../storage/contract';
import { runControlsContract } from '../storage/controls-contract';
import { freshSchema, pgliteStorage, sharedPglitePool } from './support';

runStorageContract('postgres (PGlite)', ({ now }) => pgliteStorage({ now }));
runControlsContract('postgres (PGlite)', () => pgliteStorage());

describe('createPostgresStorage on PGlite', () => {
  it('describes itself as a multi-process postgres engine and reports the vector capability honestly', async () => {
    const storage = await pgliteStorage();
    expect(storage.kind).toBe('postgres');
    expect(storage.capabilities.multiProcess).toBe(true);
    expect(storage.capabilities.fullText).toBe(true);
    if (!storage.capabilities.vector) expect(storage.capabilities.vectorUnavailableReason).toMatch(/pgvector unavailable/);
    expect(await storage.schemaVersions()).toEqual({ core: 2, audit: 3, memory: 4, trading: 1, jobs: 1, usage: 2, learning: 4, artifacts: 1, controls: 1, workflows: 1, alerts: 1 });
    await storage.close();
  });
});
describe('createPostgresStorage options', () => {
  it('refuses bad options with a ConfigError naming the field', async () => {
    const pool = await sharedPglitePool();
    const cases: Array<[unknown, string[]]> = [
      [{}, ['pool', 'connectionString']],
      [{ pool, connectionString: 'postgres://x/y' }, ['pool', 'connectionString']],
      [{ connectionString: 'mysql://x/y' }, ['connectionString']],
      [{ pool: { query: () => undefined } }, ['pool']],
      [{ pool, schema: 'Bad-Schema' }, ['schema']],
      [{ pool, vector: 'yes' }, ['vector']],
      [{ pool, poolSize: 0 }, ['poolSize']],
      [{ pool, acquireTimeoutMs: -1 }, ['acquireTimeoutMs']],
      [{ pool, migrations: [{ domain: 'memory', version: 1, name: 'x', up: async () => undefined }] }, ['migrations[0].domain']],
    ];
    for (const [options, fields] of cases) {
      const error: unknown = await createPostgresStorage(options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(fields)).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).fields).toEqual(fields);
    }
  });

  it('runs host-defined migrations in the same transaction and exposes transaction() for their tables', async () => {
    const watchlist: PostgresMigration[] = [
      { domain: 'watchlist', version: 1, name: 'create watchlist', up: async (tx, { t }) => void (await tx.run(`CREATE TABLE ${t('watchlist')} (user_id TEXT NOT NULL, symbol TEXT NOT NULL, PRIMARY KEY (user_id, symbol))`)) },
    ];
    const schema = freshSchema('w');
    const storage = await createPostgresStorage({ pool: await sharedPglitePool(), schema, migrations: watchlist, logger: (await import('@minara/agent')).silentLogger });
    await storage.transaction('watchlist.add', (tx) => tx.run(`INSERT INTO "${schema}".watchlist (user_id, symbol) VALUES ($1, $2)`, ['u1', 'BTC']));
    expect(await storage.transaction('watchlist.list', (tx) => tx.all(`SELECT symbol FROM "${schema}".watchlist`))).toEqual([{ symbol: 'BTC' }]);
    expect(await storage.schemaVersions()).toMatchObject({ watchlist: 1, core: 2 });
    await storage.close();
    const broken: PostgresMigration[] = [...watchlist, { domain: 'watchlist', version: 2, name: 'broken v2', up: async (tx) => void (await tx.run('SELECT * FROM no_such_table')) }];
    const error: unknown = await createPostgresStorage({ pool: await sharedPglitePool(), schema, migrations: broken }).catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe('MIGRATION_FAILED');
    expect((error as Error).message).toMatch(/migration watchlist v2 "broken v2" failed and was rolled back/);
  });
});
afterAll(() => undefined);
