/** The PostgreSQL learning engine's row mapping, its tables and the statement helpers its parts share. */
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceRecord, RoleCaseRecord,
  TradeRecord,
} from '../learning-types';
import { opt } from '../sqlite/rows';
import type { PgHandle, PgRow, PgTx } from './handle';

/** A result row. */
export type Row = PgRow;
/** A scope's two parameters (`''` for a user-level row's agent). */
export const sp = (s: LearningScope): [string, string] => [s.userId, s.agentId ?? ''];
export const agent = (r: Row) => (r.agent_id === '' ? {} : { agentId: String(r.agent_id) });
const ids = (v: unknown): number[] => (typeof v === 'string' ? (JSON.parse(v) as number[]) : []);
const o = <K extends string>(k: K, v: unknown) => opt(k, (v === null || v === undefined ? null : v) as never);
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export function toTrade(r: Row): TradeRecord {
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

export function toMethodology(r: Row): MethodologyRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), assetClass: String(r.asset_class), text: String(r.text), normalizedText: String(r.normalized_text),
    origin: r.origin as MethodologyRecord['origin'], ...o('sourceRef', r.source_ref), state: r.state as MethodologyRecord['state'], uses: Number(r.uses),
    wins: Number(r.wins), confidence: Number(r.confidence), ...o('graduationProposedAt', r.graduation_proposed_at), ...o('graduatedAt', r.graduated_at),
    ...o('quarantinedAt', r.quarantined_at), ...o('stateReason', r.state_reason), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

export function toCase(r: Row): RoleCaseRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), tradeId: Number(r.trade_id), role: String(r.role), asset: String(r.asset), ...o('assetClass', r.asset_class),
    kind: r.kind as RoleCaseRecord['kind'], ...o('direction', r.direction), summary: String(r.summary), outcome: r.outcome as RoleCaseRecord['outcome'],
    realizedPnlUsd: Number(r.realized_pnl_usd), holdingMs: Number(r.holding_ms), methodologyIds: ids(r.methodology_ids), openedAt: String(r.opened_at),
    closedAt: String(r.closed_at), createdAt: String(r.created_at), ...o('reflectedAt', r.reflected_at), ...o('classification', r.classification),
    ...o('reflection', r.reflection), lessonMemoryIds: ids(r.lesson_memory_ids), ...o('memoryId', num(r.memory_id)),
  };
}

export function toExtraction(r: Row): ExtractionTurnRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), sessionId: String(r.session_id), turnId: String(r.turn_id), text: String(r.text),
    createdAt: String(r.created_at), attempts: Number(r.attempts),
  };
}

export function toPreference(r: Row): PreferenceRecord {
  return {
    id: Number(r.id), userId: String(r.user_id), ...agent(r), dimension: String(r.dimension), kind: r.kind as PreferenceRecord['kind'], text: String(r.text),
    normalizedText: String(r.normalized_text), ...o('value', r.value), source: r.source as PreferenceRecord['source'], state: r.state as PreferenceRecord['state'],
    evidence: Number(r.evidence), contradictions: Number(r.contradictions), lastEvidenceAt: String(r.last_evidence_at), ...o('activatedAt', r.activated_at),
    ...o('decidedAt', r.decided_at), ...o('memoryId', num(r.memory_id)), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

export const toFill = (r: Row): PerpsFillRecord => ({
  id: Number(r.id), subAccountId: String(r.sub_account_id), ...o('walletAddress', r.wallet_address), oid: String(r.oid), tsMs: Number(r.ts_ms), symbol: String(r.symbol),
  side: String(r.side), ...o('dir', r.dir), size: Number(r.size), price: Number(r.price), fee: Number(r.fee), closedPnl: Number(r.closed_pnl), ...o('rawJson', r.raw_json),
  fillUid: String(r.fill_uid), createdAt: String(r.created_at),
});
export const toSpot = (r: Row): ExternalSpotRecord => ({
  id: Number(r.id), txHash: String(r.tx_hash), tsMs: Number(r.ts_ms), type: String(r.type), ...o('fromToken', r.from_token), ...o('toToken', r.to_token),
  ...o('amount', r.amount), ...o('valueUsd', num(r.value_usd)), status: String(r.status), ...o('rawJson', r.raw_json), createdAt: String(r.created_at),
});
export const toSync = (r: Row): HistorySyncState => ({
  source: String(r.source), subAccountId: String(r.sub_account_id), ...o('lastSyncedTsMs', num(r.last_synced_ts_ms)), lastSyncedAt: String(r.last_synced_at),
  ...o('lastError', r.last_error), consecutiveFailures: Number(r.consecutive_failures),
});
export const toSnapshot = (r: Row): PersonalizationSnapshot => ({
  id: Number(r.id), sessionWatermark: String(r.session_watermark), sessionIds: JSON.parse(String(r.session_ids)) as string[],
  factHashes: JSON.parse(String(r.fact_hashes)) as string[], writtenIds: ids(r.written_ids), createdAt: String(r.created_at),
});

export function compactRecord<T extends object>(value: { [K in keyof T]?: T[K] | undefined } & object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** `user_id = $a AND agent_id = $b` with the given placeholder numbers. */
export const S = (a = 1) => `user_id = $${a} AND agent_id = $${a + 1}`;

/** After a row kept its restored id, move the identity past every id in the table (never backwards). */
export async function advanceIdentity(tx: PgTx, table: string): Promise<void> {
  await tx.run(
    `SELECT setval(x.s, GREATEST((SELECT COALESCE(max(id), 1) FROM ${table}), COALESCE(pg_sequence_last_value(x.s::regclass), 1))) FROM (SELECT pg_get_serial_sequence('${table}', 'id') AS s) x`,
  );
}

/** What every part of the PostgreSQL learning engine works with: the handle and its tables' qualified names. */
export interface PgLearningState {
  readonly h: PgHandle;
  /** trade_history */
  readonly T: string;
  /** methodologies */
  readonly MT: string;
  /** methodology_outcomes */
  readonly MO: string;
  /** role_memory */
  readonly RM: string;
  /** learned_preferences */
  readonly LP: string;
  /** memory_extraction_queue */
  readonly EQ: string;
}

export function pgLearningState(h: PgHandle): PgLearningState {
  return { h, T: h.t('trade_history'), MT: h.t('methodologies'), MO: h.t('methodology_outcomes'), RM: h.t('role_memory'), LP: h.t('learned_preferences'), EQ: h.t('memory_extraction_queue') };
}

/** Serialise the scope's learning writes (a transaction-scoped advisory lock). */
export function lockScope(st: PgLearningState, tx: PgTx, scope: LearningScope): Promise<number> {
  return tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.learning:${st.h.schemaName}:${scope.userId}\u0001${scope.agentId ?? ''}`]);
}

/** A scope read back from its two columns. */
export const scopeOfRow = (r: Row): LearningScope => ({ userId: String(r.user_id), ...agent(r) });
