/**
 * Shadow trading (`MINARA_TRADING_MODE=shadow`): the agent runs against the live market without moving money.
 * Market data and previews (quotes) come from the live adapter; orders go to the paper engine, priced by the live
 * market, in a book of their own (account `shadow`), so its fills are recorded as shadow and never mix with the
 * paper account's. Everything the agent reads back about "its" account (portfolio, P&L, positions) is the shadow
 * book's, so its next decisions follow from what it would have done. Results say `source: 'shadow'`,
 * `simulated: true`, and orders `shadow: true`.
 */
import type { TradingStorage } from '../storage/trading-types';
import type { PaperCosts } from './paper-accounting';
import { createPaperTradingProvider, type PaperTradingProvider } from './paper-provider';
import type { MarketDataProvider, OrderResult, TradingProvider } from './types';

/** Options of {@link createShadowTradingProvider}. */
export interface ShadowTradingOptions {
  /** The live trading adapter: its quotes are the previews; no order ever reaches it. */
  readonly live: TradingProvider;
  /** The live market: prices every shadow fill and mark. */
  readonly market: MarketDataProvider;
  /** Where the shadow book lives (`storage.trading`). */
  readonly trading: TradingStorage;
  /** The shadow book's account id. @default 'shadow' */
  readonly accountId?: string | undefined;
  /** The shadow book's opening balances (what the agent may "spend"). @default { USDC: 10000 } */
  readonly seedBalances?: Readonly<Record<string, number>> | undefined;
  /** Paper fees and spread of shadow fills. @default the paper provider's */
  readonly costs?: Partial<PaperCosts> | undefined;
  readonly now?: (() => Date) | undefined;
}

/** The shadow provider, plus its book. */
export interface ShadowTradingProvider extends TradingProvider {
  readonly simulated: true;
  /** The shadow book's account id. */
  readonly accountId: string;
  /** The paper engine that keeps the shadow book. */
  readonly book: PaperTradingProvider;
}

const shadowed = (r: OrderResult): OrderResult => ({ ...r, source: 'shadow', simulated: true, shadow: true });

/** Quotes from `live`, orders to a paper book on the live market (see the module comment). */
export function createShadowTradingProvider(options: ShadowTradingOptions): ShadowTradingProvider {
  const { live, market, trading, accountId = 'shadow', now } = options;
  const book = createPaperTradingProvider({
    trading, market, accountId, ...(options.seedBalances ? { seedBalances: options.seedBalances } : {}), ...(options.costs ? { costs: options.costs } : {}), ...(now ? { now } : {}),
  });
  const tag = <T extends { source: string; simulated: boolean }>(v: T): T => ({ ...v, source: 'shadow', simulated: true });
  return {
    name: 'shadow',
    simulated: true,
    accountId,
    book,
    // What the agent's account holds is the shadow book.
    getAccount: async (o) => tag(await book.getAccount(o)),
    getPortfolio: async (o) => tag(await book.getPortfolio(o)),
    getPnl: async (o) => tag(await book.getPnl(o)),
    getPerpPositions: (o) => book.getPerpPositions(o),
    // Previews are the live venue's quotes.
    quoteSpot: (order, o) => live.quoteSpot(order, o),
    quoteTransfer: (req, o) => live.quoteTransfer(req, o),
    quotePerpOpen: (req, o) => live.quotePerpOpen(req, o),
    quotePerpClose: (req, o) => live.quotePerpClose(req, o),
    // Orders fill in the shadow book, at the live market's prices.
    executeSpot: async (order, o) => shadowed(await book.executeSpot(order, o)),
    executeTransfer: async (req, o) => shadowed(await book.executeTransfer(req, o)),
    openPerp: async (req, o) => shadowed(await book.openPerp(req, o)),
    closePerp: async (req, o) => shadowed(await book.closePerp(req, o)),
    ...(book.listPerpSubAccounts ? { listPerpSubAccounts: book.listPerpSubAccounts.bind(book) } : {}),
    ...(book.quotePerpSweep ? { quotePerpSweep: book.quotePerpSweep.bind(book) } : {}),
    ...(book.sweepPerpSubAccount ? { sweepPerpSubAccount: async (req: Parameters<NonNullable<TradingProvider['sweepPerpSubAccount']>>[0], o?: Parameters<TradingProvider['getPnl']>[0]) => shadowed(await book.sweepPerpSubAccount!(req, o)) } : {}),
  };
}
