/**
 * The Postgres memory domain: scoped rows with their tsvector (see `memory-fts.ts`), edges, consolidation
 * events, the user profile and vectors. Every statement filters on `user_id` and the scope's exact `agent_id`
 * (`IS NOT DISTINCT FROM`, so a scope without an agent sees only user-level rows); writes that touch several
 * tables (row, index statistics, edges, vectors) are one transaction.
 *
 * Wiring over a {@link PgMemoryState}: the row writes live in `memory-rows.ts`, vectors (pgvector) in
 * `memory-vectors.ts`, edges in `memory-edges.ts`, the lexical index's text, change log and snapshot in
 * `memory-text.ts`, profile and consolidation events in `memory-profile.ts`, and the logic every engine shares
 * (records, statistics, LIKE scoring, vector checks) in `../memory-logic.ts`.
 */
import { DEFAULT_MEMORY_STATUSES, foldMemoryStats, LIKE_CANDIDATES, likeNeedles, scopeFromRow, scoreLikeMatches } from '../memory-logic';
import type { EmbeddingState, MemoryScope, MemoryScoredId, MemoryStats, MemoryStatus, MemoryStorage } from '../memory-types';
import { bumpFtsStats, createPgMemoryFts, docSize, rowFilter, tsvectorLiteral } from './memory-fts';
import type { PgHandle } from './handle';
import { appendConsolidationEvent, listConsolidationEvents, profileDelete, profileGet, profileList, profileSet } from './memory-profile';
import { BY_ID_IN_SCOPE, byIdCte, COLUMNS, deleteIds, getRow, insertEdges, insertMany, insertOne, type PgMemoryState, SCOPE, scopeRowsByIds, sp, toRecord, VISIBLE } from './memory-rows';
import { edgesForEntity, edgesForMemories, topEntities } from './memory-edges';
import { loadTextIndex, saveTextIndex, textChanges, textRows } from './memory-text';
import { searchVector, upsertVectors, vectorByContentHash, vectorInfo } from './memory-vectors';

/** Options of {@link createPgMemoryStorage}. */
export interface PgMemoryOptions {
  /** pgvector is installed in this database. */
  readonly vectorAvailable: boolean;
  readonly vectorUnavailableReason?: string | undefined;
}

type Args<K extends keyof MemoryStorage> = Parameters<NonNullable<MemoryStorage[K]>>;
type Result<K extends keyof MemoryStorage> = Awaited<ReturnType<NonNullable<MemoryStorage[K]>>>;

/** Apply a patch to a row of the scope: text, statistics, vector (dropped when the content changed) and edges in one transaction. */
async function updateRow(st: PgMemoryState, ...[scope, id, patch]: Args<'update'>): Promise<Result<'update'>> {
  const { h, M, V, E } = st;
  return h.tx('memory.update', async (tx) => {
    const current = await tx.get(`SELECT ${COLUMNS}, search_text, doc_size FROM ${M} WHERE id = $3 AND ${SCOPE} AND deleted_at IS NULL FOR UPDATE`, [...sp(scope), id]);
    if (current === undefined) return undefined;
    const category = patch.category ?? String(current.category);
    const searchText = patch.searchText ?? String(current.search_text);
    const metadata = patch.metadata === undefined ? current.metadata : patch.metadata === null ? null : JSON.stringify(patch.metadata);
    const size = docSize(searchText, category);
    const reindex = searchText !== current.search_text || category !== current.category;
    const next = await tx.get(
      `UPDATE ${M} SET category = $3, content = $4, search_text = $5, search_tsv = $6::tsvector, doc_size = $7, metadata = $8, source = $9, content_hash = $10,
         embedding_state = $11, updated_at = $12 WHERE id = $13 AND ${SCOPE} RETURNING ${COLUMNS}`,
      [
        ...sp(scope), category, patch.content ?? current.content, searchText, tsvectorLiteral(scope, searchText), size, metadata, patch.source ?? current.source,
        patch.contentHash ?? current.content_hash, patch.embeddingState ?? current.embedding_state, patch.now, id,
      ],
    );
    if (reindex) await bumpFtsStats(tx, h, scope, 0, size - Number(current.doc_size));
    if (patch.contentHash !== undefined && patch.contentHash !== current.content_hash) await tx.run(`DELETE FROM ${V} WHERE memory_id = $3 AND ${SCOPE}`, [...sp(scope), id]);
    if (patch.edges !== undefined) {
      await tx.run(`DELETE FROM ${E} WHERE src_table = 'memories' AND src_id = $3 AND ${SCOPE}`, [...sp(scope), id]);
      await insertEdges(st, tx, scope, id, patch.edges, patch.now);
    }
    return toRecord(next!);
  });
}

/** The scope's rows matching a list query, in its order. */
async function listRows(st: PgMemoryState, ...[scope, query]: Args<'list'>): Promise<Result<'list'>> {
  const order = query.order === 'created_asc' ? 'created_at ASC, id ASC' : 'updated_at DESC, id DESC';
  const params: unknown[] = [...sp(scope), query.includeDeleted === true, [...(query.statuses ?? DEFAULT_MEMORY_STATUSES)]];
  let sql = `SELECT ${COLUMNS} FROM ${st.M} WHERE ${SCOPE} AND ($3 OR deleted_at IS NULL) AND status = ANY($4::text[])`;
  if ((query.categories ?? []).length > 0) (params.push([...(query.categories ?? [])]), (sql += ` AND category = ANY($${params.length}::text[])`));
  if (query.source !== undefined) (params.push(query.source), (sql += ` AND source = $${params.length}`));
  if ((query.excludeSources ?? []).length > 0) (params.push([...(query.excludeSources ?? [])]), (sql += ` AND (source IS NULL OR NOT (source = ANY($${params.length}::text[])))`));
  if (query.contentHash !== undefined) (params.push(query.contentHash), (sql += ` AND content_hash = $${params.length}`));
  params.push(query.limit);
  return (await st.h.op('memory.list').all(`${sql} ORDER BY ${order} LIMIT $${params.length}`, params)).map(toRecord);
}

/** How many visible rows the scope has (of some categories, when asked). */
async function countRows(st: PgMemoryState, ...[scope, query]: Args<'count'>): Promise<number> {
  const cats = query?.categories ?? [];
  const r = await st.h.op('memory.count').get(
    `SELECT COUNT(*) AS n FROM ${st.M} WHERE ${SCOPE} AND ${VISIBLE}${cats.length > 0 ? ' AND category = ANY($3::text[])' : ''}`,
    cats.length > 0 ? [...sp(scope), [...cats]] : sp(scope),
  );
  return Number(r?.n ?? 0);
}

/** Delete for good the scope's rows soft-deleted before `cutoff`; how many went. */
async function purgeSoftDeleted(st: PgMemoryState, scope: MemoryScope, cutoff: string): Promise<number> {
  return st.h.tx('memory.purgeSoftDeleted', async (tx) => {
    const ids = (await tx.all(`SELECT id FROM ${st.M} WHERE ${SCOPE} AND deleted_at IS NOT NULL AND deleted_at < $3`, [...sp(scope), cutoff])).map((r) => Number(r.id));
    return deleteIds(st, tx, scope, ids);
  });
}

/** Every scope holding a row soft-deleted before `cutoff`. */
async function expiredSoftDeletedScopes(st: PgMemoryState, cutoff: string): Promise<MemoryScope[]> {
  const rows = await st.h.op('memory.expiredSoftDeletedScopes').all(`SELECT DISTINCT user_id, agent_id FROM ${st.M} WHERE deleted_at IS NOT NULL AND deleted_at < $1 ORDER BY user_id, agent_id`, [cutoff]);
  return rows.map((r) => scopeFromRow(r.user_id, r.agent_id));
}

/** Retire a row (never one the person wrote by hand); whether it changed. */
async function retire(st: PgMemoryState, ...[scope, id, options]: Args<'retire'>): Promise<boolean> {
  const n = await st.h.op('memory.retire').run(
    `UPDATE ${st.M} SET status = 'retired', retired_at = $3, superseded_by = $4 WHERE id = $5 AND ${SCOPE} AND status <> 'retired' AND (source IS NULL OR source <> 'user_manual')`,
    [...sp(scope), options.now, options.supersededBy ?? null, id],
  );
  return n > 0;
}

/** The LIKE fallback: the newest rows containing any needle, scored by how many they contain. */
async function searchLike(st: PgMemoryState, ...[scope, needles, filter]: Args<'searchLike'>): Promise<MemoryScoredId[]> {
  const list = likeNeedles(needles);
  if (list.length === 0) return [];
  const params: unknown[] = [...sp(scope)];
  const where = rowFilter(filter, params);
  params.push(list.map((n) => `%${n.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const rows = await st.h.op('memory.searchLike').all(
    `SELECT id, content FROM ${st.M} WHERE ${where} AND lower(content) LIKE ANY($${params.length}::text[]) ORDER BY updated_at DESC, id DESC LIMIT ${LIKE_CANDIDATES}`,
    params,
  );
  return scoreLikeMatches(rows.map((r) => ({ id: Number(r.id), content: String(r.content) })), list, filter.limit);
}

/** The scope's health counts: rows grouped in one statement, edges and vectors counted. */
async function stats(st: PgMemoryState, scope: MemoryScope): Promise<MemoryStats> {
  const q = st.h.op('memory.stats');
  const grouped = await q.all(`SELECT category, status, deleted_at IS NOT NULL AS deleted, embedding_state, COUNT(*) AS n FROM ${st.M} WHERE ${SCOPE} GROUP BY 1, 2, 3, 4`, sp(scope));
  const edges = Number((await q.get(`SELECT COUNT(*) AS n FROM ${st.E} WHERE ${SCOPE}`, sp(scope)))?.n ?? 0);
  const vectors = Number((await q.get(`SELECT COUNT(*) AS n FROM ${st.V} WHERE ${SCOPE}`, sp(scope)))?.n ?? 0);
  const groups = grouped.map((g) => ({
    category: String(g.category), status: g.status as MemoryStatus, deleted: g.deleted === true, embeddingState: g.embedding_state as EmbeddingState, n: Number(g.n),
  }));
  return foldMemoryStats(groups, edges, vectors);
}

/** One statement on the pool; whether it changed a row. */
async function changed(st: PgMemoryState, operation: string, sql: string, params: readonly unknown[]): Promise<boolean> {
  return (await st.h.op(operation).run(sql, params)) > 0;
}

/** The Postgres memory domain: wiring over a {@link PgMemoryState} and the functions of this file and its siblings. */
export function createPgMemoryStorage(h: PgHandle, options: PgMemoryOptions): MemoryStorage {
  const st: PgMemoryState = {
    h, M: h.t('memories'), E: h.t('memory_edges'), V: h.t('memory_vectors'), fts: createPgMemoryFts(h),
    vectorAvailable: options.vectorAvailable, vectorUnavailableReason: options.vectorUnavailableReason,
  };
  const { M } = st;
  return {
    insert: (scope, row) => insertOne(st, h.op('memory.insert'), scope, row, true),
    insertMany: (scope, list) => insertMany(st, scope, list),
    async get(scope, id, options) {
      const row = await getRow(st, h.op('memory.get'), scope, id, options?.includeDeleted === true);
      return row === undefined ? undefined : toRecord(row);
    },
    async getMany(scope, ids) {
      if (ids.length === 0) return [];
      return (await h.op('memory.getMany').all(scopeRowsByIds(M, COLUMNS), [...sp(scope), [...ids]])).map(toRecord);
    },
    update: (...a) => updateRow(st, ...a),
    list: (...a) => listRows(st, ...a),
    count: (...a) => countRows(st, ...a),
    softDelete: (scope, id, at) => changed(st, 'memory.softDelete', `UPDATE ${M} SET deleted_at = $3 WHERE id = $4 AND ${SCOPE} AND deleted_at IS NULL`, [...sp(scope), at, id]),
    restore: (scope, id) => changed(st, 'memory.restore', `UPDATE ${M} SET deleted_at = NULL WHERE id = $3 AND ${SCOPE} AND deleted_at IS NOT NULL`, [...sp(scope), id]),
    hardDelete: (scope, id) => h.tx('memory.hardDelete', async (tx) => (await deleteIds(st, tx, scope, [id])) > 0),
    purgeSoftDeleted: (scope, cutoff) => purgeSoftDeleted(st, scope, cutoff),
    expiredSoftDeletedScopes: (cutoff) => expiredSoftDeletedScopes(st, cutoff),
    retire: (...a) => retire(st, ...a),
    setStatus: (scope, id, status) => changed(st, 'memory.setStatus', `UPDATE ${M} SET status = $3 WHERE id = $4 AND ${SCOPE} AND status <> 'retired'`, [...sp(scope), status, id]),
    searchText: (scope, query, filter) => st.fts.search(scope, query, filter),
    searchLike: (...a) => searchLike(st, ...a),
    vectorInfo: () => vectorInfo(st),
    upsertVectors: (scope, vectors) => upsertVectors(st, scope, vectors),
    vectorByContentHash: (scope, hash) => vectorByContentHash(st, scope, hash),
    searchVector: (scope, query, filter) => searchVector(st, scope, query, filter),
    async setEmbeddingState(scope, ids, state) {
      if (ids.length === 0) return;
      await h.op('memory.setEmbeddingState').run(`${byIdCte(M, 4)} UPDATE ${M} m SET embedding_state = $3 FROM by_id b WHERE m.id = b.id AND ${BY_ID_IN_SCOPE}`, [...sp(scope), state, [...ids]]);
    },
    listByEmbeddingState: async (scope, states, limit) =>
      (
        await h.op('memory.listByEmbeddingState').all(`SELECT ${COLUMNS} FROM ${M} WHERE ${SCOPE} AND ${VISIBLE} AND embedding_state = ANY($3::text[]) ORDER BY id ASC LIMIT $4`, [
          ...sp(scope), [...states], limit,
        ])
      ).map(toRecord),
    edgesForEntity: (...a) => edgesForEntity(st, ...a),
    edgesForMemories: (scope, ids) => edgesForMemories(st, scope, ids),
    stats: (scope) => stats(st, scope),
    textRows: (...a) => textRows(st, ...a),
    textChanges: (...a) => textChanges(st, ...a),
    loadTextIndex: (scope) => loadTextIndex(st, scope),
    saveTextIndex: (...a) => saveTextIndex(st, ...a),
    topEntities: (...a) => topEntities(st, ...a),
    appendConsolidationEvent: (...a) => appendConsolidationEvent(st, ...a),
    listConsolidationEvents: (...a) => listConsolidationEvents(st, ...a),
    profileList: (scope) => profileList(st, scope),
    profileGet: (scope, key) => profileGet(st, scope, key),
    profileSet: (...a) => profileSet(st, ...a),
    profileDelete: (scope, key) => profileDelete(st, scope, key),
  };
}
