/**
 * `@minara/agent/backtest`: an event-driven backtester for strategies and, in part 2, the agent itself.
 * Bars from CSV/JSON files (generic CSV, Binance klines, CoinGecko market_chart, Hyperliquid candleSnapshot) or
 * a seeded generator; a point-in-time clock; fills at the next bar's open with fees, slippage and a volume
 * cap; the paper engine's accounting; the finance pack's limits; empyrical-convention metrics with baselines;
 * and a run folder with CSVs, JSON and a self-contained HTML report. Conventions: docs/backtest.md.
 *
 * @module
 * @example
 * ```ts
 * import { generateBars, runBacktest, smaCross, writeBacktestReport } from '@minara/agent/backtest';
 *
 * const bars = generateBars({ seed: 42, symbols: ['BTC', 'ETH'], regime: 'bull', bars: 730 });
 * const result = await runBacktest({ bars, strategy: smaCross({ fast: 10, slow: 30 }), fees: { bps: 10 } });
 * console.log(result.strategy.metrics.sharpe, result.strategy.metrics.sharpeCi95);
 * await writeBacktestReport(result, 'runs/sma-cross', { png: false });
 * ```
 */
import { assertSupportedNode } from '../util/node-version';

assertSupportedNode();

// The agent in the loop (issue 40, src/backtest/agent): createAgentStrategy, runAgentBacktest, cassettes, costs, contamination.
export * from './agent/index';

export type {
  BacktestMetrics, BacktestOptions, BacktestPortfolioView, BacktestResult, BacktestRunConfig, Bar, BarSet, Calendar, DataSource, FeeModel, Fill, FillTiming, OrderIntent,
  OrderRecord, PointInTimeView, RejectedOrder, SlippageModel, Strategy, StrategyContext, StrategyReport, StrategyRun, Trade,
} from './types';
export { barsOf, type BarRepairOptions, createBarSet, type CreateBarSetOptions, hashBars } from './bars';
export { inSession, parseInterval, periodsPerYear } from './calendar';
export { type BarFileSpec, type BarFormat, detectBarFormat, loadBars, parseBars, parseBinanceKlines, parseCoinGeckoMarketChart, parseGenericCsv, parseHyperliquidCandles, type ParsedBars } from './loaders';
export { generateBars, type GenerateBarsOptions, type SyntheticRegime } from './synthetic';
export { createSeededRandom, type SeededRandom } from './prng';
export { runBacktest } from './run';
export {
  buyAndHold, builtinStrategy, momentumStrategy, type MomentumOptions, noopStrategy, randomStrategy, type RandomStrategyOptions, smaCross, type SmaCrossOptions,
} from './strategies';
export {
  annualVolatility, cagr, calmarRatio, computeMetrics, downsideRisk, equityReturns, maxDrawdown, type MetricsInput, minTrackRecordLength, normalCdf, normalQuantile, probabilisticSharpe, sharpeBootstrapCi, sharpeRatio, skewKurt,
  sortinoRatio, totalReturn,
} from './metrics';
export { metricsDocument, renderReportHtml, reportChartSpecs, reportCsvFiles, stableJson, writeBacktestReport, type WriteReportOptions, type WrittenReport } from './report';
export {
  type BacktestClock, type BacktestTradingOptions, type BacktestTradingProvider, createBacktestClock, createBacktestMarket, createBacktestTradingProvider, listedSymbols, orderIdOfIntent,
  withClock,
} from './market';
export { ema, momentum, sma } from './indicators';
export { buyWithCash, cashForQuantity, type FillCosts, sellQuantity, type SpotFillOut } from './accounting';
export { BACKTEST_REPORT_TITLE_PREFIX, backtestMarkdown, type BacktestToolsOptions, createBacktestTools } from './tool';
