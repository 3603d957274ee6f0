import { MinaraError } from '../errors/minara-error';
import type { ApplyFillResult, TradingAccountState, TradingPlanFn, TradingStorage } from '../storage/trading-types';
import {
  DEFAULT_PAPER_COSTS, impactBps, isStableLike, liquidationPrice, type PaperCosts, perpUnrealized, planPerpClose, planPerpOpen, planSpot, planTransferOut,
} from './paper-accounting';
import type {
  AccountInfo, MarketDataProvider, OrderResult, PerpPositionView, PerpQuote, PerpSubAccount, PerpSweepQuote, PnlReport, Portfolio, SpotQuote, TradingProvider, TransferQuote,
} from './types';

/** Options of {@link createPaperTradingProvider}. */
export interface PaperTradingOptions {
  /** Where the books live (`storage.trading`). */
  readonly trading: TradingStorage;
  /** Prices every fill and mark. */
  readonly market: MarketDataProvider;
  /** Paper account id. @default 'paper' */
  readonly accountId?: string | undefined;
  /** Opening balances of a new account. @default { USDC: 10000 } */
  readonly seedBalances?: Readonly<Record<string, number>> | undefined;
  /** @default 'USDC' */
  readonly baseCurrency?: string | undefined;
  /** Fees and spread. @default DEFAULT_PAPER_COSTS */
  readonly costs?: Partial<PaperCosts> | undefined;
  /** Depth used by the impact model for a symbol. @default the simulated universe's, else 5,000,000 */
  readonly liquidityUsd?: ((symbol: string) => number) | undefined;
  /** Default slippage cap of an order that gives none. @default 100 */
  readonly defaultMaxSlippageBps?: number | undefined;
  /**
   * Perp sub-accounts beside the main account, by name, with their opening balances (kept as accounts
   * `<accountId>:<name>` in the same books). @default { 'perps-1': { USDC: 500 } }
   */
  readonly perpSubAccounts?: Readonly<Record<string, Readonly<Record<string, number>>>> | undefined;
  readonly now?: (() => Date) | undefined;
}

/** The paper provider plus accounting access for tests and the exposure hook. */
export interface PaperTradingProvider extends TradingProvider {
  readonly simulated: true;
  readonly accountId: string;
  /** Create the account with its seed balances if it does not exist. */
  ensureAccount(): Promise<void>;
}

/**
 * The embedded paper-trading provider. Its state (balances, positions, fills, realised P&L) lives in the
 * `trading` storage domain, so it survives restarts and is shared by processes on one database; prices
 * come from the market (the simulated feed by default) and every result says `simulated: true`.
 * Orders are idempotent by client order id.
 */
export function createPaperTradingProvider(options: PaperTradingOptions): PaperTradingProvider {
  const {
    trading, market, accountId = 'paper', seedBalances = { USDC: 10_000 }, baseCurrency = 'USDC', defaultMaxSlippageBps = 100, now = () => new Date(),
  } = options;
  const costs: PaperCosts = { ...DEFAULT_PAPER_COSTS, ...options.costs };
  const simTokens = (market as { token?: (s: string) => { liquidityUsd: number } | undefined }).token;
  const liquidity = options.liquidityUsd ?? ((s: string) => simTokens?.(s)?.liquidityUsd ?? 5_000_000);
  const prov = { source: 'paper', simulated: true } as const;
  let ensured: Promise<void> | undefined;
  const subAccounts = options.perpSubAccounts ?? { 'perps-1': { USDC: 500 } };
  const subId = (name: string) => `${accountId}:${name}`;

  const ensureAccount = () =>
    (ensured ??= trading.ensureAccount({ accountId, baseCurrency, initialBalances: seedBalances, now: now().toISOString() }).then(
      () => undefined,
      (e: unknown) => {
        ensured = undefined;
        throw e;
      },
    ));

  const up = (s: string) => s.trim().toUpperCase();
  const priceOf = async (symbol: string, signal?: AbortSignal) => {
    if (up(symbol) === baseCurrency || isStableLike(symbol)) return 1;
    const q = await market.getPrice(up(symbol), signal ? { signal } : {});
    if (!(Number.isFinite(q.priceUsd) && q.priceUsd > 0)) throw new MinaraError('PROVIDER_ERROR', `No valid price for ${symbol}.`);
    return q.priceUsd;
  };
  const perpMark = async (symbol: string) => {
    const q = market.getPerpMark ? await market.getPerpMark(up(symbol)) : await market.getPrice(up(symbol));
    if (!(Number.isFinite(q.priceUsd) && q.priceUsd > 0)) throw new MinaraError('PROVIDER_ERROR', `No valid perp mark for ${symbol}.`);
    return q.priceUsd;
  };
  const apply = async (id: string, plan: TradingPlanFn): Promise<ApplyFillResult> => {
    await ensureAccount();
    return trading.applyFill(accountId, id, plan);
  };
  /** A client order id already filled: answer with the original fill (no re-pricing, no second fill). */
  const previous = async (id: string): Promise<OrderResult | undefined> => {
    await ensureAccount();
    const f = await trading.getFill(accountId, id);
    return f ? result({ status: 'duplicate', fill: f }) : undefined;
  };
  const result = (r: ApplyFillResult): OrderResult => {
    if (r.status === 'rejected') throw new MinaraError('INVALID_ARGUMENT', `Order rejected: ${r.reason}.`);
    const f = r.fill;
    return {
      ...prov, orderId: f.id, status: r.status === 'applied' ? 'filled' : 'duplicate', at: f.at,
      fill: { symbol: f.symbol, side: f.side, quantity: f.quantity, price: f.price, notionalUsd: f.notionalUsd, feeUsd: f.feeUsd, realizedPnlUsd: f.realizedPnlUsd },
    };
  };

  async function quoteSpot(order: Parameters<TradingProvider['quoteSpot']>[0]): Promise<SpotQuote> {
    const from = up(order.from);
    const to = up(order.to);
    if (from === to) throw new MinaraError('INVALID_ARGUMENT', 'from and to must differ.');
    const [priceIn, priceOut] = await Promise.all([priceOf(from), priceOf(to)]);
    const amountIn = order.amount ?? (order.amountUsd !== undefined ? order.amountUsd / priceIn : Number.NaN);
    if (!(amountIn > 0)) throw new MinaraError('INVALID_ARGUMENT', 'Give a positive amount or amountUsd.');
    const amountInUsd = amountIn * priceIn;
    const depth = Math.min(isStableLike(from) ? Infinity : liquidity(from), isStableLike(to) ? Infinity : liquidity(to));
    const slippageBps = impactBps(amountInUsd, Number.isFinite(depth) ? depth : 500_000_000, costs);
    const feeUsd = (amountInUsd * costs.spotFeeBps) / 10_000;
    const net = amountInUsd - feeUsd;
    const cap = order.maxSlippageBps ?? defaultMaxSlippageBps;
    return {
      ...prov, route: `${from} → ${to} (paper)`, from, to, amountIn, amountInUsd, priceIn, priceOut, feeUsd, slippageBps,
      expectedAmountOut: (net * (1 - slippageBps / 10_000)) / priceOut, minAmountOut: (net * (1 - cap / 10_000)) / priceOut, at: now().toISOString(),
    };
  }

  async function quotePerpOpen(req: Parameters<TradingProvider['quotePerpOpen']>[0]): Promise<PerpQuote> {
    const symbol = up(req.symbol);
    const mark = await perpMark(symbol);
    const slippageBps = impactBps(req.sizeUsd, liquidity(symbol), costs);
    const dir = req.side === 'long' ? 1 : -1;
    const fill = mark * (1 + (dir * slippageBps) / 10_000);
    return {
      ...prov, symbol, side: req.side, action: 'open', sizeUsd: req.sizeUsd, size: req.sizeUsd / fill, markPrice: mark, expectedFillPrice: fill,
      leverage: req.leverage, marginUsd: req.sizeUsd / req.leverage, feeUsd: (req.sizeUsd * costs.perpFeeBps) / 10_000, slippageBps,
      liquidationPrice: liquidationPrice(req.side, fill, req.leverage), at: now().toISOString(),
    };
  }

  async function state(): Promise<TradingAccountState> {
    await ensureAccount();
    const [account, balances, positions] = await Promise.all([trading.getAccount(accountId), trading.listBalances(accountId), trading.listPositions(accountId)]);
    if (!account) throw new MinaraError('NOT_FOUND', `Paper account "${accountId}" does not exist.`);
    return { account, balances, positions };
  }

  async function positionViews(s?: TradingAccountState): Promise<PerpPositionView[]> {
    const st = s ?? (await state());
    return Promise.all(
      st.positions.map(async (p) => {
        const mark = await perpMark(p.symbol);
        return {
          symbol: p.symbol, side: p.side, size: p.size, entryPrice: p.entryPrice, markPrice: mark, notionalUsd: p.size * mark, marginUsd: p.marginUsd,
          leverage: p.leverage, unrealizedPnlUsd: perpUnrealized(p, mark), liquidationPrice: liquidationPrice(p.side, p.entryPrice, p.leverage),
        };
      }),
    );
  }

  async function getPortfolio(): Promise<Portfolio> {
    const s = await state();
    const holdings = await Promise.all(
      s.balances.map(async (b) => {
        const price = await priceOf(b.asset);
        const valueUsd = b.amount * price;
        return { asset: b.asset, amount: b.amount, priceUsd: price, valueUsd, costBasisUsd: b.costBasisUsd, unrealizedPnlUsd: valueUsd - b.costBasisUsd, stable: isStableLike(b.asset) || b.asset === baseCurrency };
      }),
    );
    const positions = await positionViews(s);
    const totalValueUsd = holdings.reduce((a, h) => a + h.valueUsd, 0) + positions.reduce((a, p) => a + p.marginUsd + p.unrealizedPnlUsd, 0);
    const exposureUsd = holdings.filter((h) => !h.stable).reduce((a, h) => a + h.valueUsd, 0) + positions.reduce((a, p) => a + p.notionalUsd, 0);
    return { ...prov, accountId, holdings, positions, totalValueUsd, exposureUsd, at: now().toISOString() };
  }

  /** Fills of kinds at or after `sinceMs`, oldest first (the history mirror reads the paper books like an exchange's). */
  const fillsSince = async (kinds: readonly string[], sinceMs: number | undefined) => {
    await ensureAccount();
    const since = sinceMs === undefined ? undefined : new Date(sinceMs).toISOString();
    const fills = await trading.listFills(accountId, { limit: 10_000, ...(since ? { since } : {}) });
    return fills.filter((f) => kinds.includes(f.kind)).reverse();
  };

  return {
    name: 'paper',
    simulated: true,
    accountId,
    ensureAccount,
    async listPerpSubAccounts(): Promise<PerpSubAccount[]> {
      await ensureAccount();
      const out: PerpSubAccount[] = [];
      for (const [id, book] of [[accountId, accountId], ...Object.keys(subAccounts).map((n) => [n, subId(n)])] as Array<[string, string]>) {
        if (book !== accountId) await trading.ensureAccount({ accountId: book, baseCurrency, initialBalances: subAccounts[id]!, now: now().toISOString() });
        const balances = await trading.listBalances(book);
        let valueUsd = 0;
        for (const b of balances) valueUsd += b.amount * (await priceOf(b.asset));
        out.push({ id, ...(book === accountId ? { main: true } : {}), balances: Object.fromEntries(balances.map((b) => [b.asset, b.amount])), valueUsd });
      }
      return out;
    },
    async quotePerpSweep(req): Promise<PerpSweepQuote> {
      const name = req.subAccountId;
      if (!(name in subAccounts)) throw new MinaraError('INVALID_ARGUMENT', `subAccountId: no sub-account "${name}" (sub-accounts: ${Object.keys(subAccounts).join(', ') || 'none'})`);
      await trading.ensureAccount({ accountId: subId(name), baseCurrency, initialBalances: subAccounts[name]!, now: now().toISOString() });
      const asset = up(req.asset);
      const held = (await trading.listBalances(subId(name))).find((b) => b.asset === asset)?.amount ?? 0;
      const amount = req.amount ?? held;
      if (!(amount > 0)) throw new MinaraError('INVALID_ARGUMENT', `${name} holds no ${asset} to sweep.`);
      if (amount > held + 1e-9) throw new MinaraError('INVALID_ARGUMENT', `${name} holds ${held} ${asset}; cannot sweep ${amount}.`);
      return { ...prov, subAccountId: name, asset, amount, valueUsd: amount * (await priceOf(asset)), to: accountId, feeUsd: 0, at: now().toISOString() };
    },
    async sweepPerpSubAccount(req) {
      const dup = await previous(req.clientOrderId);
      if (dup) return dup;
      const q = await this.quotePerpSweep!(req).catch(async (error: unknown) => {
        // A sweep whose first leg already ran (a retry after a crash) finds the sub-account empty: finish it from that leg.
        const out = await trading.getFill(subId(req.subAccountId), `${req.clientOrderId}:out`);
        if (!out) throw error;
        return { ...prov, subAccountId: req.subAccountId, asset: out.symbol, amount: out.quantity, valueUsd: out.notionalUsd, to: accountId, feeUsd: 0, at: out.at };
      });
      const at = now().toISOString();
      const mark = q.amount > 0 ? q.valueUsd / q.amount : 1;
      const out = await trading.applyFill(subId(q.subAccountId), `${req.clientOrderId}:out`, (s) => planTransferOut(s, { asset: q.asset, amount: q.amount, to: accountId, kind: 'transfer', at, markUsd: mark }));
      if (out.status === 'rejected') throw new MinaraError('INVALID_ARGUMENT', `Sweep rejected: ${out.reason}.`);
      const moved = out.fill.quantity;
      const cost = -out.fill.contributionUsd;
      return result(
        await apply(req.clientOrderId, () => ({
          fill: { kind: 'deposit', symbol: q.asset, side: 'in', quantity: moved, price: mark, notionalUsd: moved * mark, feeUsd: 0, realizedPnlUsd: 0, contributionUsd: cost, at, details: { from: subId(q.subAccountId), sweep: true } },
          balances: [{ asset: q.asset, amount: moved, costBasisUsd: cost }],
        })),
      );
    },
    async listPerpFills(q) {
      if (q.subAccountId !== accountId) return [];
      // An open fill's side is the position's (long/short); a close fill's is the trade's (sell closes a long).
      return (await fillsSince(['perp_open', 'perp_close'], q.sinceMs)).map((f) => {
        const open = f.kind === 'perp_open';
        const buys = open ? f.side === 'long' : f.side === 'buy';
        const long = open ? f.side === 'long' : f.side === 'sell';
        return {
          coin: f.symbol, px: f.price, sz: f.quantity, side: buys ? 'B' : 'A', time: Date.parse(f.at), oid: f.id, tid: f.id,
          dir: `${open ? 'Open' : 'Close'} ${long ? 'Long' : 'Short'}`, closedPnl: open ? 0 : f.realizedPnlUsd + f.feeUsd, fee: f.feeUsd,
        };
      });
    },
    async listSpotActivity(q) {
      return (await fillsSince(['spot', 'transfer_out'], q.sinceMs)).map((f) => {
        const d = (f.details ?? {}) as { from?: unknown; to?: unknown; amountIn?: unknown };
        return {
          txHash: `paper:${f.id}`, time: Date.parse(f.at), type: f.kind === 'spot' ? 'swap' : 'transfer', status: 'filled', valueUsd: f.notionalUsd,
          ...(typeof d.from === 'string' ? { fromToken: d.from } : f.kind === 'transfer_out' ? { fromToken: f.symbol } : {}),
          ...(typeof d.to === 'string' ? { toToken: d.to } : {}),
          amount: String(typeof d.amountIn === 'number' ? d.amountIn : f.quantity),
        };
      });
    },
    async getAccount(): Promise<AccountInfo> {
      const s = await state();
      return { ...prov, accountId, baseCurrency: s.account.baseCurrency, createdAt: s.account.createdAt };
    },
    getPortfolio,
    async getPnl(): Promise<PnlReport> {
      const p = await getPortfolio();
      const [totals, today, byDay] = await Promise.all([
        trading.totals(accountId), trading.dailyPnl(accountId, now().toISOString().slice(0, 10)), trading.listDailyPnl(accountId, { limit: 30 }),
      ]);
      const unrealizedUsd = p.holdings.reduce((a, h) => a + h.unrealizedPnlUsd, 0) + p.positions.reduce((a, x) => a + x.unrealizedPnlUsd, 0);
      return {
        ...prov, accountId, realizedUsd: totals.realizedUsd, realizedTodayUsd: today, unrealizedUsd, netContributionsUsd: totals.contributionsUsd,
        totalValueUsd: p.totalValueUsd, byDay: byDay.map((d) => ({ day: d.day, realizedUsd: d.realizedUsd })), at: now().toISOString(),
      };
    },
    quoteSpot,
    async executeSpot(order) {
      const dup = await previous(order.clientOrderId);
      if (dup) return dup;
      const q = await quoteSpot(order);
      const cap = order.maxSlippageBps ?? defaultMaxSlippageBps;
      if (q.slippageBps > cap) throw new MinaraError('INVALID_ARGUMENT', `Expected slippage ${q.slippageBps} bps exceeds the ${cap} bps cap.`);
      const at = now().toISOString();
      return result(await apply(order.clientOrderId, (s) => planSpot(s, { ...q, amountIn: q.amountIn, at, baseCurrency })));
    },
    async quoteTransfer(req): Promise<TransferQuote> {
      const price = await priceOf(req.asset);
      return { ...prov, asset: up(req.asset), amount: req.amount, valueUsd: req.amount * price, to: req.to, feeUsd: 0, kind: req.kind, at: now().toISOString() };
    },
    async executeTransfer(req) {
      const dup = await previous(req.clientOrderId);
      if (dup) return dup;
      const mark = await priceOf(req.asset);
      const at = now().toISOString();
      return result(await apply(req.clientOrderId, (s) => planTransferOut(s, { asset: up(req.asset), amount: req.amount, to: req.to, kind: req.kind, at, markUsd: mark })));
    },
    getPerpPositions: () => positionViews(),
    quotePerpOpen,
    async openPerp(req) {
      const dup = await previous(req.clientOrderId);
      if (dup) return dup;
      const q = await quotePerpOpen(req);
      const cap = req.maxSlippageBps ?? defaultMaxSlippageBps;
      if (q.slippageBps > cap) throw new MinaraError('INVALID_ARGUMENT', `Expected slippage ${q.slippageBps} bps exceeds the ${cap} bps cap.`);
      const at = now().toISOString();
      return result(await apply(req.clientOrderId, (s) => planPerpOpen(s, { symbol: q.symbol, side: req.side, sizeUsd: req.sizeUsd, leverage: req.leverage, mark: q.markPrice, slippageBps: q.slippageBps, costs, at, baseCurrency })));
    },
    async quotePerpClose(req): Promise<PerpQuote> {
      const symbol = up(req.symbol);
      const s = await state();
      const p = s.positions.find((x) => x.symbol === symbol);
      if (!p) throw new MinaraError('NOT_FOUND', `No open ${symbol} perp position.`);
      const fraction = req.fraction ?? 1;
      const mark = await perpMark(symbol);
      const size = p.size * fraction;
      const slippageBps = impactBps(size * mark, liquidity(symbol), costs);
      const dir = p.side === 'long' ? 1 : -1;
      const fill = mark * (1 - (dir * slippageBps) / 10_000);
      const feeUsd = (size * fill * costs.perpFeeBps) / 10_000;
      return {
        ...prov, symbol, side: p.side, action: 'close', sizeUsd: size * fill, size, markPrice: mark, expectedFillPrice: fill, leverage: p.leverage,
        marginUsd: p.marginUsd * fraction, feeUsd, slippageBps, expectedPnlUsd: size * (fill - p.entryPrice) * dir - feeUsd, at: now().toISOString(),
      };
    },
    async closePerp(req) {
      const dup = await previous(req.clientOrderId);
      if (dup) return dup;
      const symbol = up(req.symbol);
      const mark = await perpMark(symbol);
      const at = now().toISOString();
      return result(
        await apply(req.clientOrderId, (s) => {
          const p = s.positions.find((x) => x.symbol === symbol);
          const slippageBps = p ? impactBps(p.size * (req.fraction ?? 1) * mark, liquidity(symbol), costs) : 0;
          return planPerpClose(s, { symbol, fraction: req.fraction ?? 1, mark, slippageBps, costs, at, baseCurrency });
        }),
      );
    },
  };
}
