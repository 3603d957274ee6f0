/**
 * The paper provider's perp sub-accounts: books `<accountId>:<name>` beside the main account, listed with their
 * value, and swept into the main account in two legs (out of the sub-account, into the main one).
 */
import { MinaraError } from '../errors/minara-error';
import { planTransferOut } from './paper-accounting';
import { applyOrder, ensurePaperAccount, orderResult, PAPER, type PaperState, previousOrder, priceOf, subId, up } from './paper-provider-state';
import type { OrderResult, PerpSubAccount, PerpSweepQuote, PerpSweepRequest } from './types';

/** The main account and each sub-account (created with its seed balances when new), with balances and value. */
export async function listPerpSubAccounts(s: PaperState): Promise<PerpSubAccount[]> {
  await ensurePaperAccount(s);
  const out: PerpSubAccount[] = [];
  for (const [id, book] of [[s.accountId, s.accountId], ...Object.keys(s.subAccounts).map((n) => [n, subId(s, n)])] as Array<[string, string]>) {
    if (book !== s.accountId) await s.trading.ensureAccount({ accountId: book, baseCurrency: s.baseCurrency, initialBalances: s.subAccounts[id]!, now: s.now().toISOString() });
    const balances = await s.trading.listBalances(book);
    let valueUsd = 0;
    for (const b of balances) valueUsd += b.amount * (await priceOf(s, b.asset));
    out.push({ id, ...(book === s.accountId ? { main: true } : {}), balances: Object.fromEntries(balances.map((b) => [b.asset, b.amount])), valueUsd });
  }
  return out;
}

/** Quote sweeping an asset (all of it unless an amount is given) from a sub-account into the main account. */
export async function quotePerpSweep(s: PaperState, req: PerpSweepRequest): Promise<PerpSweepQuote> {
  const name = req.subAccountId;
  if (!(name in s.subAccounts)) throw new MinaraError('INVALID_ARGUMENT', `subAccountId: no sub-account "${name}" (sub-accounts: ${Object.keys(s.subAccounts).join(', ') || 'none'})`);
  await s.trading.ensureAccount({ accountId: subId(s, name), baseCurrency: s.baseCurrency, initialBalances: s.subAccounts[name]!, now: s.now().toISOString() });
  const asset = up(req.asset);
  const held = (await s.trading.listBalances(subId(s, name))).find((b) => b.asset === asset)?.amount ?? 0;
  const amount = req.amount ?? held;
  if (!(amount > 0)) throw new MinaraError('INVALID_ARGUMENT', `${name} holds no ${asset} to sweep.`);
  if (amount > held + 1e-9) throw new MinaraError('INVALID_ARGUMENT', `${name} holds ${held} ${asset}; cannot sweep ${amount}.`);
  return { ...PAPER, subAccountId: name, asset, amount, valueUsd: amount * (await priceOf(s, asset)), to: s.accountId, feeUsd: 0, at: s.now().toISOString() };
}

/** Sweep a sub-account into the main account: a transfer out of the sub-account, then a deposit carrying its cost. */
export async function sweepPerpSubAccount(s: PaperState, req: PerpSweepRequest & { readonly clientOrderId: string }): Promise<OrderResult> {
  const dup = await previousOrder(s, req.clientOrderId);
  if (dup) return dup;
  const q = await quotePerpSweep(s, req).catch(async (error: unknown) => {
    // A sweep whose first leg already ran (a retry after a crash) finds the sub-account empty: finish it from that leg.
    const out = await s.trading.getFill(subId(s, req.subAccountId), `${req.clientOrderId}:out`);
    if (!out) throw error;
    return { ...PAPER, subAccountId: req.subAccountId, asset: out.symbol, amount: out.quantity, valueUsd: out.notionalUsd, to: s.accountId, feeUsd: 0, at: out.at };
  });
  const at = s.now().toISOString();
  const mark = q.amount > 0 ? q.valueUsd / q.amount : 1;
  const out = await s.trading.applyFill(subId(s, q.subAccountId), `${req.clientOrderId}:out`, (st) =>
    planTransferOut(st, { asset: q.asset, amount: q.amount, to: s.accountId, kind: 'transfer', at, markUsd: mark }),
  );
  if (out.status === 'rejected') throw new MinaraError('INVALID_ARGUMENT', `Sweep rejected: ${out.reason}.`);
  const moved = out.fill.quantity;
  const cost = -out.fill.contributionUsd;
  return orderResult(
    await applyOrder(s, req.clientOrderId, () => ({
      fill: { kind: 'deposit', symbol: q.asset, side: 'in', quantity: moved, price: mark, notionalUsd: moved * mark, feeUsd: 0, realizedPnlUsd: 0, contributionUsd: cost, at, details: { from: subId(s, q.subAccountId), sweep: true } },
      balances: [{ asset: q.asset, amount: moved, costBasisUsd: cost }],
    })),
  );
}
