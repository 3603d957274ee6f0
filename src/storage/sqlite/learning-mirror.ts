/**
 * The SQLite engine's side tables: the trade-history mirror (perp fills, spot activities, sync states),
 * personalization snapshots, the memory-extraction queue, and the counts of `stats`.
 */
import type { ExtractionClaim, NewPersonalizationSnapshot } from '../learning-domain';
import { type LearningCounts, queued } from '../learning-logic';
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncAttempt, HistorySyncState, LearningScope, NewExternalSpotActivity, NewExtractionTurn, NewPerpsFill, PerpsFillRecord,
  PersonalizationSnapshot,
} from '../learning-types';
import { S, sp, type SqliteLearningState, toExtraction, toFill, toSnapshot, toSpot, toSync } from './learning-rows';
import { placeholders } from './rows';

export function insertPerpsFills(st: SqliteLearningState, scope: LearningScope, fills: readonly NewPerpsFill[]): number {
  return st.handle.write('learning.insertPerpsFills', () => {
    const stmt = st.handle.prepare(`INSERT OR IGNORE INTO perps_fills (user_id, agent_id, sub_account_id, wallet_address, oid, ts_ms, symbol, side, dir, size, price, fee, closed_pnl,
      raw_json, fill_uid, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    let n = 0;
    for (const f of fills) {
      n += stmt.run(...sp(scope), f.subAccountId, f.walletAddress ?? null, f.oid, f.tsMs, f.symbol, f.side, f.dir ?? null, f.size, f.price, f.fee, f.closedPnl, f.rawJson ?? null, f.fillUid, f.now).changes;
    }
    return n;
  });
}

export function insertExternalSpot(st: SqliteLearningState, scope: LearningScope, activities: readonly NewExternalSpotActivity[]): number {
  return st.handle.write('learning.insertExternalSpot', () => {
    const stmt = st.handle.prepare(`INSERT OR IGNORE INTO external_spot_activities (user_id, agent_id, tx_hash, ts_ms, type, from_token, to_token, amount, value_usd, status, raw_json, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    let n = 0;
    for (const a of activities) {
      n += stmt.run(...sp(scope), a.txHash, a.tsMs, a.type, a.fromToken ?? null, a.toToken ?? null, a.amount ?? null, a.valueUsd ?? null, a.status, a.rawJson ?? null, a.now).changes;
    }
    return n;
  });
}

export function listPerpsFills(st: SqliteLearningState, scope: LearningScope, subAccountId: string | undefined, limit: number): PerpsFillRecord[] {
  return st.handle
    .read('learning.listPerpsFills', () =>
      subAccountId === undefined
        ? st.all(`SELECT * FROM perps_fills WHERE ${S} ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), limit)
        : st.all(`SELECT * FROM perps_fills WHERE ${S} AND sub_account_id = ? ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), subAccountId, limit),
    )
    .map(toFill);
}

export function listExternalSpot(st: SqliteLearningState, scope: LearningScope, limit: number): ExternalSpotRecord[] {
  return st.handle.read('learning.listExternalSpot', () => st.all(`SELECT * FROM external_spot_activities WHERE ${S} ORDER BY ts_ms DESC, id DESC LIMIT ?`, ...sp(scope), limit)).map(toSpot);
}

const SYNC_ROW = `SELECT * FROM history_sync_state WHERE ${S} AND source = ? AND sub_account_id = ?`;

export function getSyncState(st: SqliteLearningState, scope: LearningScope, source: string, subAccountId: string): HistorySyncState | undefined {
  const r = st.handle.read('learning.getSyncState', () => st.get(SYNC_ROW, ...sp(scope), source, subAccountId));
  return r && toSync(r);
}

export function listSyncStates(st: SqliteLearningState, scope: LearningScope): HistorySyncState[] {
  return st.handle.read('learning.listSyncStates', () => st.all(`SELECT * FROM history_sync_state WHERE ${S} ORDER BY source, sub_account_id`, ...sp(scope))).map(toSync);
}

/** `nextSyncState` said as one upsert: the watermark only moves forward, failures count up. */
export function recordSyncAttempt(st: SqliteLearningState, scope: LearningScope, a: HistorySyncAttempt): HistorySyncState {
  return st.handle.write('learning.recordSyncAttempt', () => {
    if (a.ok) {
      st.run(
        `INSERT INTO history_sync_state (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
        VALUES (?, ?, ?, ?, ?, ?, NULL, 0)
        ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
          last_synced_ts_ms = MAX(COALESCE(last_synced_ts_ms, excluded.last_synced_ts_ms), COALESCE(excluded.last_synced_ts_ms, last_synced_ts_ms)),
          last_synced_at = excluded.last_synced_at, last_error = NULL, consecutive_failures = 0`,
        ...sp(scope), a.source, a.subAccountId, a.watermarkMs ?? null, a.now,
      );
    } else {
      st.run(
        `INSERT INTO history_sync_state (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
        VALUES (?, ?, ?, ?, NULL, ?, ?, 1)
        ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
          last_synced_at = excluded.last_synced_at, last_error = excluded.last_error, consecutive_failures = consecutive_failures + 1`,
        ...sp(scope), a.source, a.subAccountId, a.now, a.error.slice(0, 2000),
      );
    }
    return toSync(st.get(SYNC_ROW, ...sp(scope), a.source, a.subAccountId)!);
  });
}

export function recordPersonalizationSnapshot(st: SqliteLearningState, scope: LearningScope, s: NewPersonalizationSnapshot): PersonalizationSnapshot {
  return st.handle.write('learning.recordPersonalizationSnapshot', () => {
    const info = st.run(
      `INSERT INTO personalization_snapshots (user_id, agent_id, session_watermark, session_ids, fact_hashes, written_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ...sp(scope), s.sessionWatermark, JSON.stringify(s.sessionIds), JSON.stringify(s.factHashes), JSON.stringify(s.writtenIds), s.now,
    );
    return toSnapshot(st.get('SELECT * FROM personalization_snapshots WHERE id = ?', Number(info.lastInsertRowid))!);
  });
}

export function latestPersonalizationSnapshot(st: SqliteLearningState, scope: LearningScope): PersonalizationSnapshot | undefined {
  const r = st.handle.read('learning.latestPersonalizationSnapshot', () => st.get(`SELECT * FROM personalization_snapshots WHERE ${S} ORDER BY id DESC LIMIT 1`, ...sp(scope)));
  return r && toSnapshot(r);
}

export function enqueueExtraction(st: SqliteLearningState, scope: LearningScope, t: NewExtractionTurn): boolean {
  return st.handle.write('learning.enqueueExtraction', () =>
    st.run(`INSERT OR IGNORE INTO memory_extraction_queue (user_id, agent_id, session_id, turn_id, text, created_at) VALUES (?, ?, ?, ?, ?, ?)`, ...sp(scope), t.sessionId, t.turnId, t.text, t.now)
      .changes === 1,
  );
}

export function claimExtractions(st: SqliteLearningState, scope: LearningScope, c: ExtractionClaim, limit: number): ExtractionTurnRecord[] {
  return st.handle.write('learning.claimExtractions', () => {
    const rows = st.all(`SELECT id FROM memory_extraction_queue WHERE ${S} AND (claimed_until IS NULL OR claimed_until < ?) ORDER BY id LIMIT ?`, ...sp(scope), c.now, limit);
    if (rows.length === 0) return [];
    const idList = rows.map((r) => r.id as number);
    st.run(`UPDATE memory_extraction_queue SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 WHERE id IN (${placeholders(idList.length)}) AND ${S}`, c.owner, c.leaseUntil, ...idList, ...sp(scope));
    return st.all(`SELECT * FROM memory_extraction_queue WHERE id IN (${placeholders(idList.length)}) AND ${S} ORDER BY id`, ...idList, ...sp(scope)).map(toExtraction);
  });
}

export function completeExtractions(st: SqliteLearningState, scope: LearningScope, ids: readonly number[]): number {
  return st.handle.write('learning.completeExtractions', () => Number(st.run(`DELETE FROM memory_extraction_queue WHERE id IN (${placeholders(ids.length)}) AND ${S}`, ...ids, ...sp(scope)).changes));
}

/** The scope's counts for `stats`, in one read. */
export function counts(st: SqliteLearningState, scope: LearningScope, overdueBefore: string): LearningCounts {
  return st.handle.read('learning.stats', () => {
    const by = (sql: string) => Object.fromEntries(st.all(sql, ...sp(scope)).map((r) => [r.k as string, r.n as number]));
    const one = (sql: string, ...args: unknown[]) => (st.get(sql, ...sp(scope), ...args) as { n: number }).n;
    return {
      methodologies: by(`SELECT state AS k, COUNT(*) AS n FROM methodologies WHERE ${S} GROUP BY state`),
      graduationProposed: one(`SELECT COUNT(*) AS n FROM methodologies WHERE ${S} AND state = 'candidate' AND graduation_proposed_at IS NOT NULL`),
      preferences: by(`SELECT state AS k, COUNT(*) AS n FROM learned_preferences WHERE ${S} GROUP BY state`),
      hardConstraints: by(`SELECT state AS k, COUNT(*) AS n FROM learned_preferences WHERE ${S} AND kind = 'hard_constraint' GROUP BY state`),
      cases: {
        pending: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NULL`),
        overdue: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NULL AND closed_at < ?`, overdueBefore),
        reflected: one(`SELECT COUNT(*) AS n FROM role_memory WHERE ${S} AND reflected_at IS NOT NULL`),
      },
      trades: by(`SELECT status AS k, COUNT(*) AS n FROM trade_history WHERE ${S} GROUP BY status`),
      perpsFills: one(`SELECT COUNT(*) AS n FROM perps_fills WHERE ${S}`),
      externalSpot: one(`SELECT COUNT(*) AS n FROM external_spot_activities WHERE ${S}`),
      extractionQueue: queued(st.get(`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM memory_extraction_queue WHERE ${S}`, ...sp(scope))),
    };
  });
}
