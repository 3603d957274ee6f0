/**
 * The finance taxonomy the router and skills speak: lifecycle stages, asset classes (inferred from a
 * message in English and Chinese) and risk tiers. Deterministic and self-contained (no model call).
 *
 * @module
 */
import { analyzeTextShared, type AnalyzedText, createKeywordIndex, derivedOnce } from './text-match';
import { extractRoutingEntities, type RoutingEntity } from './taxonomy-entities';

/** The third word of the finance taxonomy: how much an action can cost the person (see `src/safety/risk-tier.ts`). */
export { isRiskTier, permissionTierForRisk, RISK_TIERS, type RiskTier, riskTierOf } from '../safety/risk-tier';

/** Where a request sits in the trade lifecycle. */
export const LIFECYCLE_STAGES = ['discover', 'evaluate', 'decide', 'manage'] as const;
/** One lifecycle stage. */
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

/** Asset classes a skill can cover and the router can detect. */
export const ASSET_CLASSES = [
  'crypto_major',
  'crypto_alt',
  'crypto_meme',
  'stablecoin',
  'perps',
  'defi',
  'nft',
  'forex',
  'equity',
  'index',
  'commodity',
  'prediction_market',
] as const;
/** One asset class. */
export type AssetClass = (typeof ASSET_CLASSES)[number];

/** True for a known lifecycle stage. */
export function isLifecycleStage(value: unknown): value is LifecycleStage {
  return typeof value === 'string' && (LIFECYCLE_STAGES as readonly string[]).includes(value);
}

/** True for a known asset class. */
export function isAssetClass(value: unknown): value is AssetClass {
  return typeof value === 'string' && (ASSET_CLASSES as readonly string[]).includes(value);
}

/**
 * Trigger words and phrases per stage, English and Chinese. Latin triggers match on word boundaries;
 * Chinese ones as substrings.
 */
export const STAGE_TRIGGERS: Readonly<Record<LifecycleStage, readonly string[]>> = {
  discover: [
    "what's trending", 'whats trending', 'what is trending', 'trending', 'show me', 'price of', 'price', 'prices',
    'how much is', 'top gainers', 'top losers', 'gainers', 'losers', 'market cap', 'news', 'what is', 'find',
    'search', 'list', 'overview',
    '热门', '趋势', '价格', '多少钱', '行情', '看看', '给我看', '涨幅榜', '跌幅榜', '市值', '新闻', '是什么', '查一下', '搜索',
  ],
  evaluate: [
    'should i', 'analyze', 'analyse', 'analysis', 'compare', 'comparison', 'risk', 'risks', 'risky', 'worth it',
    'is it safe', 'outlook', 'forecast', 'evaluate', 'research', 'due diligence', 'fundamentals', 'versus', 'vs',
    'pros and cons', 'backtest',
    '应该', '该不该', '要不要', '分析', '比较', '对比', '风险', '值得', '值不值', '靠谱', '前景', '研究', '评估', '回测',
  ],
  decide: [
    'buy', 'sell', 'long', 'short', 'swap', 'trade', 'ape into', 'market order', 'limit order', 'place an order',
    'open a position', 'open position', 'bridge', 'convert', 'exchange',
    '买', '卖', '买入', '卖出', '做多', '做空', '开多', '开空', '兑换', '换成', '下单', '挂单', '交易', '跨链',
  ],
  manage: [
    'close', 'close position', 'stop loss', 'take profit', 'my positions', 'my position', 'my portfolio',
    'my holdings', 'my balance', 'rebalance', 'cancel order', 'cancel my', 'trailing stop', 'reduce', 'hedge',
    'pnl', 'p&l', 'withdraw', 'liquidation price',
    '平仓', '止损', '止盈', '我的仓位', '持仓', '我的持仓', '我的资产', '余额', '调仓', '撤单', '减仓', '对冲', '盈亏', '提现', '强平',
  ],
};

const stageIndex = createKeywordIndex(
  LIFECYCLE_STAGES.flatMap((stage) => STAGE_TRIGGERS[stage].map((t) => [t, stage] as const)),
);

/**
 * The lifecycle stages a message triggers, in canonical order (`discover`, `evaluate`, `decide`, `manage`).
 *
 * @example
 * ```ts
 * inferLifecycleStages('Should I buy ETH?'); // ['evaluate', 'decide']
 * inferLifecycleStages('帮我设置止损');         // ['manage']
 * ```
 */
export function inferLifecycleStages(message: string | AnalyzedText): LifecycleStage[] {
  const text = typeof message === 'string' ? analyzeTextShared(message) : message;
  return [...derivedOnce(text, 'stages', () => {
    const hit = new Set(stageIndex.match(text));
    return LIFECYCLE_STAGES.filter((s) => hit.has(s));
  })];
}

/**
 * The asset classes a message mentions, in canonical order, detected from its finance entities
 * (tickers, `$TICKER`, names in English and Chinese, forex pairs, market words).
 *
 * @example
 * ```ts
 * detectAssetClasses('long $PEPE 10x');  // ['crypto_meme', 'perps']
 * detectAssetClasses('EUR/USD 汇率');     // ['forex']
 * ```
 */
export function detectAssetClasses(message: string | AnalyzedText | readonly RoutingEntity[]): AssetClass[] {
  const entities = Array.isArray(message)
    ? (message as readonly RoutingEntity[])
    : extractRoutingEntities(message as string | AnalyzedText);
  const hit = new Set<AssetClass>();
  for (const e of entities) if (e.assetClass) hit.add(e.assetClass);
  return ASSET_CLASSES.filter((c) => hit.has(c));
}

/** Stages, asset classes and entities of one message, computed together. */
export interface FinanceAnalysis {
  readonly stages: LifecycleStage[];
  readonly assetClasses: AssetClass[];
  readonly entities: RoutingEntity[];
}

/** Classify a message in one pass (what the router uses). */
export function classifyMessage(message: string | AnalyzedText): FinanceAnalysis {
  const text = typeof message === 'string' ? analyzeTextShared(message) : message;
  const entities = extractRoutingEntities(text);
  return { stages: inferLifecycleStages(text), assetClasses: detectAssetClasses(entities), entities };
}
