/**
 * The SQLite engine's row operations for the shared drivers (decision capture, preference evidence), and the
 * preference row insert they share with `upsertPreference`. They run inside the caller's `BEGIN IMMEDIATE`
 * transaction, so two processes attributing outcomes never double-count or lose an update.
 */
import type { CaptureInput } from '../learning-domain';
import { type CaptureOps, minedPreferenceFields, type ObserveOps, type PreferenceFields, runCapture, runObserve } from '../learning-logic';
import type { CaptureResult, LearningScope, MethodologyRecord, PreferenceObservation, PreferenceRecord, RoleCaseRecord, TradeRecord } from '../learning-types';
import { compactRecord, S, sp, type SqliteLearningState, toMethodology, toPreference, toTrade } from './learning-rows';

/** Insert a preference row (under `id` when given); its id. */
export function insertPreferenceRow(st: SqliteLearningState, scope: LearningScope, f: PreferenceFields, id: number | null): number {
  const info = st.run(
    `INSERT INTO learned_preferences (id, user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, contradictions,
      last_evidence_at, activated_at, decided_at, memory_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    id, ...sp(scope), f.dimension, f.kind, f.text, f.normalizedText, f.value ?? null, f.source, f.state, f.evidence, f.contradictions, f.lastEvidenceAt, f.activatedAt ?? null,
    f.decidedAt ?? null, f.memoryId ?? null, f.createdAt, f.updatedAt,
  );
  return Number(info.lastInsertRowid);
}

function insertTrade(st: SqliteLearningState, scope: LearningScope, ...[e, status, now]: Parameters<CaptureOps['insertTrade']>): TradeRecord {
  const info = st.run(
    `INSERT INTO trade_history (user_id, agent_id, order_id, session_id, turn_id, tool_call_id, tool_name, action, kind, asset, asset_class, side,
      direction, quantity, price, notional_usd, fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, details_json, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...sp(scope), e.orderId, e.sessionId ?? null, e.turnId ?? null, e.toolCallId ?? null, e.toolName, e.action, e.kind, e.asset, e.assetClass ?? null, e.side,
    e.direction ?? null, e.quantity, e.price, e.notionalUsd, e.feeUsd, e.realizedPnlUsd, e.role, JSON.stringify(e.methodologyIds), e.simulated ? 1 : 0,
    e.provider, e.at, status, e.details === undefined ? null : JSON.stringify(e.details), now,
  );
  // The row as stored, without reading it back (the hot path of decision capture).
  const { details, ...rest } = e;
  return compactRecord<TradeRecord>({
    ...rest, userId: scope.userId, agentId: scope.agentId, id: Number(info.lastInsertRowid), methodologyIds: [...e.methodologyIds], status, closedQuantity: 0,
    details: details === undefined ? undefined : (JSON.parse(JSON.stringify(details)) as Record<string, unknown>),
  });
}

function updateMethodologyScore(st: SqliteLearningState, scope: LearningScope, ...[m, s, now]: Parameters<CaptureOps['updateMethodologyScore']>): MethodologyRecord {
  st.run(
    `UPDATE methodologies SET uses = ?, wins = ?, confidence = ?, state = ?, graduation_proposed_at = ?, quarantined_at = ?, state_reason = ?, updated_at = ? WHERE id = ? AND ${S}`,
    s.uses, s.wins, s.confidence, s.state, s.graduationProposedAt ?? null, s.quarantinedAt ?? null, s.stateReason ?? null, now, m.id, ...sp(scope),
  );
  return compactRecord<MethodologyRecord>({
    ...m, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt, quarantinedAt: s.quarantinedAt,
    stateReason: s.stateReason, updatedAt: now,
  });
}

function insertCase(st: SqliteLearningState, scope: LearningScope, c: Parameters<CaptureOps['insertCase']>[0]): RoleCaseRecord | undefined {
  const info = st.run(
    `INSERT OR IGNORE INTO role_memory (user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd,
      holding_ms, methodology_ids, opened_at, closed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...sp(scope), c.tradeId, c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs,
    JSON.stringify(c.methodologyIds), c.openedAt, c.closedAt, c.createdAt,
  );
  if (info.changes !== 1) return undefined;
  return compactRecord<RoleCaseRecord>({ ...c, userId: scope.userId, agentId: scope.agentId, id: Number(info.lastInsertRowid), methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
}

function captureOps(st: SqliteLearningState, scope: LearningScope): CaptureOps {
  return {
    hasOrder: (orderId) => st.get(`SELECT 1 AS x FROM trade_history WHERE ${S} AND order_id = ?`, ...sp(scope), orderId) !== undefined,
    insertTrade: (...a) => insertTrade(st, scope, ...a),
    openTrades: (asset, kind) => st.all(`SELECT * FROM trade_history WHERE ${S} AND asset = ? AND kind = ? AND status = 'open' ORDER BY at, id`, ...sp(scope), asset, kind).map(toTrade),
    updateTrade(trade, patch) {
      st.run(
        `UPDATE trade_history SET closed_quantity = ?, realized_pnl_usd = ?, exit_price = ?, status = ?, closed_at = ?, holding_ms = ?, outcome = ? WHERE id = ? AND ${S}`,
        patch.closedQuantity, patch.realizedPnlUsd, patch.exitPrice, patch.status, patch.closedAt ?? null, patch.holdingMs ?? null, patch.outcome ?? null, trade.id, ...sp(scope),
      );
      return compactRecord<TradeRecord>({ ...trade, ...patch });
    },
    setClosedIds(trade, closed) {
      st.run(`UPDATE trade_history SET closes_trade_ids = ? WHERE id = ? AND ${S}`, JSON.stringify(closed), trade.id, ...sp(scope));
      return { ...trade, closesTradeIds: [...closed] };
    },
    methodology: (id) => {
      const r = st.get(`SELECT * FROM methodologies WHERE id = ? AND ${S}`, id, ...sp(scope));
      return r && toMethodology(r);
    },
    insertAttribution: (mid, tid, outcome, now) =>
      st.run('INSERT OR IGNORE INTO methodology_outcomes (methodology_id, trade_id, user_id, agent_id, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?)', mid, tid, ...sp(scope), outcome, now)
        .changes === 1,
    updateMethodologyScore: (...a) => updateMethodologyScore(st, scope, ...a),
    insertCase: (c) => insertCase(st, scope, c),
  };
}

function observeOps(st: SqliteLearningState, scope: LearningScope, now: string): ObserveOps {
  return {
    match: (dimension, normalizedText) =>
      st.get(`SELECT id FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = 'behavioural' AND normalized_text = ?`, ...sp(scope), dimension, normalizedText)?.id as number | undefined,
    insertMined: (ob) => insertPreferenceRow(st, scope, minedPreferenceFields(ob, now), null),
    support: (id) => void st.run('UPDATE learned_preferences SET evidence = evidence + 1, last_evidence_at = ?, updated_at = ? WHERE id = ?', now, now, id),
    contradict: (id) => void st.run('UPDATE learned_preferences SET contradictions = contradictions + 1, updated_at = ? WHERE id = ?', now, id),
    rivals: (dimension, id) =>
      st.all(`SELECT id FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = 'behavioural' AND id != ? AND state != 'rejected'`, ...sp(scope), dimension, id).map((r) => r.id as number),
  };
}

/** Apply observations inside the caller's transaction; the touched preferences by id. */
export function observeIn(st: SqliteLearningState, scope: LearningScope, observations: readonly PreferenceObservation[], now: string): PreferenceRecord[] {
  if (observations.length === 0) return [];
  const touched = runObserve(observeOps(st, scope, now), observations);
  return st.all(`SELECT * FROM learned_preferences WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, JSON.stringify(touched)).map(toPreference);
}

/** One transaction for the whole turn: trades, closes, attribution, cases and preference evidence. */
export function capture(st: SqliteLearningState, scope: LearningScope, input: CaptureInput): CaptureResult {
  const { executions, policy, now, observations = [] } = input;
  return st.handle.write('learning.recordExecutions', () => ({ ...runCapture(captureOps(st, scope), executions, policy, now), preferences: observeIn(st, scope, observations, now) }));
}
