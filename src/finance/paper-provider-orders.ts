/**
 * The paper provider's quotes and orders: spot swaps, transfers, perp opens and closes. Each order answers a
 * repeated client order id with its first fill, prices itself, and applies a plan of `paper-accounting.ts`.
 */
import { MinaraError } from '../errors/minara-error';
import { impactBps, isStableLike, liquidationPrice, planPerpClose, planPerpOpen, planSpot, planTransferOut } from './paper-accounting';
import { applyOrder, accountState, orderResult, PAPER, type PaperState, perpMark, previousOrder, priceOf, up } from './paper-provider-state';
import type { OrderResult, PerpCloseRequest, PerpOpenRequest, PerpQuote, SpotOrderRequest, SpotQuote, TransferQuote, TransferRequest } from './types';

/** A request with the client order id an order is idempotent by. */
type Ordered<T> = T & { readonly clientOrderId: string };

/** Quote a spot swap: impact against the thinner side's depth, the fee, and the slippage cap's minimum out. */
export async function quoteSpot(s: PaperState, order: SpotOrderRequest): Promise<SpotQuote> {
  const from = up(order.from);
  const to = up(order.to);
  if (from === to) throw new MinaraError('INVALID_ARGUMENT', 'from and to must differ.');
  const [priceIn, priceOut] = await Promise.all([priceOf(s, from), priceOf(s, to)]);
  const amountIn = order.amount ?? (order.amountUsd !== undefined ? order.amountUsd / priceIn : Number.NaN);
  if (!(amountIn > 0)) throw new MinaraError('INVALID_ARGUMENT', 'Give a positive amount or amountUsd.');
  const amountInUsd = amountIn * priceIn;
  const depth = Math.min(isStableLike(from) ? Infinity : s.liquidity(from), isStableLike(to) ? Infinity : s.liquidity(to));
  const slippageBps = impactBps(amountInUsd, Number.isFinite(depth) ? depth : 500_000_000, s.costs);
  const feeUsd = (amountInUsd * s.costs.spotFeeBps) / 10_000;
  const net = amountInUsd - feeUsd;
  const cap = order.maxSlippageBps ?? s.defaultMaxSlippageBps;
  return {
    ...PAPER, route: `${from} → ${to} (paper)`, from, to, amountIn, amountInUsd, priceIn, priceOut, feeUsd, slippageBps,
    expectedAmountOut: (net * (1 - slippageBps / 10_000)) / priceOut, minAmountOut: (net * (1 - cap / 10_000)) / priceOut, at: s.now().toISOString(),
  };
}

/** Execute a spot swap; refused when the expected slippage exceeds the order's cap. */
export async function executeSpot(s: PaperState, order: Ordered<SpotOrderRequest>): Promise<OrderResult> {
  const dup = await previousOrder(s, order.clientOrderId);
  if (dup) return dup;
  const q = await quoteSpot(s, order);
  const cap = order.maxSlippageBps ?? s.defaultMaxSlippageBps;
  if (q.slippageBps > cap) throw new MinaraError('INVALID_ARGUMENT', `Expected slippage ${q.slippageBps} bps exceeds the ${cap} bps cap.`);
  const at = s.now().toISOString();
  return orderResult(await applyOrder(s, order.clientOrderId, (st) => planSpot(st, { ...q, amountIn: q.amountIn, at, baseCurrency: s.baseCurrency })));
}

/** Quote a transfer out (no fee on paper). */
export async function quoteTransfer(s: PaperState, req: TransferRequest): Promise<TransferQuote> {
  const price = await priceOf(s, req.asset);
  return { ...PAPER, asset: up(req.asset), amount: req.amount, valueUsd: req.amount * price, to: req.to, feeUsd: 0, kind: req.kind, at: s.now().toISOString() };
}

/** Move an asset out of the account at its current mark. */
export async function executeTransfer(s: PaperState, req: Ordered<TransferRequest>): Promise<OrderResult> {
  const dup = await previousOrder(s, req.clientOrderId);
  if (dup) return dup;
  const mark = await priceOf(s, req.asset);
  const at = s.now().toISOString();
  return orderResult(await applyOrder(s, req.clientOrderId, (st) => planTransferOut(st, { asset: up(req.asset), amount: req.amount, to: req.to, kind: req.kind, at, markUsd: mark })));
}

/** Quote opening a perp position: the fill moves against the side by the impact estimate. */
export async function quotePerpOpen(s: PaperState, req: PerpOpenRequest): Promise<PerpQuote> {
  const symbol = up(req.symbol);
  const mark = await perpMark(s, symbol);
  const slippageBps = impactBps(req.sizeUsd, s.liquidity(symbol), s.costs);
  const dir = req.side === 'long' ? 1 : -1;
  const fill = mark * (1 + (dir * slippageBps) / 10_000);
  return {
    ...PAPER, symbol, side: req.side, action: 'open', sizeUsd: req.sizeUsd, size: req.sizeUsd / fill, markPrice: mark, expectedFillPrice: fill,
    leverage: req.leverage, marginUsd: req.sizeUsd / req.leverage, feeUsd: (req.sizeUsd * s.costs.perpFeeBps) / 10_000, slippageBps,
    liquidationPrice: liquidationPrice(req.side, fill, req.leverage), at: s.now().toISOString(),
  };
}

/** Open (or add to) a perp position; refused when the expected slippage exceeds the order's cap. */
export async function openPerp(s: PaperState, req: Ordered<PerpOpenRequest>): Promise<OrderResult> {
  const dup = await previousOrder(s, req.clientOrderId);
  if (dup) return dup;
  const q = await quotePerpOpen(s, req);
  const cap = req.maxSlippageBps ?? s.defaultMaxSlippageBps;
  if (q.slippageBps > cap) throw new MinaraError('INVALID_ARGUMENT', `Expected slippage ${q.slippageBps} bps exceeds the ${cap} bps cap.`);
  const at = s.now().toISOString();
  return orderResult(
    await applyOrder(s, req.clientOrderId, (st) =>
      planPerpOpen(st, { symbol: q.symbol, side: req.side, sizeUsd: req.sizeUsd, leverage: req.leverage, mark: q.markPrice, slippageBps: q.slippageBps, costs: s.costs, at, baseCurrency: s.baseCurrency }),
    ),
  );
}

/** Quote closing a fraction of the open position in a symbol. */
export async function quotePerpClose(s: PaperState, req: PerpCloseRequest): Promise<PerpQuote> {
  const symbol = up(req.symbol);
  const st = await accountState(s);
  const p = st.positions.find((x) => x.symbol === symbol);
  if (!p) throw new MinaraError('NOT_FOUND', `No open ${symbol} perp position.`);
  const fraction = req.fraction ?? 1;
  const mark = await perpMark(s, symbol);
  const size = p.size * fraction;
  const slippageBps = impactBps(size * mark, s.liquidity(symbol), s.costs);
  const dir = p.side === 'long' ? 1 : -1;
  const fill = mark * (1 - (dir * slippageBps) / 10_000);
  const feeUsd = (size * fill * s.costs.perpFeeBps) / 10_000;
  return {
    ...PAPER, symbol, side: p.side, action: 'close', sizeUsd: size * fill, size, markPrice: mark, expectedFillPrice: fill, leverage: p.leverage,
    marginUsd: p.marginUsd * fraction, feeUsd, slippageBps, expectedPnlUsd: size * (fill - p.entryPrice) * dir - feeUsd, at: s.now().toISOString(),
  };
}

/** Close a fraction of a perp position, sized against the position read inside the write. */
export async function closePerp(s: PaperState, req: Ordered<PerpCloseRequest>): Promise<OrderResult> {
  const dup = await previousOrder(s, req.clientOrderId);
  if (dup) return dup;
  const symbol = up(req.symbol);
  const mark = await perpMark(s, symbol);
  const at = s.now().toISOString();
  return orderResult(
    await applyOrder(s, req.clientOrderId, (st) => {
      const p = st.positions.find((x) => x.symbol === symbol);
      const slippageBps = p ? impactBps(p.size * (req.fraction ?? 1) * mark, s.liquidity(symbol), s.costs) : 0;
      return planPerpClose(st, { symbol, fraction: req.fraction ?? 1, mark, slippageBps, costs: s.costs, at, baseCurrency: s.baseCurrency });
    }),
  );
}
