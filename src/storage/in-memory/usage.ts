import { checkId, invalidArgument } from '../sqlite/checks';
import { checkUsageEntry } from '../sqlite/usage';
import type { UsageEntry, UsageStorage } from '../usage-types';

/** The `usage` domain in memory: same semantics as the SQLite engine. */
export function createInMemoryUsageStorage(): UsageStorage {
  const rows = new Map<string, UsageEntry>();
  return {
    async record(e) {
      checkId('usage.record', 'turnId', e.turnId);
      checkUsageEntry('usage.record', e);
      if (rows.has(e.turnId)) return false;
      rows.set(e.turnId, { ...e });
      return true;
    },
    async totals(query = {}) {
      if (query.day !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(query.day)) throw invalidArgument('usage.totals', `day must be YYYY-MM-DD, got ${JSON.stringify(query.day)}`);
      const t = { turns: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
      for (const r of rows.values()) {
        if (query.day !== undefined && r.at.slice(0, 10) !== query.day) continue;
        if (query.sessionId !== undefined && r.sessionId !== query.sessionId) continue;
        if (query.userId !== undefined && r.userId !== query.userId) continue;
        if (query.sources !== undefined && query.sources.length > 0 && !query.sources.includes(r.source)) continue;
        t.turns++;
        t.inputTokens += r.inputTokens;
        t.outputTokens += r.outputTokens;
        t.cacheReadTokens += r.cacheReadTokens;
        t.cacheWriteTokens += r.cacheWriteTokens;
        t.costUsd += r.costUsd;
      }
      return t;
    },
  };
}
