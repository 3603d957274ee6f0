/**
 * The trade-history mirror's row normalisation: a Hyperliquid-style fill or a spot activity as the row the
 * mirror stores. The same `oid` appears on every partial fill of an order, so fills are keyed by a fill-level
 * uid: the trade id (`tid`) when present, else the transaction `hash`, else a sha1 of the canonical raw JSON.
 */
import { createHash } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import type { HistoryPerpFill, HistorySpotActivity } from '../finance/types';
import type { NewExternalSpotActivity, NewPerpsFill } from '../storage/learning-types';
import { canonicalJson } from '../util/canonical-json';

const num = (v: unknown, field: string): number => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new MinaraError('PROVIDER_ERROR', `history fill: ${field} must be a finite number, got ${JSON.stringify(v)}`);
  return n;
};

/** The fill-level dedup key: `tid:<tid>`, else `hash:<hash>`, else `sha1:<sha1 of the canonical JSON>`. */
export function fillUid(raw: HistoryPerpFill): string {
  if (raw.tid !== undefined && raw.tid !== null && String(raw.tid) !== '') return `tid:${String(raw.tid)}`;
  if (typeof raw.hash === 'string' && raw.hash !== '' && !/^0x0+$/u.test(raw.hash)) return `hash:${raw.hash}`;
  return `sha1:${createHash('sha1').update(canonicalJson(raw)).digest('hex')}`;
}

/** A provider fill as a `perps_fills` row; a malformed number is `PROVIDER_ERROR` naming the field. */
export function normalizePerpsFill(raw: HistoryPerpFill, subAccount: { readonly id: string; readonly walletAddress?: string | undefined }, now: string): NewPerpsFill {
  const side = raw.side === 'B' || raw.side.toLowerCase() === 'buy' ? 'buy' : raw.side === 'A' || raw.side.toLowerCase() === 'sell' ? 'sell' : raw.side;
  return {
    subAccountId: subAccount.id, ...(subAccount.walletAddress ? { walletAddress: subAccount.walletAddress } : {}), oid: String(raw.oid), tsMs: Math.trunc(num(raw.time, 'time')),
    symbol: raw.coin.toUpperCase(), side, ...(raw.dir ? { dir: raw.dir } : {}), size: num(raw.sz, 'sz'), price: num(raw.px, 'px'),
    fee: raw.fee === undefined ? 0 : num(raw.fee, 'fee'), closedPnl: raw.closedPnl === undefined ? 0 : num(raw.closedPnl, 'closedPnl'),
    rawJson: canonicalJson(raw), fillUid: fillUid(raw), now,
  };
}

/** A provider spot activity as an `external_spot_activities` row. */
export function normalizeSpotActivity(raw: HistorySpotActivity, now: string): NewExternalSpotActivity {
  return {
    txHash: raw.txHash, tsMs: Math.trunc(num(raw.time, 'time')), type: raw.type, status: raw.status, ...(raw.fromToken ? { fromToken: raw.fromToken } : {}),
    ...(raw.toToken ? { toToken: raw.toToken } : {}), ...(raw.amount !== undefined ? { amount: raw.amount } : {}), ...(raw.valueUsd !== undefined ? { valueUsd: raw.valueUsd } : {}),
    rawJson: canonicalJson(raw), now,
  };
}
