/**
 * The `trading` storage domain: paper-trading accounts, balances (with average cost basis), positions,
 * fills and daily realised P&L, every row scoped by an account id. The finance pack's paper provider keeps
 * all of its state here, so two processes and a restart see the same books.
 *
 * Writes go through {@link TradingStorage.applyFill}: the engine reads the account's current state,
 * hands it to a synchronous `plan` function, checks the plan (no balance may go negative; the fill id is
 * unique per account) and applies the fill, the balance deltas, the position changes and the day's P&L in
 * one transaction. A fill id seen before is not applied twice.
 */

/** A paper account. */
export interface TradingAccount {
  readonly id: string;
  /** Quote currency the books are kept in. */
  readonly baseCurrency: string;
  readonly createdAt: string;
}

/** One asset balance of an account, with the average-cost basis of the units held. */
export interface TradingBalance {
  readonly accountId: string;
  /** Asset symbol, upper case (`USDC`, `ETH`). */
  readonly asset: string;
  /** Units held; never negative. */
  readonly amount: number;
  /** Total cost (in the base currency) of the units held; `amount × average cost`. */
  readonly costBasisUsd: number;
  readonly updatedAt: string;
}

/** An open perpetual position (isolated margin; one net position per market). */
export interface TradingPosition {
  readonly accountId: string;
  /** Market symbol (`BTC`, `ETH`). */
  readonly symbol: string;
  readonly side: 'long' | 'short';
  /** Size in base units (always positive). */
  readonly size: number;
  /** Average entry price. */
  readonly entryPrice: number;
  /** Margin locked in the position (base currency). */
  readonly marginUsd: number;
  readonly leverage: number;
  readonly openedAt: string;
  readonly updatedAt: string;
}

/** What kind of movement a fill records. */
export type TradingFillKind = 'deposit' | 'spot' | 'perp_open' | 'perp_close' | 'transfer_out';

/** One executed fill. */
export interface TradingFill {
  /** Client order id; unique per account, which makes orders idempotent. */
  readonly id: string;
  readonly accountId: string;
  readonly kind: TradingFillKind;
  /** Market or asset the fill is about (`ETH`, `ETH/USDC`). */
  readonly symbol: string;
  readonly side: 'buy' | 'sell' | 'swap' | 'long' | 'short' | 'in' | 'out';
  /** Units filled (base units). */
  readonly quantity: number;
  /** Fill price in the base currency. */
  readonly price: number;
  /** Notional in the base currency. */
  readonly notionalUsd: number;
  readonly feeUsd: number;
  /** Realised P&L of this fill, fees included (negative fees on opening fills). */
  readonly realizedPnlUsd: number;
  /** Change of net contributions (deposits positive, transfers out negative, trades 0), at cost. */
  readonly contributionUsd: number;
  readonly at: string;
  /** Free JSON details (route, mark, slippage, destination). */
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/** A balance change in a plan. */
export interface TradingBalanceDelta {
  readonly asset: string;
  /** Units added (positive) or removed (negative). */
  readonly amount: number;
  /** Cost basis added (positive) or removed (negative). */
  readonly costBasisUsd: number;
}

/** A position as a plan writes it. */
export type TradingPositionInput = Omit<TradingPosition, 'accountId'>;

/** The account state a plan is computed from (read inside the write transaction). */
export interface TradingAccountState {
  readonly account: TradingAccount;
  readonly balances: readonly TradingBalance[];
  readonly positions: readonly TradingPosition[];
}

/** What a plan asks the engine to apply atomically. */
export interface TradingFillPlan {
  readonly fill: Omit<TradingFill, 'id' | 'accountId'>;
  readonly balances: readonly TradingBalanceDelta[];
  /** Positions to create or replace (by symbol). */
  readonly upsertPositions?: readonly TradingPositionInput[] | undefined;
  /** Position symbols to remove. */
  readonly removePositions?: readonly string[] | undefined;
}

/** A plan function: compute the fill from the current state, or reject with a reason. */
export type TradingPlanFn = (state: TradingAccountState) => TradingFillPlan | { readonly reject: string };

/** What {@link TradingStorage.applyFill} did. */
export type ApplyFillResult =
  | { readonly status: 'applied'; readonly fill: TradingFill }
  /** The fill id was applied before; nothing changed and the original fill is returned. */
  | { readonly status: 'duplicate'; readonly fill: TradingFill }
  /** The plan rejected the order or would have made a balance negative; nothing changed. */
  | { readonly status: 'rejected'; readonly reason: string };

/** Realised P&L of one UTC day. */
export interface TradingDailyPnl {
  readonly accountId: string;
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string;
  readonly realizedUsd: number;
}

/** The trading domain of {@link Storage}. Every method is scoped by an account id. */
export interface TradingStorage {
  /** Create the account if missing (with opening deposits recorded as `deposit` fills); return it. */
  ensureAccount(input: {
    readonly accountId: string;
    readonly baseCurrency?: string | undefined;
    readonly initialBalances?: Readonly<Record<string, number>> | undefined;
    readonly now: string;
  }): Promise<{ readonly account: TradingAccount; readonly created: boolean }>;
  getAccount(accountId: string): Promise<TradingAccount | undefined>;
  /** Balances with a non-zero amount, sorted by asset. */
  listBalances(accountId: string): Promise<TradingBalance[]>;
  /** Open positions, sorted by symbol. */
  listPositions(accountId: string): Promise<TradingPosition[]>;
  getFill(accountId: string, fillId: string): Promise<TradingFill | undefined>;
  /** Fills, newest first. */
  listFills(accountId: string, query?: { readonly limit?: number | undefined; readonly since?: string | undefined }): Promise<TradingFill[]>;
  /** Apply one fill atomically (see the module comment). */
  applyFill(accountId: string, fillId: string, plan: TradingPlanFn): Promise<ApplyFillResult>;
  /** Realised P&L of one UTC day (0 when none). */
  dailyPnl(accountId: string, day: string): Promise<number>;
  /** Realised P&L per day, newest first. */
  listDailyPnl(accountId: string, query?: { readonly limit?: number | undefined }): Promise<TradingDailyPnl[]>;
  /** Sums over every fill of the account. */
  totals(accountId: string): Promise<TradingTotals>;
}

/** Sums over every fill of an account. */
export interface TradingTotals {
  readonly realizedUsd: number;
  readonly contributionsUsd: number;
  readonly feesUsd: number;
  readonly fills: number;
}

/** Balances below this (in units) count as zero. */
export const TRADING_DUST = 1e-9;

/**
 * Check a plan against the state and fold the deltas: the new balances, or the reason it is refused.
 * Shared by every engine so they agree on the invariants (no negative balance, finite numbers).
 */
export function foldBalanceDeltas(
  balances: readonly TradingBalance[],
  deltas: readonly TradingBalanceDelta[],
): { readonly ok: true; readonly next: Map<string, { amount: number; costBasisUsd: number }> } | { readonly ok: false; readonly reason: string } {
  const next = new Map<string, { amount: number; costBasisUsd: number }>();
  for (const b of balances) next.set(b.asset, { amount: b.amount, costBasisUsd: b.costBasisUsd });
  for (const d of deltas) {
    if (!Number.isFinite(d.amount) || !Number.isFinite(d.costBasisUsd)) return { ok: false, reason: `non-finite balance change for ${d.asset}` };
    const cur = next.get(d.asset) ?? { amount: 0, costBasisUsd: 0 };
    let amount = cur.amount + d.amount;
    let cost = cur.costBasisUsd + d.costBasisUsd;
    if (amount < -TRADING_DUST * Math.max(1, Math.abs(cur.amount))) {
      return { ok: false, reason: `insufficient ${d.asset}: have ${cur.amount}, need ${-d.amount}` };
    }
    if (amount <= TRADING_DUST) {
      amount = 0;
      cost = 0;
    }
    if (cost < 0) cost = 0;
    next.set(d.asset, { amount, costBasisUsd: cost });
  }
  return { ok: true, next };
}
