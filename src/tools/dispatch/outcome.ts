import { redactSecrets } from '../../safety/secret-patterns';
import type { AuditFill, AuditOutcome } from '../../storage/audit-types';
import type { AuditDecision } from '../../storage/types';
import type { ToolEnvelope } from '../envelope';
import type { ToolOrderFacts } from '../types';

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
/** The shortest string a secret pattern can match (a Slack token): shorter strings skip the patterns. */
const SHORTEST_SECRET = 15;
/** A non-empty string, cut to `max` and with secret-looking parts redacted as in the arguments. */
const text = (v: unknown, max = 200): string | undefined => {
  if (typeof v !== 'string' || v.length === 0) return undefined;
  const cut = v.slice(0, max);
  return cut.length >= SHORTEST_SECRET ? redactSecrets(cut) : cut;
};
const record = (v: unknown): Record<string, unknown> | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

function compact<T extends object>(o: T): T | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return Object.keys(out).length === 0 ? undefined : (out as T);
}

/** A fill as the finance pack (`{ quantity, price, notionalUsd, feeUsd, realizedPnlUsd }`) or a provider (`notional`, `fee`, `priceUsd`) spells it. */
function fillOf(v: unknown): AuditFill | undefined {
  const f = record(v);
  if (!f) return undefined;
  return compact<AuditFill>({
    quantity: num(f.quantity) ?? num(f.qty) ?? num(f.size),
    priceUsd: num(f.priceUsd) ?? num(f.price),
    notionalUsd: num(f.notionalUsd) ?? num(f.notional),
    feeUsd: num(f.feeUsd) ?? num(f.fee),
    realizedPnlUsd: num(f.realizedPnlUsd) ?? num(f.realizedPnl),
    symbol: text(f.symbol, 40),
    side: text(f.side, 20),
  });
}

/**
 * What a call did, from the envelope its handler returned: the one normalised reading every audit row, the
 * circuit breakers and exports use. A failure gives `{ status: 'error' | 'blocked' | 'approval_required', errorCode }`. A success
 * reads the order fields the finance pack's results carry (`orderId`, `status`, `fill`, `txHash`, `simulated`,
 * `source`, `shadow`; also `transactionHash`/`hash`, and `fill` spelled with `price`/`notional`/`fee`), one
 * level deep under `data`, `result` or `order` too; anything else is `{ status: 'ok' }`. Strings that look like
 * secrets are redacted as in the arguments.
 *
 * @example
 * ```ts
 * extractAuditOutcome({ ok: true, data: { orderId: 'co_1', status: 'filled', fill: { quantity: 0.1, price: 3000, notionalUsd: 300, feeUsd: 0.3 } } });
 * // { status: 'filled', orderId: 'co_1', fill: { quantity: 0.1, priceUsd: 3000, notionalUsd: 300, feeUsd: 0.3 } }
 * ```
 */
export function extractAuditOutcome(envelope: ToolEnvelope, options: { readonly decision?: AuditDecision | undefined; readonly mode?: 'preview' | 'execute' | undefined; readonly orderFacts?: ToolOrderFacts | undefined } = {}): AuditOutcome {
  const orderSide = options.orderFacts?.side;
  if (!envelope.ok) {
    const d = options.decision;
    const status = d === 'blocked' || d === 'denied' ? 'blocked' : d === 'approval_required' ? 'approval_required' : 'error';
    return compact<AuditOutcome>({ status, errorCode: text(String(envelope.code), 80), orderSide }) ?? { status };
  }
  const top = record(envelope.data);
  const nested = top && (record(top.data) ?? record(top.result) ?? record(top.order));
  const pick = (key: string): unknown => top?.[key] ?? nested?.[key];
  const txHash = text(pick('txHash'), 200) ?? text(pick('transactionHash'), 200) ?? text(pick('hash'), 200);
  const status = text(pick('status'), 40) ?? (options.mode === 'preview' ? 'preview' : 'ok');
  const simulated = typeof pick('simulated') === 'boolean' ? (pick('simulated') as boolean) : undefined;
  const shadow = pick('shadow') === true ? true : undefined;
  const outcome = compact<AuditOutcome>({
    status, orderId: text(pick('orderId'), 200), fill: fillOf(pick('fill')), txHash, orderSide: orderSide && options.mode !== 'preview' ? orderSide : undefined, simulated, shadow,
    provider: text(pick('source'), 40),
  }) ?? { status };
  return outcome;
}
