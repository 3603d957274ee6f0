import { z } from 'zod';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import { type FinanceDeps, usd } from './context';

const symbol = z.string().trim().min(1).max(40).describe('Token symbol, e.g. BTC');
const limit = (max: number) => z.number().int().positive().max(max).nullish();
const sig = (signal: AbortSignal) => ({ signal });

/**
 * The read-only tools (READ_ONLY tier, tool set `read`). A tool whose provider method is missing is not
 * created. Results carry `source` and `simulated` from the provider.
 */
export function createReadTools(deps: FinanceDeps): ToolEntry[] {
  return [...marketTools(deps.market), ...candleTools(deps.market), ...accountTools(deps.trading)];
}

/** Prices and token discovery: `get_price`, and each of `search_tokens`, `lookup_token`, `get_trending`, `get_fear_greed` the market offers. */
function marketTools(market: FinanceDeps['market']): ToolEntry[] {
  const tools: ToolEntry[] = [
    defineTool({
      name: 'get_price',
      toolSet: 'read',
      description: 'Current spot price of a token in USD (with 24h change)',
      inputSchema: z.object({ symbol }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 15_000,
      execute: ({ symbol: s }, ctx) => market.getPrice(s.toUpperCase(), sig(ctx.signal)),
    }),
  ];
  if (market.searchTokens) {
    const search = market.searchTokens.bind(market);
    tools.push(defineTool({
      name: 'search_tokens',
      toolSet: 'read',
      description: 'Search tokens by symbol, name or contract address',
      inputSchema: z.object({ query: z.string().trim().min(1).max(100), limit: limit(25) }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 15_000,
      execute: async ({ query, limit: n }, ctx) => ({ results: await search(query, { ...sig(ctx.signal), limit: n ?? 10 }) }),
    }));
  }
  if (market.lookupToken) {
    const lookup = market.lookupToken.bind(market);
    tools.push(defineTool({
      name: 'lookup_token',
      toolSet: 'read',
      description: 'Token details (chain, contract, verified) by symbol or address',
      inputSchema: z.object({ symbol: symbol.nullish(), address: z.string().trim().min(1).max(100).nullish(), chain: z.string().trim().min(1).max(40).nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 15_000,
      execute: async (i, ctx) => {
        if (!i.symbol && !i.address) return { found: false, error: 'Give a symbol or an address.' };
        const token = await lookup({ ...(i.symbol ? { symbol: i.symbol } : {}), ...(i.address ? { address: i.address } : {}), ...(i.chain ? { chain: i.chain } : {}) }, sig(ctx.signal));
        return token ? { found: true, token } : { found: false, source: market.name, simulated: market.simulated };
      },
    }));
  }
  if (market.getTrending) {
    const trending = market.getTrending.bind(market);
    tools.push(defineTool({
      name: 'get_trending',
      toolSet: 'read',
      description: 'Trending tokens by 24h move',
      inputSchema: z.object({ limit: limit(25) }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 15_000,
      execute: async ({ limit: n }, ctx) => ({ tokens: await trending({ ...sig(ctx.signal), limit: n ?? 5 }) }),
    }));
  }
  if (market.getFearGreed) {
    const fg = market.getFearGreed.bind(market);
    tools.push(defineTool({
      name: 'get_fear_greed',
      toolSet: 'read',
      description: 'Crypto fear & greed index (0 extreme fear – 100 extreme greed)',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 15_000,
      execute: (_i, ctx) => fg(sig(ctx.signal)),
    }));
  }
  return tools;
}

/** Candles and the technical read over them (`get_ohlcv`, `analyze_token`), when the market has candles. */
function candleTools(market: FinanceDeps['market']): ToolEntry[] {
  if (!market.getOhlcv) return [];
  const ohlcv = market.getOhlcv.bind(market);
  return [
    defineTool({
      name: 'get_ohlcv',
      toolSet: 'read',
      description: 'OHLCV candles of a token',
      inputSchema: z.object({ symbol, interval: z.enum(['1m', '5m', '15m', '1h', '4h', '1d']).nullish(), limit: limit(500) }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: (i, ctx) => ohlcv(i.symbol.toUpperCase(), { ...sig(ctx.signal), interval: i.interval ?? '1h', limit: i.limit ?? 48 }),
    }),
    defineTool({
      name: 'analyze_token',
      toolSet: 'analysis',
      description: 'Technical read of a token: trend, volatility, RSI from recent candles',
      inputSchema: z.object({ symbol, interval: z.enum(['15m', '1h', '4h', '1d']).nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      isAnalysis: true,
      timeoutMs: 20_000,
      execute: async (i, ctx) => {
        const series = await ohlcv(i.symbol.toUpperCase(), { ...sig(ctx.signal), interval: i.interval ?? '1h', limit: 50 });
        return { ...analyzeCandles(series.candles.map((c) => c.c)), symbol: series.symbol, interval: series.interval, source: series.source, simulated: series.simulated };
      },
    }),
  ];
}

/** The account's holdings, positions and P&L from the trading provider. */
function accountTools(trading: FinanceDeps['trading']): ToolEntry[] {
  return [
    defineTool({
      name: 'get_portfolio',
      toolSet: 'read',
      description: 'Holdings, perp positions, total value and exposure',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: (_i, ctx) => trading.getPortfolio(sig(ctx.signal)),
    }),
    defineTool({
      name: 'minara_total_balance',
      toolSet: 'read',
      description: 'Total account value in USD with the stablecoin share',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: async (_i, ctx) => {
        const p = await trading.getPortfolio(sig(ctx.signal));
        const stableUsd = p.holdings.filter((h) => h.stable).reduce((a, h) => a + h.valueUsd, 0);
        return { accountId: p.accountId, totalValueUsd: usd(p.totalValueUsd), stableUsd: usd(stableUsd), exposureUsd: usd(p.exposureUsd), source: p.source, simulated: p.simulated, at: p.at };
      },
    }),
    defineTool({
      name: 'get_perps_positions',
      toolSet: 'read',
      description: 'Open perpetual positions with mark, P&L and liquidation price',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: async (_i, ctx) => ({ positions: await trading.getPerpPositions(sig(ctx.signal)), source: trading.name, simulated: trading.simulated }),
    }),
    defineTool({
      name: 'minara_pnl',
      toolSet: 'read',
      description: 'Realised (total and today) and unrealised P&L',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: (_i, ctx) => trading.getPnl(sig(ctx.signal)),
    }),
  ];
}

/** Trend, volatility and a 14-period RSI of closing prices. */
export function analyzeCandles(closes: readonly number[]): { trend: 'up' | 'down' | 'flat'; changePct: number; volatilityPct: number; rsi14: number } {
  const first = closes[0] ?? 0;
  const last = closes[closes.length - 1] ?? 0;
  const changePct = first > 0 ? ((last - first) / first) * 100 : 0;
  const rets: number[] = [];
  for (let i = 1; i < closes.length; i++) rets.push(Math.log(closes[i]! / closes[i - 1]!));
  const mean = rets.reduce((a, r) => a + r, 0) / Math.max(1, rets.length);
  const vol = Math.sqrt(rets.reduce((a, r) => a + (r - mean) ** 2, 0) / Math.max(1, rets.length - 1)) * 100;
  let gain = 0;
  let loss = 0;
  for (let i = Math.max(1, closes.length - 14); i < closes.length; i++) {
    const d = closes[i]! - closes[i - 1]!;
    if (d > 0) gain += d;
    else loss -= d;
  }
  const rsi = loss === 0 ? 100 : 100 - 100 / (1 + gain / loss);
  return { trend: changePct > 1 ? 'up' : changePct < -1 ? 'down' : 'flat', changePct: Number(changePct.toFixed(3)), volatilityPct: Number(vol.toFixed(4)), rsi14: Number(rsi.toFixed(2)) };
}
