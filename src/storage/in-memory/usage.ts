import { checkId, invalidArgument } from '../sqlite/checks';
import { checkReservation, checkUsageEntry, decideReservation } from '../sqlite/usage';
import type { UsageEntry, UsageStorage, UsageTotals } from '../usage-types';

/** The `usage` domain in memory: same semantics as the SQLite engine. */
export function createInMemoryUsageStorage(): UsageStorage {
  const rows = new Map<string, UsageEntry>();
  const reservations = new Map<string, { scope: string; day: string; amountUsd: number; expiresAt: string }>();
  const sum = (match: (r: UsageEntry) => boolean): UsageTotals => {
    const t = { turns: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
    for (const r of rows.values()) {
      if (!match(r)) continue;
      t.turns++;
      t.inputTokens += r.inputTokens;
      t.outputTokens += r.outputTokens;
      t.cacheReadTokens += r.cacheReadTokens;
      t.cacheWriteTokens += r.cacheWriteTokens;
      t.costUsd += r.costUsd;
    }
    return t;
  };
  const checkDay = (operation: string, day: unknown) => {
    if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) throw invalidArgument(operation, `day must be YYYY-MM-DD, got ${JSON.stringify(day)}`);
  };
  return {
    async record(e) {
      checkId('usage.record', 'turnId', e.turnId);
      checkUsageEntry('usage.record', e);
      if (rows.has(e.turnId)) return false;
      rows.set(e.turnId, { ...e });
      return true;
    },
    async totals(query = {}) {
      if (query.day !== undefined) checkDay('usage.totals', query.day);
      return sum(
        (r) =>
          (query.day === undefined || r.at.slice(0, 10) === query.day) &&
          (query.sessionId === undefined || r.sessionId === query.sessionId) &&
          (query.userId === undefined || r.userId === query.userId) &&
          (query.sources === undefined || query.sources.length === 0 || query.sources.includes(r.source)),
      );
    },
    async reserve(r) {
      checkReservation('usage.reserve', r);
      // No await between the check and the insert: atomic within the process.
      for (const [id, held] of reservations) if (held.expiresAt <= r.now) reservations.delete(id);
      const spent = { costUsd: 0, largestUsd: 0, turns: 0 };
      for (const row of rows.values()) {
        if (row.at.slice(0, 10) !== r.day || !r.sources.includes(row.source) || (r.userId !== undefined && row.userId !== r.userId)) continue;
        spent.turns++;
        spent.costUsd += row.costUsd;
        spent.largestUsd = Math.max(spent.largestUsd, row.costUsd);
      }
      let held = 0;
      for (const h of reservations.values()) if (h.scope === r.scope && h.day === r.day) held += h.amountUsd;
      const decision = decideReservation(r.limitUsd, spent, held);
      if (decision.admitted) reservations.set(r.id, { scope: r.scope, day: r.day, amountUsd: decision.amountUsd, expiresAt: r.expiresAt });
      return decision;
    },
    async renewReservation(id, expiresAt) {
      const held = reservations.get(id);
      if (!held) return false;
      held.expiresAt = expiresAt;
      return true;
    },
    async releaseReservation(id) {
      return reservations.delete(id);
    },
    async byUser(query) {
      checkDay('usage.byUser', query?.day);
      const inDay = (r: UsageEntry) => r.at.slice(0, 10) === query.day && (query.sources === undefined || query.sources.length === 0 || query.sources.includes(r.source));
      const users = [...new Set([...rows.values()].filter(inDay).map((r) => r.userId))].sort();
      return users.map((userId) => ({ userId, totals: sum((r) => inDay(r) && r.userId === userId) }));
    },
  };
}
