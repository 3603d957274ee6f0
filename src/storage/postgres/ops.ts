/**
 * The `jobs`, `usage` and `trading` domains on Postgres.
 *
 * Jobs: a claim is `INSERT … ON CONFLICT (job_id, slot) DO NOTHING RETURNING`, else one conditional
 * `UPDATE … WHERE outcome = 'running' AND lease_until < now RETURNING` (take-over of a dead owner's run), so
 * one instance of a fleet runs each slot, and another takes over within one tick once a lease lapses.
 * Trading: `applyFill` locks the account row (`FOR UPDATE`), so two instances applying fills to one account
 * serialise and the plan always sees the current books.
 */
import type { JobRunRecord, JobStorage } from '../job-types';
import { checkId, checkLimit, invalidArgument, notFound } from '../sqlite/checks';
import { opt } from '../sqlite/rows';
import { checkReservation, checkUsageEntry, decideReservation } from '../sqlite/usage';
import { foldBalanceDeltas, type TradingAccount, type TradingBalance, type TradingFill, type TradingPosition, type TradingStorage } from '../trading-types';
import type { UsageStorage } from '../usage-types';
import type { PgHandle, PgRow, PgTx } from './handle';

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

const toRun = (r: PgRow): JobRunRecord => ({
  id: Number(r.id), jobId: String(r.job_id), slot: String(r.slot), owner: String(r.owner), attempt: Number(r.attempt), startedAt: String(r.started_at),
  leaseUntil: String(r.lease_until), outcome: r.outcome as JobRunRecord['outcome'], ...opt('endedAt', str(r.ended_at)), ...opt('error', str(r.error)), ...opt('detail', str(r.detail)),
});
const OUTCOMES = new Set(['running', 'ok', 'failed', 'skipped']);

/** `jobs`: one run per job and slot across every instance. */
export function createPgJobStorage(h: PgHandle): JobStorage {
  const t = h.t('job_runs');
  return {
    async claimRun({ jobId, slot, owner, now, leaseUntil }) {
      checkId('jobs.claimRun', 'jobId', jobId);
      checkId('jobs.claimRun', 'owner', owner);
      const op = h.op('jobs.claimRun');
      const created = await op.get(
        `INSERT INTO ${t} (job_id, slot, owner, attempt, started_at, lease_until, outcome) VALUES ($1, $2, $3, 1, $4, $5, 'running')
         ON CONFLICT (job_id, slot) DO NOTHING RETURNING *`,
        [jobId, slot, owner, now, leaseUntil],
      );
      if (created !== undefined) return toRun(created);
      const taken = await op.get(
        `UPDATE ${t} SET owner = $3, attempt = attempt + 1, started_at = $4, lease_until = $5
         WHERE job_id = $1 AND slot = $2 AND outcome = 'running' AND lease_until < $4 RETURNING *`,
        [jobId, slot, owner, now, leaseUntil],
      );
      return taken === undefined ? undefined : toRun(taken);
    },
    async renewRun(id, owner, leaseUntil) {
      return (await h.op('jobs.renewRun').run(`UPDATE ${t} SET lease_until = $1 WHERE id = $2 AND owner = $3 AND outcome = 'running'`, [leaseUntil, id, owner])) === 1;
    },
    async finishRun(id, owner, result) {
      if (!OUTCOMES.has(result.outcome) || (result.outcome as string) === 'running') throw invalidArgument('jobs.finishRun', `outcome must be ok, failed or skipped, got ${JSON.stringify(result.outcome)}`);
      const row = await h.op('jobs.finishRun').get(
        `UPDATE ${t} SET outcome = $1, ended_at = $2, error = $3, detail = $4 WHERE id = $5 AND owner = $6 AND outcome = 'running' RETURNING *`,
        [result.outcome, result.endedAt, result.error ?? null, result.detail ?? null, id, owner],
      );
      if (row === undefined) throw notFound('jobs.finishRun', 'running job run', String(id), ` (not held by ${owner})`);
      return toRun(row);
    },
    async listRuns(query = {}) {
      const limit = checkLimit('jobs.listRuns', query.limit, 50);
      if (query.outcome !== undefined && !OUTCOMES.has(query.outcome)) throw invalidArgument('jobs.listRuns', `outcome must be one of running, ok, failed, skipped, got ${JSON.stringify(query.outcome)}`);
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.jobId !== undefined) (args.push(query.jobId), where.push(`job_id = $${args.length}`));
      if (query.outcome !== undefined) (args.push(query.outcome), where.push(`outcome = $${args.length}`));
      args.push(limit);
      return (await h.op('jobs.listRuns').all(`SELECT * FROM ${t}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${args.length}`, args)).map(toRun);
    },
    async interruptedRuns(now) {
      return (await h.op('jobs.interruptedRuns').all(`SELECT * FROM ${t} WHERE outcome = 'running' AND lease_until < $1 ORDER BY id`, [now])).map(toRun);
    },
  };
}

/** `usage`: one row per turn, summed by day, session, user and source. */
export function createPgUsageStorage(h: PgHandle): UsageStorage {
  const t = h.t('usage_ledger');
  return {
    async record(e) {
      checkId('usage.record', 'turnId', e.turnId);
      checkUsageEntry('usage.record', e);
      const n = await h.op('usage.record').run(
        `INSERT INTO ${t} (turn_id, session_id, user_id, source, model_id, at, day, input_tokens, output_tokens, cache_read, cache_write, cost_usd)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (turn_id) DO NOTHING`,
        [e.turnId, e.sessionId, e.userId, e.source, e.modelId, e.at, e.at.slice(0, 10), e.inputTokens, e.outputTokens, e.cacheReadTokens, e.cacheWriteTokens, e.costUsd],
      );
      return n === 1;
    },
    async totals(query = {}) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.day !== undefined) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(query.day)) throw invalidArgument('usage.totals', `day must be YYYY-MM-DD, got ${JSON.stringify(query.day)}`);
        args.push(query.day);
        where.push(`day = $${args.length}`);
      }
      if (query.sessionId !== undefined) (args.push(query.sessionId), where.push(`session_id = $${args.length}`));
      if (query.userId !== undefined) (args.push(query.userId), where.push(`user_id = $${args.length}`));
      if (query.sources !== undefined && query.sources.length > 0) (args.push([...query.sources]), where.push(`source = ANY($${args.length}::text[])`));
      const r = (await h.op('usage.totals').get(
        `SELECT COUNT(*) AS turns, COALESCE(SUM(input_tokens), 0) AS i, COALESCE(SUM(output_tokens), 0) AS o, COALESCE(SUM(cache_read), 0) AS r,
                COALESCE(SUM(cache_write), 0) AS w, COALESCE(SUM(cost_usd), 0) AS c FROM ${t}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`,
        args,
      ))!;
      return { turns: Number(r.turns), inputTokens: Number(r.i), outputTokens: Number(r.o), cacheReadTokens: Number(r.r), cacheWriteTokens: Number(r.w), costUsd: Number(r.c) };
    },
    async reserve(r) {
      checkReservation('usage.reserve', r);
      const held = h.t('usage_reservations');
      return h.tx('usage.reserve', async (tx) => {
        // One admission per scope and day at a time across every instance: the check and the insert under one lock.
        await tx.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`minara:usage:${r.scope}:${r.day}`]);
        await tx.run(`DELETE FROM ${held} WHERE expires_at <= $1`, [r.now]);
        // The ledger and the holds in one statement, so one snapshot: a turn ending meanwhile on another instance
        // (its ledger row, then its hold dropped, neither under this lock) is seen in one or both, never in neither.
        const args: unknown[] = [r.day, [...r.sources], r.scope];
        if (r.userId !== undefined) args.push(r.userId);
        const s = (await tx.get(
          `SELECT COUNT(*) AS turns, COALESCE(SUM(cost_usd), 0) AS c, COALESCE(MAX(cost_usd), 0) AS m,
                  (SELECT COALESCE(SUM(amount_usd), 0) FROM ${held} WHERE scope = $3 AND day = $1) AS held
           FROM ${t} WHERE day = $1 AND source = ANY($2::text[])${r.userId !== undefined ? ' AND user_id = $4' : ''}`,
          args,
        ))!;
        const decision = decideReservation(r.limitUsd, { turns: Number(s.turns), costUsd: Number(s.c), largestUsd: Number(s.m) }, Number(s.held));
        if (decision.admitted) await tx.run(`INSERT INTO ${held} (id, scope, day, amount_usd, expires_at) VALUES ($1, $2, $3, $4, $5)`, [r.id, r.scope, r.day, decision.amountUsd, r.expiresAt]);
        return decision;
      });
    },
    async renewReservation(id, expiresAt) {
      checkId('usage.renewReservation', 'id', id);
      return (await h.op('usage.renewReservation').run(`UPDATE ${h.t('usage_reservations')} SET expires_at = $1 WHERE id = $2`, [expiresAt, id])) === 1;
    },
    async releaseReservation(id) {
      checkId('usage.releaseReservation', 'id', id);
      return (await h.op('usage.releaseReservation').run(`DELETE FROM ${h.t('usage_reservations')} WHERE id = $1`, [id])) === 1;
    },
    async byUser(query) {
      if (typeof query?.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(query.day)) throw invalidArgument('usage.byUser', `day must be YYYY-MM-DD, got ${JSON.stringify(query?.day)}`);
      const args: unknown[] = [query.day];
      let where = 'day = $1';
      if (query.sources !== undefined && query.sources.length > 0) (args.push([...query.sources]), (where += ' AND source = ANY($2::text[])'));
      const rows = await h.op('usage.byUser').all(
        `SELECT user_id, COUNT(*) AS turns, SUM(input_tokens) AS i, SUM(output_tokens) AS o, SUM(cache_read) AS r, SUM(cache_write) AS w, SUM(cost_usd) AS c
         FROM ${t} WHERE ${where} GROUP BY user_id ORDER BY user_id`,
        args,
      );
      return rows.map((r) => ({
        userId: String(r.user_id),
        totals: { turns: Number(r.turns), inputTokens: Number(r.i), outputTokens: Number(r.o), cacheReadTokens: Number(r.r), cacheWriteTokens: Number(r.w), costUsd: Number(r.c) },
      }));
    },
  };
}

const toAccount = (r: PgRow): TradingAccount => ({ id: String(r.id), baseCurrency: String(r.base_currency), createdAt: String(r.created_at) });
const toBalance = (r: PgRow): TradingBalance => ({
  accountId: String(r.account_id), asset: String(r.asset), amount: Number(r.amount), costBasisUsd: Number(r.cost_basis_usd), updatedAt: String(r.updated_at),
});
const toPosition = (r: PgRow): TradingPosition => ({
  accountId: String(r.account_id), symbol: String(r.symbol), side: r.side as TradingPosition['side'], size: Number(r.size), entryPrice: Number(r.entry_price),
  marginUsd: Number(r.margin_usd), leverage: Number(r.leverage), openedAt: String(r.opened_at), updatedAt: String(r.updated_at),
});
const toFill = (r: PgRow): TradingFill => ({
  id: String(r.id), accountId: String(r.account_id), kind: r.kind as TradingFill['kind'], symbol: String(r.symbol), side: r.side as TradingFill['side'],
  quantity: Number(r.quantity), price: Number(r.price), notionalUsd: Number(r.notional_usd), feeUsd: Number(r.fee_usd), realizedPnlUsd: Number(r.realized_pnl_usd),
  contributionUsd: Number(r.contribution_usd), at: String(r.at),
  ...opt('details', r.details_json == null ? null : (JSON.parse(String(r.details_json)) as Record<string, unknown>)),
});

/** `trading`: paper books; `applyFill` is one transaction holding the account row lock. */
export function createPgTradingStorage(h: PgHandle): TradingStorage {
  const A = h.t('trading_accounts');
  const B = h.t('trading_balances');
  const P = h.t('trading_positions');
  const F = h.t('trading_fills');
  const D = h.t('trading_daily_pnl');
  const insertFill = (tx: PgTx, accountId: string, id: string, f: Omit<TradingFill, 'id' | 'accountId'>) =>
    tx.run(
      `INSERT INTO ${F} (account_id, id, kind, symbol, side, quantity, price, notional_usd, fee_usd, realized_pnl_usd, contribution_usd, at, details_json)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [accountId, id, f.kind, f.symbol, f.side, f.quantity, f.price, f.notionalUsd, f.feeUsd, f.realizedPnlUsd, f.contributionUsd, f.at, f.details === undefined ? null : JSON.stringify(f.details)],
    );
  const upsertBalance = (tx: PgTx, accountId: string, asset: string, amount: number, cost: number, at: string) =>
    tx.run(
      `INSERT INTO ${B} (account_id, asset, amount, cost_basis_usd, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id, asset) DO UPDATE SET amount = excluded.amount, cost_basis_usd = excluded.cost_basis_usd, updated_at = excluded.updated_at`,
      [accountId, asset, amount, cost, at],
    );
  const balances = (q: PgTx, id: string) => q.all(`SELECT * FROM ${B} WHERE account_id = $1 AND amount > 0 ORDER BY asset`, [id]);
  const positions = (q: PgTx, id: string) => q.all(`SELECT * FROM ${P} WHERE account_id = $1 ORDER BY symbol`, [id]);

  return {
    async ensureAccount({ accountId, baseCurrency = 'USDC', initialBalances = {}, now }) {
      checkId('trading.ensureAccount', 'accountId', accountId);
      for (const [asset, amount] of Object.entries(initialBalances)) {
        if (!Number.isFinite(amount) || amount < 0) throw invalidArgument('trading.ensureAccount', `initialBalances.${asset} must be a non-negative number`);
      }
      return h.tx('trading.ensureAccount', async (tx) => {
        const inserted = await tx.get(`INSERT INTO ${A} (id, base_currency, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING *`, [accountId, baseCurrency, now]);
        if (inserted === undefined) return { account: toAccount((await tx.get(`SELECT * FROM ${A} WHERE id = $1`, [accountId]))!), created: false };
        for (const [asset, amount] of Object.entries(initialBalances)) {
          if (amount === 0) continue;
          const cost = asset === baseCurrency ? amount : 0;
          await upsertBalance(tx, accountId, asset, amount, cost, now);
          await insertFill(tx, accountId, `deposit:${asset}:initial`, {
            kind: 'deposit', symbol: asset, side: 'in', quantity: amount, price: asset === baseCurrency ? 1 : 0, notionalUsd: cost, feeUsd: 0, realizedPnlUsd: 0, contributionUsd: cost, at: now,
          });
        }
        return { account: { id: accountId, baseCurrency, createdAt: now }, created: true };
      });
    },
    async getAccount(accountId) {
      checkId('trading.getAccount', 'accountId', accountId);
      const row = await h.op('trading.getAccount').get(`SELECT * FROM ${A} WHERE id = $1`, [accountId]);
      return row === undefined ? undefined : toAccount(row);
    },
    async listBalances(accountId) {
      checkId('trading.listBalances', 'accountId', accountId);
      return (await balances(h.op('trading.listBalances'), accountId)).map(toBalance);
    },
    async listPositions(accountId) {
      checkId('trading.listPositions', 'accountId', accountId);
      return (await positions(h.op('trading.listPositions'), accountId)).map(toPosition);
    },
    async getFill(accountId, fillId) {
      checkId('trading.getFill', 'accountId', accountId);
      checkId('trading.getFill', 'fillId', fillId);
      const row = await h.op('trading.getFill').get(`SELECT * FROM ${F} WHERE account_id = $1 AND id = $2`, [accountId, fillId]);
      return row === undefined ? undefined : toFill(row);
    },
    async listFills(accountId, query = {}) {
      checkId('trading.listFills', 'accountId', accountId);
      const limit = checkLimit('trading.listFills', query.limit, 100);
      const rows =
        query.since === undefined
          ? await h.op('trading.listFills').all(`SELECT * FROM ${F} WHERE account_id = $1 ORDER BY at DESC, seq DESC LIMIT $2`, [accountId, limit])
          : await h.op('trading.listFills').all(`SELECT * FROM ${F} WHERE account_id = $1 AND at >= $2 ORDER BY at DESC, seq DESC LIMIT $3`, [accountId, query.since, limit]);
      return rows.map(toFill);
    },
    async applyFill(accountId, fillId, plan) {
      checkId('trading.applyFill', 'accountId', accountId);
      checkId('trading.applyFill', 'fillId', fillId);
      if (typeof plan !== 'function') throw invalidArgument('trading.applyFill', 'plan must be a function');
      return h.tx('trading.applyFill', async (tx) => {
        const account = await tx.get(`SELECT * FROM ${A} WHERE id = $1 FOR UPDATE`, [accountId]);
        const dup = await tx.get(`SELECT * FROM ${F} WHERE account_id = $1 AND id = $2`, [accountId, fillId]);
        if (dup) return { status: 'duplicate' as const, fill: toFill(dup) };
        if (!account) return { status: 'rejected' as const, reason: `unknown account "${accountId}"` };
        const current = (await balances(tx, accountId)).map(toBalance);
        const planned = plan({ account: toAccount(account), balances: current, positions: (await positions(tx, accountId)).map(toPosition) });
        if ('reject' in planned) return { status: 'rejected' as const, reason: planned.reject };
        const folded = foldBalanceDeltas(current, planned.balances);
        if (!folded.ok) return { status: 'rejected' as const, reason: folded.reason };
        const f = planned.fill;
        for (const n of [f.quantity, f.price, f.notionalUsd, f.feeUsd, f.realizedPnlUsd, f.contributionUsd]) {
          if (!Number.isFinite(n)) return { status: 'rejected' as const, reason: 'the fill has a non-finite number' };
        }
        const touched = new Set(planned.balances.map((d) => d.asset));
        for (const [asset, v] of folded.next) if (touched.has(asset)) await upsertBalance(tx, accountId, asset, v.amount, v.costBasisUsd, f.at);
        for (const sym of planned.removePositions ?? []) await tx.run(`DELETE FROM ${P} WHERE account_id = $1 AND symbol = $2`, [accountId, sym]);
        for (const p of planned.upsertPositions ?? []) {
          await tx.run(
            `INSERT INTO ${P} (account_id, symbol, side, size, entry_price, margin_usd, leverage, opened_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (account_id, symbol) DO UPDATE SET side = excluded.side, size = excluded.size, entry_price = excluded.entry_price,
               margin_usd = excluded.margin_usd, leverage = excluded.leverage, opened_at = excluded.opened_at, updated_at = excluded.updated_at`,
            [accountId, p.symbol, p.side, p.size, p.entryPrice, p.marginUsd, p.leverage, p.openedAt, p.updatedAt],
          );
        }
        await insertFill(tx, accountId, fillId, f);
        if (f.realizedPnlUsd !== 0) {
          await tx.run(
            `INSERT INTO ${D} (account_id, day, realized_usd) VALUES ($1, $2, $3) ON CONFLICT (account_id, day) DO UPDATE SET realized_usd = ${D}.realized_usd + excluded.realized_usd`,
            [accountId, f.at.slice(0, 10), f.realizedPnlUsd],
          );
        }
        return { status: 'applied' as const, fill: { ...f, id: fillId, accountId } };
      });
    },
    async dailyPnl(accountId, day) {
      checkId('trading.dailyPnl', 'accountId', accountId);
      const row = await h.op('trading.dailyPnl').get(`SELECT realized_usd FROM ${D} WHERE account_id = $1 AND day = $2`, [accountId, day]);
      return row === undefined ? 0 : Number(row.realized_usd);
    },
    async listDailyPnl(accountId, query = {}) {
      checkId('trading.listDailyPnl', 'accountId', accountId);
      const limit = checkLimit('trading.listDailyPnl', query.limit, 30);
      const rows = await h.op('trading.listDailyPnl').all(`SELECT * FROM ${D} WHERE account_id = $1 ORDER BY day DESC LIMIT $2`, [accountId, limit]);
      return rows.map((r) => ({ accountId: String(r.account_id), day: String(r.day), realizedUsd: Number(r.realized_usd) }));
    },
    async totals(accountId) {
      checkId('trading.totals', 'accountId', accountId);
      const r = (await h.op('trading.totals').get(
        `SELECT COALESCE(SUM(realized_pnl_usd), 0) AS r, COALESCE(SUM(contribution_usd), 0) AS c, COALESCE(SUM(fee_usd), 0) AS f, COUNT(*) AS n FROM ${F} WHERE account_id = $1`,
        [accountId],
      ))!;
      return { realizedUsd: Number(r.r), contributionsUsd: Number(r.c), feesUsd: Number(r.f), fills: Number(r.n) };
    },
  };
}
