/**
 * The finance pack's interfaces answered from the backtest clock, so an agent's read and trade tools work the
 * same live and in a backtest: {@link createBacktestMarket} (a `MarketDataProvider`: price = the current bar's
 * close, OHLCV only up to now) and {@link createBacktestTradingProvider} (a `TradingProvider` whose spot orders
 * are captured as {@link OrderIntent}s for the engine to fill at the next bar, never sent anywhere).
 */
import { MinaraError } from '../errors/minara-error';
import type { AccountInfo, MarketDataProvider, OhlcvSeries, OrderResult, PnlReport, Portfolio, PriceQuote, SpotOrderRequest, SpotQuote, TradingProvider } from '../finance/types';
import type { OrderIntent, PointInTimeView, Strategy } from './types';

/** The simulated "now" the adapters answer from; a strategy wrapped by {@link withClock} keeps it current. */
export interface BacktestClock {
  /** The view of the current decision (undefined before the first one). */
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

function current(clock: BacktestClock): PointInTimeView {
  if (!clock.view) throw fail('backtest clock: no decision yet (the market answers only inside a backtest decision)');
  return clock.view;
}

function closeOf(view: PointInTimeView, symbol: string): number {
  const sym = symbol.toUpperCase();
  const match = view.symbols.find((s) => s.toUpperCase() === sym);
  if (!match) throw fail(`${symbol}: not in this backtest (symbols: ${view.symbols.join(', ')})`);
  const c = view.value(match, 'close');
  if (!(c > 0)) throw fail(`${symbol}: no bar at or before ${new Date(view.now).toISOString()}`);
  return c;
}

/** A `MarketDataProvider` over the clock: prices and candles at or before the simulated now, nothing later. */
export function createBacktestMarket(clock: BacktestClock): MarketDataProvider {
  return {
    name: 'backtest',
    simulated: true,
    async getPrice(symbol): Promise<PriceQuote> {
      const view = current(clock);
      const price = closeOf(view, symbol);
      const dayAgo = view.bars(view.symbols.find((s) => s.toUpperCase() === symbol.toUpperCase()) as string).find((b) => b.time + 86_400_000 >= view.now);
      return { symbol: symbol.toUpperCase(), priceUsd: price, ...(dayAgo ? { change24hPct: (price / dayAgo.open - 1) * 100 } : {}), at: new Date(view.now).toISOString(), source: SOURCE, simulated: true };
    },
    async getOhlcv(symbol, options): Promise<OhlcvSeries> {
      const view = current(clock);
      closeOf(view, symbol);
      const match = view.symbols.find((s) => s.toUpperCase() === symbol.toUpperCase()) as string;
      const bars = view.bars(match, options?.limit ?? 200);
      return { symbol: match, interval: options?.interval ?? '1d', candles: bars.map((b) => ({ t: b.time, o: b.open, h: b.high, l: b.low, c: b.close, v: b.volume })), source: SOURCE, simulated: true };
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
  /** Fee in bps used for quotes (the engine charges its own). @default 10 */
  readonly feeBps?: number;
  /** @default 'USDC' */
  readonly baseCurrency?: string;
}

/**
 * A `TradingProvider` for backtests: `executeSpot` records an {@link OrderIntent} (buy: USD → asset by
 * notional; sell: asset → USD by quantity) and answers with the estimate at the current close, marked
 * `source: 'backtest:next-bar'`; the engine fills it at the next bar's open. Reads answer from the engine's
 * accounting at now. Transfers and perps are refused. Idempotent by client order id.
 */
export function createBacktestTradingProvider(clock: BacktestClock, options: BacktestTradingOptions = {}): BacktestTradingProvider {
  const feeBps = options.feeBps ?? 10;
  const base = options.baseCurrency ?? 'USDC';
  let captured: OrderIntent[] = [];
  const seen = new Map<string, OrderResult>();
  const isCash = (s: string) => s.toUpperCase() === base.toUpperCase() || ['USD', 'USDC', 'USDT'].includes(s.toUpperCase());
  const at = () => new Date(current(clock).now).toISOString();
  const quote = (o: SpotOrderRequest): SpotQuote & { intent: OrderIntent } => {
    const view = current(clock);
    const buy = isCash(o.from);
    const asset = buy ? o.to : o.from;
    if (isCash(o.to) === buy) throw fail('spot: a backtest trades between cash and one asset (from USD to an asset, or back)');
    const price = closeOf(view, asset);
    const symbol = view.symbols.find((s) => s.toUpperCase() === asset.toUpperCase()) as string;
    const usd = o.amountUsd ?? (buy ? o.amount : o.amount !== undefined ? o.amount * price : undefined);
    if (!(usd !== undefined && usd > 0)) throw fail('spot: give amount or amountUsd, positive');
    const fee = (usd * feeBps) / 10_000;
    const intent: OrderIntent = buy ? { symbol, side: 'buy', notionalUsd: usd } : o.amount !== undefined && o.amountUsd === undefined ? { symbol, side: 'sell', quantity: o.amount } : { symbol, side: 'sell', notionalUsd: usd };
    return {
      route: 'backtest', from: o.from, to: o.to, amountIn: buy ? usd : usd / price, amountInUsd: usd, expectedAmountOut: buy ? (usd - fee) / price : usd - fee, minAmountOut: 0, priceIn: buy ? 1 : price, priceOut: buy ? price : 1,
      feeUsd: fee, slippageBps: 0, at: at(), source: SOURCE, simulated: true, intent,
    };
  };
  const refuse = async (): Promise<never> => {
    throw fail('not available in a backtest (spot orders only)');
  };
  return {
    name: 'backtest',
    simulated: true,
    drain() {
      const out = captured;
      captured = [];
      return out;
    },
    async getAccount(): Promise<AccountInfo> {
      return { accountId: 'backtest', baseCurrency: base, source: SOURCE, simulated: true };
    },
    async getPortfolio(): Promise<Portfolio> {
      const view = current(clock);
      const p = view.portfolio;
      const holdings = [{ asset: base, amount: p.cash, priceUsd: 1, valueUsd: p.cash, costBasisUsd: p.cash, unrealizedPnlUsd: 0, stable: true }];
      let exposure = 0;
      for (const s of view.symbols) {
        const q = p.position(s);
        if (q === 0) continue;
        const price = view.value(s, 'close');
        exposure += q * price;
        holdings.push({ asset: s, amount: q, priceUsd: price, valueUsd: q * price, costBasisUsd: q * p.avgCost(s), unrealizedPnlUsd: q * (price - p.avgCost(s)), stable: false });
      }
      return { accountId: 'backtest', holdings, positions: [], totalValueUsd: p.equity, exposureUsd: exposure, at: at(), source: SOURCE, simulated: true };
    },
    async getPnl(): Promise<PnlReport> {
      const view = current(clock);
      const p = view.portfolio;
      let unrealized = 0;
      for (const s of view.symbols) if (p.position(s) !== 0) unrealized += p.position(s) * (view.value(s, 'close') - p.avgCost(s));
      return { accountId: 'backtest', realizedUsd: p.realizedPnlUsd, realizedTodayUsd: 0, unrealizedUsd: unrealized, netContributionsUsd: p.equity - p.realizedPnlUsd - unrealized, totalValueUsd: p.equity, byDay: [], at: at(), source: SOURCE, simulated: true };
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
      const result: OrderResult = {
        orderId: order.clientOrderId, status: 'filled',
        fill: { symbol: q.intent.symbol, side: q.intent.side, quantity: q.intent.quantity ?? q.amountInUsd / price, price, notionalUsd: q.amountInUsd, feeUsd: q.feeUsd, realizedPnlUsd: 0 },
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
