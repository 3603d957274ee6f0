import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { memoryRecordFromRow } from '../memory-logic';
import type { EmbeddingState, MemoryEdgeInput, MemoryRecord, MemoryScope, MemoryStatus } from '../memory-types';

/** Columns every row read selects (never `search_text`). */
export const MEMORY_COLUMNS =
  'id, user_id, agent_id, category, content, metadata, source, status, content_hash, embedding_state, deleted_at, retired_at, superseded_by, created_at, updated_at';

/** The scope predicate every memory statement carries (`user_id = ? AND agent_id IS ?`). */
export const SCOPE_WHERE = 'user_id = ? AND agent_id IS ?';

/**
 * The same predicate for statements driven by an id list: the unary `+` keeps the planner off the
 * `user_id` index (which would scan the whole tenant) so it looks each id up by primary key.
 */
export const SCOPE_WHERE_BY_ID = '+user_id = ? AND +agent_id IS ?';

/** Bind values of {@link SCOPE_WHERE}. */
export function scopeParams(scope: MemoryScope): [string, string | null] {
  return [scope.userId, scope.agentId ?? null];
}

/** The token the full-text index carries per scope: `s` + 20 hex chars of sha256(userId NUL agentId). */
export function scopeKey(scope: MemoryScope): string {
  return `s${createHash('sha256').update(`${scope.userId}\u0000${scope.agentId ?? ''}`).digest('hex').slice(0, 20)}`;
}

/** A raw `memories` row. */
export interface MemoryRow {
  id: number;
  user_id: string;
  agent_id: string | null;
  category: string;
  content: string;
  metadata: string | null;
  source: string | null;
  status: MemoryStatus;
  content_hash: string;
  embedding_state: EmbeddingState;
  deleted_at: string | null;
  retired_at: string | null;
  superseded_by: number | null;
  created_at: string;
  updated_at: string;
}

/** Map a row to a record (absent optional fields are left out, not `undefined`). */
export function toRecord(row: MemoryRow): MemoryRecord {
  return memoryRecordFromRow(row);
}

/** Insert edges for one memory (idempotent through the UNIQUE key). */
export function insertEdges(
  prepare: (sql: string) => Database.Statement,
  scope: MemoryScope,
  memoryId: number,
  edges: readonly MemoryEdgeInput[],
  now: string,
): void {
  if (edges.length === 0) return;
  const stmt = prepare(
    `INSERT OR IGNORE INTO memory_edges (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
     VALUES (?, ?, 'memories', ?, ?, ?, ?, ?, ?)`,
  );
  const [userId, agentId] = scopeParams(scope);
  for (const e of edges) stmt.run(userId, agentId, memoryId, e.entityKind, e.entityKey, e.edgeType, e.weight, now);
}

/** `json_each` binding of a list (one statement shape for any list length). */
export function jsonList(values: readonly unknown[]): string {
  return JSON.stringify(values);
}
