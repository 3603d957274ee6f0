import { MinaraError } from '../errors/minara-error';
import { hash32, unitHash } from '../util/prng';
import { findSimToken, SIM_TOKENS, type SimToken } from './token-universe';
import type { Candle, FearGreed, MarketDataProvider, OhlcvInterval, OhlcvSeries, PriceQuote, TokenInfo, TrendingToken } from './types';

/** Options of {@link createSimulatedMarket}. */
export interface SimulatedMarketOptions {
  /** Seed of the feed: the same seed and clock give the same prices. @default 42 */
  readonly seed?: number | undefined;
  /** Clock. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** Token universe. @default SIM_TOKENS */
  readonly tokens?: readonly SimToken[] | undefined;
}

/** The simulated feed: a {@link MarketDataProvider} plus test controls. */
export interface SimulatedMarket extends MarketDataProvider {
  readonly simulated: true;
  readonly seed: number;
  readonly tokens: readonly SimToken[];
  /** The deterministic mark of `symbol` at `at` (ignores overrides). */
  markAt(symbol: string, at: Date): number;
  /** The current price (override first). Throws PROVIDER_ERROR for an unknown symbol. */
  priceNow(symbol: string): number;
  /** Pin a symbol's price (tests, scripted scenarios); `undefined` removes the pin. */
  setPrice(symbol: string, priceUsd: number | undefined): void;
  /** The token record by symbol (verified first). */
  token(symbol: string): SimToken | undefined;
}

const INTERVAL_MS: Record<OhlcvInterval, number> = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000 };
const DAY = 86_400_000;
const TWO_PI = Math.PI * 2;

function classify(value: number): FearGreed['classification'] {
  if (value < 25) return 'Extreme Fear';
  if (value < 45) return 'Fear';
  if (value <= 55) return 'Neutral';
  if (value <= 75) return 'Greed';
  return 'Extreme Greed';
}

/**
 * A simulated market feed, deterministic for a seed and a clock, that works offline. Prices follow three
 * seeded sine waves (hours, a day, a week) plus per-minute seeded noise around each token's reference
 * price, scaled by its volatility; stablecoins are exactly 1. Every result says `simulated: true`.
 *
 * @example
 * ```ts
 * const market = createSimulatedMarket({ seed: 7, now: () => new Date('2026-01-01T00:00:00Z') });
 * (await market.getPrice('ETH')).priceUsd; // same number every run
 * ```
 *
 * Wiring only: the state is a `SimState` (seed, clock, universe, pinned prices); pricing, discovery and candles
 * are the named functions below.
 */
export function createSimulatedMarket(options: SimulatedMarketOptions = {}): SimulatedMarket {
  const { seed = 42, now = () => new Date(), tokens = SIM_TOKENS } = options;
  const s: SimState = { seed, now, tokens, pins: new Map() };
  return {
    name: 'simulated',
    simulated: true,
    seed,
    tokens,
    markAt: (symbol, at) => markAt(s, symbol, at),
    priceNow: (symbol) => priceNow(s, symbol),
    token: (symbol) => findSimToken(tokens, symbol),
    setPrice: (symbol, priceUsd) => setPrice(s, symbol, priceUsd),
    getPrice: async (symbol) => quote(s, tokenOf(s, symbol)),
    getPerpMark: async (symbol) => perpMark(s, symbol),
    searchTokens: async (query, opts = {}) => searchTokens(s, query, opts.limit ?? 10),
    lookupToken: async (query) => lookupToken(s, query),
    getTrending: async (opts = {}) => trending(s, opts.limit ?? 5),
    getFearGreed: async () => fearGreed(s),
    getOhlcv: async (symbol, opts = {}) => ohlcv(s, symbol, opts),
  };
}

/** One simulated feed: its seed, clock and universe, and the prices tests pinned. */
interface SimState {
  readonly seed: number;
  readonly now: () => Date;
  readonly tokens: readonly SimToken[];
  /** Pinned prices by upper-case symbol. */
  readonly pins: Map<string, number>;
}

const PROV = { source: 'simulated', simulated: true } as const;

/** The token of a symbol; an unknown one is PROVIDER_ERROR naming the known symbols. */
function tokenOf(s: SimState, symbol: string): SimToken {
  const tok = findSimToken(s.tokens, symbol);
  if (!tok) throw new MinaraError('PROVIDER_ERROR', `Unknown symbol "${symbol}" in the simulated market (known: ${[...new Set(s.tokens.map((x) => x.symbol))].join(', ')}).`);
  return tok;
}

/** The deterministic mark of `symbol` at `at`: three seeded waves plus per-minute noise (stablecoins: their base price). */
function markAt(s: SimState, symbol: string, at: Date): number {
  const tok = tokenOf(s, symbol);
  if (tok.stable || tok.volatility === 0) return tok.basePriceUsd;
  const ms = at.getTime();
  const key = `${s.seed}:${tok.symbol}:${tok.chain}`;
  const h = hash32(key);
  const phase = (i: number) => unitHash(h, 'phase', i) * TWO_PI;
  const v = tok.volatility;
  const wave =
    0.8 * v * Math.sin((TWO_PI * ms) / (7 * DAY) + phase(0)) +
    0.5 * v * Math.sin((TWO_PI * ms) / DAY + phase(1)) +
    0.15 * v * Math.sin((TWO_PI * ms) / (3 * 3_600_000) + phase(2));
  const minute = Math.floor(ms / 60_000);
  const noise = (unitHash(h, 'noise', minute) - 0.5) * 0.02 * v;
  const price = tok.basePriceUsd * Math.exp(wave + noise);
  return Number(price.toPrecision(8));
}

/** The current price: the pin, else the mark now. */
function priceNow(s: SimState, symbol: string): number {
  return s.pins.get(symbol.toUpperCase()) ?? markAt(s, symbol, s.now());
}

/** The change against the mark a day ago, in percent. */
function change24h(s: SimState, symbol: string): number {
  const cur = priceNow(s, symbol);
  const prev = markAt(s, symbol, new Date(s.now().getTime() - DAY));
  return Number((((cur - prev) / prev) * 100).toFixed(4));
}

/** Pin a symbol's price (`undefined` removes the pin); the symbol must be known and the price positive. */
function setPrice(s: SimState, symbol: string, priceUsd: number | undefined): void {
  const sym = symbol.toUpperCase();
  tokenOf(s, sym);
  if (priceUsd === undefined) s.pins.delete(sym);
  else {
    if (!(Number.isFinite(priceUsd) && priceUsd > 0)) throw new MinaraError('INVALID_ARGUMENT', `setPrice: price of ${sym} must be a positive number.`);
    s.pins.set(sym, priceUsd);
  }
}

/** A token's current price quote. */
function quote(s: SimState, tok: SimToken): PriceQuote {
  return { ...PROV, symbol: tok.symbol, priceUsd: priceNow(s, tok.symbol), change24hPct: change24h(s, tok.symbol), at: s.now().toISOString() };
}

/** The perp mark (the spot price); a token without perps is PROVIDER_ERROR. */
function perpMark(s: SimState, symbol: string): PriceQuote {
  const tok = tokenOf(s, symbol);
  if (!tok.perps) throw new MinaraError('PROVIDER_ERROR', `No perpetual market for "${tok.symbol}" in the simulated market.`);
  return quote(s, tok);
}

/** A token record as the provider reports it. */
function info(tok: SimToken): TokenInfo {
  return {
    ...PROV, symbol: tok.symbol, name: tok.name, chain: tok.chain, address: tok.address, verified: tok.verified,
    decimals: tok.decimals, stable: tok.stable, perps: tok.perps,
  };
}

/** Tokens by symbol, name or address: exact matches first, verified ones ahead. */
function searchTokens(s: SimState, query: string, limit: number): TokenInfo[] {
  const q = query.trim().toLowerCase();
  if (q === '') return [];
  const scored = s.tokens
    .map((tok) => {
      const sym = tok.symbol.toLowerCase();
      const n = tok.name.toLowerCase();
      const score = sym === q ? 3 : n === q ? 2.5 : sym.startsWith(q) ? 2 : n.includes(q) ? 1 : tok.address.toLowerCase() === q ? 3 : 0;
      return { tok, score: score + (tok.verified ? 0.5 : 0) };
    })
    .filter((x) => x.score > 0.5)
    .sort((a, b) => b.score - a.score || a.tok.symbol.localeCompare(b.tok.symbol) || a.tok.chain.localeCompare(b.tok.chain));
  return scored.slice(0, limit).map((x) => info(x.tok));
}

/** One token by address or symbol (and chain), the verified one first. */
function lookupToken(s: SimState, query: Parameters<NonNullable<MarketDataProvider['lookupToken']>>[0]): TokenInfo | undefined {
  const addr = query.address?.trim().toLowerCase();
  const sym = query.symbol?.trim().toUpperCase();
  const chain = query.chain?.trim().toLowerCase();
  const candidates = s.tokens.filter(
    (tok) => (addr === undefined || tok.address.toLowerCase() === addr) && (chain === undefined || tok.chain === chain) && (addr !== undefined || sym === undefined || tok.symbol === sym),
  );
  const best = candidates.find((x) => x.verified) ?? candidates[0];
  return best ? info(best) : undefined;
}

/** Verified non-stable tokens by 24h change, best first. */
function trending(s: SimState, limit: number): TrendingToken[] {
  const rows = s.tokens
    .filter((tok) => tok.verified && !tok.stable)
    .map((tok) => ({ tok, change: change24h(s, tok.symbol) }))
    .sort((a, b) => b.change - a.change || a.tok.symbol.localeCompare(b.tok.symbol));
  return rows.slice(0, limit).map((r, i) => ({ ...PROV, symbol: r.tok.symbol, name: r.tok.name, priceUsd: priceNow(s, r.tok.symbol), change24hPct: r.change, rank: i + 1 }));
}

/** The fear & greed index from BTC's and ETH's 24h moves. */
function fearGreed(s: SimState): FearGreed {
  const avg = (change24h(s, 'BTC') + change24h(s, 'ETH')) / 2;
  const value = Math.max(0, Math.min(100, Math.round(50 + avg * 8)));
  return { ...PROV, value, classification: classify(value), at: s.now().toISOString() };
}

/** Candles ending at the current interval, each from five marks across it, with seeded volume. */
function ohlcv(s: SimState, symbol: string, opts: { readonly interval?: OhlcvInterval | undefined; readonly limit?: number | undefined }): OhlcvSeries {
  const tok = tokenOf(s, symbol);
  const interval = opts.interval ?? '1h';
  const limit = Math.max(1, Math.min(opts.limit ?? 48, 500));
  const step = INTERVAL_MS[interval];
  const end = Math.floor(s.now().getTime() / step) * step;
  const candles: Candle[] = [];
  for (let i = limit - 1; i >= 0; i--) {
    const t0 = end - i * step;
    const samples = [0, 0.25, 0.5, 0.75, 1].map((f) => markAt(s, tok.symbol, new Date(t0 + f * step)));
    const o = samples[0]!;
    const c = samples[4]!;
    const v = Number((tok.liquidityUsd * (0.01 + unitHash(s.seed, tok.symbol, 'vol', t0) * 0.05)).toFixed(2));
    candles.push({ t: t0, o, h: Math.max(...samples), l: Math.min(...samples), c, v });
  }
  return { ...PROV, symbol: tok.symbol, interval, candles };
}
