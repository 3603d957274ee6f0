import type { SqliteHandle, SqliteMigration } from './handle';
import { checkId, checkLimit, invalidArgument } from './checks';
import { opt } from './rows';
import {
  foldBalanceDeltas,
  type TradingAccount,
  type TradingBalance,
  type TradingFill,
  type TradingPosition,
  type TradingStorage,
} from '../trading-types';

/**
 * Migrations of the `trading` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `trading_accounts`, `trading_balances` (amount + cost basis per asset), `trading_positions` (one net
 * perp position per market), `trading_fills` (UNIQUE `(account_id, id)`: fills are idempotent by client
 * order id) and `trading_daily_pnl` (realised P&L per UTC day).
 */
export const tradingMigrations: readonly SqliteMigration[] = [
  {
    domain: 'trading',
    version: 1,
    name: 'paper accounts, balances, positions, fills, daily pnl',
    up(db) {
      db.exec(`
        CREATE TABLE trading_accounts (
          id            TEXT PRIMARY KEY,
          base_currency TEXT NOT NULL,
          created_at    TEXT NOT NULL
        );
        CREATE TABLE trading_balances (
          account_id     TEXT NOT NULL REFERENCES trading_accounts(id) ON DELETE CASCADE,
          asset          TEXT NOT NULL,
          amount         REAL NOT NULL CHECK (amount >= 0),
          cost_basis_usd REAL NOT NULL CHECK (cost_basis_usd >= 0),
          updated_at     TEXT NOT NULL,
          PRIMARY KEY (account_id, asset)
        );
        CREATE TABLE trading_positions (
          account_id  TEXT NOT NULL REFERENCES trading_accounts(id) ON DELETE CASCADE,
          symbol      TEXT NOT NULL,
          side        TEXT NOT NULL CHECK (side IN ('long', 'short')),
          size        REAL NOT NULL CHECK (size > 0),
          entry_price REAL NOT NULL,
          margin_usd  REAL NOT NULL CHECK (margin_usd >= 0),
          leverage    REAL NOT NULL,
          opened_at   TEXT NOT NULL,
          updated_at  TEXT NOT NULL,
          PRIMARY KEY (account_id, symbol)
        );
        CREATE TABLE trading_fills (
          seq              INTEGER PRIMARY KEY AUTOINCREMENT,
          account_id       TEXT NOT NULL REFERENCES trading_accounts(id) ON DELETE CASCADE,
          id               TEXT NOT NULL,
          kind             TEXT NOT NULL,
          symbol           TEXT NOT NULL,
          side             TEXT NOT NULL,
          quantity         REAL NOT NULL,
          price            REAL NOT NULL,
          notional_usd     REAL NOT NULL,
          fee_usd          REAL NOT NULL,
          realized_pnl_usd REAL NOT NULL,
          contribution_usd REAL NOT NULL,
          at               TEXT NOT NULL,
          details_json     TEXT,
          UNIQUE (account_id, id)
        );
        CREATE INDEX trading_fills_account_at ON trading_fills (account_id, at DESC, seq DESC);
        CREATE TABLE trading_daily_pnl (
          account_id   TEXT NOT NULL REFERENCES trading_accounts(id) ON DELETE CASCADE,
          day          TEXT NOT NULL,
          realized_usd REAL NOT NULL,
          PRIMARY KEY (account_id, day)
        );
      `);
    },
  },
];

interface AccountRow { id: string; base_currency: string; created_at: string }
interface BalanceRow { account_id: string; asset: string; amount: number; cost_basis_usd: number; updated_at: string }
interface PositionRow {
  account_id: string; symbol: string; side: 'long' | 'short'; size: number; entry_price: number; margin_usd: number;
  leverage: number; opened_at: string; updated_at: string;
}
interface FillRow {
  account_id: string; id: string; kind: TradingFill['kind']; symbol: string; side: TradingFill['side']; quantity: number; price: number;
  notional_usd: number; fee_usd: number; realized_pnl_usd: number; contribution_usd: number; at: string; details_json: string | null;
}

const toAccount = (r: AccountRow): TradingAccount => ({ id: r.id, baseCurrency: r.base_currency, createdAt: r.created_at });
const toBalance = (r: BalanceRow): TradingBalance => ({
  accountId: r.account_id, asset: r.asset, amount: r.amount, costBasisUsd: r.cost_basis_usd, updatedAt: r.updated_at,
});
const toPosition = (r: PositionRow): TradingPosition => ({
  accountId: r.account_id, symbol: r.symbol, side: r.side, size: r.size, entryPrice: r.entry_price, marginUsd: r.margin_usd,
  leverage: r.leverage, openedAt: r.opened_at, updatedAt: r.updated_at,
});
const toFill = (r: FillRow): TradingFill => ({
  id: r.id, accountId: r.account_id, kind: r.kind, symbol: r.symbol, side: r.side, quantity: r.quantity, price: r.price,
  notionalUsd: r.notional_usd, feeUsd: r.fee_usd, realizedPnlUsd: r.realized_pnl_usd, contributionUsd: r.contribution_usd, at: r.at,
  ...opt('details', r.details_json === null ? null : (JSON.parse(r.details_json) as Record<string, unknown>)),
});

const INSERT_FILL = `INSERT INTO trading_fills
  (account_id, id, kind, symbol, side, quantity, price, notional_usd, fee_usd, realized_pnl_usd, contribution_usd, at, details_json)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const UPSERT_BALANCE = `INSERT INTO trading_balances (account_id, asset, amount, cost_basis_usd, updated_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (account_id, asset) DO UPDATE SET amount = excluded.amount, cost_basis_usd = excluded.cost_basis_usd, updated_at = excluded.updated_at`;
const UPSERT_POSITION = `INSERT INTO trading_positions
  (account_id, symbol, side, size, entry_price, margin_usd, leverage, opened_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (account_id, symbol) DO UPDATE SET side = excluded.side, size = excluded.size, entry_price = excluded.entry_price,
  margin_usd = excluded.margin_usd, leverage = excluded.leverage, opened_at = excluded.opened_at, updated_at = excluded.updated_at`;
const ADD_DAILY = `INSERT INTO trading_daily_pnl (account_id, day, realized_usd) VALUES (?, ?, ?)
  ON CONFLICT (account_id, day) DO UPDATE SET realized_usd = realized_usd + excluded.realized_usd`;

/** The `trading` domain on SQLite. `applyFill` is one `BEGIN IMMEDIATE` transaction. */
export function createSqliteTradingStorage(handle: SqliteHandle): TradingStorage {
  const getFillRow = (accountId: string, id: string) =>
    handle.prepare('SELECT * FROM trading_fills WHERE account_id = ? AND id = ?').get(accountId, id) as FillRow | undefined;
  const getAccountRow = (id: string) => handle.prepare('SELECT * FROM trading_accounts WHERE id = ?').get(id) as AccountRow | undefined;
  const balanceRows = (id: string) =>
    handle.prepare('SELECT * FROM trading_balances WHERE account_id = ? AND amount > 0 ORDER BY asset').all(id) as BalanceRow[];
  const positionRows = (id: string) =>
    handle.prepare('SELECT * FROM trading_positions WHERE account_id = ? ORDER BY symbol').all(id) as PositionRow[];

  return {
    async ensureAccount({ accountId, baseCurrency = 'USDC', initialBalances = {}, now }) {
      checkId('trading.ensureAccount', 'accountId', accountId);
      return handle.write('trading.ensureAccount', () => {
        const existing = getAccountRow(accountId);
        if (existing) return { account: toAccount(existing), created: false };
        handle.prepare('INSERT INTO trading_accounts (id, base_currency, created_at) VALUES (?, ?, ?)').run(accountId, baseCurrency, now);
        for (const [asset, amount] of Object.entries(initialBalances)) {
          if (!Number.isFinite(amount) || amount < 0) throw invalidArgument('trading.ensureAccount', `initialBalances.${asset} must be a non-negative number`);
          if (amount === 0) continue;
          const cost = asset === baseCurrency ? amount : 0;
          handle.prepare(UPSERT_BALANCE).run(accountId, asset, amount, cost, now);
          handle.prepare(INSERT_FILL).run(accountId, `deposit:${asset}:initial`, 'deposit', asset, 'in', amount, asset === baseCurrency ? 1 : 0, cost, 0, 0, cost, now, null);
        }
        return { account: { id: accountId, baseCurrency, createdAt: now }, created: true };
      });
    },

    async getAccount(accountId) {
      checkId('trading.getAccount', 'accountId', accountId);
      const row = handle.read('trading.getAccount', () => getAccountRow(accountId));
      return row === undefined ? undefined : toAccount(row);
    },

    async listBalances(accountId) {
      checkId('trading.listBalances', 'accountId', accountId);
      return handle.read('trading.listBalances', () => balanceRows(accountId)).map(toBalance);
    },

    async listPositions(accountId) {
      checkId('trading.listPositions', 'accountId', accountId);
      return handle.read('trading.listPositions', () => positionRows(accountId)).map(toPosition);
    },

    async getFill(accountId, fillId) {
      checkId('trading.getFill', 'accountId', accountId);
      checkId('trading.getFill', 'fillId', fillId);
      const row = handle.read('trading.getFill', () => getFillRow(accountId, fillId));
      return row === undefined ? undefined : toFill(row);
    },

    async listFills(accountId, query = {}) {
      checkId('trading.listFills', 'accountId', accountId);
      const limit = checkLimit('trading.listFills', query.limit, 100);
      const rows = handle.read('trading.listFills', () =>
        query.since === undefined
          ? (handle.prepare('SELECT * FROM trading_fills WHERE account_id = ? ORDER BY at DESC, seq DESC LIMIT ?').all(accountId, limit) as FillRow[])
          : (handle.prepare('SELECT * FROM trading_fills WHERE account_id = ? AND at >= ? ORDER BY at DESC, seq DESC LIMIT ?').all(accountId, query.since, limit) as FillRow[]),
      );
      return rows.map(toFill);
    },

    async applyFill(accountId, fillId, plan) {
      checkId('trading.applyFill', 'accountId', accountId);
      checkId('trading.applyFill', 'fillId', fillId);
      if (typeof plan !== 'function') throw invalidArgument('trading.applyFill', 'plan must be a function');
      return handle.write('trading.applyFill', () => {
        const dup = getFillRow(accountId, fillId);
        if (dup) return { status: 'duplicate' as const, fill: toFill(dup) };
        const account = getAccountRow(accountId);
        if (!account) return { status: 'rejected' as const, reason: `unknown account "${accountId}"` };
        const balances = balanceRows(accountId).map(toBalance);
        const planned = plan({ account: toAccount(account), balances, positions: positionRows(accountId).map(toPosition) });
        if ('reject' in planned) return { status: 'rejected' as const, reason: planned.reject };
        const folded = foldBalanceDeltas(balances, planned.balances);
        if (!folded.ok) return { status: 'rejected' as const, reason: folded.reason };
        const f = planned.fill;
        for (const n of [f.quantity, f.price, f.notionalUsd, f.feeUsd, f.realizedPnlUsd, f.contributionUsd]) {
          if (!Number.isFinite(n)) return { status: 'rejected' as const, reason: 'the fill has a non-finite number' };
        }
        const touched = new Set(planned.balances.map((d) => d.asset));
        for (const [asset, v] of folded.next) {
          if (touched.has(asset)) handle.prepare(UPSERT_BALANCE).run(accountId, asset, v.amount, v.costBasisUsd, f.at);
        }
        for (const sym of planned.removePositions ?? []) handle.prepare('DELETE FROM trading_positions WHERE account_id = ? AND symbol = ?').run(accountId, sym);
        for (const p of planned.upsertPositions ?? []) {
          handle.prepare(UPSERT_POSITION).run(accountId, p.symbol, p.side, p.size, p.entryPrice, p.marginUsd, p.leverage, p.openedAt, p.updatedAt);
        }
        handle
          .prepare(INSERT_FILL)
          .run(accountId, fillId, f.kind, f.symbol, f.side, f.quantity, f.price, f.notionalUsd, f.feeUsd, f.realizedPnlUsd, f.contributionUsd, f.at,
            f.details === undefined ? null : JSON.stringify(f.details));
        if (f.realizedPnlUsd !== 0) handle.prepare(ADD_DAILY).run(accountId, f.at.slice(0, 10), f.realizedPnlUsd);
        return { status: 'applied' as const, fill: { ...f, id: fillId, accountId } };
      });
    },

    async dailyPnl(accountId, day) {
      checkId('trading.dailyPnl', 'accountId', accountId);
      const row = handle.read('trading.dailyPnl', () =>
        handle.prepare('SELECT realized_usd FROM trading_daily_pnl WHERE account_id = ? AND day = ?').get(accountId, day) as { realized_usd: number } | undefined,
      );
      return row?.realized_usd ?? 0;
    },

    async listDailyPnl(accountId, query = {}) {
      checkId('trading.listDailyPnl', 'accountId', accountId);
      const limit = checkLimit('trading.listDailyPnl', query.limit, 30);
      const rows = handle.read('trading.listDailyPnl', () =>
        handle.prepare('SELECT * FROM trading_daily_pnl WHERE account_id = ? ORDER BY day DESC LIMIT ?').all(accountId, limit) as {
          account_id: string; day: string; realized_usd: number;
        }[],
      );
      return rows.map((r) => ({ accountId: r.account_id, day: r.day, realizedUsd: r.realized_usd }));
    },

    async totals(accountId) {
      checkId('trading.totals', 'accountId', accountId);
      const row = handle.read('trading.totals', () =>
        handle
          .prepare(`SELECT COALESCE(SUM(realized_pnl_usd), 0) AS r, COALESCE(SUM(contribution_usd), 0) AS c, COALESCE(SUM(fee_usd), 0) AS f, COUNT(*) AS n
            FROM trading_fills WHERE account_id = ?`)
          .get(accountId) as { r: number; c: number; f: number; n: number },
      );
      return { realizedUsd: row.r, contributionsUsd: row.c, feesUsd: row.f, fills: row.n };
    },
  };
}
