/**
 * `@minara/agent/finance`: the finance domain. Tools (prices, portfolio, spot, perps, transfers, emergency
 * stop) over injectable market and trading providers, an offline paper-trading provider whose books live
 * in storage, the six-stage safety stack as registry hooks, built-in skills and the L0.5 scenario
 * classifier.
 *
 * @module
 * @example
 * ```ts
 * import { createToolRegistry, createSkillRegistry } from '@minara/agent';
 * import { createFinancePack } from '@minara/agent/finance';
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const finance = createFinancePack({ storage, limits: { maxTradeUsd: 1000 } });
 * const tools = finance.attach(createToolRegistry({ tools: finance.tools, hooks: finance.hooks, storage }));
 * const skills = createSkillRegistry({ skills: finance.skills, tools });
 * console.log(await tools.dispatch('get_price', { symbol: 'ETH' })); // {"ok":true,"data":{…,"simulated":true}}
 * ```
 */
import { assertSupportedNode } from '../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

// ── the pack ─────────────────────────────────────────────────────────────────
export { createFinancePack, type FinancePack, type FinancePackOptions } from './create-finance-pack';

// ── provider interfaces ──────────────────────────────────────────────────────
export type {
  AccountInfo, Candle, FearGreed, HistoryPerpFill, HistorySpotActivity, Holding, MarketDataProvider, OhlcvInterval, OhlcvSeries, OrderResult, PerpCloseRequest, PerpOpenRequest, PerpSubAccount,
  PerpPositionView, PerpQuote, PerpSweepQuote, PerpSweepRequest, PnlReport, Portfolio, PriceQuote, Provenance, ProviderCallOptions, SpotOrderRequest, SpotQuote, TokenInfo,
  TradingProvider, TransferQuote, TransferRequest, TrendingToken,
} from './types';

// ── embedded defaults ────────────────────────────────────────────────────────
export { createSimulatedMarket, type SimulatedMarket, type SimulatedMarketOptions } from './simulated-market';
export { SIM_TOKENS, type SimToken } from './token-universe';
export { createPaperTradingProvider, type PaperTradingOptions, type PaperTradingProvider } from './paper-provider';
export { createShadowTradingProvider, type ShadowTradingOptions, type ShadowTradingProvider } from './shadow-provider';
export { createShadowReport, type ShadowFillMark, type ShadowReport, type ShadowReportOptions } from './shadow-report';
export { createShadowReportTool } from './shadow-tool';
export { DEFAULT_PAPER_COSTS, type PaperCosts } from './paper-accounting';

// ── real adapters ────────────────────────────────────────────────────────────
export { createProviderFetch, type ProviderFetch, type ProviderFetchOptions } from './adapters/provider-fetch';
export { createMinaraMarket, createMinaraTradingProvider, type MinaraAdapterOptions } from './adapters/minara';
export { createCoinGeckoMarket, type CoinGeckoOptions } from './adapters/coingecko';
export { createHyperliquidMarket, type HyperliquidOptions } from './adapters/hyperliquid';
export { createMinaraToolFactory, minaraProvidersFromEnv, type MinaraToolFactoryOptions } from './adapters/factory';
export { COINGECKO_IDS } from './adapters/coingecko';
export { ProviderError, parseRetryAfter, type ProviderRequest } from './adapters/provider-fetch';

// ── limits ───────────────────────────────────────────────────────────────────
export {
  DEFAULT_FINANCE_LIMITS, type FinanceLimits, FinanceLimitsSchema, parseFinanceLimits, type PreferenceReader, resolveFinanceLimits, tightenLimits,
} from './limits';

// ── tools and safety ─────────────────────────────────────────────────────────
export { FUND_MOVING_TOOLS, type OrderFacts, type TokenRef } from './order-facts';
export { compareIntent, parseIntent, type ParsedIntent } from './intent';
export { intentSchema } from './schemas';
export { SAFETY_AUDIT_TOOL, SAFETY_STAGES, type SafetyStage, type StageDecision } from './safety/index';
export { type Autopilot, type AutopilotJob, autopilotIntent, type AutopilotOrder, type AutopilotStrategy } from './autopilot';
export {
  type AlertCheckOptions,
  type AlertCheckResult,
  type AlertDelivery,
  alertHolds,
  alertMessage,
  type AlertToolOptions,
  checkAlerts,
  createAlertCheckJob,
  createAlertTool,
  describeAlertCondition,
  MAX_ACTIVE_ALERTS,
} from './alerts';

// ── describing calls and results in words (web app, REPL) ───────────────────
export {
  describeOrder, type DescribeOrderInput, describeToolResult, type DescribeToolResultInput, formatBps, formatPrice, formatSignedUsd, formatUnits, formatUsd,
} from './describe';

// ── skills and scenarios ─────────────────────────────────────────────────────
export { createFinanceSkills, FINANCE_SKILL_DEFINITIONS, minaraAutopilotDefinition } from './skills';
export { FINANCE_SCENARIOS, type ScenarioDefinition } from './scenarios';
export { createScenarioClassifier, type ScenarioClassifier, type ScenarioClassifierOptions, type ScenarioResult } from './scenario-classifier';

// ── the trading storage domain (implemented by every Storage engine) ─────────
export type {
  ApplyFillResult, TradingAccount, TradingAccountState, TradingBalance, TradingBalanceDelta, TradingDailyPnl, TradingFill, TradingFillKind,
  TradingFillPlan, TradingPlanFn, TradingPosition, TradingPositionInput, TradingStorage, TradingTotals,
} from '../storage/trading-types';
