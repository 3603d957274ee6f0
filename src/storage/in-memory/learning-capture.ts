/** The in-memory engine's row operations for the shared drivers: decision capture and preference evidence. */
import type { CaptureInput } from '../learning-domain';
import { type CaptureOps, minedPreferenceFields, type ObserveOps, runCapture, runObserve } from '../learning-logic';
import type { CaptureResult, LearningScope, PreferenceObservation, PreferenceRecord, RoleCaseRecord, TradeRecord } from '../learning-types';
import { compact } from './copy';
import { copy, type InMemoryLearningState, inScope, rowsOf, scopeFields } from './learning-state';

/** {@link CaptureOps} over the maps (JavaScript runs one call at a time, so this is its own transaction). */
function captureOps(st: InMemoryLearningState, scope: LearningScope): CaptureOps {
  const setTrade = (t: TradeRecord) => (st.trades.set(t.id, compact(t)), copy(t));
  return {
    hasOrder: (orderId) => rowsOf(st.trades, scope).some((t) => t.orderId === orderId),
    insertTrade(e, status) {
      const { details, methodologyClasses: _c, ...rest } = e;
      return setTrade({ ...rest, ...scopeFields(scope), id: st.nextId++, status, closedQuantity: 0, methodologyIds: [...e.methodologyIds], ...(details === undefined ? {} : { details: copy(details) }) });
    },
    openTrades: (asset, kind) =>
      rowsOf(st.trades, scope)
        .filter((t) => t.asset === asset && t.kind === kind && t.status === 'open')
        .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id)),
    updateTrade: (trade, patch) => setTrade({ ...st.trades.get(trade.id)!, ...patch }),
    setClosedIds: (trade, closed) => setTrade({ ...st.trades.get(trade.id)!, closesTradeIds: [...closed] }),
    methodology: (id) => {
      const m = st.methodologies.get(id);
      return m && inScope(m, scope) ? copy(m) : undefined;
    },
    insertAttribution(mid, tid) {
      const k = `${mid}:${tid}`;
      if (st.attributions.has(k)) return false;
      st.attributions.add(k);
      return true;
    },
    updateMethodologyScore(current, s, now) {
      const { graduationProposedAt: _g, quarantinedAt: _q, stateReason: _r, ...base } = st.methodologies.get(current.id)!;
      const next = compact({ ...base, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt, quarantinedAt: s.quarantinedAt, stateReason: s.stateReason, updatedAt: now });
      st.methodologies.set(current.id, next);
      return copy(next);
    },
    insertCase(c) {
      if (rowsOf(st.cases, scope).some((x) => x.tradeId === c.tradeId)) return undefined;
      const row: RoleCaseRecord = compact({ ...c, ...scopeFields(scope), id: st.nextId++, methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
      st.cases.set(row.id, row);
      return copy(row);
    },
  };
}

/** {@link ObserveOps} over the preferences map; every change stamps `updatedAt`. */
function observeOps(st: InMemoryLearningState, scope: LearningScope, now: string): ObserveOps {
  const bump = (id: number, patch: (p: PreferenceRecord) => Partial<PreferenceRecord>) => {
    const p = st.preferences.get(id)!;
    st.preferences.set(id, { ...p, ...patch(p), updatedAt: now });
  };
  const behavioural = (dimension: string) => rowsOf(st.preferences, scope).filter((p) => p.dimension === dimension && p.kind === 'behavioural');
  return {
    match: (dimension, normalizedText) => behavioural(dimension).find((p) => p.normalizedText === normalizedText)?.id,
    insertMined(ob) {
      const id = st.nextId++;
      st.preferences.set(id, compact({ id, ...scopeFields(scope), ...minedPreferenceFields(ob, now) }));
      return id;
    },
    support: (id) => bump(id, (p) => ({ evidence: p.evidence + 1, lastEvidenceAt: now })),
    contradict: (id) => bump(id, (p) => ({ contradictions: p.contradictions + 1 })),
    rivals: (dimension, id) => behavioural(dimension).filter((p) => p.id !== id && p.state !== 'rejected').map((p) => p.id),
  };
}

/** Apply observations; the touched preferences by id. */
export function observe(st: InMemoryLearningState, scope: LearningScope, observations: readonly PreferenceObservation[], now: string): PreferenceRecord[] {
  return runObserve(observeOps(st, scope, now), observations).map((id) => copy(st.preferences.get(id)!));
}

/** Decision capture and the turn's preference evidence. */
export function capture(st: InMemoryLearningState, scope: LearningScope, input: CaptureInput): CaptureResult {
  return { ...runCapture(captureOps(st, scope), input.executions, input.policy, input.now), preferences: observe(st, scope, input.observations ?? [], input.now) };
}
