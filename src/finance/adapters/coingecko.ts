import { ProviderError, createProviderFetch, type ProviderFetchOptions } from './provider-fetch';
import { positivePrice } from './validate';
import type { MarketDataProvider } from '../types';

/** Options of {@link createCoinGeckoMarket}. */
export interface CoinGeckoOptions extends Omit<ProviderFetchOptions, 'provider' | 'baseUrl'> {
  /** @default 'https://api.coingecko.com' */
  readonly baseUrl?: string | undefined;
  /** Symbol → CoinGecko coin id, merged over the built-in map. */
  readonly ids?: Readonly<Record<string, string>> | undefined;
}

/** Built-in symbol → coin id map. */
export const COINGECKO_IDS: Readonly<Record<string, string>> = {
  BTC: 'bitcoin', ETH: 'ethereum', SOL: 'solana', USDC: 'usd-coin', USDT: 'tether', WBTC: 'wrapped-bitcoin', LINK: 'chainlink', UNI: 'uniswap',
  AAVE: 'aave', ARB: 'arbitrum', DOGE: 'dogecoin', PEPE: 'pepe', HYPE: 'hyperliquid',
};

/**
 * Spot prices from the public CoinGecko API (`GET /api/v3/simple/price`). Price only: the other read tools
 * are not created with this market. An unknown symbol or a missing/zero price is PROVIDER_ERROR.
 */
export function createCoinGeckoMarket(options: CoinGeckoOptions = {}): MarketDataProvider {
  const ids = { ...COINGECKO_IDS, ...options.ids };
  const http = createProviderFetch({ ...options, provider: 'coingecko', baseUrl: options.baseUrl ?? 'https://api.coingecko.com' });
  return {
    name: 'coingecko',
    simulated: false,
    async getPrice(symbol, o = {}) {
      const s = symbol.toUpperCase();
      const id = ids[s];
      if (!id) throw new ProviderError('PROVIDER_ERROR', 'coingecko', `no coin id known for ${s}`, { attempts: 0 });
      const body = await http.json('/api/v3/simple/price', { query: { ids: id, vs_currencies: 'usd', include_24hr_change: 'true' }, signal: o.signal });
      const entry = (body as Record<string, { usd?: unknown; usd_24h_change?: unknown } | undefined> | null)?.[id];
      const change = typeof entry?.usd_24h_change === 'number' ? entry.usd_24h_change : undefined;
      return { source: 'coingecko', simulated: false, symbol: s, priceUsd: positivePrice('coingecko', s, entry?.usd), ...(change !== undefined ? { change24hPct: change } : {}), at: new Date().toISOString() };
    },
  };
}
