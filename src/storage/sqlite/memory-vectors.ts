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
import type { MemoryLookupFilter, MemoryScope, MemoryScoredId, MemoryVectorInfo, MemoryVectorInput } from '../memory-types';
import type { SqliteHandle } from './handle';
import { SCOPE_WHERE, jsonList, scopeKey, scopeParams } from './memory-rows';
import { createVectorBitsCache, signBits } from './memory-vector-cache';

/** Smallest candidate pool of the bit-vector stage. */
const MIN_CANDIDATES = 256;
/** vec0's largest `k`. */
const MAX_CANDIDATES = 4096;

export { signBits };

/** Cosine similarity (0 when either vector is zero). */
export function cosine(a: Float32Array, b: Float32Array): number {
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

function toFloat32(blob: Buffer): Float32Array {
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float32Array(copy.buffer);
}

/** The vector operations of the SQLite memory domain. */
export function createSqliteMemoryVectors(handle: SqliteHandle) {
  const prepare = (sql: string) => handle.prepare(sql);
  const cache = createVectorBitsCache(handle);
  /** Run a write that patches the cache; a failed transaction leaves the cache to reload. */
  const writeVectors = <T>(operation: string, fn: () => T): T => {
    try {
      return handle.write(operation, fn);
    } catch (error) {
      cache.clear();
      throw error;
    }
  };

  const readDimension = (): number | undefined => {
    const row = prepare("SELECT value FROM memory_settings WHERE key = 'vector_dim'").get() as { value: string } | undefined;
    return row === undefined ? undefined : Number(row.value);
  };

  const vecTableExists = (): boolean =>
    prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get() !== undefined;

  const ensureDimension = (dim: number): void => {
    const current = readDimension();
    if (current === undefined) {
      prepare("INSERT INTO memory_settings (key, value) VALUES ('vector_dim', ?)").run(String(dim));
    } else if (current !== dim) {
      throw new MinaraError(
        'MEMORY_INVALID',
        `embedding has ${dim} dimensions but this database's memory vectors have ${current} (fixed at first use); use the same embedding model or a new database`,
      );
    }
    if (handle.vectorAvailable && !vecTableExists()) {
      const bits = Math.ceil(dim / 8) * 8;
      handle.db.exec(`CREATE VIRTUAL TABLE memories_vec USING vec0(scope_key text partition key, user_id text, embedding bit[${bits}])`);
    }
  };

  return {
    info(): MemoryVectorInfo {
      const dimensions = handle.read('memory.vectorInfo', readDimension);
      return {
        available: handle.vectorAvailable,
        ...(handle.vectorAvailable ? {} : { unavailableReason: 'sqlite-vec is not loaded in this connection' }),
        ...(dimensions === undefined ? {} : { dimensions }),
      };
    },

    upsert(scope: MemoryScope, vectors: readonly MemoryVectorInput[]): void {
      if (vectors.length === 0) return;
      if (!handle.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.upsertVectors: the vector index (sqlite-vec) is not available');
      const dim = (vectors[0] as MemoryVectorInput).vector.length;
      for (const v of vectors) {
        if (v.vector.length !== dim || dim === 0) throw new MinaraError('MEMORY_INVALID', `memory.upsertVectors: every vector must have ${dim} (> 0) dimensions`);
      }
      writeVectors('memory.upsertVectors', () => {
        ensureDimension(dim);
        const key = scopeKey(scope);
        const [userId, agentId] = scopeParams(scope);
        const owned = prepare(`SELECT id FROM memories WHERE id = ? AND ${SCOPE_WHERE} AND content_hash = ?`);
        const putFloat = prepare('INSERT OR REPLACE INTO memory_vectors (memory_id, user_id, agent_id, content_hash, embedding, bits) VALUES (?, ?, ?, ?, ?, ?)');
        const put: Array<{ id: number; bits: Uint8Array }> = [];
        const delBits = prepare('DELETE FROM memories_vec WHERE rowid = ?');
        const putBits = prepare('INSERT INTO memories_vec (rowid, scope_key, user_id, embedding) VALUES (?, ?, ?, vec_bit(?))');
        const mark = prepare(`UPDATE memories SET embedding_state = 'embedded' WHERE id = ? AND ${SCOPE_WHERE}`);
        for (const v of vectors) {
          if (owned.get(v.id, userId, agentId, v.contentHash) === undefined) continue;
          const bits = signBits(v.vector);
          putFloat.run(v.id, userId, agentId, v.contentHash, Buffer.from(v.vector.buffer, v.vector.byteOffset, v.vector.byteLength), bits);
          delBits.run(BigInt(v.id));
          putBits.run(BigInt(v.id), key, userId, bits);
          mark.run(v.id, userId, agentId);
          put.push({ id: v.id, bits });
        }
        if (put.length > 0) cache.changed(scope, put, []);
      });
    },

    byContentHash(scope: MemoryScope, contentHash: string): Float32Array | undefined {
      const row = handle.read('memory.vectorByContentHash', () =>
        prepare(`SELECT embedding FROM memory_vectors WHERE ${SCOPE_WHERE} AND content_hash = ? LIMIT 1`).get(...scopeParams(scope), contentHash),
      ) as { embedding: Buffer } | undefined;
      return row === undefined ? undefined : toFloat32(row.embedding);
    },

    search(scope: MemoryScope, query: Float32Array, filter: MemoryLookupFilter): MemoryScoredId[] {
      if (!handle.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.searchVector: the vector index (sqlite-vec) is not available');
      return handle.read('memory.searchVector', () => {
        const dim = readDimension();
        if (dim === undefined || !vecTableExists()) return [];
        if (query.length !== dim) {
          throw new MinaraError('MEMORY_INVALID', `query embedding has ${query.length} dimensions but stored memory vectors have ${dim}`);
        }
        const k = Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, filter.limit * 8));
        const [userId, agentId] = scopeParams(scope);
        const queryBits = signBits(query);
        const candidates =
          cache.nearest(scope, queryBits, k) ??
          (
            prepare('SELECT rowid AS id FROM memories_vec WHERE embedding MATCH vec_bit(?) AND k = ? AND scope_key = ? AND user_id = ?').all(
              queryBits,
              k,
              scopeKey(scope),
              userId,
            ) as Array<{ id: number | bigint }>
          ).map((c) => Number(c.id));
        if (candidates.length === 0) return [];
        const rows = prepare(
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
          jsonList(filter.statuses ?? ['active', 'pending']),
          filter.categories !== undefined && filter.categories.length > 0 ? 1 : null,
          jsonList(filter.categories ?? []),
          jsonList(filter.excludeIds ?? []),
        ) as Array<{ id: number; embedding: Buffer }>;
        return rows
          .map((r) => ({ id: r.id, score: cosine(query, toFloat32(r.embedding)) }))
          .sort((a, b) => b.score - a.score || b.id - a.id)
          .slice(0, filter.limit);
      });
    },

    /**
     * Record that the vectors of these rows of the scope are gone (called inside the transaction that deleted
     * their `memory_vectors` rows): removes their `vec0` bits and bumps the scope's generation.
     */
    removed(scope: MemoryScope, ids: readonly number[]): void {
      if (ids.length === 0) return;
      cache.changed(scope, [], ids);
      if (!handle.vectorAvailable || !vecTableExists()) return;
      const del = prepare('DELETE FROM memories_vec WHERE rowid = ?');
      for (const id of ids) del.run(BigInt(id));
    },

    /** Forget the cache (after a failed transaction that may have patched it). */
    resetCache(): void {
      cache.clear();
    },
  };
}
