/**
 * The finance pack's interfaces answered from the backtest clock, so an agent's read and trade tools work the
 * same live and in a backtest — the agent backtest (part 2) uses exactly these: {@link createBacktestMarket} (a
 * `MarketDataProvider`: price = the current bar's close, OHLCV only up to now, only symbols that have traded by now)
 * and {@link createBacktestTradingProvider} (a `TradingProvider` whose spot orders are captured as
 * {@link OrderIntent}s for the engine to fill at the next bar, never sent anywhere; the result says `queued`).
 */
import { MinaraError } from '../errors/minara-error';
import type { AccountInfo, Candle, MarketDataProvider, OhlcvInterval, OhlcvSeries, OrderResult, PnlReport, Portfolio, PriceQuote, SpotOrderRequest, SpotQuote, TokenInfo, TradingProvider } from '../finance/types';
import type { OrderIntent, PointInTimeView, Strategy } from './types';

/** The simulated "now" the adapters answer from; a strategy wrapped by {@link withClock} keeps it current. */
export interface BacktestClock {
  /** The view of the current decision (undefined before the first one, or outside a decision if the owner clears it). */
  readonly view: PointInTimeView | undefined;
  /** Decision time in ms (NaN before the first decision). */
  now(): number;
  /** Set the current view (the engine's view at a decision). */
  update(view: PointInTimeView): void;
}

/** A clock the backtest adapters read from. */
export function createBacktestClock(): BacktestClock {
  let current: PointInTimeView | undefined;
  return {
    get view() {
      return current;
    },
    now: () => (current ? current.now : Number.NaN),
    update(view) {
      current = view;
    },
  };
}

/** Wrap a strategy so `clock` follows each decision before `decide` runs. */
export function withClock(strategy: Strategy, clock: BacktestClock): Strategy {
  return { ...strategy, decide: (view) => (clock.update(view), strategy.decide(view)) };
}

const fail = (message: string) => new MinaraError('PROVIDER_ERROR', message);
const SOURCE = 'backtest';
/** Stablecoins the adapters price at 1 USD and trade against. */
const STABLES: ReadonlySet<string> = new Set(['USDC', 'USDT', 'USD', 'DAI']);
const iso = (ms: number) => new Date(ms).toISOString();

function current(clock: BacktestClock, what: string): PointInTimeView {
  if (!clock.view) throw fail(`backtest ${what}: no decision is in progress (the point-in-time view is only open during one)`);
  return clock.view;
}

/** The symbols that have a bar at the view's now (a symbol listed later is not known yet: no survivorship leak). */
export function listedSymbols(view: PointInTimeView): string[] {
  return view.symbols.filter((s) => view.last(s) !== undefined);
}

/** The backtest's spelling of `symbol` (case-insensitive), if it has traded by now; else a PROVIDER_ERROR. */
function listed(view: PointInTimeView, symbol: string): string {
  const want = symbol.trim().toUpperCase();
  const match = view.symbols.find((s) => s.toUpperCase() === want);
  if (match === undefined || view.last(match) === undefined) throw fail(`backtest market: no ${want} market at ${iso(view.now)} (symbols trading: ${listedSymbols(view).join(', ')})`);
  return match;
}

/** The label of the bars' interval (from the last two bars), when it is one the finance pack names. */
function intervalOf(bars: readonly { readonly time: number }[], asked: OhlcvInterval | undefined): OhlcvInterval {
  const step = bars.length > 1 ? bars[bars.length - 1]!.time - bars[bars.length - 2]!.time : Number.NaN;
  const named: Record<number, OhlcvInterval> = { 60_000: '1m', 300_000: '5m', 900_000: '15m', 3_600_000: '1h', 14_400_000: '4h', 86_400_000: '1d' };
  return named[step] ?? asked ?? '1d';
}

/**
 * A `MarketDataProvider` over the clock: the price is the current bar's close (stablecoins 1 USD) with the change
 * since the previous bar, candles stop at the current bar (labelled with the bars' own interval), token search and
 * lookup list only the symbols that have traded by now. It has no trending or fear-and-greed feed (nothing answers
 * them point in time).
 */
export function createBacktestMarket(clock: BacktestClock): MarketDataProvider {
  const token = (symbol: string): TokenInfo => ({ source: SOURCE, simulated: true, symbol, name: symbol, chain: 'backtest', address: `backtest:${symbol}`, verified: true, decimals: 8 });
  return {
    name: SOURCE,
    simulated: true,
    async getPrice(symbol): Promise<PriceQuote> {
      const view = current(clock, 'get_price');
      const upper = symbol.trim().toUpperCase();
      if (STABLES.has(upper) && !view.symbols.some((s) => s.toUpperCase() === upper)) return { source: SOURCE, simulated: true, symbol: upper, priceUsd: 1, at: iso(view.now) };
      const bars = view.bars(listed(view, symbol), 2);
      const last = bars[bars.length - 1]!;
      const prev = bars.length > 1 ? bars[0] : undefined;
      return { source: SOURCE, simulated: true, symbol: last.symbol, priceUsd: last.close, ...(prev ? { change24hPct: ((last.close - prev.close) / prev.close) * 100 } : {}), at: iso(view.now) };
    },
    async searchTokens(query, options) {
      const view = current(clock, 'search_tokens');
      const q = query.trim().toUpperCase();
      return listedSymbols(view).filter((s) => s.toUpperCase().includes(q)).slice(0, options?.limit ?? 10).map(token);
    },
    async lookupToken(query) {
      const view = current(clock, 'lookup_token');
      const want = query.symbol?.trim().toUpperCase();
      const match = want ? listedSymbols(view).find((s) => s.toUpperCase() === want) : undefined;
      return match ? token(match) : undefined;
    },
    async getOhlcv(symbol, options): Promise<OhlcvSeries> {
      const view = current(clock, 'get_ohlcv');
      const match = listed(view, symbol);
      const limit = Math.max(1, Math.min(options?.limit ?? 100, 1000));
      const bars = view.bars(match, limit);
      const candles: Candle[] = bars.map((b) => ({ t: b.time, o: b.open, h: b.high, l: b.low, c: b.close, v: b.volume }));
      return { source: SOURCE, simulated: true, symbol: match, interval: intervalOf(bars, options?.interval), candles };
    },
  };
}

/** A trading provider that captures orders; `drain()` hands them to the engine (the agent strategy returns them). */
export interface BacktestTradingProvider extends TradingProvider {
  /** The orders placed since the last drain, in order; clears the list. */
  drain(): OrderIntent[];
}

/** Options of {@link createBacktestTradingProvider}. */
export interface BacktestTradingOptions {
  /** Fee in bps used for quotes and the queued estimate (the engine charges its own at the fill). @default 10 */
  readonly feeBps?: number;
  /** @default 'USDC' */
  readonly baseCurrency?: string;
  /** The account id reads report. @default 'backtest' */
  readonly accountId?: string;
}

/** The client order id an intent of {@link createBacktestTradingProvider} was placed with (its `reason` is `order <id>`). */
export function orderIdOfIntent(intent: OrderIntent): string | undefined {
  return intent.reason?.startsWith('order ') ? intent.reason.slice('order '.length) : undefined;
}

type SpotLeg = { readonly symbol: string; readonly side: 'buy' | 'sell'; readonly price: number };

/** Which backtest symbol a spot order buys or sells (between a stablecoin and one symbol trading now). */
function legOf(view: PointInTimeView, o: SpotOrderRequest, isCash: (s: string) => boolean): SpotLeg {
  const buy = isCash(o.from);
  if (buy === isCash(o.to)) throw fail(`backtest trading: only trades between a stablecoin and one of ${listedSymbols(view).join(', ')} are simulated (got ${o.from} → ${o.to})`);
  const symbol = listed(view, buy ? o.to : o.from);
  return { symbol, side: buy ? 'buy' : 'sell', price: view.last(symbol)!.close };
}

/** The quote at the current close with the estimated fee, and the intent the engine fills at the next bar. */
function quoteAt(view: PointInTimeView, o: SpotOrderRequest, leg: SpotLeg, feeBps: number): SpotQuote & { readonly intent: OrderIntent } {
  const { symbol, side, price } = leg;
  const usd = o.amountUsd ?? (side === 'buy' ? o.amount : o.amount !== undefined ? o.amount * price : undefined);
  if (!(usd !== undefined && usd > 0)) throw fail('backtest trading: give amount or amountUsd, positive');
  const fee = (usd * feeBps) / 10_000;
  const intent: OrderIntent = side === 'buy' ? { symbol, side, notionalUsd: usd } : o.amount !== undefined && o.amountUsd === undefined ? { symbol, side, quantity: o.amount } : { symbol, side, notionalUsd: usd };
  return {
    source: SOURCE, simulated: true, route: `${o.from} → ${o.to} (backtest: fills at the next bar's open)`, from: o.from, to: o.to,
    amountIn: side === 'buy' ? usd : usd / price, amountInUsd: usd, expectedAmountOut: side === 'buy' ? (usd - fee) / price : usd - fee, minAmountOut: 0,
    priceIn: side === 'buy' ? 1 : price, priceOut: side === 'buy' ? price : 1, feeUsd: fee, slippageBps: 0, at: iso(view.now), intent,
  };
}

/** The engine's accounting at now as a `Portfolio` (marks: the current closes). */
function portfolioAt(view: PointInTimeView, base: string, accountId: string): Portfolio {
  const p = view.portfolio;
  const holdings = [{ asset: base, amount: p.cash, priceUsd: 1, valueUsd: p.cash, costBasisUsd: p.cash, unrealizedPnlUsd: 0, stable: true }];
  let exposureUsd = 0;
  for (const s of listedSymbols(view)) {
    const q = p.position(s);
    if (q === 0) continue;
    const price = view.last(s)!.close;
    exposureUsd += Math.abs(q * price);
    holdings.push({ asset: s, amount: q, priceUsd: price, valueUsd: q * price, costBasisUsd: q * p.avgCost(s), unrealizedPnlUsd: q * (price - p.avgCost(s)), stable: false });
  }
  return { source: SOURCE, simulated: true, accountId, holdings, positions: [], totalValueUsd: p.equity, exposureUsd, at: iso(view.now) };
}

/**
 * A `TradingProvider` for backtests: `executeSpot` records an {@link OrderIntent} (buy: USD → asset by notional;
 * sell: asset → USD by quantity, or by notional when given in USD) and answers `status: 'queued'` with the estimate
 * at the current close (`source: 'backtest:next-bar'`); the engine fills it at the next bar's open, and what it
 * filled reaches the strategy through `Strategy.onFill`. Reads answer from the engine's accounting at now. Only
 * symbols that have traded by now can be traded; transfers and perps are refused. Idempotent by client order id.
 */
export function createBacktestTradingProvider(clock: BacktestClock, options: BacktestTradingOptions = {}): BacktestTradingProvider {
  const feeBps = options.feeBps ?? 10;
  const base = options.baseCurrency ?? 'USDC';
  const accountId = options.accountId ?? 'backtest';
  let captured: OrderIntent[] = [];
  const seen = new Map<string, OrderResult>();
  const isCash = (s: string) => s.toUpperCase() === base.toUpperCase() || STABLES.has(s.toUpperCase());
  const quote = (o: SpotOrderRequest) => {
    const view = current(clock, 'quote');
    return quoteAt(view, o, legOf(view, o, isCash), feeBps);
  };
  const refuse = async (): Promise<never> => {
    throw fail('not available in a backtest: transfers and perpetuals are not simulated; only spot buys and sells of the backtest symbols');
  };
  return {
    name: SOURCE,
    simulated: true,
    drain() {
      const out = captured;
      captured = [];
      return out;
    },
    async getAccount(): Promise<AccountInfo> {
      return { accountId, baseCurrency: base, source: SOURCE, simulated: true };
    },
    getPortfolio: async () => portfolioAt(current(clock, 'get_portfolio'), base, accountId),
    async getPnl(): Promise<PnlReport> {
      const view = current(clock, 'get_pnl');
      const p = portfolioAt(view, base, accountId);
      const unrealizedUsd = p.holdings.reduce((a, h) => a + h.unrealizedPnlUsd, 0);
      return { source: SOURCE, simulated: true, accountId, realizedUsd: view.portfolio.realizedPnlUsd, realizedTodayUsd: 0, unrealizedUsd, netContributionsUsd: 0, totalValueUsd: p.totalValueUsd, byDay: [], at: iso(view.now) };
    },
    async quoteSpot(order) {
      const { intent: _intent, ...q } = quote(order);
      return q;
    },
    async executeSpot(order): Promise<OrderResult> {
      const prior = seen.get(order.clientOrderId);
      if (prior) return { ...prior, status: 'duplicate' };
      const q = quote(order);
      captured.push({ ...q.intent, reason: `order ${order.clientOrderId}` });
      const price = q.intent.side === 'buy' ? q.priceOut : q.priceIn;
      const quantity = q.intent.quantity ?? q.amountInUsd / price;
      const result: OrderResult = {
        orderId: order.clientOrderId, status: 'queued',
        fill: { symbol: q.intent.symbol, side: q.intent.side, quantity, price, notionalUsd: quantity * price, feeUsd: q.feeUsd, realizedPnlUsd: 0 },
        at: q.at, source: 'backtest:next-bar', simulated: true,
      };
      seen.set(order.clientOrderId, result);
      return result;
    },
    quoteTransfer: refuse,
    executeTransfer: refuse,
    getPerpPositions: async () => [],
    quotePerpOpen: refuse,
    openPerp: refuse,
    quotePerpClose: refuse,
    closePerp: refuse,
  };
}
