import type { SpendReservationRequest, UsageStorage, UsageTotals } from '../usage-types';
import { checkId, invalidArgument } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';

/**
 * Migrations of the `usage` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `usage_ledger`: one row per turn (UNIQUE `turn_id`), indexed by day and by session.
 */
export const usageMigrations: readonly SqliteMigration[] = [
  {
    domain: 'usage',
    version: 1,
    name: 'usage ledger, one row per turn',
    up(db) {
      db.exec(`
        CREATE TABLE usage_ledger (
          turn_id       TEXT PRIMARY KEY,
          session_id    TEXT NOT NULL,
          user_id       TEXT NOT NULL,
          source        TEXT NOT NULL,
          model_id      TEXT NOT NULL,
          at            TEXT NOT NULL,
          day           TEXT NOT NULL,
          input_tokens  INTEGER NOT NULL,
          output_tokens INTEGER NOT NULL,
          cache_read    INTEGER NOT NULL,
          cache_write   INTEGER NOT NULL,
          cost_usd      REAL NOT NULL
        );
        CREATE INDEX usage_ledger_day ON usage_ledger (day, user_id);
        CREATE INDEX usage_ledger_session ON usage_ledger (session_id);
      `);
    },
  },
  {
    domain: 'usage',
    version: 2,
    name: 'usage_reservations: the estimated cost of admitted turns still running, per limit scope and day',
    up(db) {
      db.exec(`
        CREATE TABLE usage_reservations (
          id          TEXT PRIMARY KEY,
          scope       TEXT NOT NULL,
          day         TEXT NOT NULL,
          amount_usd  REAL NOT NULL,
          expires_at  TEXT NOT NULL
        );
        CREATE INDEX usage_reservations_scope ON usage_reservations (scope, day);
      `);
    },
  },
];

/** Check a reservation request; shared by the engines. */
export function checkReservation(operation: string, r: SpendReservationRequest): void {
  if (typeof r !== 'object' || r === null) throw invalidArgument(operation, 'expected { id, scope, day, sources, limitUsd, now, expiresAt }');
  checkId(operation, 'id', r.id);
  if (typeof r.scope !== 'string' || r.scope === '' || r.scope.length > 300) throw invalidArgument(operation, `scope must be a non-empty string, got ${JSON.stringify(r.scope)}`);
  if (typeof r.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(r.day)) throw invalidArgument(operation, `day must be YYYY-MM-DD, got ${JSON.stringify(r.day)}`);
  if (r.userId !== undefined && (typeof r.userId !== 'string' || r.userId === '')) throw invalidArgument(operation, `userId must be a non-empty string, got ${JSON.stringify(r.userId)}`);
  if (!Array.isArray(r.sources) || r.sources.length === 0 || r.sources.some((s) => typeof s !== 'string')) throw invalidArgument(operation, 'sources must be a non-empty list of source names');
  if (typeof r.limitUsd !== 'number' || !Number.isFinite(r.limitUsd) || r.limitUsd < 0) throw invalidArgument(operation, `limitUsd must be a number of USD ≥ 0, got ${String(r.limitUsd)}`);
  for (const k of ['now', 'expiresAt'] as const) if (typeof r[k] !== 'string' || Number.isNaN(Date.parse(r[k]))) throw invalidArgument(operation, `${k} must be an ISO time, got ${JSON.stringify(r[k])}`);
}

/** The admission rule every engine applies inside its transaction (see `UsageStorage.reserve`). */
export function decideReservation(limitUsd: number, spent: { costUsd: number; largestUsd: number; turns: number }, reservedUsd: number) {
  const admitted = spent.costUsd + reservedUsd < limitUsd;
  const amountUsd = !admitted ? 0 : spent.turns > 0 ? spent.largestUsd : limitUsd - spent.costUsd - reservedUsd;
  return { admitted, spentUsd: spent.costUsd, reservedUsd, amountUsd };
}

const TOKENS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const;

/** Check a usage entry's numbers; shared by the engines. */
export function checkUsageEntry(operation: string, entry: { readonly at: string; readonly costUsd: number } & Record<(typeof TOKENS)[number], number>): void {
  for (const k of TOKENS) if (!Number.isSafeInteger(entry[k]) || entry[k] < 0) throw invalidArgument(operation, `${k} must be a non-negative integer, got ${String(entry[k])}`);
  if (!Number.isFinite(entry.costUsd) || entry.costUsd < 0) throw invalidArgument(operation, `costUsd must be a non-negative number, got ${String(entry.costUsd)}`);
  if (Number.isNaN(Date.parse(entry.at))) throw invalidArgument(operation, `at must be an ISO time, got ${JSON.stringify(entry.at)}`);
}

/** The `usage` domain on SQLite. */
export function createSqliteUsageStorage(handle: SqliteHandle): UsageStorage {
  return {
    async record(e) {
      checkId('usage.record', 'turnId', e.turnId);
      checkUsageEntry('usage.record', e);
      return handle.write('usage.record', () =>
        handle
          .prepare('INSERT OR IGNORE INTO usage_ledger (turn_id, session_id, user_id, source, model_id, at, day, input_tokens, output_tokens, cache_read, cache_write, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .run(e.turnId, e.sessionId, e.userId, e.source, e.modelId, e.at, e.at.slice(0, 10), e.inputTokens, e.outputTokens, e.cacheReadTokens, e.cacheWriteTokens, e.costUsd).changes === 1,
      );
    },
    async totals(query = {}) {
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.day !== undefined) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(query.day)) throw invalidArgument('usage.totals', `day must be YYYY-MM-DD, got ${JSON.stringify(query.day)}`);
        where.push('day = ?');
        args.push(query.day);
      }
      if (query.sessionId !== undefined) {
        where.push('session_id = ?');
        args.push(query.sessionId);
      }
      if (query.userId !== undefined) {
        where.push('user_id = ?');
        args.push(query.userId);
      }
      if (query.sources !== undefined && query.sources.length > 0) {
        where.push(`source IN (${query.sources.map(() => '?').join(', ')})`);
        args.push(...query.sources);
      }
      const row = handle.read('usage.totals', () =>
        handle
          .prepare(`SELECT COUNT(*) AS turns, COALESCE(SUM(input_tokens), 0) AS i, COALESCE(SUM(output_tokens), 0) AS o, COALESCE(SUM(cache_read), 0) AS r, COALESCE(SUM(cache_write), 0) AS w, COALESCE(SUM(cost_usd), 0) AS c FROM usage_ledger${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`)
          .get(...args),
      ) as { turns: number; i: number; o: number; r: number; w: number; c: number };
      const totals: UsageTotals = { turns: row.turns, inputTokens: row.i, outputTokens: row.o, cacheReadTokens: row.r, cacheWriteTokens: row.w, costUsd: row.c };
      return totals;
    },
    async reserve(r) {
      checkReservation('usage.reserve', r);
      return handle.write('usage.reserve', () => {
        handle.prepare('DELETE FROM usage_reservations WHERE expires_at <= ?').run(r.now);
        const args: unknown[] = [r.day, ...r.sources];
        if (r.userId !== undefined) args.push(r.userId);
        const spent = handle
          .prepare(`SELECT COUNT(*) AS turns, COALESCE(SUM(cost_usd), 0) AS costUsd, COALESCE(MAX(cost_usd), 0) AS largestUsd FROM usage_ledger
                    WHERE day = ? AND source IN (${r.sources.map(() => '?').join(', ')})${r.userId !== undefined ? ' AND user_id = ?' : ''}`)
          .get(...args) as { turns: number; costUsd: number; largestUsd: number };
        const held = handle.prepare('SELECT COALESCE(SUM(amount_usd), 0) AS s FROM usage_reservations WHERE scope = ? AND day = ?').get(r.scope, r.day) as { s: number };
        const decision = decideReservation(r.limitUsd, spent, held.s);
        if (decision.admitted) {
          handle.prepare('INSERT INTO usage_reservations (id, scope, day, amount_usd, expires_at) VALUES (?, ?, ?, ?, ?)').run(r.id, r.scope, r.day, decision.amountUsd, r.expiresAt);
        }
        return decision;
      });
    },
    async renewReservation(id, expiresAt) {
      checkId('usage.renewReservation', 'id', id);
      return handle.write('usage.renewReservation', () => handle.prepare('UPDATE usage_reservations SET expires_at = ? WHERE id = ?').run(expiresAt, id).changes === 1);
    },
    async releaseReservation(id) {
      checkId('usage.releaseReservation', 'id', id);
      return handle.write('usage.releaseReservation', () => handle.prepare('DELETE FROM usage_reservations WHERE id = ?').run(id).changes === 1);
    },
    async byUser(query) {
      if (typeof query?.day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(query.day)) throw invalidArgument('usage.byUser', `day must be YYYY-MM-DD, got ${JSON.stringify(query?.day)}`);
      const sources = query.sources ?? [];
      const rows = handle.read('usage.byUser', () =>
        handle
          .prepare(`SELECT user_id, COUNT(*) AS turns, SUM(input_tokens) AS i, SUM(output_tokens) AS o, SUM(cache_read) AS r, SUM(cache_write) AS w, SUM(cost_usd) AS c
                    FROM usage_ledger WHERE day = ?${sources.length ? ` AND source IN (${sources.map(() => '?').join(', ')})` : ''} GROUP BY user_id ORDER BY user_id`)
          .all(query.day, ...sources),
      ) as { user_id: string; turns: number; i: number; o: number; r: number; w: number; c: number }[];
      return rows.map((row) => ({ userId: row.user_id, totals: { turns: row.turns, inputTokens: row.i, outputTokens: row.o, cacheReadTokens: row.r, cacheWriteTokens: row.w, costUsd: row.c } }));
    },
  };
}
