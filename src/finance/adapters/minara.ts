import { z } from 'zod';
import { createProviderFetch, type ProviderFetch, type ProviderFetchOptions } from './provider-fetch';
import { parsed, positivePrice } from './validate';
import type { MarketDataProvider, OrderResult, PerpQuote, TokenInfo, TradingProvider } from '../types';

/** Options of the Minara adapters. */
export interface MinaraAdapterOptions extends Omit<ProviderFetchOptions, 'provider' | 'baseUrl' | 'headers'> {
  /** `MINARA_API_KEY`. */
  readonly apiKey: string;
  /** `MINARA_API_BASE_URL`. @default 'https://api.minara.ai' */
  readonly baseUrl?: string | undefined;
}

const PROVIDER = 'minara';
const num = z.coerce.number().finite();
const prov = { source: PROVIDER, simulated: false } as const;

function client(o: MinaraAdapterOptions): ProviderFetch {
  return createProviderFetch({ ...o, provider: PROVIDER, baseUrl: o.baseUrl ?? 'https://api.minara.ai', headers: { authorization: `Bearer ${o.apiKey}` } });
}
const nowIso = () => new Date().toISOString();
const ts = (t: string | number | undefined) => (t === undefined ? nowIso() : typeof t === 'number' ? new Date(t).toISOString() : t);

const tokenShape = z.object({
  symbol: z.string().min(1), name: z.string(), chain: z.string(), address: z.string(), verified: z.boolean(),
  decimals: z.number().int().optional(), stable: z.boolean().optional(), perps: z.boolean().optional(),
});
const toToken = (t: z.output<typeof tokenShape>): TokenInfo => ({ ...prov, ...t });

/**
 * Market data from the Minara API (`GET /v1/market/*`, bearer `MINARA_API_KEY`). Responses are validated;
 * a missing or non-positive price is a PROVIDER_ERROR, never a number.
 */
export function createMinaraMarket(options: MinaraAdapterOptions): MarketDataProvider {
  const http = client(options);
  return {
    name: PROVIDER,
    simulated: false,
    async getPrice(symbol, o = {}) {
      const body = parsed(PROVIDER, 'price', z.object({ symbol: z.string(), price: z.unknown(), change24h: num.optional(), timestamp: z.union([z.string(), z.number()]).optional() }),
        await http.json('/v1/market/price', { query: { symbol }, signal: o.signal }));
      return { ...prov, symbol: body.symbol.toUpperCase(), priceUsd: positivePrice(PROVIDER, symbol, body.price), change24hPct: body.change24h, at: ts(body.timestamp) };
    },
    async searchTokens(query, o = {}) {
      const body = parsed(PROVIDER, 'search', z.object({ tokens: z.array(tokenShape) }), await http.json('/v1/market/search', { query: { q: query, limit: o.limit }, signal: o.signal }));
      return body.tokens.map(toToken);
    },
    async lookupToken(q, o = {}) {
      const body = parsed(PROVIDER, 'token', z.object({ token: tokenShape.nullable() }), await http.json('/v1/market/token', { query: { symbol: q.symbol, address: q.address, chain: q.chain }, signal: o.signal }));
      return body.token ? toToken(body.token) : undefined;
    },
    async getTrending(o = {}) {
      const body = parsed(PROVIDER, 'trending', z.object({ tokens: z.array(z.object({ symbol: z.string(), name: z.string(), price: z.unknown(), change24h: num })) }),
        await http.json('/v1/market/trending', { query: { limit: o.limit }, signal: o.signal }));
      return body.tokens.map((t, i) => ({ ...prov, symbol: t.symbol, name: t.name, priceUsd: positivePrice(PROVIDER, t.symbol, t.price), change24hPct: t.change24h, rank: i + 1 }));
    },
    async getFearGreed(o = {}) {
      const body = parsed(PROVIDER, 'fear-greed', z.object({ value: num.min(0).max(100), classification: z.enum(['Extreme Fear', 'Fear', 'Neutral', 'Greed', 'Extreme Greed']), timestamp: z.union([z.string(), z.number()]).optional() }),
        await http.json('/v1/market/fear-greed', { signal: o.signal }));
      return { ...prov, value: body.value, classification: body.classification, at: ts(body.timestamp) };
    },
    async getOhlcv(symbol, o = {}) {
      const interval = o.interval ?? '1h';
      const body = parsed(PROVIDER, 'ohlcv', z.object({ candles: z.array(z.tuple([num, num, num, num, num, num])) }),
        await http.json('/v1/market/ohlcv', { query: { symbol, interval, limit: o.limit }, signal: o.signal }));
      return { ...prov, symbol: symbol.toUpperCase(), interval, candles: body.candles.map(([t, op, h, l, c, v]) => ({ t, o: op, h, l, c, v })) };
    },
  };
}

const orderShape = z.object({
  orderId: z.string(), status: z.enum(['filled', 'duplicate']), timestamp: z.union([z.string(), z.number()]).optional(),
  fill: z.object({ symbol: z.string(), side: z.string(), quantity: num, price: num, notional: num, fee: num, realizedPnl: num.optional() }),
});
const toOrder = (b: z.output<typeof orderShape>): OrderResult => ({
  ...prov, orderId: b.orderId, status: b.status, at: ts(b.timestamp),
  fill: { symbol: b.fill.symbol, side: b.fill.side, quantity: b.fill.quantity, price: b.fill.price, notionalUsd: b.fill.notional, feeUsd: b.fill.fee, realizedPnlUsd: b.fill.realizedPnl ?? 0 },
});
const positionShape = z.object({
  symbol: z.string(), side: z.enum(['long', 'short']), size: num, entryPrice: num, markPrice: num, notional: num, margin: num, leverage: num, unrealizedPnl: num, liquidationPrice: num,
});
const perpQuoteShape = z.object({
  symbol: z.string(), side: z.enum(['long', 'short']), action: z.enum(['open', 'close']), sizeUsd: num, size: num, markPrice: z.unknown(), expectedFillPrice: num,
  leverage: num, margin: num, fee: num, slippageBps: num, liquidationPrice: num.optional(), expectedPnl: num.optional(), timestamp: z.union([z.string(), z.number()]).optional(),
});
const toPerpQuote = (b: z.output<typeof perpQuoteShape>): PerpQuote => ({
  ...prov, symbol: b.symbol, side: b.side, action: b.action, sizeUsd: b.sizeUsd, size: b.size, markPrice: positivePrice(PROVIDER, b.symbol, b.markPrice),
  expectedFillPrice: b.expectedFillPrice, leverage: b.leverage, marginUsd: b.margin, feeUsd: b.fee, slippageBps: b.slippageBps,
  ...(b.liquidationPrice !== undefined ? { liquidationPrice: b.liquidationPrice } : {}), ...(b.expectedPnl !== undefined ? { expectedPnlUsd: b.expectedPnl } : {}), at: ts(b.timestamp),
});

/**
 * Trading through the Minara API. Orders carry the client order id as `clientOrderId` and as the
 * `Idempotency-Key` header, so a retried request never fills twice.
 */
export function createMinaraTradingProvider(options: MinaraAdapterOptions): TradingProvider {
  const http = client(options);
  const idem = (id: string) => ({ 'idempotency-key': id });
  const portfolioShape = z.object({
    accountId: z.string(), totalValue: num, exposure: num, timestamp: z.union([z.string(), z.number()]).optional(),
    holdings: z.array(z.object({ asset: z.string(), amount: num, price: num, value: num, costBasis: num, unrealizedPnl: num, stable: z.boolean() })),
    positions: z.array(positionShape),
  });
  const positions = (p: z.output<typeof positionShape>[]) =>
    p.map((x) => ({ symbol: x.symbol, side: x.side, size: x.size, entryPrice: x.entryPrice, markPrice: x.markPrice, notionalUsd: x.notional, marginUsd: x.margin, leverage: x.leverage, unrealizedPnlUsd: x.unrealizedPnl, liquidationPrice: x.liquidationPrice }));
  const getPortfolio: TradingProvider['getPortfolio'] = async (o = {}) => {
    const b = parsed(PROVIDER, 'portfolio', portfolioShape, await http.json('/v1/portfolio', { signal: o.signal }));
    return {
      ...prov, accountId: b.accountId, totalValueUsd: b.totalValue, exposureUsd: b.exposure, at: ts(b.timestamp), positions: positions(b.positions),
      holdings: b.holdings.map((h) => ({ asset: h.asset, amount: h.amount, priceUsd: h.price, valueUsd: h.value, costBasisUsd: h.costBasis, unrealizedPnlUsd: h.unrealizedPnl, stable: h.stable })),
    };
  };
  return {
    name: PROVIDER,
    simulated: false,
    async getAccount(o = {}) {
      const b = parsed(PROVIDER, 'account', z.object({ accountId: z.string(), baseCurrency: z.string(), createdAt: z.string().optional() }), await http.json('/v1/account', { signal: o.signal }));
      return { ...prov, accountId: b.accountId, baseCurrency: b.baseCurrency, ...(b.createdAt ? { createdAt: b.createdAt } : {}) };
    },
    getPortfolio,
    async getPnl(o = {}) {
      const b = parsed(PROVIDER, 'pnl', z.object({
        accountId: z.string(), realized: num, realizedToday: num, unrealized: num, netContributions: num, totalValue: num,
        byDay: z.array(z.object({ day: z.string(), realized: num })), timestamp: z.union([z.string(), z.number()]).optional(),
      }), await http.json('/v1/pnl', { signal: o.signal }));
      return {
        ...prov, accountId: b.accountId, realizedUsd: b.realized, realizedTodayUsd: b.realizedToday, unrealizedUsd: b.unrealized, netContributionsUsd: b.netContributions,
        totalValueUsd: b.totalValue, byDay: b.byDay.map((d) => ({ day: d.day, realizedUsd: d.realized })), at: ts(b.timestamp),
      };
    },
    async quoteSpot(order, o = {}) {
      const b = parsed(PROVIDER, 'spot quote', z.object({
        route: z.string(), amountIn: num, amountInUsd: num, expectedAmountOut: num, minAmountOut: num, priceIn: z.unknown(), priceOut: z.unknown(), fee: num, slippageBps: num,
        timestamp: z.union([z.string(), z.number()]).optional(),
      }), await http.json('/v1/spot/quote', { body: order, signal: o.signal }));
      return {
        ...prov, route: b.route, from: order.from.toUpperCase(), to: order.to.toUpperCase(), amountIn: b.amountIn, amountInUsd: b.amountInUsd, expectedAmountOut: b.expectedAmountOut,
        minAmountOut: b.minAmountOut, priceIn: positivePrice(PROVIDER, order.from, b.priceIn), priceOut: positivePrice(PROVIDER, order.to, b.priceOut), feeUsd: b.fee, slippageBps: b.slippageBps, at: ts(b.timestamp),
      };
    },
    async executeSpot(order, o = {}) {
      return toOrder(parsed(PROVIDER, 'spot order', orderShape, await http.json('/v1/spot/orders', { body: order, headers: idem(order.clientOrderId), signal: o.signal })));
    },
    async quoteTransfer(req, o = {}) {
      const b = parsed(PROVIDER, 'transfer quote', z.object({ valueUsd: num, fee: num, timestamp: z.union([z.string(), z.number()]).optional() }), await http.json('/v1/transfers/quote', { body: req, signal: o.signal }));
      return { ...prov, asset: req.asset.toUpperCase(), amount: req.amount, valueUsd: b.valueUsd, to: req.to, feeUsd: b.fee, kind: req.kind, at: ts(b.timestamp) };
    },
    async executeTransfer(req, o = {}) {
      return toOrder(parsed(PROVIDER, 'transfer', orderShape, await http.json('/v1/transfers', { body: req, headers: idem(req.clientOrderId), signal: o.signal })));
    },
    async getPerpPositions(o = {}) {
      return positions(parsed(PROVIDER, 'positions', z.object({ positions: z.array(positionShape) }), await http.json('/v1/perps/positions', { signal: o.signal })).positions);
    },
    async quotePerpOpen(req, o = {}) {
      return toPerpQuote(parsed(PROVIDER, 'perp quote', perpQuoteShape, await http.json('/v1/perps/quote', { body: { action: 'open', ...req }, signal: o.signal })));
    },
    async openPerp(req, o = {}) {
      return toOrder(parsed(PROVIDER, 'perp order', orderShape, await http.json('/v1/perps/orders', { body: { action: 'open', ...req }, headers: idem(req.clientOrderId), signal: o.signal })));
    },
    async quotePerpClose(req, o = {}) {
      return toPerpQuote(parsed(PROVIDER, 'perp quote', perpQuoteShape, await http.json('/v1/perps/quote', { body: { action: 'close', ...req }, signal: o.signal })));
    },
    async closePerp(req, o = {}) {
      return toOrder(parsed(PROVIDER, 'perp order', orderShape, await http.json('/v1/perps/orders', { body: { action: 'close', ...req }, headers: idem(req.clientOrderId), signal: o.signal })));
    },
    // The trade-history mirror: Hyperliquid fills per perp sub-wallet, and the cross-chain spot history.
    async listPerpSubAccounts(o = {}) {
      const b = parsed(PROVIDER, 'perp sub-accounts', z.object({ subAccounts: z.array(z.object({ id: z.string().min(1), walletAddress: z.string().optional() })) }),
        await http.json('/v1/perps/sub-accounts', { signal: o.signal }));
      return b.subAccounts.map((a) => ({ id: a.id, ...(a.walletAddress ? { walletAddress: a.walletAddress } : {}) }));
    },
    async listPerpFills(q, o = {}) {
      const b = parsed(PROVIDER, 'perp fills', z.object({ fills: z.array(fillShape) }),
        await http.json('/v1/perps/fills', { query: { subAccountId: q.subAccountId, since: q.sinceMs }, signal: o.signal }));
      return b.fills.map((f) => ({ ...f }));
    },
    async listSpotActivity(q, o = {}) {
      const b = parsed(PROVIDER, 'spot history', z.object({ activities: z.array(spotActivityShape) }), await http.json('/v1/history/spot', { query: { since: q.sinceMs }, signal: o.signal }));
      return b.activities.map((a) => ({
        txHash: a.txHash, time: a.timestamp, type: a.type, status: a.status, ...(a.fromToken ? { fromToken: a.fromToken } : {}), ...(a.toToken ? { toToken: a.toToken } : {}),
        ...(a.amount !== undefined ? { amount: String(a.amount) } : {}), ...(a.valueUsd !== undefined ? { valueUsd: a.valueUsd } : {}),
      }));
    },
  };
}

const numOrString = z.union([z.number(), z.string()]);
/** A Hyperliquid `userFills` entry as the Minara API passes it through (unknown fields kept for the raw JSON). */
const fillShape = z.looseObject({
  coin: z.string().min(1), px: numOrString, sz: numOrString, side: z.string().min(1), time: z.number().int().nonnegative(), oid: numOrString,
  tid: numOrString.optional(), hash: z.string().optional(), dir: z.string().optional(), closedPnl: numOrString.optional(), fee: numOrString.optional(),
});
const spotActivityShape = z.object({
  txHash: z.string().min(1), timestamp: z.number().int().nonnegative(), type: z.string().min(1), status: z.string().min(1), fromToken: z.string().optional(),
  toToken: z.string().optional(), amount: numOrString.optional(), valueUsd: num.optional(),
});
