/**
 * The fast path of lexical ranking: an in-process inverted index of one scope (postings per index term, each
 * row's terms, the scope's statistics), ranked exactly by the function of `lexical-rank.ts`.
 *
 * Why an in-process index rather than the engine's full-text index: exact BM25 over every match needs, per
 * query, the frequency of each query term in every matching row and the scope's own statistics. FTS5 keeps
 * file-wide statistics and no per-scope document frequency, and scoring all matches of a common word through
 * SQL costs tens of milliseconds at 100k rows (the reason the old code ranked only the newest 1,000 matches).
 * Postings in typed arrays answer the same from memory: scoring is term-at-a-time over the matching postings
 * (a common word of a 100k-row scope: ~30k postings, ~1 ms), boolean queries intersect sorted slot lists.
 * The engines only supply rows (`lexical-cache.ts` keeps this index in step with them), so ranking lives in
 * one place and every engine ranks alike.
 *
 * Rows are kept in slots; a removed row leaves a dead slot until the next compaction. Neighbours (for the
 * neighbour share of the score) are the previous and next live rows by id, and the ones beyond them. Each
 * slot keeps its label terms (`labelTerms`: the first in a flat array, the rest of a longer label in a map) and whether it asks a question, and each term the number of live
 * rows whose label holds it.
 */
import type { MemoryQueryNode } from '../storage/memory-types';
import type { RankDoc, RankedId, RankOptions } from './lexical-rank';
import { exportIndex, restoreIndex } from './lexical-index-io';
import { rankIndex } from './lexical-index-rank';
import { type ScopeIndexState, addRow, newIndexState, removeRow, slotOf } from './lexical-index-state';

export type { ScopeIndexState } from './lexical-index-state';

/** One scope's index. */
export interface ScopeIndex {
  /** Live rows. */
  readonly size: number;
  /** Index terms held (live rows), for the cache budget. */
  readonly termCount: number;
  /** Highest id ever added. */
  readonly maxId: number;
  has(id: number): boolean;
  /** Add a row (its id must not be present). */
  add(doc: RankDoc): void;
  /** Remove a row; no-op when absent. */
  remove(id: number): void;
  /** The best rows for `query`, exactly as {@link rankBruteForce} of `lexical-rank.ts` ranks them. */
  rank(query: MemoryQueryNode, options: RankOptions): RankedId[];
  /** The live rows in a compact, id-ordered form (a snapshot persists it; see `lexical-snapshot.ts`). */
  state(): ScopeIndexState;
}

/**
 * Create a scope index: empty, or restored from a {@link ScopeIndexState} without tokenising any text. A state
 * that is inconsistent in any way (out-of-range ids, wrong document frequencies, ids out of order) throws.
 *
 * Wiring only: the state is an `IndexState` (`lexical-index-state.ts`, which also adds and removes rows),
 * ranking is `lexical-index-rank.ts`, loading and exporting a state `lexical-index-io.ts`.
 */
export function createScopeIndex(from?: ScopeIndexState): ScopeIndex {
  const s = newIndexState();
  if (from !== undefined) restoreIndex(s, from);
  return {
    get size() {
      return s.live;
    },
    get termCount() {
      return s.totalLength;
    },
    get maxId() {
      return s.maxId;
    },
    has: (id) => slotOf(s, id) >= 0,
    add: (doc) => addRow(s, doc),
    remove: (id) => removeRow(s, id),
    rank: (query, options) => rankIndex(s, query, options),
    state: () => exportIndex(s),
  };
}
