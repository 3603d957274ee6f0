import pg from 'pg';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { pglitePool, type PostgresPool, type PostgresPoolClient } from '@minara/agent/postgres';
import { sharedPglitePool } from './support';

describe('the pool seam', () => {
  it('a pg.Pool and a pg.PoolClient satisfy PostgresPool and PostgresPoolClient as they are', () => {
    expectTypeOf<pg.Pool>().toExtend<PostgresPool>();
    expectTypeOf<pg.PoolClient>().toExtend<PostgresPoolClient>();
  });

  it('pglitePool refuses something that is not a PGlite database, naming what it needs', () => {
    expect(() => pglitePool({} as never)).toThrow(/pglitePool: db must be a PGlite instance \(with query and exec\)/);
  });

  it('pglitePool hands the one PGlite session to one caller at a time', async () => {
    const pool = await sharedPglitePool();
    const first = await pool.connect();
    let secondGot = false;
    const second = pool.connect().then((c) => {
      secondGot = true;
      return c;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(secondGot).toBe(false);
    await first.query('BEGIN');
    await first.query('SELECT 1');
    await first.query('COMMIT');
    first.release();
    const c2 = await second;
    expect((await c2.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
    c2.release();
  });
});
