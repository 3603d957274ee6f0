/**
 * The paper provider's state (`PaperState`, built by `createPaperTradingProvider`) and the steps every order and
 * view shares: creating the account once, pricing, applying a fill plan, answering a repeated client order id.
 */
import { MinaraError } from '../errors/minara-error';
import type { ApplyFillResult, TradingAccountState, TradingFill, TradingPlanFn, TradingStorage } from '../storage/trading-types';
import { isStableLike, type PaperCosts } from './paper-accounting';
import type { MarketDataProvider, OrderResult } from './types';

/** The resolved options of one paper provider, and whether its account was created. */
export interface PaperState {
  readonly trading: TradingStorage;
  readonly market: MarketDataProvider;
  readonly accountId: string;
  readonly seedBalances: Readonly<Record<string, number>>;
  readonly baseCurrency: string;
  readonly defaultMaxSlippageBps: number;
  readonly now: () => Date;
  readonly costs: PaperCosts;
  /** Depth used by the impact model for a symbol. */
  readonly liquidity: (symbol: string) => number;
  /** Perp sub-accounts by name, with their opening balances. */
  readonly subAccounts: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** The account's creation, once started (cleared when it failed, so the next call retries). */
  ensured: Promise<void> | undefined;
}

/** What every paper result says about where it came from. */
export const PAPER = { source: 'paper', simulated: true } as const;

/** A symbol as the books spell it. */
export const up = (symbol: string): string => symbol.trim().toUpperCase();

/** The book id of a perp sub-account. */
export const subId = (s: PaperState, name: string): string => `${s.accountId}:${name}`;

/** Create the account with its seed balances if it does not exist (once per provider, retried after a failure). */
export function ensurePaperAccount(s: PaperState): Promise<void> {
  return (s.ensured ??= s.trading.ensureAccount({ accountId: s.accountId, baseCurrency: s.baseCurrency, initialBalances: s.seedBalances, now: s.now().toISOString() }).then(
    () => undefined,
    (e: unknown) => {
      s.ensured = undefined;
      throw e;
    },
  ));
}

/** The USD price of a spot asset (1 for the base currency and stablecoins). */
export async function priceOf(s: PaperState, symbol: string, signal?: AbortSignal): Promise<number> {
  if (up(symbol) === s.baseCurrency || isStableLike(symbol)) return 1;
  const q = await s.market.getPrice(up(symbol), signal ? { signal } : {});
  if (!(Number.isFinite(q.priceUsd) && q.priceUsd > 0)) throw new MinaraError('PROVIDER_ERROR', `No valid price for ${symbol}.`);
  return q.priceUsd;
}

/** The perp mark of a symbol (the spot price when the market has no perp marks). */
export async function perpMark(s: PaperState, symbol: string): Promise<number> {
  const q = s.market.getPerpMark ? await s.market.getPerpMark(up(symbol)) : await s.market.getPrice(up(symbol));
  if (!(Number.isFinite(q.priceUsd) && q.priceUsd > 0)) throw new MinaraError('PROVIDER_ERROR', `No valid perp mark for ${symbol}.`);
  return q.priceUsd;
}

/** Apply a fill plan to the main account under a client order id. */
export async function applyOrder(s: PaperState, id: string, plan: TradingPlanFn): Promise<ApplyFillResult> {
  await ensurePaperAccount(s);
  return s.trading.applyFill(s.accountId, id, plan);
}

/** A client order id already filled: answer with the original fill (no re-pricing, no second fill). */
export async function previousOrder(s: PaperState, id: string): Promise<OrderResult | undefined> {
  await ensurePaperAccount(s);
  const f = await s.trading.getFill(s.accountId, id);
  return f ? orderResult({ status: 'duplicate', fill: f }) : undefined;
}

/** An applied (or repeated) fill as an order result; a rejected plan throws. */
export function orderResult(r: ApplyFillResult): OrderResult {
  if (r.status === 'rejected') throw new MinaraError('INVALID_ARGUMENT', `Order rejected: ${r.reason}.`);
  const f = r.fill;
  return {
    ...PAPER, orderId: f.id, status: r.status === 'applied' ? 'filled' : 'duplicate', at: f.at,
    fill: { symbol: f.symbol, side: f.side, quantity: f.quantity, price: f.price, notionalUsd: f.notionalUsd, feeUsd: f.feeUsd, realizedPnlUsd: f.realizedPnlUsd },
  };
}

/** The main account with its balances and positions. */
export async function accountState(s: PaperState): Promise<TradingAccountState> {
  await ensurePaperAccount(s);
  const [account, balances, positions] = await Promise.all([s.trading.getAccount(s.accountId), s.trading.listBalances(s.accountId), s.trading.listPositions(s.accountId)]);
  if (!account) throw new MinaraError('NOT_FOUND', `Paper account "${s.accountId}" does not exist.`);
  return { account, balances, positions };
}

/** Fills of kinds at or after `sinceMs`, oldest first (the history mirror reads the paper books like an exchange's). */
export async function fillsSince(s: PaperState, kinds: readonly string[], sinceMs: number | undefined): Promise<TradingFill[]> {
  await ensurePaperAccount(s);
  const since = sinceMs === undefined ? undefined : new Date(sinceMs).toISOString();
  const fills = await s.trading.listFills(s.accountId, { limit: 10_000, ...(since ? { since } : {}) });
  return fills.filter((f) => kinds.includes(f.kind)).reverse();
}
