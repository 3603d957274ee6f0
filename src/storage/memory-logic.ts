/**
 * The memory domain's logic shared by every engine, so they agree on every record and number: the record a
 * stored row maps to (and the one an insert returns), consolidation events and profile entries read back,
 * the health counts folded from grouped rows, entity edge-type tallies, the LIKE fallback's needles and
 * scores, cosine re-scoring and the vector checks and errors. Engine-neutral: no driver import here; each
 * engine keeps only its queries (src/storage/{sqlite,postgres,in-memory}/memory*.ts).
 */
import { MinaraError } from '../errors/minara-error';
import type {
  ConsolidationEvent, EmbeddingState, MemoryRecord, MemoryScope, MemoryScoredId, MemoryStats, MemoryStatus, MemoryVectorInput, NewMemoryRow, ProfileEntry,
} from './memory-types';

/** The statuses a lookup or list sees when it names none. */
export const DEFAULT_MEMORY_STATUSES: readonly MemoryStatus[] = ['active', 'pending'];

/** Smallest candidate pool of a vector lookup (a scope of up to this many rows is searched exhaustively). */
export const MIN_VECTOR_CANDIDATES = 256;
/** Largest candidate pool of a vector lookup (sqlite-vec's largest `k`). */
export const MAX_VECTOR_CANDIDATES = 4096;

/** How many nearest candidates a vector lookup re-scores exactly for `limit` results. */
export function vectorCandidates(limit: number): number {
  return Math.min(MAX_VECTOR_CANDIDATES, Math.max(MIN_VECTOR_CANDIDATES, limit * 8));
}

/** A row of `memories` as a driver returns it (snake_case columns; SQLite and PostgreSQL alike). */
export interface MemoryRowLike {
  readonly id: unknown;
  readonly user_id: unknown;
  readonly agent_id: unknown;
  readonly category: unknown;
  readonly content: unknown;
  readonly metadata: unknown;
  readonly source: unknown;
  readonly status: unknown;
  readonly content_hash: unknown;
  readonly embedding_state: unknown;
  readonly deleted_at: unknown;
  readonly retired_at: unknown;
  readonly superseded_by: unknown;
  readonly created_at: unknown;
  readonly updated_at: unknown;
}

/** The metadata column's JSON as an object; `undefined` when absent, unparsable or not an object. */
export function parseMemoryMetadata(json: unknown): Readonly<Record<string, unknown>> | undefined {
  if (typeof json !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Map a stored row to a record (absent optional fields are left out, not `undefined`). */
export function memoryRecordFromRow(r: MemoryRowLike): MemoryRecord {
  const metadata = parseMemoryMetadata(r.metadata);
  return {
    id: Number(r.id),
    userId: String(r.user_id),
    ...(r.agent_id == null ? {} : { agentId: String(r.agent_id) }),
    category: String(r.category),
    content: String(r.content),
    ...(metadata === undefined ? {} : { metadata }),
    ...(r.source == null ? {} : { source: String(r.source) }),
    status: r.status as MemoryStatus,
    contentHash: String(r.content_hash),
    embeddingState: r.embedding_state as EmbeddingState,
    ...(r.deleted_at == null ? {} : { deletedAt: String(r.deleted_at) }),
    ...(r.retired_at == null ? {} : { retiredAt: String(r.retired_at) }),
    ...(r.superseded_by == null ? {} : { supersededBy: Number(r.superseded_by) }),
    createdAt: String(r.created_at),
    updatedAt: String(r.updated_at),
  };
}

/** The record an insert returns for `row` stored under `id` (`metadata` as the engine keeps it; the row's by default). */
export function newMemoryRecord(scope: MemoryScope, row: NewMemoryRow, id: number, metadata: NewMemoryRow['metadata'] = row.metadata): MemoryRecord {
  return {
    id,
    userId: scope.userId,
    ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
    category: row.category,
    content: row.content,
    ...(metadata === undefined ? {} : { metadata }),
    ...(row.source === undefined ? {} : { source: row.source }),
    status: row.status,
    contentHash: row.contentHash,
    embeddingState: row.embeddingState,
    createdAt: row.now,
    updatedAt: row.now,
  };
}

/** The JSON the metadata column stores for a record's metadata (`null` when there is none). */
export function metadataJson(metadata: NewMemoryRow['metadata']): string | null {
  return metadata === undefined ? null : JSON.stringify(metadata);
}

/** A row's size as BM25 counts it: text tokens + category tokens + 1 (the scope token), as FTS5 counts it. */
export function memoryDocSize(searchText: string, category: string): number {
  const text = searchText.split(' ').filter((t) => t.length > 0).length;
  return text + categoryTokenCount(category) + 1;
}

/** The tokens a category adds to a row's size. */
export function categoryTokenCount(category: string): number {
  return category.split(/[^a-z0-9]+/u).filter((t) => t.length > 0).length;
}

/** A stored consolidation event (snake_case columns) as a record. */
export function consolidationEventFromRow(r: Readonly<Record<string, unknown>>): ConsolidationEvent {
  return {
    id: Number(r['id']),
    pass: r['pass'] as 'dedup' | 'llm',
    decision: r['decision'] as ConsolidationEvent['decision'],
    factId: Number(r['fact_id']),
    ...(r['other_id'] == null ? {} : { otherId: Number(r['other_id']) }),
    reason: String(r['reason']),
    ...(r['model'] == null ? {} : { model: String(r['model']) }),
    ...(r['model_verdict'] == null ? {} : { modelVerdict: String(r['model_verdict']) }),
    createdAt: String(r['created_at']),
  };
}

/** A stored profile entry (`key, value, updated_at, set_by`) as a record; anything but `agent` reads as the person's. */
export function profileEntryFromRow(r: Readonly<Record<string, unknown>>): ProfileEntry {
  return { key: String(r['key']), value: String(r['value']), updatedAt: String(r['updated_at']), setBy: r['set_by'] === 'agent' ? 'agent' : 'user' };
}

/** Whether an agent's profile write must leave the current entry alone: the person's value wins. */
export function profileWriteKept(current: ProfileEntry | undefined, setBy: ProfileEntry['setBy']): boolean {
  return current !== undefined && current.setBy !== 'agent' && setBy === 'agent';
}

/** A scope as a stored row names it (`agent_id` NULL: a user-level scope). */
export function scopeFromRow(userId: unknown, agentId: unknown): MemoryScope {
  return agentId == null ? { userId: String(userId) } : { userId: String(userId), agentId: String(agentId) };
}

/** One group of a scope's rows for {@link foldMemoryStats}. */
export interface MemoryStatsGroup {
  readonly category: string;
  readonly status: MemoryStatus;
  readonly deleted: boolean;
  readonly embeddingState: EmbeddingState;
  readonly n: number;
}

const byCategoryThenStatus = (a: { category: string; status: string }, b: { category: string; status: string }) =>
  a.category < b.category ? -1 : a.category > b.category ? 1 : a.status < b.status ? -1 : a.status > b.status ? 1 : 0;

/** A scope's health counts from its rows grouped by category, status, deletion and embedding state. */
export function foldMemoryStats(groups: Iterable<MemoryStatsGroup>, edges: number, vectors: number): MemoryStats {
  const rows = new Map<string, { category: string; status: MemoryStatus; count: number }>();
  const embedding: Record<EmbeddingState, number> = { pending: 0, embedded: 0, failed: 0, skipped: 0 };
  let deleted = 0;
  for (const g of groups) {
    if (g.deleted) {
      deleted += g.n;
      continue;
    }
    embedding[g.embeddingState] += g.n;
    const key = `${g.category}\u0000${g.status}`;
    const row = rows.get(key) ?? { category: g.category, status: g.status, count: 0 };
    row.count += g.n;
    rows.set(key, row);
  }
  return { rows: [...rows.values()].sort(byCategoryThenStatus), deleted, embedding, edges, vectors };
}

/** How many edges of each type point at an entity. */
export function countEdgeTypes(types: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of types) out[t] = (out[t] ?? 0) + 1;
  return out;
}

/** The LIKE fallback's needles: lower-cased, non-empty, at most 16. */
export function likeNeedles(needles: readonly string[]): string[] {
  return needles
    .map((n) => n.toLowerCase())
    .filter((n) => n.length > 0)
    .slice(0, 16);
}

/** Most LIKE candidates a lookup scores (newest first). */
export const LIKE_CANDIDATES = 500;

/**
 * Score LIKE candidates (newest first) by how many needles each contains; those containing none dropped,
 * the best `limit` kept (ties stay newest first).
 */
export function scoreLikeMatches(candidates: Iterable<{ readonly id: number; readonly content: string }>, needles: readonly string[], limit: number): MemoryScoredId[] {
  const out: MemoryScoredId[] = [];
  for (const r of candidates) {
    const lower = r.content.toLowerCase();
    const score = needles.filter((n) => lower.includes(n)).length;
    if (score > 0) out.push({ id: r.id, score });
  }
  return out.sort((a, b) => b.score - a.score).slice(0, limit);
}

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

/** The best `limit` hits, by score then newest id. */
export function topScored(hits: MemoryScoredId[], limit: number): MemoryScoredId[] {
  return hits.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, limit);
}

/** A stored float32 vector (BLOB/BYTEA) as an aligned copy; anything but bytes reads as empty. */
export function floatsFromBytes(value: unknown): Float32Array {
  const src = value instanceof Uint8Array ? value : new Uint8Array(0);
  const copy = new Uint8Array(src.byteLength);
  copy.set(src);
  return new Float32Array(copy.buffer, 0, copy.byteLength >> 2);
}

/** A vector's bytes as the engines store them (a view, no copy). */
export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * Check a batch of vectors before it is stored: the index is available and every vector has the first one's
 * (> 0) dimensions. Returns that dimension count.
 */
export function checkVectorBatch(vectors: readonly MemoryVectorInput[], index: { readonly available: boolean; readonly name: string }): number {
  if (!index.available) throw new MinaraError('MEMORY_INVALID', `memory.upsertVectors: the vector index (${index.name}) is not available`);
  const dim = (vectors[0] as MemoryVectorInput).vector.length;
  for (const v of vectors) {
    if (v.vector.length !== dim || dim === 0) throw new MinaraError('MEMORY_INVALID', `memory.upsertVectors: every vector must have ${dim} (> 0) dimensions`);
  }
  return dim;
}

/** The error of a vector whose dimensions differ from the database's (fixed at first use). */
export function storedDimensionMismatch(dim: number, current: number): MinaraError {
  return new MinaraError(
    'MEMORY_INVALID',
    `embedding has ${dim} dimensions but this database's memory vectors have ${current} (fixed at first use); use the same embedding model or a new database`,
  );
}

/** The error of a query vector whose dimensions differ from the stored vectors'. */
export function queryDimensionMismatch(dim: number, stored: number): MinaraError {
  return new MinaraError('MEMORY_INVALID', `query embedding has ${dim} dimensions but stored memory vectors have ${stored}`);
}
