/**
 * Seeded synthetic finance memories and queries for the memory benchmarks. Deterministic for a seed.
 */

/** mulberry32. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const TICKERS = ['BTC', 'ETH', 'SOL', 'ARB', 'OP', 'LINK', 'UNI', 'AAVE', 'DOGE', 'PEPE', 'AVAX', 'TIA', 'SUI', 'APT', 'INJ', 'JUP', 'WIF', 'ONDO', 'ENA', 'PENDLE'];
export const CHAINS = ['Base', 'Arbitrum', 'Solana', 'Ethereum mainnet', 'Optimism', 'Polygon'];
const TIMEFRAMES = ['weekly', 'daily', '4h', '1h', 'monthly'];
const FILLER = (
  'market liquidity volume funding basis spread orderbook volatility momentum trend range breakout retest support resistance ' +
  'rotation narrative catalyst unlock emissions treasury governance vote yield staking restaking bridge gas fees mempool ' +
  'entry exit sizing hedge drawdown conviction thesis review journal reminder portfolio allocation rebalance stablecoins'
).split(' ');

const TEMPLATES: ReadonlyArray<(p: () => number, pick: <T>(xs: readonly T[]) => T) => string> = [
  (p, pick) => `bought ${pick(TICKERS)} at $${Math.round(p() * 5000)} on ${pick(CHAINS)}`,
  (_p, pick) => `user prefers ${pick(TIMEFRAMES)} charts for ${pick(TICKERS)}`,
  (p, pick) => `stop-loss on ${pick(TICKERS)} set at ${(p() * 15).toFixed(1)}% below entry`,
  (_p, pick) => `${pick(TICKERS)} funding rate turned negative, watching for a squeeze`,
  (p, pick) => `always use ${(p() * 2).toFixed(1)}% slippage on ${pick(CHAINS)} swaps`,
  (p, pick) => `closed ${pick(TICKERS)} long for ${p() > 0.5 ? '+' : '-'}${(p() * 30).toFixed(1)}% after ${Math.ceil(p() * 40)} days`,
  (p) => `risk budget per trade is ${(p() * 3).toFixed(1)}% of the portfolio`,
  (_p, pick) => `昨晚${pick(TICKERS)}做多被止损，山寨币全线下跌`,
  (_p, pick) => `sold ${pick(TICKERS)} and rotated into ${pick(TICKERS)} ahead of the unlock`,
];

/** `n` synthetic memory contents. */
export function generateMemories(n: number, seed: number): Array<{ category: string; content: string }> {
  const p = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(p() * xs.length)] as T;
  const cats = ['preference', 'observation', 'trade_outcome', 'lesson', 'alert', 'reference'];
  const out: Array<{ category: string; content: string }> = [];
  for (let i = 0; i < n; i++) {
    const base = (TEMPLATES[Math.floor(p() * TEMPLATES.length)] as (typeof TEMPLATES)[number])(p, pick);
    const filler = Array.from({ length: 4 + Math.floor(p() * 14) }, () => pick(FILLER)).join(' ');
    out.push({ category: pick(cats), content: `${base}; ${filler} #${i}` });
  }
  return out;
}

/** Search queries of the mixes agents send: single terms, pairs, tickers, phrases, prefixes, CJK. */
export function generateQueries(n: number, seed: number): string[] {
  const p = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(p() * xs.length)] as T;
  const forms: Array<() => string> = [
    () => pick(FILLER),
    () => `${pick(FILLER)} ${pick(FILLER)}`,
    () => `${pick(TICKERS)} ${pick(['funding', 'stop-loss', 'slippage', 'charts', 'squeeze'])}`,
    () => `$${pick(TICKERS)}`,
    () => `"${pick(TIMEFRAMES)} charts"`,
    () => `slip*`,
    () => `${pick(TICKERS)} OR ${pick(TICKERS)}`,
    () => pick(['止损', '山寨币', '做多']),
    () => `what slippage does the user use on ${pick(CHAINS)}`,
  ];
  return Array.from({ length: n }, () => (pick(forms) as () => string)());
}
