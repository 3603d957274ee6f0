/**
 * The learning domain once, over any engine: {@link learningStorageOf} turns an engine's queries
 * ({@link LearningEngine}) into the {@link LearningStorage} every storage offers. This layer checks every input
 * (`learning-checks.ts`), answers what needs no query (an empty batch), and hands the engine the rules of
 * `learning-logic.ts` (what a new row holds, the compare-and-set rule of a transition); the engine keeps only its
 * transactions, statements and row mapping, and runs the shared drivers (`runCapture`, `runObserve`) over its
 * row operations inside its own write transaction.
 */
import {
  checkCaptureInput, checkExtractionClaim, checkExtractionTurn, checkImportedTradeCase, checkLearningScope, checkMethodologyRestore, checkNewMethodology, checkNewPreference, checkPreferenceRestore,
  checkObservations, checkPerpsFill, checkRowId, checkRowIds, checkSpotActivity, checkStateList, checkSyncAttempt, checkTransition,
} from './learning-checks';
import {
  type CaseOrder, caseOrderOf, type LearningCounts, learningStatsOf, METHODOLOGY_STATES, type MethodologyFields, type MethodologyStatePatch, methodologyTransition, newMethodologyFields,
  newPreferenceFields, PREFERENCE_STATES, type PreferenceFields, type PreferenceStatePatch, preferenceTransition,
} from './learning-logic';
import type {
  CaptureResult, ExternalSpotRecord, ExtractionTurnRecord, HistorySyncAttempt, HistorySyncState, ImportedTradeCase, LearningScope, LearningStorage, MethodologyQuery, MethodologyRecord,
  NewExternalSpotActivity, NewExtractionTurn, NewPerpsFill, PerpsFillRecord, PersonalizationSnapshot, PreferenceObservation, PreferenceQuery, PreferenceRecord, RoleCaseQuery,
  RoleCaseRecord, TradeQuery, TradeRecord,
} from './learning-types';
import { checkLimit, invalidArgument } from './sqlite/checks';

/** Input of {@link LearningStorage.recordExecutions}. */
export type CaptureInput = Parameters<LearningStorage['recordExecutions']>[1];
/** A case's reflection (see {@link LearningStorage.markCaseReflected}). */
export type CaseReflection = Parameters<LearningStorage['markCaseReflected']>[2];
/** A personalization snapshot to record. */
export type NewPersonalizationSnapshot = Parameters<LearningStorage['recordPersonalizationSnapshot']>[1];
/** An extraction claim (see {@link LearningStorage.claimExtractions}). */
export type ExtractionClaim = Parameters<LearningStorage['claimExtractions']>[1];

/**
 * What a storage engine provides for the learning domain: its transactions and queries over input already
 * checked (limits resolved, batches non-empty). Scoped like {@link LearningStorage}: every statement filters on
 * the scope's user and exact agent.
 */
export interface LearningEngine {
  /** In one write transaction: `runCapture` over the engine's `CaptureOps`, then `runObserve` over its `ObserveOps`. */
  capture(scope: LearningScope, input: CaptureInput & { readonly observations: readonly PreferenceObservation[] }): Promise<CaptureResult>;
  /** In one write transaction: `runObserve` over the engine's `ObserveOps`; the touched rows by id. */
  observe(scope: LearningScope, observations: readonly PreferenceObservation[], now: string): Promise<PreferenceRecord[]>;
  getTrade(scope: LearningScope, id: number): Promise<TradeRecord | undefined>;
  /** Newest first (`at`, then id). */
  listTrades(scope: LearningScope, query: TradeQuery, limit: number): Promise<TradeRecord[]>;
  /** The scope's methodology of this asset class and normalised text, else a new row of `fields` (under `wantedId` when no row has it). */
  upsertMethodology(scope: LearningScope, fields: MethodologyFields, wantedId: number | undefined): Promise<{ readonly methodology: MethodologyRecord; readonly created: boolean }>;
  getMethodology(scope: LearningScope, id: number): Promise<MethodologyRecord | undefined>;
  /** Ordered by `METHODOLOGY_RANK`, then confidence and uses descending, then id. */
  listMethodologies(scope: LearningScope, query: MethodologyQuery, limit: number): Promise<MethodologyRecord[]>;
  /** In one write transaction: read the scope's row and write `decide(row)` when it gives a patch; the row as written. */
  updateMethodology(scope: LearningScope, id: number, decide: (m: MethodologyRecord) => MethodologyStatePatch | undefined): Promise<MethodologyRecord | undefined>;
  listCases(scope: LearningScope, query: RoleCaseQuery, limit: number, order: CaseOrder): Promise<RoleCaseRecord[]>;
  /** Set the reflection of an unreflected case; false otherwise. */
  markCaseReflected(scope: LearningScope, id: number, reflection: CaseReflection): Promise<boolean>;
  /** The scope's preference of this dimension, kind and normalised text, else a new row of `fields` (under `wantedId` when no row has it). */
  upsertPreference(scope: LearningScope, fields: PreferenceFields, wantedId: number | undefined): Promise<{ readonly preference: PreferenceRecord; readonly created: boolean }>;
  getPreference(scope: LearningScope, id: number): Promise<PreferenceRecord | undefined>;
  /** Newest first. */
  listPreferences(scope: LearningScope, query: PreferenceQuery, limit: number): Promise<PreferenceRecord[]>;
  /** As {@link LearningEngine.updateMethodology}, for a preference. */
  updatePreference(scope: LearningScope, id: number, decide: (p: PreferenceRecord) => PreferenceStatePatch | undefined): Promise<PreferenceRecord | undefined>;
  /** Insert-or-ignore by (sub-account, fill uid); how many were new. */
  insertPerpsFills(scope: LearningScope, fills: readonly NewPerpsFill[]): Promise<number>;
  /** Insert-or-ignore by transaction hash; how many were new. */
  insertExternalSpot(scope: LearningScope, activities: readonly NewExternalSpotActivity[]): Promise<number>;
  listPerpsFills(scope: LearningScope, subAccountId: string | undefined, limit: number): Promise<PerpsFillRecord[]>;
  listExternalSpot(scope: LearningScope, limit: number): Promise<ExternalSpotRecord[]>;
  getSyncState(scope: LearningScope, source: string, subAccountId: string): Promise<HistorySyncState | undefined>;
  listSyncStates(scope: LearningScope): Promise<HistorySyncState[]>;
  /** Apply `nextSyncState` atomically (an engine may say it in its upsert statement). */
  recordSyncAttempt(scope: LearningScope, attempt: HistorySyncAttempt): Promise<HistorySyncState>;
  recordPersonalizationSnapshot(scope: LearningScope, snapshot: NewPersonalizationSnapshot): Promise<PersonalizationSnapshot>;
  latestPersonalizationSnapshot(scope: LearningScope): Promise<PersonalizationSnapshot | undefined>;
  /** In one write transaction: `knownImport` when the order id is a trade of the scope, else insert `importedTradeFields` and `importedCaseFields`. */
  importTradeCase(scope: LearningScope, input: ImportedTradeCase): Promise<{ readonly case: RoleCaseRecord; readonly created: boolean }>;
  linkCaseMemory(scope: LearningScope, caseId: number, memoryId: number): Promise<boolean>;
  caseMemoryScopes(limit: number): Promise<LearningScope[]>;
  enqueueExtraction(scope: LearningScope, turn: NewExtractionTurn): Promise<boolean>;
  claimExtractions(scope: LearningScope, claim: ExtractionClaim, limit: number): Promise<ExtractionTurnRecord[]>;
  completeExtractions(scope: LearningScope, ids: readonly number[]): Promise<number>;
  extractionScopes(limit: number): Promise<LearningScope[]>;
  /** The scope's counts for `learningStatsOf`. */
  counts(scope: LearningScope, overdueBefore: string): Promise<LearningCounts>;
}

const EMPTY_CAPTURE = (): CaptureResult => ({ recorded: [], duplicates: [], closed: [], updated: [], methodologyChanges: [], cases: [], preferences: [] });

async function recordExecutions(e: LearningEngine, scope: LearningScope, input: CaptureInput): Promise<CaptureResult> {
  checkCaptureInput('learning.recordExecutions', scope, input);
  const observations = input.observations ?? [];
  if (input.executions.length === 0 && observations.length === 0) return EMPTY_CAPTURE();
  return e.capture(scope, { ...input, observations });
}

async function byId<T>(operation: string, scope: LearningScope, id: number, read: () => Promise<T>): Promise<T> {
  checkLearningScope(operation, scope);
  checkRowId(operation, 'id', id);
  return read();
}

async function listed<T>(operation: string, scope: LearningScope, query: { readonly limit?: number | undefined }, read: (limit: number) => Promise<T>): Promise<T> {
  checkLearningScope(operation, scope);
  return read(checkLimit(operation, query.limit, 100));
}

async function upsertMethodology(e: LearningEngine, scope: LearningScope, input: Parameters<LearningStorage['upsertMethodology']>[1]) {
  const op = 'learning.upsertMethodology';
  checkLearningScope(op, scope);
  checkNewMethodology(op, input);
  checkMethodologyRestore(op, input.restore);
  return e.upsertMethodology(scope, newMethodologyFields(input), input.restore?.id);
}

async function listMethodologies(e: LearningEngine, scope: LearningScope, query: MethodologyQuery = {}): Promise<MethodologyRecord[]> {
  const op = 'learning.listMethodologies';
  checkLearningScope(op, scope);
  const limit = checkLimit(op, query.limit, 100);
  checkStateList(op, 'states', query.states, METHODOLOGY_STATES);
  return e.listMethodologies(scope, query, limit);
}

async function transitionMethodology(e: LearningEngine, ...[scope, id, change]: Parameters<LearningStorage['transitionMethodology']>): Promise<MethodologyRecord | undefined> {
  checkTransition('learning.transitionMethodology', scope, id, change, METHODOLOGY_STATES);
  return e.updateMethodology(scope, id, (m) => methodologyTransition(m, change));
}

async function upsertPreference(e: LearningEngine, scope: LearningScope, input: Parameters<LearningStorage['upsertPreference']>[1]) {
  const op = 'learning.upsertPreference';
  checkLearningScope(op, scope);
  checkNewPreference(op, input);
  checkPreferenceRestore(op, input.restore);
  return e.upsertPreference(scope, newPreferenceFields(input), input.restore?.id);
}

async function observePreferences(e: LearningEngine, scope: LearningScope, observations: readonly PreferenceObservation[], now: string): Promise<PreferenceRecord[]> {
  checkObservations('learning.observePreferences', scope, observations);
  return observations.length === 0 ? [] : e.observe(scope, observations, now);
}

async function listPreferences(e: LearningEngine, scope: LearningScope, query: PreferenceQuery = {}): Promise<PreferenceRecord[]> {
  const op = 'learning.listPreferences';
  checkLearningScope(op, scope);
  const limit = checkLimit(op, query.limit, 100);
  checkStateList(op, 'states', query.states, PREFERENCE_STATES);
  return e.listPreferences(scope, query, limit);
}

async function transitionPreference(e: LearningEngine, ...[scope, id, change]: Parameters<LearningStorage['transitionPreference']>): Promise<PreferenceRecord | undefined> {
  checkTransition('learning.transitionPreference', scope, id, change, PREFERENCE_STATES);
  return e.updatePreference(scope, id, (p) => preferenceTransition(p, change));
}

async function insertPerpsFills(e: LearningEngine, scope: LearningScope, fills: readonly NewPerpsFill[]): Promise<number> {
  const op = 'learning.insertPerpsFills';
  checkLearningScope(op, scope);
  fills.forEach((f, i) => checkPerpsFill(op, f, i));
  return fills.length === 0 ? 0 : e.insertPerpsFills(scope, fills);
}

async function insertExternalSpot(e: LearningEngine, scope: LearningScope, activities: readonly NewExternalSpotActivity[]): Promise<number> {
  const op = 'learning.insertExternalSpot';
  checkLearningScope(op, scope);
  activities.forEach((a, i) => checkSpotActivity(op, a, i));
  return activities.length === 0 ? 0 : e.insertExternalSpot(scope, activities);
}

async function recordPersonalizationSnapshot(e: LearningEngine, scope: LearningScope, s: NewPersonalizationSnapshot): Promise<PersonalizationSnapshot> {
  const op = 'learning.recordPersonalizationSnapshot';
  checkLearningScope(op, scope);
  if (typeof s.sessionWatermark !== 'string') throw invalidArgument(op, 'sessionWatermark must be a string');
  return e.recordPersonalizationSnapshot(scope, s);
}

async function importTradeCase(e: LearningEngine, scope: LearningScope, input: ImportedTradeCase) {
  checkLearningScope('learning.importTradeCase', scope);
  checkImportedTradeCase('learning.importTradeCase', input);
  return e.importTradeCase(scope, input);
}

async function linkCaseMemory(e: LearningEngine, scope: LearningScope, caseId: number, memoryId: number): Promise<boolean> {
  const op = 'learning.linkCaseMemory';
  checkLearningScope(op, scope);
  checkRowId(op, 'caseId', caseId);
  checkRowId(op, 'memoryId', memoryId);
  return e.linkCaseMemory(scope, caseId, memoryId);
}

async function completeExtractions(e: LearningEngine, scope: LearningScope, list: readonly number[]): Promise<number> {
  const op = 'learning.completeExtractions';
  checkLearningScope(op, scope);
  const ids = checkRowIds(op, 'ids', list);
  return ids.length === 0 ? 0 : e.completeExtractions(scope, ids);
}

async function stats(e: LearningEngine, scope: LearningScope, options: { readonly overdueBefore: string }) {
  const op = 'learning.stats';
  checkLearningScope(op, scope);
  if (typeof options?.overdueBefore !== 'string' || Number.isNaN(Date.parse(options.overdueBefore))) throw invalidArgument(op, 'overdueBefore must be an ISO date');
  return learningStatsOf(await e.counts(scope, options.overdueBefore));
}

async function scoped<T>(operation: string, scope: LearningScope, read: () => Promise<T>): Promise<T> {
  checkLearningScope(operation, scope);
  return read();
}

async function scopes(operation: string, limit: number, read: (n: number) => Promise<LearningScope[]>): Promise<LearningScope[]> {
  return read(checkLimit(operation, limit, 100));
}

/** The {@link LearningStorage} of an engine: every input checked, the shared rules applied, then the engine's queries. */
export function learningStorageOf(e: LearningEngine): LearningStorage {
  return {
    recordExecutions: (scope, input) => recordExecutions(e, scope, input),
    getTrade: (scope, id) => byId('learning.getTrade', scope, id, () => e.getTrade(scope, id)),
    listTrades: (scope, query = {}) => listed('learning.listTrades', scope, query, (limit) => e.listTrades(scope, query, limit)),
    upsertMethodology: (scope, input) => upsertMethodology(e, scope, input),
    getMethodology: (scope, id) => byId('learning.getMethodology', scope, id, () => e.getMethodology(scope, id)),
    listMethodologies: (scope, query) => listMethodologies(e, scope, query),
    transitionMethodology: (...a) => transitionMethodology(e, ...a),
    listCases: (scope, query = {}) => listed('learning.listCases', scope, query, (limit) => e.listCases(scope, query, limit, caseOrderOf(query))),
    markCaseReflected: (scope, id, r) => byId('learning.markCaseReflected', scope, id, () => e.markCaseReflected(scope, id, r)),
    upsertPreference: (scope, input) => upsertPreference(e, scope, input),
    observePreferences: (scope, observations, now) => observePreferences(e, scope, observations, now),
    getPreference: (scope, id) => byId('learning.getPreference', scope, id, () => e.getPreference(scope, id)),
    listPreferences: (scope, query) => listPreferences(e, scope, query),
    transitionPreference: (...a) => transitionPreference(e, ...a),
    insertPerpsFills: (scope, fills) => insertPerpsFills(e, scope, fills),
    insertExternalSpot: (scope, activities) => insertExternalSpot(e, scope, activities),
    listPerpsFills: (scope, query = {}) => listed('learning.listPerpsFills', scope, query, (limit) => e.listPerpsFills(scope, query.subAccountId, limit)),
    listExternalSpot: (scope, query = {}) => listed('learning.listExternalSpot', scope, query, (limit) => e.listExternalSpot(scope, limit)),
    getSyncState: (scope, source, subAccountId) => scoped('learning.getSyncState', scope, () => e.getSyncState(scope, source, subAccountId)),
    listSyncStates: (scope) => scoped('learning.listSyncStates', scope, () => e.listSyncStates(scope)),
    recordSyncAttempt: async (scope, attempt) => (checkSyncAttempt('learning.recordSyncAttempt', scope, attempt), e.recordSyncAttempt(scope, attempt)),
    recordPersonalizationSnapshot: (scope, s) => recordPersonalizationSnapshot(e, scope, s),
    latestPersonalizationSnapshot: (scope) => scoped('learning.latestPersonalizationSnapshot', scope, () => e.latestPersonalizationSnapshot(scope)),
    importTradeCase: (scope, input) => importTradeCase(e, scope, input),
    linkCaseMemory: (scope, caseId, memoryId) => linkCaseMemory(e, scope, caseId, memoryId),
    caseMemoryScopes: (limit) => scopes('learning.caseMemoryScopes', limit, (n) => e.caseMemoryScopes(n)),
    enqueueExtraction: async (scope, t) => (checkExtractionTurn('learning.enqueueExtraction', scope, t), e.enqueueExtraction(scope, t)),
    claimExtractions: async (scope, c) => e.claimExtractions(scope, c, checkExtractionClaim('learning.claimExtractions', scope, c)),
    completeExtractions: (scope, ids) => completeExtractions(e, scope, ids),
    extractionScopes: (limit) => scopes('learning.extractionScopes', limit, (n) => e.extractionScopes(n)),
    stats: (scope, options) => stats(e, scope, options),
  };
}
