/**
 * The backtest engine: one pass over the shared clock per strategy. At each step t it (1) fills the orders
 * decided at t − 1 at bar t's open (or, with `fill: 'same-close'`, fills each decision at its own bar's close),
 * (2) marks equity at bar t's close, (3) asks the strategy for orders through a point-in-time view that can
 * read nothing after bar t. The loop allocates nothing per bar when the strategy returns its orders
 * synchronously (built-ins return a shared empty array); it awaits only a promise (the agent).
 */
import { DEFAULT_FINANCE_LIMITS, type FinanceLimits, parseFinanceLimits } from '../finance/limits';
import { buyWithCash, cashForQuantity, type FillCosts, newFillOut, sellQuantity } from './accounting';
import { DAY_MS } from './calendar';
import { createView } from './view';
import type { BarSet, BacktestPortfolioView, Fill, FillTiming, OrderIntent, OrderRecord, RejectedOrder, SlippageModel, Strategy, Trade } from './types';

/** Resolved engine settings (shared by the strategy and its baselines). */
export interface EngineConfig {
  readonly initialCash: number;
  readonly feeBps: number;
  readonly feeMinUsd: number;
  readonly slippage: SlippageModel;
  readonly fill: FillTiming;
  readonly volumeCap: number;
  readonly limits: FinanceLimits | undefined;
  readonly seed: number;
  readonly onProgress?: ((done: number, total: number) => void) | undefined;
  readonly progressEvery: number;
}

/** The raw outcome of one strategy's pass (metrics are computed from it). */
export interface SimulationResult {
  readonly equity: Float64Array;
  readonly exposure: Float64Array;
  readonly fills: Fill[];
  readonly orders: OrderRecord[];
  readonly rejected: RejectedOrder[];
  readonly trades: Trade[];
  readonly feesUsd: number;
}

interface Pending { readonly id: number; readonly intent: OrderIntent; readonly decidedAt: number; readonly decisionClose: number }
interface OpenTrade { entryTime: number; qty: number; buyNotional: number; sellNotional: number; sellQty: number; fees: number; pnl: number }

const isPromise = (x: unknown): x is Promise<readonly OrderIntent[]> => typeof (x as { then?: unknown } | null)?.then === 'function';

/** Engine state, typed arrays per symbol. */
class Book {
  cash: number;
  fees = 0;
  realized = 0;
  readonly pos: Float64Array;
  readonly basis: Float64Array;
  readonly mark: Float64Array;
  dayIndex = Number.NaN;
  realizedToday = 0;
  constructor(initialCash: number, n: number) {
    this.cash = initialCash;
    this.pos = new Float64Array(n);
    this.basis = new Float64Array(n);
    this.mark = new Float64Array(n).fill(Number.NaN);
  }
  equity(): number {
    let e = this.cash;
    for (let s = 0; s < this.pos.length; s++) {
      const p = this.pos[s] as number;
      if (p !== 0) e += p * (this.mark[s] as number);
    }
    return e;
  }
  gross(): number {
    let g = 0;
    for (let s = 0; s < this.pos.length; s++) {
      const p = this.pos[s] as number;
      if (p !== 0) g += Math.abs(p * (this.mark[s] as number));
    }
    return g;
  }
}

/** Run one strategy over the bars. */
export async function simulate(bars: BarSet, strategy: Strategy, cfg: EngineConfig): Promise<SimulationResult> {
  const n = bars.times.length;
  const nSym = bars.symbols.length;
  const symIndex = new Map(bars.symbols.map((s, i) => [s, i] as const));
  const book = new Book(cfg.initialCash, nSym);
  const equity = new Float64Array(n);
  const exposure = new Float64Array(n);
  const fills: Fill[] = [];
  const orders: OrderRecord[] = [];
  const rejected: RejectedOrder[] = [];
  const trades: Trade[] = [];
  const openTrades: (OpenTrade | undefined)[] = new Array(nSym).fill(undefined);
  const out = newFillOut();
  let pending: Pending[] = [];
  let nextId = 1;
  const portfolio: BacktestPortfolioView = {
    get cash() { return book.cash; },
    position: (symbol) => book.pos[symIndex.get(symbol) ?? -1] ?? 0,
    avgCost: (symbol) => {
      const s = symIndex.get(symbol);
      if (s === undefined) return 0;
      const p = book.pos[s] as number;
      return p > 0 ? (book.basis[s] as number) / p : 0;
    },
    get equity() { return book.equity(); },
    get feesUsd() { return book.fees; },
    get realizedPnlUsd() { return book.realized; },
  };
  const view = createView(bars, symIndex, portfolio);
  await strategy.init?.({ symbols: bars.symbols, initialCash: cfg.initialCash, intervalMs: bars.intervalMs, seed: cfg.seed, steps: n });

  const reject = (p: Pending, time: number, _s: number, qty: number, mark: number, rule: string, detail: string) => {
    rejected.push({ orderId: p.id, time, symbol: p.intent.symbol, side: p.intent.side, quantity: qty, notionalUsd: Number.isFinite(mark) ? qty * mark : 0, rule, detail });
    orders.push({ orderId: p.id, decidedAt: p.decidedAt, symbol: p.intent.symbol, side: p.intent.side, requestedQuantity: qty, filledQuantity: 0, status: 'rejected', reason: `${rule}: ${detail}` });
  };

  const execute = (p: Pending, i: number, atClose: boolean) => {
    const intent = p.intent;
    const time = atClose ? (bars.times[i] as number) + bars.intervalMs : (bars.times[i] as number);
    const s = symIndex.get(intent.symbol);
    if (s === undefined) return reject(p, time, -1, intent.quantity ?? 0, Number.NaN, 'invalid_order', `unknown symbol ${JSON.stringify(intent.symbol)}`);
    const mark = atClose ? ((bars.close[s] as Float64Array)[i] as number) : ((bars.open[s] as Float64Array)[i] as number);
    const vol = (bars.volume[s] as Float64Array)[i] as number;
    const wantQty = intent.quantity ?? (intent.notionalUsd !== undefined ? intent.notionalUsd / (Number.isFinite(mark) ? mark : p.decisionClose) : Number.NaN);
    if (!(wantQty > 0) || (intent.quantity !== undefined && intent.notionalUsd !== undefined)) return reject(p, time, s, 0, mark, 'invalid_order', 'give exactly one of quantity and notionalUsd, positive');
    if (!Number.isFinite(mark)) return reject(p, time, s, wantQty, mark, 'no_bar', `no ${intent.symbol} bar at ${new Date(time).toISOString()}`);
    let qty = wantQty;
    if (Number.isFinite(cfg.volumeCap)) {
      const cap = cfg.volumeCap * vol;
      if (!(cap > 0)) return reject(p, time, s, wantQty, mark, 'zero_volume', `the ${intent.symbol} bar traded no volume`);
      if (qty > cap) qty = cap;
    }
    const slip = cfg.slippage.kind === 'fixed' ? cfg.slippage.bps : vol > 0 ? (cfg.slippage.bpsPerVolumeShare * qty) / vol : cfg.slippage.bpsPerVolumeShare;
    const costs: FillCosts = { feeBps: cfg.feeBps, feeMinUsd: cfg.feeMinUsd, slippageBps: slip };
    const day = Math.floor(time / DAY_MS);
    if (day !== book.dayIndex) {
      book.dayIndex = day;
      book.realizedToday = 0;
    }
    const blocked = cfg.limits ? checkLimits(cfg.limits, book, s, intent, qty, mark, slip) : undefined;
    if (blocked) return reject(p, time, s, qty, mark, blocked.rule, blocked.detail);
    if (intent.side === 'buy') {
      const partial = qty < wantQty;
      const amountIn = intent.notionalUsd !== undefined && !partial ? intent.notionalUsd : cashForQuantity(qty, mark, costs);
      if (amountIn > book.cash + 1e-9) return reject(p, time, s, qty, mark, 'insufficient_cash', `need ${amountIn} USD, have ${book.cash}`);
      if (!buyWithCash(Math.min(amountIn, book.cash), mark, costs, out)) return reject(p, time, s, qty, mark, 'invalid_order', 'the fee is larger than the order');
    } else {
      const held = book.pos[s] as number;
      if (qty > held * (1 + 1e-9) + 1e-12) {
        if (intent.quantity !== undefined || held <= 0) return reject(p, time, s, qty, mark, 'insufficient_position', `sell ${qty} ${intent.symbol}, hold ${held}`);
        qty = held; // a sell by notional worth slightly more than the position closes it
      }
      sellQuantity(Math.min(qty, held), held, book.basis[s] as number, mark, costs, out);
    }
    applyFill(p, s, time, wantQty, slip);
  };

  const applyFill = (p: Pending, s: number, time: number, wantQty: number, slip: number) => {
    const side = p.intent.side;
    book.cash += out.cashDelta;
    if (Math.abs(book.cash) < 1e-9) book.cash = 0;
    const newPos = (book.pos[s] as number) + (side === 'buy' ? out.quantity : -out.quantity);
    book.pos[s] = Math.abs(newPos) < 1e-12 ? 0 : newPos;
    book.basis[s] = book.pos[s] === 0 ? 0 : (book.basis[s] as number) + out.basisDelta;
    book.fees += out.feeUsd;
    book.realized += out.realizedPnlUsd;
    book.realizedToday += out.realizedPnlUsd;
    const fill: Fill = { orderId: p.id, time, symbol: p.intent.symbol, side, quantity: out.quantity, price: out.price, notionalUsd: out.notionalUsd, feeUsd: out.feeUsd, slippageBps: slip, realizedPnlUsd: out.realizedPnlUsd };
    fills.push(fill);
    strategy.onFill?.(fill, p.intent);
    const full = side === 'buy' ? out.quantity >= wantQty * (1 - 1e-9) || p.intent.notionalUsd !== undefined : out.quantity >= wantQty * (1 - 1e-9);
    orders.push({ orderId: p.id, decidedAt: p.decidedAt, symbol: p.intent.symbol, side, requestedQuantity: wantQty, filledQuantity: out.quantity, status: full ? 'filled' : 'partial', reason: p.intent.reason ?? '' });
    trackTrade(s, time, side);
  };

  const trackTrade = (s: number, time: number, side: 'buy' | 'sell') => {
    let t = openTrades[s];
    if (!t) openTrades[s] = t = { entryTime: time, qty: 0, buyNotional: 0, sellNotional: 0, sellQty: 0, fees: 0, pnl: 0 };
    t.fees += out.feeUsd;
    t.pnl += out.realizedPnlUsd;
    if (side === 'buy') {
      t.qty += out.quantity;
      t.buyNotional += out.quantity * out.price;
    } else {
      t.sellQty += out.quantity;
      t.sellNotional += out.quantity * out.price;
    }
    if (book.pos[s] === 0) {
      const entryPrice = t.qty > 0 ? t.buyNotional / t.qty : 0;
      trades.push({ symbol: bars.symbols[s] as string, entryTime: t.entryTime, exitTime: time, quantity: t.qty, entryPrice, exitPrice: t.sellQty > 0 ? t.sellNotional / t.sellQty : 0, pnlUsd: t.pnl, feesUsd: t.fees, returnPct: t.buyNotional > 0 ? (t.pnl / t.buyNotional) * 100 : 0 });
      openTrades[s] = undefined;
    }
  };

  const place = (intents: readonly OrderIntent[], i: number) => {
    for (const intent of intents) {
      const s = symIndex.get(intent.symbol);
      const p: Pending = { id: nextId++, intent, decidedAt: (bars.times[i] as number) + bars.intervalMs, decisionClose: s === undefined ? Number.NaN : (book.mark[s] as number) };
      if (cfg.fill === 'same-close') execute(p, i, true);
      else pending.push(p);
    }
  };

  const every = cfg.progressEvery > 0 ? cfg.progressEvery : n + 1;
  for (let i = 0; i < n; i++) {
    if (pending.length > 0) {
      const batch = pending;
      pending = [];
      for (const p of batch) execute(p, i, false);
    }
    for (let s = 0; s < nSym; s++) {
      const c = (bars.close[s] as Float64Array)[i] as number;
      if (c === c) book.mark[s] = c;
    }
    view.setIndex(i);
    const decided = strategy.decide(view);
    const intents = isPromise(decided) ? await decided : decided;
    if (intents.length > 0) place(intents, i);
    equity[i] = book.equity();
    exposure[i] = book.gross();
    if ((i + 1) % every === 0) cfg.onProgress?.(i + 1, n);
  }
  for (const p of pending)
    orders.push({ orderId: p.id, decidedAt: p.decidedAt, symbol: p.intent.symbol, side: p.intent.side, requestedQuantity: p.intent.quantity ?? 0, filledQuantity: 0, status: 'unfilled', reason: 'decided on the last bar: no next bar to fill at' });
  await strategy.finish?.();
  cfg.onProgress?.(n, n);
  return { equity, exposure, fills, orders, rejected, trades, feesUsd: book.fees };
}

/** The live gate's limits on one order, at fill-time marks. Returns the rule that blocks it, if any. */
function checkLimits(l: FinanceLimits, book: Book, s: number, intent: OrderIntent, qty: number, mark: number, slip: number): { rule: string; detail: string } | undefined {
  const notional = qty * mark;
  const sym = intent.symbol.toLowerCase();
  if (l.denyList.some((d) => d.toLowerCase() === sym)) return { rule: 'denyList', detail: `${intent.symbol} is on the deny list` };
  if (notional > l.maxTradeUsd + 1e-6) return { rule: 'maxTradeUsd', detail: `${notional.toFixed(2)} USD is above the per-trade limit of ${l.maxTradeUsd} USD` };
  if (slip > l.maxSlippageBps + 1e-9) return { rule: 'maxSlippageBps', detail: `slippage ${slip.toFixed(2)} bps is above the ${l.maxSlippageBps} bps limit` };
  if (intent.side === 'sell') return undefined;
  if (book.realizedToday <= -l.maxDailyLossUsd) return { rule: 'maxDailyLossUsd', detail: `today's realised loss ${(-book.realizedToday).toFixed(2)} USD has reached the daily limit of ${l.maxDailyLossUsd} USD` };
  const prevMark = book.mark[s] as number;
  book.mark[s] = mark;
  const equity = book.equity();
  const exposureAfter = book.gross() + notional;
  book.mark[s] = prevMark;
  if (exposureAfter > l.maxTotalExposureUsd + 1e-6) return { rule: 'maxTotalExposureUsd', detail: `total exposure would be ${exposureAfter.toFixed(2)} USD, above the ${l.maxTotalExposureUsd} USD limit` };
  const assetPct = equity > 0 ? (((book.pos[s] as number) * mark + notional) / equity) * 100 : 100;
  if (assetPct > l.maxAssetConcentrationPct + 1e-6) return { rule: 'maxAssetConcentrationPct', detail: `${intent.symbol} would be ${assetPct.toFixed(2)}% of the portfolio, above the ${l.maxAssetConcentrationPct}% limit` };
  return undefined;
}

/** Resolve engine limits: absent → none; given → merged over the finance pack's defaults (as live). */
export function resolveLimits(limits: Partial<FinanceLimits> | undefined): FinanceLimits | undefined {
  if (!limits) return undefined;
  return { ...DEFAULT_FINANCE_LIMITS, ...parseFinanceLimits(limits) };
}
