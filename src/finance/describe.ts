/**
 * Plain-words descriptions of finance tool calls and results, for the person who must approve or read them
 * (the web app's approval card, the REPL's approval prompt and result lines). Pure functions of the tool's
 * input, its preview and its result: no provider, no storage, no imports, so a browser bundle can use them.
 */

type Obj = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const up = (v: unknown): string | undefined => str(v)?.toUpperCase();

const usdFormat = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 });
const usdWhole = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 });

/** `$1,234.50`; negative as `-$12.00`. */
export function formatUsd(value: number): string {
  return usdFormat.format(value);
}

/** A price: whole dollars from $1,000 (`$3,012`), cents from $1 (`$1.25`), 4 significant digits below. */
export function formatPrice(value: number): string {
  const a = Math.abs(value);
  if (a >= 1000) return usdWhole.format(value);
  if (a >= 1) return usdFormat.format(value);
  if (a === 0) return '$0';
  return `${value < 0 ? '-' : ''}$${Number(a.toPrecision(4))}`;
}

/** Units of a token, up to 8 significant digits, no exponent for ordinary sizes (`0.01660027`). */
export function formatUnits(value: number): string {
  const n = Number(value.toPrecision(8));
  return Math.abs(n) >= 1e-6 || n === 0 ? n.toLocaleString('en-US', { maximumFractionDigits: 8 }) : String(n);
}

/** Basis points as a percent: 50 → `0.5%`, 100 → `1%`. */
export function formatBps(bps: number): string {
  return `${Number((bps / 100).toFixed(2))}%`;
}

/** A signed percent: `+1.23%`, `-0.50%`. */
const signedPct = (p: number) => `${p >= 0 ? '+' : ''}${p.toFixed(2)}%`;
/** A signed amount of USD: `+$12.00`, `-$3.50`. */
export function formatSignedUsd(value: number): string {
  return `${value >= 0 ? '+' : ''}${formatUsd(value)}`;
}

const fraction = (f: number, what: string) => (f >= 1 ? `all of your ${what}` : f === 0.5 ? `half of your ${what}` : `${Number((f * 100).toFixed(2))}% of your ${what}`);
const shortAddress = (a: string) => (a.length > 16 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a);

/** What {@link describeOrder} reads. */
export interface DescribeOrderInput {
  /** The tool's name (`buy_token`, `sell_token`, `swap_tokens`, `open_perps_position`, `close_perps_position`, `transfer_token`, `withdraw_funds`). */
  readonly toolName: string;
  /** The call's arguments, as the model gave them (or as an approval request stores them). */
  readonly input: unknown;
  /**
   * The call's preview (the `data` of a call without `confirm: true`), when known: adds the expected price,
   * fee, slippage and output. Without it the sentence says only what the arguments say.
   */
  readonly preview?: unknown;
}

/**
 * One sentence saying what a fund-moving call will do, in words and numbers: `Buy $50.00 of ETH at ~$3,012,
 * fee $0.30, slippage ~0.02% (max 1%)` (the expected slippage from the preview, the most the call accepts
 * from its `slippageBps`). `undefined` for a tool that moves no funds (or an input it cannot read), so a
 * caller falls back to its own display.
 *
 * @example
 * ```ts
 * import { describeOrder } from '@minara/agent/finance';
 *
 * describeOrder({ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, slippageBps: 100 } });
 * // 'Buy $50.00 of ETH, max slippage 1%'
 * describeOrder({ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, slippageBps: 100 }, preview: { sizeUsd: 50, expectedOutput: 0.0166, feeUsd: 0.3, slippageBps: 2 } });
 * // 'Buy $50.00 of ETH at ~$3,012, fee $0.30, slippage ~0.02% (max 1%)'
 * ```
 */
export function describeOrder(options: DescribeOrderInput): string | undefined {
  const i = obj(options.input);
  if (!i) return undefined;
  const p = obj(options.preview) ?? {};
  // The argument is the most slippage the order accepts; the preview's `slippageBps` is what the quote expects.
  const maxSlip = num(i['slippageBps']);
  const expectedSlip = num(p['slippageBps']);
  const fee = num(p['feeUsd']);
  const tail = (parts: (string | undefined)[]) => parts.filter((x): x is string => x !== undefined).join(', ');
  const feeText = fee !== undefined ? `fee ${formatUsd(fee)}` : undefined;
  const slipText =
    expectedSlip !== undefined
      ? `slippage ~${formatBps(expectedSlip)}${maxSlip !== undefined ? ` (max ${formatBps(maxSlip)})` : ''}`
      : maxSlip !== undefined
        ? `max slippage ${formatBps(maxSlip)}`
        : undefined;
  const sizeUsd = num(p['sizeUsd']);
  const expected = num(p['expectedOutput']);
  switch (options.toolName) {
    case 'buy_token': {
      const asset = up(i['symbol']);
      const amountUsd = num(i['amountUsd']);
      if (!asset || amountUsd === undefined) return undefined;
      const price = expected && expected > 0 ? (sizeUsd ?? amountUsd) / expected : undefined;
      return tail([`Buy ${formatUsd(amountUsd)} of ${asset}${price !== undefined ? ` at ~${formatPrice(price)}` : ''}`, feeText, slipText]);
    }
    case 'sell_token': {
      const asset = up(i['symbol']);
      if (!asset) return undefined;
      const amount = num(i['amount']);
      const amountUsd = num(i['amountUsd']);
      const f = num(i['fraction']);
      const what = amount !== undefined ? `${formatUnits(amount)} ${asset}` : amountUsd !== undefined ? `${formatUsd(amountUsd)} of ${asset}` : f !== undefined ? fraction(f, asset) : undefined;
      if (!what) return undefined;
      const units = num(p['amountIn']);
      const price = units && units > 0 && expected !== undefined ? expected / units : undefined;
      const worth = amountUsd === undefined && sizeUsd !== undefined ? ` (~${formatUsd(sizeUsd)})` : '';
      return tail([`Sell ${what}${worth}${price !== undefined ? ` at ~${formatPrice(price)}` : ''}`, feeText, slipText]);
    }
    case 'swap_tokens': {
      const from = up(i['from']);
      const to = up(i['to']);
      if (!from || !to) return undefined;
      const amount = num(i['amount']);
      const amountUsd = num(i['amountUsd']);
      const what = amount !== undefined ? `${formatUnits(amount)} ${from}` : amountUsd !== undefined ? `${formatUsd(amountUsd)} of ${from}` : undefined;
      if (!what) return undefined;
      const worth = amountUsd === undefined && sizeUsd !== undefined ? ` (~${formatUsd(sizeUsd)})` : '';
      const minOut = num(p['minOutput']);
      const get = expected !== undefined ? `, expect ~${formatUnits(expected)} ${to}${minOut !== undefined ? ` (at least ${formatUnits(minOut)})` : ''}` : '';
      return tail([`Swap ${what}${worth} for ${to}${get}`, feeText, slipText]);
    }
    case 'open_perps_position': {
      const asset = up(i['symbol']);
      const side = str(i['side']);
      const size = num(i['sizeUsd']);
      const lev = num(i['leverage']);
      if (!asset || !side || size === undefined || lev === undefined) return undefined;
      const fill = num(p['expectedFillPrice']);
      const margin = num(p['marginUsd']);
      const liq = num(p['liquidationPrice']);
      return tail([
        `Open a ${Number(lev.toFixed(2))}× ${side} of ${asset}, ${formatUsd(size)} notional${margin !== undefined ? ` (${formatUsd(margin)} margin)` : ''}${fill !== undefined ? ` at ~${formatPrice(fill)}` : ''}`,
        liq !== undefined ? `liquidation ~${formatPrice(liq)}` : undefined,
        feeText,
        slipText,
      ]);
    }
    case 'close_perps_position': {
      const asset = up(i['symbol']);
      if (!asset) return undefined;
      const f = num(i['fraction']) ?? 1;
      const fill = num(p['expectedFillPrice']);
      const pnl = num(p['expectedPnlUsd']);
      return tail([
        `Close ${fraction(f, `${asset} position`)}${fill !== undefined ? ` at ~${formatPrice(fill)}` : ''}`,
        pnl !== undefined ? `expected P&L ${formatSignedUsd(pnl)}` : undefined,
        feeText,
      ]);
    }
    case 'transfer_token':
    case 'withdraw_funds': {
      const asset = up(i['asset']);
      const amount = num(i['amount']);
      const dest = str(i[options.toolName === 'transfer_token' ? 'to' : 'destination']);
      if (!asset || amount === undefined || !dest) return undefined;
      const value = num(p['valueUsd']);
      const verb = options.toolName === 'transfer_token' ? 'Send' : 'Withdraw';
      return tail([`${verb} ${formatUnits(amount)} ${asset}${value !== undefined ? ` (~${formatUsd(value)})` : ''} to ${shortAddress(dest)}`, feeText]);
    }
    default:
      return undefined;
  }
}

/** What {@link describeToolResult} reads. */
export interface DescribeToolResultInput {
  readonly toolName: string;
  /** The result's `data` (the `ok: true` envelope's payload). */
  readonly data: unknown;
  /** The call's arguments, when known (a preview is described through them). */
  readonly input?: unknown;
}

/**
 * One line saying what a finance tool returned: a price (`ETH $3,012.45 (+1.20% 24h)`), a fill (`Bought
 * 0.0166 ETH at $3,012 for $50.00, fee $0.30`), a preview (`Preview: Buy $50.00 of ETH at ~$3,012, …`), the
 * portfolio (`Portfolio $10,000.00 in 2 holdings, exposure $50.00`) or the P&L. `undefined` for a result it
 * does not know, so a caller falls back to its own display (e.g. compact JSON).
 *
 * @example
 * ```ts
 * import { describeToolResult } from '@minara/agent/finance';
 *
 * describeToolResult({ toolName: 'get_price', data: { symbol: 'ETH', priceUsd: 3012.45, change24hPct: 1.2 } });
 * // 'ETH $3,012 (+1.20% 24h)'
 * ```
 */
export function describeToolResult(options: DescribeToolResultInput): string | undefined {
  const d = obj(options.data);
  if (!d) return undefined;
  if (d['preview'] === true) {
    const text = describeOrder({ toolName: options.toolName, input: options.input, preview: d });
    return text ? `Preview (nothing moved): ${text}` : undefined;
  }
  const fill = obj(d['fill']);
  if (fill && typeof d['status'] === 'string') {
    const side = str(fill['side']);
    const symbol = str(fill['symbol']) ?? '?';
    const qty = num(fill['quantity']);
    const price = num(fill['price']);
    const notional = num(fill['notionalUsd']);
    const fee = num(fill['feeUsd']);
    const pnl = num(fill['realizedPnlUsd']);
    const verb = side === 'buy' ? 'Bought' : side === 'sell' ? 'Sold' : side === 'long' || side === 'short' ? `Opened ${side}` : side ? `Filled ${side}` : 'Filled';
    const parts = [
      `${d['duplicate'] === true ? 'Already done earlier: ' : ''}${verb}${qty !== undefined ? ` ${formatUnits(qty)}` : ''} ${symbol}${price !== undefined ? ` at ${formatPrice(price)}` : ''}${notional !== undefined ? ` for ${formatUsd(notional)}` : ''}`,
      fee !== undefined ? `fee ${formatUsd(fee)}` : undefined,
      // Opening trades book their costs as realised P&L; only a sale or a close realises a gain or loss worth naming.
      pnl !== undefined && pnl !== 0 && side !== 'buy' && side !== 'long' && side !== 'short' ? `realised ${formatSignedUsd(pnl)}` : undefined,
      d['simulated'] === true ? 'paper' : undefined,
    ];
    return parts.filter((x): x is string => x !== undefined).join(', ');
  }
  switch (options.toolName) {
    case 'get_price': {
      const price = num(d['priceUsd']);
      if (price === undefined) return undefined;
      const change = num(d['change24hPct']);
      return `${str(d['symbol']) ?? '?'} ${formatPrice(price)}${change !== undefined ? ` (${signedPct(change)} 24h)` : ''}${d['simulated'] === true ? ' · simulated' : ''}`;
    }
    case 'get_portfolio': {
      const total = num(d['totalValueUsd']);
      const holdings = Array.isArray(d['holdings']) ? d['holdings'].length : 0;
      const positions = Array.isArray(d['positions']) ? d['positions'].length : 0;
      if (total === undefined) return undefined;
      const exposure = num(d['exposureUsd']);
      return `Portfolio ${formatUsd(total)} in ${holdings} holding${holdings === 1 ? '' : 's'}${positions > 0 ? ` and ${positions} perp position${positions === 1 ? '' : 's'}` : ''}${exposure !== undefined ? `, exposure ${formatUsd(exposure)}` : ''}`;
    }
    case 'minara_total_balance': {
      const total = num(d['totalValueUsd']);
      if (total === undefined) return undefined;
      const stable = num(d['stableUsd']);
      return `Total ${formatUsd(total)}${stable !== undefined ? `, ${formatUsd(stable)} in stablecoins` : ''}`;
    }
    case 'minara_pnl': {
      const realized = num(d['realizedUsd']);
      const unrealized = num(d['unrealizedUsd']);
      if (realized === undefined || unrealized === undefined) return undefined;
      const today = num(d['realizedTodayUsd']);
      return `P&L realised ${formatSignedUsd(realized)}${today !== undefined ? ` (today ${formatSignedUsd(today)})` : ''}, unrealised ${formatSignedUsd(unrealized)}`;
    }
    default:
      return undefined;
  }
}
