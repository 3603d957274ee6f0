/**
 * The rows of the Postgres memory domain: its state, the scope predicate every statement carries, and the
 * writes of rows with their tsvector, statistics and edges (one insert, a batch, deletions). The record
 * shapes are the shared ones (`../memory-logic.ts`); this file holds only the queries.
 */
import { memoryRecordFromRow, metadataJson, newMemoryRecord, type MemoryRowLike } from '../memory-logic';
import type { MemoryEdgeInput, MemoryRecord, MemoryScope, NewMemoryRow } from '../memory-types';
import type { PgHandle, PgRow, PgTx } from './handle';
import { bumpFtsStats, type createPgMemoryFts, docSize, ftsStatsUpsert, tsvectorLiteral } from './memory-fts';

/** Columns every row read selects (never `search_text`). */
export const COLUMNS =
  'id, user_id, agent_id, category, content, metadata, source, status, content_hash, embedding_state, deleted_at, retired_at, superseded_by, created_at, updated_at';
/** The scope predicate (`$1` user, `$2` agent; a scope without an agent sees only user-level rows). */
export const SCOPE = 'user_id = $1 AND agent_id IS NOT DISTINCT FROM $2';
/** Rows a lookup may return: not soft-deleted, not retired. */
export const VISIBLE = "deleted_at IS NULL AND status <> 'retired'";
/**
 * `SELECT columns` of the scope's rows among the ids bound to `$3` (a `bigint[]`), reached through the primary key
 * whatever the table's statistics say: the ids are looked up in a MATERIALIZED CTE, which the planner cannot merge
 * the scope predicate into, and the scope is checked on those rows only. Written as one `WHERE id = ANY($3) AND
 * user_id = $1 …`, a table without statistics (after a bulk load, before autoanalyze) had the planner believe the
 * tenant small and combine the scope index, every entry of the tenant, with the key: 12–235 ms at 100k rows for
 * what takes well under one (test/postgres/memory-id-plans.test.ts EXPLAINs what the storage sends).
 */
export const scopeRowsByIds = (table: string, columns: string, orderBy = ''): string =>
  `WITH by_id AS MATERIALIZED (SELECT ${columns}, user_id AS scope_user_id, agent_id AS scope_agent_id FROM ${table} WHERE id = ANY($3::bigint[]))
   SELECT ${columns} FROM by_id WHERE scope_user_id = $1 AND scope_agent_id IS NOT DISTINCT FROM $2${orderBy === '' ? '' : ` ORDER BY ${orderBy}`}`;
/**
 * The same rule for writes and joins: `by_id`, a MATERIALIZED CTE of `table`'s rows whose `column` is among the ids
 * bound to `$idsParam` (a `bigint[]`), with their `id` and scope, looked up by key alone. A statement joins it on
 * `id` and checks the scope on it with {@link BY_ID_IN_SCOPE}.
 */
export const byIdCte = (table: string, idsParam: number, column = 'id', where = ''): string =>
  `WITH by_id AS MATERIALIZED (SELECT id, user_id, agent_id FROM ${table} WHERE ${column} = ANY($${idsParam}::bigint[])${where})`;
/** {@link SCOPE} on the rows of {@link byIdCte} (alias `b`). */
export const BY_ID_IN_SCOPE = 'b.user_id = $1 AND b.agent_id IS NOT DISTINCT FROM $2';
/** Bind values of {@link SCOPE}. */
export const sp = (scope: MemoryScope): [string, string | null] => [scope.userId, scope.agentId ?? null];
/** The scope's key in the tables keyed by a text agent (`''` for a user-level scope). */
export const agentKey = (scope: MemoryScope): string => scope.agentId ?? '';

/** What the Postgres memory domain keeps: the handle, its table names, the full-text part and whether pgvector is there. */
export interface PgMemoryState {
  readonly h: PgHandle;
  /** `memories`, `memory_edges`, `memory_vectors`, schema-qualified. */
  readonly M: string;
  readonly E: string;
  readonly V: string;
  readonly fts: ReturnType<typeof createPgMemoryFts>;
  readonly vectorAvailable: boolean;
  readonly vectorUnavailableReason: string | undefined;
}

/** A `memories` row as a record. */
export const toRecord = (r: PgRow): MemoryRecord => memoryRecordFromRow(r as unknown as MemoryRowLike);

/** Insert edges for one memory (idempotent through the UNIQUE key). */
export async function insertEdges(st: PgMemoryState, tx: PgTx, scope: MemoryScope, memoryId: number, edges: readonly MemoryEdgeInput[], now: string): Promise<void> {
  if (edges.length === 0) return;
  await tx.run(
    `INSERT INTO ${st.E} (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
     SELECT $1, $2, 'memories', $3, k, key, t, w, $4 FROM unnest($5::text[], $6::text[], $7::text[], $8::float8[]) AS x(k, key, t, w)
     ON CONFLICT DO NOTHING`,
    [...sp(scope), memoryId, now, edges.map((e) => e.entityKind), edges.map((e) => e.entityKey), edges.map((e) => e.edgeType), edges.map((e) => e.weight)],
  );
}

/**
 * Insert one row, its edges and (unless `withStats` is false) its statistics change as ONE statement
 * (data-modifying CTEs): atomic on its own, one round trip when not inside a transaction.
 */
export async function insertOne(st: PgMemoryState, q: PgTx, scope: MemoryScope, row: NewMemoryRow, withStats: boolean): Promise<MemoryRecord> {
  const { h, M, E } = st;
  const size = docSize(row.searchText, row.category);
  const edges = row.edges;
  const r = await q.get(
    `WITH m AS (
       INSERT INTO ${M} (user_id, agent_id, category, content, search_text, search_tsv, doc_size, metadata, source, status, content_hash, embedding_state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6::tsvector, $7, $8, $9, $10, $11, $12, $13, $13) RETURNING id
     ), e AS (
       INSERT INTO ${E} (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
       SELECT $1, $2, 'memories', m.id, x.k, x.key, x.t, x.w, $13 FROM m, unnest($14::text[], $15::text[], $16::text[], $17::float8[]) AS x(k, key, t, w)
       ON CONFLICT DO NOTHING
     )${withStats ? `, s AS (${ftsStatsUpsert(h, { user: 1, agentKey: 18, rows: '1', size: '$7::bigint' })})` : ''}
     SELECT id FROM m`,
    [
      ...sp(scope), row.category, row.content, row.searchText, tsvectorLiteral(scope, row.searchText), size, metadataJson(row.metadata),
      row.source ?? null, row.status, row.contentHash, row.embeddingState, row.now,
      edges.map((e) => e.entityKind), edges.map((e) => e.entityKey), edges.map((e) => e.edgeType), edges.map((e) => e.weight),
      ...(withStats ? [agentKey(scope)] : []),
    ],
  );
  return newMemoryRecord(scope, row, Number(r!.id));
}

/** Insert a batch in one transaction: ids drawn up front (ascending), then one INSERT for the rows and one for all their edges. */
export async function insertMany(st: PgMemoryState, scope: MemoryScope, list: readonly NewMemoryRow[]): Promise<MemoryRecord[]> {
  if (list.length === 0) return [];
  const { h, M } = st;
  return h.tx('memory.insertMany', async (tx) => {
    const ids = (await tx.all(`SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id FROM generate_series(1, $2::int)`, [M, list.length]))
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
    const col = <T>(f: (row: NewMemoryRow) => T) => list.map(f);
    await tx.run(
      `INSERT INTO ${M} (id, user_id, agent_id, category, content, search_text, search_tsv, doc_size, metadata, source, status, content_hash, embedding_state, created_at, updated_at)
       OVERRIDING SYSTEM VALUE
       SELECT x.id, $1, $2, x.category, x.content, x.search_text, x.tsv::tsvector, x.size, x.metadata, x.source, x.status, x.hash, x.state, x.now, x.now
       FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS x(id, category, content, search_text, tsv, size, metadata, source, status, hash, state, now)`,
      [
        ...sp(scope), ids, col((r) => r.category), col((r) => r.content), col((r) => r.searchText), col((r) => tsvectorLiteral(scope, r.searchText)),
        col((r) => docSize(r.searchText, r.category)), col((r) => metadataJson(r.metadata)), col((r) => r.source ?? null),
        col((r) => r.status), col((r) => r.contentHash), col((r) => r.embeddingState), col((r) => r.now),
      ],
    );
    await insertBatchEdges(st, tx, scope, list, ids);
    const out = list.map((row, i) => newMemoryRecord(scope, row, ids[i] as number));
    await bumpFtsStats(tx, h, scope, list.length, list.reduce((s, r) => s + docSize(r.searchText, r.category), 0));
    return out;
  });
}

/** The edges of a batch's rows (`ids[i]` is row i's id), one statement. */
async function insertBatchEdges(st: PgMemoryState, tx: PgTx, scope: MemoryScope, list: readonly NewMemoryRow[], ids: readonly number[]): Promise<void> {
  const edges = list.flatMap((row, i) => row.edges.map((e) => ({ id: ids[i] as number, e, now: row.now })));
  if (edges.length === 0) return;
  await tx.run(
    `INSERT INTO ${st.E} (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
     SELECT $1, $2, 'memories', x.id, x.k, x.key, x.t, x.w, x.now FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[]) AS x(id, k, key, t, w, now)
     ON CONFLICT DO NOTHING`,
    [...sp(scope), edges.map((x) => x.id), edges.map((x) => x.e.entityKind), edges.map((x) => x.e.entityKey), edges.map((x) => x.e.edgeType), edges.map((x) => x.e.weight), edges.map((x) => x.now)],
  );
}

/** Delete the scope's rows among `ids` with their edges and statistics (inside the caller's transaction); how many went. */
export async function deleteIds(st: PgMemoryState, tx: PgTx, scope: MemoryScope, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const gone = await tx.all(`${byIdCte(st.M, 3)} DELETE FROM ${st.M} m USING by_id b WHERE m.id = b.id AND ${BY_ID_IN_SCOPE} RETURNING m.id, m.doc_size`, [...sp(scope), [...ids]]);
  if (gone.length === 0) return 0;
  await tx.run(`${byIdCte(st.E, 3, 'src_id', " AND src_table = 'memories'")} DELETE FROM ${st.E} e USING by_id b WHERE e.id = b.id AND ${BY_ID_IN_SCOPE}`, [...sp(scope), gone.map((g) => Number(g.id))]);
  await bumpFtsStats(tx, st.h, scope, -gone.length, -gone.reduce((s, g) => s + Number(g.doc_size), 0));
  return gone.length;
}

/** One row of the scope (soft-deleted ones only when asked). */
export function getRow(st: PgMemoryState, q: PgTx, scope: MemoryScope, id: number, includeDeleted: boolean): Promise<PgRow | undefined> {
  return q.get(`SELECT ${COLUMNS} FROM ${st.M} WHERE id = $3 AND ${SCOPE}${includeDeleted ? '' : ' AND deleted_at IS NULL'}`, [...sp(scope), id]);
}
