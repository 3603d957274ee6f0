/**
 * The adapter interfaces of the finance pack. Nothing else in the pack talks to the network: tools and
 * hooks only call a {@link MarketDataProvider} and a {@link TradingProvider}.
 *
 * Every result carries `source` (the provider name) and `simulated` (true for the embedded paper
 * provider and simulated market feed), so a simulated number can never pass for a real one.
 */

/** Provenance every provider result carries. */
export interface Provenance {
  /** Provider name (`simulated`, `minara`, `coingecko`, `hyperliquid`). */
  readonly source: string;
  /** True when the number comes from the simulated feed or the paper provider. */
  readonly simulated: boolean;
}

/** A spot price. */
export interface PriceQuote extends Provenance {
  readonly symbol: string;
  readonly priceUsd: number;
  /** 24h change in percent, when known. */
  readonly change24hPct?: number | undefined;
  /** ISO time of the price. */
  readonly at: string;
}

/** A token the market knows. */
export interface TokenInfo extends Provenance {
  readonly symbol: string;
  readonly name: string;
  /** Chain (`ethereum`, `solana`, `base`, …). */
  readonly chain: string;
  /** Contract address (or a native marker such as `native`). */
  readonly address: string;
  /** Listed on a curated list / contract verified. */
  readonly verified: boolean;
  readonly decimals?: number | undefined;
  /** Stablecoin pegged to USD. */
  readonly stable?: boolean | undefined;
  /** A perpetual market exists for it. */
  readonly perps?: boolean | undefined;
}

/** A trending token. */
export interface TrendingToken extends Provenance {
  readonly symbol: string;
  readonly name: string;
  readonly priceUsd: number;
  readonly change24hPct: number;
  readonly rank: number;
}

/** The fear & greed index. */
export interface FearGreed extends Provenance {
  /** 0 (extreme fear) – 100 (extreme greed). */
  readonly value: number;
  readonly classification: 'Extreme Fear' | 'Fear' | 'Neutral' | 'Greed' | 'Extreme Greed';
  readonly at: string;
}

/** Candle interval. */
export type OhlcvInterval = '1m' | '5m' | '15m' | '1h' | '4h' | '1d';

/** One OHLCV candle. */
export interface Candle {
  /** Open time, ms since epoch. */
  readonly t: number;
  readonly o: number;
  readonly h: number;
  readonly l: number;
  readonly c: number;
  readonly v: number;
}

/** Candles with provenance. */
export interface OhlcvSeries extends Provenance {
  readonly symbol: string;
  readonly interval: OhlcvInterval;
  readonly candles: readonly Candle[];
}

/** Per-call options every provider method accepts. */
export interface ProviderCallOptions {
  readonly signal?: AbortSignal | undefined;
}

/**
 * Market data: prices, token search and lookup, trending, fear & greed, OHLCV. Only `getPrice` is
 * required; a read tool whose method is missing is not created.
 */
export interface MarketDataProvider {
  readonly name: string;
  readonly simulated: boolean;
  /** Spot price in USD. Throws a MinaraError (`PROVIDER_*`) rather than returning a wrong price. */
  getPrice(symbol: string, options?: ProviderCallOptions): Promise<PriceQuote>;
  searchTokens?(query: string, options?: ProviderCallOptions & { readonly limit?: number | undefined }): Promise<TokenInfo[]>;
  /** A token by symbol and/or address (and chain); undefined when unknown. */
  lookupToken?(query: { readonly symbol?: string | undefined; readonly address?: string | undefined; readonly chain?: string | undefined }, options?: ProviderCallOptions): Promise<TokenInfo | undefined>;
  getTrending?(options?: ProviderCallOptions & { readonly limit?: number | undefined }): Promise<TrendingToken[]>;
  getFearGreed?(options?: ProviderCallOptions): Promise<FearGreed>;
  getOhlcv?(symbol: string, options?: ProviderCallOptions & { readonly interval?: OhlcvInterval | undefined; readonly limit?: number | undefined }): Promise<OhlcvSeries>;
  /** Perp mark price (Hyperliquid, simulated feed); falls back to `getPrice` when absent. */
  getPerpMark?(symbol: string, options?: ProviderCallOptions): Promise<PriceQuote>;
}

/** An account as the trading provider reports it. */
export interface AccountInfo extends Provenance {
  readonly accountId: string;
  readonly baseCurrency: string;
  readonly createdAt?: string | undefined;
}

/** One holding, valued at the current mark. */
export interface Holding {
  readonly asset: string;
  readonly amount: number;
  readonly priceUsd: number;
  readonly valueUsd: number;
  readonly costBasisUsd: number;
  readonly unrealizedPnlUsd: number;
  readonly stable: boolean;
}

/** A perp position valued at the mark. */
export interface PerpPositionView {
  readonly symbol: string;
  readonly side: 'long' | 'short';
  readonly size: number;
  readonly entryPrice: number;
  readonly markPrice: number;
  readonly notionalUsd: number;
  readonly marginUsd: number;
  readonly leverage: number;
  readonly unrealizedPnlUsd: number;
  readonly liquidationPrice: number;
}

/** The whole portfolio. */
export interface Portfolio extends Provenance {
  readonly accountId: string;
  readonly holdings: readonly Holding[];
  readonly positions: readonly PerpPositionView[];
  /** Spot value + perp margin + perp unrealised P&L. */
  readonly totalValueUsd: number;
  /** Value of non-stable spot holdings plus perp notional. */
  readonly exposureUsd: number;
  readonly at: string;
}

/** Realised and unrealised P&L. */
export interface PnlReport extends Provenance {
  readonly accountId: string;
  readonly realizedUsd: number;
  readonly realizedTodayUsd: number;
  readonly unrealizedUsd: number;
  /** Deposits minus transfers out, at cost. */
  readonly netContributionsUsd: number;
  readonly totalValueUsd: number;
  readonly byDay: readonly { readonly day: string; readonly realizedUsd: number }[];
  readonly at: string;
}

/** A spot order: swap `amount` of `from` (or `amountUsd` worth) into `to`. */
export interface SpotOrderRequest {
  readonly from: string;
  readonly to: string;
  /** Units of `from` to spend. */
  readonly amount?: number | undefined;
  /** USD worth of `from` to spend (used when `amount` is absent). */
  readonly amountUsd?: number | undefined;
  /** Maximum slippage accepted for this order. */
  readonly maxSlippageBps?: number | undefined;
}

/** The quote (preview) of a spot order. */
export interface SpotQuote extends Provenance {
  readonly route: string;
  readonly from: string;
  readonly to: string;
  readonly amountIn: number;
  readonly amountInUsd: number;
  readonly expectedAmountOut: number;
  /** Worst output accepted given the slippage cap. */
  readonly minAmountOut: number;
  readonly priceIn: number;
  readonly priceOut: number;
  readonly feeUsd: number;
  /** Expected price impact in basis points. */
  readonly slippageBps: number;
  readonly at: string;
}

/** Result of an executed order. */
export interface OrderResult extends Provenance {
  /** Client order id the order was placed with. */
  readonly orderId: string;
  /**
   * `filled`; `duplicate` (this client order id was executed before: `fill` is the original one); or `queued`: accepted
   * to fill later (a backtest's next-bar fill), `fill` being the estimate at the time of the order, not a fill — the
   * learning loop records the trade when the real fill is reported, never from the estimate.
   */
  readonly status: 'filled' | 'duplicate' | 'queued';
  readonly fill: {
    readonly symbol: string;
    readonly side: string;
    readonly quantity: number;
    readonly price: number;
    readonly notionalUsd: number;
    readonly feeUsd: number;
    readonly realizedPnlUsd: number;
  };
  readonly at: string;
  /** True when the order filled in the shadow book (`MINARA_TRADING_MODE=shadow`): nothing reached the venue. */
  readonly shadow?: boolean | undefined;
}

/** An outgoing transfer or withdrawal. */
export interface TransferRequest {
  readonly asset: string;
  readonly amount: number;
  /** External address (or a withdrawal destination id). */
  readonly to: string;
  readonly chain?: string | undefined;
  readonly kind: 'transfer' | 'withdraw';
}

/** The quote of a transfer. */
export interface TransferQuote extends Provenance {
  readonly asset: string;
  readonly amount: number;
  readonly valueUsd: number;
  readonly to: string;
  readonly feeUsd: number;
  readonly kind: 'transfer' | 'withdraw';
  readonly at: string;
}

/** Open (or add to) a perp position. */
export interface PerpOpenRequest {
  readonly symbol: string;
  readonly side: 'long' | 'short';
  /** Notional in USD. */
  readonly sizeUsd: number;
  readonly leverage: number;
  readonly maxSlippageBps?: number | undefined;
}

/** Close all or part of a perp position. */
export interface PerpCloseRequest {
  readonly symbol: string;
  /** Fraction to close, 0 < f ≤ 1. @default 1 */
  readonly fraction?: number | undefined;
}

/** The quote of a perp order. */
export interface PerpQuote extends Provenance {
  readonly symbol: string;
  readonly side: 'long' | 'short';
  readonly action: 'open' | 'close';
  readonly sizeUsd: number;
  readonly size: number;
  readonly markPrice: number;
  readonly expectedFillPrice: number;
  readonly leverage: number;
  readonly marginUsd: number;
  readonly feeUsd: number;
  readonly slippageBps: number;
  readonly liquidationPrice?: number | undefined;
  /** Expected realised P&L of a close. */
  readonly expectedPnlUsd?: number | undefined;
  readonly at: string;
}

/** A perp sub-account (sub-wallet) whose fills the history mirror syncs. */
export interface PerpSubAccount {
  readonly id: string;
  readonly walletAddress?: string | undefined;
  /** The main account (sweeps go into it), when the provider says which one it is. */
  readonly main?: boolean | undefined;
  /** Balances by asset, when the provider reports them. */
  readonly balances?: Readonly<Record<string, number>> | undefined;
  /** Value of the balances in USD, when known. */
  readonly valueUsd?: number | undefined;
}

/** Move a sub-account's funds into the main account. */
export interface PerpSweepRequest {
  readonly subAccountId: string;
  /** @default the base currency (USDC) */
  readonly asset: string;
  /** Units to move; everything of `asset` when absent. */
  readonly amount?: number | undefined;
}

/** The quote of a sweep. */
export interface PerpSweepQuote extends Provenance {
  readonly subAccountId: string;
  readonly asset: string;
  readonly amount: number;
  readonly valueUsd: number;
  /** Where the funds go (the main account's id). */
  readonly to: string;
  readonly feeUsd: number;
  readonly at: string;
}

/**
 * One perp fill as Hyperliquid's `userFills` reports it (numbers may come as strings). The mirror keys it by
 * `tid`, else `hash`, else a sha1 of the raw JSON.
 */
export interface HistoryPerpFill {
  readonly coin: string;
  readonly px: number | string;
  readonly sz: number | string;
  /** `B` (buy) or `A` (sell), or `buy`/`sell`. */
  readonly side: string;
  /** ms since epoch. */
  readonly time: number;
  readonly oid: number | string;
  readonly tid?: number | string | undefined;
  readonly hash?: string | undefined;
  /** `Open Long`, `Close Short`, … */
  readonly dir?: string | undefined;
  readonly closedPnl?: number | string | undefined;
  readonly fee?: number | string | undefined;
}

/** One off-agent spot swap or transfer from the cross-chain history. */
export interface HistorySpotActivity {
  readonly txHash: string;
  /** ms since epoch. */
  readonly time: number;
  /** `swap`, `transfer`, … */
  readonly type: string;
  readonly fromToken?: string | undefined;
  readonly toToken?: string | undefined;
  readonly amount?: string | undefined;
  readonly valueUsd?: number | undefined;
  readonly status: string;
}

/**
 * Trading: account, balances, portfolio, spot swap/buy/sell, transfers, perps and P&L. `execute*` take a
 * client order id and must be idempotent by it (the same id never fills twice).
 */
export interface TradingProvider {
  readonly name: string;
  readonly simulated: boolean;
  getAccount(options?: ProviderCallOptions): Promise<AccountInfo>;
  getPortfolio(options?: ProviderCallOptions): Promise<Portfolio>;
  getPnl(options?: ProviderCallOptions): Promise<PnlReport>;
  quoteSpot(order: SpotOrderRequest, options?: ProviderCallOptions): Promise<SpotQuote>;
  executeSpot(order: SpotOrderRequest & { readonly clientOrderId: string }, options?: ProviderCallOptions): Promise<OrderResult>;
  quoteTransfer(request: TransferRequest, options?: ProviderCallOptions): Promise<TransferQuote>;
  executeTransfer(request: TransferRequest & { readonly clientOrderId: string }, options?: ProviderCallOptions): Promise<OrderResult>;
  getPerpPositions(options?: ProviderCallOptions): Promise<PerpPositionView[]>;
  quotePerpOpen(request: PerpOpenRequest, options?: ProviderCallOptions): Promise<PerpQuote>;
  openPerp(request: PerpOpenRequest & { readonly clientOrderId: string }, options?: ProviderCallOptions): Promise<OrderResult>;
  quotePerpClose(request: PerpCloseRequest, options?: ProviderCallOptions): Promise<PerpQuote>;
  closePerp(request: PerpCloseRequest & { readonly clientOrderId: string }, options?: ProviderCallOptions): Promise<OrderResult>;
  /** The perp sub-accounts whose fills the history mirror syncs (optional: the mirror skips perps without it). */
  listPerpSubAccounts?(options?: ProviderCallOptions): Promise<PerpSubAccount[]>;
  /** Quote moving a sub-account's funds into the main account (optional: no sweep tool without it). */
  quotePerpSweep?(request: PerpSweepRequest, options?: ProviderCallOptions): Promise<PerpSweepQuote>;
  /** Move a sub-account's funds into the main account; idempotent by client order id. */
  sweepPerpSubAccount?(request: PerpSweepRequest & { readonly clientOrderId: string }, options?: ProviderCallOptions): Promise<OrderResult>;
  /** A sub-account's perp fills at or after `sinceMs` (all when absent), oldest first. */
  listPerpFills?(query: { readonly subAccountId: string; readonly sinceMs?: number | undefined }, options?: ProviderCallOptions): Promise<HistoryPerpFill[]>;
  /** Spot swaps and transfers at or after `sinceMs`, oldest first. */
  listSpotActivity?(query: { readonly sinceMs?: number | undefined }, options?: ProviderCallOptions): Promise<HistorySpotActivity[]>;
}
