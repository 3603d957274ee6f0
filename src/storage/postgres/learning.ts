/**
 * The `learning` domain on Postgres: the engine's statements (this file, `learning-capture.ts` for the shared
 * drivers over staged state, `learning-mirror.ts` for the side tables) under the shared domain's checks and
 * rules (`learningStorageOf`). Every statement filters on `user_id` and the exact `agent_id` (`''` for
 * user-level rows). `recordExecutions` and `observePreferences` take a transaction-scoped advisory lock on the
 * scope, so two instances attributing outcomes for one tenant serialise.
 */
import { type LearningEngine, learningStorageOf } from '../learning-domain';
import {
  type CaseOrder, importedCaseFields, importedTradeFields, knownImport, type MethodologyFields, type MethodologyStatePatch, methodologyRankSql, type PreferenceFields,
  type PreferenceStatePatch,
} from '../learning-logic';
import type { ImportedTradeCase, LearningScope, LearningStorage, MethodologyQuery, MethodologyRecord, PreferenceQuery, PreferenceRecord, RoleCaseQuery, TradeQuery } from '../learning-types';
import type { PgHandle, PgTx } from './handle';
import { capture, observeIn } from './learning-capture';
import * as mirror from './learning-mirror';
import { advanceIdentity, lockScope, type PgLearningState, pgLearningState, type Row, S, scopeOfRow, sp, toCase, toMethodology, toPreference, toTrade } from './learning-rows';

const STATE_RANK = methodologyRankSql();
const CASE_ORDER: Readonly<Record<CaseOrder, string>> = { oldest: 'id', newest_reflection: 'reflected_at DESC, id DESC', newest: 'id DESC' };

/** `SELECT *` of a table under the scope and `where`; `args` are the scope's two then the filters' (see {@link filters}); ordered and limited. */
async function select(st: PgLearningState, operation: string, table: string, where: readonly string[], args: readonly unknown[], orderBy: string, limit: number): Promise<Row[]> {
  const params = [...args, limit];
  return st.h.op(operation).all(`SELECT * FROM ${table} WHERE ${[S(), ...where].join(' AND ')} ORDER BY ${orderBy} LIMIT $${params.length}`, params);
}

/** A filter builder numbering parameters after the scope's two. */
function filters(scope: LearningScope) {
  const where: string[] = [];
  const args: unknown[] = [...sp(scope)];
  const add = (sql: (n: number) => string, value: unknown) => (args.push(value), where.push(sql(args.length)));
  return { where, args, add };
}

function listTrades(st: PgLearningState, scope: LearningScope, query: TradeQuery, limit: number) {
  const f = filters(scope);
  for (const [col, v] of [['asset', query.asset], ['status', query.status], ['action', query.action], ['session_id', query.sessionId]] as const) if (v !== undefined) f.add((n) => `${col} = $${n}`, v);
  return select(st, 'learning.listTrades', st.T, f.where, f.args, 'at DESC, id DESC', limit).then((rows) => rows.map(toTrade));
}

/** A wanted id when no row of the table has it. */
async function freeId(tx: PgTx, table: string, wanted: number | undefined): Promise<number | null> {
  return wanted !== undefined && !(await tx.get(`SELECT 1 AS x FROM ${table} WHERE id = $1`, [wanted])) ? wanted : null;
}

function upsertMethodology(st: PgLearningState, scope: LearningScope, f: MethodologyFields, wantedId: number | undefined) {
  const { MT } = st;
  return st.h.tx('learning.upsertMethodology', async (tx) => {
    const keepId = await freeId(tx, MT, wantedId);
    const inserted = await tx.get(
      `INSERT INTO ${MT} (id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence, graduation_proposed_at, graduated_at,
         quarantined_at, state_reason, created_at, updated_at)
       OVERRIDING SYSTEM VALUE
       VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${MT}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
       ON CONFLICT (user_id, agent_id, asset_class, normalized_text) DO NOTHING RETURNING *`,
      [
        keepId, ...sp(scope), f.assetClass, f.text, f.normalizedText, f.origin, f.sourceRef ?? null, f.state, f.uses, f.wins, f.confidence, f.graduationProposedAt ?? null,
        f.graduatedAt ?? null, f.quarantinedAt ?? null, f.stateReason ?? null, f.createdAt, f.updatedAt,
      ],
    );
    if (inserted && keepId !== null) await advanceIdentity(tx, MT);
    if (inserted) return { methodology: toMethodology(inserted), created: true };
    const existing = await tx.get(`SELECT * FROM ${MT} WHERE ${S()} AND asset_class = $3 AND normalized_text = $4`, [...sp(scope), f.assetClass, f.normalizedText]);
    return { methodology: toMethodology(existing!), created: false };
  });
}

function listMethodologies(st: PgLearningState, scope: LearningScope, query: MethodologyQuery, limit: number) {
  const f = filters(scope);
  if (query.states !== undefined) f.add((n) => `state = ANY($${n}::text[])`, [...query.states]);
  if (query.assetClasses !== undefined) f.add((n) => `asset_class = ANY($${n}::text[])`, [...query.assetClasses]);
  if (query.ids !== undefined) f.add((n) => `id = ANY($${n}::bigint[])`, [...query.ids]);
  return select(st, 'learning.listMethodologies', st.MT, f.where, f.args, `${STATE_RANK}, confidence DESC, uses DESC, id`, limit).then((rows) => rows.map(toMethodology));
}

function updateMethodology(st: PgLearningState, scope: LearningScope, id: number, decide: (m: MethodologyRecord) => MethodologyStatePatch | undefined) {
  return st.h.tx('learning.transitionMethodology', async (tx) => {
    const r = await tx.get(`SELECT * FROM ${st.MT} WHERE id = $3 AND ${S()} FOR UPDATE`, [...sp(scope), id]);
    const patch = r && decide(toMethodology(r));
    if (!patch) return undefined;
    const next = await tx.get(
      `UPDATE ${st.MT} SET state = $1, graduated_at = $2, quarantined_at = $3, graduation_proposed_at = $4, state_reason = $5, updated_at = $6 WHERE id = $7 AND ${S(8)} RETURNING *`,
      [patch.state, patch.graduatedAt ?? null, patch.quarantinedAt ?? null, patch.graduationProposedAt ?? null, patch.stateReason ?? null, patch.updatedAt, id, ...sp(scope)],
    );
    return toMethodology(next!);
  });
}

function listCases(st: PgLearningState, scope: LearningScope, query: RoleCaseQuery, limit: number, order: CaseOrder) {
  const f = filters(scope);
  if (query.status === 'pending') f.where.push('reflected_at IS NULL');
  if (query.status === 'reflected') f.where.push('reflected_at IS NOT NULL');
  if (query.role !== undefined) f.add((n) => `role = $${n}`, query.role);
  if (query.asset !== undefined) f.add((n) => `asset = $${n}`, query.asset);
  if (query.withoutMemory === true) f.where.push('memory_id IS NULL');
  return select(st, 'learning.listCases', st.RM, f.where, f.args, CASE_ORDER[order], limit).then((rows) => rows.map(toCase));
}

function upsertPreference(st: PgLearningState, scope: LearningScope, f: PreferenceFields, wantedId: number | undefined) {
  const { LP } = st;
  return st.h.tx('learning.upsertPreference', async (tx) => {
    const keepId = await freeId(tx, LP, wantedId);
    const inserted = await tx.get(
      `INSERT INTO ${LP} (id, user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, contradictions, last_evidence_at, activated_at,
         decided_at, memory_id, created_at, updated_at)
       OVERRIDING SYSTEM VALUE
       VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${LP}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
       ON CONFLICT (user_id, agent_id, dimension, kind, normalized_text) DO NOTHING RETURNING *`,
      [
        keepId, ...sp(scope), f.dimension, f.kind, f.text, f.normalizedText, f.value ?? null, f.source, f.state, f.evidence, f.contradictions, f.lastEvidenceAt,
        f.activatedAt ?? null, f.decidedAt ?? null, f.memoryId ?? null, f.createdAt, f.updatedAt,
      ],
    );
    if (inserted && keepId !== null) await advanceIdentity(tx, LP);
    if (inserted) return { preference: toPreference(inserted), created: true };
    const existing = await tx.get(`SELECT * FROM ${LP} WHERE ${S()} AND dimension = $3 AND kind = $4 AND normalized_text = $5`, [...sp(scope), f.dimension, f.kind, f.normalizedText]);
    return { preference: toPreference(existing!), created: false };
  });
}

function listPreferences(st: PgLearningState, scope: LearningScope, query: PreferenceQuery, limit: number) {
  const f = filters(scope);
  if (query.states !== undefined) f.add((n) => `state = ANY($${n}::text[])`, [...query.states]);
  if (query.kinds !== undefined) f.add((n) => `kind = ANY($${n}::text[])`, [...query.kinds]);
  if (query.dimension !== undefined) f.add((n) => `dimension = $${n}`, query.dimension);
  return select(st, 'learning.listPreferences', st.LP, f.where, f.args, 'id DESC', limit).then((rows) => rows.map(toPreference));
}

function updatePreference(st: PgLearningState, scope: LearningScope, id: number, decide: (p: PreferenceRecord) => PreferenceStatePatch | undefined) {
  return st.h.tx('learning.transitionPreference', async (tx) => {
    const r = await tx.get(`SELECT * FROM ${st.LP} WHERE id = $3 AND ${S()} FOR UPDATE`, [...sp(scope), id]);
    const patch = r && decide(toPreference(r));
    if (!patch) return undefined;
    const next = await tx.get(
      `UPDATE ${st.LP} SET state = $1, decided_at = $2, activated_at = $3, memory_id = $4, updated_at = $5 WHERE id = $6 RETURNING *`,
      [patch.state, patch.decidedAt ?? null, patch.activatedAt ?? null, patch.memoryId ?? null, patch.updatedAt, id],
    );
    return toPreference(next!);
  });
}

function importTradeCase(st: PgLearningState, scope: LearningScope, c: ImportedTradeCase) {
  const { T, RM } = st;
  return st.h.tx('learning.importTradeCase', async (tx) => {
    const known = await tx.get(`SELECT id FROM ${T} WHERE ${S()} AND order_id = $3`, [...sp(scope), c.orderId]);
    if (known) {
      const existing = await tx.get(`SELECT * FROM ${RM} WHERE ${S()} AND trade_id = $3`, [...sp(scope), Number(known.id)]);
      return knownImport('learning.importTradeCase', c.orderId, existing && toCase(existing));
    }
    const t = importedTradeFields(c);
    const trade = await tx.get(
      `INSERT INTO ${T} (user_id, agent_id, order_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price, notional_usd, fee_usd, realized_pnl_usd,
         role, methodology_ids, simulated, provider, at, status, closed_quantity, exit_price, closed_at, holding_ms, outcome, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27) RETURNING id`,
      [
        ...sp(scope), t.orderId, t.toolName, t.action, t.kind, t.asset, t.assetClass ?? null, t.side, t.direction ?? null, t.quantity, t.price, t.notionalUsd, t.feeUsd,
        t.realizedPnlUsd, t.role, JSON.stringify(t.methodologyIds), t.simulated, t.provider, t.at, t.status, t.closedQuantity, t.exitPrice ?? null, t.closedAt ?? null,
        t.holdingMs ?? null, t.outcome ?? null, c.now,
      ],
    );
    const k = importedCaseFields(c, Number(trade!.id));
    const keepId = await freeId(tx, RM, c.id);
    const row = await tx.get(
      `INSERT INTO ${RM} (id, user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms, methodology_ids,
         opened_at, closed_at, created_at, reflected_at, classification, reflection)
       OVERRIDING SYSTEM VALUE
       VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${RM}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
       RETURNING *`,
      [
        keepId, ...sp(scope), k.tradeId, k.role, k.asset, k.assetClass ?? null, k.kind, k.direction ?? null, k.summary, k.outcome, k.realizedPnlUsd, k.holdingMs,
        JSON.stringify(k.methodologyIds), k.openedAt, k.closedAt, k.createdAt, k.reflectedAt ?? null, k.classification ?? null, k.reflection ?? null,
      ],
    );
    if (keepId !== null) await advanceIdentity(tx, RM);
    return { case: toCase(row!), created: true };
  });
}

/** One row of the scope by id. */
async function byId<T>(st: PgLearningState, operation: string, table: string, map: (r: Row) => T, scope: LearningScope, id: number): Promise<T | undefined> {
  const r = await st.h.op(operation).get(`SELECT * FROM ${table} WHERE id = $3 AND ${S()}`, [...sp(scope), id]);
  return r && map(r);
}

/** Distinct scopes of a table's rows (`from` may filter), at most `n`. */
async function scopes(st: PgLearningState, operation: string, from: string, n: number) {
  return (await st.h.op(operation).all(`SELECT DISTINCT user_id, agent_id FROM ${from} ORDER BY user_id, agent_id LIMIT $1`, [n])).map(scopeOfRow);
}

function pgLearningEngine(st: PgLearningState): LearningEngine {
  const { h, RM } = st;
  const locked = <T>(operation: string, scope: LearningScope, fn: (tx: PgTx) => Promise<T>) => h.tx(operation, async (tx) => (await lockScope(st, tx, scope), fn(tx)));
  return {
    capture: (scope, input) => locked('learning.recordExecutions', scope, (tx) => capture(st, tx, scope, input)),
    observe: (scope, observations, now) => locked('learning.observePreferences', scope, (tx) => observeIn(st, tx, scope, observations, now)),
    getTrade: (scope, id) => byId(st, 'learning.getTrade', st.T, toTrade, scope, id),
    listTrades: (...a) => listTrades(st, ...a),
    upsertMethodology: (...a) => upsertMethodology(st, ...a),
    getMethodology: (scope, id) => byId(st, 'learning.getMethodology', st.MT, toMethodology, scope, id),
    listMethodologies: (...a) => listMethodologies(st, ...a),
    updateMethodology: (...a) => updateMethodology(st, ...a),
    listCases: (...a) => listCases(st, ...a),
    markCaseReflected: async (scope, id, r) =>
      (await h.op('learning.markCaseReflected').run(
        `UPDATE ${RM} SET reflected_at = $1, classification = $2, reflection = $3, lesson_memory_ids = $4 WHERE id = $5 AND ${S(6)} AND reflected_at IS NULL`,
        [r.now, r.classification, r.reflection, JSON.stringify(r.lessonMemoryIds), id, ...sp(scope)],
      )) === 1,
    upsertPreference: (...a) => upsertPreference(st, ...a),
    getPreference: (scope, id) => byId(st, 'learning.getPreference', st.LP, toPreference, scope, id),
    listPreferences: (...a) => listPreferences(st, ...a),
    updatePreference: (...a) => updatePreference(st, ...a),
    insertPerpsFills: (...a) => mirror.insertPerpsFills(st, ...a),
    insertExternalSpot: (...a) => mirror.insertExternalSpot(st, ...a),
    listPerpsFills: (...a) => mirror.listPerpsFills(st, ...a),
    listExternalSpot: (...a) => mirror.listExternalSpot(st, ...a),
    getSyncState: (...a) => mirror.getSyncState(st, ...a),
    listSyncStates: (scope) => mirror.listSyncStates(st, scope),
    recordSyncAttempt: (...a) => mirror.recordSyncAttempt(st, ...a),
    recordPersonalizationSnapshot: (...a) => mirror.recordPersonalizationSnapshot(st, ...a),
    latestPersonalizationSnapshot: (scope) => mirror.latestPersonalizationSnapshot(st, scope),
    importTradeCase: (...a) => importTradeCase(st, ...a),
    linkCaseMemory: async (scope, caseId, memoryId) =>
      (await h.op('learning.linkCaseMemory').run(`UPDATE ${RM} SET memory_id = $1 WHERE id = $2 AND ${S(3)} AND memory_id IS NULL`, [memoryId, caseId, ...sp(scope)])) === 1,
    caseMemoryScopes: (n) => scopes(st, 'learning.caseMemoryScopes', `${RM} WHERE memory_id IS NULL`, n),
    enqueueExtraction: (...a) => mirror.enqueueExtraction(st, ...a),
    claimExtractions: (...a) => mirror.claimExtractions(st, ...a),
    completeExtractions: (...a) => mirror.completeExtractions(st, ...a),
    extractionScopes: (n) => scopes(st, 'learning.extractionScopes', st.EQ, n),
    counts: (...a) => mirror.counts(st, ...a),
  };
}

/** The `learning` domain on Postgres. */
export function createPgLearningStorage(h: PgHandle): LearningStorage {
  return learningStorageOf(pgLearningEngine(pgLearningState(h)));
}
