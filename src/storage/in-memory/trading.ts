import { checkId, checkLimit, invalidArgument } from '../sqlite/checks';
import {
  type ApplyFillResult,
  foldBalanceDeltas,
  type TradingAccount,
  type TradingBalance,
  type TradingDailyPnl,
  type TradingFill,
  type TradingPlanFn,
  type TradingPosition,
  type TradingStorage,
  type TradingTotals,
} from '../trading-types';
import { compact, jsonCopy } from './copy';

/** One account's books. */
interface AccountBook {
  account: TradingAccount;
  balances: Map<string, TradingBalance>;
  positions: Map<string, TradingPosition>;
  fills: Map<string, TradingFill>;
  fillOrder: TradingFill[];
  daily: Map<string, number>;
}

/** Every account's books, by account id. */
type TradingState = Map<string, AccountBook>;

/**
 * The `trading` domain in memory: same semantics as the SQLite engine (idempotent fills, no negative
 * balance, atomic plans). Plans run synchronously, so no other call interleaves with one.
 *
 * Wiring only: the state is a {@link TradingState} (every account's books); each method is a named function below.
 */
export function createInMemoryTradingStorage(options: { now?: (() => Date) | undefined } = {}): TradingStorage {
  void options;
  const books: TradingState = new Map();
  return {
    ensureAccount: async (input) => ensureAccount(books, input),
    async getAccount(accountId) {
      checkId('trading.getAccount', 'accountId', accountId);
      const b = books.get(accountId);
      return b ? { ...b.account } : undefined;
    },
    async listBalances(accountId) {
      checkId('trading.listBalances', 'accountId', accountId);
      const b = books.get(accountId);
      return b ? sortedBalances(b).map((x) => ({ ...x })) : [];
    },
    async listPositions(accountId) {
      checkId('trading.listPositions', 'accountId', accountId);
      const b = books.get(accountId);
      return b ? sortedPositions(b).map((x) => ({ ...x })) : [];
    },
    async getFill(accountId, fillId) {
      checkId('trading.getFill', 'accountId', accountId);
      checkId('trading.getFill', 'fillId', fillId);
      const f = books.get(accountId)?.fills.get(fillId);
      return f ? jsonCopy(f) : undefined;
    },
    listFills: async (accountId, query = {}) => listFills(books, accountId, query),
    applyFill: async (accountId, fillId, plan) => applyFill(books, accountId, fillId, plan),
    async dailyPnl(accountId, day) {
      checkId('trading.dailyPnl', 'accountId', accountId);
      return books.get(accountId)?.daily.get(day) ?? 0;
    },
    listDailyPnl: async (accountId, query = {}) => listDailyPnl(books, accountId, query),
    totals: async (accountId) => totals(books, accountId),
  };
}

const sortedBalances = (b: AccountBook) => [...b.balances.values()].filter((x) => x.amount > 0).sort((x, y) => (x.asset < y.asset ? -1 : 1));
const sortedPositions = (b: AccountBook) => [...b.positions.values()].sort((x, y) => (x.symbol < y.symbol ? -1 : 1));

/** Create an account with its opening balances (each an initial deposit fill), or return the one that exists. */
function ensureAccount(books: TradingState, input: Parameters<TradingStorage['ensureAccount']>[0]): { account: TradingAccount; created: boolean } {
  const { accountId, baseCurrency = 'USDC', initialBalances = {}, now } = input;
  checkId('trading.ensureAccount', 'accountId', accountId);
  const existing = books.get(accountId);
  if (existing) return { account: { ...existing.account }, created: false };
  for (const [asset, amount] of Object.entries(initialBalances)) {
    if (!Number.isFinite(amount) || amount < 0) throw invalidArgument('trading.ensureAccount', `initialBalances.${asset} must be a non-negative number`);
  }
  const account: TradingAccount = { id: accountId, baseCurrency, createdAt: now };
  const book: AccountBook = { account, balances: new Map(), positions: new Map(), fills: new Map(), fillOrder: [], daily: new Map() };
  for (const [asset, amount] of Object.entries(initialBalances)) {
    if (amount === 0) continue;
    const cost = asset === baseCurrency ? amount : 0;
    book.balances.set(asset, { accountId, asset, amount, costBasisUsd: cost, updatedAt: now });
    const fill: TradingFill = {
      id: `deposit:${asset}:initial`, accountId, kind: 'deposit', symbol: asset, side: 'in', quantity: amount, price: asset === baseCurrency ? 1 : 0,
      notionalUsd: cost, feeUsd: 0, realizedPnlUsd: 0, contributionUsd: cost, at: now,
    };
    book.fills.set(fill.id, fill);
    book.fillOrder.push(fill);
  }
  books.set(accountId, book);
  return { account: { ...account }, created: true };
}

/** An account's fills, newest first (by time, then by insertion), at or after `since`. */
function listFills(books: TradingState, accountId: string, query: { readonly limit?: number | undefined; readonly since?: string | undefined }): TradingFill[] {
  checkId('trading.listFills', 'accountId', accountId);
  const limit = checkLimit('trading.listFills', query.limit, 100);
  const b = books.get(accountId);
  if (!b) return [];
  const out: TradingFill[] = [];
  const ordered = b.fillOrder.map((f, i) => ({ f, i })).sort((x, y) => (x.f.at === y.f.at ? y.i - x.i : x.f.at < y.f.at ? 1 : -1));
  for (const { f } of ordered) {
    if (query.since !== undefined && f.at < query.since) continue;
    out.push(jsonCopy(f));
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Run a plan against a copy of the account and apply it whole, or not at all: a repeated fill id answers with the
 * first fill; a rejection, a negative balance or a non-finite number leaves the books as they were.
 */
function applyFill(books: TradingState, accountId: string, fillId: string, plan: TradingPlanFn): ApplyFillResult {
  checkId('trading.applyFill', 'accountId', accountId);
  checkId('trading.applyFill', 'fillId', fillId);
  if (typeof plan !== 'function') throw invalidArgument('trading.applyFill', 'plan must be a function');
  const b = books.get(accountId);
  const dup = b?.fills.get(fillId);
  if (dup) return { status: 'duplicate', fill: jsonCopy(dup) };
  if (!b) return { status: 'rejected', reason: `unknown account "${accountId}"` };
  const balances = sortedBalances(b).map((x) => ({ ...x }));
  const planned = plan({ account: { ...b.account }, balances, positions: sortedPositions(b).map((x) => ({ ...x })) });
  if ('reject' in planned) return { status: 'rejected', reason: planned.reject };
  const folded = foldBalanceDeltas(balances, planned.balances);
  if (!folded.ok) return { status: 'rejected', reason: folded.reason };
  const f = planned.fill;
  for (const n of [f.quantity, f.price, f.notionalUsd, f.feeUsd, f.realizedPnlUsd, f.contributionUsd]) {
    if (!Number.isFinite(n)) return { status: 'rejected', reason: 'the fill has a non-finite number' };
  }
  const touched = new Set(planned.balances.map((d) => d.asset));
  for (const [asset, v] of folded.next) {
    if (touched.has(asset)) b.balances.set(asset, { accountId, asset, amount: v.amount, costBasisUsd: v.costBasisUsd, updatedAt: f.at });
  }
  for (const sym of planned.removePositions ?? []) b.positions.delete(sym);
  for (const p of planned.upsertPositions ?? []) b.positions.set(p.symbol, { ...p, accountId });
  const fill: TradingFill = jsonCopy(compact({ ...f, id: fillId, accountId }));
  b.fills.set(fillId, fill);
  b.fillOrder.push(fill);
  if (f.realizedPnlUsd !== 0) {
    const day = f.at.slice(0, 10);
    b.daily.set(day, (b.daily.get(day) ?? 0) + f.realizedPnlUsd);
  }
  return { status: 'applied', fill: jsonCopy(fill) };
}

/** Realised P&L by UTC day, newest first. */
function listDailyPnl(books: TradingState, accountId: string, query: { readonly limit?: number | undefined }): TradingDailyPnl[] {
  checkId('trading.listDailyPnl', 'accountId', accountId);
  const limit = checkLimit('trading.listDailyPnl', query.limit, 30);
  const b = books.get(accountId);
  if (!b) return [];
  const rows: TradingDailyPnl[] = [...b.daily.entries()].map(([day, realizedUsd]) => ({ accountId, day, realizedUsd }));
  return rows.sort((x, y) => (x.day < y.day ? 1 : -1)).slice(0, limit);
}

/** Sums over every fill of an account. */
function totals(books: TradingState, accountId: string): TradingTotals {
  checkId('trading.totals', 'accountId', accountId);
  let realizedUsd = 0;
  let contributionsUsd = 0;
  let feesUsd = 0;
  const fills = books.get(accountId)?.fillOrder ?? [];
  for (const f of fills) {
    realizedUsd += f.realizedPnlUsd;
    contributionsUsd += f.contributionUsd;
    feesUsd += f.feeUsd;
  }
  return { realizedUsd, contributionsUsd, feesUsd, fills: fills.length };
}
