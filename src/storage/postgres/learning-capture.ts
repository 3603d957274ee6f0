/**
 * The PostgreSQL engine's side of the shared drivers. The drivers are synchronous and a Postgres statement is
 * not, so each runs over staged state: under the scope's advisory lock, load what the driver can touch, run it
 * over that state (its row operations queue their statements), then run the queued statements in order in the
 * same transaction.
 *
 * - Capture: the batch's known order ids, the open trades of the assets it closes, their attributions and
 *   cases, the methodologies involved; trade ids are drawn from the identity sequence up front, so the driver
 *   sees final ids.
 * - Preference evidence: the scope's behavioural preferences of the observed dimensions; a new preference gets
 *   a stand-in id (negative) until its insert returns the real one.
 */
import type { CaptureInput } from '../learning-domain';
import { type CaptureOps, minedPreferenceFields, type ObserveOps, runCapture, runObserve } from '../learning-logic';
import type { CaptureResult, LearningScope, MethodologyRecord, NewTradeExecution, PreferenceObservation, PreferenceRecord, RoleCaseRecord, TradeRecord } from '../learning-types';
import type { PgTx } from './handle';
import { compactRecord, type PgLearningState, S, sp, toMethodology, toPreference, toTrade } from './learning-rows';

type Write = (q: PgTx) => Promise<void>;

/** What the capture driver may touch, loaded up front, and the statements its operations queued. */
interface CaptureStage {
  readonly existingOrders: ReadonlySet<string>;
  readonly newOrders: Set<string>;
  readonly trades: Map<number, TradeRecord>;
  readonly attributions: Set<string>;
  readonly casesFor: Set<number>;
  readonly methodologies: Map<number, MethodologyRecord>;
  readonly newIds: number[];
  readonly writes: Write[];
}

const copy = <V>(v: V): V => structuredClone(v);

async function stageCapture(st: PgLearningState, tx: PgTx, scope: LearningScope, executions: readonly NewTradeExecution[]): Promise<CaptureStage> {
  const { T, MO, RM, MT } = st;
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
  // Only the pairs a close can attribute (an open trade and one of its methodologies), by the table's key
  // (methodology_id, trade_id): asked by trade_id alone, no index led with it and every close scanned the table.
  const pairs = [...trades.values()].flatMap((t) => t.methodologyIds.map((mid) => [mid, t.id] as const));
  const attributions = new Set(
    pairs.length === 0
      ? []
      : (await tx.all(`SELECT methodology_id, trade_id FROM ${MO} WHERE (methodology_id, trade_id) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))`, [pairs.map((p) => p[0]), pairs.map((p) => p[1])])).map(
          (r) => `${String(r.methodology_id)}:${String(r.trade_id)}`,
        ),
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
  return { existingOrders, newOrders: new Set(), trades, attributions, casesFor, methodologies, newIds, writes: [] };
}

function insertTrade(st: PgLearningState, scope: LearningScope, g: CaptureStage, ...[e, status, at]: Parameters<CaptureOps['insertTrade']>): TradeRecord {
  const id = g.newIds.shift();
  if (id === undefined) throw new Error('learning.recordExecutions: ran out of pre-drawn trade ids');
  g.newOrders.add(e.orderId);
  const { details, ...rest } = e;
  const row = compactRecord<TradeRecord>({
    ...rest, userId: scope.userId, agentId: scope.agentId, id, methodologyIds: [...e.methodologyIds], status, closedQuantity: 0,
    details: details === undefined ? undefined : (JSON.parse(JSON.stringify(details)) as Record<string, unknown>),
  });
  g.trades.set(id, row);
  g.writes.push(async (q) => {
    await q.run(
      `INSERT INTO ${st.T} (id, user_id, agent_id, order_id, session_id, turn_id, tool_call_id, tool_name, action, kind, asset, asset_class, side, direction, quantity, price,
         notional_usd, fee_usd, realized_pnl_usd, role, methodology_ids, simulated, provider, at, status, details_json, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)`,
      [
        id, ...sp(scope), e.orderId, e.sessionId ?? null, e.turnId ?? null, e.toolCallId ?? null, e.toolName, e.action, e.kind, e.asset, e.assetClass ?? null, e.side,
        e.direction ?? null, e.quantity, e.price, e.notionalUsd, e.feeUsd, e.realizedPnlUsd, e.role, JSON.stringify(e.methodologyIds), e.simulated, e.provider, e.at, status,
        e.details === undefined ? null : JSON.stringify(e.details), at,
      ],
    );
  });
  return copy(row);
}

function updateTrade(st: PgLearningState, scope: LearningScope, g: CaptureStage, ...[trade, patch]: Parameters<CaptureOps['updateTrade']>): TradeRecord {
  const next = compactRecord<TradeRecord>({ ...g.trades.get(trade.id)!, ...patch });
  g.trades.set(trade.id, next);
  g.writes.push(async (q) => {
    await q.run(`UPDATE ${st.T} SET closed_quantity = $1, realized_pnl_usd = $2, exit_price = $3, status = $4, closed_at = $5, holding_ms = $6, outcome = $7 WHERE id = $8 AND ${S(9)}`, [
      patch.closedQuantity, patch.realizedPnlUsd, patch.exitPrice, patch.status, patch.closedAt ?? null, patch.holdingMs ?? null, patch.outcome ?? null, trade.id, ...sp(scope),
    ]);
  });
  return copy(next);
}

function updateMethodologyScore(st: PgLearningState, scope: LearningScope, g: CaptureStage, ...[m, s, at]: Parameters<CaptureOps['updateMethodologyScore']>): MethodologyRecord {
  const next = compactRecord<MethodologyRecord>({
    ...g.methodologies.get(m.id)!, uses: s.uses, wins: s.wins, confidence: s.confidence, state: s.state, graduationProposedAt: s.graduationProposedAt,
    quarantinedAt: s.quarantinedAt, stateReason: s.stateReason, updatedAt: at,
  });
  g.methodologies.set(m.id, next);
  g.writes.push(async (q) => {
    await q.run(
      `UPDATE ${st.MT} SET uses = $1, wins = $2, confidence = $3, state = $4, graduation_proposed_at = $5, quarantined_at = $6, state_reason = $7, updated_at = $8 WHERE id = $9 AND ${S(10)}`,
      [s.uses, s.wins, s.confidence, s.state, s.graduationProposedAt ?? null, s.quarantinedAt ?? null, s.stateReason ?? null, at, m.id, ...sp(scope)],
    );
  });
  return copy(next);
}

function insertCase(st: PgLearningState, scope: LearningScope, g: CaptureStage, c: Parameters<CaptureOps['insertCase']>[0]): RoleCaseRecord | undefined {
  if (g.casesFor.has(c.tradeId)) return undefined;
  g.casesFor.add(c.tradeId);
  const record = compactRecord<RoleCaseRecord>({ ...c, userId: scope.userId, agentId: scope.agentId, id: 0, methodologyIds: [...c.methodologyIds], lessonMemoryIds: [] });
  g.writes.push(async (q) => {
    const r = await q.get<{ id: unknown }>(
      `INSERT INTO ${st.RM} (user_id, agent_id, trade_id, role, asset, asset_class, kind, direction, summary, outcome, realized_pnl_usd, holding_ms, methodology_ids, opened_at, closed_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
      [...sp(scope), c.tradeId, c.role, c.asset, c.assetClass ?? null, c.kind, c.direction ?? null, c.summary, c.outcome, c.realizedPnlUsd, c.holdingMs, JSON.stringify(c.methodologyIds), c.openedAt, c.closedAt, c.createdAt],
    );
    (record as { id: number }).id = Number(r!.id);
  });
  return record;
}

function stagedCaptureOps(st: PgLearningState, scope: LearningScope, g: CaptureStage): CaptureOps {
  return {
    hasOrder: (orderId) => g.existingOrders.has(orderId) || g.newOrders.has(orderId),
    insertTrade: (...a) => insertTrade(st, scope, g, ...a),
    openTrades: (asset, kind) =>
      [...g.trades.values()]
        .filter((t) => t.asset === asset && t.kind === kind && t.status === 'open')
        .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id - b.id))
        .map(copy),
    updateTrade: (...a) => updateTrade(st, scope, g, ...a),
    setClosedIds(trade, closed) {
      g.trades.set(trade.id, { ...g.trades.get(trade.id)!, closesTradeIds: [...closed] });
      g.writes.push(async (q) => {
        await q.run(`UPDATE ${st.T} SET closes_trade_ids = $1 WHERE id = $2 AND ${S(3)}`, [JSON.stringify(closed), trade.id, ...sp(scope)]);
      });
      return copy({ ...trade, closesTradeIds: [...closed] });
    },
    methodology: (id) => {
      const m = g.methodologies.get(id);
      return m && copy(m);
    },
    insertAttribution(mid, tid, outcome, at) {
      const key = `${mid}:${tid}`;
      if (g.attributions.has(key)) return false;
      g.attributions.add(key);
      g.writes.push(async (q) => {
        await q.run(`INSERT INTO ${st.MO} (methodology_id, trade_id, user_id, agent_id, outcome, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, [mid, tid, ...sp(scope), outcome, at]);
      });
      return true;
    },
    updateMethodologyScore: (...a) => updateMethodologyScore(st, scope, g, ...a),
    insertCase: (c) => insertCase(st, scope, g, c),
  };
}

/** Stage what the capture can touch, run it, and write its changes (inside `tx`, under the scope's lock). */
async function captureIn(st: PgLearningState, tx: PgTx, scope: LearningScope, input: CaptureInput): Promise<Omit<CaptureResult, 'preferences'>> {
  const stage = await stageCapture(st, tx, scope, input.executions);
  const result = runCapture(stagedCaptureOps(st, scope, stage), input.executions, input.policy, input.now);
  for (const write of stage.writes) await write(tx);
  return result;
}

type StagedPreference = Pick<PreferenceRecord, 'id' | 'dimension' | 'normalizedText' | 'state'>;

/** {@link ObserveOps} over the staged preferences; statements are queued in `writes`, new ids land in `real`. */
function stagedObserveOps(st: PgLearningState, scope: LearningScope, now: string, staged: StagedPreference[], writes: Write[], real: Map<number, number>): ObserveOps {
  const idOf = (id: number) => (id < 0 ? real.get(id)! : id);
  const bump = (sql: string) => (id: number) => void writes.push(async (q) => void (await q.run(sql, [now, idOf(id)])));
  return {
    match: (dimension, normalizedText) => staged.find((p) => p.dimension === dimension && p.normalizedText === normalizedText)?.id,
    insertMined(ob) {
      const standIn = -(staged.length + 1);
      const f = minedPreferenceFields(ob, now);
      staged.push({ id: standIn, dimension: f.dimension, normalizedText: f.normalizedText, state: f.state });
      writes.push(async (q) => {
        const r = await q.get(
          `INSERT INTO ${st.LP} (user_id, agent_id, dimension, kind, text, normalized_text, value, source, state, evidence, contradictions, last_evidence_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
          [...sp(scope), f.dimension, f.kind, f.text, f.normalizedText, f.value ?? null, f.source, f.state, f.evidence, f.contradictions, f.lastEvidenceAt, f.createdAt, f.updatedAt],
        );
        real.set(standIn, Number(r!.id));
      });
      return standIn;
    },
    support: bump(`UPDATE ${st.LP} SET evidence = evidence + 1, last_evidence_at = $1, updated_at = $1 WHERE id = $2`),
    contradict: bump(`UPDATE ${st.LP} SET contradictions = contradictions + 1, updated_at = $1 WHERE id = $2`),
    rivals: (dimension, id) => staged.filter((p) => p.dimension === dimension && p.id !== id && p.state !== 'rejected').map((p) => p.id),
  };
}

/** Apply preference observations inside `tx` (under the scope's lock); the touched rows by id. */
export async function observeIn(st: PgLearningState, tx: PgTx, scope: LearningScope, observations: readonly PreferenceObservation[], now: string): Promise<PreferenceRecord[]> {
  if (observations.length === 0) return [];
  const dimensions = [...new Set(observations.map((ob) => ob.dimension))];
  const staged: StagedPreference[] = (
    await tx.all(`SELECT id, dimension, normalized_text, state FROM ${st.LP} WHERE ${S()} AND kind = 'behavioural' AND dimension = ANY($3::text[]) ORDER BY id`, [...sp(scope), dimensions])
  ).map((r) => ({ id: Number(r.id), dimension: String(r.dimension), normalizedText: String(r.normalized_text), state: r.state as PreferenceRecord['state'] }));
  const writes: Write[] = [];
  const real = new Map<number, number>();
  const touched = runObserve(stagedObserveOps(st, scope, now, staged, writes, real), observations);
  for (const write of writes) await write(tx);
  const ids = touched.map((id) => (id < 0 ? real.get(id)! : id));
  return (await tx.all(`SELECT * FROM ${st.LP} WHERE id = ANY($1::bigint[]) ORDER BY id`, [ids])).map(toPreference);
}

/** Decision capture and the turn's preference evidence, in the caller's transaction (which holds the scope's lock). */
export async function capture(st: PgLearningState, tx: PgTx, scope: LearningScope, input: CaptureInput): Promise<CaptureResult> {
  const result = await captureIn(st, tx, scope, input);
  return { ...result, preferences: await observeIn(st, tx, scope, input.observations ?? [], input.now) };
}
