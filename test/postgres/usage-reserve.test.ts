/**
 * A USD-per-day limit shared by two gateway instances on one PostgreSQL server: two storages with pools of their
 * own on one schema race turns through `usage.reserve` (the check and the insert under one advisory lock), and the
 * spend passes the limit by at most one turn. A real server (initdb + pg_ctl), skipped loudly without the binaries.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@minara/agent';
import { createPostgresStorage } from '@minara/agent/postgres';
import { realComponent } from '../support/real-component';
import { raceTurns } from '../storage/fixtures/usage-race';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');
let server: Promise<RealPostgres> | undefined;
const url = async (): Promise<string> => realServerUrl() ?? (await (server ??= startRealPostgres())).url;
afterAll(async () => {
  if (server) (await server).stop();
});

describe.runIf(available)('usage reservations on a real PostgreSQL server', () => {
  it('two instances (two pools) racing turns take the spend past the limit by at most one turn', async () => {
    const schema = freshSchema('q');
    const open = async () => createPostgresStorage({ connectionString: await url(), schema, logger: silentLogger, poolSize: 4 });
    const a = await open();
    const b = await open();
    try {
      const LIMIT = 95;
      const TURN = 10;
      const [ra, rb] = await Promise.all([
        raceTurns(a.usage, { prefix: 'a', attempts: 60, limitUsd: LIMIT, turnUsd: TURN }),
        raceTurns(b.usage, { prefix: 'b', attempts: 60, limitUsd: LIMIT, turnUsd: TURN }),
      ]);
      const spent = (await a.usage.totals({ userId: 'alice' })).costUsd;
      expect(spent).toBe((ra.admitted + rb.admitted) * TURN);
      expect(spent).toBeLessThanOrEqual(LIMIT + TURN);
      expect(spent).toBeGreaterThanOrEqual(LIMIT);
      // Nothing is held once every turn released; an expired reservation (a dead instance) no longer counts.
      const day = new Date().toISOString().slice(0, 10);
      const ask = (id: string, now: Date, limitUsd: number) =>
        a.usage.reserve({ id, scope: 'user:bob', day, userId: 'bob', sources: ['user'], limitUsd, now: now.toISOString(), expiresAt: new Date(now.getTime() + 1_000).toISOString() });
      const t0 = new Date();
      expect(await ask('dead-1', t0, 5)).toMatchObject({ admitted: true, amountUsd: 5 });
      expect(await ask('dead-2', t0, 5)).toMatchObject({ admitted: false, reservedUsd: 5 });
      expect(await ask('dead-3', new Date(t0.getTime() + 2_000), 5)).toMatchObject({ admitted: true, reservedUsd: 0 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
