/**
 * The PostgreSQL engine's side tables: the trade-history mirror (perp fills, spot activities, sync states),
 * personalization snapshots, the memory-extraction queue, and the counts of `stats`.
 */
import type { ExtractionClaim, NewPersonalizationSnapshot } from '../learning-domain';
import { type LearningCounts, queued } from '../learning-logic';
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncAttempt, HistorySyncState, LearningScope, NewExternalSpotActivity, NewExtractionTurn, NewPerpsFill, PerpsFillRecord,
  PersonalizationSnapshot,
} from '../learning-types';
import { type PgLearningState, S, sp, toExtraction, toFill, toSnapshot, toSpot, toSync } from './learning-rows';

export function insertPerpsFills({ h }: PgLearningState, scope: LearningScope, fills: readonly NewPerpsFill[]): Promise<number> {
  return h.tx('learning.insertPerpsFills', async (tx) => {
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
}

export function insertExternalSpot({ h }: PgLearningState, scope: LearningScope, activities: readonly NewExternalSpotActivity[]): Promise<number> {
  return h.tx('learning.insertExternalSpot', async (tx) => {
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
}

export async function listPerpsFills({ h }: PgLearningState, scope: LearningScope, subAccountId: string | undefined, limit: number): Promise<PerpsFillRecord[]> {
  const q = h.op('learning.listPerpsFills');
  const rows =
    subAccountId === undefined
      ? await q.all(`SELECT * FROM ${h.t('perps_fills')} WHERE ${S()} ORDER BY ts_ms DESC, id DESC LIMIT $3`, [...sp(scope), limit])
      : await q.all(`SELECT * FROM ${h.t('perps_fills')} WHERE ${S()} AND sub_account_id = $3 ORDER BY ts_ms DESC, id DESC LIMIT $4`, [...sp(scope), subAccountId, limit]);
  return rows.map(toFill);
}

export async function listExternalSpot({ h }: PgLearningState, scope: LearningScope, limit: number): Promise<ExternalSpotRecord[]> {
  return (await h.op('learning.listExternalSpot').all(`SELECT * FROM ${h.t('external_spot_activities')} WHERE ${S()} ORDER BY ts_ms DESC, id DESC LIMIT $3`, [...sp(scope), limit])).map(toSpot);
}

export async function getSyncState({ h }: PgLearningState, scope: LearningScope, source: string, subAccountId: string): Promise<HistorySyncState | undefined> {
  const r = await h.op('learning.getSyncState').get(`SELECT * FROM ${h.t('history_sync_state')} WHERE ${S()} AND source = $3 AND sub_account_id = $4`, [...sp(scope), source, subAccountId]);
  return r && toSync(r);
}

export async function listSyncStates({ h }: PgLearningState, scope: LearningScope): Promise<HistorySyncState[]> {
  return (await h.op('learning.listSyncStates').all(`SELECT * FROM ${h.t('history_sync_state')} WHERE ${S()} ORDER BY source, sub_account_id`, sp(scope))).map(toSync);
}

/** `nextSyncState` said as one upsert: the watermark only moves forward, failures count up. */
export async function recordSyncAttempt({ h }: PgLearningState, scope: LearningScope, a: HistorySyncAttempt): Promise<HistorySyncState> {
  const q = h.op('learning.recordSyncAttempt');
  const H = h.t('history_sync_state');
  const row = a.ok
    ? await q.get(
        `INSERT INTO ${H} AS s (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, 0)
         ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
           last_synced_ts_ms = GREATEST(COALESCE(s.last_synced_ts_ms, excluded.last_synced_ts_ms), COALESCE(excluded.last_synced_ts_ms, s.last_synced_ts_ms)),
           last_synced_at = excluded.last_synced_at, last_error = NULL, consecutive_failures = 0 RETURNING *`,
        [...sp(scope), a.source, a.subAccountId, a.watermarkMs ?? null, a.now],
      )
    : await q.get(
        `INSERT INTO ${H} AS s (user_id, agent_id, source, sub_account_id, last_synced_ts_ms, last_synced_at, last_error, consecutive_failures)
         VALUES ($1, $2, $3, $4, NULL, $5, $6, 1)
         ON CONFLICT (user_id, agent_id, source, sub_account_id) DO UPDATE SET
           last_synced_at = excluded.last_synced_at, last_error = excluded.last_error, consecutive_failures = s.consecutive_failures + 1 RETURNING *`,
        [...sp(scope), a.source, a.subAccountId, a.now, a.error.slice(0, 2000)],
      );
  return toSync(row!);
}

export async function recordPersonalizationSnapshot({ h }: PgLearningState, scope: LearningScope, s: NewPersonalizationSnapshot): Promise<PersonalizationSnapshot> {
  const r = await h.op('learning.recordPersonalizationSnapshot').get(
    `INSERT INTO ${h.t('personalization_snapshots')} (user_id, agent_id, session_watermark, session_ids, fact_hashes, written_ids, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [...sp(scope), s.sessionWatermark, JSON.stringify(s.sessionIds), JSON.stringify(s.factHashes), JSON.stringify(s.writtenIds), s.now],
  );
  return toSnapshot(r!);
}

export async function latestPersonalizationSnapshot({ h }: PgLearningState, scope: LearningScope): Promise<PersonalizationSnapshot | undefined> {
  const r = await h.op('learning.latestPersonalizationSnapshot').get(`SELECT * FROM ${h.t('personalization_snapshots')} WHERE ${S()} ORDER BY id DESC LIMIT 1`, sp(scope));
  return r && toSnapshot(r);
}

export async function enqueueExtraction({ h, EQ }: PgLearningState, scope: LearningScope, t: NewExtractionTurn): Promise<boolean> {
  const n = await h.op('learning.enqueueExtraction').run(
    `INSERT INTO ${EQ} (user_id, agent_id, session_id, turn_id, text, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, agent_id, turn_id) DO NOTHING`,
    [...sp(scope), t.sessionId, t.turnId, t.text, t.now],
  );
  return n === 1;
}

export async function claimExtractions({ h, EQ }: PgLearningState, scope: LearningScope, c: ExtractionClaim, limit: number): Promise<ExtractionTurnRecord[]> {
  // SKIP LOCKED: a concurrent claimer takes the next rows instead of waiting for these.
  const rows = await h.op('learning.claimExtractions').all(
    `UPDATE ${EQ} SET claimed_by = $3, claimed_until = $4, attempts = attempts + 1
       WHERE id IN (SELECT id FROM ${EQ} WHERE ${S()} AND (claimed_until IS NULL OR claimed_until < $5) ORDER BY id LIMIT $6 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
    [...sp(scope), c.owner, c.leaseUntil, c.now, limit],
  );
  return rows.map(toExtraction).sort((a, b) => a.id - b.id);
}

export function completeExtractions({ h, EQ }: PgLearningState, scope: LearningScope, ids: readonly number[]): Promise<number> {
  return h.op('learning.completeExtractions').run(`DELETE FROM ${EQ} WHERE ${S()} AND id = ANY($3::bigint[])`, [...sp(scope), ids]);
}

/** The scope's counts for `stats`. */
export async function counts({ h, MT, LP, T, RM, EQ }: PgLearningState, scope: LearningScope, overdueBefore: string): Promise<LearningCounts> {
  const q = h.op('learning.stats');
  const by = async (sql: string): Promise<Record<string, number>> => Object.fromEntries((await q.all(sql, sp(scope))).map((r) => [String(r.k), Number(r.n)]));
  const one = async (sql: string, extra: unknown[] = []) => Number((await q.get(sql, [...sp(scope), ...extra]))?.n ?? 0);
  return {
    methodologies: await by(`SELECT state AS k, COUNT(*) AS n FROM ${MT} WHERE ${S()} GROUP BY state`),
    preferences: await by(`SELECT state AS k, COUNT(*) AS n FROM ${LP} WHERE ${S()} GROUP BY state`),
    hardConstraints: await by(`SELECT state AS k, COUNT(*) AS n FROM ${LP} WHERE ${S()} AND kind = 'hard_constraint' GROUP BY state`),
    trades: await by(`SELECT status AS k, COUNT(*) AS n FROM ${T} WHERE ${S()} GROUP BY status`),
    graduationProposed: await one(`SELECT COUNT(*) AS n FROM ${MT} WHERE ${S()} AND state = 'candidate' AND graduation_proposed_at IS NOT NULL`),
    cases: {
      pending: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NULL`),
      overdue: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NULL AND closed_at < $3`, [overdueBefore]),
      reflected: await one(`SELECT COUNT(*) AS n FROM ${RM} WHERE ${S()} AND reflected_at IS NOT NULL`),
    },
    perpsFills: await one(`SELECT COUNT(*) AS n FROM ${h.t('perps_fills')} WHERE ${S()}`),
    externalSpot: await one(`SELECT COUNT(*) AS n FROM ${h.t('external_spot_activities')} WHERE ${S()}`),
    extractionQueue: queued(await q.get(`SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM ${EQ} WHERE ${S()}`, sp(scope))),
  };
}
