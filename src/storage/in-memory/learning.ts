/**
 * The in-memory learning domain: the same semantics as the SQLite engine (scoping, order-id dedup, the shared
 * capture driver, compare-and-set transitions, INSERT-OR-IGNORE mirror counts, orderings). Every read
 * returns a copy.
 */
import {
  type CaptureOps, checkCaptureInput, checkLearningScope, checkNewMethodology, checkNewPreference, checkObservations, checkPerpsFill, checkRowId, checkSpotActivity,
  checkStateList, checkSyncAttempt, checkTransition, checkImportedTradeCase, checkExtractionClaim, checkExtractionTurn, checkRowIds, checkMethodologyRestore, checkPreferenceRestore, METHODOLOGY_STATES, PREFERENCE_STATES, queued, runCapture,
} from '../learning-logic';
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, LearningStorage, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceObservation,
  PreferenceRecord, RoleCaseRecord, TradeRecord,
} from '../learning-types';
import { checkLimit, invalidArgument } from '../sqlite/checks';
import { compact, jsonCopy } from './copy';

type Scoped<T> = T & { readonly userId: string; readonly agentId?: string | undefined };
const key = (s: LearningScope) => `${s.userId}\u0000${s.agentId ?? ''}`;
const inScope = (r: { userId: string; agentId?: string | undefined }, s: LearningScope) => r.userId === s.userId && (r.agentId ?? '') === (s.agentId ?? '');
const scopeFields = (s: LearningScope) => ({ userId: s.userId, ...(s.agentId === undefined ? {} : { agentId: s.agentId }) });
const copy = <T>(v: T): T => jsonCopy(v);
const byDesc = (a: { at: string; id: number }, b: { at: string; id: number }) => (a.at < b.at ? 1 : a.at > b.at ? -1 : b.id - a.id);
const RANK: Record<string, number> = { graduated: 0, candidate: 1, proposed: 2, quarantined: 3 };


/** The in-memory `learning` domain. */
export function createInMemoryLearningStorage(): LearningStorage {
  let nextId = 1;
  const trades = new Map<number, TradeRecord>();
  const methodologies = new Map<number, MethodologyRecord>();
  const attributions = new Set<string>();
  const cases = new Map<number, RoleCaseRecord>();
  const preferences = new Map<number, PreferenceRecord>();
  const fills: PerpsFillRecord[] = [];
  const fillKeys = new Set<string>();
  const fillScope = new Map<number, string>();
  const spots: ExternalSpotRecord[] = [];
  const spotKeys = new Set<string>();
  const spotScope = new Map<number, string>();
  const sync = new Map<string, HistorySyncState>();
  const snapshots: Array<Scoped<PersonalizationSnapshot>> = [];
  const queue = new Map<number, ExtractionTurnRecord & { readonly claimedBy?: string; readonly claimedUntil?: string }>();
  /** A restored row keeps its id when the table has none such (ids stay above every kept one). */
  const takeId = (table: ReadonlyMap<number, unknown>, wanted: number | undefined): number => {
    if (wanted !== undefined && !table.has(wanted)) {
      nextId = Math.max(nextId, wanted + 1);
      return wanted;
    }
    return nextId++;
  };

  const ops = (scope: LearningScope): CaptureOps => {
    const mine = () => [...trades.values()].filter((t) => inScope(t, scope));
    const setTrade = (t: TradeRecord) => (trades.set(t.id, compact(t)), copy(t));
    return {
      hasOrder: (orderId) => mine().some((t) => t.orderId === orderId),
      insertTrade(e, status) {
        const { details, methodologyClasses: _c, ...rest } = e;
        return setTrade({ ...rest, ...scopeFields(scope), id: nextId++, status, closedQuantity: 0, methodologyIds: [...e.methodologyIds], ...(details === undefined ? {} : { details: copy(details) }) });
      },
      openTrades: (asset, kind) =>
        mine()
          .filter((t) => t.asset === asset && t.kind === kind && t.status === 'open')
          .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id)),
      updateTrade: (trade, patch) => setTrade({ ...trades.get(trade.id)!, ...patch }),
      setClosedIds: (trade, closed) => setTrade({ ...trades.get(trade.id)!, closesTradeIds: [...closed] }),
      methodology: (id) => {
        const m = methodologies.get(id);
        return m && inScope(m, scope) ? copy(m) : undefined;
      },
      insertAttribution(mid, tid) {
        const k = `${mid}:${tid}`;
        if (attributions.has(k)) return false;
        attributions.add(k);
        return true;
      },
      updateMethodologyScore(current, s, now) {
        const id = current.id;
        const m = methodologies.get(id)!;
        const { graduationProposedAt: _g, quarantinedAt: _q, stateReason: _r, ...base } = m;
        const next = compact({ ...base, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt, quarantinedAt: s.quarantinedAt, stateReason: s.stateReason, updatedAt: now });
        methodologies.set(id, next);
        return copy(next);
      },
      insertCase(c) {
        if ([...cases.values()].some((x) => inScope(x, scope) && x.tradeId === c.tradeId)) return undefined;
        const row: RoleCaseRecord = compact({ ...c, ...scopeFields(scope), id: nextId++, methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
        cases.set(row.id, row);
        return copy(row);
      },
    };
  };

  const observeIn = (scope: LearningScope, observations: readonly PreferenceObservation[], now: string): PreferenceRecord[] => {
    const touched = new Set<number>();
    const bump = (p: PreferenceRecord, patch: Partial<PreferenceRecord>) => (preferences.set(p.id, { ...p, ...patch, updatedAt: now }), touched.add(p.id));
    for (const ob of observations) {
      const match = [...preferences.values()].find((p) => inScope(p, scope) && p.dimension === ob.dimension && p.kind === 'behavioural' && p.normalizedText === ob.normalizedText);
      if (ob.effect === 'contradict') {
        if (match) bump(match, { contradictions: match.contradictions + 1 });
        continue;
      }
      let id: number;
      if (match) {
        id = match.id;
        bump(match, { evidence: match.evidence + 1, lastEvidenceAt: now });
      } else {
        id = nextId++;
        preferences.set(id, compact({
          id, ...scopeFields(scope), dimension: ob.dimension, kind: 'behavioural' as const, text: ob.text, normalizedText: ob.normalizedText, value: ob.value,
          source: 'mined' as const, state: 'proposed' as const, evidence: 1, contradictions: 0, lastEvidenceAt: now, createdAt: now, updatedAt: now,
        }));
        touched.add(id);
      }
      for (const other of [...preferences.values()]) {
        if (other.id !== id && inScope(other, scope) && other.dimension === ob.dimension && other.kind === 'behavioural' && other.state !== 'rejected') {
          bump(other, { contradictions: other.contradictions + 1 });
        }
      }
    }
    return [...touched].sort((a, b) => a - b).map((id) => copy(preferences.get(id)!));
  };

  return {
    async recordExecutions(scope, input) {
      checkCaptureInput('learning.recordExecutions', scope, input);
      return { ...runCapture(ops(scope), input.executions, input.policy, input.now), preferences: observeIn(scope, input.observations ?? [], input.now) };
    },

    async getTrade(scope, id) {
      checkLearningScope('learning.getTrade', scope);
      checkRowId('learning.getTrade', 'id', id);
      const t = trades.get(id);
      return t && inScope(t, scope) ? copy(t) : undefined;
    },

    async listTrades(scope, query = {}) {
      checkLearningScope('learning.listTrades', scope);
      const limit = checkLimit('learning.listTrades', query.limit, 100);
      return [...trades.values()]
        .filter((t) => inScope(t, scope) && (query.asset === undefined || t.asset === query.asset) && (query.status === undefined || t.status === query.status)
          && (query.action === undefined || t.action === query.action) && (query.sessionId === undefined || t.sessionId === query.sessionId))
        .sort(byDesc)
        .slice(0, limit)
        .map(copy);
    },

    async upsertMethodology(scope, input) {
      const op = 'learning.upsertMethodology';
      checkLearningScope(op, scope);
      checkNewMethodology(op, input);
      checkMethodologyRestore(op, input.restore);
      const existing = [...methodologies.values()].find((m) => inScope(m, scope) && m.assetClass === input.assetClass && m.normalizedText === input.normalizedText);
      if (existing) return { methodology: copy(existing), created: false };
      const r = input.restore;
      const row: MethodologyRecord = compact({
        id: takeId(methodologies, r?.id), ...scopeFields(scope), assetClass: input.assetClass, text: input.text, normalizedText: input.normalizedText, origin: input.origin,
        sourceRef: input.sourceRef, state: r?.state ?? input.state ?? 'candidate', uses: r?.uses ?? 0, wins: r?.wins ?? 0, confidence: r?.confidence ?? 0,
        graduationProposedAt: r?.graduationProposedAt, graduatedAt: r?.graduatedAt, quarantinedAt: r?.quarantinedAt, stateReason: r?.stateReason ?? input.stateReason,
        createdAt: r?.createdAt ?? input.now, updatedAt: input.now,
      });
      methodologies.set(row.id, row);
      return { methodology: copy(row), created: true };
    },

    async getMethodology(scope, id) {
      checkLearningScope('learning.getMethodology', scope);
      checkRowId('learning.getMethodology', 'id', id);
      const m = methodologies.get(id);
      return m && inScope(m, scope) ? copy(m) : undefined;
    },

    async listMethodologies(scope, query = {}) {
      const op = 'learning.listMethodologies';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, METHODOLOGY_STATES);
      return [...methodologies.values()]
        .filter((m) => inScope(m, scope) && (query.states === undefined || query.states.includes(m.state))
          && (query.assetClasses === undefined || query.assetClasses.includes(m.assetClass)) && (query.ids === undefined || query.ids.includes(m.id)))
        .sort((a, b) => RANK[a.state]! - RANK[b.state]! || b.confidence - a.confidence || b.uses - a.uses || a.id - b.id)
        .slice(0, limit)
        .map(copy);
    },

    async transitionMethodology(scope, id, change) {
      const op = 'learning.transitionMethodology';
      checkTransition(op, scope, id, change, METHODOLOGY_STATES);
      const m = methodologies.get(id);
      if (!m || !inScope(m, scope) || !change.from.includes(m.state)) return undefined;
      const { graduationProposedAt: _g, graduatedAt, quarantinedAt, ...base } = m;
      const next = compact({
        ...base, state: change.to, stateReason: change.reason, updatedAt: change.now,
        graduatedAt: change.to === 'graduated' ? change.now : change.to === 'candidate' ? undefined : graduatedAt,
        quarantinedAt: change.to === 'quarantined' ? change.now : change.to === 'candidate' ? undefined : quarantinedAt,
      });
      methodologies.set(id, next);
      return copy(next);
    },

    async listCases(scope, query = {}) {
      checkLearningScope('learning.listCases', scope);
      const limit = checkLimit('learning.listCases', query.limit, 100);
      const rows = [...cases.values()].filter((c) => inScope(c, scope) && (query.status !== 'pending' || c.reflectedAt === undefined)
        && (query.status !== 'reflected' || c.reflectedAt !== undefined) && (query.role === undefined || c.role === query.role) && (query.asset === undefined || c.asset === query.asset)
        && (query.withoutMemory !== true || c.memoryId === undefined));
      if (query.status === 'pending' || query.withoutMemory === true) rows.sort((a, b) => a.id - b.id);
      else if (query.status === 'reflected') rows.sort((a, b) => (a.reflectedAt! < b.reflectedAt! ? 1 : a.reflectedAt! > b.reflectedAt! ? -1 : b.id - a.id));
      else rows.sort((a, b) => b.id - a.id);
      return rows.slice(0, limit).map(copy);
    },

    async markCaseReflected(scope, id, r) {
      checkLearningScope('learning.markCaseReflected', scope);
      checkRowId('learning.markCaseReflected', 'id', id);
      const c = cases.get(id);
      if (!c || !inScope(c, scope) || c.reflectedAt !== undefined) return false;
      cases.set(id, { ...c, reflectedAt: r.now, classification: r.classification, reflection: r.reflection, lessonMemoryIds: [...r.lessonMemoryIds] });
      return true;
    },

    async upsertPreference(scope, input) {
      const op = 'learning.upsertPreference';
      checkLearningScope(op, scope);
      checkNewPreference(op, input);
      checkPreferenceRestore(op, input.restore);
      const existing = [...preferences.values()].find((p) => inScope(p, scope) && p.dimension === input.dimension && p.kind === input.kind && p.normalizedText === input.normalizedText);
      if (existing) return { preference: copy(existing), created: false };
      const r = input.restore;
      const row: PreferenceRecord = compact({
        id: takeId(preferences, r?.id), ...scopeFields(scope), dimension: input.dimension, kind: input.kind, text: input.text, normalizedText: input.normalizedText, value: input.value,
        source: input.source, state: r?.state ?? 'proposed', evidence: r?.evidence ?? 0, contradictions: r?.contradictions ?? 0, lastEvidenceAt: r?.lastEvidenceAt ?? input.now,
        activatedAt: r?.activatedAt, decidedAt: r?.decidedAt, memoryId: r?.memoryId, createdAt: r?.createdAt ?? input.now, updatedAt: input.now,
      });
      preferences.set(row.id, row);
      return { preference: copy(row), created: true };
    },

    async observePreferences(scope, observations, now) {
      checkObservations('learning.observePreferences', scope, observations);
      return observeIn(scope, observations, now);
    },

    async getPreference(scope, id) {
      checkLearningScope('learning.getPreference', scope);
      checkRowId('learning.getPreference', 'id', id);
      const p = preferences.get(id);
      return p && inScope(p, scope) ? copy(p) : undefined;
    },

    async listPreferences(scope, query = {}) {
      const op = 'learning.listPreferences';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, PREFERENCE_STATES);
      return [...preferences.values()]
        .filter((p) => inScope(p, scope) && (query.states === undefined || query.states.includes(p.state)) && (query.kinds === undefined || query.kinds.includes(p.kind))
          && (query.dimension === undefined || p.dimension === query.dimension))
        .sort((a, b) => b.id - a.id)
        .slice(0, limit)
        .map(copy);
    },

    async transitionPreference(scope, id, change) {
      const op = 'learning.transitionPreference';
      checkTransition(op, scope, id, change, PREFERENCE_STATES);
      const p = preferences.get(id);
      if (!p || !inScope(p, scope) || !change.from.includes(p.state)) return undefined;
      const next = compact({
        ...p, state: change.to, decidedAt: change.now, updatedAt: change.now, activatedAt: change.to === 'active' ? change.now : p.activatedAt,
        memoryId: change.memoryId ?? p.memoryId,
      });
      preferences.set(id, next);
      return copy(next);
    },

    async insertPerpsFills(scope, input) {
      const op = 'learning.insertPerpsFills';
      checkLearningScope(op, scope);
      input.forEach((f, i) => checkPerpsFill(op, f, i));
      let n = 0;
      for (const f of input) {
        const k = `${key(scope)}\u0000${f.subAccountId}\u0000${f.fillUid}`;
        if (fillKeys.has(k)) continue;
        fillKeys.add(k);
        const { now, ...rest } = f;
        const row = compact({ ...rest, id: nextId++, createdAt: now });
        fills.push(row);
        fillScope.set(row.id, key(scope));
        n++;
      }
      return n;
    },

    async insertExternalSpot(scope, input) {
      const op = 'learning.insertExternalSpot';
      checkLearningScope(op, scope);
      input.forEach((a, i) => checkSpotActivity(op, a, i));
      let n = 0;
      for (const a of input) {
        const k = `${key(scope)}\u0000${a.txHash}`;
        if (spotKeys.has(k)) continue;
        spotKeys.add(k);
        const { now, ...rest } = a;
        const row = compact({ ...rest, id: nextId++, createdAt: now });
        spots.push(row);
        spotScope.set(row.id, key(scope));
        n++;
      }
      return n;
    },

    async listPerpsFills(scope, query = {}) {
      checkLearningScope('learning.listPerpsFills', scope);
      const limit = checkLimit('learning.listPerpsFills', query.limit, 100);
      return fills
        .filter((f) => fillScope.get(f.id) === key(scope) && (query.subAccountId === undefined || f.subAccountId === query.subAccountId))
        .sort((a, b) => b.tsMs - a.tsMs || b.id - a.id)
        .slice(0, limit)
        .map(copy);
    },

    async listExternalSpot(scope, query = {}) {
      checkLearningScope('learning.listExternalSpot', scope);
      const limit = checkLimit('learning.listExternalSpot', query.limit, 100);
      return spots.filter((a) => spotScope.get(a.id) === key(scope)).sort((a, b) => b.tsMs - a.tsMs || b.id - a.id).slice(0, limit).map(copy);
    },

    async getSyncState(scope, source, subAccountId) {
      checkLearningScope('learning.getSyncState', scope);
      const s = sync.get(`${key(scope)}\u0000${source}\u0000${subAccountId}`);
      return s && copy(s);
    },

    async listSyncStates(scope) {
      checkLearningScope('learning.listSyncStates', scope);
      const prefix = `${key(scope)}\u0000`;
      return [...sync.entries()]
        .filter(([k]) => k.startsWith(prefix) && k.split('\u0000').length === 4)
        .map(([, v]) => copy(v))
        .sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.subAccountId < b.subAccountId ? -1 : a.subAccountId > b.subAccountId ? 1 : 0));
    },

    async recordSyncAttempt(scope, a) {
      const op = 'learning.recordSyncAttempt';
      checkSyncAttempt(op, scope, a);
      const k = `${key(scope)}\u0000${a.source}\u0000${a.subAccountId}`;
      const cur = sync.get(k);
      let next: HistorySyncState;
      if (a.ok) {
        const marks = [cur?.lastSyncedTsMs, a.watermarkMs].filter((x): x is number => x !== undefined);
        next = compact({ source: a.source, subAccountId: a.subAccountId, lastSyncedTsMs: marks.length > 0 ? Math.max(...marks) : undefined, lastSyncedAt: a.now, consecutiveFailures: 0 });
      } else {
        next = compact({ source: a.source, subAccountId: a.subAccountId, lastSyncedTsMs: cur?.lastSyncedTsMs, lastSyncedAt: a.now, lastError: a.error.slice(0, 2000), consecutiveFailures: (cur?.consecutiveFailures ?? 0) + 1 });
      }
      sync.set(k, next);
      return copy(next);
    },

    async recordPersonalizationSnapshot(scope, s) {
      checkLearningScope('learning.recordPersonalizationSnapshot', scope);
      if (typeof s.sessionWatermark !== 'string') throw invalidArgument('learning.recordPersonalizationSnapshot', 'sessionWatermark must be a string');
      const row = { ...scopeFields(scope), id: nextId++, sessionWatermark: s.sessionWatermark, sessionIds: [...s.sessionIds], factHashes: [...s.factHashes], writtenIds: [...s.writtenIds], createdAt: s.now };
      snapshots.push(row);
      const { userId: _u, agentId: _a, ...out } = row as Scoped<PersonalizationSnapshot>;
      return copy(out);
    },

    async latestPersonalizationSnapshot(scope) {
      checkLearningScope('learning.latestPersonalizationSnapshot', scope);
      const s = snapshots.filter((x) => inScope(x, scope)).at(-1);
      if (!s) return undefined;
      const { userId: _u, agentId: _a, ...out } = s;
      return copy(out);
    },

    async importTradeCase(scope, c) {
      const op = 'learning.importTradeCase';
      checkLearningScope(op, scope);
      checkImportedTradeCase(op, c);
      const known = [...trades.values()].find((t) => inScope(t, scope) && t.orderId === c.orderId);
      if (known) {
        const existing = [...cases.values()].find((x) => inScope(x, scope) && x.tradeId === known.id);
        if (existing) return { case: copy(existing), created: false };
        throw invalidArgument(op, `orderId ${JSON.stringify(c.orderId)} is a trade of this scope without a case; import it under another order id`);
      }
      const trade: TradeRecord = compact({
        id: nextId++, ...scopeFields(scope), orderId: c.orderId, toolName: 'memory_import', action: 'open' as const, kind: c.kind, asset: c.asset, assetClass: c.assetClass,
        side: c.side, direction: c.direction, quantity: c.quantity, price: c.entryPrice, notionalUsd: c.notionalUsd, feeUsd: 0, realizedPnlUsd: c.realizedPnlUsd, role: c.role,
        methodologyIds: [...c.methodologyIds], simulated: c.simulated, provider: 'import', at: c.openedAt, status: 'closed' as const, closedQuantity: c.quantity,
        exitPrice: c.exitPrice, closedAt: c.closedAt, holdingMs: c.holdingMs, outcome: c.outcome,
      });
      trades.set(trade.id, trade);
      const row: RoleCaseRecord = compact({
        id: takeId(cases, c.id), ...scopeFields(scope), tradeId: trade.id, role: c.role, asset: c.asset, assetClass: c.assetClass, kind: c.kind, direction: c.direction,
        summary: c.summary, outcome: c.outcome, realizedPnlUsd: c.realizedPnlUsd, holdingMs: c.holdingMs, methodologyIds: [...c.methodologyIds], openedAt: c.openedAt,
        closedAt: c.closedAt, createdAt: c.now, reflectedAt: c.reflectedAt, classification: c.classification, reflection: c.reflection, lessonMemoryIds: [],
      });
      cases.set(row.id, row);
      return { case: copy(row), created: true };
    },

    async linkCaseMemory(scope, caseId, memoryId) {
      const op = 'learning.linkCaseMemory';
      checkLearningScope(op, scope);
      checkRowId(op, 'caseId', caseId);
      checkRowId(op, 'memoryId', memoryId);
      const c = cases.get(caseId);
      if (!c || !inScope(c, scope) || c.memoryId !== undefined) return false;
      cases.set(caseId, { ...c, memoryId });
      return true;
    },

    async caseMemoryScopes(limit) {
      const n = checkLimit('learning.caseMemoryScopes', limit, 100);
      const seen = new Map<string, LearningScope>();
      for (const c of cases.values()) if (c.memoryId === undefined) seen.set(key(c), scopeFields(c));
      return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, n).map(([, v]) => v);
    },

    async enqueueExtraction(scope, t) {
      checkExtractionTurn('learning.enqueueExtraction', scope, t);
      if ([...queue.values()].some((q) => inScope(q, scope) && q.turnId === t.turnId)) return false;
      const id = nextId++;
      queue.set(id, { id, ...scopeFields(scope), sessionId: t.sessionId, turnId: t.turnId, text: t.text, createdAt: t.now, attempts: 0 });
      return true;
    },

    async claimExtractions(scope, c) {
      const limit = checkExtractionClaim('learning.claimExtractions', scope, c);
      const free = [...queue.values()].filter((q) => inScope(q, scope) && (q.claimedUntil === undefined || q.claimedUntil < c.now)).sort((a, b) => a.id - b.id).slice(0, limit);
      return free.map((q) => {
        const next = { ...q, attempts: q.attempts + 1, claimedBy: c.owner, claimedUntil: c.leaseUntil };
        queue.set(q.id, next);
        const { claimedBy: _b, claimedUntil: _u, ...record } = next;
        return copy(record);
      });
    },

    async completeExtractions(scope, list) {
      const op = 'learning.completeExtractions';
      checkLearningScope(op, scope);
      let n = 0;
      for (const id of checkRowIds(op, 'ids', list)) {
        const q = queue.get(id);
        if (q && inScope(q, scope)) n += queue.delete(id) ? 1 : 0;
      }
      return n;
    },

    async extractionScopes(limit) {
      const n = checkLimit('learning.extractionScopes', limit, 100);
      const seen = new Map<string, LearningScope>();
      for (const q of queue.values()) seen.set(key(q), scopeFields(q));
      return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, n).map(([, s]) => s);
    },

    async stats(scope, options) {
      const op = 'learning.stats';
      checkLearningScope(op, scope);
      if (typeof options?.overdueBefore !== 'string' || Number.isNaN(Date.parse(options.overdueBefore))) throw invalidArgument(op, 'overdueBefore must be an ISO date');
      const tally = <K extends string>(keys: readonly K[], values: Iterable<K>) => {
        const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
        for (const v of values) out[v]++;
        return out;
      };
      const ms = [...methodologies.values()].filter((m) => inScope(m, scope));
      const ps = [...preferences.values()].filter((p) => inScope(p, scope));
      const cs = [...cases.values()].filter((c) => inScope(c, scope));
      const ts = [...trades.values()].filter((t) => inScope(t, scope));
      const qs = [...queue.values()].filter((q) => inScope(q, scope));
      const k = key(scope);
      return {
        methodologies: tally(METHODOLOGY_STATES, ms.map((m) => m.state)),
        graduationProposed: ms.filter((m) => m.state === 'candidate' && m.graduationProposedAt !== undefined).length,
        preferences: tally(PREFERENCE_STATES, ps.map((p) => p.state)),
        hardConstraints: tally(PREFERENCE_STATES, ps.filter((p) => p.kind === 'hard_constraint').map((p) => p.state)),
        cases: {
          pending: cs.filter((c) => c.reflectedAt === undefined).length,
          overdue: cs.filter((c) => c.reflectedAt === undefined && c.closedAt < options.overdueBefore).length,
          reflected: cs.filter((c) => c.reflectedAt !== undefined).length,
        },
        trades: tally(['open', 'closed', 'settled'] as const, ts.map((t) => t.status)),
        perpsFills: fills.filter((f) => fillScope.get(f.id) === k).length,
        externalSpot: spots.filter((a) => spotScope.get(a.id) === k).length,
        extractionQueue: queued({ n: qs.length, oldest: qs.map((q) => q.createdAt).sort()[0] }),
      };
    },
  };
}
