import { z } from 'zod';
import { ProviderError, createProviderFetch, type ProviderFetchOptions } from './provider-fetch';
import { parsed, positivePrice } from './validate';
import type { MarketDataProvider, OhlcvInterval } from '../types';

/** Options of {@link createHyperliquidMarket}. */
export interface HyperliquidOptions extends Omit<ProviderFetchOptions, 'provider' | 'baseUrl'> {
  /** @default 'https://api.hyperliquid.xyz' */
  readonly baseUrl?: string | undefined;
  readonly now?: (() => Date) | undefined;
}

const STEP: Record<OhlcvInterval, number> = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000 };
const num = z.coerce.number().finite();

/**
 * Perp marks and candles from Hyperliquid's public info endpoint (`POST /info`, `allMids` and
 * `candleSnapshot`). `getPrice` and `getPerpMark` both return the mid; a coin missing from `allMids` is
 * PROVIDER_ERROR.
 */
export function createHyperliquidMarket(options: HyperliquidOptions = {}): MarketDataProvider {
  const { now = () => new Date() } = options;
  const http = createProviderFetch({ ...options, provider: 'hyperliquid', baseUrl: options.baseUrl ?? 'https://api.hyperliquid.xyz' });
  const mark = async (symbol: string, signal?: AbortSignal) => {
    const s = symbol.toUpperCase();
    const mids = parsed('hyperliquid', 'allMids', z.record(z.string(), z.unknown()), await http.json('/info', { body: { type: 'allMids' }, signal }));
    if (!(s in mids)) throw new ProviderError('PROVIDER_ERROR', 'hyperliquid', `no perp market for ${s}`, { attempts: 1 });
    return { source: 'hyperliquid', simulated: false, symbol: s, priceUsd: positivePrice('hyperliquid', s, mids[s]), at: now().toISOString() };
  };
  return {
    name: 'hyperliquid',
    simulated: false,
    getPrice: (symbol, o = {}) => mark(symbol, o.signal),
    getPerpMark: (symbol, o = {}) => mark(symbol, o.signal),
    async getOhlcv(symbol, o = {}) {
      const interval = o.interval ?? '1h';
      const limit = o.limit ?? 48;
      const endTime = now().getTime();
      const body = parsed('hyperliquid', 'candleSnapshot', z.array(z.object({ t: num, o: num, h: num, l: num, c: num, v: num })),
        await http.json('/info', { body: { type: 'candleSnapshot', req: { coin: symbol.toUpperCase(), interval, startTime: endTime - limit * STEP[interval], endTime } }, signal: o.signal }));
      return { source: 'hyperliquid', simulated: false, symbol: symbol.toUpperCase(), interval, candles: body.map((c) => ({ t: c.t, o: c.o, h: c.h, l: c.l, c: c.c, v: c.v })) };
    },
  };
}
