/**
 * The Postgres memory domain: scoped rows with their tsvector (see `memory-fts.ts`), edges, consolidation
 * events, the user profile and vectors. Every statement filters on `user_id` and the scope's exact `agent_id`
 * (`IS NOT DISTINCT FROM`, so a scope without an agent sees only user-level rows); writes that touch several
 * tables (row, index statistics, edges, vectors) are one transaction.
 *
 * Vectors: the float32 vector is kept as BYTEA (embedding reuse, exact cosine re-scoring). With pgvector
 * (`CREATE EXTENSION vector` succeeded at open) a `vector` column mirrors it and nearest neighbours come
 * from `<=>` (cosine distance) inside the scope; without it the domain reports `available: false` and memory
 * search degrades to full text, exactly as the SQLite engine without sqlite-vec.
 */
import { MinaraError } from '../../errors/minara-error';
import type {
  ConsolidationEvent, EmbeddingState, MemoryEdgeInput, MemoryEdgeRecord, MemoryEntityCount, MemoryRecord, MemoryScope, MemoryStatus, MemoryStorage, MemoryVectorInfo,
  NewMemoryRow, ProfileEntry,
} from '../memory-types';
import type { PgHandle, PgRow, PgTx } from './handle';
import { bumpFtsStats, createPgMemoryFts, docSize, ftsStatsUpsert, rowFilter, tsvectorLiteral } from './memory-fts';

const COLUMNS = 'id, user_id, agent_id, category, content, metadata, source, status, content_hash, embedding_state, deleted_at, retired_at, superseded_by, created_at, updated_at';
const SCOPE = 'user_id = $1 AND agent_id IS NOT DISTINCT FROM $2';
const VISIBLE = "deleted_at IS NULL AND status <> 'retired'";
const sp = (scope: MemoryScope): [string, string | null] => [scope.userId, scope.agentId ?? null];

function parseMetadata(json: unknown): Readonly<Record<string, unknown>> | undefined {
  if (typeof json !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function toRecord(r: PgRow): MemoryRecord {
  const metadata = parseMetadata(r.metadata);
  return {
    id: Number(r.id), userId: String(r.user_id), ...(r.agent_id == null ? {} : { agentId: String(r.agent_id) }), category: String(r.category), content: String(r.content),
    ...(metadata === undefined ? {} : { metadata }), ...(r.source == null ? {} : { source: String(r.source) }), status: r.status as MemoryStatus,
    contentHash: String(r.content_hash), embeddingState: r.embedding_state as EmbeddingState, ...(r.deleted_at == null ? {} : { deletedAt: String(r.deleted_at) }),
    ...(r.retired_at == null ? {} : { retiredAt: String(r.retired_at) }), ...(r.superseded_by == null ? {} : { supersededBy: Number(r.superseded_by) }),
    createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

const edgeRecord = (r: PgRow): MemoryEdgeRecord => ({
  memoryId: Number(r.src_id), entityKind: String(r.dst_entity_kind), entityKey: String(r.dst_entity_key), edgeType: String(r.edge_type), weight: Number(r.weight), createdAt: String(r.created_at),
});

/** Cosine similarity (0 when either vector is zero). */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function toFloat32(value: unknown): Float32Array {
  const src = value instanceof Uint8Array ? value : new Uint8Array(0);
  const copy = new Uint8Array(src.byteLength);
  copy.set(src);
  return new Float32Array(copy.buffer, 0, copy.byteLength >> 2);
}

const vectorLiteral = (v: Float32Array) => `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

/** Options of {@link createPgMemoryStorage}. */
export interface PgMemoryOptions {
  /** pgvector is installed in this database. */
  readonly vectorAvailable: boolean;
  readonly vectorUnavailableReason?: string | undefined;
}

/** The Postgres memory domain. */
const pgProfileEntry = (r: Record<string, unknown>): ProfileEntry => ({ key: String(r['key']), value: String(r['value']), updatedAt: String(r['updated_at']), setBy: r['set_by'] === 'agent' ? 'agent' : 'user' });

export function createPgMemoryStorage(h: PgHandle, options: PgMemoryOptions): MemoryStorage {
  const M = h.t('memories');
  const E = h.t('memory_edges');
  const V = h.t('memory_vectors');
  const fts = createPgMemoryFts(h);

  const insertEdges = async (tx: PgTx, scope: MemoryScope, memoryId: number, edges: readonly MemoryEdgeInput[], now: string) => {
    if (edges.length === 0) return;
    await tx.run(
      `INSERT INTO ${E} (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
       SELECT $1, $2, 'memories', $3, k, key, t, w, $4 FROM unnest($5::text[], $6::text[], $7::text[], $8::float8[]) AS x(k, key, t, w)
       ON CONFLICT DO NOTHING`,
      [...sp(scope), memoryId, now, edges.map((e) => e.entityKind), edges.map((e) => e.entityKey), edges.map((e) => e.edgeType), edges.map((e) => e.weight)],
    );
  };

  /**
   * Insert one row, its edges and (unless `withStats` is false) its statistics change as ONE statement
   * (data-modifying CTEs): atomic on its own, one round trip when not inside a transaction.
   */
  const insertOne = async (q: PgTx, scope: MemoryScope, row: NewMemoryRow, withStats: boolean): Promise<MemoryRecord> => {
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
        ...sp(scope), row.category, row.content, row.searchText, tsvectorLiteral(scope, row.searchText), size, row.metadata === undefined ? null : JSON.stringify(row.metadata),
        row.source ?? null, row.status, row.contentHash, row.embeddingState, row.now,
        edges.map((e) => e.entityKind), edges.map((e) => e.entityKey), edges.map((e) => e.edgeType), edges.map((e) => e.weight),
        ...(withStats ? [scope.agentId ?? ''] : []),
      ],
    );
    const id = Number(r!.id);
    return {
      id, userId: scope.userId, ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }), category: row.category, content: row.content,
      ...(row.metadata === undefined ? {} : { metadata: row.metadata }), ...(row.source === undefined ? {} : { source: row.source }), status: row.status,
      contentHash: row.contentHash, embeddingState: row.embeddingState, createdAt: row.now, updatedAt: row.now,
    };
  };

  const deleteIds = async (tx: PgTx, scope: MemoryScope, ids: readonly number[]): Promise<number> => {
    if (ids.length === 0) return 0;
    const gone = await tx.all(`DELETE FROM ${M} WHERE id = ANY($3::bigint[]) AND ${SCOPE} RETURNING id, doc_size`, [...sp(scope), [...ids]]);
    if (gone.length === 0) return 0;
    await tx.run(`DELETE FROM ${E} WHERE src_table = 'memories' AND src_id = ANY($3::bigint[]) AND ${SCOPE}`, [...sp(scope), gone.map((g) => Number(g.id))]);
    await bumpFtsStats(tx, h, scope, -gone.length, -gone.reduce((s, g) => s + Number(g.doc_size), 0));
    return gone.length;
  };

  const getRow = (q: PgTx, scope: MemoryScope, id: number, includeDeleted: boolean) =>
    q.get(`SELECT ${COLUMNS} FROM ${M} WHERE id = $3 AND ${SCOPE}${includeDeleted ? '' : ' AND deleted_at IS NULL'}`, [...sp(scope), id]);

  const readDimension = async (q: PgTx): Promise<number | undefined> => {
    const r = await q.get(`SELECT value FROM ${h.t('memory_settings')} WHERE key = 'vector_dim'`);
    return r === undefined ? undefined : Number(r.value);
  };

  const eventRecord = (r: PgRow): ConsolidationEvent => ({
    id: Number(r.id), pass: r.pass as 'dedup' | 'llm', decision: r.decision as ConsolidationEvent['decision'], factId: Number(r.fact_id),
    ...(r.other_id == null ? {} : { otherId: Number(r.other_id) }), reason: String(r.reason), ...(r.model == null ? {} : { model: String(r.model) }),
    ...(r.model_verdict == null ? {} : { modelVerdict: String(r.model_verdict) }), createdAt: String(r.created_at),
  });

  return {
    async insert(scope, row) {
      return insertOne(h.op('memory.insert'), scope, row, true);
    },

    async insertMany(scope, list) {
      if (list.length === 0) return [];
      return h.tx('memory.insertMany', async (tx) => {
        // Ids drawn up front (ascending), then one INSERT for the rows and one for all their edges.
        const ids = (await tx.all(`SELECT nextval(pg_get_serial_sequence($1, 'id')) AS id FROM generate_series(1, $2::int)`, [M, list.length]))
          .map((r) => Number(r.id))
          .sort((a, b) => a - b);
        const col = <V>(f: (row: NewMemoryRow) => V) => list.map(f);
        await tx.run(
          `INSERT INTO ${M} (id, user_id, agent_id, category, content, search_text, search_tsv, doc_size, metadata, source, status, content_hash, embedding_state, created_at, updated_at)
           OVERRIDING SYSTEM VALUE
           SELECT x.id, $1, $2, x.category, x.content, x.search_text, x.tsv::tsvector, x.size, x.metadata, x.source, x.status, x.hash, x.state, x.now, x.now
           FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
             AS x(id, category, content, search_text, tsv, size, metadata, source, status, hash, state, now)`,
          [
            ...sp(scope), ids, col((r) => r.category), col((r) => r.content), col((r) => r.searchText), col((r) => tsvectorLiteral(scope, r.searchText)),
            col((r) => docSize(r.searchText, r.category)), col((r) => (r.metadata === undefined ? null : JSON.stringify(r.metadata))), col((r) => r.source ?? null),
            col((r) => r.status), col((r) => r.contentHash), col((r) => r.embeddingState), col((r) => r.now),
          ],
        );
        const edges = list.flatMap((row, i) => row.edges.map((e) => ({ id: ids[i] as number, e, now: row.now })));
        if (edges.length > 0) {
          await tx.run(
            `INSERT INTO ${E} (user_id, agent_id, src_table, src_id, dst_entity_kind, dst_entity_key, edge_type, weight, created_at)
             SELECT $1, $2, 'memories', x.id, x.k, x.key, x.t, x.w, x.now FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[]) AS x(id, k, key, t, w, now)
             ON CONFLICT DO NOTHING`,
            [...sp(scope), edges.map((x) => x.id), edges.map((x) => x.e.entityKind), edges.map((x) => x.e.entityKey), edges.map((x) => x.e.edgeType), edges.map((x) => x.e.weight), edges.map((x) => x.now)],
          );
        }
        const out: MemoryRecord[] = list.map((row, i) => ({
          id: ids[i] as number, userId: scope.userId, ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }), category: row.category, content: row.content,
          ...(row.metadata === undefined ? {} : { metadata: row.metadata }), ...(row.source === undefined ? {} : { source: row.source }), status: row.status,
          contentHash: row.contentHash, embeddingState: row.embeddingState, createdAt: row.now, updatedAt: row.now,
        }));
        await bumpFtsStats(tx, h, scope, list.length, list.reduce((s, r) => s + docSize(r.searchText, r.category), 0));
        return out;
      });
    },

    async get(scope, id, options) {
      const row = await getRow(h.op('memory.get'), scope, id, options?.includeDeleted === true);
      return row === undefined ? undefined : toRecord(row);
    },

    async getMany(scope, ids) {
      if (ids.length === 0) return [];
      return (await h.op('memory.getMany').all(`SELECT ${COLUMNS} FROM ${M} WHERE id = ANY($3::bigint[]) AND ${SCOPE}`, [...sp(scope), [...ids]])).map(toRecord);
    },

    async update(scope, id, patch) {
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
          await insertEdges(tx, scope, id, patch.edges, patch.now);
        }
        return toRecord(next!);
      });
    },

    async list(scope, query) {
      const order = query.order === 'created_asc' ? 'created_at ASC, id ASC' : 'updated_at DESC, id DESC';
      const params: unknown[] = [...sp(scope), query.includeDeleted === true, [...(query.statuses ?? ['active', 'pending'])]];
      let sql = `SELECT ${COLUMNS} FROM ${M} WHERE ${SCOPE} AND ($3 OR deleted_at IS NULL) AND status = ANY($4::text[])`;
      if ((query.categories ?? []).length > 0) (params.push([...(query.categories ?? [])]), (sql += ` AND category = ANY($${params.length}::text[])`));
      if (query.source !== undefined) (params.push(query.source), (sql += ` AND source = $${params.length}`));
      if ((query.excludeSources ?? []).length > 0) (params.push([...(query.excludeSources ?? [])]), (sql += ` AND (source IS NULL OR NOT (source = ANY($${params.length}::text[])))`));
      if (query.contentHash !== undefined) (params.push(query.contentHash), (sql += ` AND content_hash = $${params.length}`));
      params.push(query.limit);
      return (await h.op('memory.list').all(`${sql} ORDER BY ${order} LIMIT $${params.length}`, params)).map(toRecord);
    },

    async count(scope, query) {
      const cats = query?.categories ?? [];
      const r = await h.op('memory.count').get(
        `SELECT COUNT(*) AS n FROM ${M} WHERE ${SCOPE} AND ${VISIBLE}${cats.length > 0 ? ' AND category = ANY($3::text[])' : ''}`,
        cats.length > 0 ? [...sp(scope), [...cats]] : sp(scope),
      );
      return Number(r?.n ?? 0);
    },

    async softDelete(scope, id, at) {
      return (await h.op('memory.softDelete').run(`UPDATE ${M} SET deleted_at = $3 WHERE id = $4 AND ${SCOPE} AND deleted_at IS NULL`, [...sp(scope), at, id])) > 0;
    },

    async restore(scope, id) {
      return (await h.op('memory.restore').run(`UPDATE ${M} SET deleted_at = NULL WHERE id = $3 AND ${SCOPE} AND deleted_at IS NOT NULL`, [...sp(scope), id])) > 0;
    },

    async hardDelete(scope, id) {
      return h.tx('memory.hardDelete', async (tx) => (await deleteIds(tx, scope, [id])) > 0);
    },

    async purgeSoftDeleted(scope, cutoff) {
      return h.tx('memory.purgeSoftDeleted', async (tx) => {
        const ids = (await tx.all(`SELECT id FROM ${M} WHERE ${SCOPE} AND deleted_at IS NOT NULL AND deleted_at < $3`, [...sp(scope), cutoff])).map((r) => Number(r.id));
        return deleteIds(tx, scope, ids);
      });
    },

    async expiredSoftDeletedScopes(cutoff) {
      const rows = await h.op('memory.expiredSoftDeletedScopes').all(`SELECT DISTINCT user_id, agent_id FROM ${M} WHERE deleted_at IS NOT NULL AND deleted_at < $1 ORDER BY user_id, agent_id`, [cutoff]);
      return rows.map((r) => (r.agent_id === null || r.agent_id === undefined ? { userId: String(r.user_id) } : { userId: String(r.user_id), agentId: String(r.agent_id) }));
    },

    async retire(scope, id, options) {
      const n = await h.op('memory.retire').run(
        `UPDATE ${M} SET status = 'retired', retired_at = $3, superseded_by = $4 WHERE id = $5 AND ${SCOPE} AND status <> 'retired' AND (source IS NULL OR source <> 'user_manual')`,
        [...sp(scope), options.now, options.supersededBy ?? null, id],
      );
      return n > 0;
    },

    async setStatus(scope, id, status) {
      return (await h.op('memory.setStatus').run(`UPDATE ${M} SET status = $3 WHERE id = $4 AND ${SCOPE} AND status <> 'retired'`, [...sp(scope), status, id])) > 0;
    },

    async searchText(scope, query, filter) {
      return fts.search(scope, query, filter);
    },

    async searchLike(scope, needles, filter) {
      const list = needles.map((n) => n.toLowerCase()).filter((n) => n.length > 0).slice(0, 16);
      if (list.length === 0) return [];
      const params: unknown[] = [...sp(scope)];
      const where = rowFilter(filter, params);
      params.push(list.map((n) => `%${n.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
      const rows = await h.op('memory.searchLike').all(
        `SELECT id, content FROM ${M} WHERE ${where} AND lower(content) LIKE ANY($${params.length}::text[]) ORDER BY updated_at DESC, id DESC LIMIT 500`,
        params,
      );
      return rows
        .map((r) => {
          const lower = String(r.content).toLowerCase();
          return { id: Number(r.id), score: list.filter((n) => lower.includes(n)).length };
        })
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, filter.limit);
    },

    async vectorInfo(): Promise<MemoryVectorInfo> {
      const dimensions = await readDimension(h.op('memory.vectorInfo'));
      return {
        available: options.vectorAvailable,
        ...(options.vectorAvailable ? {} : { unavailableReason: options.vectorUnavailableReason ?? 'pgvector is not installed in this database' }),
        ...(dimensions === undefined ? {} : { dimensions }),
      };
    },

    async upsertVectors(scope, vectors) {
      if (vectors.length === 0) return;
      if (!options.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.upsertVectors: the vector index (pgvector) is not available');
      const dim = (vectors[0] as { vector: Float32Array }).vector.length;
      for (const v of vectors) {
        if (v.vector.length !== dim || dim === 0) throw new MinaraError('MEMORY_INVALID', `memory.upsertVectors: every vector must have ${dim} (> 0) dimensions`);
      }
      await h.tx('memory.upsertVectors', async (tx) => {
        await tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.vector_dim:${h.schemaName}`]);
        const current = await readDimension(tx);
        if (current === undefined) await tx.run(`INSERT INTO ${h.t('memory_settings')} (key, value) VALUES ('vector_dim', $1)`, [String(dim)]);
        else if (current !== dim) {
          throw new MinaraError('MEMORY_INVALID', `embedding has ${dim} dimensions but this database's memory vectors have ${current} (fixed at first use); use the same embedding model or a new database`);
        }
        for (const v of vectors) {
          const owned = await tx.get(`SELECT 1 AS x FROM ${M} WHERE id = $3 AND ${SCOPE} AND content_hash = $4`, [...sp(scope), v.id, v.contentHash]);
          if (owned === undefined) continue;
          const bytes = Buffer.from(v.vector.buffer, v.vector.byteOffset, v.vector.byteLength);
          await tx.run(
            `INSERT INTO ${V} (memory_id, user_id, agent_id, content_hash, embedding, embedding_v) VALUES ($3, $1, $2, $4, $5, $6::vector)
             ON CONFLICT (memory_id) DO UPDATE SET content_hash = excluded.content_hash, embedding = excluded.embedding, embedding_v = excluded.embedding_v`,
            [...sp(scope), v.id, v.contentHash, bytes, vectorLiteral(v.vector)],
          );
          await tx.run(`UPDATE ${M} SET embedding_state = 'embedded' WHERE id = $3 AND ${SCOPE}`, [...sp(scope), v.id]);
        }
      });
    },

    async vectorByContentHash(scope, contentHash) {
      const r = await h.op('memory.vectorByContentHash').get(`SELECT embedding FROM ${V} WHERE ${SCOPE} AND content_hash = $3 LIMIT 1`, [...sp(scope), contentHash]);
      return r === undefined ? undefined : toFloat32(r.embedding);
    },

    async searchVector(scope, query, filter) {
      if (!options.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.searchVector: the vector index (pgvector) is not available');
      const q = h.op('memory.searchVector');
      const dim = await readDimension(q);
      if (dim === undefined) return [];
      if (query.length !== dim) throw new MinaraError('MEMORY_INVALID', `query embedding has ${query.length} dimensions but stored memory vectors have ${dim}`);
      const params: unknown[] = [...sp(scope)];
      const where = rowFilter(filter, params, 'm');
      params.push(vectorLiteral(query), Math.min(4096, Math.max(256, filter.limit * 8)));
      const rows = await q.all(
        `SELECT v.memory_id AS id, v.embedding FROM ${V} v JOIN ${M} m ON m.id = v.memory_id
         WHERE v.user_id = $1 AND v.agent_id IS NOT DISTINCT FROM $2 AND ${where}
         ORDER BY v.embedding_v <=> $${params.length - 1}::vector LIMIT $${params.length}`,
        params,
      );
      return rows
        .map((r) => ({ id: Number(r.id), score: cosine(query, toFloat32(r.embedding)) }))
        .sort((a, b) => b.score - a.score || b.id - a.id)
        .slice(0, filter.limit);
    },

    async setEmbeddingState(scope, ids, state) {
      if (ids.length === 0) return;
      await h.op('memory.setEmbeddingState').run(`UPDATE ${M} SET embedding_state = $3 WHERE id = ANY($4::bigint[]) AND ${SCOPE}`, [...sp(scope), state, [...ids]]);
    },

    async listByEmbeddingState(scope, states, limit) {
      const rows = await h.op('memory.listByEmbeddingState').all(
        `SELECT ${COLUMNS} FROM ${M} WHERE ${SCOPE} AND ${VISIBLE} AND embedding_state = ANY($3::text[]) ORDER BY id ASC LIMIT $4`,
        [...sp(scope), [...states], limit],
      );
      return rows.map(toRecord);
    },

    async edgesForEntity(scope, entityKey, options) {
      const rows = await h.op('memory.edgesForEntity').all(
        `SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
         FROM ${E} e JOIN ${M} m ON m.id = e.src_id
         WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2 AND e.src_table = 'memories' AND e.dst_entity_key = $3
           AND ($4::text IS NULL OR e.dst_entity_kind = $4) AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
         ORDER BY m.updated_at DESC, m.id DESC, e.id ASC LIMIT $5`,
        [...sp(scope), entityKey, options.entityKind ?? null, options.limit],
      );
      return rows.map(edgeRecord);
    },

    async edgesForMemories(scope, ids) {
      if (ids.length === 0) return [];
      const rows = await h.op('memory.edgesForMemories').all(
        `SELECT e.src_id, e.dst_entity_kind, e.dst_entity_key, e.edge_type, e.weight, e.created_at
         FROM ${E} e JOIN ${M} m ON m.id = e.src_id
         WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2 AND e.src_table = 'memories' AND e.src_id = ANY($3::bigint[])
           AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
         ORDER BY e.src_id ASC, e.id ASC`,
        [...sp(scope), [...ids]],
      );
      return rows.map(edgeRecord);
    },

    async stats(scope) {
      const q = h.op('memory.stats');
      const grouped = await q.all(
        `SELECT category, status, deleted_at IS NOT NULL AS deleted, embedding_state, COUNT(*) AS n FROM ${M} WHERE ${SCOPE} GROUP BY 1, 2, 3, 4`,
        sp(scope),
      );
      const rows = new Map<string, { category: string; status: MemoryStatus; count: number }>();
      const embedding: Record<EmbeddingState, number> = { pending: 0, embedded: 0, failed: 0, skipped: 0 };
      let deleted = 0;
      for (const g of grouped) {
        const n = Number(g.n);
        if (g.deleted === true) {
          deleted += n;
          continue;
        }
        embedding[g.embedding_state as EmbeddingState] += n;
        const key = `${String(g.category)}\u0000${String(g.status)}`;
        const row = rows.get(key) ?? { category: String(g.category), status: g.status as MemoryStatus, count: 0 };
        row.count += n;
        rows.set(key, row);
      }
      const edges = Number((await q.get(`SELECT COUNT(*) AS n FROM ${E} WHERE ${SCOPE}`, sp(scope)))?.n ?? 0);
      const vectors = Number((await q.get(`SELECT COUNT(*) AS n FROM ${V} WHERE ${SCOPE}`, sp(scope)))?.n ?? 0);
      const sorted = [...rows.values()].sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.status < b.status ? -1 : a.status > b.status ? 1 : 0));
      return { rows: sorted, deleted, embedding, edges, vectors };
    },

    async textRows(scope, query) {
      const q = h.op('memory.textRows');
      const out = (rows: PgRow[]) => rows.map((r) => ({ id: Number(r.id), content: String(r.content), category: String(r.category) }));
      if (query?.ids !== undefined) {
        if (query.ids.length === 0) return [];
        return out(await q.all(`SELECT id, content, category FROM ${M} WHERE id = ANY($3::bigint[]) AND ${SCOPE} ORDER BY id`, [...sp(scope), [...query.ids]]));
      }
      // Spelled so the (user_id, agent_id, id) index bounds all three and gives the order (`IS NOT DISTINCT FROM` bounds
      // only user_id: every lookup's catch-up walked all of the tenant's index entries, ~600 pages at 100k rows).
      const scoped = scope.agentId === undefined ? 'user_id = $1 AND agent_id IS NULL AND $2::text IS NULL' : 'user_id = $1 AND agent_id = $2';
      if (query?.afterId !== undefined && query.afterId > 0) {
        return out(await q.all(`SELECT id, content, category FROM ${M} WHERE ${scoped} AND id > $3 ORDER BY user_id, agent_id, id`, [...sp(scope), query.afterId]));
      }
      return out(await q.all(`SELECT id, content, category FROM ${M} WHERE ${scoped} ORDER BY user_id, agent_id, id`, sp(scope)));
    },

    async textChanges(scope, since) {
      // The position is the oldest transaction still running: whatever commits later, whatever its id, is at or
      // after it and comes back next time (applying a change twice is harmless).
      const q = h.op('memory.textChanges');
      const now = await q.get(
        `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin, (SELECT pruned_before FROM ${h.t('memory_text_log_state')} WHERE id = 1) AS pruned`,
      );
      const seq = Number(now!.xmin);
      if (since >= Number.MAX_SAFE_INTEGER) return { seq, reset: false, ids: [] };
      if (since < Number(now!.pruned)) return { seq, reset: true, ids: [] };
      const rows = await q.all(`SELECT memory_id FROM ${h.t('memory_text_log')} WHERE user_id = $1 AND agent_key = $2 AND xid >= $3`, [scope.userId, scope.agentId ?? '', since]);
      return { seq, reset: false, ids: rows.map((r) => Number(r.memory_id)) };
    },

    async loadTextIndex(scope) {
      const row = await h.op('memory.loadTextIndex').get(`SELECT data FROM ${h.t('memory_text_index')} WHERE user_id = $1 AND agent_key = $2`, [scope.userId, scope.agentId ?? '']);
      const data = row?.data;
      return data instanceof Uint8Array ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : undefined;
    },

    async saveTextIndex(scope, snapshot) {
      return h.tx('memory.saveTextIndex', async (tx) => {
        // The lock the delete trigger takes too (schema memory v3), then: no change since the snapshot's position
        // to a row it holds, then the upsert.
        await tx.run("SELECT pg_advisory_xact_lock(hashtextextended('minara.memory_text_index:' || length($1::text) || ':' || $1::text || $2::text, 0))", [scope.userId, scope.agentId ?? '']);
        const state = await tx.get(`SELECT pruned_before FROM ${h.t('memory_text_log_state')} WHERE id = 1`);
        if (snapshot.seq < Number(state?.pruned_before ?? 0)) return false;
        const changed = await tx.get(`SELECT 1 AS x FROM ${h.t('memory_text_log')} WHERE user_id = $1 AND agent_key = $2 AND xid >= $3 AND memory_id <= $4 LIMIT 1`, [
          scope.userId,
          scope.agentId ?? '',
          snapshot.seq,
          snapshot.maxId,
        ]);
        if (changed !== undefined) return false;
        await tx.run(
          `INSERT INTO ${h.t('memory_text_index')} (user_id, agent_key, data) VALUES ($1, $2, $3) ON CONFLICT (user_id, agent_key) DO UPDATE SET data = EXCLUDED.data`,
          [scope.userId, scope.agentId ?? '', Buffer.from(snapshot.data.buffer, snapshot.data.byteOffset, snapshot.data.byteLength)],
        );
        return true;
      });
    },

    async topEntities(scope, options) {
      const rows = await h.op('memory.topEntities').all(
        `SELECT e.dst_entity_kind AS kind, e.dst_entity_key AS key, COUNT(DISTINCT e.src_id) AS n, array_agg(e.edge_type) AS types
         FROM ${E} e JOIN ${M} m ON m.id = e.src_id
         WHERE e.user_id = $1 AND e.agent_id IS NOT DISTINCT FROM $2 AND e.src_table = 'memories'
           AND (CASE WHEN $3::text IS NULL THEN e.dst_entity_kind <> 'ticker_pair' ELSE e.dst_entity_kind = $3 END)
           AND m.user_id = $1 AND m.agent_id IS NOT DISTINCT FROM $2 AND m.deleted_at IS NULL AND m.status <> 'retired'
         GROUP BY e.dst_entity_kind, e.dst_entity_key
         ORDER BY n DESC, e.dst_entity_key COLLATE "C" ASC, e.dst_entity_kind COLLATE "C" ASC LIMIT $4`,
        [...sp(scope), options.entityKind ?? null, options.limit],
      );
      return rows.map((r): MemoryEntityCount => {
        const edgeTypes: Record<string, number> = {};
        const types = Array.isArray(r.types) ? (r.types as string[]) : parsePgArray(String(r.types));
        for (const t of types) edgeTypes[t] = (edgeTypes[t] ?? 0) + 1;
        return { entityKind: String(r.kind), entityKey: String(r.key), memoryCount: Number(r.n), edgeTypes };
      });
    },

    async appendConsolidationEvent(scope, event) {
      const r = await h.op('memory.appendConsolidationEvent').get(
        `INSERT INTO ${h.t('memory_consolidation_events')} (user_id, agent_id, pass, decision, fact_id, other_id, reason, model, model_verdict, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [...sp(scope), event.pass, event.decision, event.factId, event.otherId ?? null, event.reason, event.model ?? null, event.modelVerdict ?? null, event.now],
      );
      const { now, ...rest } = event;
      return { ...rest, id: Number(r!.id), createdAt: now };
    },

    async listConsolidationEvents(scope, options) {
      const rows = await h.op('memory.listConsolidationEvents').all(
        `SELECT * FROM ${h.t('memory_consolidation_events')} WHERE ${SCOPE} AND ($3::bigint IS NULL OR fact_id = $3 OR other_id = $3) ORDER BY id DESC LIMIT $4`,
        [...sp(scope), options.factId ?? null, options.limit],
      );
      return rows.map(eventRecord);
    },

    async profileList(scope) {
      const rows = await h.op('memory.profileList').all(`SELECT key, value, updated_at, set_by FROM ${h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 ORDER BY id ASC`, [
        scope.userId, scope.agentId ?? '',
      ]);
      return rows.map(pgProfileEntry);
    },

    async profileGet(scope, key) {
      const r = await h.op('memory.profileGet').get(`SELECT key, value, updated_at, set_by FROM ${h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 AND key = $3`, [
        scope.userId, scope.agentId ?? '', key,
      ]);
      return r === undefined ? undefined : pgProfileEntry(r);
    },

    async profileSet(scope, key, value, now, setBy = 'user') {
      // The person's value wins: an agent write does not replace an entry the person set (one statement, no race).
      const r = await h.op('memory.profileSet').get(
        `INSERT INTO ${h.t('user_profile')} AS p (user_id, agent_key, key, value, created_at, updated_at, set_by) VALUES ($1, $2, $3, $4, $5, $5, $6)
         ON CONFLICT (user_id, agent_key, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, set_by = excluded.set_by
         WHERE NOT (p.set_by = 'user' AND excluded.set_by = 'agent')
         RETURNING key, value, updated_at, set_by`,
        [scope.userId, scope.agentId ?? '', key, value, now, setBy],
      );
      if (r !== undefined) return pgProfileEntry(r);
      const kept = await h.op('memory.profileSet').get(`SELECT key, value, updated_at, set_by FROM ${h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 AND key = $3`, [
        scope.userId, scope.agentId ?? '', key,
      ]);
      if (kept === undefined) throw new MinaraError('STORAGE_ERROR', `memory.profileSet: profile entry ${JSON.stringify(key)} vanished during the write`);
      return pgProfileEntry(kept);
    },

    async profileDelete(scope, key) {
      return (await h.op('memory.profileDelete').run(`DELETE FROM ${h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 AND key = $3`, [scope.userId, scope.agentId ?? '', key])) > 0;
    },
  };
}

/** `{a,b}` → `['a', 'b']` (a driver that returns arrays as text). */
function parsePgArray(text: string): string[] {
  const inner = text.replace(/^\{|\}$/g, '');
  if (inner.length === 0) return [];
  return inner.split(',').map((s) => s.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1'));
}
