/**
 * The engine's spot accounting, in the paper engine's conventions (src/finance/paper-accounting.ts `planSpot`),
 * on flat typed arrays so the hot loop allocates nothing:
 *
 * - buy with `amountIn` USD at mark m: fee f = max(minUsd, amountIn × bps), value bought = (amountIn − f)(1 − slip),
 *   units = value / m, cash −= amountIn, cost basis += amountIn, realised += 0 (a retail exchange's convention, as
 *   the paper engine: the buy's fee and slippage are part of what the units cost, so unrealised P&L is the price
 *   against everything paid);
 * - sell q units at mark m: f = max(minUsd, q·m × bps), cash += (q·m − f)(1 − slip), cost removed = basis × q / held
 *   (average cost), realised += cash in − cost removed.
 *
 * A test checks these numbers against `planSpot` itself over random orders.
 */

/** Costs of one fill. */
export interface FillCosts {
  readonly feeBps: number;
  readonly feeMinUsd: number;
  readonly slippageBps: number;
}

/** The outcome of a spot fill, written into a reused object (no allocation per fill). */
export interface SpotFillOut {
  quantity: number;
  /** Execution price after slippage, before fees: m / (1 − slip) for a buy, m × (1 − slip) for a sell. */
  price: number;
  /** Value at the execution price (buy: amountIn − fee; sell: q × price). */
  notionalUsd: number;
  feeUsd: number;
  /** Cash change (buy: −amountIn; sell: the proceeds). */
  cashDelta: number;
  /** Cost-basis change of the position. */
  basisDelta: number;
  realizedPnlUsd: number;
}

const fee = (notional: number, c: FillCosts) => Math.max(c.feeMinUsd, (notional * c.feeBps) / 10_000);

/** Buy with `amountIn` USD at `mark`. Writes the fill into `out`; returns false when nothing would be bought (the fee eats it all). */
export function buyWithCash(amountIn: number, mark: number, c: FillCosts, out: SpotFillOut): boolean {
  const f = fee(amountIn, c);
  const value = Math.max(0, (amountIn - f) * (1 - c.slippageBps / 10_000));
  if (!(value > 0)) return false;
  out.quantity = value / mark;
  out.price = mark / (1 - c.slippageBps / 10_000);
  out.notionalUsd = amountIn - f;
  out.feeUsd = f;
  out.cashDelta = -amountIn;
  out.basisDelta = amountIn;
  out.realizedPnlUsd = 0;
  return true;
}

/** The USD to spend so that a buy at `mark` yields `quantity` units. */
export function cashForQuantity(quantity: number, mark: number, c: FillCosts): number {
  const afterFee = (quantity * mark) / (1 - c.slippageBps / 10_000);
  const proportional = afterFee / (1 - c.feeBps / 10_000);
  return (proportional * c.feeBps) / 10_000 >= c.feeMinUsd ? proportional : afterFee + c.feeMinUsd;
}

/** Sell `quantity` of a position holding `held` units at `basis` USD of cost. */
export function sellQuantity(quantity: number, held: number, basis: number, mark: number, c: FillCosts, out: SpotFillOut): boolean {
  const gross = quantity * mark;
  const f = fee(gross, c);
  const proceeds = Math.max(0, (gross - f) * (1 - c.slippageBps / 10_000));
  const removed = held > 0 ? (basis * quantity) / held : 0;
  out.quantity = quantity;
  out.price = mark * (1 - c.slippageBps / 10_000);
  out.notionalUsd = quantity * out.price;
  out.feeUsd = f;
  out.cashDelta = proceeds;
  out.basisDelta = -removed;
  out.realizedPnlUsd = proceeds - removed;
  return true;
}

/** A fresh output object for the fill functions. */
export function newFillOut(): SpotFillOut {
  return { quantity: 0, price: 0, notionalUsd: 0, feeUsd: 0, cashDelta: 0, basisDelta: 0, realizedPnlUsd: 0 };
}
