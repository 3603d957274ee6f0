import type { TradingStorage } from '../storage/trading-types';
import { DEFAULT_PAPER_COSTS, type PaperCosts } from './paper-accounting';
import { closePerp, executeSpot, executeTransfer, openPerp, quotePerpClose, quotePerpOpen, quoteSpot, quoteTransfer } from './paper-provider-orders';
import { ensurePaperAccount, type PaperState } from './paper-provider-state';
import { listPerpSubAccounts, quotePerpSweep, sweepPerpSubAccount } from './paper-provider-sweep';
import { getAccount, getPnl, getPortfolio, listPerpFills, listSpotActivity, positionViews } from './paper-provider-views';
import type { MarketDataProvider, TradingProvider } from './types';

/** Options of {@link createPaperTradingProvider}. */
export interface PaperTradingOptions {
  /** Where the books live (`storage.trading`). */
  readonly trading: TradingStorage;
  /** Prices every fill and mark. */
  readonly market: MarketDataProvider;
  /** Paper account id. @default 'paper' */
  readonly accountId?: string | undefined;
  /** Opening balances of a new account. @default { USDC: 10000 } */
  readonly seedBalances?: Readonly<Record<string, number>> | undefined;
  /** @default 'USDC' */
  readonly baseCurrency?: string | undefined;
  /** Fees and spread. @default DEFAULT_PAPER_COSTS */
  readonly costs?: Partial<PaperCosts> | undefined;
  /** Depth used by the impact model for a symbol. @default the simulated universe's, else 5,000,000 */
  readonly liquidityUsd?: ((symbol: string) => number) | undefined;
  /** Default slippage cap of an order that gives none. @default 100 */
  readonly defaultMaxSlippageBps?: number | undefined;
  /**
   * Perp sub-accounts beside the main account, by name, with their opening balances (kept as accounts
   * `<accountId>:<name>` in the same books). @default { 'perps-1': { USDC: 500 } }
   */
  readonly perpSubAccounts?: Readonly<Record<string, Readonly<Record<string, number>>>> | undefined;
  readonly now?: (() => Date) | undefined;
}

/** The paper provider plus accounting access for tests and the exposure hook. */
export interface PaperTradingProvider extends TradingProvider {
  readonly simulated: true;
  readonly accountId: string;
  /** Create the account with its seed balances if it does not exist. */
  ensureAccount(): Promise<void>;
}

/**
 * The embedded paper-trading provider. Its state (balances, positions, fills, realised P&L) lives in the
 * `trading` storage domain, so it survives restarts and is shared by processes on one database; prices
 * come from the market (the simulated feed by default) and every result says `simulated: true`.
 * Orders are idempotent by client order id.
 *
 * Wiring only: the state is a `PaperState` (`paper-provider-state.ts`, with pricing and the shared order steps),
 * quotes and orders are `paper-provider-orders.ts`, the account's views `paper-provider-views.ts`, perp
 * sub-accounts and sweeps `paper-provider-sweep.ts`; the accounting itself is `paper-accounting.ts`.
 */
export function createPaperTradingProvider(options: PaperTradingOptions): PaperTradingProvider {
  const s = newPaperState(options);
  return {
    name: 'paper',
    simulated: true,
    accountId: s.accountId,
    ensureAccount: () => ensurePaperAccount(s),
    listPerpSubAccounts: () => listPerpSubAccounts(s),
    quotePerpSweep: (req) => quotePerpSweep(s, req),
    sweepPerpSubAccount: (req) => sweepPerpSubAccount(s, req),
    listPerpFills: (q) => listPerpFills(s, q),
    listSpotActivity: (q) => listSpotActivity(s, q),
    getAccount: () => getAccount(s),
    getPortfolio: () => getPortfolio(s),
    getPnl: () => getPnl(s),
    quoteSpot: (order) => quoteSpot(s, order),
    executeSpot: (order) => executeSpot(s, order),
    quoteTransfer: (req) => quoteTransfer(s, req),
    executeTransfer: (req) => executeTransfer(s, req),
    getPerpPositions: () => positionViews(s),
    quotePerpOpen: (req) => quotePerpOpen(s, req),
    openPerp: (req) => openPerp(s, req),
    quotePerpClose: (req) => quotePerpClose(s, req),
    closePerp: (req) => closePerp(s, req),
  };
}

/** Resolve the options into the provider's state (defaults, costs, the impact model's depth). */
function newPaperState(options: PaperTradingOptions): PaperState {
  const {
    trading, market, accountId = 'paper', seedBalances = { USDC: 10_000 }, baseCurrency = 'USDC', defaultMaxSlippageBps = 100, now = () => new Date(),
  } = options;
  const simTokens = (market as { token?: (s: string) => { liquidityUsd: number } | undefined }).token;
  return {
    trading, market, accountId, seedBalances, baseCurrency, defaultMaxSlippageBps, now,
    costs: { ...DEFAULT_PAPER_COSTS, ...options.costs },
    liquidity: options.liquidityUsd ?? ((sym: string) => simTokens?.(sym)?.liquidityUsd ?? 5_000_000),
    subAccounts: options.perpSubAccounts ?? { 'perps-1': { USDC: 500 } },
    ensured: undefined,
  };
}
