/**
 * The `controls` domain on Postgres. Every check-and-write is one statement, so instances of a fleet never
 * both pass a limit only one fits under: a grant's daily spend is `INSERT … ON CONFLICT DO UPDATE … WHERE
 * spent + amount <= cap RETURNING`, a request counter the same against its limit, and a session lock an upsert
 * that only takes a free, expired or own lock.
 */
import type { CapabilitySwitchRecord, ControlStorage, QuotaSettingsRecord } from '../control-types';
import { USD_EPSILON } from '../control-types';
import { checkId } from '../sqlite/checks';
import { controlChecks } from '../sqlite/controls';
import { opt } from '../sqlite/rows';
import type { PgHandle, PgRow } from './handle';
import type { PostgresMigration } from './migrate';

/** Migrations of the `controls` domain (same tables and columns as SQLite's). */
export const controlMigrations: readonly PostgresMigration[] = [
  {
    domain: 'controls',
    version: 1,
    name: 'grant owners and caps, grant spend, capability switches, quotas, session locks',
    up: async (tx, { t }) => {
      for (const column of ['user_id TEXT', 'tools_json TEXT', 'tool_sets_json TEXT', 'cap_per_call_usd DOUBLE PRECISION', 'cap_per_day_usd DOUBLE PRECISION', 'created_by TEXT']) {
        await tx.run(`ALTER TABLE ${t('grants')} ADD COLUMN ${column}`);
      }
      await tx.run(`CREATE INDEX grants_user ON ${t('grants')} (user_id)`);
      await tx.run(`CREATE TABLE ${t('grant_spend')} (grant_id TEXT NOT NULL, day TEXT NOT NULL, spent_usd DOUBLE PRECISION NOT NULL, calls INTEGER NOT NULL, PRIMARY KEY (grant_id, day))`);
      await tx.run(`CREATE TABLE ${t('capability_switches')} (user_id TEXT NOT NULL, tool_set TEXT NOT NULL, disabled_at TEXT NOT NULL, reason TEXT, by_whom TEXT, PRIMARY KEY (user_id, tool_set))`);
      await tx.run(`CREATE TABLE ${t('user_quotas')} (user_id TEXT PRIMARY KEY, requests_per_minute INTEGER, rpm_set BOOLEAN NOT NULL, usd_per_day DOUBLE PRECISION, usd_set BOOLEAN NOT NULL, updated_at TEXT NOT NULL)`);
      await tx.run(`CREATE TABLE ${t('request_counts')} (key TEXT NOT NULL, win TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, win))`);
      await tx.run(`CREATE TABLE ${t('session_locks')} (session_id TEXT PRIMARY KEY, owner TEXT NOT NULL, acquired_at TEXT NOT NULL, lease_until TEXT NOT NULL)`);
    },
  },
];

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const toSwitch = (r: PgRow): CapabilitySwitchRecord => ({
  userId: String(r.user_id), toolSet: String(r.tool_set), disabledAt: String(r.disabled_at), ...opt('reason', str(r.reason)), ...opt('by', str(r.by_whom)),
});
const toQuota = (r: PgRow): QuotaSettingsRecord => ({
  userId: String(r.user_id),
  ...(r.rpm_set ? { requestsPerMinute: r.requests_per_minute == null ? null : Number(r.requests_per_minute) } : {}),
  ...(r.usd_set ? { usdPerDay: r.usd_per_day == null ? null : Number(r.usd_per_day) } : {}),
  updatedAt: String(r.updated_at),
});

/** The `controls` domain on Postgres. */
export function createPgControlStorage(h: PgHandle): ControlStorage {
  const spend = h.t('grant_spend');
  const switches = h.t('capability_switches');
  const quotas = h.t('user_quotas');
  const counts = h.t('request_counts');
  const locks = h.t('session_locks');
  const api: ControlStorage = {
    async reserveGrantSpend({ grantId, day, amountUsd, capUsd }) {
      checkId('controls.reserveGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.reserveGrantSpend', day);
      controlChecks.usd('controls.reserveGrantSpend', 'amountUsd', amountUsd);
      controlChecks.usd('controls.reserveGrantSpend', 'capUsd', capUsd, true);
      const cap = capUsd === undefined ? null : capUsd + USD_EPSILON;
      // One statement: a new row only when the amount fits, an existing one only while the sum stays under the cap.
      const row = await h.op('controls.reserveGrantSpend').get(
        `INSERT INTO ${spend} AS s (grant_id, day, spent_usd, calls) SELECT $1, $2, $3::double precision, 1 WHERE $4::double precision IS NULL OR $3::double precision <= $4::double precision
         ON CONFLICT (grant_id, day) DO UPDATE SET spent_usd = s.spent_usd + EXCLUDED.spent_usd, calls = s.calls + 1
         WHERE $4::double precision IS NULL OR s.spent_usd + EXCLUDED.spent_usd <= $4::double precision
         RETURNING spent_usd`,
        [grantId, day, amountUsd, cap],
      );
      if (row !== undefined) return { reserved: true, spentUsd: Number(row.spent_usd) };
      return { reserved: false, spentUsd: await api.grantSpend(grantId, day) };
    },
    async refundGrantSpend({ grantId, day, amountUsd }) {
      checkId('controls.refundGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.refundGrantSpend', day);
      controlChecks.usd('controls.refundGrantSpend', 'amountUsd', amountUsd);
      await h.op('controls.refundGrantSpend').run(
        `UPDATE ${spend} SET spent_usd = GREATEST(0, spent_usd - $1::double precision), calls = GREATEST(0, calls - 1) WHERE grant_id = $2 AND day = $3`,
        [amountUsd, grantId, day],
      );
    },
    async grantSpend(grantId, day) {
      checkId('controls.grantSpend', 'grantId', grantId);
      controlChecks.day('controls.grantSpend', day);
      const row = await h.op('controls.grantSpend').get(`SELECT spent_usd FROM ${spend} WHERE grant_id = $1 AND day = $2`, [grantId, day]);
      return row === undefined ? 0 : Number(row.spent_usd);
    },

    async setCapability({ userId, toolSet, enabled, at, reason, by }) {
      checkId('controls.setCapability', 'userId', userId);
      checkId('controls.setCapability', 'toolSet', toolSet);
      checkId('controls.setCapability', 'at', at);
      const op = h.op('controls.setCapability');
      if (enabled) return (await op.run(`DELETE FROM ${switches} WHERE user_id = $1 AND tool_set = $2`, [userId, toolSet])) === 1;
      return (await op.run(`INSERT INTO ${switches} (user_id, tool_set, disabled_at, reason, by_whom) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, [userId, toolSet, at, reason ?? null, by ?? null])) === 1;
    },
    async listDisabledCapabilities(query = {}) {
      if (query.userId !== undefined) checkId('controls.listDisabledCapabilities', 'userId', query.userId);
      const op = h.op('controls.listDisabledCapabilities');
      const rows = query.userId === undefined
        ? await op.all(`SELECT * FROM ${switches} ORDER BY user_id, tool_set`)
        : await op.all(`SELECT * FROM ${switches} WHERE user_id = $1 ORDER BY tool_set`, [query.userId]);
      return rows.map(toSwitch);
    },

    async getQuota(userId) {
      checkId('controls.getQuota', 'userId', userId);
      const row = await h.op('controls.getQuota').get(`SELECT * FROM ${quotas} WHERE user_id = $1`, [userId]);
      return row === undefined ? undefined : toQuota(row);
    },
    async setQuota(q) {
      controlChecks.quota('controls.setQuota', q);
      await h.op('controls.setQuota').run(
        `INSERT INTO ${quotas} (user_id, requests_per_minute, rpm_set, usd_per_day, usd_set, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id) DO UPDATE SET requests_per_minute = EXCLUDED.requests_per_minute, rpm_set = EXCLUDED.rpm_set, usd_per_day = EXCLUDED.usd_per_day,
           usd_set = EXCLUDED.usd_set, updated_at = EXCLUDED.updated_at`,
        [q.userId, q.requestsPerMinute ?? null, q.requestsPerMinute !== undefined, q.usdPerDay ?? null, q.usdPerDay !== undefined, q.updatedAt],
      );
    },
    async listQuotas() {
      return (await h.op('controls.listQuotas').all(`SELECT * FROM ${quotas} ORDER BY user_id`)).map(toQuota);
    },
    async countRequest(input) {
      controlChecks.count('controls.countRequest', input);
      const { key, window, limit } = input;
      const op = h.op('controls.countRequest');
      const row = await op.get(
        `INSERT INTO ${counts} AS c (key, win, count) SELECT $1, $2, 1 WHERE $3::int > 0
         ON CONFLICT (key, win) DO UPDATE SET count = c.count + 1 WHERE c.count < $3::int
         RETURNING count`,
        [key, window, limit],
      );
      if (row === undefined) return { allowed: false, count: await api.requestCount(key, window) };
      // A key's older windows are done with (best effort; a stale row is never read).
      if (Number(row.count) === 1) await op.run(`DELETE FROM ${counts} WHERE key = $1 AND win < $2`, [key, window]);
      return { allowed: true, count: Number(row.count) };
    },
    async requestCount(key, window) {
      checkId('controls.requestCount', 'key', key);
      checkId('controls.requestCount', 'window', window);
      const row = await h.op('controls.requestCount').get(`SELECT count FROM ${counts} WHERE key = $1 AND win = $2`, [key, window]);
      return row === undefined ? 0 : Number(row.count);
    },

    async acquireSessionLock({ sessionId, owner, now, leaseUntil }) {
      checkId('controls.acquireSessionLock', 'sessionId', sessionId);
      checkId('controls.acquireSessionLock', 'owner', owner);
      const row = await h.op('controls.acquireSessionLock').get(
        `INSERT INTO ${locks} AS l (session_id, owner, acquired_at, lease_until) VALUES ($1, $2, $3, $4)
         ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, acquired_at = EXCLUDED.acquired_at, lease_until = EXCLUDED.lease_until
         WHERE l.owner = EXCLUDED.owner OR l.lease_until < $3
         RETURNING owner`,
        [sessionId, owner, now, leaseUntil],
      );
      return row !== undefined;
    },
    async renewSessionLock(sessionId, owner, leaseUntil) {
      return (await h.op('controls.renewSessionLock').run(`UPDATE ${locks} SET lease_until = $1 WHERE session_id = $2 AND owner = $3`, [leaseUntil, sessionId, owner])) === 1;
    },
    async releaseSessionLock(sessionId, owner) {
      return (await h.op('controls.releaseSessionLock').run(`DELETE FROM ${locks} WHERE session_id = $1 AND owner = $2`, [sessionId, owner])) === 1;
    },
  };
  return api;
}
