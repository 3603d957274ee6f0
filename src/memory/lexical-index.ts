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
  /** The live rows in a compact, id-ordered form (a snapshot persists it; see `lexical-snapshot.ts`). */
  state(): ScopeIndexState;
}

/**
 * An index's content without its postings (they are derived): the live rows in id order, each row's index
 * terms and label terms as ids into `terms`, its category as an index into `categories`, and whether it asks a
 * question. {@link createScopeIndex} rebuilds an index from it without tokenising any text.
 */
export interface ScopeIndexState {
  /** The vocabulary, term id → index term, strictly ascending (JavaScript string order): found by binary search. */
  readonly terms: readonly string[];
  /** Category id → category. */
  readonly categories: readonly string[];
  /** Row ids, strictly ascending. */
  readonly ids: Int32Array;
  /** Rows holding each term (its document frequency), term id → count. */
  readonly df: Int32Array;
  /** Row r's index terms are `termIds[termOffsets[r] .. termOffsets[r + 1])`; `rows + 1` entries. */
  readonly termOffsets: Int32Array;
  readonly termIds: Int32Array;
  /** Row r's label terms are `labelIds[labelOffsets[r] .. labelOffsets[r + 1])`; `rows + 1` entries. */
  readonly labelOffsets: Int32Array;
  readonly labelIds: Int32Array;
  /** Category id per row. */
  readonly cats: Int32Array;
  /** 1 when the row asks a question. */
  readonly asks: Uint8Array;
  /** Highest id ever added (may exceed the last row's id when the newest rows were removed). */
  readonly maxId: number;
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

/**
 * Create a scope index: empty, or restored from a {@link ScopeIndexState} without tokenising any text. A state
 * that is inconsistent in any way (out-of-range ids, wrong document frequencies, ids out of order) throws.
 */
export function createScopeIndex(from?: ScopeIndexState): ScopeIndex {
  /** Term id → index term. */
  let names: string[] = [];
  /**
   * The terms of a restored state are `names[0 .. sortedTerms)`, in ascending order, and are found by binary
   * search (no map of a large vocabulary to build on load); `vocab` maps every later term to its id.
   */
  let sortedTerms = 0;
  const vocab = new Map<string, number>();
  const findTerm = (t: string): number | undefined => {
    const id = vocab.get(t);
    if (id !== undefined || sortedTerms === 0) return id;
    let lo = 0;
    let hi = sortedTerms - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = names[mid] as string;
      if (v === t) return mid;
      if (v < t) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  };
  /** Calls `fn` with the id of every term that starts with one of `prefixes`. */
  const eachTermWithPrefix = (prefixes: readonly string[], fn: (t: number) => void): void => {
    // The sorted part: the range of each prefix (a term under two prefixes is visited once).
    const seen = new Set<number>();
    for (const prefix of prefixes) {
      let lo = 0;
      let hi = sortedTerms;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((names[mid] as string) < prefix) lo = mid + 1;
        else hi = mid;
      }
      for (let t = lo; t < sortedTerms && (names[t] as string).startsWith(prefix); t++) {
        if (prefixes.length > 1) {
          if (seen.has(t)) continue;
          seen.add(t);
        }
        fn(t);
      }
    }
    for (const [term, t] of vocab) if (prefixCovers(prefixes, term)) fn(t);
  };
  /** Term id → its postings; `undefined` for a term of a restored state not touched since (see `post`). */
  const postings: Array<Postings | undefined> = [];
  /**
   * The postings of a restored state, in one flat array (`start[t]..start[t + 1]` per term): one allocation
   * instead of two typed arrays per term. A term's own {@link Postings} views its range when first touched.
   */
  let base: { start: Int32Array; slots: Int32Array; freqs: Int32Array; df: Int32Array; labelDf: Int32Array } | undefined;
  const post = (t: number): Postings => {
    let p = postings[t];
    if (p === undefined) {
      const b = base as NonNullable<typeof base>;
      const from = b.start[t] as number;
      const to = b.start[t + 1] as number;
      p = { slots: b.slots.subarray(from, to), freqs: b.freqs.subarray(from, to), length: to - from, df: b.df[t] as number, labelDf: b.labelDf[t] as number };
      postings[t] = p;
    }
    return p;
  };
  let ids = new Int32Array(1024);
  let lengths = new Int32Array(1024);
  let cats = new Int32Array(1024);
  let alive = new Uint8Array(1024);
  /** 1 when the slot's row asks a question (`asksQuestion`). */
  let asks = new Uint8Array(1024);
  let prev = new Int32Array(1024);
  let next = new Int32Array(1024);
  /** Every slot's index term ids, back to back: slot s holds `store[docStart[s] .. docStart[s] + lengths[s])`. */
  let store: Int32Array<ArrayBufferLike> = new Int32Array(4096);
  let storeLength = 0;
  let docStart = new Int32Array(1024);
  const termsOf = (slot: number): Int32Array => store.subarray(docStart[slot] as number, (docStart[slot] as number) + (lengths[slot] as number));
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
  /**
   * Slots `0 .. ordered)` hold ascending ids (rows added in id order, the usual case) and are found by binary
   * search; a row added out of order (a changed row read again) is found through `outOfOrder`.
   */
  let ordered = 0;
  const outOfOrder = new Map<number, number>();
  /** The live slot of `id`, or −1. */
  const slotOf = (id: number): number => {
    const o = outOfOrder.get(id);
    if (o !== undefined) return o;
    let lo = 0;
    let hi = ordered - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = ids[mid] as number;
      if (v === id) return alive[mid] === 1 ? mid : -1;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };
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
    let id = findTerm(t);
    if (id === undefined) {
      id = postings.length;
      vocab.set(t, id);
      names.push(t);
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
    docStart = g32(docStart);
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
      const p = post(t);
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
    if (storeLength + terms.length > store.length) {
      const bigger = new Int32Array(Math.max(storeLength + terms.length, store.length * 2));
      bigger.set(store.subarray(0, storeLength));
      store = bigger;
    }
    docStart[slot] = storeLength;
    store.set(terms, storeLength);
    storeLength += terms.length;
    label0[slot] = labels.length === 0 ? -1 : (labels[0] as number);
    if (labels.length > 1) labelRest.set(slot, labels.slice(1));
    for (const t of labels) post(t).labelDf++;
    if (slot === ordered && (slot === 0 || id > (ids[slot - 1] as number))) ordered++;
    else outOfOrder.set(id, slot);
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
      rows.push({ id: ids[s] as number, terms: termsOf(s), labels: labelsOf(s), category: categories[cats[s] as number] as string, question: asks[s] === 1 });
    }
    rows.sort((a, b) => a.id - b.id);
    for (let t = 0; t < postings.length; t++) {
      const p = postings[t];
      if (p === undefined) postings[t] = { slots: new Int32Array(2), freqs: new Int32Array(2), length: 0, df: 0, labelDf: 0 };
      else {
        p.length = 0;
        p.df = 0;
        p.labelDf = 0;
      }
    }
    base = undefined;
    ordered = 0;
    outOfOrder.clear();
    store = new Int32Array(Math.max(4096, storeLength));
    storeLength = 0;
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
      const t = findTerm(leaf.term);
      return t === undefined ? { slots: new Int32Array(0), freqs: new Int32Array(0), length: 0 } : collect(post(t));
    }
    if (leaf.kind === 'prefix') {
      const sum = new Map<number, number>();
      eachTermWithPrefix(leaf.prefixes, (t) => {
        const p = post(t);
        for (let i = 0; i < p.length; i++) {
          const slot = p.slots[i] as number;
          if (alive[slot] === 1) sum.set(slot, (sum.get(slot) ?? 0) + (p.freqs[i] as number));
        }
      });
      const keys = Int32Array.from(sum.keys()).sort();
      return { slots: keys, freqs: Int32Array.from(keys, (k) => sum.get(k) as number), length: keys.length };
    }
    // Phrase: candidates from its rarest term, verified against each row's terms.
    const termIds = leaf.terms.map((t) => findTerm(t));
    if (termIds.length === 0 || termIds.some((t) => t === undefined)) return { slots: new Int32Array(0), freqs: new Int32Array(0), length: 0 };
    const tids = termIds as number[];
    let rarest = tids[0] as number;
    for (const t of tids) if (post(t).df < post(rarest).df) rarest = t;
    const cand = collect(post(rarest));
    const outS = new Int32Array(cand.length);
    const outF = new Int32Array(cand.length);
    let n = 0;
    for (let i = 0; i < cand.length; i++) {
      const slot = cand.slots[i] as number;
      const from = docStart[slot] as number;
      const length = lengths[slot] as number;
      let f = 0;
      outer: for (let a = 0; a + tids.length <= length; a++) {
        for (let j = 0; j < tids.length; j++) if (store[from + a + j] !== tids[j]) continue outer;
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

  /**
   * Load a state into the (empty) index: slots in id order, the postings into one flat array (each term's range
   * sized by its `df`). Checks the state as it goes (ids ascending, offsets monotone, every id in range, the
   * document frequencies exact) and throws on the first inconsistency; the caller then rebuilds from the rows.
   */
  function restore(st: ScopeIndexState): void {
    const n = st.ids.length;
    const nTerms = st.terms.length;
    const bad = (what: string): never => {
      throw new Error(`inconsistent index state: ${what}`);
    };
    if (st.df.length !== nTerms || st.cats.length !== n || st.asks.length !== n || st.termOffsets.length !== n + 1 || st.labelOffsets.length !== n + 1) bad('section lengths');
    for (let t = 1; t < nTerms; t++) if (!((st.terms[t - 1] as string) < (st.terms[t] as string))) bad('terms out of order');
    names = st.terms.slice();
    sortedTerms = nTerms;
    for (let c = 0; c < st.categories.length; c++) categoryIds.set(st.categories[c] as string, c);
    if (categoryIds.size !== st.categories.length) bad('duplicate categories');
    categories.push(...st.categories);
    postings.length = nTerms;
    ensureSlots(n);
    const start = new Int32Array(nTerms + 1);
    for (let t = 0; t < nTerms; t++) {
      const d = st.df[t] as number;
      if (d < 1 || d > n) bad('document frequency');
      start[t + 1] = (start[t] as number) + d;
    }
    const fill = start.slice(0, nTerms);
    const flatSlots = new Int32Array(start[nTerms] as number);
    const flatFreqs = new Int32Array(start[nTerms] as number);
    const labelDf = new Int32Array(nTerms);
    // The row a term's latest posting belongs to, and where that posting is (a repeat adds to its frequency).
    const seenAt = new Int32Array(nTerms).fill(-1);
    const lastAt = new Int32Array(nTerms);
    if (st.termOffsets[0] !== 0 || st.labelOffsets[0] !== 0 || st.termOffsets[n] !== st.termIds.length || st.labelOffsets[n] !== st.labelIds.length) bad('offsets');
    let lastId = 0;
    for (let r = 0; r < n; r++) {
      const from = st.termOffsets[r] as number;
      const to = st.termOffsets[r + 1] as number;
      if (to < from) bad('offsets');
      for (let k = from; k < to; k++) {
        const t = st.termIds[k] as number;
        if (t >>> 0 >= nTerms) bad('term id');
        if (seenAt[t] !== r) {
          seenAt[t] = r;
          const at = fill[t] as number;
          if (at >= (start[t + 1] as number)) bad('document frequency');
          fill[t] = at + 1;
          lastAt[t] = at;
          flatSlots[at] = r;
          flatFreqs[at] = 1;
        } else flatFreqs[lastAt[t] as number] = (flatFreqs[lastAt[t] as number] as number) + 1;
      }
      const id = st.ids[r] as number;
      if (id <= lastId) bad('ids not ascending');
      lastId = id;
      const cat = st.cats[r] as number;
      if (cat >>> 0 >= st.categories.length || (st.asks[r] as number) > 1) bad('category or flag');
      ids[r] = id;
      lengths[r] = to - from;
      cats[r] = cat;
      alive[r] = 1;
      asks[r] = st.asks[r] as number;
      docStart[r] = from;
      const l0 = st.labelOffsets[r] as number;
      const l1 = st.labelOffsets[r + 1] as number;
      if (l1 < l0) bad('offsets');
      if (l1 > l0) {
        for (let k = l0; k < l1; k++) {
          const t = st.labelIds[k] as number;
          if (t >>> 0 >= nTerms) bad('label id');
          for (let j = l0; j < k; j++) if (st.labelIds[j] === t) bad('label repeats a term');
          labelDf[t] = (labelDf[t] as number) + 1;
        }
        label0[r] = st.labelIds[l0] as number;
        if (l1 - l0 > 1) labelRest.set(r, st.labelIds.slice(l0 + 1, l1));
      }
      prev[r] = r - 1;
      next[r] = r + 1 < n ? r + 1 : -1;
      totalLength += to - from;
    }
    for (let t = 0; t < nTerms; t++) if (fill[t] !== start[t + 1]) bad('document frequency');
    if (st.maxId < lastId) bad('maxId');
    base = { start, slots: flatSlots, freqs: flatFreqs, df: st.df.slice(), labelDf };
    store = st.termIds;
    storeLength = st.termIds.length;
    slots = n;
    ordered = n;
    live = n;
    lastSlot = n - 1;
    linksValid = true;
    maxId = st.maxId;
  }

  if (from !== undefined) restore(from);

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
    has: (id) => slotOf(id) >= 0,

    add(doc) {
      if (slotOf(doc.id) >= 0) throw new Error(`row ${doc.id} is already indexed`);
      addSlot(doc.id, termIds(indexTerms(doc.content)), termIds(labelTerms(doc.content)), doc.category, asksQuestion(doc.content));
    },

    remove(id) {
      const slot = slotOf(id);
      if (slot < 0) return;
      outOfOrder.delete(id);
      alive[slot] = 0;
      live--;
      dead++;
      totalLength -= lengths[slot] as number;
      for (const t of new Set(termsOf(slot))) post(t).df--;
      for (const t of labelsOf(slot)) post(t).labelDf--;
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
        const t = leaf.kind === 'term' ? (findTerm(leaf.term) ?? -1) : -1;
        return t >= 0 && post(t).labelDf > 0 ? t : -1;
      });
      const labelIdfs = labelTerm.map((t) => (t < 0 ? 0 : idf(live, post(t).labelDf)));
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

    state() {
      const order: number[] = [];
      for (let s = 0; s < slots; s++) if (alive[s] === 1) order.push(s);
      order.sort((a, b) => (ids[a] as number) - (ids[b] as number));
      // A compact vocabulary (only the terms live rows hold) in ascending order, and the categories in use.
      const used = new Uint8Array(postings.length);
      let termTotal = 0;
      let labelTotal = 0;
      for (const s of order) {
        const from = docStart[s] as number;
        const to = from + (lengths[s] as number);
        for (let i = from; i < to; i++) used[store[i] as number] = 1;
        termTotal += to - from;
        if ((label0[s] as number) >= 0) {
          used[label0[s] as number] = 1;
          labelTotal++;
          const rest = labelRest.get(s);
          if (rest !== undefined) {
            for (const t of rest) used[t] = 1;
            labelTotal += rest.length;
          }
        }
      }
      const live: number[] = [];
      for (let t = 0; t < used.length; t++) if (used[t] === 1) live.push(t);
      live.sort((a, b) => ((names[a] as string) < (names[b] as string) ? -1 : 1));
      const remap = new Int32Array(postings.length);
      const df = new Int32Array(live.length);
      const terms = live.map((t, i) => {
        remap[t] = i;
        df[i] = postings[t]?.df ?? ((base as NonNullable<typeof base>).df[t] as number);
        return names[t] as string;
      });
      const catRemap = new Int32Array(categories.length).fill(-1);
      const catNames: string[] = [];
      const n = order.length;
      const outIds = new Int32Array(n);
      const termOffsets = new Int32Array(n + 1);
      const labelOffsets = new Int32Array(n + 1);
      const outCats = new Int32Array(n);
      const outAsks = new Uint8Array(n);
      const termIdsOut = new Int32Array(termTotal);
      const labelIdsOut = new Int32Array(labelTotal);
      let tk = 0;
      let lk = 0;
      for (let r = 0; r < n; r++) {
        const s = order[r] as number;
        outIds[r] = ids[s] as number;
        const from = docStart[s] as number;
        const to = from + (lengths[s] as number);
        for (let i = from; i < to; i++) termIdsOut[tk++] = remap[store[i] as number] as number;
        termOffsets[r + 1] = tk;
        if ((label0[s] as number) >= 0) {
          labelIdsOut[lk++] = remap[label0[s] as number] as number;
          const rest = labelRest.size === 0 ? undefined : labelRest.get(s);
          if (rest !== undefined) for (let i = 0; i < rest.length; i++) labelIdsOut[lk++] = remap[rest[i] as number] as number;
        }
        labelOffsets[r + 1] = lk;
        const c = cats[s] as number;
        if ((catRemap[c] as number) < 0) {
          catRemap[c] = catNames.length;
          catNames.push(categories[c] as string);
        }
        outCats[r] = catRemap[c] as number;
        outAsks[r] = asks[s] as number;
      }
      return { terms, categories: catNames, df, ids: outIds, termOffsets, termIds: termIdsOut, labelOffsets, labelIds: labelIdsOut, cats: outCats, asks: outAsks, maxId };
    },
  };
}
