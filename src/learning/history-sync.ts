/**
 * The off-agent trade-history mirror: pulls perp fills (per sub-account) and spot activity from the finance
 * adapter into `perps_fills` and `external_spot_activities` with INSERT-OR-IGNORE semantics, keeping a
 * watermark and a failure counter per (source, sub-account) in `history_sync_state`. A (source, sub-account)
 * that failed `maxFailures` times in a row is skipped until `failureCooldownMs` has passed since its last
 * attempt, then probed again, so a transient outage never disables the mirror, and one sub-account's
 * failures never touch its siblings' or the spot cursor.
 */
import { MinaraError } from '../errors/minara-error';
import type { MinaraBus } from '../events/bus';
import type { TradingProvider } from '../finance/types';
import { checkLearningScope } from '../storage/learning-checks';
import type { LearningScope, LearningStorage } from '../storage/learning-types';
import { type Logger, silentLogger } from '../util/logger';
import { normalizePerpsFill, normalizeSpotActivity } from './normalize-fill';

/** Where the mirror reads history: the finance adapter's optional history methods. */
export type HistorySource = Pick<TradingProvider, 'listPerpSubAccounts' | 'listPerpFills' | 'listSpotActivity'>;

/** Options of {@link createHistorySync}. */
export interface HistorySyncOptions {
  readonly storage: { readonly learning: LearningStorage };
  readonly scope: LearningScope;
  /** The finance adapter (paper or real); methods it lacks are skipped. */
  readonly source: HistorySource;
  /** Consecutive failures after which a (source, sub-account) is skipped until the cooldown passes. @default 5 */
  readonly maxFailures?: number | undefined;
  /** How long after its last attempt a skipped (source, sub-account) is probed again. @default 1800000 (30 minutes) */
  readonly failureCooldownMs?: number | undefined;
  /** Bus for `perps_fills:recorded` and `external_spot:recorded` (only when rows were inserted). */
  readonly bus?: MinaraBus | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** What one sync of one (source, sub-account) did. */
export interface HistorySyncItem {
  readonly source: 'perps_fills' | 'spot_activities';
  readonly subAccountId: string;
  readonly fetched: number;
  readonly inserted: number;
  /** Why it was not attempted (failure cooldown), when it was not. */
  readonly skipped?: string | undefined;
  readonly error?: string | undefined;
}

/** The mirror: `sync()` runs every source once. */
export interface HistorySync {
  sync(options?: { readonly signal?: AbortSignal | undefined }): Promise<HistorySyncItem[]>;
}

/**
 * Create the trade-history mirror of one tenant.
 *
 * @example
 * ```ts
 * const mirror = createHistorySync({ storage, scope: { userId: 'u1' }, source: finance.trading, bus });
 * const report = await mirror.sync(); // [{ source: 'perps_fills', subAccountId: 'paper', fetched: 4, inserted: 4 }, …]
 * ```
 */
export function createHistorySync(options: HistorySyncOptions): HistorySync {
  if (typeof options !== 'object' || options === null || typeof options.storage?.learning !== 'object') throw new MinaraError('CONFIG_INVALID', 'createHistorySync: storage (with a learning domain) is required');
  if (typeof options.source !== 'object' || options.source === null) throw new MinaraError('CONFIG_INVALID', 'createHistorySync: source must be a finance adapter (TradingProvider)');
  checkLearningScope('createHistorySync', options.scope);
  const { storage, scope, source, bus, maxFailures = 5, failureCooldownMs = 30 * 60_000, logger = silentLogger } = options;
  if (!Number.isSafeInteger(maxFailures) || maxFailures < 1) throw new MinaraError('CONFIG_INVALID', `createHistorySync: maxFailures must be a positive integer, got ${String(maxFailures)}`);
  if (!(Number.isFinite(failureCooldownMs) && failureCooldownMs >= 0)) throw new MinaraError('CONFIG_INVALID', `createHistorySync: failureCooldownMs must be a non-negative number, got ${String(failureCooldownMs)}`);
  const clock = options.now ?? (() => new Date());
  const db = storage.learning;
  const who = { userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) };

  /** One (source, sub-account): skip while cooling down, else fetch, insert, move the watermark. */
  async function one(
    kind: HistorySyncItem['source'],
    subAccountId: string,
    pull: (sinceMs: number | undefined) => Promise<{ rows: number; inserted: number; newest: number | undefined }>,
  ): Promise<HistorySyncItem> {
    const state = await db.getSyncState(scope, kind, subAccountId);
    const nowMs = clock().getTime();
    if (state && state.consecutiveFailures >= maxFailures && nowMs - Date.parse(state.lastSyncedAt) < failureCooldownMs) {
      return { source: kind, subAccountId, fetched: 0, inserted: 0, skipped: `${state.consecutiveFailures} failures in a row; probing again after ${new Date(Date.parse(state.lastSyncedAt) + failureCooldownMs).toISOString()}` };
    }
    try {
      const r = await pull(state?.lastSyncedTsMs);
      await db.recordSyncAttempt(scope, { ok: true, source: kind, subAccountId, ...(r.newest !== undefined ? { watermarkMs: r.newest } : {}), now: clock().toISOString() });
      return { source: kind, subAccountId, fetched: r.rows, inserted: r.inserted };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await db.recordSyncAttempt(scope, { ok: false, source: kind, subAccountId, error: message, now: clock().toISOString() });
      logger.warn('history sync failed', { source: kind, subAccountId, error: message });
      return { source: kind, subAccountId, fetched: 0, inserted: 0, error: message };
    }
  }

  return {
    async sync(syncOptions = {}) {
      const signal = syncOptions.signal;
      const out: HistorySyncItem[] = [];
      if (source.listPerpSubAccounts && source.listPerpFills) {
        let subs: Array<{ id: string; walletAddress?: string | undefined }> | undefined;
        // Listing the sub-accounts is itself a (perps_fills, '') attempt with its own counter.
        const listed = await one('perps_fills', '', async () => {
          subs = await source.listPerpSubAccounts!({ signal });
          return { rows: subs.length, inserted: 0, newest: undefined };
        });
        if (listed.skipped || listed.error) out.push(listed);
        for (const sub of subs ?? []) {
          if (sub.id === '') continue;
          out.push(await one('perps_fills', sub.id, async (sinceMs) => {
            const raw = await source.listPerpFills!({ subAccountId: sub.id, ...(sinceMs !== undefined ? { sinceMs } : {}) }, { signal });
            const now = clock().toISOString();
            const rows = raw.map((f) => normalizePerpsFill(f, sub, now));
            const inserted = await db.insertPerpsFills(scope, rows);
            if (inserted > 0) bus?.emit('perps_fills:recorded', { ...who, subAccountId: sub.id, inserted });
            return { rows: rows.length, inserted, newest: rows.reduce<number | undefined>((m, r) => (m === undefined || r.tsMs > m ? r.tsMs : m), undefined) };
          }));
        }
      }
      if (source.listSpotActivity) {
        out.push(await one('spot_activities', '', async (sinceMs) => {
          const raw = await source.listSpotActivity!({ ...(sinceMs !== undefined ? { sinceMs } : {}) }, { signal });
          const now = clock().toISOString();
          const rows = raw.map((a) => normalizeSpotActivity(a, now));
          const inserted = await db.insertExternalSpot(scope, rows);
          if (inserted > 0) bus?.emit('external_spot:recorded', { ...who, inserted });
          return { rows: rows.length, inserted, newest: rows.reduce<number | undefined>((m, r) => (m === undefined || r.tsMs > m ? r.tsMs : m), undefined) };
        }));
      }
      return out;
    },
  };
}
