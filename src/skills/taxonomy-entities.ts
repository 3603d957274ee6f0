/**
 * A small deterministic finance entity extractor for routing: tickers (`BTC`, `$PEPE`), asset names in
 * English and Chinese, chains, forex pairs (`EUR/USD`, `USDJPY`) and market words (`perps`, `股票`).
 * It favours precision: an upper-case word counts only when it is a known symbol; lower-case words count
 * only for unambiguous names (`bitcoin`, `eth`, `狗狗币`), so common-word tickers (`LINK`, `NEAR`, `OP`) need
 * upper case or a `$`.
 */
import { analyzeTextShared, type AnalyzedText, createKeywordIndex, derivedOnce } from './text-match';
import type { AssetClass } from './taxonomy';

/** One entity found in a message. */
export interface RoutingEntity {
  readonly kind: 'ticker' | 'asset' | 'chain' | 'forex_pair' | 'market';
  /** Canonical value: upper-case symbol, pair as `EUR/USD`, chain or market name. */
  readonly value: string;
  readonly assetClass?: AssetClass | undefined;
}

const SYMBOLS: Readonly<Record<string, AssetClass>> = {
  BTC: 'crypto_major', ETH: 'crypto_major', WBTC: 'crypto_major', WETH: 'crypto_major',
  SOL: 'crypto_alt', BNB: 'crypto_alt', XRP: 'crypto_alt', ADA: 'crypto_alt', AVAX: 'crypto_alt', DOT: 'crypto_alt',
  LINK: 'crypto_alt', TRX: 'crypto_alt', TON: 'crypto_alt', SUI: 'crypto_alt', APT: 'crypto_alt', ARB: 'crypto_alt',
  OP: 'crypto_alt', MATIC: 'crypto_alt', POL: 'crypto_alt', NEAR: 'crypto_alt', ATOM: 'crypto_alt', LTC: 'crypto_alt',
  BCH: 'crypto_alt', UNI: 'crypto_alt', AAVE: 'crypto_alt', HYPE: 'crypto_alt', INJ: 'crypto_alt', TIA: 'crypto_alt',
  SEI: 'crypto_alt', FIL: 'crypto_alt', ETC: 'crypto_alt', XLM: 'crypto_alt', JUP: 'crypto_alt', ENA: 'crypto_alt',
  LDO: 'crypto_alt', MKR: 'crypto_alt', CRV: 'crypto_alt', PENDLE: 'crypto_alt', RNDR: 'crypto_alt', TAO: 'crypto_alt',
  DOGE: 'crypto_meme', SHIB: 'crypto_meme', PEPE: 'crypto_meme', WIF: 'crypto_meme', BONK: 'crypto_meme',
  FLOKI: 'crypto_meme', TRUMP: 'crypto_meme', FARTCOIN: 'crypto_meme', POPCAT: 'crypto_meme', BRETT: 'crypto_meme',
  USDT: 'stablecoin', USDC: 'stablecoin', DAI: 'stablecoin', FDUSD: 'stablecoin', USDE: 'stablecoin',
  PYUSD: 'stablecoin', TUSD: 'stablecoin', USDS: 'stablecoin', RLUSD: 'stablecoin',
  AAPL: 'equity', TSLA: 'equity', NVDA: 'equity', MSFT: 'equity', AMZN: 'equity', GOOGL: 'equity', GOOG: 'equity',
  META: 'equity', NFLX: 'equity', AMD: 'equity', INTC: 'equity', COIN: 'equity', MSTR: 'equity', HOOD: 'equity',
  BABA: 'equity', TSM: 'equity', PLTR: 'equity',
  SPY: 'index', QQQ: 'index', SPX: 'index', NDX: 'index', DJI: 'index', VIX: 'index',
  XAU: 'commodity', XAG: 'commodity', WTI: 'commodity',
};


const FIAT = new Set(['USD', 'EUR', 'JPY', 'GBP', 'CHF', 'AUD', 'CAD', 'NZD', 'CNY', 'CNH', 'HKD', 'SGD', 'KRW',
  'INR', 'SEK', 'NOK', 'MXN', 'BRL', 'TRY', 'ZAR', 'RUB', 'TWD', 'THB']);

/** Names and market words (lower case or Chinese) → entity. */
const NAMES: ReadonlyArray<readonly [string, RoutingEntity]> = [
  ...(
    [
      ['bitcoin', 'BTC'], ['btc', 'BTC'], ['比特币', 'BTC'], ['大饼', 'BTC'], ['ethereum', 'ETH'], ['ether', 'ETH'],
      ['eth', 'ETH'], ['以太坊', 'ETH'], ['以太', 'ETH'], ['二饼', 'ETH'], ['solana', 'SOL'], ['sol', 'SOL'],
      ['索拉纳', 'SOL'], ['xrp', 'XRP'], ['ripple', 'XRP'], ['瑞波', 'XRP'], ['bnb', 'BNB'], ['币安币', 'BNB'],
      ['avax', 'AVAX'], ['avalanche', 'AVAX'], ['chainlink', 'LINK'], ['cardano', 'ADA'], ['polkadot', 'DOT'],
      ['litecoin', 'LTC'], ['ltc', 'LTC'], ['莱特币', 'LTC'], ['dogecoin', 'DOGE'], ['doge', 'DOGE'],
      ['狗狗币', 'DOGE'], ['shib', 'SHIB'], ['pepe', 'PEPE'], ['bonk', 'BONK'], ['usdt', 'USDT'], ['tether', 'USDT'],
      ['泰达币', 'USDT'], ['usdc', 'USDC'], ['apple', 'AAPL'], ['苹果股票', 'AAPL'], ['tesla', 'TSLA'], ['特斯拉', 'TSLA'],
      ['nvidia', 'NVDA'], ['英伟达', 'NVDA'], ['microsoft', 'MSFT'], ['微软', 'MSFT'], ['gold', 'XAU'], ['黄金', 'XAU'],
      ['silver', 'XAG'], ['白银', 'XAG'], ['crude oil', 'WTI'], ['oil', 'WTI'], ['原油', 'WTI'],
    ] as const
  ).map(([name, sym]) => [name, { kind: 'asset', value: sym, assetClass: SYMBOLS[sym] }] as const),
  ...(
    [
      ['perp', 'perps'], ['perps', 'perps'], ['perpetual', 'perps'], ['perpetuals', 'perps'], ['futures', 'perps'],
      ['leverage', 'perps'], ['leveraged', 'perps'], ['funding rate', 'perps'], ['open interest', 'perps'],
      ['liquidation', 'perps'], ['hyperliquid', 'perps'], ['合约', 'perps'], ['永续', 'perps'], ['杠杆', 'perps'],
      ['爆仓', 'perps'], ['资金费率', 'perps'],
      ['stablecoin', 'stablecoin'], ['stablecoins', 'stablecoin'], ['稳定币', 'stablecoin'],
      ['memecoin', 'crypto_meme'], ['meme coin', 'crypto_meme'], ['meme', 'crypto_meme'], ['土狗', 'crypto_meme'],
      ['meme币', 'crypto_meme'], ['altcoin', 'crypto_alt'], ['altcoins', 'crypto_alt'], ['山寨币', 'crypto_alt'],
      ['defi', 'defi'], ['yield farming', 'defi'], ['liquidity pool', 'defi'], ['staking', 'defi'], ['apy', 'defi'],
      ['质押', 'defi'], ['流动性挖矿', 'defi'], ['nft', 'nft'], ['nfts', 'nft'], ['opensea', 'nft'],
      ['forex', 'forex'], ['fx', 'forex'], ['exchange rate', 'forex'], ['外汇', 'forex'], ['汇率', 'forex'],
      ['stock', 'equity'], ['stocks', 'equity'], ['shares', 'equity'], ['equity', 'equity'], ['equities', 'equity'],
      ['股票', 'equity'], ['美股', 'equity'], ['港股', 'equity'], ['a股', 'equity'], ['个股', 'equity'],
      ['s&p 500', 'index'], ['s&p', 'index'], ['sp500', 'index'], ['nasdaq 100', 'index'], ['dow jones', 'index'],
      ['hang seng', 'index'], ['标普', 'index'], ['纳指', 'index'], ['道指', 'index'], ['恒生指数', 'index'],
      ['commodity', 'commodity'], ['commodities', 'commodity'], ['大宗商品', 'commodity'],
      ['polymarket', 'prediction_market'], ['prediction market', 'prediction_market'], ['预测市场', 'prediction_market'],
    ] as const
  ).map(([word, cls]) => [word, { kind: 'market', value: cls, assetClass: cls }] as const),
  ...(
    [
      ['arbitrum', 'arbitrum'], ['optimism', 'optimism'], ['polygon', 'polygon'], ['base chain', 'base'],
      ['bsc', 'bsc'], ['bnb chain', 'bsc'], ['tron', 'tron'], ['波场', 'tron'], ['aptos', 'aptos'],
      ['sui network', 'sui'], ['ethereum mainnet', 'ethereum'], ['solana chain', 'solana'],
    ] as const
  ).map(([name, chain]) => [name, { kind: 'chain', value: chain }] as const),
];

const nameIndex = createKeywordIndex<RoutingEntity>(NAMES);

const CASHTAG = /\$([A-Za-z][A-Za-z0-9]{0,14})(?![A-Za-z0-9])/g;
const UPPER_WORD = /(?<![A-Za-z0-9$])([A-Z][A-Z0-9]{1,9})(?![A-Za-z0-9])/g;
const PAIR = /(?<![A-Za-z0-9])([A-Za-z]{3,5})\s*[/-]\s*([A-Za-z]{3,5})(?![A-Za-z0-9])/g;
const FIAT_CONCAT = /(?<![A-Za-z0-9])([A-Z]{3})([A-Z]{3})(?![A-Za-z0-9])/g;
const LEVERAGE = /(?<![A-Za-z0-9.])\d{1,3}(?:\.\d+)?\s?[xX×倍](?![A-Za-z0-9])/;

/**
 * Finance entities of a message, deduplicated, in order of first appearance by rule.
 *
 * @example
 * ```ts
 * extractRoutingEntities('swap USDC to $WIF on solana');
 * // [{kind:'ticker',value:'USDC',assetClass:'stablecoin'}, {kind:'ticker',value:'WIF',assetClass:'crypto_meme'}, {kind:'asset',value:'SOL',…}]
 * ```
 */
export function extractRoutingEntities(message: string | AnalyzedText): RoutingEntity[] {
  const text = typeof message === 'string' ? analyzeTextShared(message) : message;
  return derivedOnce(text, 'entities', () => entitiesOf(text)).map((e) => ({ ...e }));
}

function entitiesOf(text: AnalyzedText): RoutingEntity[] {
  const raw = text.raw;
  const out: RoutingEntity[] = [];
  const seen = new Set<string>();
  const push = (e: RoutingEntity) => {
    const key = `${e.kind}:${e.value}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(e);
  };
  const pairSymbols = new Set<string>();
  for (const m of raw.matchAll(PAIR)) {
    const a = (m[1] ?? '').toUpperCase();
    const b = (m[2] ?? '').toUpperCase();
    if (FIAT.has(a) && FIAT.has(b)) {
      push({ kind: 'forex_pair', value: `${a}/${b}`, assetClass: 'forex' });
      pairSymbols.add(a).add(b);
    } else if ((SYMBOLS[a] === 'commodity' && FIAT.has(b)) || (SYMBOLS[a] !== undefined && SYMBOLS[b] !== undefined)) {
      push({ kind: 'ticker', value: a, assetClass: SYMBOLS[a] });
      if (SYMBOLS[b] !== undefined) push({ kind: 'ticker', value: b, assetClass: SYMBOLS[b] });
    }
  }
  for (const m of raw.matchAll(FIAT_CONCAT)) {
    const a = m[1] ?? '';
    const b = m[2] ?? '';
    if (FIAT.has(a) && FIAT.has(b) && a !== b) push({ kind: 'forex_pair', value: `${a}/${b}`, assetClass: 'forex' });
  }
  for (const m of raw.matchAll(CASHTAG)) {
    const sym = (m[1] ?? '').toUpperCase();
    push({ kind: 'ticker', value: sym, assetClass: SYMBOLS[sym] ?? 'crypto_alt' });
  }
  for (const m of raw.matchAll(UPPER_WORD)) {
    const sym = m[1] ?? '';
    const cls = SYMBOLS[sym];
    if (cls !== undefined && !pairSymbols.has(sym)) push({ kind: 'ticker', value: sym, assetClass: cls });
  }
  for (const e of nameIndex.match(text)) {
    if (e.kind === 'asset' && seen.has(`ticker:${e.value}`)) continue;
    push(e);
  }
  if (LEVERAGE.test(raw)) push({ kind: 'market', value: 'perps', assetClass: 'perps' });
  return out;
}
