/**
 * The lexical ranking function of memory search, in one place for every storage engine.
 *
 * BM25 (k1 = 0.9, b = 0.4) over the index terms of `text.ts` (`indexTerms`: unicode61-equivalent tokens,
 * possessives dropped, English words Porter-stemmed), with statistics of the scope alone: N is the scope's
 * stored rows, the average length their mean term count, a leaf's document frequency the scope's rows that
 * contain it. IDF is `ln(1 + (N − n + 0.5) / (n + 0.5))` (always positive, so a word that most of a small
 * scope holds still counts a little). A leaf under an AND node that fails on a row counts 0 there (FTS5's
 * instance rule), so `(a AND b) OR c` on a row holding `a` and `c` scores `c` only. Memory rows are short
 * (a sentence or a turn), so length normalisation is milder and term saturation earlier than the textbook
 * 1.2 / 0.75; see docs/memory.md for the sweep.
 *
 * Two fields. A row that opens with a short label and a colon (`Maria: …`, `Note: …`, as transcripts and
 * chat exports are written, see {@link labelTerms}) has that label as a second field: a query term found in
 * the label scores `LABEL_WEIGHT × idf_label` (the label's own document frequency in the scope) instead of
 * one body occurrence. A question about Maria then prefers what Maria said over what was said to her.
 *
 * For a relaxed natural-language query each row also gets a share of its neighbours' score: the rows of the
 * scope stored just before and after it (by id), and the ones after those at {@link NEIGHBOUR_DECAY}, when
 * they are of the row's category. Memories written one after another are usually one conversation or one
 * session, and the row that answers a question often shares no word with it while a row next to it does
 * (`final = own + NEIGHBOUR_WEIGHT × max(own(±1), NEIGHBOUR_DECAY × own(±2))`, see
 * {@link combineNeighbours}). A row may therefore rank through its neighbours alone; boolean queries (`AND`,
 * phrases, prefixes, `category:`) still decide which rows match on their own text and rank by it alone: only
 * a relaxed natural-language query uses neighbours ({@link RankOptions}). Under the same option a row that itself
 * asks a question (a `?` ending a sentence) keeps {@link QUESTION_ROW_FACTOR} of its own score: asked a question, a stored
 * statement is better evidence than a stored question on the same words, whose answer is usually the row after
 * it (and that row still borrows the question's full score as its neighbour).
 *
 * This file holds the pure function ({@link rankBruteForce}, the reference) and the shared pieces the fast
 * path of `lexical-index.ts` uses; a property test checks that both give the same ids and scores.
 */
import type { MemoryQueryNode } from '../storage/memory-types';
import { indexTerm, indexTerms, labelTerms } from './text';

/** BM25 term-frequency saturation of memory search (lower than the textbook 1.2: memory rows are short). */
export const BM25_K1 = 0.9;
/** BM25 length normalisation of memory search (milder than the textbook 0.75: memory rows are short). */
export const BM25_B = 0.4;
/** Weight of a neighbouring row's own score in a row's final score (relaxed natural-language queries only). */
export const NEIGHBOUR_WEIGHT = 0.6;
/** Factor on the score of the second row before or after (relaxed natural-language queries only). */
export const NEIGHBOUR_DECAY = 0.7;
/** Weight of a query term found in a row's label (`Name: …`), in units of the label field's IDF. */
export const LABEL_WEIGHT = 2;
/** Share of its own score a row that asks a question keeps (relaxed natural-language queries only). */
export const QUESTION_ROW_FACTOR = 0.8;

/** A question mark that ends a sentence: not one inside a URL or a query string (`/search?q=`, `?a=1&b`). */
const QUESTION_MARK = /\?(?![A-Za-z0-9=&%/_-])|？/u;

/** Whether a row asks a question (a `?` that ends a sentence, or a full-width `？`). */
export function asksQuestion(content: string): boolean {
  return QUESTION_MARK.test(content);
}

/**
 * The neighbours' part of a row's score, before {@link NEIGHBOUR_WEIGHT}: the best of the adjacent rows and
 * of the second rows out at {@link NEIGHBOUR_DECAY}. (The sum was measured too: it lifts every row of a run of
 * similar rows above a lone exact match.)
 */
export function combineNeighbours(before: number, after: number, before2: number, after2: number): number {
  let best = before > after ? before : after;
  const far = NEIGHBOUR_DECAY * (before2 > after2 ? before2 : after2);
  if (far > best) best = far;
  return best;
}

/** A leaf of a compiled query: one index term, a prefix over index terms, or a phrase of index terms. */
export type RankLeaf =
  | { readonly kind: 'term'; readonly term: string }
  | { readonly kind: 'prefix'; readonly prefixes: readonly string[] }
  | { readonly kind: 'phrase'; readonly terms: readonly string[] };

/** A query tree over index terms. */
export type RankNode = { readonly kind: 'leaf'; readonly index: number } | { readonly kind: 'and' | 'or'; readonly children: readonly RankNode[] };

/** A query compiled for ranking: its leaves (in order) and the tree that refers to them. */
export interface CompiledQuery {
  readonly leaves: readonly RankLeaf[];
  readonly root: RankNode;
  /** True when the tree has an AND node (the instance rule then applies). */
  readonly hasAnd: boolean;
}

/** Compile a sanitised query tree (unicode61 tokens) to index terms. */
export function compileQuery(node: MemoryQueryNode): CompiledQuery {
  const leaves: RankLeaf[] = [];
  let hasAnd = false;
  const walk = (n: MemoryQueryNode): RankNode => {
    switch (n.kind) {
      case 'term': {
        const leaf: RankLeaf =
          n.prefix === true
            ? { kind: 'prefix', prefixes: [...new Set([n.text, indexTerm(n.text)])] }
            : { kind: 'term', term: indexTerm(n.text) };
        leaves.push(leaf);
        return { kind: 'leaf', index: leaves.length - 1 };
      }
      case 'phrase':
        leaves.push({ kind: 'phrase', terms: n.tokens.map(indexTerm) });
        return { kind: 'leaf', index: leaves.length - 1 };
      case 'and':
      case 'or':
        if (n.kind === 'and') hasAnd = true;
        return { kind: n.kind, children: n.children.map(walk) };
    }
  };
  const root = walk(node);
  return { leaves, root, hasAnd };
}

/** Whether index term `t` is covered by a prefix leaf. */
export function prefixCovers(prefixes: readonly string[], t: string): boolean {
  for (const p of prefixes) if (t.startsWith(p)) return true;
  return false;
}

/** Occurrences of `leaf` in a row's index terms. */
export function leafFrequency(leaf: RankLeaf, terms: readonly string[]): number {
  let n = 0;
  if (leaf.kind === 'term') {
    for (const t of terms) if (t === leaf.term) n++;
    return n;
  }
  if (leaf.kind === 'prefix') {
    for (const t of terms) if (prefixCovers(leaf.prefixes, t)) n++;
    return n;
  }
  const p = leaf.terms;
  if (p.length === 0) return 0;
  outer: for (let i = 0; i + p.length <= terms.length; i++) {
    for (let j = 0; j < p.length; j++) if (terms[i + j] !== p[j]) continue outer;
    n++;
  }
  return n;
}

/**
 * Apply the instance rule in place: zero the frequencies of the leaves under an AND node that fails. Returns
 * whether the root matches (some leaf reachable through satisfied nodes occurs).
 */
export function settleFrequencies(root: RankNode, freqs: Float64Array | number[]): boolean {
  const zero = (n: RankNode): void => {
    if (n.kind === 'leaf') freqs[n.index] = 0;
    else for (const c of n.children) zero(c);
  };
  const visit = (n: RankNode): boolean => {
    if (n.kind === 'leaf') return (freqs[n.index] as number) > 0;
    if (n.kind === 'or') {
      let any = false;
      for (const c of n.children) any = visit(c) || any;
      return any;
    }
    let all = true;
    for (const c of n.children) all = visit(c) && all;
    if (!all) zero(n);
    return all;
  };
  return visit(root);
}

/** The IDF of a leaf held by `n` of `rows` rows. */
export function idf(rows: number, n: number): number {
  return Math.log(1 + (rows - n + 0.5) / (n + 0.5));
}

/** One leaf's BM25 contribution. */
export function termScore(idfValue: number, f: number, length: number, avgLength: number): number {
  if (f <= 0) return 0;
  return (idfValue * (f * (BM25_K1 + 1))) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgLength));
}

/**
 * One leaf's contribution on one row, with the label field: when the leaf's term is in the row's label, one
 * of its `f` occurrences is the label's and scores `LABEL_WEIGHT × labelIdf`, the others score as body text.
 */
export function leafScore(idfValue: number, f: number, length: number, avgLength: number, inLabel: boolean, labelIdf: number): number {
  if (f <= 0) return 0;
  if (!inLabel) return termScore(idfValue, f, length, avgLength);
  return termScore(idfValue, f - 1, length, avgLength) + LABEL_WEIGHT * labelIdf;
}

/** What ranking is asked for. */
export interface RankOptions {
  /** How many of the best rows to return. */
  readonly limit: number;
  /** Only rows of these categories (empty or absent: all). */
  readonly categories?: readonly string[] | undefined;
  /**
   * Add the neighbours' share to every row's score, and let a row rank through it when its own text does not
   * match (relaxed natural-language queries). Off: plain BM25 over the rows whose own text matches.
   */
  readonly neighbours?: boolean | undefined;
  /** Rows to skip (already rejected by the caller). */
  readonly skip?: ((id: number) => boolean) | undefined;
}

/** One stored row, as the ranking sees it. */
export interface RankDoc {
  readonly id: number;
  readonly content: string;
  readonly category: string;
}

/** A ranked id (higher `score` is better). */
export interface RankedId {
  readonly id: number;
  readonly score: number;
}

/** Order of ranked ids: score desc, then id desc. */
export function compareRankedIds(a: RankedId, b: RankedId): number {
  return b.score - a.score || b.id - a.id;
}

/**
 * The reference ranker: every row of the scope scored from scratch. Exact by construction and O(rows ×
 * query); the fast path (`lexical-index.ts`) must return the same ids and scores.
 */
export function rankBruteForce(query: MemoryQueryNode, docs: readonly RankDoc[], options: RankOptions): RankedId[] {
  const q = compileQuery(query);
  const sorted = [...docs].sort((a, b) => a.id - b.id);
  const terms = sorted.map((d) => indexTerms(d.content));
  const labels = sorted.map((d) => new Set(labelTerms(d.content)));
  const asks = sorted.map((d) => asksQuestion(d.content));
  const rows = sorted.length;
  if (rows === 0) return [];
  let total = 0;
  for (const t of terms) total += t.length;
  const avg = total / rows || 1;
  const freqs = terms.map((t) => q.leaves.map((leaf) => leafFrequency(leaf, t)));
  const idfs = q.leaves.map((_, i) => idf(rows, freqs.filter((f) => (f[i] as number) > 0).length));
  const labelOf = (leaf: RankLeaf): string | undefined => (leaf.kind === 'term' ? leaf.term : undefined);
  const labelIdfs = q.leaves.map((leaf) => {
    const t = labelOf(leaf);
    return t === undefined ? 0 : idf(rows, labels.filter((l) => l.has(t)).length);
  });
  const own = new Float64Array(rows);
  const matched = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) {
    const f = [...(freqs[r] as number[])];
    if (!settleFrequencies(q.root, f)) continue;
    matched[r] = 1;
    let s = 0;
    for (let i = 0; i < f.length; i++) {
      const t = labelOf(q.leaves[i] as RankLeaf);
      const inLabel = t !== undefined && (labels[r] as Set<string>).has(t);
      s += leafScore(idfs[i] as number, f[i] as number, (terms[r] as string[]).length, avg, inLabel, labelIdfs[i] as number);
    }
    own[r] = s;
  }
  const cats = options.categories ?? [];
  const out: RankedId[] = [];
  for (let r = 0; r < rows; r++) {
    // Only a neighbour of the same category counts: a preference stored next to a note is not one conversation.
    const near = (o: number) => (o >= 0 && o < rows && (sorted[o] as RankDoc).category === (sorted[r] as RankDoc).category ? (own[o] as number) : 0);
    const neighbourScore = options.neighbours === true ? combineNeighbours(near(r - 1), near(r + 1), near(r - 2), near(r + 2)) : 0;
    const eligible = matched[r] === 1 || neighbourScore > 0;
    if (!eligible) continue;
    const doc = sorted[r] as RankDoc;
    if (cats.length > 0 && !cats.includes(doc.category)) continue;
    if (options.skip?.(doc.id) === true) continue;
    const ownPart = options.neighbours === true && asks[r] === true ? QUESTION_ROW_FACTOR * (own[r] as number) : (own[r] as number);
    out.push({ id: doc.id, score: ownPart + NEIGHBOUR_WEIGHT * neighbourScore });
  }
  return out.sort(compareRankedIds).slice(0, options.limit);
}
