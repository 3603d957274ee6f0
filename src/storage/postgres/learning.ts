/**
 * The `learning` domain on Postgres. Every statement filters on `user_id` and the exact `agent_id` (`''` for
 * user-level rows). `recordExecutions` takes a transaction-scoped advisory lock on the scope, so two instances
 * attributing outcomes for one tenant serialise, loads what the shared (synchronous) capture driver can touch
 * (the batch's order ids, the open trades of the assets it closes, their attributions and cases, the
 * methodologies involved), runs the driver over that staged state, and writes its changes in the same
 * transaction. Trade ids are drawn from the identity sequence up front, so the driver sees final ids.
 */
import {
  type CaptureOps, checkCaptureInput, checkExtractionClaim, checkExtractionTurn, checkImportedTradeCase, checkLearningScope, checkRowIds, checkMethodologyRestore, checkPreferenceRestore, checkNewMethodology, checkNewPreference, checkObservations, checkPerpsFill, checkRowId, checkSpotActivity,
  checkStateList, checkSyncAttempt, checkTransition, METHODOLOGY_STATES, PREFERENCE_STATES, queued, runCapture,
} from '../learning-logic';
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, LearningStorage, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceObservation,
  PreferenceRecord, RoleCaseRecord, TradeRecord,
} from '../learning-types';
import { checkLimit, invalidArgument } from '../sqlite/checks';
import { opt } from '../sqlite/rows';
import type { PgHandle, PgRow, PgTx } from './handle';

type Row = PgRow;
const sp = (s: LearningScope): [string, string] => [s.userId, s.agentId ?? ''];
const agent = (r: Row) => (r.agent_id === '' ? {} : { agentId: String(r.agent_id) });
const ids = (v: unknown): number[] => (typeof v === 'string' ? (JSON.parse(v) as number[]) : []);
const o = <K extends string>(k: K, v: unknown) => opt(k, (v === null || v === undefined ? null : v) as never);
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function toTrade(r: Row): TradeRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), orderId: String(r.order_id), ...o('sessionId', r.session_id), ...o('turnId', r.turn_id),
    ...o('toolCallId', r.tool_call_id), toolName: String(r.tool_name), action: r.action as TradeRecord['action'], kind: r.kind as TradeRecord['kind'],
    asset: String(r.asset), ...o('assetClass', r.asset_class), side: String(r.side), ...o('direction', r.direction), quantity: Number(r.quantity),
    price: Number(r.price), notionalUsd: Number(r.notional_usd), feeUsd: Number(r.fee_usd), realizedPnlUsd: Number(r.realized_pnl_usd),
    role: String(r.role), methodologyIds: ids(r.methodology_ids), simulated: r.simulated === true, provider: String(r.provider), at: String(r.at),
    status: r.status as TradeRecord['status'], closedQuantity: Number(r.closed_quantity), ...o('exitPrice', num(r.exit_price)), ...o('closedAt', r.closed_at),
    ...o('holdingMs', num(r.holding_ms)), ...o('outcome', r.outcome), ...(r.closes_trade_ids == null ? {} : { closesTradeIds: ids(r.closes_trade_ids) }),
    ...(r.details_json == null ? {} : { details: JSON.parse(String(r.details_json)) as Record<string, unknown> }),
  };
}

function toMethodology(r: Row): MethodologyRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), assetClass: String(r.asset_class), text: String(r.text), normalizedText: String(r.normalized_text),
    origin: r.origin as MethodologyRecord['origin'], ...o('sourceRef', r.source_ref), state: r.state as MethodologyRecord['state'], uses: Number(r.uses),
    wins: Number(r.wins), confidence: Number(r.confidence), ...o('graduationProposedAt', r.graduation_proposed_at), ...o('graduatedAt', r.graduated_at),
    ...o('quarantinedAt', r.quarantined_at), ...o('stateReason', r.state_reason), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

function toCase(r: Row): RoleCaseRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), tradeId: Number(r.trade_id), role: String(r.role), asset: String(r.asset), ...o('assetClass', r.asset_class),
    kind: r.kind as RoleCaseRecord['kind'], ...o('direction', r.direction), summary: String(r.summary), outcome: r.outcome as RoleCaseRecord['outcome'],
    realizedPnlUsd: Number(r.realized_pnl_usd), holdingMs: Number(r.holding_ms), methodologyIds: ids(r.methodology_ids), openedAt: String(r.opened_at),
    closedAt: String(r.closed_at), createdAt: String(r.created_at), ...o('reflectedAt', r.reflected_at), ...o('classification', r.classification),
    ...o('reflection', r.reflection), lessonMemoryIds: ids(r.lesson_memory_ids), ...o('memoryId', num(r.memory_id)),
  };
}

function toExtraction(r: Row): ExtractionTurnRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), sessionId: String(r.session_id), turnId: String(r.turn_id), text: String(r.text),
    createdAt: String(r.created_at), attempts: Number(r.attempts),
  };
}

function toPreference(r: Row): PreferenceRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), dimension: String(r.dimension), kind: r.kind as PreferenceRecord['kind'], text: String(r.text),
    normalizedText: String(r.normalized_text), ...o('value', r.value), source: r.source as PreferenceRecord['source'], state: r.state as PreferenceRecord['state'],
    evidence: Number(r.evidence), contradictions: Number(r.contradictions), lastEvidenceAt: String(r.last_evidence_at), ...o('activatedAt', r.activated_at),
    ...o('decidedAt', r.decided_at), ...o('memoryId', num(r.memory_id)), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

const toFill = (r: Row): PerpsFillRecord => ({
  id: Number(r.id), subAccountId: String(r.sub_account_id), ...o('walletAddress', r.wallet_address), oid: String(r.oid), tsMs: Number(r.ts_ms), symbol: String(r.symbol),
  side: String(r.side), ...o('dir', r.dir), size: Number(r.size), price: Number(r.price), fee: Number(r.fee), closedPnl: Number(r.closed_pnl), ...o('rawJson', r.raw_json),
  fillUid: String(r.fill_uid), createdAt: String(r.created_at),
});
const toSpot = (r: Row): ExternalSpotRecord => ({
  id: Number(r.id), txHash: String(r.tx_hash), tsMs: Number(r.ts_ms), type: String(r.type), ...o('fromToken', r.from_token), ...o('toToken', r.to_token),
  ...o('amount', r.amount), ...o('valueUsd', num(r.value_usd)), status: String(r.status), ...o('rawJson', r.raw_json), createdAt: String(r.created_at),
});
const toSync = (r: Row): HistorySyncState => ({
  source: String(r.source), subAccountId: String(r.sub_account_id), ...o('lastSyncedTsMs', num(r.last_synced_ts_ms)), lastSyncedAt: String(r.last_synced_at),
  ...o('lastError', r.last_error), consecutiveFailures: Number(r.consecutive_failures),
});
const toSnapshot = (r: Row): PersonalizationSnapshot => ({
  id: Number(r.id), sessionWatermark: String(r.session_watermark), sessionIds: JSON.parse(String(r.session_ids)) as string[],
  factHashes: JSON.parse(String(r.fact_hashes)) as string[], writtenIds: ids(r.written_ids), createdAt: String(r.created_at),
});

function compactRecord<T extends object>(value: { [K in keyof T]?: T[K] | undefined } & object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

const STATE_RANK = `CASE state WHEN 'graduated' THEN 0 WHEN 'candidate' THEN 1 WHEN 'proposed' THEN 2 ELSE 3 END`;
/** `user_id = $a AND agent_id = $b` with the given placeholder numbers. */
const S = (a = 1) => `user_id = $${a} AND agent_id = $${a + 1}`;

/** After a row kept its restored id, move the identity past every id in the table (never backwards). */
async function advanceIdentity(tx: PgTx, table: string): Promise<void> {
  await tx.run(
    `SELECT setval(x.s, GREATEST((SELECT COALESCE(max(id), 1) FROM ${table}), COALESCE(pg_sequence_last_value(x.s::regclass), 1))) FROM (SELECT pg_get_serial_sequence('${table}', 'id') AS s) x`,
  );
}

/** The `learning` domain on Postgres. */
export function createPgLearningStorage(h: PgHandle): LearningStorage {
  const T = h.t('trade_history');
  const MT = h.t('methodologies');
  const MO = h.t('methodology_outcomes');
  const RM = h.t('role_memory');
  const LP = h.t('learned_preferences');
  const EQ = h.t('memory_extraction_queue');

  /** Stage what the capture can touch, run it, and write its changes (inside `tx`). */
  const capture = async (tx: PgTx, scope: LearningScope, input: Parameters<LearningStorage['recordExecutions']>[1]) => {
    const { executions, policy, now } = input;
    const scopeArgs = sp(scope);
    const existingOrders = new Set(
      (await tx.all<{ order_id: string }>(`SELECT order_id FROM ${T} WHERE ${S()} AND order_id = ANY($3::text[])`, [...scopeArgs, executions.map((e) => e.orderId)])).map((r) => r.order_id),
    );
    const closing = [...new Set(executions.filter((e) => e.action === 'close').map((e) => `${e.asset}\u0000${e.kind}`))].map((k) => k.split('\u0000') as [string, string]);
    const trades = new Map<number, TradeRecord>();
    if (closing.length > 0) {
      const rows = await tx.all(
        `SELECT * FROM ${T} WHERE ${S()} AND status = 'open' AND (asset, kind) IN (SELECT * FROM unnest($3::text[], $4::text[])) ORDER BY at, id`,
        [...scopeArgs, closing.map((c) => c[0]), closing.map((c) => c[1])],
      );
      for (const r of rows) trades.set(Number(r.id), toTrade(r));
    }
    const openIds = [...trades.keys()];
    const attributions = new Set(
      openIds.length === 0 ? [] : (await tx.all(`SELECT methodology_id, trade_id FROM ${MO} WHERE trade_id = ANY($1::bigint[])`, [openIds])).map((r) => `${String(r.methodology_id)}:${String(r.trade_id)}`),
    );
    const casesFor = new Set(openIds.length === 0 ? [] : (await tx.all(`SELECT trade_id FROM ${RM} WHERE ${S()} AND trade_id = ANY($3::bigint[])`, [...scopeArgs, openIds])).map((r) => Number(r.trade_id)));
    const wantMethodologies = new Set<number>([...executions.flatMap((e) => e.methodologyIds), ...[...trades.values()].flatMap((t) => t.methodologyIds)]);
    const methodologies = new Map<number, MethodologyRecord>();
    if (wantMethodologies.size > 0) {
      for (const r of await tx.all(`SELECT * FROM ${MT} WHERE ${S()} AND id = ANY($3::bigint[])`, [...scopeArgs, [...wantMethodologies]])) methodologies.set(Number(r.id), toMethodology(r));
    }
    const newIds = (
      await tx.all<{ id: unknown }>(`SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id FROM generate_series(1, $2::int)`, [T, Math.max(executions.length, 0)])
    ).map((r) => Number(r.id));
    const newOrders = new Set<string>();
    const writes: Array<(q: PgTx) => Promise<void>> = [];
    const copy = <V>(v: V): V => structuredClone(v);

    const ops: CaptureOps = {
      hasOrder: (orderId) => existingOrders.has(orderId) || newOrders.has(orderId),
      insertTrade(e, status, at) {
        const id = newIds.shift();
        if (id === undefined) throw new Error('learning.recordExecutions: ran out of pre-drawn trade ids');
        newOrders.add(e.orderId);
        const { details, ...rest } = e;
        const row = compactRecord<TradeRecord>({
          ...rest, userId: scope.userId, agentId: scope.agentId, id, methodologyIds: [...e.methodologyIds], status, closedQuantity: 0,
          details: details === undefined ? undefined : (JSON.parse(JSON.stringify(details)) as Record<string, unknown>),
        });
        trades.set(id, row);
        writes.push(async (q) => {
          await q.run(
            `INSERT INTO ${T} (id, user_id, agent_id, order_id, session_id, turn_id, tool_call_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price,
               notional_usd, fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, details_json, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)`,
            [
              id, ...scopeArgs, e.orderId, e.sessionId ?? null, e.turnId ?? null, e.toolCallId ?? null, e.toolName, e.action, e.kind, e.asset, e.assetClass ?? null, e.side,
              e.direction ?? null, e.quantity, e.price, e.notionalUsd, e.feeUsd, e.realizedPnlUsd, e.role, JSON.stringify(e.methodologyIds), e.simulated, e.provider, e.at, status,
              e.details === undefined ? null : JSON.stringify(e.details), at,
            ],
          );
        });
        return copy(row);
      },
      openTrades: (asset, kind) =>
        [...trades.values()]
          .filter((t) => t.asset === asset && t.kind === kind && t.status === 'open')
          .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id))
          .map(copy),
      updateTrade(trade, patch) {
        const next = compactRecord<TradeRecord>({ ...trades.get(trade.id)!, ...patch });
        trades.set(trade.id, next);
        writes.push(async (q) => {
          await q.run(`UPDATE ${T} SET closed_quantity = $1, realized_pnl_usd = $2, exit_price = $3, status = $4, closed_at = $5, holding_ms = $6, outcome = $7 WHERE id = $8 AND ${S(9)}`, [
            patch.closedQuantity, patch.realizedPnlUsd, patch.exitPrice, patch.status, patch.closedAt ?? null, patch.holdingMs ?? null, patch.outcome ?? null, trade.id, ...scopeArgs,
          ]);
        });
        return copy(next);
      },
      setClosedIds(trade, closed) {
        const next = { ...trades.get(trade.id)!, closesTradeIds: [...closed] };
        trades.set(trade.id, next);
        writes.push(async (q) => {
          await q.run(`UPDATE ${T} SET closes_trade_ids = $1 WHERE id = $2 AND ${S(3)}`, [JSON.stringify(closed), trade.id, ...scopeArgs]);
        });
        return copy({ ...trade, closesTradeIds: [...closed] });
      },
      methodology: (id) => {
        const m = methodologies.get(id);
        return m && copy(m);
      },
      insertAttribution(mid, tid, outcome, at) {
        const key = `${mid}:${tid}`;
        if (attributions.has(key)) return false;
        attributions.add(key);
        writes.push(async (q) => {
          await q.run(`INSERT INTO ${MO} (methodology_id, trade_id, user_id, agent_id, outcome, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [mid, tid, ...scopeArgs, outcome, at]);
        });
        return true;
      },
      updateMethodologyScore(m, s, at) {
        const next = compactRecord<MethodologyRecord>({
          ...methodologies.get(m.id)!, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt,
          quarantinedAt: s.quarantinedAt, stateReason: s.stateReason, updatedAt: at,
        });
        methodologies.set(m.id, next);
        writes.push(async (q) => {
          await q.run(
            `UPDATE ${MT} SET uses = $1, wins = $2, confidence = $3, state = $4, graduation_proposed_at = $5, quarantined_at = $6, state_reason = $7, updated_at = $8 WHERE id = $9 AND ${S(10)}`,
            [s.uses, s.wins, s.confidence, s.state, s.graduationProposedAt ?? null, s.quarantinedAt ?? null, s.stateReason ?? null, at, m.id, ...scopeArgs],
          );
        });
        return copy(next);
      },
      insertCase(c) {
        if (casesFor.has(c.tradeId)) return undefined;
        casesFor.add(c.tradeId);
        const record = compactRecord<RoleCaseRecord>({ ...c, userId: scope.userId, agentId: scope.agentId, id: 0, methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
        writes.push(async (q) => {
          const r = await q.get<{ id: unknown }>(
            `INSERT INTO ${RM} (user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms, methodology_ids, opened_at, closed_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
            [...scopeArgs, c.tradeId, c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs, JSON.stringify(c.methodologyIds), c.openedAt, c.closedAt, c.createdAt],
          );
          (record as { id: number }).id = Number(r!.id);
        });
        return record;
      },
    };
    const result = runCapture(ops, executions, policy, now);
    for (const write of writes) await write(tx);
    return result;
  };

  /** Apply preference observations inside `tx`. */
  const observeIn = async (tx: PgTx, scope: LearningScope, observations: readonly PreferenceObservation[], now: string): Promise<PreferenceRecord[]> => {
    if (observations.length === 0) return [];
    const touched = new Set<number>();
    for (const ob of observations) {
      const match = await tx.get(`SELECT * FROM ${LP} WHERE ${S()} AND dimension = $3 AND kind = 'behavioural' AND normalized_text = $4`, [...sp(scope), ob.dimension, ob.normalizedText]);
      if (ob.effect === 'contradict') {
        if (match) {
          await tx.run(`UPDATE ${LP} SET contradictions = contradictions + 1, updated_at = $1 WHERE id = $2`, [now, match.id]);
          touched.add(Number(match.id));
        }
        continue;
      }
      let id = match === undefined ? undefined : Number(match.id);
      if (id === undefined) {
        const r = await tx.get(
          `INSERT INTO ${LP} (user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, last_evidence_at, created_at, updated_at)
           VALUES ($1, $2, $3, 'behavioural', $4, $5, $6, 'mined', 'proposed', 1, $7, $7, $7) RETURNING id`,
          [...sp(scope), ob.dimension, ob.text, ob.normalizedText, ob.value ?? null, now],
        );
        id = Number(r!.id);
      } else await tx.run(`UPDATE ${LP} SET evidence = evidence + 1, last_evidence_at = $1, updated_at = $1 WHERE id = $2`, [now, id]);
      touched.add(id);
      for (const other of await tx.all(`SELECT id FROM ${LP} WHERE ${S()} AND dimension = $3 AND kind = 'behavioural' AND id <> $4 AND state <> 'rejected'`, [...sp(scope), ob.dimension, id])) {
        await tx.run(`UPDATE ${LP} SET contradictions = contradictions + 1, updated_at = $1 WHERE id = $2`, [now, other.id]);
        touched.add(Number(other.id));
      }
    }
    return (await tx.all(`SELECT * FROM ${LP} WHERE id = ANY($1::bigint[]) ORDER BY id`, [[...touched]])).map(toPreference);
  };
  const lockScope = (tx: PgTx, scope: LearningScope) => tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.learning:${h.schemaName}:${scope.userId}\u0001${scope.agentId ?? ''}`]);

  return {
    async recordExecutions(scope, input) {
      const op = 'learning.recordExecutions';
      checkCaptureInput(op, scope, input);
      const { executions, now, observations = [] } = input;
      if (executions.length === 0 && observations.length === 0) return { recorded: [], duplicates: [], closed: [], updated: [], methodologyChanges: [], cases: [], preferences: [] };
      return h.tx(op, async (tx) => {
        await lockScope(tx, scope);
        const result = await capture(tx, scope, input);
        return { ...result, preferences: await observeIn(tx, scope, observations, now) };
      });
    },

    async getTrade(scope, id) {
      checkLearningScope('learning.getTrade', scope);
      checkRowId('learning.getTrade', 'id', id);
      const r = await h.op('learning.getTrade').get(`SELECT * FROM ${T} WHERE id = $3 AND ${S()}`, [...sp(scope), id]);
      return r && toTrade(r);
    },

    async listTrades(scope, query = {}) {
      const op = 'learning.listTrades';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      const where = [S()];
      const args: unknown[] = [...sp(scope)];
      for (const [col, v] of [['asset', query.asset], ['status', query.status], ['action', query.action], ['session_id', query.sessionId]] as const) {
        if (v !== undefined) (args.push(v), where.push(`${col} = $${args.length}`));
      }
      args.push(limit);
      return (await h.op(op).all(`SELECT * FROM ${T} WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT $${args.length}`, args)).map(toTrade);
    },

    async upsertMethodology(scope, input) {
      const op = 'learning.upsertMethodology';
      checkLearningScope(op, scope);
      checkNewMethodology(op, input);
      checkMethodologyRestore(op, input.restore);
      return h.tx(op, async (tx) => {
        const r = input.restore;
        const keepId = r?.id !== undefined && !(await tx.get(`SELECT 1 AS x FROM ${MT} WHERE id = $1`, [r.id])) ? r.id : null;
        const inserted = await tx.get(
          `INSERT INTO ${MT} (id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence, graduation_proposed_at, graduated_at,
             quarantined_at, state_reason, created_at, updated_at)
           OVERRIDING SYSTEM VALUE
           VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${MT}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
           ON CONFLICT (user_id, agent_id, asset_class, normalized_text) DO NOTHING RETURNING *`,
          [
            keepId, ...sp(scope), input.assetClass, input.text, input.normalizedText, input.origin, input.sourceRef ?? null, r?.state ?? input.state ?? 'candidate', r?.uses ?? 0, r?.wins ?? 0,
            r?.confidence ?? 0, r?.graduationProposedAt ?? null, r?.graduatedAt ?? null, r?.quarantinedAt ?? null, r?.stateReason ?? input.stateReason ?? null, r?.createdAt ?? input.now, input.now,
          ],
        );
        if (inserted && keepId !== null) await advanceIdentity(tx, MT);
        if (inserted) return { methodology: toMethodology(inserted), created: true };
        const existing = await tx.get(`SELECT * FROM ${MT} WHERE ${S()} AND asset_class = $3 AND normalized_text = $4`, [...sp(scope), input.assetClass, input.normalizedText]);
        return { methodology: toMethodology(existing!), created: false };
      });
    },

    async getMethodology(scope, id) {
      checkLearningScope('learning.getMethodology', scope);
      checkRowId('learning.getMethodology', 'id', id);
      const r = await h.op('learning.getMethodology').get(`SELECT * FROM ${MT} WHERE id = $3 AND ${S()}`, [...sp(scope), id]);
      return r && toMethodology(r);
    },

    async listMethodologies(scope, query = {}) {
      const op = 'learning.listMethodologies';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, METHODOLOGY_STATES);
      const where = [S()];
      const args: unknown[] = [...sp(scope)];
      if (query.states !== undefined) (args.push([...query.states]), where.push(`state = ANY($${args.length}::text[])`));
      if (query.assetClasses !== undefined) (args.push([...query.assetClasses]), where.push(`asset_class = ANY($${args.length}::text[])`));
      if (query.ids !== undefined) (args.push([...query.ids]), where.push(`id = ANY($${args.length}::bigint[])`));
      args.push(limit);
      return (await h.op(op).all(`SELECT * FROM ${MT} WHERE ${where.join(' AND ')} ORDER BY ${STATE_RANK}, confidence DESC, uses DESC, id LIMIT $${args.length}`, args)).map(toMethodology);
    },

    async transitionMethodology(scope, id, change) {
      const op = 'learning.transitionMethodology';
      checkTransition(op, scope, id, change, METHODOLOGY_STATES);
      return h.tx(op, async (tx) => {
        const r = await tx.get(`SELECT * FROM ${MT} WHERE id = $3 AND ${S()} FOR UPDATE`, [...sp(scope), id]);
        if (!r || !change.from.includes(r.state as MethodologyRecord['state'])) return undefined;
        const graduated = change.to === 'graduated' ? change.now : change.to === 'candidate' ? null : (r.graduated_at ?? null);
        const quarantined = change.to === 'quarantined' ? change.now : change.to === 'candidate' ? null : (r.quarantined_at ?? null);
        const next = await tx.get(
          `UPDATE ${MT} SET state = $1, graduated_at = $2, quarantined_at = $3, graduation_proposed_at = NULL, state_reason = $4, updated_at = $5 WHERE id = $6 AND ${S(7)} RETURNING *`,
          [change.to, graduated, quarantined, change.reason, change.now, id, ...sp(scope)],
        );
        return toMethodology(next!);
      });
    },

    async listCases(scope, query = {}) {
      const op = 'learning.listCases';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      const where = [S()];
      const args: unknown[] = [...sp(scope)];
      if (query.status === 'pending') where.push('reflected_at IS NULL');
      if (query.status === 'reflected') where.push('reflected_at IS NOT NULL');
      if (query.role !== undefined) (args.push(query.role), where.push(`role = $${args.length}`));
      if (query.asset !== undefined) (args.push(query.asset), where.push(`asset = $${args.length}`));
      if (query.withoutMemory === true) where.push('memory_id IS NULL');
      const order = query.status === 'pending' || query.withoutMemory === true ? 'id' : query.status === 'reflected' ? 'reflected_at DESC, id DESC' : 'id DESC';
      args.push(limit);
      return (await h.op(op).all(`SELECT * FROM ${RM} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${args.length}`, args)).map(toCase);
    },

    async markCaseReflected(scope, id, r) {
      const op = 'learning.markCaseReflected';
      checkLearningScope(op, scope);
      checkRowId(op, 'id', id);
      const n = await h.op(op).run(
        `UPDATE ${RM} SET reflected_at = $1, classification = $2, reflection = $3, lesson_memory_ids = $4 WHERE id = $5 AND ${S(6)} AND reflected_at IS NULL`,
        [r.now, r.classification, r.reflection, JSON.stringify(r.lessonMemoryIds), id, ...sp(scope)],
      );
      return n === 1;
    },

    async upsertPreference(scope, input) {
      const op = 'learning.upsertPreference';
      checkLearningScope(op, scope);
      checkNewPreference(op, input);
      checkPreferenceRestore(op, input.restore);
      return h.tx(op, async (tx) => {
        const r = input.restore;
        const keepId = r?.id !== undefined && !(await tx.get(`SELECT 1 AS x FROM ${LP} WHERE id = $1`, [r.id])) ? r.id : null;
        const inserted = await tx.get(
          `INSERT INTO ${LP} (id, user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, contradictions, last_evidence_at, activated_at,
             decided_at, memory_id, created_at, updated_at)
           OVERRIDING SYSTEM VALUE
           VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${LP}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
           ON CONFLICT (user_id, agent_id, dimension, kind, normalized_text) DO NOTHING RETURNING *`,
          [
            keepId, ...sp(scope), input.dimension, input.kind, input.text, input.normalizedText, input.value ?? null, input.source, r?.state ?? 'proposed', r?.evidence ?? 0,
            r?.contradictions ?? 0, r?.lastEvidenceAt ?? input.now, r?.activatedAt ?? null, r?.decidedAt ?? null, r?.memoryId ?? null, r?.createdAt ?? input.now, input.now,
          ],
        );
        if (inserted && keepId !== null) await advanceIdentity(tx, LP);
        if (inserted) return { preference: toPreference(inserted), created: true };
        const existing = await tx.get(`SELECT * FROM ${LP} WHERE ${S()} AND dimension = $3 AND kind = $4 AND normalized_text = $5`, [...sp(scope), input.dimension, input.kind, input.normalizedText]);
        return { preference: toPreference(existing!), created: false };
      });
    },

    async observePreferences(scope, observations, now) {
      const op = 'learning.observePreferences';
      checkObservations(op, scope, observations);
      if (observations.length === 0) return [];
      return h.tx(op, async (tx) => {
        await lockScope(tx, scope);
        return observeIn(tx, scope, observations, now);
      });
    },

    async getPreference(scope, id) {
      checkLearningScope('learning.getPreference', scope);
      checkRowId('learning.getPreference', 'id', id);
      const r = await h.op('learning.getPreference').get(`SELECT * FROM ${LP} WHERE id = $3 AND ${S()}`, [...sp(scope), id]);
      return r && toPreference(r);
    },

    async listPreferences(scope, query = {}) {
      const op = 'learning.listPreferences';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      checkStateList(op, 'states', query.states, PREFERENCE_STATES);
      const where = [S()];
      const args: unknown[] = [...sp(scope)];
      if (query.states !== undefined) (args.push([...query.states]), where.push(`state = ANY($${args.length}::text[])`));
      if (query.kinds !== undefined) (args.push([...query.kinds]), where.push(`kind = ANY($${args.length}::text[])`));
      if (query.dimension !== undefined) (args.push(query.dimension), where.push(`dimension = $${args.length}`));
      args.push(limit);
      return (await h.op(op).all(`SELECT * FROM ${LP} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${args.length}`, args)).map(toPreference);
    },

    async transitionPreference(scope, id, change) {
      const op = 'learning.transitionPreference';
      checkTransition(op, scope, id, change, PREFERENCE_STATES);
      return h.tx(op, async (tx) => {
        const r = await tx.get(`SELECT * FROM ${LP} WHERE id = $3 AND ${S()} FOR UPDATE`, [...sp(scope), id]);
        if (!r || !change.from.includes(r.state as PreferenceRecord['state'])) return undefined;
        const next = await tx.get(
          `UPDATE ${LP} SET state = $1, decided_at = $2, activated_at = $3, memory_id = COALESCE($4, memory_id), updated_at = $2 WHERE id = $5 RETURNING *`,
          [change.to, change.now, change.to === 'active' ? change.now : (r.activated_at ?? null), change.memoryId ?? null, id],
        );
        return toPreference(next!);
      });
    },

    async insertPerpsFills(scope, fills) {
      const op = 'learning.insertPerpsFills';
      checkLearningScope(op, scope);
      fills.forEach((f, i) => checkPerpsFill(op, f, i));
      if (fills.length === 0) return 0;
      return h.tx(op, async (tx) => {
        let n = 0;
        for (const f of fills) {
          n += await tx.run(
            `INSERT INTO ${h.t('perps_fills')} (user_id, agent_id, sub_account_id, wallet_address, oid, ts_ms, symbol, side, dir, size, price, fee, closed_pnl, raw_json, fill_uid, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
            [...sp(scope), f.subAccountId, f.walletAddress ?? null, f.oid, f.tsMs, f.symbol, f.side, f.dir ?? null, f.size, f.price, f.fee, f.closedPnl, f.rawJson ?? null, f.fillUid, f.now],
          );
        }
        return n;
      });
    },

    async insertExternalSpot(scope, activities) {
      const op = 'learning.insertExternalSpot';
      checkLearningScope(op, scope);
      activities.forEach((a, i) => checkSpotActivity(op, a, i));
      if (activities.length === 0) return 0;
      return h.tx(op, async (tx) => {
        let n = 0;
        for (const a of activities) {
          n += await tx.run(
            `INSERT INTO ${h.t('external_spot_activities')} (user_id, agent_id, tx_hash, ts_ms, type, from_token, to_token, amount, value_usd, status, raw_json, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
            [...sp(scope), a.txHash, a.tsMs, a.type, a.fromToken ?? null, a.toToken ?? null, a.amount ?? null, a.valueUsd ?? null, a.status, a.rawJson ?? null, a.now],
          );
        }
        return n;
      });
    },

    async listPerpsFills(scope, query = {}) {
      const op = 'learning.listPerpsFills';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      const rows =
        query.subAccountId === undefined
          ? await h.op(op).all(`SELECT * FROM ${h.t('perps_fills')} WHERE ${S()} ORDER BY ts_ms DESC, id DESC LIMIT $3`, [...sp(scope), limit])
          : await h.op(op).all(`SELECT * FROM ${h.t('perps_fills')} WHERE ${S()} AND sub_account_id = $3 ORDER BY ts_ms DESC, id DESC LIMIT $4`, [...sp(scope), query.subAccountId, limit]);
      return rows.map(toFill);
    },

    async listExternalSpot(scope, query = {}) {
      const op = 'learning.listExternalSpot';
      checkLearningScope(op, scope);
      const limit = checkLimit(op, query.limit, 100);
      return (await h.op(op).all(`SELECT * FROM ${h.t('external_spot_activities')} WHERE ${S()} ORDER BY ts_ms DESC, id DESC LIMIT $3`, [...sp(scope), limit])).map(toSpot);
    },

    async getSyncState(scope, source, subAccountId) {
      checkLearningScope('learning.getSyncState', scope);
      const r = await h.op('learning.getSyncState').get(`SELECT * FROM ${h.t('history_sync_state')} WHERE ${S()} AND source = $3 AND sub_account_id = $4`, [...sp(scope), source, subAccountId]);
      return r && toSync(r);
    },

    async listSyncStates(scope) {
      checkLearningScope('learning.listSyncStates', scope);
      return (await h.op('learning.listSyncStates').all(`SELECT * FROM ${h.t('history_sync_state')} WHERE ${S()} ORDER BY source, sub_account_id`, sp(scope))).map(toSync);
    },

    async recordSyncAttempt(scope, a) {
      const op = 'learning.recordSyncAttempt';
      checkSyncAttempt(op, scope, a);
      const H = h.t('history_sync_state');
      const row = a.ok
        ? await h.op(op).get(
            `INSERT INTO ${H} AS s (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
             VALUES ($1, $2, $3, $4, $5, $6, NULL, 0)
             ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
               last_synced_ts_ms = GREATEST(COALESCE(s.last_synced_ts_ms, excluded.last_synced_ts_ms), COALESCE(excluded.last_synced_ts_ms, s.last_synced_ts_ms)),
               last_synced_at = excluded.last_synced_at, last_error = NULL, consecutive_failures = 0 RETURNING *`,
            [...sp(scope), a.source, a.subAccountId, a.watermarkMs ?? null, a.now],
          )
        : await h.op(op).get(
            `INSERT INTO ${H} AS s (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
             VALUES ($1, $2, $3, $4, NULL, $5, $6, 1)
             ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
               last_synced_at = excluded.last_synced_at, last_error = excluded.last_error, consecutive_failures = s.consecutive_failures + 1 RETURNING *`,
            [...sp(scope), a.source, a.subAccountId, a.now, a.error.slice(0, 2000)],
          );
      return toSync(row!);
    },

    async recordPersonalizationSnapshot(scope, s) {
      const op = 'learning.recordPersonalizationSnapshot';
      checkLearningScope(op, scope);
      if (typeof s.sessionWatermark !== 'string') throw invalidArgument(op, 'sessionWatermark must be a string');
      const r = await h.op(op).get(
        `INSERT INTO ${h.t('personalization_snapshots')} (user_id, agent_id, session_watermark, session_ids, fact_hashes, written_ids, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [...sp(scope), s.sessionWatermark, JSON.stringify(s.sessionIds), JSON.stringify(s.factHashes), JSON.stringify(s.writtenIds), s.now],
      );
      return toSnapshot(r!);
    },

    async latestPersonalizationSnapshot(scope) {
      checkLearningScope('learning.latestPersonalizationSnapshot', scope);
      const r = await h.op('learning.latestPersonalizationSnapshot').get(`SELECT * FROM ${h.t('personalization_snapshots')} WHERE ${S()} ORDER BY id DESC LIMIT 1`, sp(scope));
      return r && toSnapshot(r);
    },

    async importTradeCase(scope, c) {
      const op = 'learning.importTradeCase';
      checkLearningScope(op, scope);
      checkImportedTradeCase(op, c);
      return h.tx(op, async (tx) => {
        const known = await tx.get(`SELECT id FROM ${T} WHERE ${S()} AND order_id = $3`, [...sp(scope), c.orderId]);
        if (known) {
          const existing = await tx.get(`SELECT * FROM ${RM} WHERE ${S()} AND trade_id = $3`, [...sp(scope), Number(known.id)]);
          if (existing) return { case: toCase(existing), created: false };
          throw invalidArgument(op, `orderId ${JSON.stringify(c.orderId)} is a trade of this scope without a case; import it under another order id`);
        }
        const methodologyIds = JSON.stringify([...c.methodologyIds]);
        const trade = await tx.get(
          `INSERT INTO ${T} (user_id, agent_id, order_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price, notional_usd, fee_usd, realized_pnl_usd,
             role, methodology_ids, simulated, provider, at, status, closed_quantity, exit_price, closed_at, holding_ms, outcome, created_at)
           VALUES ($1, $2, $3, 'memory_import', 'open', $4, $5, $6, $7, $8, $9, $10, $11, 0, $12, $13, $14, $15, 'import', $16, 'closed', $9, $17, $18, $19, $20, $21) RETURNING id`,
          [
            ...sp(scope), c.orderId, c.kind, c.asset, c.assetClass ?? null, c.side, c.direction ?? null, c.quantity, c.entryPrice, c.notionalUsd, c.realizedPnlUsd, c.role,
            methodologyIds, c.simulated, c.openedAt, c.exitPrice ?? null, c.closedAt, c.holdingMs, c.outcome, c.now,
          ],
        );
        const keepId = c.id !== undefined && !(await tx.get(`SELECT 1 AS x FROM ${RM} WHERE id = $1`, [c.id])) ? c.id : null;
        const row = await tx.get(
          `INSERT INTO ${RM} (id, user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms, methodology_ids,
             opened_at, closed_at, created_at, reflected_at, classification, reflection)
           OVERRIDING SYSTEM VALUE
           VALUES (COALESCE($1::bigint, nextval(pg_get_serial_sequence('${RM}', 'id'))), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
           RETURNING *`,
          [
            keepId, ...sp(scope), Number(trade!.id), c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs,
            methodologyIds, c.openedAt, c.closedAt, c.now, c.reflectedAt ?? null, c.classification ?? null, c.reflection ?? null,
          ],
        );
        if (keepId !== null) await advanceIdentity(tx, RM);
        return { case: toCase(row!), created: true };
      });
    },

    async linkCaseMemory(scope, caseId, memoryId) {
      const op = 'learning.linkCaseMemory';
      checkLearningScope(op, scope);
      checkRowId(op, 'caseId', caseId);
      checkRowId(op, 'memoryId', memoryId);
      return (await h.op(op).run(`UPDATE ${RM} SET memory_id = $1 WHERE id = $2 AND ${S(3)} AND memory_id IS NULL`, [memoryId, caseId, ...sp(scope)])) === 1;
    },

    async caseMemoryScopes(limit) {
      const op = 'learning.caseMemoryScopes';
      const n = checkLimit(op, limit, 100);
      const rows = await h.op(op).all(`SELECT DISTINCT user_id, agent_id FROM ${RM} WHERE memory_id IS NULL ORDER BY user_id, agent_id LIMIT $1`, [n]);
      return rows.map((r) => ({ userId: String(r.user_id), ...agent(r) }));
    },

    async enqueueExtraction(scope, t) {
      const op = 'learning.enqueueExtraction';
      checkExtractionTurn(op, scope, t);
      const n = await h.op(op).run(
        `INSERT INTO ${EQ} (user_id, agent_id, session_id, turn_id, text, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, agent_id, turn_id) DO NOTHING`,
        [...sp(scope), t.sessionId, t.turnId, t.text, t.now],
      );
      return n === 1;
    },

    async claimExtractions(scope, c) {
      const op = 'learning.claimExtractions';
      const limit = checkExtractionClaim(op, scope, c);
      // SKIP LOCKED: a concurrent claimer takes the next rows instead of waiting for these.
      const rows = await h.op(op).all(
        `UPDATE ${EQ} SET claimed_by = $3, claimed_until = $4, attempts = attempts + 1
           WHERE id IN (SELECT id FROM ${EQ} WHERE ${S()} AND (claimed_until IS NULL OR claimed_until < $5) ORDER BY id LIMIT $6 FOR UPDATE SKIP LOCKED)
           RETURNING *`,
        [...sp(scope), c.owner, c.leaseUntil, c.now, limit],
      );
      return rows.map(toExtraction).sort((a, b) => a.id - b.id);
    },

    async completeExtractions(scope, list) {
      const op = 'learning.completeExtractions';
      checkLearningScope(op, scope);
      const idList = checkRowIds(op, 'ids', list);
      if (idList.length === 0) return 0;
      return h.op(op).run(`DELETE FROM ${EQ} WHERE ${S()} AND id = ANY($3::bigint[])`, [...sp(scope), idList]);
    },

    async extractionScopes(limit) {
      const op = 'learning.extractionScopes';
      const n = checkLimit(op, limit, 100);
      const rows = await h.op(op).all(`SELECT DISTINCT user_id, agent_id FROM ${EQ} ORDER BY user_id, agent_id LIMIT $1`, [n]);
      return rows.map((r) => ({ userId: String(r.user_id), ...agent(r) }));
    },

    async stats(scope, options) {
      const op = 'learning.stats';
      checkLearningScope(op, scope);
      if (typeof options?.overdueBefore !== 'string' || Number.isNaN(Date.parse(options.overdueBefore))) throw invalidArgument(op, 'overdueBefore must be an ISO date');
      const q = h.op(op);
      const by = async (sql: string): Promise<Record<string, number>> => Object.fromEntries((await q.all(sql, sp(scope))).map((r) => [String(r.k), Number(r.n)]));
      const m = await by(`SELECT state AS k, COUNT(*) AS n FROM ${MT} WHERE ${S()} GROUP BY state`);
      const pr = await by(`SELECT state AS k, COUNT(*) AS n FROM ${LP} WHERE ${S()} GROUP BY state`);
      const hc = await by(`SELECT state AS k, COUNT(*) AS n FROM ${LP} WHERE ${S()} AND kind = 'hard_constraint' GROUP BY state`);
      const t = await by(`SELECT status AS k, COUNT(*) AS n FROM ${T} WHERE ${S()} GROUP BY status`);
      const one = async (sql: string, extra: unknown[] = []) => Number((await q.get(sql, [...sp(scope), ...extra]))?.n ?? 0);
      return {
        methodologies: { proposed: m.proposed ?? 0, candidate: m.candidate ?? 0, graduated: m.graduated ?? 0, quarantined: m.quarantined ?? 0 },
        graduationProposed: await one(`SELECT COUNT(*) AS n FROM ${MT} WHERE ${S()} AND state = 'candidate' AND graduation_proposed_at IS NOT NULL`),
        preferences: { proposed: pr.proposed ?? 0, active: pr.active ?? 0, rejected: pr.rejected ?? 0 },
        hardConstraints: { proposed: hc.proposed ?? 0, active: hc.active ?? 0, rejected: hc.rejected ?? 0 },
        cases: {
          pending: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NULL`),
          overdue: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NULL AND closed_at < $3`, [options.overdueBefore]),
          reflected: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NOT NULL`),
        },
        trades: { open: t.open ?? 0, closed: t.closed ?? 0, settled: t.settled ?? 0 },
        perpsFills: await one(`SELECT COUNT(*) AS n FROM ${h.t('perps_fills')} WHERE ${S()}`),
        externalSpot: await one(`SELECT COUNT(*) AS n FROM ${h.t('external_spot_activities')} WHERE ${S()}`),
        extractionQueue: queued(await q.get(`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM ${EQ} WHERE ${S()}`, sp(scope))),
      };
    },
  };
}
