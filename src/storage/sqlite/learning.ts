/**
 * The `learning` domain on SQLite. Every statement filters on `user_id` and the exact `agent_id` (`''` for
 * user-level rows); `recordExecutions` runs the shared capture driver inside one `BEGIN IMMEDIATE`
 * transaction, so two processes attributing outcomes never double-count or lose an update.
 */
import {
  type CaptureOps, checkCaptureInput, checkLearningScope, checkNewMethodology, checkNewPreference, checkObservations, checkPerpsFill, checkRowId, checkSpotActivity,
  checkStateList, checkSyncAttempt, checkTransition, checkImportedTradeCase, checkExtractionClaim, checkExtractionTurn, checkRowIds, checkMethodologyRestore, checkPreferenceRestore, METHODOLOGY_STATES, PREFERENCE_STATES, queued, runCapture,
} from '../learning-logic';
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, LearningStorage, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceObservation,
  PreferenceRecord, RoleCaseRecord, TradeRecord,
} from '../learning-types';
import { checkLimit, invalidArgument } from './checks';
import type { SqliteHandle } from './handle';
import { opt, placeholders } from './rows';

export { learningMigrations } from './learning-schema';

type Row = Record<string, unknown>;
const S = 'user_id = ? AND agent_id = ?';
const sp = (s: LearningScope): [string, string] => [s.userId, s.agentId ?? ''];
const agent = (r: Row) => (r.agent_id === '' ? {} : { agentId: r.agent_id as string });
const ids = (v: unknown): number[] => (typeof v === 'string' ? (JSON.parse(v) as number[]) : []);
const o = <K extends string>(k: K, v: unknown) => opt(k, v as never);

function toTrade(r: Row): TradeRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), orderId: r.order_id as string, ...o('sessionId', r.session_id), ...o('turnId', r.turn_id),
    ...o('toolCallId', r.tool_call_id), toolName: r.tool_name as string, action: r.action as TradeRecord['action'], kind: r.kind as TradeRecord['kind'],
    asset: r.asset as string, ...o('assetClass', r.asset_class), side: r.side as string, ...o('direction', r.direction), quantity: r.quantity as number,
    price: r.price as number, notionalUsd: r.notional_usd as number, feeUsd: r.fee_usd as number, realizedPnlUsd: r.realized_pnl_usd as number,
    role: r.role as string, methodologyIds: ids(r.methodology_ids), simulated: r.simulated === 1, provider: r.provider as string, at: r.at as string,
    status: r.status as TradeRecord['status'], closedQuantity: r.closed_quantity as number, ...o('exitPrice', r.exit_price), ...o('closedAt', r.closed_at),
    ...o('holdingMs', r.holding_ms), ...o('outcome', r.outcome), ...(r.closes_trade_ids == null ? {} : { closesTradeIds: ids(r.closes_trade_ids) }),
    ...(r.details_json == null ? {} : { details: JSON.parse(r.details_json as string) as Record<string, unknown> }),
  };
}

function toExtraction(r: Row): ExtractionTurnRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), sessionId: r.session_id as string, turnId: r.turn_id as string, text: r.text as string,
    createdAt: r.created_at as string, attempts: r.attempts as number,
  };
}

function toMethodology(r: Row): MethodologyRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), assetClass: r.asset_class as string, text: r.text as string,
    normalizedText: r.normalized_text as string, origin: r.origin as MethodologyRecord['origin'], ...o('sourceRef', r.source_ref),
    state: r.state as MethodologyRecord['state'], uses: r.uses as number, wins: r.wins as number, confidence: r.confidence as number,
    ...o('graduationProposedAt', r.graduation_proposed_at), ...o('graduatedAt', r.graduated_at), ...o('quarantinedAt', r.quarantined_at),
    ...o('stateReason', r.state_reason), createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

function toCase(r: Row): RoleCaseRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), tradeId: r.trade_id as number, role: r.role as string, asset: r.asset as string,
    ...o('assetClass', r.asset_class), kind: r.kind as RoleCaseRecord['kind'], ...o('direction', r.direction), summary: r.summary as string,
    outcome: r.outcome as RoleCaseRecord['outcome'], realizedPnlUsd: r.realized_pnl_usd as number, holdingMs: r.holding_ms as number,
    methodologyIds: ids(r.methodology_ids), openedAt: r.opened_at as string, closedAt: r.closed_at as string, createdAt: r.created_at as string,
    ...o('reflectedAt', r.reflected_at), ...o('classification', r.classification), ...o('reflection', r.reflection), lessonMemoryIds: ids(r.lesson_memory_ids),
    ...o('memoryId', r.memory_id),
  };
}

function toPreference(r: Row): PreferenceRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), dimension: r.dimension as string, kind: r.kind as PreferenceRecord['kind'],
    text: r.text as string, normalizedText: r.normalized_text as string, ...o('value', r.value), source: r.source as PreferenceRecord['source'],
    state: r.state as PreferenceRecord['state'], evidence: r.evidence as number, contradictions: r.contradictions as number,
    lastEvidenceAt: r.last_evidence_at as string, ...o('activatedAt', r.activated_at), ...o('decidedAt', r.decided_at), ...o('memoryId', r.memory_id),
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

function toFill(r: Row): PerpsFillRecord {
  return {
    id: r.id as number, subAccountId: r.sub_account_id as string, ...o('walletAddress', r.wallet_address), oid: r.oid as string, tsMs: r.ts_ms as number,
    symbol: r.symbol as string, side: r.side as string, ...o('dir', r.dir), size: r.size as number, price: r.price as number, fee: r.fee as number,
    closedPnl: r.closed_pnl as number, ...o('rawJson', r.raw_json), fillUid: r.fill_uid as string, createdAt: r.created_at as string,
  };
}

function toSpot(r: Row): ExternalSpotRecord {
  return {
    id: r.id as number, txHash: r.tx_hash as string, tsMs: r.ts_ms as number, type: r.type as string, ...o('fromToken', r.from_token), ...o('toToken', r.to_token),
    ...o('amount', r.amount), ...o('valueUsd', r.value_usd), status: r.status as string, ...o('rawJson', r.raw_json), createdAt: r.created_at as string,
  };
}

function toSync(r: Row): HistorySyncState {
  return {
    source: r.source as string, subAccountId: r.sub_account_id as string, ...o('lastSyncedTsMs', r.last_synced_ts_ms), lastSyncedAt: r.last_synced_at as string,
    ...o('lastError', r.last_error), consecutiveFailures: r.consecutive_failures as number,
  };
}

function toSnapshot(r: Row): PersonalizationSnapshot {
  return {
    id: r.id as number, sessionWatermark: r.session_watermark as string, sessionIds: JSON.parse(r.session_ids as string) as string[],
    factHashes: JSON.parse(r.fact_hashes as string) as string[], writtenIds: ids(r.written_ids), createdAt: r.created_at as string,
  };
}

/** A record without its `undefined` fields (optional fields stay absent, as when read from a row). */
function compactRecord<T extends object>(value: { [K in keyof T]?: T[K] | undefined } & object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

const STATE_RANK = `CASE state WHEN 'graduated' THEN 0 WHEN 'candidate' THEN 1 WHEN 'proposed' THEN 2 ELSE 3 END`;


/** The `learning` domain on SQLite. */
export function createSqliteLearningStorage(handle: SqliteHandle): LearningStorage {
  const p = (sql: string) => handle.prepare(sql);
  const get = (sql: string, ...args: unknown[]) => p(sql).get(...args) as Row | undefined;
  const all = (sql: string, ...args: unknown[]) => p(sql).all(...args) as Row[];

  const captureOps = (scope: LearningScope): CaptureOps => ({
    hasOrder: (orderId) => get(`SELECT 1 AS x FROM trade_history WHERE ${S} AND order_id = ?`, ...sp(scope), orderId) !== undefined,
    insertTrade(e, status, now) {
      const info = p(`INSERT INTO trade_history (user_id, agent_id, order_id, session_id, turn_id, tool_call_id, tool_name, action, kind, asset, asset_class, side,
        direction, quantity, price, notional_usd, fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, details_json, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
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
    },
    openTrades: (asset, kind) =>
      all(`SELECT * FROM trade_history WHERE ${S} AND asset = ? AND kind = ? AND status = 'open' ORDER BY at, id`, ...sp(scope), asset, kind).map(toTrade),
    updateTrade(trade, patch) {
      p(`UPDATE trade_history SET closed_quantity = ?, realized_pnl_usd = ?, exit_price = ?, status = ?, closed_at = ?, holding_ms = ?, outcome = ? WHERE id = ? AND ${S}`).run(
        patch.closedQuantity, patch.realizedPnlUsd, patch.exitPrice, patch.status, patch.closedAt ?? null, patch.holdingMs ?? null, patch.outcome ?? null, trade.id, ...sp(scope),
      );
      return compactRecord<TradeRecord>({ ...trade, ...patch });
    },
    setClosedIds(trade, closed) {
      p(`UPDATE trade_history SET closes_trade_ids = ? WHERE id = ? AND ${S}`).run(JSON.stringify(closed), trade.id, ...sp(scope));
      return { ...trade, closesTradeIds: [...closed] };
    },
    methodology: (id) => {
      const r = get(`SELECT * FROM methodologies WHERE id = ? AND ${S}`, id, ...sp(scope));
      return r && toMethodology(r);
    },
    insertAttribution: (mid, tid, outcome, now) =>
      p('INSERT OR IGNORE INTO methodology_outcomes (methodology_id, trade_id, user_id, agent_id, outcome, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(mid, tid, ...sp(scope), outcome, now)
        .changes === 1,
    updateMethodologyScore(m, s, now) {
      p(`UPDATE methodologies SET uses = ?, wins = ?, confidence = ?, state = ?, graduation_proposed_at = ?, quarantined_at = ?, state_reason = ?, updated_at = ?
        WHERE id = ? AND ${S}`).run(s.uses, s.wins, s.confidence, s.state, s.graduationProposedAt ?? null, s.quarantinedAt ?? null, s.stateReason ?? null, now, m.id, ...sp(scope));
      return compactRecord<MethodologyRecord>({
        ...m, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt, quarantinedAt: s.quarantinedAt,
        stateReason: s.stateReason, updatedAt: now,
      });
    },
    insertCase(c) {
      const info = p(`INSERT OR IGNORE INTO role_memory (user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd,
        holding_ms, methodology_ids, opened_at, closed_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        ...sp(scope), c.tradeId, c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs,
        JSON.stringify(c.methodologyIds), c.openedAt, c.closedAt, c.createdAt,
      );
      if (info.changes !== 1) return undefined;
      return compactRecord<RoleCaseRecord>({ ...c, userId: scope.userId, agentId: scope.agentId, id: Number(info.lastInsertRowid), methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
    },
  });

  /** Apply preference observations inside the caller's transaction. */
  const observeIn = (scope: LearningScope, observations: readonly PreferenceObservation[], now: string): PreferenceRecord[] => {
    if (observations.length === 0) return [];
    const touched = new Set<number>();
    for (const ob of observations) {
      const match = get(`SELECT * FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = 'behavioural' AND normalized_text = ?`, ...sp(scope), ob.dimension, ob.normalizedText);
      if (ob.effect === 'contradict') {
        if (match) {
          p('UPDATE learned_preferences SET contradictions = contradictions + 1, updated_at = ? WHERE id = ?').run(now, match.id);
          touched.add(match.id as number);
        }
        continue;
      }
      let id = match?.id as number | undefined;
      if (id === undefined) {
        id = Number(p(`INSERT INTO learned_preferences (user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, last_evidence_at, created_at, updated_at)
          VALUES (?, ?, ?, 'behavioural', ?, ?, ?, 'mined', 'proposed', 1, ?, ?, ?)`).run(...sp(scope), ob.dimension, ob.text, ob.normalizedText, ob.value ?? null, now, now, now).lastInsertRowid);
      } else p('UPDATE learned_preferences SET evidence = evidence + 1, last_evidence_at = ?, updated_at = ? WHERE id = ?').run(now, now, id);
      touched.add(id);
      for (const other of all(`SELECT id FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = 'behavioural' AND id != ? AND state != 'rejected'`, ...sp(scope), ob.dimension, id)) {
        p('UPDATE learned_preferences SET contradictions = contradictions + 1, updated_at = ? WHERE id = ?').run(now, other.id);
        touched.add(other.id as number);
      }
    }
    return all(`SELECT * FROM learned_preferences WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, JSON.stringify([...touched])).map(toPreference);
  };

  return {
    async recordExecutions(scope, input) {
      const op = 'learning.recordExecutions';
      checkCaptureInput(op, scope, input);
      const { executions, policy, now, observations = [] } = input;
      if (executions.length === 0 && observations.length === 0) return { recorded: [], duplicates: [], closed: [], updated: [], methodologyChanges: [], cases: [], preferences: [] };
      // One transaction for the whole turn: trades, closes, attribution, cases and preference evidence.
      return handle.write(op, () => ({ ...runCapture(captureOps(scope), executions, policy, now), preferences: observeIn(scope, observations, now) }));
    },

    async getTrade(scope, id) {
      checkLearningScope('learning.getTrade', scope);
      checkRowId('learning.getTrade', 'id', id);
      const r = handle.read('learning.getTrade', () => get(`SELECT * FROM trade_history WHERE id = ? AND ${S}`, id, ...sp(scope)));
      return r && toTrade(r);
    },

    async listTrades(scope, query = {}) {
      const op = 'learning.listTrades';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      const where = [S];
      const args: unknown[] = [...sp(scope)];
      if (query.asset !== undefined) (where.push('asset = ?'), args.push(query.asset));
      if (query.status !== undefined) (where.push('status = ?'), args.push(query.status));
      if (query.action !== undefined) (where.push('action = ?'), args.push(query.action));
      if (query.sessionId !== undefined) (where.push('session_id = ?'), args.push(query.sessionId));
      return handle.read(op, () => all(`SELECT * FROM trade_history WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT ?`, ...args, limit)).map(toTrade);
    },

    async upsertMethodology(scope, input) {
      const op = 'learning.upsertMethodology';
      checkLearningScope(op, scope);
      checkNewMethodology(op, input);
      checkMethodologyRestore(op, input.restore);
      return handle.write(op, () => {
        const existing = get(`SELECT * FROM methodologies WHERE ${S} AND asset_class = ? AND normalized_text = ?`, ...sp(scope), input.assetClass, input.normalizedText);
        if (existing) return { methodology: toMethodology(existing), created: false };
        const r = input.restore;
        const id = r?.id !== undefined && !get('SELECT 1 AS x FROM methodologies WHERE id = ?', r.id) ? r.id : null;
        const info = p(`INSERT INTO methodologies (id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence,
          graduation_proposed_at, graduated_at, quarantined_at, state_reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          id, ...sp(scope), input.assetClass, input.text, input.normalizedText, input.origin, input.sourceRef ?? null, r?.state ?? input.state ?? 'candidate', r?.uses ?? 0, r?.wins ?? 0,
          r?.confidence ?? 0, r?.graduationProposedAt ?? null, r?.graduatedAt ?? null, r?.quarantinedAt ?? null, r?.stateReason ?? input.stateReason ?? null, r?.createdAt ?? input.now, input.now);
        return { methodology: toMethodology(get('SELECT * FROM methodologies WHERE id = ?', Number(info.lastInsertRowid))!), created: true };
      });
    },

    async getMethodology(scope, id) {
      checkLearningScope('learning.getMethodology', scope);
      checkRowId('learning.getMethodology', 'id', id);
      const r = handle.read('learning.getMethodology', () => get(`SELECT * FROM methodologies WHERE id = ? AND ${S}`, id, ...sp(scope)));
      return r && toMethodology(r);
    },

    async listMethodologies(scope, query = {}) {
      const op = 'learning.listMethodologies';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, METHODOLOGY_STATES);
      const where = [S];
      const args: unknown[] = [...sp(scope)];
      if (query.states !== undefined) (where.push(`state IN (${placeholders(query.states.length)})`), args.push(...query.states));
      if (query.assetClasses !== undefined) (where.push(`asset_class IN (${placeholders(query.assetClasses.length)})`), args.push(...query.assetClasses));
      if (query.ids !== undefined) (where.push('id IN (SELECT value FROM json_each(?))'), args.push(JSON.stringify(query.ids)));
      return handle
        .read(op, () => all(`SELECT * FROM methodologies WHERE ${where.join(' AND ')} ORDER BY ${STATE_RANK}, confidence DESC, uses DESC, id LIMIT ?`, ...args, limit))
        .map(toMethodology);
    },

    async transitionMethodology(scope, id, change) {
      const op = 'learning.transitionMethodology';
      checkTransition(op, scope, id, change, METHODOLOGY_STATES);
      return handle.write(op, () => {
        const r = get(`SELECT * FROM methodologies WHERE id = ? AND ${S}`, id, ...sp(scope));
        if (!r || !change.from.includes(r.state as MethodologyRecord['state'])) return undefined;
        const graduated = change.to === 'graduated' ? change.now : change.to === 'candidate' ? null : (r.graduated_at ?? null);
        const quarantined = change.to === 'quarantined' ? change.now : change.to === 'candidate' ? null : (r.quarantined_at ?? null);
        p(`UPDATE methodologies SET state = ?, graduated_at = ?, quarantined_at = ?, graduation_proposed_at = NULL, state_reason = ?, updated_at = ? WHERE id = ? AND ${S}`).run(
          change.to, graduated, quarantined, change.reason, change.now, id, ...sp(scope),
        );
        return toMethodology(get('SELECT * FROM methodologies WHERE id = ?', id)!);
      });
    },

    async listCases(scope, query = {}) {
      const op = 'learning.listCases';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      const where = [S];
      const args: unknown[] = [...sp(scope)];
      if (query.status === 'pending') where.push('reflected_at IS NULL');
      if (query.status === 'reflected') where.push('reflected_at IS NOT NULL');
      if (query.role !== undefined) (where.push('role = ?'), args.push(query.role));
      if (query.asset !== undefined) (where.push('asset = ?'), args.push(query.asset));
      if (query.withoutMemory === true) where.push('memory_id IS NULL');
      const order = query.status === 'pending' || query.withoutMemory === true ? 'id' : query.status === 'reflected' ? 'reflected_at DESC, id DESC' : 'id DESC';
      return handle.read(op, () => all(`SELECT * FROM role_memory WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ?`, ...args, limit)).map(toCase);
    },

    async markCaseReflected(scope, id, r) {
      const op = 'learning.markCaseReflected';
      checkLearningScope(op, scope);
      checkRowId(op, 'id', id);
      return handle.write(op, () =>
        p(`UPDATE role_memory SET reflected_at = ?, classification = ?, reflection = ?, lesson_memory_ids = ? WHERE id = ? AND ${S} AND reflected_at IS NULL`)
          .run(r.now, r.classification, r.reflection, JSON.stringify(r.lessonMemoryIds), id, ...sp(scope)).changes === 1,
      );
    },

    async upsertPreference(scope, input) {
      const op = 'learning.upsertPreference';
      checkLearningScope(op, scope);
      checkNewPreference(op, input);
      checkPreferenceRestore(op, input.restore);
      return handle.write(op, () => {
        const existing = get(`SELECT * FROM learned_preferences WHERE ${S} AND dimension = ? AND kind = ? AND normalized_text = ?`, ...sp(scope), input.dimension, input.kind, input.normalizedText);
        if (existing) return { preference: toPreference(existing), created: false };
        const r = input.restore;
        const id = r?.id !== undefined && !get('SELECT 1 AS x FROM learned_preferences WHERE id = ?', r.id) ? r.id : null;
        const info = p(`INSERT INTO learned_preferences (id, user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, contradictions,
          last_evidence_at, activated_at, decided_at, memory_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          id, ...sp(scope), input.dimension, input.kind, input.text, input.normalizedText, input.value ?? null, input.source, r?.state ?? 'proposed', r?.evidence ?? 0,
          r?.contradictions ?? 0, r?.lastEvidenceAt ?? input.now, r?.activatedAt ?? null, r?.decidedAt ?? null, r?.memoryId ?? null, r?.createdAt ?? input.now, input.now);
        return { preference: toPreference(get('SELECT * FROM learned_preferences WHERE id = ?', Number(info.lastInsertRowid))!), created: true };
      });
    },

    async observePreferences(scope, observations, now) {
      const op = 'learning.observePreferences';
      checkObservations(op, scope, observations);
      if (observations.length === 0) return [];
      return handle.write(op, () => observeIn(scope, observations, now));
    },

    async getPreference(scope, id) {
      checkLearningScope('learning.getPreference', scope);
      checkRowId('learning.getPreference', 'id', id);
      const r = handle.read('learning.getPreference', () => get(`SELECT * FROM learned_preferences WHERE id = ? AND ${S}`, id, ...sp(scope)));
      return r && toPreference(r);
    },

    async listPreferences(scope, query = {}) {
      const op = 'learning.listPreferences';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, PREFERENCE_STATES);
      const where = [S];
      const args: unknown[] = [...sp(scope)];
      if (query.states !== undefined) (where.push(`state IN (${placeholders(query.states.length)})`), args.push(...query.states));
      if (query.kinds !== undefined) (where.push(`kind IN (${placeholders(query.kinds.length)})`), args.push(...query.kinds));
      if (query.dimension !== undefined) (where.push('dimension = ?'), args.push(query.dimension));
      return handle.read(op, () => all(`SELECT * FROM learned_preferences WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, ...args, limit)).map(toPreference);
    },

    async transitionPreference(scope, id, change) {
      const op = 'learning.transitionPreference';
      checkTransition(op, scope, id, change, PREFERENCE_STATES);
      return handle.write(op, () => {
        const r = get(`SELECT * FROM learned_preferences WHERE id = ? AND ${S}`, id, ...sp(scope));
        if (!r || !change.from.includes(r.state as PreferenceRecord['state'])) return undefined;
        p(`UPDATE learned_preferences SET state = ?, decided_at = ?, activated_at = ?, memory_id = COALESCE(?, memory_id), updated_at = ? WHERE id = ?`).run(
          change.to, change.now, change.to === 'active' ? change.now : (r.activated_at ?? null), change.memoryId ?? null, change.now, id,
        );
        return toPreference(get('SELECT * FROM learned_preferences WHERE id = ?', id)!);
      });
    },

    async insertPerpsFills(scope, fills) {
      const op = 'learning.insertPerpsFills';
      checkLearningScope(op, scope);
      fills.forEach((f, i) => checkPerpsFill(op, f, i));
      if (fills.length === 0) return 0;
      return handle.write(op, () => {
        const stmt = p(`INSERT OR IGNORE INTO perps_fills (user_id, agent_id, sub_account_id, wallet_address, oid, ts_ms, symbol, side, dir, size, price, fee, closed_pnl,
          raw_json, fill_uid, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
        let n = 0;
        for (const f of fills) {
          n += stmt.run(...sp(scope), f.subAccountId, f.walletAddress ?? null, f.oid, f.tsMs, f.symbol, f.side, f.dir ?? null, f.size, f.price, f.fee, f.closedPnl,
            f.rawJson ?? null, f.fillUid, f.now).changes;
        }
        return n;
      });
    },

    async insertExternalSpot(scope, activities) {
      const op = 'learning.insertExternalSpot';
      checkLearningScope(op, scope);
      activities.forEach((a, i) => checkSpotActivity(op, a, i));
      if (activities.length === 0) return 0;
      return handle.write(op, () => {
        const stmt = p(`INSERT OR IGNORE INTO external_spot_activities (user_id, agent_id, tx_hash, ts_ms, type, from_token, to_token, amount, value_usd, status, raw_json, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
        let n = 0;
        for (const a of activities) {
          n += stmt.run(...sp(scope), a.txHash, a.tsMs, a.type, a.fromToken ?? null, a.toToken ?? null, a.amount ?? null, a.valueUsd ?? null, a.status, a.rawJson ?? null, a.now).changes;
        }
        return n;
      });
    },

    async listPerpsFills(scope, query = {}) {
      const op = 'learning.listPerpsFills';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      return handle
        .read(op, () =>
          query.subAccountId === undefined
            ? all(`SELECT * FROM perps_fills WHERE ${S} ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), limit)
            : all(`SELECT * FROM perps_fills WHERE ${S} AND sub_account_id = ? ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), query.subAccountId, limit),
        )
        .map(toFill);
    },

    async listExternalSpot(scope, query = {}) {
      const op = 'learning.listExternalSpot';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      return handle.read(op, () => all(`SELECT * FROM external_spot_activities WHERE ${S} ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), limit)).map(toSpot);
    },

    async getSyncState(scope, source, subAccountId) {
      checkLearningScope('learning.getSyncState', scope);
      const r = handle.read('learning.getSyncState', () => get(`SELECT * FROM history_sync_state WHERE ${S} AND source = ? AND sub_account_id = ?`, ...sp(scope), source, subAccountId));
      return r && toSync(r);
    },

    async listSyncStates(scope) {
      checkLearningScope('learning.listSyncStates', scope);
      return handle.read('learning.listSyncStates', () => all(`SELECT * FROM history_sync_state WHERE ${S} ORDER BY source, sub_account_id`, ...sp(scope))).map(toSync);
    },

    async recordSyncAttempt(scope, a) {
      const op = 'learning.recordSyncAttempt';
      checkSyncAttempt(op, scope, a);
      return handle.write(op, () => {
        if (a.ok) {
          p(`INSERT INTO history_sync_state (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
            VALUES (?, ?, ?, ?, ?, ?, NULL, 0)
            ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
              last_synced_ts_ms = MAX(COALESCE(last_synced_ts_ms, excluded.last_synced_ts_ms), COALESCE(excluded.last_synced_ts_ms, last_synced_ts_ms)),
              last_synced_at = excluded.last_synced_at, last_error = NULL, consecutive_failures = 0`).run(...sp(scope), a.source, a.subAccountId, a.watermarkMs ?? null, a.now);
        } else {
          p(`INSERT INTO history_sync_state (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
            VALUES (?, ?, ?, ?, NULL, ?, ?, 1)
            ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
              last_synced_at = excluded.last_synced_at, last_error = excluded.last_error, consecutive_failures = consecutive_failures + 1`).run(
            ...sp(scope), a.source, a.subAccountId, a.now, a.error.slice(0, 2000),
          );
        }
        return toSync(get(`SELECT * FROM history_sync_state WHERE ${S} AND source = ? AND sub_account_id = ?`, ...sp(scope), a.source, a.subAccountId)!);
      });
    },

    async recordPersonalizationSnapshot(scope, s) {
      const op = 'learning.recordPersonalizationSnapshot';
      checkLearningScope(op, scope);
      if (typeof s.sessionWatermark !== 'string') throw invalidArgument(op, 'sessionWatermark must be a string');
      return handle.write(op, () => {
        const info = p(`INSERT INTO personalization_snapshots (user_id, agent_id, session_watermark, session_ids, fact_hashes, written_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
          ...sp(scope), s.sessionWatermark, JSON.stringify(s.sessionIds), JSON.stringify(s.factHashes), JSON.stringify(s.writtenIds), s.now,
        );
        return toSnapshot(get('SELECT * FROM personalization_snapshots WHERE id = ?', Number(info.lastInsertRowid))!);
      });
    },

    async latestPersonalizationSnapshot(scope) {
      checkLearningScope('learning.latestPersonalizationSnapshot', scope);
      const r = handle.read('learning.latestPersonalizationSnapshot', () => get(`SELECT * FROM personalization_snapshots WHERE ${S} ORDER BY id DESC LIMIT 1`, ...sp(scope)));
      return r && toSnapshot(r);
    },

    async importTradeCase(scope, c) {
      const op = 'learning.importTradeCase';
      checkLearningScope(op, scope);
      checkImportedTradeCase(op, c);
      return handle.write(op, () => {
        const known = get(`SELECT id FROM trade_history WHERE ${S} AND order_id = ?`, ...sp(scope), c.orderId);
        if (known) {
          const existing = get(`SELECT * FROM role_memory WHERE ${S} AND trade_id = ?`, ...sp(scope), known.id);
          if (existing) return { case: toCase(existing), created: false };
          throw invalidArgument(op, `orderId ${JSON.stringify(c.orderId)} is a trade of this scope without a case; import it under another order id`);
        }
        const methodologyIds = JSON.stringify([...c.methodologyIds]);
        const tradeId = Number(p(`INSERT INTO trade_history (user_id, agent_id, order_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price, notional_usd,
          fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, closed_quantity, exit_price, closed_at, holding_ms, outcome, created_at)
          VALUES (?, ?, ?, 'memory_import', 'open', ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 'import', ?, 'closed', ?, ?, ?, ?, ?, ?)`).run(
          ...sp(scope), c.orderId, c.kind, c.asset, c.assetClass ?? null, c.side, c.direction ?? null, c.quantity, c.entryPrice, c.notionalUsd, c.realizedPnlUsd, c.role,
          methodologyIds, c.simulated ? 1 : 0, c.openedAt, c.quantity, c.exitPrice ?? null, c.closedAt, c.holdingMs, c.outcome, c.now).lastInsertRowid);
        const id = c.id !== undefined && !get('SELECT 1 AS x FROM role_memory WHERE id = ?', c.id) ? c.id : null;
        const caseId = Number(p(`INSERT INTO role_memory (id, user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms,
          methodology_ids, opened_at, closed_at, created_at, reflected_at, classification, reflection) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          id, ...sp(scope), tradeId, c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs, methodologyIds,
          c.openedAt, c.closedAt, c.now, c.reflectedAt ?? null, c.classification ?? null, c.reflection ?? null).lastInsertRowid);
        return { case: toCase(get('SELECT * FROM role_memory WHERE id = ?', caseId)!), created: true };
      });
    },

    async linkCaseMemory(scope, caseId, memoryId) {
      const op = 'learning.linkCaseMemory';
      checkLearningScope(op, scope);
      checkRowId(op, 'caseId', caseId);
      checkRowId(op, 'memoryId', memoryId);
      return handle.write(op, () => p(`UPDATE role_memory SET memory_id = ? WHERE id = ? AND ${S} AND memory_id IS NULL`).run(memoryId, caseId, ...sp(scope)).changes === 1);
    },

    async caseMemoryScopes(limit) {
      const op = 'learning.caseMemoryScopes';
      const n = checkLimit(op, limit, 100);
      return handle.read(op, () => all('SELECT DISTINCT user_id, agent_id FROM role_memory WHERE memory_id IS NULL ORDER BY user_id, agent_id LIMIT ?', n)).map((r) => ({ userId: r.user_id as string, ...agent(r) }));
    },

    async enqueueExtraction(scope, t) {
      const op = 'learning.enqueueExtraction';
      checkExtractionTurn(op, scope, t);
      return handle.write(op, () =>
        p(`INSERT OR IGNORE INTO memory_extraction_queue (user_id, agent_id, session_id, turn_id, text, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
          .run(...sp(scope), t.sessionId, t.turnId, t.text, t.now).changes === 1,
      );
    },

    async claimExtractions(scope, c) {
      const op = 'learning.claimExtractions';
      const limit = checkExtractionClaim(op, scope, c);
      return handle.write(op, () => {
        const rows = all(`SELECT id FROM memory_extraction_queue WHERE ${S} AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY id LIMIT ?`, ...sp(scope), c.now, limit);
        if (rows.length === 0) return [];
        const idList = rows.map((r) => r.id as number);
        p(`UPDATE memory_extraction_queue SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 WHERE id IN (${placeholders(idList.length)}) AND ${S}`).run(c.owner, c.leaseUntil, ...idList, ...sp(scope));
        return all(`SELECT * FROM memory_extraction_queue WHERE id IN (${placeholders(idList.length)}) AND ${S} ORDER BY id`, ...idList, ...sp(scope)).map(toExtraction);
      });
    },

    async completeExtractions(scope, list) {
      const op = 'learning.completeExtractions';
      checkLearningScope(op, scope);
      const idList = checkRowIds(op, 'ids', list);
      if (idList.length === 0) return 0;
      return handle.write(op, () => p(`DELETE FROM memory_extraction_queue WHERE id IN (${placeholders(idList.length)}) AND ${S}`).run(...idList, ...sp(scope)).changes);
    },

    async extractionScopes(limit) {
      const op = 'learning.extractionScopes';
      const n = checkLimit(op, limit, 100);
      return handle.read(op, () => all('SELECT DISTINCT user_id, agent_id FROM memory_extraction_queue ORDER BY user_id, agent_id LIMIT ?', n)).map((r) => ({ userId: r.user_id as string, ...agent(r) }));
    },

    async stats(scope, options) {
      const op = 'learning.stats';
      checkLearningScope(op, scope);
      if (typeof options?.overdueBefore !== 'string' || Number.isNaN(Date.parse(options.overdueBefore))) throw invalidArgument(op, 'overdueBefore must be an ISO date');
      return handle.read(op, () => {
        const by = (sql: string, ...args: unknown[]) => Object.fromEntries(all(sql, ...sp(scope), ...args).map((r) => [r.k as string, r.n as number]));
        const m = by(`SELECT state AS k, COUNT(*) AS n FROM methodologies WHERE ${S} GROUP BY state`);
        const pr = by(`SELECT state AS k, COUNT(*) AS n FROM learned_preferences WHERE ${S} GROUP BY state`);
        const hc = by(`SELECT state AS k, COUNT(*) AS n FROM learned_preferences WHERE ${S} AND kind = 'hard_constraint' GROUP BY state`);
        const t = by(`SELECT status AS k, COUNT(*) AS n FROM trade_history WHERE ${S} GROUP BY status`);
        const one = (sql: string, ...args: unknown[]) => (get(sql, ...sp(scope), ...args) as { n: number }).n;
        return {
          methodologies: { proposed: m.proposed ?? 0, candidate: m.candidate ?? 0, graduated: m.graduated ?? 0, quarantined: m.quarantined ?? 0 },
          graduationProposed: one(`SELECT COUNT(*) AS n FROM methodologies WHERE ${S} AND state = 'candidate' AND graduation_proposed_at IS NOT NULL`),
          preferences: { proposed: pr.proposed ?? 0, active: pr.active ?? 0, rejected: pr.rejected ?? 0 },
          hardConstraints: { proposed: hc.proposed ?? 0, active: hc.active ?? 0, rejected: hc.rejected ?? 0 },
          cases: {
            pending: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NULL`),
            overdue: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NULL AND closed_at < ?`, options.overdueBefore),
            reflected: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NOT NULL`),
          },
          trades: { open: t.open ?? 0, closed: t.closed ?? 0, settled: t.settled ?? 0 },
          perpsFills: one(`SELECT COUNT(*) AS n FROM perps_fills WHERE ${S}`),
          externalSpot: one(`SELECT COUNT(*) AS n FROM external_spot_activities WHERE ${S}`),
          extractionQueue: queued(get(`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM memory_extraction_queue WHERE ${S}`, ...sp(scope))),
        };
      });
    },
  };
}
