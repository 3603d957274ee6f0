/**
 * What the paper provider reports: the account, the portfolio at current marks, P&L, open perp positions, and the
 * books read the way the history mirror reads an exchange's (perp fills, spot activity).
 */
import type { TradingAccountState } from '../storage/trading-types';
import { isStableLike, liquidationPrice, perpUnrealized } from './paper-accounting';
import { accountState, fillsSince, PAPER, type PaperState, perpMark, priceOf } from './paper-provider-state';
import type { AccountInfo, HistoryPerpFill, HistorySpotActivity, PerpPositionView, PnlReport, Portfolio } from './types';

/** The account's creation facts. */
export async function getAccount(s: PaperState): Promise<AccountInfo> {
  const st = await accountState(s);
  return { ...PAPER, accountId: s.accountId, baseCurrency: st.account.baseCurrency, createdAt: st.account.createdAt };
}

/** Open perp positions at current marks. */
export async function positionViews(s: PaperState, st?: TradingAccountState): Promise<PerpPositionView[]> {
  const state = st ?? (await accountState(s));
  return Promise.all(
    state.positions.map(async (p) => {
      const mark = await perpMark(s, p.symbol);
      return {
        symbol: p.symbol, side: p.side, size: p.size, entryPrice: p.entryPrice, markPrice: mark, notionalUsd: p.size * mark, marginUsd: p.marginUsd,
        leverage: p.leverage, unrealizedPnlUsd: perpUnrealized(p, mark), liquidationPrice: liquidationPrice(p.side, p.entryPrice, p.leverage),
      };
    }),
  );
}

/** Holdings and positions at current marks, with the account's total value and exposure. */
export async function getPortfolio(s: PaperState): Promise<Portfolio> {
  const st = await accountState(s);
  const holdings = await Promise.all(
    st.balances.map(async (b) => {
      const price = await priceOf(s, b.asset);
      const valueUsd = b.amount * price;
      return { asset: b.asset, amount: b.amount, priceUsd: price, valueUsd, costBasisUsd: b.costBasisUsd, unrealizedPnlUsd: valueUsd - b.costBasisUsd, stable: isStableLike(b.asset) || b.asset === s.baseCurrency };
    }),
  );
  const positions = await positionViews(s, st);
  const totalValueUsd = holdings.reduce((a, h) => a + h.valueUsd, 0) + positions.reduce((a, p) => a + p.marginUsd + p.unrealizedPnlUsd, 0);
  const exposureUsd = holdings.filter((h) => !h.stable).reduce((a, h) => a + h.valueUsd, 0) + positions.reduce((a, p) => a + p.notionalUsd, 0);
  return { ...PAPER, accountId: s.accountId, holdings, positions, totalValueUsd, exposureUsd, at: s.now().toISOString() };
}

/** Realised (total, today, by day) and unrealised P&L. */
export async function getPnl(s: PaperState): Promise<PnlReport> {
  const p = await getPortfolio(s);
  const [totals, today, byDay] = await Promise.all([
    s.trading.totals(s.accountId), s.trading.dailyPnl(s.accountId, s.now().toISOString().slice(0, 10)), s.trading.listDailyPnl(s.accountId, { limit: 30 }),
  ]);
  const unrealizedUsd = p.holdings.reduce((a, h) => a + h.unrealizedPnlUsd, 0) + p.positions.reduce((a, x) => a + x.unrealizedPnlUsd, 0);
  return {
    ...PAPER, accountId: s.accountId, realizedUsd: totals.realizedUsd, realizedTodayUsd: today, unrealizedUsd, netContributionsUsd: totals.contributionsUsd,
    totalValueUsd: p.totalValueUsd, byDay: byDay.map((d) => ({ day: d.day, realizedUsd: d.realizedUsd })), at: s.now().toISOString(),
  };
}

/** The main account's perp fills as an exchange reports them (only the main account has perp fills on paper). */
export async function listPerpFills(s: PaperState, q: { readonly subAccountId: string; readonly sinceMs?: number | undefined }): Promise<HistoryPerpFill[]> {
  if (q.subAccountId !== s.accountId) return [];
  // An open fill's side is the position's (long/short); a close fill's is the trade's (sell closes a long).
  return (await fillsSince(s, ['perp_open', 'perp_close'], q.sinceMs)).map((f) => {
    const open = f.kind === 'perp_open';
    const buys = open ? f.side === 'long' : f.side === 'buy';
    const long = open ? f.side === 'long' : f.side === 'sell';
    return {
      coin: f.symbol, px: f.price, sz: f.quantity, side: buys ? 'B' : 'A', time: Date.parse(f.at), oid: f.id, tid: f.id,
      dir: `${open ? 'Open' : 'Close'} ${long ? 'Long' : 'Short'}`, closedPnl: open ? 0 : f.realizedPnlUsd + f.feeUsd, fee: f.feeUsd,
    };
  });
}

/** Spot swaps and transfers out as an exchange's activity feed reports them. */
export async function listSpotActivity(s: PaperState, q: { readonly sinceMs?: number | undefined }): Promise<HistorySpotActivity[]> {
  return (await fillsSince(s, ['spot', 'transfer_out'], q.sinceMs)).map((f) => {
    const d = (f.details ?? {}) as { from?: unknown; to?: unknown; amountIn?: unknown };
    return {
      txHash: `paper:${f.id}`, time: Date.parse(f.at), type: f.kind === 'spot' ? 'swap' : 'transfer', status: 'filled', valueUsd: f.notionalUsd,
      ...(typeof d.from === 'string' ? { fromToken: d.from } : f.kind === 'transfer_out' ? { fromToken: f.symbol } : {}),
      ...(typeof d.to === 'string' ? { toToken: d.to } : {}),
      amount: String(typeof d.amountIn === 'number' ? d.amountIn : f.quantity),
    };
  });
}
