/**
 * Keeps one in-process lexical index per scope (`lexical-index.ts`) in step with the storage engine, and
 * answers ranked lookups from it: the engine-facing side of ranking.
 *
 * What an engine supplies (three calls of `MemoryStorage`): `textRows` (the scope's rows, all of them or those
 * after an id or of some ids), `textChanges` (a log of rows whose text or category changed or that were
 * deleted) and `getMany` (visibility of the candidates). Inserts are found by id (ids only grow), updates and
 * deletes through the log, so another connection's or process's writes are seen by the next lookup. Before each
 * lookup the index catches up: the log since the last look (changed rows are re-read), then the rows added
 * since. A log that was pruned past the last look reloads the scope.
 *
 * The statistics are the scope's alone and include every stored row of the scope, soft-deleted and retired
 * rows too (they are part of the tenant's own text; a soft delete is undone for free). Rows that a lookup must
 * not return (soft-deleted, retired, other statuses, excluded ids) are dropped after ranking and the ranking is
 * asked again without them until the top is clean, so the result is still the exact top-k of the visible rows.
 *
 * Memory: the index of a scope costs ~20 bytes per index term (a 100k-row scope of 20-term rows: ~40 MB).
 * Scopes are evicted least recently used once the indexes of one storage hold more than
 * {@link LEXICAL_CACHE_TERMS} terms; a scope larger than that alone is ranked by a fresh index per lookup
 * (exact, slower) and not kept.
 */
import type { MemoryLookupFilter, MemoryQueryNode, MemoryScope, MemoryScoredId, MemoryStorage } from '../storage/memory-types';
import { type ScopeIndex, createScopeIndex } from './lexical-index';

/** Most index terms the scope indexes of one storage hold together (~20 bytes each). */
export const LEXICAL_CACHE_TERMS = 8_000_000;

interface Entry {
  index: ScopeIndex;
  seq: number;
  used: number;
  lock: Promise<unknown>;
}

/** Ranked lookups over the scopes of one storage. */
export interface LexicalCache {
  /**
   * The exact top `filter.limit` visible rows for `query` (visible: not soft-deleted, status in
   * `filter.statuses`, default active and pending; not in `filter.excludeIds`; category in `filter.categories`).
   */
  search(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter, options?: { neighbours?: boolean }): Promise<MemoryScoredId[]>;
}

const caches = new WeakMap<MemoryStorage, LexicalCache>();

/** The cache of `storage` (one per storage object, shared by every store over it). */
export function lexicalCacheFor(storage: MemoryStorage, budgetTerms: number = LEXICAL_CACHE_TERMS): LexicalCache {
  let cache = caches.get(storage);
  if (cache === undefined) {
    cache = createLexicalCache(storage, budgetTerms);
    caches.set(storage, cache);
  }
  return cache;
}

const scopeKey = (s: MemoryScope) => JSON.stringify([s.userId, s.agentId ?? null]);

/** A cache over one storage (exported for tests; stores use {@link lexicalCacheFor}). */
export function createLexicalCache(storage: MemoryStorage, budgetTerms: number = LEXICAL_CACHE_TERMS): LexicalCache {
  const entries = new Map<string, Entry>();
  let clock = 0;

  const load = async (scope: MemoryScope): Promise<Entry> => {
    // The log position first, then the rows: a change that lands in between is applied again next time.
    const { seq } = await storage.textChanges(scope, Number.MAX_SAFE_INTEGER);
    const index = createScopeIndex();
    for (const row of await storage.textRows(scope)) index.add(row);
    return { index, seq, used: ++clock, lock: Promise.resolve() };
  };

  const catchUp = async (scope: MemoryScope, entry: Entry): Promise<Entry> => {
    const changes = await storage.textChanges(scope, entry.seq);
    if (changes.reset) return load(scope);
    const { index } = entry;
    if (changes.ids.length > 0) {
      const changed = [...new Set(changes.ids)].filter((id) => id <= index.maxId);
      for (const id of changed) index.remove(id);
      if (changed.length > 0) for (const row of await storage.textRows(scope, { ids: changed })) if (!index.has(row.id)) index.add(row);
    }
    for (const row of await storage.textRows(scope, { afterId: index.maxId })) if (!index.has(row.id)) index.add(row);
    entry.seq = changes.seq;
    return entry;
  };

  const evict = (): void => {
    let total = 0;
    for (const e of entries.values()) total += e.index.termCount;
    if (total <= budgetTerms) return;
    for (const [key, e] of [...entries].sort((a, b) => a[1].used - b[1].used)) {
      if (total <= budgetTerms) break;
      entries.delete(key);
      total -= e.index.termCount;
    }
  };

  /** The scope's index, caught up; serialised per scope. */
  const indexFor = async (scope: MemoryScope): Promise<ScopeIndex> => {
    const key = scopeKey(scope);
    const existing = entries.get(key);
    if (existing === undefined) {
      const entry = await load(scope);
      if (entry.index.termCount <= budgetTerms) {
        entries.set(key, entry);
        evict();
      }
      return entry.index;
    }
    existing.used = ++clock;
    const run = existing.lock.then(() => catchUp(scope, existing));
    existing.lock = run.catch(() => undefined);
    try {
      const next = await run;
      if (next !== existing) entries.set(key, next);
      evict();
      return next.index;
    } catch (error) {
      entries.delete(key);
      throw error;
    }
  };

  return {
    async search(scope, query, filter, options = {}) {
      const index = await indexFor(scope);
      const statuses = filter.statuses ?? ['active', 'pending'];
      const rejected = new Set<number>(filter.excludeIds ?? []);
      for (;;) {
        const ranked = index.rank(query, {
          limit: filter.limit,
          categories: filter.categories,
          neighbours: options.neighbours === true,
          skip: (id) => rejected.has(id),
        });
        if (ranked.length === 0) return [];
        const records = new Map((await storage.getMany(scope, ranked.map((r) => r.id))).map((r) => [r.id, r]));
        let clean = true;
        for (const r of ranked) {
          const rec = records.get(r.id);
          if (rec === undefined || rec.deletedAt !== undefined || !statuses.includes(rec.status)) {
            rejected.add(r.id);
            clean = false;
          }
        }
        if (clean) return ranked;
      }
    },
  };
}
