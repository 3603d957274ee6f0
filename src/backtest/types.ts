/**
 * The shapes of `@minara/agent/backtest`: bars, the point-in-time view a strategy decides on, order intents,
 * strategies, fills, rejections, metrics and the result of a run. See docs/backtest.md for every convention.
 */
import type { FinanceLimits } from '../finance/limits';

/** One OHLCV bar. `time` is the bar's open time, ms since epoch, UTC. */
export interface Bar {
  readonly symbol: string;
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

/** The engine's accounting as a strategy sees it at a decision (marks are the current bar's closes). */
export interface BacktestPortfolioView {
  /** Cash in USD. */
  readonly cash: number;
  /** Units held of `symbol` (0 when none). */
  position(symbol: string): number;
  /** Average cost per unit of the open position of `symbol` (0 when none). */
  avgCost(symbol: string): number;
  /** Cash + Σ position × last close, in USD. */
  readonly equity: number;
  /** Fees paid so far, USD. */
  readonly feesUsd: number;
  /** Realised P&L so far (after fees), USD. */
  readonly realizedPnlUsd: number;
}

/** What a strategy sees at a decision: only bars with time <= now (point in time). */
export interface PointInTimeView {
  /** Decision time: the close of the current bar (its open time + the bar interval), ms since epoch. */
  readonly now: number;
  /** Bar index on the shared clock. */
  readonly index: number;
  readonly symbols: readonly string[];
  /** Bars of `symbol` up to and including the current one (the last `lookback` when given); never a bar after `now`. */
  bars(symbol: string, lookback?: number): readonly Bar[];
  /** The current bar of `symbol` (undefined before its first bar). */
  last(symbol: string): Bar | undefined;
  /**
   * Closes of `symbol` up to the current bar, as a read-only typed-array view (no copy, no allocation
   * beyond the view): the fast path for indicators.
   */
  closes(symbol: string): Float64Array;
  /** One field of `symbol`'s bar `ago` bars back (0 = the current bar); NaN before its first bar. No allocation. */
  value(symbol: string, field: 'open' | 'high' | 'low' | 'close' | 'volume', ago?: number): number;
  readonly portfolio: BacktestPortfolioView;
}

/** An order a strategy wants; filled by the engine at the next bar's open (or this bar's close, as configured). */
export interface OrderIntent {
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  /** Units. Exactly one of `quantity` and `notionalUsd`. */
  readonly quantity?: number;
  /** USD notional at the decision's close; converted to units at fill. */
  readonly notionalUsd?: number;
  readonly reason?: string;
}

/** What a strategy's `init` receives. */
export interface StrategyContext {
  readonly symbols: readonly string[];
  readonly initialCash: number;
  /** Bar interval in ms. */
  readonly intervalMs: number;
  /** The run's seed (strategies that draw random numbers derive theirs from it). */
  readonly seed: number;
  /** Total number of clock steps. */
  readonly steps: number;
}

/** Extra files and config a strategy contributes to the run folder (the agent adds llm_costs.csv, decisions.jsonl, …). */
export interface StrategyReport {
  /** File name → content, written beside the standard files. */
  readonly extraFiles?: Readonly<Record<string, string>>;
  /** Merged into `run_config.json` under `strategyReport`. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Merged into `metrics.json` under `strategy`. */
  readonly metrics?: Readonly<Record<string, number | string | null>>;
}

/** A strategy: a function of the point-in-time view returning orders. `decide` may be async (the agent is). */
export interface Strategy {
  readonly name: string;
  readonly params?: Readonly<Record<string, unknown>>;
  init?(ctx: StrategyContext): void | Promise<void>;
  decide(view: PointInTimeView): readonly OrderIntent[] | Promise<readonly OrderIntent[]>;
  /**
   * The engine filled (all or part of) `intent`, one of the orders this strategy returned: called at the fill, before
   * the next `decide`. Not called for an order the engine rejected or could not fill. The agent records its trades in
   * the learning loop from these fills (price, quantity, fee, realised P&L), as the engine made them.
   */
  onFill?(fill: Fill, intent: OrderIntent): void;
  finish?(): void | Promise<void>;
  /** Sections the strategy adds to the report. */
  report?(): StrategyReport | Promise<StrategyReport>;
}

/** Fee model: basis points of notional with a minimum per fill. */
export interface FeeModel {
  /** @default 10 (the paper engine's spot fee) */
  readonly bps: number;
  /** Minimum fee per fill in USD. @default 0 */
  readonly minUsd: number;
}

/** Slippage: a fixed number of basis points, or proportional to the fill's share of the bar's volume. */
export type SlippageModel =
  | { readonly kind: 'fixed'; readonly bps: number }
  /** bps = `bpsPerVolumeShare` × (fill quantity / bar volume) (a linear impact model). */
  | { readonly kind: 'volume-share'; readonly bpsPerVolumeShare: number };

/** Where a decision on bar t fills. */
export type FillTiming = 'next-open' | 'same-close';

/** Market session calendar. `crypto` is 24/7; `equity` keeps only bars inside the session on weekdays. */
export type Calendar =
  | { readonly kind: 'crypto' }
  | { readonly kind: 'equity'; readonly timezone?: string; readonly open?: string; readonly close?: string };

/** Options of {@link runBacktest}. */
export interface BacktestOptions {
  readonly bars: BarSet;
  readonly strategy: Strategy;
  /** @default 10_000 */
  readonly initialCash?: number;
  readonly fees?: Partial<FeeModel>;
  /** @default { kind: 'fixed', bps: 0 } */
  readonly slippage?: SlippageModel;
  /** @default 'next-open' */
  readonly fill?: FillTiming;
  /** Largest share of a bar's volume one fill may take (0 < share ≤ 1); the rest stays unfilled (partial fill). @default 1 */
  readonly volumeCap?: number;
  /** The finance pack's limits, enforced on every order (as the gate does live). Absent: no limits. */
  readonly limits?: Partial<FinanceLimits>;
  /** @default 1 */
  readonly seed?: number;
  /** Run the baselines (buy-and-hold, random) under the same costs. @default true */
  readonly baselines?: boolean;
  /** Periods per year for annualisation. @default derived from the bar interval (365 days for crypto, 252 for equity daily) */
  readonly periodsPerYear?: number;
  /** Annual risk-free rate for Sharpe/Sortino. @default 0 */
  readonly riskFreeRate?: number;
  /** Called every `progressEvery` steps with (done, total). */
  readonly onProgress?: (done: number, total: number) => void;
  readonly progressEvery?: number;
}

/** Bars of one or more symbols aligned on one clock, column-wise (typed arrays; NaN where a symbol has no bar). */
export interface BarSet {
  readonly symbols: readonly string[];
  /** Clock: bar open times, ascending, ms since epoch. */
  readonly times: Float64Array;
  /** Bar interval in ms. */
  readonly intervalMs: number;
  readonly calendar: Calendar;
  /** Per symbol, in `symbols` order. */
  readonly open: readonly Float64Array[];
  readonly high: readonly Float64Array[];
  readonly low: readonly Float64Array[];
  readonly close: readonly Float64Array[];
  readonly volume: readonly Float64Array[];
  /** Where the bars came from (file paths and sha256 hashes, or the generator's options). */
  readonly sources: readonly DataSource[];
}

/** The provenance of a bar set (written to run_config.json). */
export interface DataSource {
  readonly kind: 'file' | 'synthetic' | 'memory';
  readonly path?: string;
  readonly format?: string;
  readonly sha256: string;
  readonly rows: number;
  readonly options?: Readonly<Record<string, unknown>>;
  /** Repairs applied (only with the explicit `repair` option). */
  readonly repairs?: readonly string[];
}

/** A filled (possibly partial) order. */
export interface Fill {
  readonly orderId: number;
  readonly time: number;
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  readonly quantity: number;
  readonly price: number;
  readonly notionalUsd: number;
  readonly feeUsd: number;
  readonly slippageBps: number;
  /** Realised P&L of this fill after fees (sells: proceeds − cost removed − fee; buys: −fee). */
  readonly realizedPnlUsd: number;
}

/** An order as placed by the strategy and what became of it. */
export interface OrderRecord {
  readonly orderId: number;
  readonly decidedAt: number;
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  readonly requestedQuantity: number;
  readonly filledQuantity: number;
  readonly status: 'filled' | 'partial' | 'rejected' | 'unfilled';
  readonly reason: string;
}

/** An order the limits or the accounting refused, with the rule that refused it. */
export interface RejectedOrder {
  readonly orderId: number;
  readonly time: number;
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  readonly quantity: number;
  readonly notionalUsd: number;
  /** `maxTradeUsd`, `maxDailyLossUsd`, `maxAssetConcentrationPct`, `maxTotalExposureUsd`, `denyList`, `insufficient_cash`, `insufficient_position`, `no_bar`, `zero_volume`, `invalid_order`. */
  readonly rule: string;
  readonly detail: string;
}

/** A round trip: from flat to flat on one symbol (FIFO-free average-cost, like the paper engine). */
export interface Trade {
  readonly symbol: string;
  readonly entryTime: number;
  readonly exitTime: number;
  readonly quantity: number;
  readonly entryPrice: number;
  readonly exitPrice: number;
  readonly pnlUsd: number;
  readonly feesUsd: number;
  readonly returnPct: number;
}

/** Metrics of one run (names as Lean, backtrader and empyrical users expect; conventions in docs/backtest.md). */
export interface BacktestMetrics {
  readonly totalReturn: number;
  readonly cagr: number;
  readonly volatility: number;
  readonly sharpe: number;
  /** 95 % interval of the Sharpe ratio (stationary block bootstrap, see `sharpeCiMethod`). */
  readonly sharpeCi95: readonly [number, number];
  readonly sharpeCiMethod: string;
  readonly probabilisticSharpe: number;
  readonly sortino: number;
  readonly maxDrawdown: number;
  /** Longest time under water, in bars. */
  readonly maxDrawdownDuration: number;
  readonly calmar: number;
  readonly turnover: number;
  readonly exposure: number;
  readonly trades: number;
  readonly winRate: number;
  /** Gross profit / gross loss of closed trades (Infinity with no losing trade; written as null in JSON). */
  readonly profitFactor: number;
  readonly feesUsd: number;
  readonly blockedOrders: Readonly<Record<string, number>>;
  readonly finalEquity: number;
  readonly periods: number;
  readonly periodsPerYear: number;
}

/** One strategy's run over the bars. */
export interface StrategyRun {
  readonly name: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** Equity at each clock step's close. */
  readonly equity: Float64Array;
  /** Gross exposure (Σ |position × close|) at each step. */
  readonly exposure: Float64Array;
  readonly fills: readonly Fill[];
  readonly orders: readonly OrderRecord[];
  readonly rejected: readonly RejectedOrder[];
  readonly trades: readonly Trade[];
  readonly metrics: BacktestMetrics;
}

/** What {@link runBacktest} returns: the strategy, its baselines, and the config to rerun it. */
export interface BacktestResult {
  readonly strategy: StrategyRun;
  /** `buy-and-hold` and `random` under the same costs (empty when baselines are off). */
  readonly baselines: readonly StrategyRun[];
  readonly bars: BarSet;
  /** Everything needed to rerun (written as run_config.json). */
  readonly config: BacktestRunConfig;
  readonly strategyReport?: StrategyReport;
}

/** run_config.json. `createdAt` is the one timestamp that differs between two identical runs. */
export interface BacktestRunConfig {
  readonly version: 1;
  readonly createdAt: string;
  readonly strategy: { readonly name: string; readonly params: Readonly<Record<string, unknown>> };
  readonly initialCash: number;
  readonly fees: FeeModel;
  readonly slippage: SlippageModel;
  readonly fill: FillTiming;
  /** Share of bar volume one fill may take; null = no cap. */
  readonly volumeCap: number | null;
  readonly limits: Partial<FinanceLimits> | null;
  readonly seed: number;
  readonly periodsPerYear: number;
  readonly riskFreeRate: number;
  readonly symbols: readonly string[];
  readonly intervalMs: number;
  readonly calendar: Calendar;
  readonly start: string;
  readonly end: string;
  readonly data: readonly DataSource[];
  /** Names of fields that hold wall-clock timestamps (differ between identical runs). */
  readonly timestampFields: readonly string[];
  readonly strategyReport?: Readonly<Record<string, unknown>>;
}
