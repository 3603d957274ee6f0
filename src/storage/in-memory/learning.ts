/**
 * The in-memory learning engine: the tables of `learning-state.ts` as maps, the shared drivers over them
 * (`learning-capture.ts`), the side tables (`learning-mirror.ts`), and the checks and rules of the shared domain
 * (`learningStorageOf`) in front. Same semantics as the SQL engines (scoping, order-id dedup, compare-and-set
 * transitions, insert-or-ignore mirror counts, orderings); every read returns a copy.
 */
import { type LearningEngine, learningStorageOf } from '../learning-domain';
import { type CaseOrder, importedCaseFields, importedTradeFields, knownImport, METHODOLOGY_RANK, type MethodologyFields, type PreferenceFields } from '../learning-logic';
import type {
  ImportedTradeCase, LearningScope, LearningStorage, MethodologyQuery, MethodologyRecord, PreferenceQuery, PreferenceRecord, RoleCaseQuery, RoleCaseRecord, TradeQuery, TradeRecord,
} from '../learning-types';
import { compact } from './copy';
import { capture, observe } from './learning-capture';
import * as mirror from './learning-mirror';
import { copy, distinctScopes, type InMemoryLearningState, inScope, newLearningState, rowsOf, scopeFields, takeId } from './learning-state';

const byDesc = (a: { at: string; id: number }, b: { at: string; id: number }) => (a.at < b.at ? 1 : a.at > b.at ? -1 : b.id - a.id);

/** A row of the scope by id, copied. */
function own<T extends { userId: string; agentId?: string | undefined }>(table: ReadonlyMap<number, T>, scope: LearningScope, id: number): T | undefined {
  const r = table.get(id);
  return r && inScope(r, scope) ? copy(r) : undefined;
}

function listTrades(st: InMemoryLearningState, scope: LearningScope, query: TradeQuery, limit: number): TradeRecord[] {
  return rowsOf(st.trades, scope)
    .filter((t) => (query.asset === undefined || t.asset === query.asset) && (query.status === undefined || t.status === query.status)
      && (query.action === undefined || t.action === query.action) && (query.sessionId === undefined || t.sessionId === query.sessionId))
    .sort(byDesc)
    .slice(0, limit)
    .map(copy);
}

function upsertMethodology(st: InMemoryLearningState, scope: LearningScope, fields: MethodologyFields, wantedId: number | undefined) {
  const existing = rowsOf(st.methodologies, scope).find((m) => m.assetClass === fields.assetClass && m.normalizedText === fields.normalizedText);
  if (existing) return { methodology: copy(existing), created: false };
  const row: MethodologyRecord = compact({ id: takeId(st, st.methodologies, wantedId), ...scopeFields(scope), ...fields });
  st.methodologies.set(row.id, row);
  return { methodology: copy(row), created: true };
}

function listMethodologies(st: InMemoryLearningState, scope: LearningScope, query: MethodologyQuery, limit: number): MethodologyRecord[] {
  return rowsOf(st.methodologies, scope)
    .filter((m) => (query.states === undefined || query.states.includes(m.state)) && (query.assetClasses === undefined || query.assetClasses.includes(m.assetClass))
      && (query.ids === undefined || query.ids.includes(m.id)))
    .sort((a, b) => METHODOLOGY_RANK[a.state] - METHODOLOGY_RANK[b.state] || b.confidence - a.confidence || b.uses - a.uses || a.id - b.id)
    .slice(0, limit)
    .map(copy);
}

/** Compare-and-set on one row of the scope: `decide` sees the row and gives the patch (or nothing). */
function updateIf<T extends { userId: string; agentId?: string | undefined }, P extends object>(table: Map<number, T>, scope: LearningScope, id: number, decide: (row: T) => P | undefined): T | undefined {
  const row = table.get(id);
  const patch = row && inScope(row, scope) ? decide(copy(row)) : undefined;
  if (!row || !patch) return undefined;
  const next = compact({ ...row, ...patch });
  table.set(id, next);
  return copy(next);
}

function listCases(st: InMemoryLearningState, scope: LearningScope, query: RoleCaseQuery, limit: number, order: CaseOrder): RoleCaseRecord[] {
  const rows = rowsOf(st.cases, scope).filter((c) => (query.status !== 'pending' || c.reflectedAt === undefined) && (query.status !== 'reflected' || c.reflectedAt !== undefined)
    && (query.role === undefined || c.role === query.role) && (query.asset === undefined || c.asset === query.asset) && (query.withoutMemory !== true || c.memoryId === undefined));
  if (order === 'oldest') rows.sort((a, b) => a.id - b.id);
  else if (order === 'newest_reflection') rows.sort((a, b) => (a.reflectedAt! < b.reflectedAt! ? 1 : a.reflectedAt! > b.reflectedAt! ? -1 : b.id - a.id));
  else rows.sort((a, b) => b.id - a.id);
  return rows.slice(0, limit).map(copy);
}

function markCaseReflected(st: InMemoryLearningState, scope: LearningScope, id: number, r: Parameters<LearningEngine['markCaseReflected']>[2]): boolean {
  const c = st.cases.get(id);
  if (!c || !inScope(c, scope) || c.reflectedAt !== undefined) return false;
  st.cases.set(id, { ...c, reflectedAt: r.now, classification: r.classification, reflection: r.reflection, lessonMemoryIds: [...r.lessonMemoryIds] });
  return true;
}

function upsertPreference(st: InMemoryLearningState, scope: LearningScope, fields: PreferenceFields, wantedId: number | undefined) {
  const existing = rowsOf(st.preferences, scope).find((p) => p.dimension === fields.dimension && p.kind === fields.kind && p.normalizedText === fields.normalizedText);
  if (existing) return { preference: copy(existing), created: false };
  const row: PreferenceRecord = compact({ id: takeId(st, st.preferences, wantedId), ...scopeFields(scope), ...fields });
  st.preferences.set(row.id, row);
  return { preference: copy(row), created: true };
}

function listPreferences(st: InMemoryLearningState, scope: LearningScope, query: PreferenceQuery, limit: number): PreferenceRecord[] {
  return rowsOf(st.preferences, scope)
    .filter((p) => (query.states === undefined || query.states.includes(p.state)) && (query.kinds === undefined || query.kinds.includes(p.kind))
      && (query.dimension === undefined || p.dimension === query.dimension))
    .sort((a, b) => b.id - a.id)
    .slice(0, limit)
    .map(copy);
}

function importTradeCase(st: InMemoryLearningState, scope: LearningScope, c: ImportedTradeCase) {
  const known = rowsOf(st.trades, scope).find((t) => t.orderId === c.orderId);
  if (known) {
    const existing = rowsOf(st.cases, scope).find((x) => x.tradeId === known.id);
    return knownImport('learning.importTradeCase', c.orderId, existing && copy(existing));
  }
  const trade: TradeRecord = compact({ id: st.nextId++, ...scopeFields(scope), ...importedTradeFields(c) });
  st.trades.set(trade.id, trade);
  const row: RoleCaseRecord = compact({ id: takeId(st, st.cases, c.id), ...scopeFields(scope), ...importedCaseFields(c, trade.id) });
  st.cases.set(row.id, row);
  return { case: copy(row), created: true };
}

function linkCaseMemory(st: InMemoryLearningState, scope: LearningScope, caseId: number, memoryId: number): boolean {
  const c = st.cases.get(caseId);
  if (!c || !inScope(c, scope) || c.memoryId !== undefined) return false;
  st.cases.set(caseId, { ...c, memoryId });
  return true;
}

/** The engine's queries over the state (synchronous; each wrapped as the engine's async call). */
function inMemoryLearningEngine(st: InMemoryLearningState): LearningEngine {
  return {
    capture: async (scope, input) => capture(st, scope, input),
    observe: async (scope, observations, now) => observe(st, scope, observations, now),
    getTrade: async (scope, id) => own(st.trades, scope, id),
    listTrades: async (...a) => listTrades(st, ...a),
    upsertMethodology: async (...a) => upsertMethodology(st, ...a),
    getMethodology: async (scope, id) => own(st.methodologies, scope, id),
    listMethodologies: async (...a) => listMethodologies(st, ...a),
    updateMethodology: async (scope, id, decide) => updateIf(st.methodologies, scope, id, decide),
    listCases: async (...a) => listCases(st, ...a),
    markCaseReflected: async (...a) => markCaseReflected(st, ...a),
    upsertPreference: async (...a) => upsertPreference(st, ...a),
    getPreference: async (scope, id) => own(st.preferences, scope, id),
    listPreferences: async (...a) => listPreferences(st, ...a),
    updatePreference: async (scope, id, decide) => updateIf(st.preferences, scope, id, decide),
    insertPerpsFills: async (...a) => mirror.insertPerpsFills(st, ...a),
    insertExternalSpot: async (...a) => mirror.insertExternalSpot(st, ...a),
    listPerpsFills: async (...a) => mirror.listPerpsFills(st, ...a),
    listExternalSpot: async (...a) => mirror.listExternalSpot(st, ...a),
    getSyncState: async (...a) => mirror.getSyncState(st, ...a),
    listSyncStates: async (scope) => mirror.listSyncStates(st, scope),
    recordSyncAttempt: async (...a) => mirror.recordSyncAttempt(st, ...a),
    recordPersonalizationSnapshot: async (...a) => mirror.recordPersonalizationSnapshot(st, ...a),
    latestPersonalizationSnapshot: async (scope) => mirror.latestPersonalizationSnapshot(st, scope),
    importTradeCase: async (...a) => importTradeCase(st, ...a),
    linkCaseMemory: async (...a) => linkCaseMemory(st, ...a),
    caseMemoryScopes: async (n) => distinctScopes([...st.cases.values()].filter((c) => c.memoryId === undefined), n),
    enqueueExtraction: async (...a) => mirror.enqueueExtraction(st, ...a),
    claimExtractions: async (...a) => mirror.claimExtractions(st, ...a),
    completeExtractions: async (...a) => mirror.completeExtractions(st, ...a),
    extractionScopes: async (n) => distinctScopes(st.queue.values(), n),
    counts: async (...a) => mirror.counts(st, ...a),
  };
}

/** The in-memory `learning` domain. */
export function createInMemoryLearningStorage(): LearningStorage {
  return learningStorageOf(inMemoryLearningEngine(newLearningState()));
}
