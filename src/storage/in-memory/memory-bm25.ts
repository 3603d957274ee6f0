/**
 * A small BM25 that ranks like SQLite FTS5's `bm25(memories_fts, 1, 0, 0)`: the same tokens (the memory layer
 * hands both engines pre-tokenised `searchText`), the same phrase semantics, k1 = 1.2, b = 0.75, IDF over
 * every row in the index (all tenants, soft-deleted included, as FTS5 does), and a row size that counts the
 * tokens of all three indexed columns (text, category, scope token).
 */
import type { MemoryQueryNode } from '../memory-types';

const K1 = 1.2;
const B = 0.75;

/** One indexed row. */
export interface Bm25Doc {
  readonly tokens: readonly string[];
  /** Tokens of all indexed columns (text + category + scope token). */
  readonly size: number;
}

/** Leaf phrases (terms and phrases) of a query, in order. */
export function leaves(node: MemoryQueryNode): Array<Extract<MemoryQueryNode, { kind: 'term' | 'phrase' }>> {
  if (node.kind === 'term' || node.kind === 'phrase') return [node];
  return node.children.flatMap(leaves);
}

/** How often a leaf occurs in a token list. */
export function leafFrequency(leaf: Extract<MemoryQueryNode, { kind: 'term' | 'phrase' }>, tokens: readonly string[]): number {
  let n = 0;
  if (leaf.kind === 'term') {
    for (const t of tokens) if (leaf.prefix === true ? t.startsWith(leaf.text) : t === leaf.text) n++;
    return n;
  }
  const p = leaf.tokens;
  if (p.length === 0) return 0;
  outer: for (let i = 0; i + p.length <= tokens.length; i++) {
    for (let j = 0; j < p.length; j++) if (tokens[i + j] !== p[j]) continue outer;
    n++;
  }
  return n;
}

/** Whether a document satisfies the boolean structure of the query. */
export function matches(node: MemoryQueryNode, tokens: readonly string[]): boolean {
  switch (node.kind) {
    case 'term':
    case 'phrase':
      return leafFrequency(node, tokens) > 0;
    case 'and':
      return node.children.every((c) => matches(c, tokens));
    case 'or':
      return node.children.some((c) => matches(c, tokens));
  }
}

/** Index-wide statistics BM25 needs. */
export interface Bm25Stats {
  readonly rowCount: number;
  readonly avgSize: number;
  /** Rows containing each leaf (by leaf index). */
  readonly hits: readonly number[];
}

/** Compute statistics over every document of the index. */
export function bm25Stats(query: MemoryQueryNode, docs: Iterable<Bm25Doc>): Bm25Stats {
  const ls = leaves(query);
  const hits = ls.map(() => 0);
  let rowCount = 0;
  let total = 0;
  for (const d of docs) {
    rowCount++;
    total += d.size;
    ls.forEach((leaf, i) => {
      if (leafFrequency(leaf, d.tokens) > 0) hits[i] = (hits[i] as number) + 1;
    });
  }
  return { rowCount, avgSize: rowCount === 0 ? 1 : total / rowCount, hits };
}

/** The BM25 score of one document (higher is better, like `-bm25()`). */
export function bm25Score(query: MemoryQueryNode, doc: Bm25Doc, stats: Bm25Stats): number {
  const ls = leaves(query);
  let score = 0;
  ls.forEach((leaf, i) => {
    const nHit = stats.hits[i] as number;
    let idf = Math.log((stats.rowCount - nHit + 0.5) / (nHit + 0.5));
    if (idf <= 0) idf = 1e-6;
    const f = leafFrequency(leaf, doc.tokens);
    score += idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * doc.size) / stats.avgSize)));
  });
  return score;
}
