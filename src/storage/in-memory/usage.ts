import { checkId, invalidArgument } from '../sqlite/checks';
import { checkUsageEntry } from '../sqlite/usage';
import type { UsageEntry, UsageStorage, UsageTotals } from '../usage-types';

/** The `usage` domain in memory: same semantics as the SQLite engine. */
export function createInMemoryUsageStorage(): UsageStorage {
  const rows = new Map<string, UsageEntry>();
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
    async byUser(query) {
      checkDay('usage.byUser', query?.day);
      const inDay = (r: UsageEntry) => r.at.slice(0, 10) === query.day && (query.sources === undefined || query.sources.length === 0 || query.sources.includes(r.source));
      const users = [...new Set([...rows.values()].filter(inDay).map((r) => r.userId))].sort();
      return users.map((userId) => ({ userId, totals: sum((r) => inDay(r) && r.userId === userId) }));
    },
  };
}
