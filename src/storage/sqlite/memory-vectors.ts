/**
 * Vectors of the SQLite memory domain. Two stores per row:
 *
 * - `memory_vectors`: the float vector (BLOB), used for exact cosine re-scoring and embedding reuse;
 * - `memories_vec` (sqlite-vec `vec0`, created on first use): the sign bits of the vector, partitioned by
 *   scope, searched by Hamming distance to pick candidates quickly.
 *
 * A KNN query takes the `k` nearest by Hamming distance within the scope (k ≥ 256, so a scope of up to 256
 * rows is searched exhaustively), then re-scores them by exact cosine similarity. The Hamming stage runs on
 * the connection's in-process bit cache (`memory-vector-cache.ts`, loaded from `memory_vectors.bits`) and
 * falls back to the `vec0` partition when a scope does not fit the cache budget. On this hardware a float
 * `vec0` scan of 100k × 384 costs ~80 ms, the `vec0` bit scan ~90 ms, the cached scan a few ms.
 */
import { MinaraError } from '../../errors/minara-error';
import {
  checkVectorBatch, cosine, floatsFromBytes, DEFAULT_MEMORY_STATUSES, queryDimensionMismatch, storedDimensionMismatch, topScored, vectorBytes, vectorCandidates,
} from '../memory-logic';
import type { MemoryLookupFilter, MemoryScope, MemoryScoredId, MemoryVectorInfo, MemoryVectorInput } from '../memory-types';
import type { SqliteHandle } from './handle';
import { SCOPE_WHERE, jsonList, scopeKey, scopeParams } from './memory-rows';
import { createVectorBitsCache, signBits } from './memory-vector-cache';

export { signBits };

/** What the SQLite vector part keeps: the connection and its in-process bit cache. */
interface VectorsState {
  readonly handle: SqliteHandle;
  readonly cache: ReturnType<typeof createVectorBitsCache>;
}

const prepare = (st: VectorsState, sql: string) => st.handle.prepare(sql);

/** Run a write that patches the cache; a failed transaction leaves the cache to reload. */
function writeVectors<T>(st: VectorsState, operation: string, fn: () => T): T {
  try {
    return st.handle.write(operation, fn);
  } catch (error) {
    st.cache.clear();
    throw error;
  }
}

/** The database's vector dimension (fixed at first use), if any vector was stored. */
function readDimension(st: VectorsState): number | undefined {
  const row = prepare(st, "SELECT value FROM memory_settings WHERE key = 'vector_dim'").get() as { value: string } | undefined;
  return row === undefined ? undefined : Number(row.value);
}

const vecTableExists = (st: VectorsState): boolean => prepare(st, "SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get() !== undefined;

/** Fix the dimension at first use (or check it), and create the `vec0` table when sqlite-vec is loaded. */
function ensureDimension(st: VectorsState, dim: number): void {
  const current = readDimension(st);
  if (current === undefined) {
    prepare(st, "INSERT INTO memory_settings (key, value) VALUES ('vector_dim', ?)").run(String(dim));
  } else if (current !== dim) {
    throw storedDimensionMismatch(dim, current);
  }
  if (st.handle.vectorAvailable && !vecTableExists(st)) {
    const bits = Math.ceil(dim / 8) * 8;
    st.handle.db.exec(`CREATE VIRTUAL TABLE memories_vec USING vec0(scope_key text partition key, user_id text, embedding bit[${bits}])`);
  }
}

function vectorInfo(st: VectorsState): MemoryVectorInfo {
  const dimensions = st.handle.read('memory.vectorInfo', () => readDimension(st));
  return {
    available: st.handle.vectorAvailable,
    ...(st.handle.vectorAvailable ? {} : { unavailableReason: 'sqlite-vec is not loaded in this connection' }),
    ...(dimensions === undefined ? {} : { dimensions }),
  };
}

/** Store float vector and sign bits of rows the scope owns whose content is still the one embedded; marks them embedded. */
function upsertVectors(st: VectorsState, scope: MemoryScope, vectors: readonly MemoryVectorInput[]): void {
  if (vectors.length === 0) return;
  const dim = checkVectorBatch(vectors, { available: st.handle.vectorAvailable, name: 'sqlite-vec' });
  writeVectors(st, 'memory.upsertVectors', () => {
    ensureDimension(st, dim);
    const key = scopeKey(scope);
    const [userId, agentId] = scopeParams(scope);
    const owned = prepare(st, `SELECT id FROM memories WHERE id = ? AND ${SCOPE_WHERE} AND content_hash = ?`);
    const putFloat = prepare(st, 'INSERT OR REPLACE INTO memory_vectors (memory_id, user_id, agent_id, content_hash, embedding, bits) VALUES (?, ?, ?, ?, ?, ?)');
    const put: Array<{ id: number; bits: Uint8Array }> = [];
    const delBits = prepare(st, 'DELETE FROM memories_vec WHERE rowid = ?');
    const putBits = prepare(st, 'INSERT INTO memories_vec (rowid, scope_key, user_id, embedding) VALUES (?, ?, ?, vec_bit(?))');
    const mark = prepare(st, `UPDATE memories SET embedding_state = 'embedded' WHERE id = ? AND ${SCOPE_WHERE}`);
    for (const v of vectors) {
      if (owned.get(v.id, userId, agentId, v.contentHash) === undefined) continue;
      const bits = signBits(v.vector);
      putFloat.run(v.id, userId, agentId, v.contentHash, vectorBytes(v.vector), bits);
      delBits.run(BigInt(v.id));
      putBits.run(BigInt(v.id), key, userId, bits);
      mark.run(v.id, userId, agentId);
      put.push({ id: v.id, bits });
    }
    if (put.length > 0) st.cache.changed(scope, put, []);
  });
}

function byContentHash(st: VectorsState, scope: MemoryScope, contentHash: string): Float32Array | undefined {
  const row = st.handle.read('memory.vectorByContentHash', () =>
    prepare(st, `SELECT embedding FROM memory_vectors WHERE ${SCOPE_WHERE} AND content_hash = ? LIMIT 1`).get(...scopeParams(scope), contentHash),
  ) as { embedding: Buffer } | undefined;
  return row === undefined ? undefined : floatsFromBytes(row.embedding);
}

/** The `k` nearest ids by Hamming distance: the bit cache, or the scope's `vec0` partition when it does not fit. */
function nearestCandidates(st: VectorsState, scope: MemoryScope, queryBits: Uint8Array, k: number): number[] {
  const cached = st.cache.nearest(scope, queryBits, k);
  if (cached !== undefined) return cached;
  const rows = prepare(st, 'SELECT rowid AS id FROM memories_vec WHERE embedding MATCH vec_bit(?) AND k = ? AND scope_key = ? AND user_id = ?').all(
    queryBits,
    k,
    scopeKey(scope),
    scope.userId,
  ) as Array<{ id: number | bigint }>;
  return rows.map((c) => Number(c.id));
}

/** KNN within the scope and filter: Hamming candidates re-scored by exact cosine. */
function searchVectors(st: VectorsState, scope: MemoryScope, query: Float32Array, filter: MemoryLookupFilter): MemoryScoredId[] {
  if (!st.handle.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.searchVector: the vector index (sqlite-vec) is not available');
  return st.handle.read('memory.searchVector', () => {
    const dim = readDimension(st);
    if (dim === undefined || !vecTableExists(st)) return [];
    if (query.length !== dim) throw queryDimensionMismatch(query.length, dim);
    const [userId, agentId] = scopeParams(scope);
    const candidates = nearestCandidates(st, scope, signBits(query), vectorCandidates(filter.limit));
    if (candidates.length === 0) return [];
    const rows = prepare(
      st,
      `SELECT v.memory_id AS id, v.embedding AS embedding FROM memory_vectors v CROSS JOIN memories m ON m.id = v.memory_id
       WHERE v.memory_id IN (SELECT value FROM json_each(?)) AND v.user_id = ? AND v.agent_id IS ?
         AND m.user_id = ? AND m.agent_id IS ? AND m.deleted_at IS NULL
         AND m.status IN (SELECT value FROM json_each(?))
         AND (? IS NULL OR m.category IN (SELECT value FROM json_each(?)))
         AND m.id NOT IN (SELECT value FROM json_each(?))`,
    ).all(
      jsonList(candidates),
      userId,
      agentId,
      userId,
      agentId,
      jsonList(filter.statuses ?? DEFAULT_MEMORY_STATUSES),
      filter.categories !== undefined && filter.categories.length > 0 ? 1 : null,
      jsonList(filter.categories ?? []),
      jsonList(filter.excludeIds ?? []),
    ) as Array<{ id: number; embedding: Buffer }>;
    return topScored(
      rows.map((r) => ({ id: r.id, score: cosine(query, floatsFromBytes(r.embedding)) })),
      filter.limit,
    );
  });
}

/**
 * Record that the vectors of these rows of the scope are gone (called inside the transaction that deleted
 * their `memory_vectors` rows): removes their `vec0` bits and bumps the scope's generation.
 */
function removedVectors(st: VectorsState, scope: MemoryScope, ids: readonly number[]): void {
  if (ids.length === 0) return;
  st.cache.changed(scope, [], ids);
  if (!st.handle.vectorAvailable || !vecTableExists(st)) return;
  const del = prepare(st, 'DELETE FROM memories_vec WHERE rowid = ?');
  for (const id of ids) del.run(BigInt(id));
}

/** The vector operations of the SQLite memory domain: wiring over a {@link VectorsState}. */
export function createSqliteMemoryVectors(handle: SqliteHandle) {
  const st: VectorsState = { handle, cache: createVectorBitsCache(handle) };
  return {
    info: (): MemoryVectorInfo => vectorInfo(st),
    upsert: (scope: MemoryScope, vectors: readonly MemoryVectorInput[]): void => upsertVectors(st, scope, vectors),
    byContentHash: (scope: MemoryScope, contentHash: string): Float32Array | undefined => byContentHash(st, scope, contentHash),
    search: (scope: MemoryScope, query: Float32Array, filter: MemoryLookupFilter): MemoryScoredId[] => searchVectors(st, scope, query, filter),
    /** See {@link removedVectors}. */
    removed: (scope: MemoryScope, ids: readonly number[]): void => removedVectors(st, scope, ids),
    /** Forget the cache (after a failed transaction that may have patched it). */
    resetCache: (): void => st.cache.clear(),
  };
}
