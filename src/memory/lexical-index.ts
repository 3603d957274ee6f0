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
import {
  NEIGHBOUR_WEIGHT,
  QUESTION_ROW_FACTOR,
  asksQuestion,
  leafScore,
  type RankDoc,
  type RankedId,
  type RankLeaf,
  type RankNode,
  type RankOptions,
  combineNeighbours,
  compareRankedIds,
  compileQuery,
  idf,
  prefixCovers,
  settleFrequencies,
} from './lexical-rank';
import { indexTerms, labelTerms } from './text';

interface Postings {
  slots: Int32Array;
  freqs: Int32Array;
  length: number;
  /** Live rows holding the term. */
  df: number;
  /** Live rows whose label holds the term. */
  labelDf: number;
}

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
}

function grow(a: Int32Array, need: number): Int32Array {
  if (need <= a.length) return a;
  const next = new Int32Array(Math.max(need, a.length * 2, 4));
  next.set(a);
  return next;
}

/** A bounded min-heap of the best `k` ranked ids. */
function topK(k: number) {
  const heap: RankedId[] = [];
  const worse = (a: RankedId, b: RankedId) => compareRankedIds(a, b) > 0; // a ranks after b
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(heap[i] as RankedId, heap[p] as RankedId)) break;
      [heap[i], heap[p]] = [heap[p] as RankedId, heap[i] as RankedId];
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l] as RankedId, heap[m] as RankedId)) m = l;
      if (r < heap.length && worse(heap[r] as RankedId, heap[m] as RankedId)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m] as RankedId, heap[i] as RankedId];
      i = m;
    }
  };
  return {
    /** The score an item must beat to enter (−∞ while the heap is not full). */
    threshold(): number {
      return k > 0 && heap.length >= k ? (heap[0] as RankedId).score : Number.NEGATIVE_INFINITY;
    },
    /** Whether an item with this id and score would enter the heap. */
    wouldTake(id: number, score: number): boolean {
      if (k <= 0) return false;
      if (heap.length < k) return true;
      return worse(heap[0] as RankedId, { id, score });
    },
    push(item: RankedId): void {
      if (k <= 0) return;
      if (heap.length < k) {
        heap.push(item);
        up(heap.length - 1);
      } else if (worse(heap[0] as RankedId, item)) {
        heap[0] = item;
        down(0);
      }
    },
    sorted: (): RankedId[] => [...heap].sort(compareRankedIds),
  };
}

/** Create an empty scope index. */
export function createScopeIndex(): ScopeIndex {
  const vocab = new Map<string, number>();
  const postings: Postings[] = [];
  let ids = new Int32Array(1024);
  let lengths = new Int32Array(1024);
  let cats = new Int32Array(1024);
  let alive = new Uint8Array(1024);
  /** 1 when the slot's row asks a question (`asksQuestion`). */
  let asks = new Uint8Array(1024);
  let prev = new Int32Array(1024);
  let next = new Int32Array(1024);
  let docTerms: Array<Int32Array | undefined> = [];
  /** Label term ids per slot (usually none or one). */
  /** The first label term id per slot (−1: no label); the rest of a multi-term label in `labelRest`. */
  let label0 = new Int32Array(1024).fill(-1);
  let labelRest = new Map<number, Int32Array>();
  const labelsOf = (slot: number): Int32Array => {
    const first = label0[slot] as number;
    if (first < 0) return new Int32Array(0);
    const rest = labelRest.get(slot);
    if (rest === undefined) return Int32Array.of(first);
    const all = new Int32Array(rest.length + 1);
    all[0] = first;
    all.set(rest, 1);
    return all;
  };
  const categories: string[] = [];
  const categoryIds = new Map<string, number>();
  const slotOf = new Map<number, number>();
  let slots = 0;
  let live = 0;
  let dead = 0;
  let totalLength = 0;
  let maxId = 0;
  /** Slot of the live row with the highest id, when the neighbour links are in order. */
  let lastSlot = -1;
  let linksValid = true;
  let acc = new Float64Array(1024);
  /** Per-query marks: 1 = matched (in `touched`), 2 = neighbour-only candidate; cleared after each query. */
  let mark = new Uint8Array(1024);

  const termId = (t: string): number => {
    let id = vocab.get(t);
    if (id === undefined) {
      id = postings.length;
      vocab.set(t, id);
      postings.push({ slots: new Int32Array(2), freqs: new Int32Array(2), length: 0, df: 0, labelDf: 0 });
    }
    return id;
  };

  const ensureSlots = (n: number): void => {
    if (n <= ids.length) return;
    const cap = Math.max(n, ids.length * 2);
    const g32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    ids = g32(ids);
    lengths = g32(lengths);
    cats = g32(cats);
    prev = g32(prev);
    next = g32(next);
    const l0 = new Int32Array(cap).fill(-1);
    l0.set(label0);
    label0 = l0;
    const al = new Uint8Array(cap);
    al.set(alive);
    alive = al;
    const as = new Uint8Array(cap);
    as.set(asks);
    asks = as;
  };

  /** Per-term counts of the row being inserted (indexed by term id, zero between rows) and its distinct terms. */
  let counts = new Int32Array(1024);
  const distinct: number[] = [];
  const insertTerms = (slot: number, terms: Int32Array): void => {
    if (counts.length < postings.length) {
      const bigger = new Int32Array(Math.max(postings.length, counts.length * 2));
      bigger.set(counts);
      counts = bigger;
    }
    distinct.length = 0;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i] as number;
      if (counts[t] === 0) distinct.push(t);
      counts[t] = (counts[t] as number) + 1;
    }
    for (const t of distinct) {
      const p = postings[t] as Postings;
      if (p.length === p.slots.length) {
        p.slots = grow(p.slots, p.length + 1);
        p.freqs = grow(p.freqs, p.length + 1);
      }
      p.slots[p.length] = slot;
      p.freqs[p.length] = counts[t] as number;
      p.length++;
      p.df++;
      counts[t] = 0;
    }
  };

  /** Term ids of a list of index terms (new terms are added to the vocabulary). */
  const termIds = (list: readonly string[]): Int32Array => {
    const out = new Int32Array(list.length);
    for (let i = 0; i < list.length; i++) out[i] = termId(list[i] as string);
    return out;
  };

  const addSlot = (id: number, terms: Int32Array, labels: Int32Array, category: string, question: boolean): void => {
    const slot = slots++;
    ensureSlots(slots);
    let cat = categoryIds.get(category);
    if (cat === undefined) {
      cat = categories.length;
      categories.push(category);
      categoryIds.set(category, cat);
    }
    ids[slot] = id;
    lengths[slot] = terms.length;
    cats[slot] = cat;
    alive[slot] = 1;
    asks[slot] = question ? 1 : 0;
    docTerms[slot] = terms;
    label0[slot] = labels.length === 0 ? -1 : (labels[0] as number);
    if (labels.length > 1) labelRest.set(slot, labels.slice(1));
    for (const t of labels) (postings[t] as Postings).labelDf++;
    slotOf.set(id, slot);
    insertTerms(slot, terms);
    live++;
    totalLength += terms.length;
    if (linksValid && id > maxId) {
      prev[slot] = lastSlot;
      next[slot] = -1;
      if (lastSlot >= 0) next[lastSlot] = slot;
      lastSlot = slot;
    } else linksValid = false;
    if (id > maxId) maxId = id;
  };

  /** Rebuild postings and slots from the live rows, in id order (drops dead slots). */
  const compact = (): void => {
    const rows: Array<{ id: number; terms: Int32Array; labels: Int32Array; category: string; question: boolean }> = [];
    for (let s = 0; s < slots; s++) {
      if (alive[s] !== 1) continue;
      rows.push({ id: ids[s] as number, terms: docTerms[s] as Int32Array, labels: labelsOf(s), category: categories[cats[s] as number] as string, question: asks[s] === 1 });
    }
    rows.sort((a, b) => a.id - b.id);
    for (const p of postings) {
      p.length = 0;
      p.df = 0;
      p.labelDf = 0;
    }
    slotOf.clear();
    docTerms = [];
    label0.fill(-1);
    labelRest = new Map();
    slots = 0;
    live = 0;
    dead = 0;
    totalLength = 0;
    lastSlot = -1;
    linksValid = true;
    const keepMax = maxId;
    maxId = 0;
    alive.fill(0);
    for (const r of rows) addSlot(r.id, r.terms, r.labels, r.category, r.question);
    maxId = keepMax;
  };

  /** Relink neighbours in id order (after out-of-order adds or removals). */
  const relink = (): void => {
    const order: number[] = [];
    for (let s = 0; s < slots; s++) if (alive[s] === 1) order.push(s);
    order.sort((a, b) => (ids[a] as number) - (ids[b] as number));
    lastSlot = -1;
    for (const s of order) {
      prev[s] = lastSlot;
      next[s] = -1;
      if (lastSlot >= 0) next[lastSlot] = s;
      lastSlot = s;
    }
    linksValid = true;
  };

  /** A leaf's live postings, slot-ascending, with frequencies. */
  const leafPostings = (leaf: RankLeaf): { slots: Int32Array; freqs: Int32Array; length: number } => {
    const collect = (p: Postings) => {
      const s = new Int32Array(p.df);
      const f = new Int32Array(p.df);
      let n = 0;
      for (let i = 0; i < p.length; i++) {
        const slot = p.slots[i] as number;
        if (alive[slot] === 1) {
          s[n] = slot;
          f[n] = p.freqs[i] as number;
          n++;
        }
      }
      return { slots: s, freqs: f, length: n };
    };
    if (leaf.kind === 'term') {
      const t = vocab.get(leaf.term);
      return t === undefined ? { slots: new Int32Array(0), freqs: new Int32Array(0), length: 0 } : collect(postings[t] as Postings);
    }
    if (leaf.kind === 'prefix') {
      const sum = new Map<number, number>();
      for (const [term, t] of vocab) {
        if (!prefixCovers(leaf.prefixes, term)) continue;
        const p = postings[t] as Postings;
        for (let i = 0; i < p.length; i++) {
          const slot = p.slots[i] as number;
          if (alive[slot] === 1) sum.set(slot, (sum.get(slot) ?? 0) + (p.freqs[i] as number));
        }
      }
      const keys = Int32Array.from(sum.keys()).sort();
      return { slots: keys, freqs: Int32Array.from(keys, (k) => sum.get(k) as number), length: keys.length };
    }
    // Phrase: candidates from its rarest term, verified against each row's terms.
    const termIds = leaf.terms.map((t) => vocab.get(t));
    if (termIds.length === 0 || termIds.some((t) => t === undefined)) return { slots: new Int32Array(0), freqs: new Int32Array(0), length: 0 };
    const tids = termIds as number[];
    let rarest = tids[0] as number;
    for (const t of tids) if ((postings[t] as Postings).df < (postings[rarest] as Postings).df) rarest = t;
    const base = collect(postings[rarest] as Postings);
    const outS = new Int32Array(base.length);
    const outF = new Int32Array(base.length);
    let n = 0;
    for (let i = 0; i < base.length; i++) {
      const slot = base.slots[i] as number;
      const terms = docTerms[slot] as Int32Array;
      let f = 0;
      outer: for (let a = 0; a + tids.length <= terms.length; a++) {
        for (let j = 0; j < tids.length; j++) if (terms[a + j] !== tids[j]) continue outer;
        f++;
      }
      if (f > 0) {
        outS[n] = slot;
        outF[n] = f;
        n++;
      }
    }
    return { slots: outS, freqs: outF, length: n };
  };

  /** Frequency of slot in a leaf's postings (binary search), 0 when absent. */
  const freqAt = (p: { slots: Int32Array; freqs: Int32Array; length: number }, slot: number): number => {
    let lo = 0;
    let hi = p.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = p.slots[mid] as number;
      if (v === slot) return p.freqs[mid] as number;
      if (v < slot) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  };

  /** Slots matching a boolean tree, ascending. */
  const matchSet = (node: RankNode, lists: ReadonlyArray<{ slots: Int32Array; length: number }>): Int32Array => {
    if (node.kind === 'leaf') {
      const l = lists[node.index] as { slots: Int32Array; length: number };
      return l.slots.subarray(0, l.length);
    }
    const sets = node.children.map((c) => matchSet(c, lists));
    if (node.kind === 'and') {
      sets.sort((a, b) => a.length - b.length);
      let cur = sets[0] as Int32Array;
      for (const other of sets.slice(1)) {
        const out: number[] = [];
        let j = 0;
        for (let i = 0; i < cur.length; i++) {
          const v = cur[i] as number;
          while (j < other.length && (other[j] as number) < v) j++;
          if (j < other.length && other[j] === v) out.push(v);
        }
        cur = Int32Array.from(out);
      }
      return cur;
    }
    const all = new Set<number>();
    for (const s of sets) for (const v of s) all.add(v);
    return Int32Array.from(all).sort();
  };

  return {
    get size() {
      return live;
    },
    get termCount() {
      return totalLength;
    },
    get maxId() {
      return maxId;
    },
    has: (id) => slotOf.has(id),

    add(doc) {
      if (slotOf.has(doc.id)) throw new Error(`row ${doc.id} is already indexed`);
      addSlot(doc.id, termIds(indexTerms(doc.content)), termIds(labelTerms(doc.content)), doc.category, asksQuestion(doc.content));
    },

    remove(id) {
      const slot = slotOf.get(id);
      if (slot === undefined) return;
      slotOf.delete(id);
      alive[slot] = 0;
      live--;
      dead++;
      totalLength -= lengths[slot] as number;
      for (const t of new Set(docTerms[slot] as Int32Array)) (postings[t] as Postings).df--;
      for (const t of labelsOf(slot)) (postings[t] as Postings).labelDf--;
      docTerms[slot] = undefined;
      label0[slot] = -1;
      labelRest.delete(slot);
      linksValid = false;
      if (dead > 1024 && dead > live / 4) compact();
    },

    rank(query, options) {
      if (live === 0) return [];
      const q = compileQuery(query);
      const lists = q.leaves.map(leafPostings);
      const avg = totalLength / live || 1;
      const idfs = lists.map((l) => idf(live, l.length));
      // The label field: a term leaf's term id (−1 for other leaves, unknown terms and terms no live label holds,
      // so most postings skip the label lookup) and its label IDF.
      const labelTerm = q.leaves.map((leaf) => {
        const t = leaf.kind === 'term' ? (vocab.get(leaf.term) ?? -1) : -1;
        return t >= 0 && (postings[t] as Postings).labelDf > 0 ? t : -1;
      });
      const labelIdfs = labelTerm.map((t) => (t < 0 ? 0 : idf(live, (postings[t] as Postings).labelDf)));
      const inLabel = (i: number, slot: number): boolean => {
        const t = labelTerm[i] as number;
        if (t < 0) return false;
        if (label0[slot] === t) return true;
        if (labelRest.size === 0) return false;
        return labelRest.get(slot)?.includes(t) === true;
      };
      if (acc.length < slots) acc = new Float64Array(Math.max(slots, acc.length * 2));
      if (mark.length < slots) mark = new Uint8Array(acc.length);
      const touched: number[] = [];
      if (!q.hasAnd) {
        // Term at a time: every leaf adds its contribution to the rows that hold it, in leaf order (the same
        // additions, in the same order, as the reference ranker makes per row).
        const seen = new Uint8Array(slots);
        for (let i = 0; i < lists.length; i++) {
          const l = lists[i] as { slots: Int32Array; freqs: Int32Array; length: number };
          const w = idfs[i] as number;
          for (let k = 0; k < l.length; k++) {
            const slot = l.slots[k] as number;
            if (seen[slot] === 0) {
              seen[slot] = 1;
              touched.push(slot);
              // Leaves before this one contributed 0 to this row: start from 0 + … exactly as the reference.
              acc[slot] = 0;
            }
            acc[slot] = (acc[slot] as number) + leafScore(w, l.freqs[k] as number, lengths[slot] as number, avg, inLabel(i, slot), labelIdfs[i] as number);
          }
        }
      } else {
        const freqs = new Float64Array(lists.length);
        for (const slot of matchSet(q.root, lists)) {
          for (let i = 0; i < lists.length; i++) freqs[i] = freqAt(lists[i] as { slots: Int32Array; freqs: Int32Array; length: number }, slot);
          if (!settleFrequencies(q.root, freqs)) continue;
          let s = 0;
          for (let i = 0; i < lists.length; i++) s += leafScore(idfs[i] as number, freqs[i] as number, lengths[slot] as number, avg, inLabel(i, slot), labelIdfs[i] as number);
          acc[slot] = s;
          touched.push(slot);
        }
      }
      for (const slot of touched) mark[slot] = 1;
      const own = (slot: number): number => (slot >= 0 && mark[slot] === 1 ? (acc[slot] as number) : 0);
      const wanted = options.categories ?? [];
      const catIds = wanted.length === 0 ? undefined : new Set(wanted.map((c) => categoryIds.get(c) ?? -1));
      const heap = topK(options.limit);
      // Only a neighbour of the same category counts (see lexical-rank.ts). No closure is made per row: this runs
      // for every matching row and its neighbours.
      const near = (o: number, cat: number): number => (o >= 0 && cats[o] === cat ? own(o) : 0);
      const consider = (slot: number, matched: boolean): void => {
        if (catIds !== undefined && !catIds.has(cats[slot] as number)) return;
        let score = acc[slot] as number;
        if (options.neighbours === true) {
          const cat = cats[slot] as number;
          const p = prev[slot] as number;
          const n = next[slot] as number;
          const around = combineNeighbours(near(p, cat), near(n, cat), near(p >= 0 ? (prev[p] as number) : -1, cat), near(n >= 0 ? (next[n] as number) : -1, cat));
          if (!matched && around <= 0) return;
          const ownPart = !matched ? 0 : asks[slot] === 1 ? QUESTION_ROW_FACTOR * score : score;
          score = ownPart + NEIGHBOUR_WEIGHT * around;
        }
        const id = ids[slot] as number;
        if (!heap.wouldTake(id, score)) return;
        if (options.skip?.(id) === true) return;
        heap.push({ id, score });
      };
      const neighbourOnly = (n: number): void => {
        if (n >= 0 && mark[n] === 0) {
          mark[n] = 2; // considered once as a neighbour-only row
          touched.push(n);
          consider(n, false);
        }
      };
      try {
        if (options.neighbours === true) {
          if (!linksValid) relink();
          const matchedCount = touched.length;
          for (let i = 0; i < matchedCount; i++) consider(touched[i] as number, true);
          // Rows that match nothing themselves score NEIGHBOUR_WEIGHT × their best (decayed) neighbour, so a
          // matching row can lift them at most to NEIGHBOUR_WEIGHT × its own score: when that is below the heap's
          // threshold its neighbours are skipped here (a stronger neighbour of theirs still visits them).
          for (let i = 0; i < matchedCount; i++) {
            const slot = touched[i] as number;
            if (NEIGHBOUR_WEIGHT * (acc[slot] as number) < heap.threshold()) continue;
            const p = prev[slot] as number;
            const n = next[slot] as number;
            neighbourOnly(p);
            neighbourOnly(n);
            if (p >= 0) neighbourOnly(prev[p] as number);
            if (n >= 0) neighbourOnly(next[n] as number);
          }
        } else {
          for (const slot of touched) consider(slot, true);
        }
      } finally {
        for (const slot of touched) mark[slot] = 0;
      }
      return heap.sorted();
    },
  };
}
