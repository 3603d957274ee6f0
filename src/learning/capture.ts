/**
 * Decision capture: the `post_turn` record's executions as `trade_history` rows, and the behaviours they
 * show as preference observations. Pure functions; the store writes what they return.
 */
import type { PostTurnRecord, TurnExecution } from '../runtime/types';
import { normalizeLearningText } from '../storage/learning-logic';
import type { NewTradeExecution, PreferenceObservation, TradeAction, TradeKind } from '../storage/learning-types';
import { assetClassOf, normalizeAsset } from './assets';

/** What an execution did to a position, from its order side (and, for a swap, the fill's side). */
export function actionOf(e: TurnExecution): { action: TradeAction; kind: TradeKind; direction?: 'long' | 'short' } {
  const side = e.orderFacts.side;
  if (side === 'transfer' || side === 'withdraw') return { action: 'transfer', kind: 'transfer' };
  if (side === 'long' || side === 'short') return { action: 'open', kind: 'perp', direction: side };
  if (side === 'close') return { action: 'close', kind: 'perp' };
  if (side === 'sell' || (side === 'swap' && e.fill?.side === 'sell')) return { action: 'close', kind: 'spot' };
  return { action: 'open', kind: 'spot', direction: 'long' };
}

/** Methodology asset classes that apply to a trade: the asset's class, `perps` for perp trades, and `any`. */
export function classesForTrade(assetClass: string | undefined, kind: TradeKind): string[] {
  return [...(assetClass ? [assetClass] : []), ...(kind === 'perp' ? ['perps'] : []), 'any'];
}

/**
 * The `trade_history` rows of a record's executions (duplicates, which the provider had already executed, and
 * queued orders, whose fill is not known yet and is captured when it is, are left out). An opening trade carries the methodologies in play whose asset class applies to it.
 */
export function tradeRowsOf(record: PostTurnRecord): NewTradeExecution[] {
  const rows: NewTradeExecution[] = [];
  for (const e of record.executions) {
    if (e.status === 'duplicate' || e.status === 'queued') continue;
    const { action, kind, direction } = actionOf(e);
    const asset = normalizeAsset(e.orderFacts.asset);
    const assetClass = assetClassOf(asset);
    const applies = classesForTrade(assetClass, kind);
    const quantity = e.fill?.quantity ?? e.orderFacts.quantity ?? 0;
    const notionalUsd = e.fill?.notionalUsd ?? e.orderFacts.notionalUsd;
    const price = e.fill?.price ?? (quantity > 0 ? notionalUsd / quantity : 0);
    rows.push({
      orderId: e.orderId ?? `${record.turnId}:${e.toolCallId}`,
      sessionId: record.sessionId, turnId: record.turnId, toolCallId: e.toolCallId, toolName: e.toolName, action, kind, asset,
      ...(assetClass ? { assetClass } : {}), side: e.orderFacts.side, ...(direction ? { direction } : {}),
      quantity: Math.max(0, quantity), price: Math.max(0, price), notionalUsd: Math.max(0, notionalUsd), feeUsd: Math.max(0, e.fill?.feeUsd ?? 0),
      realizedPnlUsd: e.fill?.realizedPnlUsd ?? 0, role: e.role,
      // The engine links those of the trade's asset classes that are not quarantined (in its write transaction).
      methodologyIds: action === 'open' ? record.methodologyIds : [], methodologyClasses: applies,
      simulated: e.simulated ?? false, provider: e.provider ?? 'unknown', at: e.at,
      // The scenario and lifecycle stage the trade was decided in: methodology synthesis groups cases by them.
      details: {
        input: e.input, ...(e.orderFacts.destination ? { destination: e.orderFacts.destination } : {}),
        ...(record.scenarioId !== undefined ? { scenarioId: record.scenarioId } : {}), ...(record.stage !== undefined ? { stage: record.stage } : {}),
      },
    });
  }
  return rows;
}

/**
 * The least evidence for a preference inferred from what a person did NOT trade ("Avoids memecoins"): not
 * trading a kind of asset says little until there were many chances to. Such a preference is proposed only once
 * the person has opened at least `minTrades` trades in at least `minAssets` different assets with none of the
 * avoided class among them; each opened trade after that is one more piece of evidence (and it activates, like any
 * behavioural preference, after `PreferenceGraduationRule.minEvidence` of them). A trade of the class contradicts it.
 */
export const ABSENCE_PREFERENCE_EVIDENCE: Readonly<{ minTrades: number; minAssets: number }> = Object.freeze({ minTrades: 10, minAssets: 3 });

/**
 * Whether opened trades (asset and asset class of each, the current turn's included) are enough to infer that the
 * person avoids `avoidedClass` (see {@link ABSENCE_PREFERENCE_EVIDENCE}).
 *
 * @example
 * ```ts
 * absenceEvidenceEnough([{ asset: 'ETH', assetClass: 'crypto_major' }, { asset: 'ETH', assetClass: 'crypto_major' }], 'crypto_meme'); // false: two ETH buys
 * ```
 */
export function absenceEvidenceEnough(opens: ReadonlyArray<{ readonly asset: string; readonly assetClass?: string | undefined }>, avoidedClass: string, rule: { readonly minTrades: number; readonly minAssets: number } = ABSENCE_PREFERENCE_EVIDENCE): boolean {
  if (opens.some((t) => t.assetClass === avoidedClass)) return false;
  return opens.length >= rule.minTrades && new Set(opens.map((t) => t.asset)).size >= rule.minAssets;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Behaviours an execution shows (deterministic miners): the slippage cap it asked for, the perp leverage it
 * used, and whether it traded a memecoin (each trade elsewhere is evidence the user avoids them, counted only once
 * there is enough history: {@link ABSENCE_PREFERENCE_EVIDENCE}, applied by the learning store).
 */
export function observationsOf(record: PostTurnRecord): PreferenceObservation[] {
  const out: PreferenceObservation[] = [];
  const obs = (dimension: string, text: string, value: string, effect: PreferenceObservation['effect'] = 'support') =>
    out.push({ dimension, text, normalizedText: normalizeLearningText(`${dimension}:${value}`), value, effect });
  for (const e of record.executions) {
    if (e.status === 'duplicate' || e.status === 'queued') continue;
    const { action, kind } = actionOf(e);
    if (action === 'transfer') continue;
    const input = (typeof e.input === 'object' && e.input !== null ? e.input : {}) as Record<string, unknown>;
    const slip = num(input.slippageBps);
    if (slip !== undefined) obs('slippage', `Caps slippage at ${Number((slip / 100).toFixed(2))}% (${slip} bps) on trades`, String(slip));
    const lev = num(input.leverage);
    if (kind === 'perp' && action === 'open' && lev !== undefined) obs('leverage', `Uses ${lev}x leverage on perps`, String(lev));
    if (action === 'open') {
      const cls = assetClassOf(normalizeAsset(e.orderFacts.asset));
      obs('asset_class', 'Avoids memecoins', 'avoid:crypto_meme', cls === 'crypto_meme' ? 'contradict' : 'support');
    }
  }
  return out;
}
