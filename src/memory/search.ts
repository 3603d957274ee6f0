/**
 * The search pipeline: sanitise → exact BM25 over the scope (`lexical-cache.ts`; AND, relaxed to OR when a
 * bare multi-word query or a natural-language question finds too few) → optional vector arm fused by RRF
 * (k = 60) → entity boost → deterministic order.
 *
 * Degradation: user text never throws. A storage error during the lexical lookup is logged and answered by a
 * LIKE scan. The vector arm is skipped (BM25 answers alone) when there is no embedder, when the vector index
 * is unavailable, or when the query embedding fails or times out.
 */
import { MinaraError } from '../errors/minara-error';
import type { MemoryLookupFilter, MemoryRecord, MemoryScope, MemoryScoredId, MemoryStorage } from '../storage/memory-types';
import type { Logger } from '../util/logger';
import type { EmbeddingQueue } from './embedding-queue';
import { entityId, entityOverlap, extractFinanceEntities } from './entities';
import { lexicalCacheFor } from './lexical-cache';
import { parseSearchQuery } from './query';
import { applyEntityBoost, compareRanked, reciprocalRankFusion } from './ranking';
import { hasUnsegmentedText } from './text';
import type { MemoryHit, MemorySearchInfo, MemorySearchOptions } from './types';
import { validateLimit, validateName } from './validate';

/** What the pipeline needs from the store. */
export interface SearchContext {
  readonly storage: MemoryStorage;
  readonly scope: MemoryScope;
  readonly logger: Logger;
  /** Present when an embedder is configured. */
  readonly embeddings?: EmbeddingQueue | undefined;
  /** Whether the engine's vector index can be used. */
  readonly vectorAvailable: () => Promise<boolean>;
  readonly queryEmbeddingTimeoutMs: number;
  /** Vector hits below this cosine similarity are dropped before fusion. */
  readonly minVectorSimilarity: number;
}

const MODES = new Set(['auto', 'bm25', 'hybrid']);

/** A record as a search hit. */
export function toHit(r: MemoryRecord, score: number): MemoryHit {
  return {
    id: r.id,
    category: r.category,
    content: r.content,
    ...(r.metadata === undefined ? {} : { metadata: r.metadata }),
    ...(r.source === undefined ? {} : { source: r.source }),
    score,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/** Run one search. Throws only for invalid options (`limit`, `mode`, `category`), never for query text. */
export async function runSearch(ctx: SearchContext, query: unknown, options: MemorySearchOptions = {}): Promise<MemorySearchInfo> {
  if (typeof query !== 'string') throw new MinaraError('MEMORY_INVALID', `\`query\` must be a string, got ${query === null ? 'null' : typeof query}`);
  const limit = validateLimit(options.limit, 10);
  const mode = options.mode ?? 'auto';
  if (!MODES.has(mode)) throw new MinaraError('MEMORY_INVALID', `\`mode\` must be 'auto', 'bm25' or 'hybrid', got ${JSON.stringify(mode)}`);
  const category = options.category === undefined ? undefined : validateName('category', options.category);
  const { storage, scope, logger } = ctx;

  const parsed = parseSearchQuery(query);
  let categories = [...parsed.categories];
  if (category !== undefined) {
    if (categories.length > 0 && !categories.includes(category)) return { hits: [], path: 'none', relaxed: false };
    categories = [category];
  }
  if (parsed.root === undefined) return { hits: [], path: 'none', relaxed: false };

  const pool = Math.min(1000, Math.max(limit * 3, 30));
  const filter: MemoryLookupFilter = { categories, limit: pool };
  const lexicalIndex = lexicalCacheFor(storage);
  let path: MemorySearchInfo['path'] = 'bm25';
  let relaxed = false;
  let lexical: readonly MemoryScoredId[];
  // The records the lexical lookup read to check visibility: the final read below skips them.
  let known: ReadonlyMap<number, MemoryRecord> = new Map();
  try {
    ({ ranked: lexical, records: known } = await lexicalIndex.searchRecords(scope, parsed.root, filter));
  } catch (error) {
    logger.warn('memory search: lexical lookup failed; falling back to LIKE', { error: error instanceof Error ? error.message : String(error) });
    lexical = await storage.searchLike(scope, parsed.needles, filter);
    path = 'like';
  }
  if (path === 'bm25' && parsed.relaxed !== undefined && lexical.length < limit) {
    try {
      // The relaxed form of a natural query: OR of its content words, neighbouring rows sharing the score.
      const wider = await lexicalIndex.searchRecords(scope, parsed.relaxed, filter, { neighbours: true });
      if (wider.ranked.length > lexical.length) {
        lexical = wider.ranked;
        known = wider.records;
        relaxed = true;
      }
    } catch (error) {
      logger.warn('memory search: relaxed lexical lookup failed; keeping the strict result', { error: error instanceof Error ? error.message : String(error) });
    }
  }
  if (path === 'bm25' && lexical.length === 0 && hasUnsegmentedText(query)) {
    const like = await storage.searchLike(scope, parsed.needles, filter);
    if (like.length > 0) {
      lexical = like;
      known = new Map();
      path = 'like';
    }
  }

  let degraded: MemorySearchInfo['degraded'];
  let vector: readonly MemoryScoredId[] | undefined;
  if (mode === 'bm25') degraded = 'mode_bm25';
  else if (ctx.embeddings === undefined) degraded = 'no_embedder';
  else if (!(await ctx.vectorAvailable())) degraded = 'vector_unavailable';
  else {
    const text = query.replace(/\bcategory:\s*\S*/giu, ' ').trim() || query;
    const qv = await ctx.embeddings.embedQuery(text, ctx.queryEmbeddingTimeoutMs);
    if (qv === undefined) degraded = 'query_embedding_failed';
    else {
      try {
        vector = (await storage.searchVector(scope, qv, { categories, limit: pool })).filter((h) => h.score >= ctx.minVectorSimilarity);
      } catch (error) {
        logger.warn('memory search: vector lookup failed; using BM25 only', { error: error instanceof Error ? error.message : String(error) });
        degraded = 'query_embedding_failed';
      }
    }
  }

  let scores: Map<number, number>;
  if (vector !== undefined) {
    scores = reciprocalRankFusion([lexical.map((h) => h.id), vector.map((h) => h.id)]);
    path = 'hybrid';
  } else {
    scores = new Map(lexical.map((h) => [h.id, h.score]));
  }
  if (scores.size === 0) return { hits: [], path, relaxed, ...(degraded === undefined ? {} : { degraded }) };

  const ids = Array.from(scores.keys());
  const missing = ids.filter((id) => !known.has(id));
  const records = [...ids.flatMap((id) => known.get(id) ?? []), ...(missing.length === 0 ? [] : await storage.getMany(scope, missing))];
  const queryEntities = new Set(options.entityBoost === false ? [] : extractFinanceEntities(query).map(entityId));
  const ranked = records
    .filter((r) => r.deletedAt === undefined && r.status !== 'retired')
    .map((r) => {
      const base = scores.get(r.id) ?? 0;
      const overlap = queryEntities.size > 0 ? entityOverlap(queryEntities, r.content) : 0;
      return { id: r.id, score: applyEntityBoost(base, overlap), updatedAt: r.updatedAt, record: r };
    })
    .sort(compareRanked)
    .slice(0, limit);
  return { hits: ranked.map((c) => toHit(c.record, c.score)), path, relaxed, ...(degraded === undefined ? {} : { degraded }) };
}
