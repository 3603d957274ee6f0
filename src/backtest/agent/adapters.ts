import { MinaraError } from '../../errors/minara-error';
import type {
  AccountInfo,
  Candle,
  MarketDataProvider,
  OhlcvInterval,
  OrderResult,
  PnlReport,
  Portfolio,
  PriceQuote,
  SpotOrderRequest,
  SpotQuote,
  TokenInfo,
  TradingProvider,
} from '../../finance/types';
import type { OrderIntent, PointInTimeView } from '../types';

const SOURCE = 'backtest';
const STABLES = new Set(['USDC', 'USDT', 'USD', 'DAI']);

/** The view the adapters answer from: the engine's view at the current decision (undefined outside a decision). */
export type ViewSource = () => PointInTimeView | undefined;

function viewOf(source: ViewSource, what: string): PointInTimeView {
  const view = source();
  if (!view) throw new MinaraError('PROVIDER_ERROR', `backtest ${what}: no decision is in progress (the point-in-time view is only open during one)`);
  return view;
}

function known(view: PointInTimeView, symbol: string): string {
  const s = symbol.trim().toUpperCase();
  if (view.last(s) === undefined) throw new MinaraError('PROVIDER_ERROR', `backtest market: no ${s} market at this time (symbols trading: ${listedSymbols(view).join(', ')})`);
  return s;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The symbols that have traded by the view's now (a symbol listed later is not known yet: no survivorship leak). */
export function listedSymbols(view: PointInTimeView): string[] {
  return view.symbols.filter((s) => view.last(s) !== undefined);
}

/**
 * A `MarketDataProvider` that answers from the backtest's point-in-time view: the price is the last close at or
 * before the simulated now, candles stop at the current bar, token search lists only the backtest's symbols. It has
 * no trending or fear-and-greed feed (those read tools are not created: nothing answers them point in time).
 */
export function createPointInTimeMarket(source: ViewSource): MarketDataProvider {
  const token = (symbol: string): TokenInfo => ({ source: SOURCE, simulated: true, symbol, name: symbol, chain: 'backtest', address: `backtest:${symbol}`, verified: true, decimals: 8 });
  return {
    name: SOURCE,
    simulated: true,
    async getPrice(symbol): Promise<PriceQuote> {
      const view = viewOf(source, 'get_price');
      const s = symbol.trim().toUpperCase();
      if (STABLES.has(s)) return { source: SOURCE, simulated: true, symbol: s, priceUsd: 1, at: iso(view.now) };
      const bars = view.bars(known(view, s), 2);
      const last = bars[bars.length - 1];
      if (!last) throw new MinaraError('PROVIDER_ERROR', `backtest market: no ${s} bar yet at ${iso(view.now)}`);
      const prev = bars.length > 1 ? bars[0]! : undefined;
      return { source: SOURCE, simulated: true, symbol: s, priceUsd: last.close, ...(prev ? { change24hPct: ((last.close - prev.close) / prev.close) * 100 } : {}), at: iso(view.now) };
    },
    async searchTokens(query, options) {
      const view = viewOf(source, 'search_tokens');
      const q = query.trim().toUpperCase();
      return listedSymbols(view).filter((s) => s.includes(q)).slice(0, options?.limit ?? 10).map(token);
    },
    async lookupToken(query) {
      const view = viewOf(source, 'lookup_token');
      const s = query.symbol?.trim().toUpperCase();
      return s && view.last(s) !== undefined ? token(s) : undefined;
    },
    async getOhlcv(symbol, options) {
      const view = viewOf(source, 'get_ohlcv');
      const s = known(view, symbol);
      const limit = Math.max(1, Math.min(options?.limit ?? 100, 1000));
      const candles: Candle[] = view.bars(s, limit).map((b) => ({ t: b.time, o: b.open, h: b.high, l: b.low, c: b.close, v: b.volume }));
      const interval: OhlcvInterval = options?.interval ?? '1d';
      return { source: SOURCE, simulated: true, symbol: s, interval, candles };
    },
  };
}

/** The trading adapter of an agent backtest and the orders it captured in the current decision. */
export interface IntentTrading {
  readonly provider: TradingProvider;
  /** The intents placed since the last call (the engine fills them at the next bar), and forget them. */
  take(): OrderIntent[];
}

/**
 * A `TradingProvider` for the agent in a backtest: an executed spot order becomes an {@link OrderIntent} the engine
 * fills at the next bar (it is not filled here: the result says `queued`), and account, portfolio and P&L reads
 * answer from the engine's accounting at the simulated now. Transfers and perps are refused (the engine trades spot).
 */
export function createIntentTrading(source: ViewSource, options: { readonly accountId?: string | undefined } = {}): IntentTrading {
  const accountId = options.accountId ?? 'backtest';
  let pending: OrderIntent[] = [];
  const price = (view: PointInTimeView, s: string) => view.last(s)?.close ?? Number.NaN;
  const portfolio = async (): Promise<Portfolio> => {
    const view = viewOf(source, 'get_portfolio');
    const p = view.portfolio;
    const holdings = [
      { asset: 'USDC', amount: p.cash, priceUsd: 1, valueUsd: p.cash, costBasisUsd: p.cash, unrealizedPnlUsd: 0, stable: true },
      ...listedSymbols(view)
        .filter((s) => p.position(s) !== 0)
        .map((s) => {
          const amount = p.position(s);
          const px = price(view, s);
          return { asset: s, amount, priceUsd: px, valueUsd: amount * px, costBasisUsd: amount * p.avgCost(s), unrealizedPnlUsd: amount * (px - p.avgCost(s)), stable: false };
        }),
    ];
    const exposureUsd = holdings.filter((h) => !h.stable).reduce((a, h) => a + Math.abs(h.valueUsd), 0);
    return { source: SOURCE, simulated: true, accountId, holdings, positions: [], totalValueUsd: p.equity, exposureUsd, at: iso(view.now) };
  };
  const sideOf = (order: SpotOrderRequest, view: PointInTimeView): { symbol: string; side: 'buy' | 'sell' } => {
    const from = order.from.toUpperCase();
    const to = order.to.toUpperCase();
    if (STABLES.has(from) && !STABLES.has(to)) return { symbol: known(view, to), side: 'buy' };
    if (STABLES.has(to) && !STABLES.has(from)) return { symbol: known(view, from), side: 'sell' };
    throw new MinaraError('PROVIDER_ERROR', `backtest trading: only trades between a stablecoin and one of ${listedSymbols(view).join(', ')} are simulated (got ${from} → ${to})`);
  };
  const quote = async (order: SpotOrderRequest): Promise<SpotQuote> => {
    const view = viewOf(source, 'quote');
    const { symbol, side } = sideOf(order, view);
    const px = price(view, symbol);
    const amountIn = order.amount ?? (side === 'buy' ? order.amountUsd! : order.amountUsd! / px);
    const amountInUsd = side === 'buy' ? amountIn : amountIn * px;
    const expectedAmountOut = side === 'buy' ? amountIn / px : amountIn * px;
    return {
      source: SOURCE, simulated: true, route: `${order.from} → ${order.to} (backtest: fills at the next bar's open)`, from: order.from, to: order.to,
      amountIn, amountInUsd, expectedAmountOut, minAmountOut: expectedAmountOut, priceIn: side === 'buy' ? 1 : px, priceOut: side === 'buy' ? px : 1, feeUsd: 0, slippageBps: 0, at: iso(view.now),
    };
  };
  const refuse = async (): Promise<never> => {
    throw new MinaraError('PROVIDER_ERROR', 'backtest trading: transfers and perpetuals are not simulated; only spot buys and sells of the backtest symbols');
  };
  const provider: TradingProvider = {
    name: SOURCE,
    simulated: true,
    async getAccount(): Promise<AccountInfo> {
      return { source: SOURCE, simulated: true, accountId, baseCurrency: 'USD' };
    },
    getPortfolio: portfolio,
    async getPnl(): Promise<PnlReport> {
      const view = viewOf(source, 'get_pnl');
      const p = await portfolio();
      const unrealizedUsd = p.holdings.reduce((a, h) => a + h.unrealizedPnlUsd, 0);
      return { source: SOURCE, simulated: true, accountId, realizedUsd: view.portfolio.realizedPnlUsd, realizedTodayUsd: 0, unrealizedUsd, netContributionsUsd: 0, totalValueUsd: p.totalValueUsd, byDay: [], at: iso(view.now) };
    },
    quoteSpot: quote,
    async executeSpot(order): Promise<OrderResult> {
      const view = viewOf(source, 'execute');
      const { symbol, side } = sideOf(order, view);
      const px = price(view, symbol);
      const intent: OrderIntent =
        order.amount !== undefined
          ? side === 'buy'
            ? { symbol, side, notionalUsd: order.amount, reason: `agent ${order.clientOrderId}` }
            : { symbol, side, quantity: order.amount, reason: `agent ${order.clientOrderId}` }
          : { symbol, side, notionalUsd: order.amountUsd!, reason: `agent ${order.clientOrderId}` };
      pending.push(intent);
      const quantity = intent.quantity ?? (intent.notionalUsd ?? 0) / px;
      return {
        source: `${SOURCE} (queued: the engine fills it at the next bar's open)`,
        simulated: true,
        orderId: order.clientOrderId,
        status: 'filled',
        fill: { symbol, side, quantity, price: px, notionalUsd: quantity * px, feeUsd: 0, realizedPnlUsd: 0 },
        at: iso(view.now),
      };
    },
    quoteTransfer: refuse,
    executeTransfer: refuse,
    getPerpPositions: async () => [],
    quotePerpOpen: refuse,
    openPerp: refuse,
    quotePerpClose: refuse,
    closePerp: refuse,
  };
  return {
    provider,
    take() {
      const out = pending;
      pending = [];
      return out;
    },
  };
}
