/**
 * A learning capture that closes trades checks which of their methodology attributions exist. On PostgreSQL that
 * read asked `methodology_outcomes` for `trade_id = ANY(…)`, a column no index leads with (the key is
 * `(methodology_id, trade_id)`): every close scanned the whole table, every tenant's attributions. This file fills
 * the table with 60,000 attributions of another tenant, analyzes it, captures an open and a close through the public
 * API, and EXPLAINs the statement the storage sent: the key, never a sequential scan.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStorage } from '@minara/agent/postgres';
import { DEFAULT_METHODOLOGY_POLICY, type NewTradeExecution, silentLogger } from '@minara/agent';
import { realComponent } from '../support/real-component';
import { explainSent, recordingPool, type SentStatement } from './plans';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH (Debian: apt-get install postgresql)');

const at = (minutes: number) => new Date(Date.parse('2026-03-01T00:00:00.000Z') + minutes * 60_000).toISOString();

function exec(over: Partial<NewTradeExecution> & Pick<NewTradeExecution, 'orderId'>): NewTradeExecution {
  return {
    toolName: 'open_perps_position', action: 'open', kind: 'perp', asset: 'BTC', assetClass: 'crypto_major', side: 'long', direction: 'long', quantity: 1,
    price: 100, notionalUsd: 100, feeUsd: 0, realizedPnlUsd: 0, role: 'minara.core', methodologyIds: [], simulated: true, provider: 'paper', at: at(0),
    ...over,
  };
}

describe.runIf(available)('learning capture on PostgreSQL with many attributions', () => {
  it('a close reads its attributions by key, not by scanning every tenant\'s, and attributes once', async () => {
    const own = realServerUrl() === undefined ? await startRealPostgres() : undefined;
    const pool = new pg.Pool({ connectionString: own?.url ?? realServerUrl()!, max: 4 });
    const sent: SentStatement[] = [];
    // Captures run in a transaction on a checked-out client: the recording pool sees those statements too.
    const recording = recordingPool(pool, sent);
    const schema = freshSchema('lp');
    const storage = await createPostgresStorage({ pool: recording, schema, logger: silentLogger });
    try {
      const mine = { userId: 'tenant-a' };
      const theirs = { userId: 'tenant-z' };
      const { methodology: z } = await storage.learning.upsertMethodology(theirs, { assetClass: 'crypto_major', text: 'Breakout', normalizedText: 'breakout', origin: 'api', now: at(0) });
      // Another tenant's history: 60,000 closed trades, each attributed to its methodology.
      await pool.query(`INSERT INTO ${schema}.trade_history (user_id, order_id, tool_name, action, kind, asset, side, quantity, price, notional_usd, fee_usd, realized_pnl_usd, role, simulated, provider, at, status, created_at)
        SELECT 'tenant-z', 'z' || g, 'open_perps_position', 'open', 'perp', 'ETH', 'long', 1, 100, 100, 0, 1, 'minara.core', true, 'paper', $1, 'closed', $1 FROM generate_series(1, 60000) g`, [at(0)]);
      await pool.query(`INSERT INTO ${schema}.methodology_outcomes (methodology_id, trade_id, user_id, outcome, created_at) SELECT $1, id, 'tenant-z', 'win', $2 FROM ${schema}.trade_history WHERE user_id = 'tenant-z'`, [z.id, at(0)]);
      await pool.query(`ANALYZE ${schema}.trade_history`);
      await pool.query(`ANALYZE ${schema}.methodology_outcomes`);

      const { methodology: m } = await storage.learning.upsertMethodology(mine, { assetClass: 'crypto_major', text: 'Trend', normalizedText: 'trend', origin: 'api', now: at(0) });
      await storage.learning.recordExecutions(mine, { executions: [exec({ orderId: 'o1', methodologyIds: [m.id] })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(1) });
      sent.length = 0;
      const close = await storage.learning.recordExecutions(mine, {
        executions: [exec({ orderId: 'c1', action: 'close', side: 'close', price: 110, realizedPnlUsd: 10, at: at(60), methodologyIds: [m.id] })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(60),
      });
      expect(close.closed.map((t) => t.orderId)).toEqual(['o1']);
      expect(close.methodologyChanges).toEqual([{ methodology: expect.objectContaining({ id: m.id, uses: 1, wins: 1 }), change: 'scored' }]);
      // The same close again is a duplicate: the methodology is not scored twice.
      await storage.learning.recordExecutions(mine, { executions: [exec({ orderId: 'c1', action: 'close', side: 'close' })], policy: DEFAULT_METHODOLOGY_POLICY, now: at(61) });
      expect((await storage.learning.getMethodology(mine, m.id))!.uses).toBe(1);

      const reads = sent.filter((s) => /^\s*SELECT\b[^;]*\bFROM \S*methodology_outcomes\b/.test(s.text));
      expect(reads).toHaveLength(1);
      for (const statement of reads) {
        const { used, context } = await explainSent(pool, statement);
        expect(used.filter((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'methodology_outcomes'), context).toEqual([]);
        expect(used.some((n) => n['Index Name'] === 'methodology_outcomes_pkey'), context).toBe(true);
      }
    } finally {
      await storage.close();
      await pool.end();
      own?.stop();
    }
  }, 120_000);
});
