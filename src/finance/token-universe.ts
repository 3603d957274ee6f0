/**
 * The tokens the simulated market knows: verified majors, alts and memes, two stablecoins, and a few
 * deliberately unsafe entries (an unverified token, a USDC look-alike) that the token-safety hook must
 * refuse. Addresses of verified ERC-20s are their real mainnet contracts.
 */

/** One token of the simulated universe. */
export interface SimToken {
  readonly symbol: string;
  readonly name: string;
  readonly chain: string;
  readonly address: string;
  readonly verified: boolean;
  readonly decimals: number;
  /** Reference price in USD at the feed's epoch. */
  readonly basePriceUsd: number;
  /** Daily volatility (fraction, e.g. 0.03 = 3 %). */
  readonly volatility: number;
  /** Depth in USD used for the price-impact model. */
  readonly liquidityUsd: number;
  readonly stable: boolean;
  readonly perps: boolean;
}

const t = (
  symbol: string, name: string, chain: string, address: string, basePriceUsd: number, volatility: number, liquidityUsd: number,
  extra: { verified?: boolean; stable?: boolean; perps?: boolean; decimals?: number } = {},
): SimToken => ({
  symbol, name, chain, address, basePriceUsd, volatility, liquidityUsd,
  verified: extra.verified ?? true, stable: extra.stable ?? false, perps: extra.perps ?? false, decimals: extra.decimals ?? 18,
});

/** The default simulated universe. */
export const SIM_TOKENS: readonly SimToken[] = [
  t('BTC', 'Bitcoin', 'bitcoin', 'native', 97_000, 0.025, 80_000_000, { perps: true, decimals: 8 }),
  t('ETH', 'Ethereum', 'ethereum', 'native', 3_500, 0.035, 50_000_000, { perps: true }),
  t('SOL', 'Solana', 'solana', 'native', 180, 0.05, 20_000_000, { perps: true, decimals: 9 }),
  t('USDC', 'USD Coin', 'ethereum', '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', 1, 0, 500_000_000, { stable: true, decimals: 6 }),
  t('USDT', 'Tether USD', 'ethereum', '0xdac17f958d2ee523a2206206994597c13d831ec7', 1, 0, 500_000_000, { stable: true, decimals: 6 }),
  t('WBTC', 'Wrapped Bitcoin', 'ethereum', '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599', 97_000, 0.025, 10_000_000, { decimals: 8 }),
  t('LINK', 'Chainlink', 'ethereum', '0x514910771af9ca656af840dff83e8264ecf986ca', 18, 0.05, 5_000_000, { perps: true }),
  t('UNI', 'Uniswap', 'ethereum', '0x1f9840a85d5af5bf1d1762f925bdaddc4201f984', 10, 0.05, 4_000_000),
  t('AAVE', 'Aave', 'ethereum', '0x7fc66500c84a76ad7e9c93437bfc5ac33e2ddae9', 300, 0.05, 4_000_000),
  t('ARB', 'Arbitrum', 'arbitrum', '0x912ce59144191c1204e64559fe8253a0e49e6548', 0.9, 0.06, 3_000_000, { perps: true }),
  t('DOGE', 'Dogecoin', 'dogecoin', 'native', 0.35, 0.07, 10_000_000, { perps: true, decimals: 8 }),
  t('PEPE', 'Pepe', 'ethereum', '0x6982508145454ce325ddbe47a25d4ec3d2311933', 0.000012, 0.1, 2_000_000),
  t('HYPE', 'Hyperliquid', 'hyperliquid', 'native', 30, 0.07, 5_000_000, { perps: true }),
  // Unsafe on purpose: the token-safety hook must refuse these.
  t('SCAMX', 'Scam Token X', 'ethereum', '0x000000000000000000000000000000000000dead', 0.02, 0.2, 50_000, { verified: false }),
  t('USDC', 'USD Coin (bridged look-alike)', 'base', '0x1111111111111111111111111111111111111111', 1, 0, 100_000, { verified: false, stable: true, decimals: 6 }),
];

/** Stablecoins priced at exactly 1 USD. */
export const STABLE_SYMBOLS: ReadonlySet<string> = new Set(SIM_TOKENS.filter((x) => x.stable && x.verified).map((x) => x.symbol));

/** The verified token with this symbol (the canonical one), else the first match. */
export function findSimToken(tokens: readonly SimToken[], symbol: string): SimToken | undefined {
  const s = symbol.toUpperCase();
  return tokens.find((x) => x.symbol === s && x.verified) ?? tokens.find((x) => x.symbol === s);
}
