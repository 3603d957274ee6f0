/** The SQLite learning engine's row mapping and its statement helpers (shared by its parts). */
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceRecord, RoleCaseRecord,
  TradeRecord,
} from '../learning-types';
import type { SqliteHandle } from './handle';
import { opt } from './rows';

/** A result row. */
export type Row = Record<string, unknown>;
/** The scope filter; bind {@link sp} of the scope. */
export const S = 'user_id = ? AND agent_id = ?';
/** A scope's two parameters (`''` for a user-level row's agent). */
export const sp = (s: LearningScope): [string, string] => [s.userId, s.agentId ?? ''];
export const agent = (r: Row) => (r.agent_id === '' ? {} : { agentId: r.agent_id as string });
const ids = (v: unknown): number[] => (typeof v === 'string' ? (JSON.parse(v) as number[]) : []);
const o = <K extends string>(k: K, v: unknown) => opt(k, v as never);

export function toTrade(r: Row): TradeRecord {
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

export function toExtraction(r: Row): ExtractionTurnRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), sessionId: r.session_id as string, turnId: r.turn_id as string, text: r.text as string,
    createdAt: r.created_at as string, attempts: r.attempts as number,
  };
}

export function toMethodology(r: Row): MethodologyRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), assetClass: r.asset_class as string, text: r.text as string,
    normalizedText: r.normalized_text as string, origin: r.origin as MethodologyRecord['origin'], ...o('sourceRef', r.source_ref),
    state: r.state as MethodologyRecord['state'], uses: r.uses as number, wins: r.wins as number, confidence: r.confidence as number,
    ...o('graduationProposedAt', r.graduation_proposed_at), ...o('graduatedAt', r.graduated_at), ...o('quarantinedAt', r.quarantined_at),
    ...o('stateReason', r.state_reason), createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

export function toCase(r: Row): RoleCaseRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), tradeId: r.trade_id as number, role: r.role as string, asset: r.asset as string,
    ...o('assetClass', r.asset_class), kind: r.kind as RoleCaseRecord['kind'], ...o('direction', r.direction), summary: r.summary as string,
    outcome: r.outcome as RoleCaseRecord['outcome'], realizedPnlUsd: r.realized_pnl_usd as number, holdingMs: r.holding_ms as number,
    methodologyIds: ids(r.methodology_ids), openedAt: r.opened_at as string, closedAt: r.closed_at as string, createdAt: r.created_at as string,
    ...o('reflectedAt', r.reflected_at), ...o('classification', r.classification), ...o('reflection', r.reflection), lessonMemoryIds: ids(r.lesson_memory_ids),
    ...o('memoryId', r.memory_id),
  };
}

export function toPreference(r: Row): PreferenceRecord {
  return {
    id: r.id as number, userId: r.user_id as string, ...agent(r), dimension: r.dimension as string, kind: r.kind as PreferenceRecord['kind'],
    text: r.text as string, normalizedText: r.normalized_text as string, ...o('value', r.value), source: r.source as PreferenceRecord['source'],
    state: r.state as PreferenceRecord['state'], evidence: r.evidence as number, contradictions: r.contradictions as number,
    lastEvidenceAt: r.last_evidence_at as string, ...o('activatedAt', r.activated_at), ...o('decidedAt', r.decided_at), ...o('memoryId', r.memory_id),
    createdAt: r.created_at as string, updatedAt: r.updated_at as string,
  };
}

export function toFill(r: Row): PerpsFillRecord {
  return {
    id: r.id as number, subAccountId: r.sub_account_id as string, ...o('walletAddress', r.wallet_address), oid: r.oid as string, tsMs: r.ts_ms as number,
    symbol: r.symbol as string, side: r.side as string, ...o('dir', r.dir), size: r.size as number, price: r.price as number, fee: r.fee as number,
    closedPnl: r.closed_pnl as number, ...o('rawJson', r.raw_json), fillUid: r.fill_uid as string, createdAt: r.created_at as string,
  };
}

export function toSpot(r: Row): ExternalSpotRecord {
  return {
    id: r.id as number, txHash: r.tx_hash as string, tsMs: r.ts_ms as number, type: r.type as string, ...o('fromToken', r.from_token), ...o('toToken', r.to_token),
    ...o('amount', r.amount), ...o('valueUsd', r.value_usd), status: r.status as string, ...o('rawJson', r.raw_json), createdAt: r.created_at as string,
  };
}

export function toSync(r: Row): HistorySyncState {
  return {
    source: r.source as string, subAccountId: r.sub_account_id as string, ...o('lastSyncedTsMs', r.last_synced_ts_ms), lastSyncedAt: r.last_synced_at as string,
    ...o('lastError', r.last_error), consecutiveFailures: r.consecutive_failures as number,
  };
}

export function toSnapshot(r: Row): PersonalizationSnapshot {
  return {
    id: r.id as number, sessionWatermark: r.session_watermark as string, sessionIds: JSON.parse(r.session_ids as string) as string[],
    factHashes: JSON.parse(r.fact_hashes as string) as string[], writtenIds: ids(r.written_ids), createdAt: r.created_at as string,
  };
}

/** A record without its `undefined` fields (optional fields stay absent, as when read from a row). */
export function compactRecord<T extends object>(value: { [K in keyof T]?: T[K] | undefined } & object): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** What every part of the SQLite learning engine works with: the handle and its cached statements. */
export interface SqliteLearningState {
  readonly handle: SqliteHandle;
  get(sql: string, ...args: unknown[]): Row | undefined;
  all(sql: string, ...args: unknown[]): Row[];
  run(sql: string, ...args: unknown[]): { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint };
}

export function sqliteLearningState(handle: SqliteHandle): SqliteLearningState {
  return {
    handle,
    get: (sql, ...args) => handle.prepare(sql).get(...args) as Row | undefined,
    all: (sql, ...args) => handle.prepare(sql).all(...args) as Row[],
    run: (sql, ...args) => handle.prepare(sql).run(...args),
  };
}

/** A scope read back from its two columns. */
export const scopeOfRow = (r: Row): LearningScope => ({ userId: r.user_id as string, ...agent(r) });
