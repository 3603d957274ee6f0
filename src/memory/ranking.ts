/**
 * Rank fusion and the entity boost, kept pure so both engines and the benchmarks share one definition.
 */

/** The RRF constant of the spec: `score = Σ 1 / (RRF_K + rank)` with 1-based ranks. */
export const RRF_K = 60;
/** The entity boost factor of the spec: `final = score × (1 + ENTITY_BOOST × overlap)`. */
export const ENTITY_BOOST = 0.3;

/**
 * Reciprocal Rank Fusion of ranked id lists (best first). An id present in several lists sums its terms.
 *
 * @example
 * ```ts
 * reciprocalRankFusion([[3, 1], [1, 2]]).get(1); // 1/62 + 1/61
 * ```
 */
export function reciprocalRankFusion(lists: ReadonlyArray<readonly number[]>, k: number = RRF_K): Map<number, number> {
  const scores = new Map<number, number>();
  for (const list of lists) {
    list.forEach((id, i) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + i + 1));
    });
  }
  return scores;
}

/** Apply the soft entity boost to a score. */
export function applyEntityBoost(score: number, overlap: number): number {
  return score * (1 + ENTITY_BOOST * overlap);
}

/** A candidate in the final ordering. */
export interface RankedCandidate {
  readonly id: number;
  readonly score: number;
  readonly updatedAt: string;
}

/** Deterministic order: score desc, then `updatedAt` desc, then id desc. */
export function compareRanked(a: RankedCandidate, b: RankedCandidate): number {
  if (b.score !== a.score) return b.score - a.score;
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return b.id - a.id;
}
