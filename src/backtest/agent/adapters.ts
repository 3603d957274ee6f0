/**
 * The agent backtest's market and trading adapters are the engine's (`createBacktestMarket`,
 * `createBacktestTradingProvider` in src/backtest/market.ts): the agent is a strategy like any other. These names
 * remain for code written against the first version: each builds the engine's adapter over a view source.
 */
import type { MarketDataProvider, TradingProvider } from '../../finance/types';
import { type BacktestClock, createBacktestMarket, createBacktestTradingProvider } from '../market';
import type { OrderIntent, PointInTimeView } from '../types';

export { listedSymbols } from '../market';

/** The view the adapters answer from: the engine's view at the current decision (undefined outside a decision). */
export type ViewSource = () => PointInTimeView | undefined;

/** A read-only clock over a view source (the owner moves the view; the adapters only read it). */
export function clockOfSource(source: ViewSource): BacktestClock {
  return {
    get view() {
      return source();
    },
    now: () => source()?.now ?? Number.NaN,
    update() {
      throw new Error('clockOfSource: the clock follows its view source; it cannot be set');
    },
  };
}

/**
 * The engine's point-in-time market (`createBacktestMarket`) over a view source.
 * @deprecated use `createBacktestMarket(clock)`.
 */
export function createPointInTimeMarket(source: ViewSource): MarketDataProvider {
  return createBacktestMarket(clockOfSource(source));
}

/** The trading adapter of an agent backtest and the orders it captured in the current decision. */
export interface IntentTrading {
  readonly provider: TradingProvider;
  /** The intents placed since the last call (the engine fills them at the next bar), and forget them. */
  take(): OrderIntent[];
}

/**
 * The engine's backtest trading provider (`createBacktestTradingProvider`) over a view source.
 * @deprecated use `createBacktestTradingProvider(clock)` and its `drain()`.
 */
export function createIntentTrading(source: ViewSource, options: { readonly accountId?: string | undefined } = {}): IntentTrading {
  const provider = createBacktestTradingProvider(clockOfSource(source), options.accountId !== undefined ? { accountId: options.accountId } : {});
  return { provider, take: () => provider.drain() };
}
