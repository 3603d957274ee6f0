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

/**
 * The frequency of every leaf in a matching document, as FTS5's `xInst` reports it: a leaf under an AND
 * node that does not match the document counts 0 even when the leaf itself occurs (FTS5 zeroes the position
 * lists of a non-matching AND subtree), so `(a AND b) OR c` on a row holding `a` and `c` scores `c` only.
 */
export function leafFrequencies(query: MemoryQueryNode, tokens: readonly string[]): number[] {
  const out: number[] = [];
  const walk = (node: MemoryQueryNode, zeroed: boolean): void => {
    if (node.kind === 'term' || node.kind === 'phrase') out.push(zeroed ? 0 : leafFrequency(node, tokens));
    else {
      const z = zeroed || (node.kind === 'and' && !matches(node, tokens));
      for (const c of node.children) walk(c, z);
    }
  };
  walk(query, false);
  return out;
}

/** A query prepared for scoring many documents: leaves resolved once, one pass over the tokens per leaf. */
export interface CompiledBm25 {
  readonly leaves: ReadonlyArray<Extract<MemoryQueryNode, { kind: 'term' | 'phrase' }>>;
  /** Same value as {@link bm25Score}. */
  score(tokens: readonly string[], size: number, stats: Bm25Stats): number;
  /** The same from raw per-leaf frequencies (`freqs` is overwritten). */
  scoreFrequencies(freqs: number[], size: number, stats: Bm25Stats): number;
}

/** Compile `query` for {@link CompiledBm25.score}. */
export function compileBm25(query: MemoryQueryNode): CompiledBm25 {
  const ls = leaves(query);
  const hasAnd = JSON.stringify(query).includes('"kind":"and"');
  let raw: number[] = [];
  // Zero the leaves of AND subtrees that fail, as leafFrequencies does, reading raw frequencies by position.
  let at = 0;
  const settle = (node: MemoryQueryNode, zeroed: boolean): boolean => {
    if (node.kind === 'term' || node.kind === 'phrase') {
      const i = at++;
      const present = (raw[i] as number) > 0;
      if (zeroed) raw[i] = 0;
      return present;
    }
    const start = at;
    if (node.kind === 'or') {
      let any = false;
      for (const c of node.children) any = settle(c, zeroed) || any;
      return any;
    }
    let all = true;
    for (const c of node.children) all = settle(c, zeroed) && all;
    if (!all && !zeroed) {
      at = start;
      for (const c of node.children) settle(c, true);
    }
    return all;
  };
  const compiled: CompiledBm25 = {
    leaves: ls,
    score(tokens, size, stats) {
      return compiled.scoreFrequencies(
        ls.map((leaf) => leafFrequency(leaf, tokens)),
        size,
        stats,
      );
    },
    scoreFrequencies(freqs, size, stats) {
      raw = freqs;
      if (hasAnd) {
        at = 0;
        settle(query, false);
      }
      let score = 0;
      for (let i = 0; i < ls.length; i++) {
        const f = raw[i] as number;
        const nHit = stats.hits[i] as number;
        let idf = Math.log((stats.rowCount - nHit + 0.5) / (nHit + 0.5));
        if (idf <= 0) idf = 1e-6;
        score += idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * size) / stats.avgSize)));
      }
      return score;
    },
  };
  return compiled;
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
  const freqs = leafFrequencies(query, doc.tokens);
  let score = 0;
  freqs.forEach((f, i) => {
    const nHit = stats.hits[i] as number;
    let idf = Math.log((stats.rowCount - nHit + 0.5) / (nHit + 0.5));
    if (idf <= 0) idf = 1e-6;
    score += idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * doc.size) / stats.avgSize)));
  });
  return score;
}
