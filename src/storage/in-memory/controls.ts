import type { CapabilitySwitchRecord, ControlStorage, QuotaSettingsRecord } from '../control-types';
import { USD_EPSILON } from '../control-types';
import { checkId } from '../sqlite/checks';
import { controlChecks } from '../sqlite/controls';

/** The `controls` domain in memory: same semantics as the SQLite engine (one process, so every write is atomic). */
export function createInMemoryControlStorage(): ControlStorage {
  const spend = new Map<string, number>();
  const switches = new Map<string, CapabilitySwitchRecord>();
  const quotas = new Map<string, QuotaSettingsRecord>();
  const counts = new Map<string, { window: string; count: number }>();
  const locks = new Map<string, { owner: string; leaseUntil: string }>();
  const spendKey = (grantId: string, day: string) => `${grantId}\u0000${day}`;
  const switchKey = (userId: string, toolSet: string) => `${userId}\u0000${toolSet}`;

  return {
    async reserveGrantSpend({ grantId, day, amountUsd, capUsd }) {
      checkId('controls.reserveGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.reserveGrantSpend', day);
      controlChecks.usd('controls.reserveGrantSpend', 'amountUsd', amountUsd);
      controlChecks.usd('controls.reserveGrantSpend', 'capUsd', capUsd, true);
      const spent = spend.get(spendKey(grantId, day)) ?? 0;
      if (capUsd !== undefined && spent + amountUsd > capUsd + USD_EPSILON) return { reserved: false, spentUsd: spent };
      spend.set(spendKey(grantId, day), spent + amountUsd);
      return { reserved: true, spentUsd: spent + amountUsd };
    },
    async refundGrantSpend({ grantId, day, amountUsd }) {
      checkId('controls.refundGrantSpend', 'grantId', grantId);
      controlChecks.day('controls.refundGrantSpend', day);
      controlChecks.usd('controls.refundGrantSpend', 'amountUsd', amountUsd);
      const key = spendKey(grantId, day);
      if (spend.has(key)) spend.set(key, Math.max(0, (spend.get(key) ?? 0) - amountUsd));
    },
    async grantSpend(grantId, day) {
      checkId('controls.grantSpend', 'grantId', grantId);
      controlChecks.day('controls.grantSpend', day);
      return spend.get(spendKey(grantId, day)) ?? 0;
    },

    async setCapability({ userId, toolSet, enabled, at, reason, by }) {
      checkId('controls.setCapability', 'userId', userId);
      checkId('controls.setCapability', 'toolSet', toolSet);
      checkId('controls.setCapability', 'at', at);
      const key = switchKey(userId, toolSet);
      if (enabled) return switches.delete(key);
      if (switches.has(key)) return false;
      switches.set(key, { userId, toolSet, disabledAt: at, ...(reason !== undefined ? { reason } : {}), ...(by !== undefined ? { by } : {}) });
      return true;
    },
    async listDisabledCapabilities(query = {}) {
      if (query.userId !== undefined) checkId('controls.listDisabledCapabilities', 'userId', query.userId);
      return [...switches.values()]
        .filter((s) => query.userId === undefined || s.userId === query.userId)
        .sort((a, b) => (a.userId === b.userId ? (a.toolSet < b.toolSet ? -1 : 1) : a.userId < b.userId ? -1 : 1))
        .map((s) => ({ ...s }));
    },

    async getQuota(userId) {
      checkId('controls.getQuota', 'userId', userId);
      const q = quotas.get(userId);
      return q === undefined ? undefined : { ...q };
    },
    async setQuota(q) {
      controlChecks.quota('controls.setQuota', q);
      quotas.set(q.userId, {
        userId: q.userId,
        ...(q.requestsPerMinute !== undefined ? { requestsPerMinute: q.requestsPerMinute } : {}),
        ...(q.usdPerDay !== undefined ? { usdPerDay: q.usdPerDay } : {}),
        updatedAt: q.updatedAt,
      });
    },
    async listQuotas() {
      return [...quotas.values()].sort((a, b) => (a.userId < b.userId ? -1 : 1)).map((q) => ({ ...q }));
    },
    async countRequest(input) {
      controlChecks.count('controls.countRequest', input);
      const current = counts.get(input.key);
      const count = current?.window === input.window ? current.count : 0;
      if (count >= input.limit) return { allowed: false, count };
      counts.set(input.key, { window: input.window, count: count + 1 });
      return { allowed: true, count: count + 1 };
    },
    async requestCount(key, window) {
      checkId('controls.requestCount', 'key', key);
      checkId('controls.requestCount', 'window', window);
      const current = counts.get(key);
      return current?.window === window ? current.count : 0;
    },

    async acquireSessionLock({ sessionId, owner, now, leaseUntil }) {
      checkId('controls.acquireSessionLock', 'sessionId', sessionId);
      checkId('controls.acquireSessionLock', 'owner', owner);
      const held = locks.get(sessionId);
      if (held !== undefined && held.owner !== owner && held.leaseUntil >= now) return false;
      locks.set(sessionId, { owner, leaseUntil });
      return true;
    },
    async renewSessionLock(sessionId, owner, leaseUntil) {
      const held = locks.get(sessionId);
      if (held?.owner !== owner) return false;
      locks.set(sessionId, { owner, leaseUntil });
      return true;
    },
    async releaseSessionLock(sessionId, owner) {
      if (locks.get(sessionId)?.owner !== owner) return false;
      return locks.delete(sessionId);
    },
  };
}
