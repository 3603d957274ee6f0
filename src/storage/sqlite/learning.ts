/**
 * The `learning` domain on SQLite: the engine's statements (this file, `learning-capture.ts` for the shared
 * drivers' row operations, `learning-mirror.ts` for the side tables) under the shared domain's checks and rules
 * (`learningStorageOf`). Every statement filters on `user_id` and the exact `agent_id` (`''` for user-level
 * rows); every write runs in one `BEGIN IMMEDIATE` transaction.
 */
import { type LearningEngine, learningStorageOf } from '../learning-domain';
import {
  type CaseOrder, importedCaseFields, importedTradeFields, knownImport, type MethodologyFields, type MethodologyStatePatch, methodologyRankSql, type PreferenceFields,
  type PreferenceStatePatch,
} from '../learning-logic';
import type { ImportedTradeCase, LearningScope, LearningStorage, MethodologyQuery, MethodologyRecord, PreferenceQuery, PreferenceRecord, RoleCaseQuery, TradeQuery } from '../learning-types';
import type { SqliteHandle } from './handle';
import { capture, insertPreferenceRow, observeIn } from './learning-capture';
import * as mirror from './learning-mirror';
import { S, scopeOfRow, sp, type SqliteLearningState, sqliteLearningState, toCase, toMethodology, toPreference, toTrade } from './learning-rows';
import { placeholders } from './rows';

export { learningMigrations } from './learning-schema';

const STATE_RANK = methodologyRankSql();
const CASE_ORDER: Readonly<Record<CaseOrder, string>> = { oldest: 'id', newest_reflection: 'reflected_at DESC, id DESC', newest: 'id DESC' };

function listTrades(st: SqliteLearningState, scope: LearningScope, query: TradeQuery, limit: number) {
  const where = [S];
  const args: unknown[] = [...sp(scope)];
  if (query.asset !== undefined) (where.push('asset = ?'), args.push(query.asset));
  if (query.status !== undefined) (where.push('status = ?'), args.push(query.status));
  if (query.action !== undefined) (where.push('action = ?'), args.push(query.action));
  if (query.sessionId !== undefined) (where.push('session_id = ?'), args.push(query.sessionId));
  return st.handle.read('learning.listTrades', () => st.all(`SELECT * FROM trade_history WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT ?`, ...args, limit)).map(toTrade);
}

/** A wanted id when no row of the table has it. */
const freeId = (st: SqliteLearningState, table: string, wanted: number | undefined) => (wanted !== undefined && !st.get(`SELECT 1 AS x FROM ${table} WHERE id = ?`, wanted) ? wanted : null);

function upsertMethodology(st: SqliteLearningState, scope: LearningScope, f: MethodologyFields, wantedId: number | undefined) {
  return st.handle.write('learning.upsertMethodology', () => {
    const existing = st.get(`SELECT * FROM methodologies WHERE ${S} AND asset_class = ? AND normalized_text = ?`, ...sp(scope), f.assetClass, f.normalizedText);
    if (existing) return { methodology: toMethodology(existing), created: false };
    const info = st.run(
      `INSERT INTO methodologies (id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence,
        graduation_proposed_at, graduated_at, quarantined_at, state_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      freeId(st, 'methodologies', wantedId), ...sp(scope), f.assetClass, f.text, f.normalizedText, f.origin, f.sourceRef ?? null, f.state, f.uses, f.wins, f.confidence,
      f.graduationProposedAt ?? null, f.graduatedAt ?? null, f.quarantinedAt ?? null, f.stateReason ?? null, f.createdAt, f.updatedAt,
    );
    return { methodology: toMethodology(st.get('SELECT * FROM methodologies WHERE id = ?', Number(info.lastInsertRowid))!), created: true };
  });
}

function listMethodologies(st: SqliteLearningState, scope: LearningScope, query: MethodologyQuery, limit: number) {
  const where = [S];
  const args: unknown[] = [...sp(scope)];
  if (query.states !== undefined) (where.push(`state IN (${placeholders(query.states.length)})`), args.push(...query.states));
  if (query.assetClasses !== undefined) (where.push(`asset_class IN (${placeholders(query.assetClasses.length)})`), args.push(...query.assetClasses));
  if (query.ids !== undefined) (where.push('id IN (SELECT value FROM json_each(?))'), args.push(JSON.stringify(query.ids)));
  return st.handle
    .read('learning.listMethodologies', () => st.all(`SELECT * FROM methodologies WHERE ${where.join(' AND ')} ORDER BY ${STATE_RANK}, confidence DESC, uses DESC, id LIMIT ?`, ...args, limit))
    .map(toMethodology);
}

function updateMethodology(st: SqliteLearningState, scope: LearningScope, id: number, decide: (m: MethodologyRecord) => MethodologyStatePatch | undefined) {
  return st.handle.write('learning.transitionMethodology', () => {
    const r = st.get(`SELECT * FROM methodologies WHERE id = ? AND ${S}`, id, ...sp(scope));
    const patch = r && decide(toMethodology(r));
    if (!patch) return undefined;
    st.run(
      `UPDATE methodologies SET state = ?, graduated_at = ?, quarantined_at = ?, graduation_proposed_at = ?, state_reason = ?, updated_at = ? WHERE id = ? AND ${S}`,
      patch.state, patch.graduatedAt ?? null, patch.quarantinedAt ?? null, patch.graduationProposedAt ?? null, patch.stateReason ?? null, patch.updatedAt, id, ...sp(scope),
    );
    return toMethodology(st.get('SELECT * FROM methodologies WHERE id = ?', id)!);
  });
}

function listCases(st: SqliteLearningState, scope: LearningScope, query: RoleCaseQuery, limit: number, order: CaseOrder) {
  const where = [S];
  const args: unknown[] = [...sp(scope)];
  if (query.status === 'pending') where.push('reflected_at IS NULL');
  if (query.status === 'reflected') where.push('reflected_at IS NOT NULL');
  if (query.role !== undefined) (where.push('role = ?'), args.push(query.role));
  if (query.asset !== undefined) (where.push('asset = ?'), args.push(query.asset));
  if (query.withoutMemory === true) where.push('memory_id IS NULL');
  return st.handle.read('learning.listCases', () => st.all(`SELECT * FROM role_memory WHERE ${where.join(' AND ')} ORDER BY ${CASE_ORDER[order]} LIMIT ?`, ...args, limit)).map(toCase);
}

function upsertPreference(st: SqliteLearningState, scope: LearningScope, f: PreferenceFields, wantedId: number | undefined) {
  return st.handle.write('learning.upsertPreference', () => {
    const existing = st.get(`SELECT * FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = ? AND normalized_text = ?`, ...sp(scope), f.dimension, f.kind, f.normalizedText);
    if (existing) return { preference: toPreference(existing), created: false };
    const id = insertPreferenceRow(st, scope, f, freeId(st, 'learned_preferences', wantedId));
    return { preference: toPreference(st.get('SELECT * FROM learned_preferences WHERE id = ?', id)!), created: true };
  });
}

function listPreferences(st: SqliteLearningState, scope: LearningScope, query: PreferenceQuery, limit: number) {
  const where = [S];
  const args: unknown[] = [...sp(scope)];
  if (query.states !== undefined) (where.push(`state IN (${placeholders(query.states.length)})`), args.push(...query.states));
  if (query.kinds !== undefined) (where.push(`kind IN (${placeholders(query.kinds.length)})`), args.push(...query.kinds));
  if (query.dimension !== undefined) (where.push('dimension = ?'), args.push(query.dimension));
  return st.handle.read('learning.listPreferences', () => st.all(`SELECT * FROM learned_preferences WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, ...args, limit)).map(toPreference);
}

function updatePreference(st: SqliteLearningState, scope: LearningScope, id: number, decide: (p: PreferenceRecord) => PreferenceStatePatch | undefined) {
  return st.handle.write('learning.transitionPreference', () => {
    const r = st.get(`SELECT * FROM learned_preferences WHERE id = ? AND ${S}`, id, ...sp(scope));
    const patch = r && decide(toPreference(r));
    if (!patch) return undefined;
    st.run(
      'UPDATE learned_preferences SET state = ?, decided_at = ?, activated_at = ?, memory_id = ?, updated_at = ? WHERE id = ?',
      patch.state, patch.decidedAt ?? null, patch.activatedAt ?? null, patch.memoryId ?? null, patch.updatedAt, id,
    );
    return toPreference(st.get('SELECT * FROM learned_preferences WHERE id = ?', id)!);
  });
}

function importTradeCase(st: SqliteLearningState, scope: LearningScope, c: ImportedTradeCase) {
  return st.handle.write('learning.importTradeCase', () => {
    const known = st.get(`SELECT id FROM trade_history WHERE ${S} AND order_id = ?`, ...sp(scope), c.orderId);
    if (known) {
      const existing = st.get(`SELECT * FROM role_memory WHERE ${S} AND trade_id = ?`, ...sp(scope), known.id);
      return knownImport('learning.importTradeCase', c.orderId, existing && toCase(existing));
    }
    const t = importedTradeFields(c);
    const tradeId = Number(st.run(
      `INSERT INTO trade_history (user_id, agent_id, order_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price, notional_usd,
        fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, closed_quantity, exit_price, closed_at, holding_ms, outcome, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ...sp(scope), t.orderId, t.toolName, t.action, t.kind, t.asset, t.assetClass ?? null, t.side, t.direction ?? null, t.quantity, t.price, t.notionalUsd, t.feeUsd,
      t.realizedPnlUsd, t.role, JSON.stringify(t.methodologyIds), t.simulated ? 1 : 0, t.provider, t.at, t.status, t.closedQuantity, t.exitPrice ?? null, t.closedAt ?? null,
      t.holdingMs ?? null, t.outcome ?? null, c.now).lastInsertRowid);
    const k = importedCaseFields(c, tradeId);
    const caseId = Number(st.run(
      `INSERT INTO role_memory (id, user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms,
        methodology_ids, opened_at, closed_at, created_at, reflected_at, classification, reflection) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      freeId(st, 'role_memory', c.id), ...sp(scope), k.tradeId, k.role, k.asset, k.assetClass ?? null, k.kind, k.direction ?? null, k.summary, k.outcome, k.realizedPnlUsd,
      k.holdingMs, JSON.stringify(k.methodologyIds), k.openedAt, k.closedAt, k.createdAt, k.reflectedAt ?? null, k.classification ?? null, k.reflection ?? null).lastInsertRowid);
    return { case: toCase(st.get('SELECT * FROM role_memory WHERE id = ?', caseId)!), created: true };
  });
}

/** One row of the scope by id. */
function byId<T>(st: SqliteLearningState, operation: string, table: string, map: (r: Record<string, unknown>) => T, scope: LearningScope, id: number): T | undefined {
  const r = st.handle.read(operation, () => st.get(`SELECT * FROM ${table} WHERE id = ? AND ${S}`, id, ...sp(scope)));
  return r && map(r);
}

/** Distinct scopes of a table's rows (`where` filters), at most `n`. */
const scopes = (st: SqliteLearningState, operation: string, from: string, n: number) =>
  st.handle.read(operation, () => st.all(`SELECT DISTINCT user_id, agent_id FROM ${from} ORDER BY user_id, agent_id LIMIT ?`, n)).map(scopeOfRow);

function sqliteLearningEngine(st: SqliteLearningState): LearningEngine {
  const { handle } = st;
  return {
    capture: async (scope, input) => capture(st, scope, input),
    observe: async (scope, observations, now) => handle.write('learning.observePreferences', () => observeIn(st, scope, observations, now)),
    getTrade: async (scope, id) => byId(st, 'learning.getTrade', 'trade_history', toTrade, scope, id),
    listTrades: async (...a) => listTrades(st, ...a),
    upsertMethodology: async (...a) => upsertMethodology(st, ...a),
    getMethodology: async (scope, id) => byId(st, 'learning.getMethodology', 'methodologies', toMethodology, scope, id),
    listMethodologies: async (...a) => listMethodologies(st, ...a),
    updateMethodology: async (...a) => updateMethodology(st, ...a),
    listCases: async (...a) => listCases(st, ...a),
    markCaseReflected: async (scope, id, r) =>
      handle.write('learning.markCaseReflected', () =>
        st.run(`UPDATE role_memory SET reflected_at = ?, classification = ?, reflection = ?, lesson_memory_ids = ? WHERE id = ? AND ${S} AND reflected_at IS NULL`,
          r.now, r.classification, r.reflection, JSON.stringify(r.lessonMemoryIds), id, ...sp(scope)).changes === 1),
    upsertPreference: async (...a) => upsertPreference(st, ...a),
    getPreference: async (scope, id) => byId(st, 'learning.getPreference', 'learned_preferences', toPreference, scope, id),
    listPreferences: async (...a) => listPreferences(st, ...a),
    updatePreference: async (...a) => updatePreference(st, ...a),
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
    linkCaseMemory: async (scope, caseId, memoryId) =>
      handle.write('learning.linkCaseMemory', () => st.run(`UPDATE role_memory SET memory_id = ? WHERE id = ? AND ${S} AND memory_id IS NULL`, memoryId, caseId, ...sp(scope)).changes === 1),
    caseMemoryScopes: async (n) => scopes(st, 'learning.caseMemoryScopes', 'role_memory WHERE memory_id IS NULL', n),
    enqueueExtraction: async (...a) => mirror.enqueueExtraction(st, ...a),
    claimExtractions: async (...a) => mirror.claimExtractions(st, ...a),
    completeExtractions: async (...a) => mirror.completeExtractions(st, ...a),
    extractionScopes: async (n) => scopes(st, 'learning.extractionScopes', 'memory_extraction_queue', n),
    counts: async (...a) => mirror.counts(st, ...a),
  };
}

/** The `learning` domain on SQLite. */
export function createSqliteLearningStorage(handle: SqliteHandle): LearningStorage {
  return learningStorageOf(sqliteLearningEngine(sqliteLearningState(handle)));
}
