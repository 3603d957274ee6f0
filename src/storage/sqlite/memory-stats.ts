/**
 * Health counts of one memory scope (`MemoryStorage.stats`): grouped counts over the scope's rows, edges and
 * vectors, each one indexed aggregate statement.
 */
import type { EmbeddingState, MemoryScope, MemoryStats, MemoryStatus } from '../memory-types';
import type { SqliteHandle } from './handle';
import { SCOPE_WHERE, scopeParams } from './memory-rows';

export function sqliteMemoryStats(handle: SqliteHandle, scope: MemoryScope): MemoryStats {
  const params = scopeParams(scope);
  return handle.read('memory.stats', () => {
    const grouped = handle
      .prepare(`SELECT category, status, deleted_at IS NOT NULL AS deleted, embedding_state, COUNT(*) AS n FROM memories WHERE ${SCOPE_WHERE} GROUP BY 1, 2, 3, 4`)
      .all(...params) as Array<{ category: string; status: MemoryStatus; deleted: number; embedding_state: EmbeddingState; n: number }>;
    const rows = new Map<string, { category: string; status: MemoryStatus; count: number }>();
    const embedding: Record<EmbeddingState, number> = { pending: 0, embedded: 0, failed: 0, skipped: 0 };
    let deleted = 0;
    for (const g of grouped) {
      if (g.deleted) {
        deleted += g.n;
        continue;
      }
      embedding[g.embedding_state] += g.n;
      const key = `${g.category}\u0000${g.status}`;
      const row = rows.get(key) ?? { category: g.category, status: g.status, count: 0 };
      row.count += g.n;
      rows.set(key, row);
    }
    const edges = (handle.prepare(`SELECT COUNT(*) AS n FROM memory_edges WHERE ${SCOPE_WHERE}`).get(...params) as { n: number }).n;
    const vectors = (handle.prepare(`SELECT COUNT(*) AS n FROM memory_vectors WHERE ${SCOPE_WHERE}`).get(...params) as { n: number }).n;
    const sorted = [...rows.values()].sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.status < b.status ? -1 : a.status > b.status ? 1 : 0));
    return { rows: sorted, deleted, embedding, edges, vectors };
  });
}
