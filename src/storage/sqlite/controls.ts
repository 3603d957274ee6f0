import type { CapabilitySwitchRecord, ControlStorage, QuotaSettingsRecord } from '../control-types';
import { USD_EPSILON } from '../control-types';
import { checkId, invalidArgument } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';
import { type CommitTracker, createReadCache } from './read-cache';
import { opt } from './rows';

/**
 * Migrations of the `controls` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — the columns a person's grant adds to `grants` (user, tools, tool sets, caps, creator); `grant_spend`
 * (one row per grant and UTC day); `capability_switches` (a user's tool set turned off); `user_quotas` and
 * `request_counts` (per-user limits and their per-window counters); `session_locks` (one turn per session
 * across processes, with a lease).
 */
export const controlMigrations: readonly SqliteMigration[] = [
  {
    domain: 'controls',
    version: 1,
    name: 'grant owners and caps, grant spend, capability switches, quotas, session locks',
    up(db) {
      db.exec(`
        ALTER TABLE grants ADD COLUMN user_id TEXT;
        ALTER TABLE grants ADD COLUMN tools_json TEXT;
        ALTER TABLE grants ADD COLUMN tool_sets_json TEXT;
        ALTER TABLE grants ADD COLUMN cap_per_call_usd REAL;
        ALTER TABLE grants ADD COLUMN cap_per_day_usd REAL;
        ALTER TABLE grants ADD COLUMN created_by TEXT;
        CREATE INDEX grants_user ON grants (user_id);
        CREATE TABLE grant_spend (
          grant_id  TEXT NOT NULL,
          day       TEXT NOT NULL,
          spent_usd REAL NOT NULL,
          calls     INTEGER NOT NULL,
          PRIMARY KEY (grant_id, day)
        ) STRICT;
        CREATE TABLE capability_switches (
          user_id     TEXT NOT NULL,
          tool_set    TEXT NOT NULL,
          disabled_at TEXT NOT NULL,
          reason      TEXT,
          by_whom     TEXT,
          PRIMARY KEY (user_id, tool_set)
        ) STRICT;
        CREATE TABLE user_quotas (
          user_id             TEXT PRIMARY KEY,
          requests_per_minute INTEGER,
          rpm_set             INTEGER NOT NULL,
          usd_per_day         REAL,
          usd_set             INTEGER NOT NULL,
          updated_at          TEXT NOT NULL
        ) STRICT;
        CREATE TABLE request_counts (
          key    TEXT NOT NULL,
          win    TEXT NOT NULL,
          count  INTEGER NOT NULL,
          PRIMARY KEY (key, win)
        ) STRICT;
        CREATE TABLE session_locks (
          session_id  TEXT PRIMARY KEY,
          owner       TEXT NOT NULL,
          acquired_at TEXT NOT NULL,
          lease_until TEXT NOT NULL
        ) STRICT;
      `);
    },
  },
];

/** Shared argument checks of the controls domain (every engine uses them). */
export const controlChecks = {
  day(operation: string, day: unknown): void {
    if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) throw invalidArgument(operation, `day must be YYYY-MM-DD, got ${JSON.stringify(day)}`);
  },
  usd(operation: string, field: string, value: unknown, optional = false): void {
    if (optional && value === undefined) return;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalidArgument(operation, `${field} must be a finite number ≥ 0, got ${String(value)}`);
  },
  quota(operation: string, q: QuotaSettingsRecord): void {
    if (typeof q !== 'object' || q === null) throw invalidArgument(operation, 'settings must be an object');
    checkId(operation, 'userId', q.userId);
    checkId(operation, 'updatedAt', q.updatedAt);
    const rpm = q.requestsPerMinute;
    if (rpm !== undefined && rpm !== null && (!Number.isSafeInteger(rpm) || rpm < 0)) throw invalidArgument(operation, `requestsPerMinute must be an integer ≥ 0 or null, got ${String(rpm)}`);
    const usd = q.usdPerDay;
    if (usd !== undefined && usd !== null && (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0)) throw invalidArgument(operation, `usdPerDay must be a finite number ≥ 0 or null, got ${String(usd)}`);
  },
  count(operation: string, input: { key: unknown; window: unknown; limit: unknown }): void {
    checkId(operation, 'key', input.key);
    checkId(operation, 'window', input.window);
    if (typeof input.limit !== 'number' || !Number.isSafeInteger(input.limit) || input.limit < 0) throw invalidArgument(operation, `limit must be an integer ≥ 0, got ${String(input.limit)}`);
  },
};

interface SwitchRow { user_id: string; tool_set: string; disabled_at: string; reason: string | null; by_whom: string | null }
interface QuotaRow { user_id: string; requests_per_minute: number | null; rpm_set: number; usd_per_day: number | null; usd_set: number; updated_at: string }

const toSwitch = (r: SwitchRow): CapabilitySwitchRecord => ({ userId: r.user_id, toolSet: r.tool_set, disabledAt: r.disabled_at, ...opt('reason', r.reason), ...opt('by', r.by_whom) });
const toQuota = (r: QuotaRow): QuotaSettingsRecord => ({
  userId: r.user_id,
  ...(r.rpm_set ? { requestsPerMinute: r.requests_per_minute } : {}),
  ...(r.usd_set ? { usdPerDay: r.usd_per_day } : {}),
  updatedAt: r.updated_at,
});

/** Users whose switches the cache keeps (each a short list). */
const SWITCH_CACHE_USERS = 1024;

/**
 * The `controls` domain on SQLite: every check-and-write is one `BEGIN IMMEDIATE` transaction. A
 * user's capability switches (read before every tool call) come from a cache validated by `data_version` on each
 * read: an operator's stop committed by any other connection or process is seen on the very next call.
 */
export function createSqliteControlStorage(handle: SqliteHandle, reads: CommitTracker): ControlStorage {
  const switches = createReadCache<readonly SwitchRow[]>(reads, { maxEntries: SWITCH_CACHE_USERS });
  const userSwitches = (userId: string): readonly SwitchRow[] => {
    const load = () => handle.prepare('SELECT * FROM capability_switches WHERE user_id = ? ORDER BY tool_set').all(userId) as SwitchRow[];
    return switches.get(userId, load);
  };
  return {
    async reserveGrantSpend({ grantId, day, amountUsd, capUsd }) {
      checkId('controls.reserveGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.reserveGrantSpend', day);
      controlChecks.usd('controls.reserveGrantSpend', 'amountUsd', amountUsd);
      controlChecks.usd('controls.reserveGrantSpend', 'capUsd', capUsd, true);
      return handle.write('controls.reserveGrantSpend', () => {
        const row = handle.prepare('SELECT spent_usd FROM grant_spend WHERE grant_id = ? AND day = ?').get(grantId, day) as { spent_usd: number } | undefined;
        const spent = row?.spent_usd ?? 0;
        if (capUsd !== undefined && spent + amountUsd > capUsd + USD_EPSILON) return { reserved: false, spentUsd: spent };
        handle
          .prepare('INSERT INTO grant_spend (grant_id, day, spent_usd, calls) VALUES (?, ?, ?, 1) ON CONFLICT (grant_id, day) DO UPDATE SET spent_usd = spent_usd + excluded.spent_usd, calls = calls + 1')
          .run(grantId, day, amountUsd);
        return { reserved: true, spentUsd: spent + amountUsd };
      });
    },
    async refundGrantSpend({ grantId, day, amountUsd }) {
      checkId('controls.refundGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.refundGrantSpend', day);
      controlChecks.usd('controls.refundGrantSpend', 'amountUsd', amountUsd);
      handle.write('controls.refundGrantSpend', () =>
        handle.prepare('UPDATE grant_spend SET spent_usd = MAX(0, spent_usd - ?), calls = MAX(0, calls - 1) WHERE grant_id = ? AND day = ?').run(amountUsd, grantId, day),
      );
    },
    async grantSpend(grantId, day) {
      checkId('controls.grantSpend', 'grantId', grantId);
      controlChecks.day('controls.grantSpend', day);
      const row = handle.read('controls.grantSpend', () => handle.prepare('SELECT spent_usd FROM grant_spend WHERE grant_id = ? AND day = ?').get(grantId, day)) as { spent_usd: number } | undefined;
      return row?.spent_usd ?? 0;
    },

    async setCapability({ userId, toolSet, enabled, at, reason, by }) {
      checkId('controls.setCapability', 'userId', userId);
      checkId('controls.setCapability', 'toolSet', toolSet);
      checkId('controls.setCapability', 'at', at);
      return handle.write('controls.setCapability', () => {
        switches.wrote(userId);
        if (enabled) return handle.prepare('DELETE FROM capability_switches WHERE user_id = ? AND tool_set = ?').run(userId, toolSet).changes === 1;
        return handle.prepare('INSERT OR IGNORE INTO capability_switches (user_id, tool_set, disabled_at, reason, by_whom) VALUES (?, ?, ?, ?, ?)').run(userId, toolSet, at, reason ?? null, by ?? null).changes === 1;
      });
    },
    async listDisabledCapabilities(query = {}) {
      if (query.userId !== undefined) checkId('controls.listDisabledCapabilities', 'userId', query.userId);
      const rows = handle.read('controls.listDisabledCapabilities', () =>
        query.userId === undefined
          ? handle.prepare('SELECT * FROM capability_switches ORDER BY user_id, tool_set').all()
          : userSwitches(query.userId),
      ) as readonly SwitchRow[];
      return rows.map(toSwitch);
    },

    async getQuota(userId) {
      checkId('controls.getQuota', 'userId', userId);
      const row = handle.read('controls.getQuota', () => handle.prepare('SELECT * FROM user_quotas WHERE user_id = ?').get(userId)) as QuotaRow | undefined;
      return row === undefined ? undefined : toQuota(row);
    },
    async setQuota(q) {
      controlChecks.quota('controls.setQuota', q);
      handle.write('controls.setQuota', () =>
        handle
          .prepare('INSERT OR REPLACE INTO user_quotas (user_id, requests_per_minute, rpm_set, usd_per_day, usd_set, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(q.userId, q.requestsPerMinute ?? null, q.requestsPerMinute === undefined ? 0 : 1, q.usdPerDay ?? null, q.usdPerDay === undefined ? 0 : 1, q.updatedAt),
      );
    },
    async listQuotas() {
      return (handle.read('controls.listQuotas', () => handle.prepare('SELECT * FROM user_quotas ORDER BY user_id').all()) as QuotaRow[]).map(toQuota);
    },
    async countRequest(input) {
      controlChecks.count('controls.countRequest', input);
      const { key, window, limit } = input;
      return handle.write('controls.countRequest', () => {
        const row = handle.prepare('SELECT count FROM request_counts WHERE key = ? AND win = ?').get(key, window) as { count: number } | undefined;
        const count = row?.count ?? 0;
        if (count >= limit) return { allowed: false, count };
        if (row === undefined) {
          // A new window: the key's older windows are done with.
          handle.prepare('DELETE FROM request_counts WHERE key = ? AND win < ?').run(key, window);
          handle.prepare('INSERT INTO request_counts (key, win, count) VALUES (?, ?, 1)').run(key, window);
        } else handle.prepare('UPDATE request_counts SET count = count + 1 WHERE key = ? AND win = ?').run(key, window);
        return { allowed: true, count: count + 1 };
      });
    },
    async requestCount(key, window) {
      checkId('controls.requestCount', 'key', key);
      checkId('controls.requestCount', 'window', window);
      const row = handle.read('controls.requestCount', () => handle.prepare('SELECT count FROM request_counts WHERE key = ? AND win = ?').get(key, window)) as { count: number } | undefined;
      return row?.count ?? 0;
    },

    async acquireSessionLock({ sessionId, owner, now, leaseUntil }) {
      checkId('controls.acquireSessionLock', 'sessionId', sessionId);
      checkId('controls.acquireSessionLock', 'owner', owner);
      return handle.write('controls.acquireSessionLock', () => {
        const row = handle.prepare('SELECT owner, lease_until FROM session_locks WHERE session_id = ?').get(sessionId) as { owner: string; lease_until: string } | undefined;
        if (row !== undefined && row.owner !== owner && row.lease_until >= now) return false;
        handle.prepare('INSERT OR REPLACE INTO session_locks (session_id, owner, acquired_at, lease_until) VALUES (?, ?, ?, ?)').run(sessionId, owner, now, leaseUntil);
        return true;
      });
    },
    async renewSessionLock(sessionId, owner, leaseUntil) {
      return handle.write('controls.renewSessionLock', () => handle.prepare('UPDATE session_locks SET lease_until = ? WHERE session_id = ? AND owner = ?').run(leaseUntil, sessionId, owner).changes === 1);
    },
    async releaseSessionLock(sessionId, owner) {
      return handle.write('controls.releaseSessionLock', () => handle.prepare('DELETE FROM session_locks WHERE session_id = ? AND owner = ?').run(sessionId, owner).changes === 1);
    },
  };
}
