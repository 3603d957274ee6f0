import { type MemoryStoreOptions, createMemoryStore, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { pglitePgvector, postgresEngines } from '../postgres/support';
import { realComponent } from '../support/real-component';

/** The engines every contract test runs against. */
export const engines = [
  { name: 'sqlite', make: () => createSqliteStorage({ path: ':memory:', logger: silentLogger }) },
  { name: 'in-memory', make: () => createInMemoryStorage() },
  ...postgresEngines(),
];

/**
 * The engines with a vector index: every engine, except Postgres-on-PGlite when PGlite's pgvector extension
 * is not installed (`@electric-sql/pglite-pgvector`), and the real server (no pgvector packaged for it here; its
 * degradation is checked in test/postgres/real-server.test.ts).
 */
export const pgliteHasVector = realComponent('pgvector for PGlite', (await pglitePgvector()) !== undefined, 'npm install (the devDependency @electric-sql/pglite-pgvector)');
/** Said once, by the hybrid suite that leaves the engine out. */
export const warnNoPgliteVector = () => pgliteHasVector || console.warn('\n[SKIPPED] hybrid (vector) memory tests on Postgres/PGlite: @electric-sql/pglite-pgvector is not installed (set MINARA_PGLITE_PGVECTOR to its dist/index.js)\n');
export const vectorEngines = engines.filter((e) => (e.name !== 'postgres (PGlite)' || pgliteHasVector) && e.name !== 'postgres (real server)');

/** A clock that advances one second per call, from 2026-01-01. */
export function fakeClock(start = '2026-01-01T00:00:00.000Z'): () => Date {
  let t = Date.parse(start);
  return () => new Date((t += 1000));
}

/** A store on a fresh engine with a fake clock and a silent logger. */
export function makeStore(make: () => MemoryStoreOptions['storage'], overrides: Partial<MemoryStoreOptions> = {}) {
  const storage = make();
  const store = createMemoryStore({ storage, scope: { userId: 'u1' }, now: fakeClock(), logger: silentLogger, ...overrides });
  return { storage, store };
}

// The lead adds `createFakeEmbedder` to `@minara/agent/testing`; until then it is imported from its file.
export { createFakeEmbedder, type FakeEmbedder } from '@minara/agent/testing';
