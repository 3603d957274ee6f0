/**
 * Edge lookups of the Postgres memory domain (typed edges from memories to finance entities). Every statement
 * filters both the edge and its memory by the scope and skips soft-deleted and retired memories.
 */
import { countEdgeTypes } from '../memory-logic';
import type { MemoryEdgeRecord, MemoryEntityCount, MemoryScope, MemoryStorage } from '../memory-types';
import type { PgRow } from './handle';
import { type PgMemoryState, sp } from './memory-rows';

type Args<K extends keyof MemoryStorage> = Parameters<NonNullable<MemoryStorage[K]>>;

const edgeRecord = (r: PgRow): MemoryEdgeRecord => ({
  memoryId: Number(r.src_id), entityKind: String(r.dst_entity_kind), entityKey: String(r.dst_entity_key), edgeType: String(r.edge_type), weight: Number(r.weight), createdAt: String(r.created_at),
});

/** The edges pointing at an entity, newest memory first. */
export async function edgesForEntity(st: PgMemoryState, ...[scope, entityKey, options]: Args<'edgesForEntity'>): Promise<MemoryEdgeRecord[]> {
  const rows = await st.h.op('memory.edgesForEntity').all(
    `SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
     FROM ${st.E} e JOIN ${st.M} m ON m.id = e.src_id
     WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2 AND e.src_table = 'memories' AND e.dst_entity_key = $3
       AND ($4::text IS NULL OR e.dst_entity_kind = $4) AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
     ORDER BY m.updated_at DESC, m.id DESC, e.id ASC LIMIT $5`,
    [...sp(scope), entityKey, options.entityKind ?? null, options.limit],
  );
  return rows.map(edgeRecord);
}

/** The edges of these memories, by memory then insertion. */
export async function edgesForMemories(st: PgMemoryState, scope: MemoryScope, ids: readonly number[]): Promise<MemoryEdgeRecord[]> {
  if (ids.length === 0) return [];
  const rows = await st.h.op('memory.edgesForMemories').all(
    // Both sides by key (the edges' unique key, the rows' primary key) in MATERIALIZED CTEs, the scope checked on
    // what they found: with no statistics the planner otherwise combined the tenant's whole entity or scope index.
    `WITH e AS MATERIALIZED (
       SELECT id, src_id, user_id, agent_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at FROM ${st.E}
       WHERE src_table = 'memories' AND src_id = ANY($3::bigint[])),
     m AS MATERIALIZED (SELECT id, user_id, agent_id, deleted_at, status FROM ${st.M} WHERE id = ANY($3::bigint[]))
     SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
     FROM e JOIN m ON m.id = e.src_id
     WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2
       AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
     ORDER BY e.src_id ASC, e.id ASC`,
    [...sp(scope), [...ids]],
  );
  return rows.map(edgeRecord);
}

/** The entities most memories point at (ticker pairs only when asked by kind). */
export async function topEntities(st: PgMemoryState, ...[scope, options]: Args<'topEntities'>): Promise<MemoryEntityCount[]> {
  const rows = await st.h.op('memory.topEntities').all(
    `SELECT e.dst_entity_kind AS kind, e.dst_entity_key AS key, COUNT(DISTINCT e.src_id) AS n, array_agg(e.edge_type) AS types
     FROM ${st.E} e JOIN ${st.M} m ON m.id = e.src_id
     WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2 AND e.src_table = 'memories'
       AND (CASE WHEN $3::text IS NULL THEN e.dst_entity_kind <> 'ticker_pair' ELSE e.dst_entity_kind = $3 END)
       AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
     GROUP BY e.dst_entity_kind, e.dst_entity_key
     ORDER BY n DESC, e.dst_entity_key COLLATE "C" ASC, e.dst_entity_kind COLLATE "C" ASC LIMIT $4`,
    [...sp(scope), options.entityKind ?? null, options.limit],
  );
  return rows.map(
    (r): MemoryEntityCount => ({
      entityKind: String(r.kind),
      entityKey: String(r.key),
      memoryCount: Number(r.n),
      edgeTypes: countEdgeTypes(Array.isArray(r.types) ? (r.types as string[]) : parsePgArray(String(r.types))),
    }),
  );
}

/** `{a,b}` → `['a', 'b']` (a driver that returns arrays as text). */
function parsePgArray(text: string): string[] {
  const inner = text.replace(/^\{|\}$/g, '');
  if (inner.length === 0) return [];
  return inner.split(',').map((s) => s.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1'));
}
