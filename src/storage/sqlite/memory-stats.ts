/**
 * Health counts of one memory scope (`MemoryStorage.stats`): grouped counts over the scope's rows, edges and
 * vectors, each one indexed aggregate statement.
 */
import { foldMemoryStats } from '../memory-logic';
import type { EmbeddingState, MemoryScope, MemoryStats, MemoryStatus } from '../memory-types';
import type { SqliteHandle } from './handle';
import { SCOPE_WHERE, scopeParams } from './memory-rows';

export function sqliteMemoryStats(handle: SqliteHandle, scope: MemoryScope): MemoryStats {
  const params = scopeParams(scope);
  return handle.read('memory.stats', () => {
    const grouped = handle
      .prepare(`SELECT category, status, deleted_at IS NOT NULL AS deleted, embedding_state, COUNT(*) AS n FROM memories WHERE ${SCOPE_WHERE} GROUP BY 1, 2, 3, 4`)
      .all(...params) as Array<{ category: string; status: MemoryStatus; deleted: number; embedding_state: EmbeddingState; n: number }>;
    const edges = (handle.prepare(`SELECT COUNT(*) AS n FROM memory_edges WHERE ${SCOPE_WHERE}`).get(...params) as { n: number }).n;
    const vectors = (handle.prepare(`SELECT COUNT(*) AS n FROM memory_vectors WHERE ${SCOPE_WHERE}`).get(...params) as { n: number }).n;
    return foldMemoryStats(
      grouped.map((g) => ({ category: g.category, status: g.status, deleted: g.deleted !== 0, embeddingState: g.embedding_state, n: g.n })),
      edges,
      vectors,
    );
  });
}
