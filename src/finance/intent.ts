/**
 * Parse a stated intent (`"buy 50 USD of ETH"`, `"卖出 0.5 ETH"`, `{ side: 'long', asset: 'BTC', amountUsd: 1000 }`)
 * and compare it with what a call would actually do.
 */
import type { OrderFacts } from './order-facts';

/** A parsed intent. */
export interface ParsedIntent {
  readonly side?: string | undefined;
  /** Tickers mentioned (written upper case or `$`-prefixed), upper case, in order. */
  readonly assets: readonly string[];
  /** Every word, upper-cased (so `eth` still names ETH). */
  readonly words?: readonly string[] | undefined;
  readonly amountUsd?: number | undefined;
  /** Units and the ticker they are in. */
  readonly amount?: { readonly value: number; readonly unit: string | undefined } | undefined;
  readonly leverage?: number | undefined;
}

const SIDES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(withdraw|withdrawal)\b|提现|提币/u, 'withdraw'],
  [/\b(transfer|send)\b|转账|转出|发送/u, 'transfer'],
  [/\bclose\b|平仓/u, 'close'],
  [/\b(long)\b|做多|开多/u, 'long'],
  [/\b(short)\b|做空|开空/u, 'short'],
  [/\b(swap|convert|exchange)\b|兑换|换成/u, 'swap'],
  [/\b(sell|dump)\b|卖出|卖/u, 'sell'],
  [/\b(buy|purchase|ape)\b|买入|买/u, 'buy'],
];
const USD_WORDS = new Set(['USD', 'DOLLAR', 'DOLLARS', 'BUCKS']);
const STOP = new Set(['OF', 'TO', 'FOR', 'WITH', 'INTO', 'AND', 'THE', 'MY', 'ALL', 'AT', 'X', 'USD', 'LONG', 'SHORT', 'BUY', 'SELL', 'SWAP', 'CLOSE', 'SEND', 'TRANSFER', 'WITHDRAW', 'PERP', 'PERPS', 'WORTH', 'ON', 'IN', 'A', 'AN', 'I', 'FROM', 'DOLLARS', 'DOLLAR']);

/** Parse a string or object intent. */
export function parseIntent(intent: unknown): ParsedIntent | undefined {
  if (intent === null || intent === undefined) return undefined;
  if (typeof intent === 'object') {
    const o = intent as { side?: string | null; asset?: string | null; amountUsd?: number | null; amount?: number | null };
    const asset = o.asset?.trim().toUpperCase();
    return {
      side: o.side ? normalizeSide(o.side) : undefined,
      assets: asset ? [asset] : [],
      ...(o.amountUsd != null ? { amountUsd: o.amountUsd } : {}),
      ...(o.amount != null ? { amount: { value: o.amount, unit: asset } } : {}),
    };
  }
  if (typeof intent !== 'string') return undefined;
  const text = intent.normalize('NFKC');
  const lower = text.toLowerCase();
  const side = SIDES.find(([re]) => re.test(lower))?.[1];
  let amountUsd: number | undefined;
  let amount: ParsedIntent['amount'];
  let leverage: number | undefined;
  const lev = /(\d+(?:\.\d+)?)\s*(?:x|倍)(?![a-z])/iu.exec(text);
  if (lev) leverage = Number(lev[1]);
  const dollar = /\$\s*(\d[\d,]*(?:\.\d+)?)/u.exec(text) ?? /(\d[\d,]*(?:\.\d+)?)\s*(?:usd\b|dollars?\b|bucks\b|美元|美金|刀|u\b)/iu.exec(text);
  if (dollar) amountUsd = Number(dollar[1]!.replace(/,/g, ''));
  const withUnit = /(\d[\d,]*(?:\.\d+)?)\s*(?:个\s*)?\$?([A-Za-z][A-Za-z0-9]{1,9})\b/gu;
  for (const m of text.matchAll(withUnit)) {
    const unit = m[2]!.toUpperCase();
    if (USD_WORDS.has(unit) || STOP.has(unit) || unit === 'U') continue;
    amount = { value: Number(m[1]!.replace(/,/g, '')), unit };
    break;
  }
  const assets: string[] = [];
  const words: string[] = [];
  for (const m of text.matchAll(/\$?\b([A-Za-z][A-Za-z0-9]{1,9})\b/gu)) {
    const t = m[1]!.toUpperCase();
    if (STOP.has(t) || assets.includes(t)) continue;
    words.push(t);
    // Only words written as tickers (upper case or $-prefixed) count, so plain English is not a ticker.
    if (m[1] !== m[1]!.toUpperCase() && !m[0].startsWith('$')) continue;
    assets.push(t);
  }
  return { side, assets, words, ...(amountUsd !== undefined ? { amountUsd } : {}), ...(amount ? { amount } : {}), ...(leverage !== undefined ? { leverage } : {}) };
}

function normalizeSide(side: string): string | undefined {
  return SIDES.find(([re]) => re.test(side.toLowerCase()))?.[1] ?? side.trim().toLowerCase();
}

const ACCEPTED_SIDES: Record<string, readonly string[]> = {
  buy_token: ['buy'],
  sell_token: ['sell'],
  swap_tokens: ['swap', 'buy', 'sell'],
  close_perps_position: ['close'],
  transfer_token: ['transfer'],
  withdraw_funds: ['withdraw', 'transfer'],
};

const near = (a: number, b: number, tolerance = 0.05) => Math.abs(a - b) <= Math.max(1e-9, Math.abs(b) * tolerance);

/** Mismatches between a parsed intent and the call (empty when they agree). */
export function compareIntent(intent: ParsedIntent, facts: OrderFacts, input: Record<string, unknown>, isStable: (s: string) => boolean): string[] {
  const problems: string[] = [];
  const accepted = facts.tool === 'open_perps_position' ? [String(input.side)] : (ACCEPTED_SIDES[facts.tool] ?? [facts.side]);
  if (!intent.side) problems.push(`the intent does not say what you are doing (expected ${accepted.join(' or ')})`);
  else if (!accepted.includes(intent.side)) problems.push(`the intent says "${intent.side}" but the call would ${accepted[0]}`);
  const callAssets = new Set(facts.tokens.map((t) => t.symbol));
  const named = intent.assets.includes(facts.asset) || (intent.words ?? []).includes(facts.asset);
  if (intent.assets.length === 0 && !named) problems.push(`the intent names no asset (the call is about ${facts.asset})`);
  else {
    if (!named) problems.push(`the intent is about ${intent.assets.join('/')} but the call is about ${facts.asset}`);
    const foreign = intent.assets.filter((a) => !callAssets.has(a) && !isStable(a));
    if (foreign.length > 0) problems.push(`the intent mentions ${foreign.join(', ')}, which this call does not touch`);
  }
  if (intent.amountUsd !== undefined && !near(facts.sizeUsd, intent.amountUsd)) {
    problems.push(`the intent says about ${intent.amountUsd} USD but the call is for ${facts.sizeUsd.toFixed(2)} USD`);
  }
  if (intent.amount !== undefined) {
    const q = (facts.quote ?? {}) as { from?: string; to?: string; amountIn?: number; expectedAmountOut?: number; size?: number };
    const unit = intent.amount.unit ?? facts.asset;
    const actual =
      facts.kind === 'spot'
        ? unit === q.from ? q.amountIn : unit === q.to ? q.expectedAmountOut : undefined
        : unit === facts.asset ? facts.quantity : undefined;
    if (actual === undefined && !(isStable(unit) && near(facts.sizeUsd, intent.amount.value))) problems.push(`the intent's amount is in ${unit}, which this call does not move`);
    else if (actual !== undefined && !near(actual, intent.amount.value)) problems.push(`the intent says ${intent.amount.value} ${unit} but the call moves ${Number(actual.toPrecision(6))} ${unit}`);
  }
  if (intent.leverage !== undefined && facts.leverage !== undefined && facts.kind === 'perp_open' && !near(facts.leverage, intent.leverage, 0.001)) {
    problems.push(`the intent says ${intent.leverage}x but the call uses ${facts.leverage}x`);
  }
  return problems;
}
