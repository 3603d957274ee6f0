/**
 * Vectors of the Postgres memory domain. The float32 vector is kept as BYTEA (embedding reuse, exact cosine
 * re-scoring); with pgvector (`CREATE EXTENSION vector` succeeded at open) a `vector` column mirrors it and
 * nearest neighbours come from `<=>` (cosine distance) inside the scope; without it the domain reports
 * `available: false` and memory search degrades to full text, exactly as the SQLite engine without sqlite-vec.
 * The checks, errors and re-scoring are the shared ones (`../memory-logic.ts`).
 */
import { MinaraError } from '../../errors/minara-error';
import {
  checkVectorBatch, cosine, floatsFromBytes, queryDimensionMismatch, storedDimensionMismatch, topScored, vectorBytes, vectorCandidates,
} from '../memory-logic';
import type { MemoryLookupFilter, MemoryScope, MemoryScoredId, MemoryVectorInfo, MemoryVectorInput } from '../memory-types';
import type { PgTx } from './handle';
import { rowFilter } from './memory-fts';
import { type PgMemoryState, SCOPE, sp } from './memory-rows';

const vectorLiteral = (v: Float32Array) => `[${Array.from(v, (x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;

/** The database's vector dimension (fixed at first use), if any vector was stored. */
async function readDimension(st: PgMemoryState, q: PgTx): Promise<number | undefined> {
  const r = await q.get(`SELECT value FROM ${st.h.t('memory_settings')} WHERE key = 'vector_dim'`);
  return r === undefined ? undefined : Number(r.value);
}

/** Whether vectors can be stored and searched, and their dimension. */
export async function vectorInfo(st: PgMemoryState): Promise<MemoryVectorInfo> {
  const dimensions = await readDimension(st, st.h.op('memory.vectorInfo'));
  return {
    available: st.vectorAvailable,
    ...(st.vectorAvailable ? {} : { unavailableReason: st.vectorUnavailableReason ?? 'pgvector is not installed in this database' }),
    ...(dimensions === undefined ? {} : { dimensions }),
  };
}

/** Store the vectors of rows the scope owns whose content is still the one embedded; marks those rows embedded. */
export async function upsertVectors(st: PgMemoryState, scope: MemoryScope, vectors: readonly MemoryVectorInput[]): Promise<void> {
  if (vectors.length === 0) return;
  const dim = checkVectorBatch(vectors, { available: st.vectorAvailable, name: 'pgvector' });
  const { h, M, V } = st;
  await h.tx('memory.upsertVectors', async (tx) => {
    await tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.vector_dim:${h.schemaName}`]);
    const current = await readDimension(st, tx);
    if (current === undefined) await tx.run(`INSERT INTO ${h.t('memory_settings')} (key, value) VALUES ('vector_dim', $1)`, [String(dim)]);
    else if (current !== dim) throw storedDimensionMismatch(dim, current);
    for (const v of vectors) {
      const owned = await tx.get(`SELECT 1 AS x FROM ${M} WHERE id = $3 AND ${SCOPE} AND content_hash = $4`, [...sp(scope), v.id, v.contentHash]);
      if (owned === undefined) continue;
      await tx.run(
        `INSERT INTO ${V} (memory_id, user_id, agent_id, content_hash, embedding, embedding_v) VALUES ($3, $1, $2, $4, $5, $6::vector)
         ON CONFLICT (memory_id) DO UPDATE SET content_hash = excluded.content_hash, embedding = excluded.embedding, embedding_v = excluded.embedding_v`,
        [...sp(scope), v.id, v.contentHash, vectorBytes(v.vector), vectorLiteral(v.vector)],
      );
      await tx.run(`UPDATE ${M} SET embedding_state = 'embedded' WHERE id = $3 AND ${SCOPE}`, [...sp(scope), v.id]);
    }
  });
}

/** A stored vector of the scope computed for this content, to reuse. */
export async function vectorByContentHash(st: PgMemoryState, scope: MemoryScope, contentHash: string): Promise<Float32Array | undefined> {
  const r = await st.h.op('memory.vectorByContentHash').get(`SELECT embedding FROM ${st.V} WHERE ${SCOPE} AND content_hash = $3 LIMIT 1`, [...sp(scope), contentHash]);
  return r === undefined ? undefined : floatsFromBytes(r.embedding);
}

/** Nearest neighbours by pgvector's cosine distance within the scope and filter, re-scored by exact cosine. */
export async function searchVector(st: PgMemoryState, scope: MemoryScope, query: Float32Array, filter: MemoryLookupFilter): Promise<MemoryScoredId[]> {
  if (!st.vectorAvailable) throw new MinaraError('MEMORY_INVALID', 'memory.searchVector: the vector index (pgvector) is not available');
  const q = st.h.op('memory.searchVector');
  const dim = await readDimension(st, q);
  if (dim === undefined) return [];
  if (query.length !== dim) throw queryDimensionMismatch(query.length, dim);
  const params: unknown[] = [...sp(scope)];
  const where = rowFilter(filter, params, 'm');
  params.push(vectorLiteral(query), vectorCandidates(filter.limit));
  const rows = await q.all(
    `SELECT v.memory_id AS id, v.embedding FROM ${st.V} v JOIN ${st.M} m ON m.id = v.memory_id
     WHERE v.user_id = $1 AND v.agent_id IS NOT DISTINCT FROM $2 AND ${where}
     ORDER BY v.embedding_v <=> $${params.length - 1}::vector LIMIT $${params.length}`,
    params,
  );
  return topScored(
    rows.map((r) => ({ id: Number(r.id), score: cosine(query, floatsFromBytes(r.embedding)) })),
    filter.limit,
  );
}
