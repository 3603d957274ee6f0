/**
 * A USD-per-day limit shared by two gateway instances on one PostgreSQL server: two storages with pools of their
 * own on one schema race turns through `usage.reserve` (the check and the insert under one advisory lock), and the
 * spend passes the limit by at most one turn. A real server (initdb + pg_ctl), skipped loudly without the binaries.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@minara/agent';
import { createPostgresStorage, type PostgresPool, type PostgresPoolClient } from '@minara/agent/postgres';
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

  it('a turn that records its cost and releases its hold while another instance decides is counted once, never zero times', async () => {
    // The admission reads the ledger and the holds. Another instance's turn ends between those reads: it writes its
    // ledger row, then drops its hold, outside the admission lock. Read in two statements (two snapshots under READ
    // COMMITTED), that turn is in neither; read in one, it is in at least one. The trap runs the other instance's
    // turn end right after the decision's first statement that reads the ledger.
    const schema = freshSchema('qr');
    const raw = new pg.Pool({ connectionString: await url(), max: 2 });
    let trap: (() => Promise<void>) | undefined;
    const client = (c: PostgresPoolClient): PostgresPoolClient => ({
      query: async (text, values) => {
        const result = await c.query(text, values);
        if (trap !== undefined && /usage_ledger/.test(text) && /^\s*SELECT/i.test(text)) {
          const spring = trap;
          trap = undefined;
          await spring();
        }
        return result;
      },
      release: (destroy) => c.release(destroy),
    });
    const pool: PostgresPool = { query: (text, values) => raw.query(text, values as unknown[]), connect: async () => client(await raw.connect()), end: () => raw.end() };
    const a = await createPostgresStorage({ pool, schema, logger: silentLogger });
    const b = await createPostgresStorage({ connectionString: await url(), schema, logger: silentLogger, poolSize: 2 });
    try {
      const day = new Date().toISOString().slice(0, 10);
      const now = new Date();
      const ask = (usage: typeof a.usage, id: string) =>
        usage.reserve({ id, scope: 'user:carol', day, userId: 'carol', sources: ['user'], limitUsd: 95, now: now.toISOString(), expiresAt: new Date(now.getTime() + 60_000).toISOString() });
      expect(await ask(b.usage, 'held')).toMatchObject({ admitted: true, amountUsd: 95 });
      trap = async () => {
        await b.usage.record({ turnId: 'held', sessionId: 's', userId: 'carol', source: 'user', modelId: 'm', at: new Date().toISOString(), inputTokens: 0, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 100 });
        expect(await b.usage.releaseReservation('held')).toBe(true);
      };
      const decision = await ask(a.usage, 'late');
      expect(trap).toBeUndefined();
      expect(decision.admitted).toBe(false);
      expect(decision.spentUsd + decision.reservedUsd).toBeGreaterThanOrEqual(95);
      expect(await ask(a.usage, 'later')).toMatchObject({ admitted: false, spentUsd: 100, reservedUsd: 0 });
    } finally {
      await a.close();
      await b.close();
      await raw.end();
    }
  });
});
