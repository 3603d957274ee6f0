/**
 * The shadow report: what the agent would have done (its shadow fills) against what the market did since. Each
 * fill is marked to the current price (a buy: the units got, worth what they are worth now, minus what was
 * spent, fees included; a sell or a close: what it brought, minus what holding the units would be worth now), and
 * the whole book is compared with holding its opening balances: the agent's value now against the opening
 * balances marked to the same prices.
 */
import { MinaraError } from '../errors/minara-error';
import type { TradingFill, TradingStorage } from '../storage/trading-types';
import { isStableLike } from './paper-accounting';
import type { MarketDataProvider, TradingProvider } from './types';

/** One shadow fill, marked to the current price. */
export interface ShadowFillMark {
  readonly id: string;
  readonly at: string;
  readonly kind: TradingFill['kind'];
  readonly symbol: string;
  readonly side: TradingFill['side'];
  readonly quantity: number;
  readonly priceUsd: number;
  readonly notionalUsd: number;
  readonly feeUsd: number;
  /** The price now (undefined when the market has none: a swap between two tokens, an unknown symbol). */
  readonly currentPriceUsd?: number | undefined;
  /** What the decision is worth now against not making it (positive: it helped). */
  readonly markedPnlUsd?: number | undefined;
}

/** The report. */
export interface ShadowReport {
  readonly accountId: string;
  readonly at: string;
  /**
   * The market the book trades against: `live`, or `simulated` (shadow mode without a live adapter: generated
   * prices, offline, a try-out that says nothing about the real market).
   */
  readonly market: 'live' | 'simulated';
  /** Fills at or after this time are listed and marked (all when absent). */
  readonly since?: string | undefined;
  readonly fills: readonly ShadowFillMark[];
  readonly totals: {
    readonly fills: number;
    readonly notionalUsd: number;
    readonly feesUsd: number;
    /** Sum of the listed fills' marks. */
    readonly markedPnlUsd: number;
    /** The shadow book's value now (the whole book, marked to the live market). */
    readonly agentValueUsd: number;
    /** The book's opening balances held untouched, marked to the same prices. */
    readonly holdValueUsd: number;
    /** Deposits into the book (its opening balances at cost). */
    readonly contributionsUsd: number;
    /** `agentValueUsd − holdValueUsd`: what trading added over holding (negative: it cost). */
    readonly edgeUsd: number;
  };
  /** Per asset traded: the price at its first listed fill and now. */
  readonly byAsset: ReadonlyArray<{ readonly symbol: string; readonly fills: number; readonly firstPriceUsd: number; readonly currentPriceUsd?: number | undefined; readonly movePct?: number | undefined; readonly markedPnlUsd: number }>;
}

/** Options of {@link createShadowReport}. */
export interface ShadowReportOptions {
  /** The shadow book (`storage.trading`). */
  readonly trading: TradingStorage;
  /** The shadow provider (its portfolio is the book marked to the live market). */
  readonly provider: Pick<TradingProvider, 'getPortfolio'>;
  /** The live market, for current prices. */
  readonly market: MarketDataProvider;
  /** @default 'shadow' */
  readonly accountId?: string | undefined;
  /** Only fills at or after this ISO time are listed and marked. */
  readonly since?: string | undefined;
  readonly now?: (() => Date) | undefined;
  /** Which market `market` is (labelled in the report). @default 'live' */
  readonly marketKind?: 'live' | 'simulated' | undefined;
}

/**
 * Build the shadow report (see the module comment).
 *
 * @example
 * ```ts
 * const report = await createShadowReport({ trading: storage.trading, provider: finance.trading, market: finance.market, since: '2026-11-01T00:00:00Z' });
 * console.log(`${report.totals.edgeUsd >= 0 ? 'ahead of' : 'behind'} holding by $${Math.abs(report.totals.edgeUsd).toFixed(2)}`);
 * ```
 */
export async function createShadowReport(options: ShadowReportOptions): Promise<ShadowReport> {
  const { trading, provider, market, accountId = 'shadow', since, now = () => new Date() } = options;
  if (since !== undefined && Number.isNaN(Date.parse(since))) throw new MinaraError('INVALID_ARGUMENT', `shadowReport: since must be an ISO time, got ${JSON.stringify(since)}`);
  const sinceIso = since === undefined ? undefined : new Date(since).toISOString();
  const all = await trading.listFills(accountId, { limit: 10_000 });
  const deposits = all.filter((f) => f.kind === 'deposit');
  const traded = all.filter((f) => f.kind !== 'deposit' && (sinceIso === undefined || f.at >= sinceIso)).reverse();
  const prices = new Map<string, number | undefined>();
  const priceOf = async (symbol: string): Promise<number | undefined> => {
    const s = symbol.toUpperCase();
    if (isStableLike(s)) return 1;
    if (!prices.has(s)) {
      try {
        const q = await market.getPrice(s);
        prices.set(s, Number.isFinite(q.priceUsd) && q.priceUsd > 0 ? q.priceUsd : undefined);
      } catch {
        prices.set(s, undefined);
      }
    }
    return prices.get(s);
  };
  const fills: ShadowFillMark[] = [];
  for (const f of traded) {
    const cur = f.symbol.includes('->') ? undefined : await priceOf(f.symbol);
    let marked: number | undefined;
    if (cur !== undefined) {
      if (f.kind === 'spot' && f.side === 'buy') marked = f.quantity * cur - f.notionalUsd;
      else if (f.kind === 'spot' && f.side === 'sell') marked = f.quantity * f.price - f.quantity * cur;
      else if (f.kind === 'perp_open') marked = (f.side === 'short' ? -1 : 1) * (cur - f.price) * f.quantity - f.feeUsd;
      else if (f.kind === 'perp_close') marked = f.realizedPnlUsd;
    }
    fills.push({
      id: f.id, at: f.at, kind: f.kind, symbol: f.symbol, side: f.side, quantity: f.quantity, priceUsd: f.price, notionalUsd: f.notionalUsd, feeUsd: f.feeUsd,
      ...(cur !== undefined ? { currentPriceUsd: cur } : {}), ...(marked !== undefined ? { markedPnlUsd: marked } : {}),
    });
  }
  let holdValueUsd = 0;
  for (const d of deposits) holdValueUsd += d.quantity * ((await priceOf(d.symbol)) ?? 0);
  const agentValueUsd = (await provider.getPortfolio()).totalValueUsd;
  const byAsset = new Map<string, { symbol: string; fills: number; firstPriceUsd: number; currentPriceUsd?: number | undefined; markedPnlUsd: number }>();
  for (const f of fills) {
    const a = byAsset.get(f.symbol) ?? { symbol: f.symbol, fills: 0, firstPriceUsd: f.priceUsd, ...(f.currentPriceUsd !== undefined ? { currentPriceUsd: f.currentPriceUsd } : {}), markedPnlUsd: 0 };
    a.fills++;
    a.markedPnlUsd += f.markedPnlUsd ?? 0;
    byAsset.set(f.symbol, a);
  }
  const sum = (pick: (f: ShadowFillMark) => number) => fills.reduce((n, f) => n + pick(f), 0);
  return {
    accountId, at: now().toISOString(), market: options.marketKind ?? 'live', ...(sinceIso ? { since: sinceIso } : {}), fills,
    totals: {
      fills: fills.length, notionalUsd: sum((f) => f.notionalUsd), feesUsd: sum((f) => f.feeUsd), markedPnlUsd: sum((f) => f.markedPnlUsd ?? 0),
      agentValueUsd, holdValueUsd, contributionsUsd: deposits.reduce((n, d) => n + d.contributionUsd, 0), edgeUsd: agentValueUsd - holdValueUsd,
    },
    byAsset: [...byAsset.values()].map((a) => ({ ...a, ...(a.currentPriceUsd !== undefined && a.firstPriceUsd > 0 ? { movePct: ((a.currentPriceUsd - a.firstPriceUsd) / a.firstPriceUsd) * 100 } : {}) })),
  };
}
