/**
 * Pure accounting of the paper provider: each function turns an order, the marks fetched for it and the
 * account state (read inside the write transaction) into a {@link TradingFillPlan}, or a rejection.
 *
 * Invariant the plans keep (checked by a property test over random order sequences):
 *
 *   equity at marks = net contributions + realised P&L + unrealised P&L
 *
 * with equity = Σ balance × mark + Σ perp (margin + max(−margin, size × (mark − entry) × dir)),
 * unrealised = Σ (balance × mark − cost basis) + Σ max(−margin, perp P&L), realised = Σ fill P&L. A spot buy's
 * fee and slippage go into the cost basis of what it bought (a retail exchange's convention: unrealised P&L is the
 * current price against everything paid); a sell or swap realises its proceeds after fees against the cost basis;
 * perp fees are realised when paid. No balance goes negative: the storage refuses such a plan.
 */
import type { TradingAccountState, TradingFillPlan, TradingPosition } from '../storage/trading-types';

/** Fees and the price-impact model. */
export interface PaperCosts {
  /** Spot fee in basis points of notional. */
  readonly spotFeeBps: number;
  /** Perp taker fee in basis points of notional. */
  readonly perpFeeBps: number;
  /** Fixed spread in basis points added to every impact estimate. */
  readonly baseSpreadBps: number;
}

/** The default fees: 10 bps spot, 5 bps perps, 2 bps spread. */
export const DEFAULT_PAPER_COSTS: PaperCosts = { spotFeeBps: 10, perpFeeBps: 5, baseSpreadBps: 2 };

/** Expected price impact of `notionalUsd` against `liquidityUsd` of depth, in basis points. */
export function impactBps(notionalUsd: number, liquidityUsd: number, costs: PaperCosts): number {
  const depth = liquidityUsd > 0 ? liquidityUsd : 1;
  return Math.round((costs.baseSpreadBps + (notionalUsd / depth) * 5_000) * 100) / 100;
}

type Plan = TradingFillPlan | { readonly reject: string };

const bal = (s: TradingAccountState, asset: string) => s.balances.find((b) => b.asset === asset);

/** A spot swap of `amountIn` units of `from` into `to`. */
export function planSpot(
  s: TradingAccountState,
  o: { from: string; to: string; amountIn: number; priceIn: number; priceOut: number; slippageBps: number; feeUsd: number; at: string; baseCurrency: string; details?: Record<string, unknown> },
): Plan {
  if (!(o.amountIn > 0)) return { reject: 'the order size must be positive' };
  const held = bal(s, o.from);
  if (!held || held.amount + 1e-12 < o.amountIn) return { reject: `insufficient ${o.from}: have ${held?.amount ?? 0}, need ${o.amountIn}` };
  const amountIn = Math.min(o.amountIn, held.amount);
  const amountInUsd = amountIn * o.priceIn;
  const costRemoved = held.amount > 0 ? (held.costBasisUsd * amountIn) / held.amount : 0;
  const valueOut = Math.max(0, (amountInUsd - o.feeUsd) * (1 - o.slippageBps / 10_000));
  const qtyOut = valueOut / o.priceOut;
  const buy = o.from === o.baseCurrency || (isStableLike(o.from) && !isStableLike(o.to));
  const sell = !buy && (o.to === o.baseCurrency || isStableLike(o.to));
  // A retail exchange's convention: a buy's fee and slippage are part of what the units cost (their cost basis is
  // everything paid), so a buy realises nothing and its unrealised P&L is the current price against that cost; a
  // sell or a swap realises its proceeds after fees against the cost basis of what it gave up.
  const basisOut = buy ? costRemoved : valueOut;
  const realized = buy ? 0 : valueOut - costRemoved;
  const side = buy ? 'buy' : sell ? 'sell' : 'swap';
  const symbol = buy ? o.to : sell ? o.from : `${o.from}->${o.to}`;
  const quantity = buy ? qtyOut : amountIn;
  const price = buy ? (qtyOut > 0 ? amountInUsd / qtyOut : 0) : amountIn > 0 ? valueOut / amountIn : 0;
  return {
    fill: {
      kind: 'spot', symbol, side, quantity, price, notionalUsd: amountInUsd, feeUsd: o.feeUsd, realizedPnlUsd: realized, contributionUsd: 0, at: o.at,
      details: { from: o.from, to: o.to, amountIn, amountOut: qtyOut, markIn: o.priceIn, markOut: o.priceOut, slippageBps: o.slippageBps, ...o.details },
    },
    balances: [
      { asset: o.from, amount: -amountIn, costBasisUsd: -costRemoved },
      { asset: o.to, amount: qtyOut, costBasisUsd: basisOut },
    ],
  };
}

/** Move `amount` of `asset` out of the account (transfer or withdrawal). */
export function planTransferOut(s: TradingAccountState, o: { asset: string; amount: number; to: string; kind: 'transfer' | 'withdraw'; at: string; markUsd: number }): Plan {
  if (!(o.amount > 0)) return { reject: 'the amount must be positive' };
  const held = bal(s, o.asset);
  if (!held || held.amount + 1e-12 < o.amount) return { reject: `insufficient ${o.asset}: have ${held?.amount ?? 0}, need ${o.amount}` };
  const amount = Math.min(o.amount, held.amount);
  const costRemoved = held.amount > 0 ? (held.costBasisUsd * amount) / held.amount : 0;
  return {
    fill: {
      kind: 'transfer_out', symbol: o.asset, side: 'out', quantity: amount, price: o.markUsd, notionalUsd: amount * o.markUsd, feeUsd: 0,
      realizedPnlUsd: 0, contributionUsd: -costRemoved, at: o.at, details: { to: o.to, kind: o.kind },
    },
    balances: [{ asset: o.asset, amount: -amount, costBasisUsd: -costRemoved }],
  };
}

/** Liquidation price of an isolated position (maintenance margin ignored). */
export function liquidationPrice(side: 'long' | 'short', entry: number, leverage: number): number {
  return side === 'long' ? entry * (1 - 1 / leverage) : entry * (1 + 1 / leverage);
}

/** Unrealised P&L of a perp at a mark, floored at the margin (isolated margin cannot lose more). */
export function perpUnrealized(p: Pick<TradingPosition, 'side' | 'size' | 'entryPrice' | 'marginUsd'>, mark: number): number {
  const dir = p.side === 'long' ? 1 : -1;
  return Math.max(-p.marginUsd, p.size * (mark - p.entryPrice) * dir);
}

/** Open or add to a perp position, paying margin and fee in the base currency. */
export function planPerpOpen(
  s: TradingAccountState,
  o: { symbol: string; side: 'long' | 'short'; sizeUsd: number; leverage: number; mark: number; slippageBps: number; costs: PaperCosts; at: string; baseCurrency: string },
): Plan {
  if (!(o.sizeUsd > 0)) return { reject: 'sizeUsd must be positive' };
  if (!(o.leverage >= 1)) return { reject: 'leverage must be at least 1' };
  const existing = s.positions.find((p) => p.symbol === o.symbol);
  if (existing && existing.side !== o.side) return { reject: `an opposite ${existing.side} ${o.symbol} position is open; close it first` };
  const dir = o.side === 'long' ? 1 : -1;
  const fillPrice = o.mark * (1 + (dir * o.slippageBps) / 10_000);
  const size = o.sizeUsd / fillPrice;
  const margin = o.sizeUsd / o.leverage;
  const fee = (o.sizeUsd * o.costs.perpFeeBps) / 10_000;
  const newSize = (existing?.size ?? 0) + size;
  const entry = existing ? (existing.size * existing.entryPrice + size * fillPrice) / newSize : fillPrice;
  const newMargin = (existing?.marginUsd ?? 0) + margin;
  const leverage = (newSize * entry) / newMargin;
  return {
    fill: {
      kind: 'perp_open', symbol: o.symbol, side: o.side, quantity: size, price: fillPrice, notionalUsd: o.sizeUsd, feeUsd: fee,
      realizedPnlUsd: -fee, contributionUsd: 0, at: o.at, details: { mark: o.mark, leverage: o.leverage, marginUsd: margin, slippageBps: o.slippageBps },
    },
    balances: [{ asset: o.baseCurrency, amount: -(margin + fee), costBasisUsd: -(margin + fee) }],
    upsertPositions: [
      { symbol: o.symbol, side: o.side, size: newSize, entryPrice: entry, marginUsd: newMargin, leverage, openedAt: existing?.openedAt ?? o.at, updatedAt: o.at },
    ],
  };
}

/** Close a fraction of a perp position at the mark (less slippage), releasing margin plus P&L, floored at 0. */
export function planPerpClose(
  s: TradingAccountState,
  o: { symbol: string; fraction: number; mark: number; slippageBps: number; costs: PaperCosts; at: string; baseCurrency: string },
): Plan {
  const p = s.positions.find((x) => x.symbol === o.symbol);
  if (!p) return { reject: `no open ${o.symbol} perp position` };
  if (!(o.fraction > 0 && o.fraction <= 1)) return { reject: 'fraction must be in (0, 1]' };
  const dir = p.side === 'long' ? 1 : -1;
  const fillPrice = o.mark * (1 - (dir * o.slippageBps) / 10_000);
  const closeSize = p.size * o.fraction;
  const released = p.marginUsd * o.fraction;
  const pnl = closeSize * (fillPrice - p.entryPrice) * dir;
  const fee = (closeSize * fillPrice * o.costs.perpFeeBps) / 10_000;
  const payout = Math.max(0, released + pnl - fee);
  const full = o.fraction >= 1 - 1e-12;
  return {
    fill: {
      kind: 'perp_close', symbol: o.symbol, side: p.side === 'long' ? 'sell' : 'buy', quantity: closeSize, price: fillPrice,
      notionalUsd: closeSize * fillPrice, feeUsd: Math.min(fee, Math.max(0, released + pnl)), realizedPnlUsd: payout - released, contributionUsd: 0,
      at: o.at, details: { mark: o.mark, entryPrice: p.entryPrice, fraction: o.fraction, grossPnlUsd: pnl, slippageBps: o.slippageBps },
    },
    balances: [{ asset: o.baseCurrency, amount: payout, costBasisUsd: payout }],
    ...(full
      ? { removePositions: [o.symbol] }
      : { upsertPositions: [{ ...withoutAccount(p), size: p.size - closeSize, marginUsd: p.marginUsd - released, updatedAt: o.at }] }),
  };
}

function withoutAccount(p: TradingPosition): Omit<TradingPosition, 'accountId'> {
  const { accountId: _ignored, ...rest } = p;
  return rest;
}

const STABLE_LIKE = new Set(['USDC', 'USDT', 'DAI', 'USD']);
/** True for a USD stablecoin symbol. */
export function isStableLike(symbol: string): boolean {
  return STABLE_LIKE.has(symbol.toUpperCase());
}
