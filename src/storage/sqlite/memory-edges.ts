/**
 * Edge lookups of the SQLite memory domain (typed edges from memories to finance entities). Every statement
 * filters both the edge and its memory by the scope and skips soft-deleted and retired memories.
 */
import { countEdgeTypes } from '../memory-logic';
import type { MemoryEdgeRecord, MemoryEntityCount, MemoryStorage } from '../memory-types';
import type { SqliteHandle } from './handle';
import { jsonList, scopeParams } from './memory-rows';

const edgeRecord = (r: { src_id: number; dst_entity_kind: string; dst_entity_key: string; edge_type: string; weight: number; created_at: string }): MemoryEdgeRecord => ({
  memoryId: r.src_id,
  entityKind: r.dst_entity_kind,
  entityKey: r.dst_entity_key,
  edgeType: r.edge_type,
  weight: r.weight,
  createdAt: r.created_at,
});

/** The edge queries of the SQLite memory domain. */
export function createSqliteMemoryEdges(handle: SqliteHandle): Pick<MemoryStorage, 'edgesForEntity' | 'edgesForMemories' | 'topEntities'> {
  const prepare = (sql: string) => handle.prepare(sql);
  return {
    async edgesForEntity(scope, entityKey, options) {
      const rows = handle.read('memory.edgesForEntity', () =>
        prepare(
          `SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
           FROM memory_edges e JOIN memories m ON m.id = e.src_id
           WHERE e.user_id = ? AND e.agent_id IS ? AND e.src_table = 'memories' AND e.dst_entity_key = ?
             AND (? IS NULL OR e.dst_entity_kind = ?)
             AND m.user_id = ? AND m.agent_id IS ? AND m.deleted_at IS NULL AND m.status != 'retired'
           ORDER BY m.updated_at DESC, m.id DESC, e.id ASC LIMIT ?`,
        ).all(...scopeParams(scope), entityKey, options.entityKind ?? null, options.entityKind ?? null, ...scopeParams(scope), options.limit),
      ) as Array<Parameters<typeof edgeRecord>[0]>;
      return rows.map(edgeRecord);
    },

    async edgesForMemories(scope, ids) {
      if (ids.length === 0) return [];
      const rows = handle.read('memory.edgesForMemories', () =>
        prepare(
          `SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
           FROM memory_edges e JOIN memories m ON m.id = e.src_id
           WHERE +e.user_id = ? AND +e.agent_id IS ? AND e.src_table = 'memories' AND e.src_id IN (SELECT value FROM json_each(?))
             AND +m.user_id = ? AND +m.agent_id IS ? AND m.deleted_at IS NULL AND m.status != 'retired'
           ORDER BY e.src_id ASC, e.id ASC`,
        ).all(...scopeParams(scope), jsonList(ids), ...scopeParams(scope)),
      ) as Array<Parameters<typeof edgeRecord>[0]>;
      return rows.map(edgeRecord);
    },

    async topEntities(scope, options) {
      const rows = handle.read('memory.topEntities', () =>
        prepare(
          `SELECT e.dst_entity_kind AS kind, e.dst_entity_key AS key, COUNT(DISTINCT e.src_id) AS n, json_group_array(e.edge_type) AS types
           FROM memory_edges e JOIN memories m ON m.id = e.src_id
           WHERE e.user_id = ? AND e.agent_id IS ? AND e.src_table = 'memories'
             AND (CASE WHEN ? IS NULL THEN e.dst_entity_kind != 'ticker_pair' ELSE e.dst_entity_kind = ? END)
             AND m.user_id = ? AND m.agent_id IS ? AND m.deleted_at IS NULL AND m.status != 'retired'
           GROUP BY e.dst_entity_kind, e.dst_entity_key
           ORDER BY n DESC, e.dst_entity_key ASC, e.dst_entity_kind ASC LIMIT ?`,
        ).all(...scopeParams(scope), options.entityKind ?? null, options.entityKind ?? null, ...scopeParams(scope), options.limit),
      ) as Array<{ kind: string; key: string; n: number; types: string }>;
      return rows.map((r): MemoryEntityCount => ({ entityKind: r.kind, entityKey: r.key, memoryCount: r.n, edgeTypes: countEdgeTypes(JSON.parse(r.types) as string[]) }));
    },
  };
}
