/**
 * Deterministic finance entity extraction: tickers (with or without `$`), chains, EVM addresses and forex
 * pairs. Pure regex and word lists, no model; the same text always yields the same entities in the same
 * order (first occurrence). Used for the search entity boost and the typed memory edges.
 */

/** The kinds of entity the extractor finds. Open to extension. */
export type FinanceEntityKind = 'ticker' | 'chain' | 'address' | 'forex' | (string & {});

/** One entity found in text. */
export interface FinanceEntity {
  readonly kind: FinanceEntityKind;
  /** Normalised key: `BTC`, `base`, `0xabc…` (lower case), `EURUSD`. */
  readonly key: string;
  /** Offset of the first occurrence in the text. */
  readonly index: number;
}

const KNOWN_TICKERS = new Set(
  (
    'BTC ETH SOL BNB XRP ADA DOGE AVAX DOT MATIC POL LINK UNI ATOM LTC BCH TRX TON SHIB PEPE WIF BONK ARB OP APT ' +
    'SUI SEI TIA INJ NEAR FIL AAVE MKR CRV LDO RNDR RENDER FET GRT SNX COMP JUP PYTH ETC XLM XMR HBAR ICP VET ALGO ' +
    'FTM SAND MANA AXS IMX STX RUNE KAS ENA ONDO PENDLE ETHFI EIGEN HYPE TAO WLD JTO STRK ZRO BLUR GMX DYDX USDT ' +
    'USDC DAI USDE FDUSD PYUSD WBTC WETH STETH TSLA AAPL NVDA MSTR COIN SPY QQQ AMZN MSFT GOOGL META'
  ).split(' '),
);
/** Tickers also recognised in lower case (not English words). */
const LOWERCASE_TICKERS = new Set('btc eth sol xrp ada doge avax bnb usdt usdc ltc pepe shib matic wbtc weth steth trx'.split(' '));
/** Upper-case words that are not tickers. */
const NOT_TICKERS = new Set(
  (
    'USD EUR JPY GBP CHF AUD CAD NZD CNY CNH HKD SGD KRW INR ETF CEO CFO CTO FOMC CPI PPI GDP API NFT DEX CEX APR ' +
    'APY TVL ATH ATL PNL ROI OTC KYC AML SEC FED USA UAE ECB BOJ LLM DCA FAQ FYI IMO ASAP UTC GMT EST PST AND THE ' +
    'NOT FOR BUY SELL LONG SHORT HODL NOTE TODO YES ALL NEW OLD LOW HIGH RISK STOP LOSS TAKE PROFIT MAX MIN ' +
    'AVG EOD EOW YTD QOQ YOY IPO ICO IDO TGE KPI OKR VIP PDF CSV URL RPC SDK GPU CPU RAM SSD OTP PIN'
  ).split(' '),
);
const NAME_TICKERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bbitcoin\b/giu, 'BTC'],
  [/\bether\b/giu, 'ETH'],
  [/\bdogecoin\b/giu, 'DOGE'],
  [/\bripple\b/giu, 'XRP'],
  [/\bcardano\b/giu, 'ADA'],
  [/\bchainlink\b/giu, 'LINK'],
  [/\blitecoin\b/giu, 'LTC'],
  [/比特币|大饼/gu, 'BTC'],
  [/以太坊|以太|二饼/gu, 'ETH'],
  [/狗狗币/gu, 'DOGE'],
  [/瑞波币/gu, 'XRP'],
];
/** Chain names that double as a coin name: a chain after `on` or before `chain|network|mainnet`, else the ticker. */
const CHAIN_OR_TICKER: Readonly<Record<string, string>> = { ethereum: 'ETH', solana: 'SOL', avalanche: 'AVAX', polygon: 'POL' };
const PLAIN_CHAINS: Readonly<Record<string, string>> = {
  arbitrum: 'arbitrum', zksync: 'zksync', linea: 'linea', hyperliquid: 'hyperliquid', bsc: 'bsc', tron: 'tron',
  aptos: 'aptos', starknet: 'starknet', 'bnb chain': 'bsc', 'bnb smart chain': 'bsc', 'op mainnet': 'optimism',
};
/** English words that are also chain names: only capitalised or in a chain context. */
const AMBIGUOUS_CHAINS = ['base', 'optimism', 'scroll', 'blast', 'mantle', 'sonic', 'berachain'];
const PLAIN_CHAIN_RES: ReadonlyArray<readonly [RegExp, string]> = Object.entries(PLAIN_CHAINS).map(([word, key]) => [
  new RegExp(`\\b${word.replace(' ', '\\s+')}\\b`, 'giu'),
  key,
]);
const AMBIGUOUS_CHAIN_RES: ReadonlyArray<readonly [RegExp, string]> = AMBIGUOUS_CHAINS.map((word) => [new RegExp(`\\b${word}\\b`, 'giu'), word]);
/** Cheap pre-check: text that cannot contain any chain name skips the chain passes. */
const ANY_CHAIN = new RegExp(`\\b(?:${[...Object.keys(PLAIN_CHAINS).map((w) => w.replace(' ', '\\s+')), ...AMBIGUOUS_CHAINS, 'ethereum', 'solana', 'avalanche', 'polygon'].join('|')})\\b`, 'iu');
const ANY_NAME_TICKER = /bitcoin|ether|dogecoin|ripple|cardano|chainlink|litecoin|比特币|大饼|以太|二饼|狗狗币|瑞波币/iu;
const CHAIN_CONTEXT_AFTER = /^\s+(?:chain|network|mainnet|l2)\b/iu;
const CHAIN_CONTEXT_BEFORE = /\b(?:on|via|to|from|bridge[ds]?\s+to)\s+$/iu;
const CURRENCIES = new Set('USD EUR JPY GBP CHF AUD CAD NZD CNY CNH HKD SGD KRW INR MXN BRL ZAR SEK NOK DKK PLN TRY'.split(' '));

class Collector {
  readonly found = new Map<string, FinanceEntity>();
  readonly taken: Array<[number, number]> = [];
  add(kind: string, key: string, index: number, length: number): void {
    const id = `${kind}:${key}`;
    const prev = this.found.get(id);
    if (prev === undefined || index < prev.index) this.found.set(id, { kind, key, index });
    this.taken.push([index, index + length]);
  }
  overlaps(index: number, length: number): boolean {
    return this.taken.some(([s, e]) => index < e && index + length > s);
  }
}

/**
 * Extract finance entities from text, ordered by first occurrence.
 *
 * @example
 * ```ts
 * extractFinanceEntities('long $ETH on Base, watching EUR/USD').map((e) => `${e.kind}:${e.key}`);
 * // ['ticker:ETH', 'chain:base', 'forex:EURUSD']
 * ```
 */
export function extractFinanceEntities(text: string): FinanceEntity[] {
  const c = new Collector();
  for (const m of text.matchAll(/\b0x[a-fA-F0-9]{40}\b/gu)) c.add('address', m[0].toLowerCase(), m.index, m[0].length);
  for (const m of text.matchAll(/\b([A-Za-z]{3})\s?\/\s?([A-Za-z]{3})\b/gu)) {
    const a = (m[1] as string).toUpperCase();
    const b = (m[2] as string).toUpperCase();
    if (a !== b && CURRENCIES.has(a) && CURRENCIES.has(b)) c.add('forex', `${a}${b}`, m.index, m[0].length);
  }
  for (const m of text.matchAll(/\b([A-Z]{3})([A-Z]{3})\b/gu)) {
    const a = m[1] as string;
    const b = m[2] as string;
    if (a !== b && CURRENCIES.has(a) && CURRENCIES.has(b) && !c.overlaps(m.index, m[0].length)) c.add('forex', `${a}${b}`, m.index, m[0].length);
  }
  for (const m of text.matchAll(/\$([A-Za-z][A-Za-z0-9]{0,9})\b/gu)) c.add('ticker', (m[1] as string).toUpperCase(), m.index, m[0].length);
  for (const m of text.matchAll(/(?<![$\w])([A-Za-z][A-Za-z0-9]{1,9})\b/gu)) {
    const word = m[1] as string;
    if (c.overlaps(m.index, word.length)) continue;
    const upper = word.toUpperCase();
    const isUpper = word === upper && /[A-Z]/u.test(word);
    if (isUpper && KNOWN_TICKERS.has(upper)) c.add('ticker', upper, m.index, word.length);
    else if (!isUpper && LOWERCASE_TICKERS.has(word.toLowerCase())) c.add('ticker', upper, m.index, word.length);
    else if (isUpper && /^[A-Z]{3,5}$/u.test(word) && !NOT_TICKERS.has(upper) && !CURRENCIES.has(upper)) c.add('ticker', upper, m.index, word.length);
  }
  if (ANY_NAME_TICKER.test(text)) {
    for (const [re, key] of NAME_TICKERS) for (const m of text.matchAll(re)) if (!c.overlaps(m.index, m[0].length)) c.add('ticker', key, m.index, m[0].length);
  }
  if (!ANY_CHAIN.test(text)) return finish(c);
  for (const m of text.matchAll(/\b(ethereum|solana|avalanche|polygon)\b/giu)) {
    const name = (m[1] as string).toLowerCase();
    const before = text.slice(Math.max(0, m.index - 20), m.index);
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 12);
    if (CHAIN_CONTEXT_BEFORE.test(before) || CHAIN_CONTEXT_AFTER.test(after)) c.add('chain', name, m.index, m[0].length);
    else c.add('ticker', CHAIN_OR_TICKER[name] as string, m.index, m[0].length);
  }
  for (const [re, key] of PLAIN_CHAIN_RES) {
    for (const m of text.matchAll(re)) c.add('chain', key, m.index, m[0].length);
  }
  for (const [re, word] of AMBIGUOUS_CHAIN_RES) {
    for (const m of text.matchAll(re)) {
      const capitalised = (m[0][0] as string) !== word[0];
      const before = text.slice(Math.max(0, m.index - 20), m.index);
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 12);
      const sentenceStart = /(?:^|[.!?]\s+)$/u.test(before);
      if ((capitalised && !sentenceStart) || CHAIN_CONTEXT_BEFORE.test(before) || CHAIN_CONTEXT_AFTER.test(after)) c.add('chain', word, m.index, m[0].length);
    }
  }
  return finish(c);
}

function finish(c: Collector): FinanceEntity[] {
  return Array.from(c.found.values()).sort((a, b) => a.index - b.index || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

/** `kind:key` identity of an entity, as used for overlap counting. */
export function entityId(entity: Pick<FinanceEntity, 'kind' | 'key'>): string {
  return `${entity.kind}:${entity.key}`;
}

/** How many of `queryEntities` also occur in `text`. */
export function entityOverlap(queryEntities: ReadonlySet<string>, text: string): number {
  if (queryEntities.size === 0) return 0;
  let n = 0;
  const seen = new Set(extractFinanceEntities(text).map(entityId));
  for (const id of queryEntities) if (seen.has(id)) n++;
  return n;
}

/**
 * Normalise a user-supplied entity (`$btc`, `EUR/USD`, `Base`, an address) to the key edges use. Returns the
 * first extracted entity, or an upper-cased bare token as a ticker guess.
 */
export function normalizeEntity(input: string): { kind?: string | undefined; key: string } {
  const found = extractFinanceEntities(input)[0];
  if (found !== undefined) return { kind: found.kind, key: found.key };
  const trimmed = input.trim().replace(/^\$/u, '');
  if (/^0x[a-fA-F0-9]+$/u.test(trimmed)) return { key: trimmed.toLowerCase() };
  if (/^[A-Za-z][A-Za-z0-9]{0,9}$/u.test(trimmed)) return { key: trimmed.toUpperCase() };
  return { key: trimmed };
}
