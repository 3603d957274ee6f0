/**
 * Ranking over a scope index's state (`lexical-index-state.ts`): each leaf's postings, the boolean match set,
 * the per-row scores and the top k with the neighbour share, exactly as `rankBruteForce` of `lexical-rank.ts`.
 */
import type { MemoryQueryNode } from '../storage/memory-types';
import {
  NEIGHBOUR_WEIGHT,
  QUESTION_ROW_FACTOR,
  leafScore,
  type RankedId,
  type RankLeaf,
  type RankNode,
  type RankOptions,
  combineNeighbours,
  compareRankedIds,
  compileQuery,
  idf,
  settleFrequencies,
} from './lexical-rank';
import { type IndexState, type Postings, eachTermWithPrefix, findTerm, grow, post, relink } from './lexical-index-state';

interface LeafList {
  slots: Int32Array;
  freqs: Int32Array;
  length: number;
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
type TopK = ReturnType<typeof topK>;

const emptyList = (): LeafList => ({ slots: new Int32Array(0), freqs: new Int32Array(0), length: 0 });

/** A term's live postings, slot-ascending, with frequencies. */
function livePostings(s: IndexState, p: Postings): LeafList {
  const out = new Int32Array(p.df);
  const f = new Int32Array(p.df);
  let n = 0;
  for (let i = 0; i < p.length; i++) {
    const slot = p.slots[i] as number;
    if (s.alive[slot] === 1) {
      out[n] = slot;
      f[n] = p.freqs[i] as number;
      n++;
    }
  }
  return { slots: out, freqs: f, length: n };
}

/** A prefix leaf's live postings: the frequencies of every term under its prefixes, summed per slot. */
function prefixPostings(s: IndexState, prefixes: readonly string[]): LeafList {
  const terms: number[] = [];
  eachTermWithPrefix(s, prefixes, (t) => void terms.push(t));
  if (terms.length === 0) return emptyList();
  // One term: its live postings, already in slot order.
  if (terms.length === 1) return livePostings(s, post(s, terms[0] as number));
  // Several: frequencies summed per slot in a dense array (every frequency is ≥ 1, so 0 is "not yet seen").
  const sum = new Int32Array(s.slots);
  let touched: Int32Array = new Int32Array(64);
  let n = 0;
  for (const t of terms) {
    const p = post(s, t);
    for (let i = 0; i < p.length; i++) {
      const slot = p.slots[i] as number;
      if (s.alive[slot] !== 1) continue;
      if (sum[slot] === 0) {
        if (n === touched.length) touched = grow(touched, n + 1);
        touched[n++] = slot;
      }
      sum[slot] = (sum[slot] as number) + (p.freqs[i] as number);
    }
  }
  const slots = touched.slice(0, n).sort();
  return { slots, freqs: Int32Array.from(slots, (slot) => sum[slot] as number), length: n };
}

/** A phrase leaf's postings: candidates from its rarest term, verified against each row's terms. */
function phrasePostings(s: IndexState, terms: readonly string[]): LeafList {
  const termIds = terms.map((t) => findTerm(s, t));
  if (termIds.length === 0 || termIds.some((t) => t === undefined)) return emptyList();
  const tids = termIds as number[];
  let rarest = tids[0] as number;
  for (const t of tids) if (post(s, t).df < post(s, rarest).df) rarest = t;
  const cand = livePostings(s, post(s, rarest));
  const { store, docStart, lengths } = s;
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
}

/** A leaf's live postings, slot-ascending, with frequencies. */
function leafPostings(s: IndexState, leaf: RankLeaf): LeafList {
  if (leaf.kind === 'term') {
    const t = findTerm(s, leaf.term);
    return t === undefined ? emptyList() : livePostings(s, post(s, t));
  }
  if (leaf.kind === 'prefix') return prefixPostings(s, leaf.prefixes);
  return phrasePostings(s, leaf.terms);
}

/** Frequency of slot in a leaf's postings (binary search), 0 when absent. */
function freqAt(p: LeafList, slot: number): number {
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
}

/** Slots matching a boolean tree, ascending. */
function matchSet(node: RankNode, lists: ReadonlyArray<{ slots: Int32Array; length: number }>): Int32Array {
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
  for (const set of sets) for (const v of set) all.add(v);
  return Int32Array.from(all).sort();
}

/** What scoring a query needs per leaf: its postings, IDF, and the label field (term id or −1, label IDF). */
interface Scoring {
  lists: LeafList[];
  idfs: number[];
  avg: number;
  inLabel: (i: number, slot: number) => boolean;
  labelIdfs: number[];
}

function scoringOf(s: IndexState, leaves: readonly RankLeaf[]): Scoring {
  const { live, label0, labelRest } = s;
  const lists = leaves.map((leaf) => leafPostings(s, leaf));
  // The label field: a term leaf's term id (−1 for other leaves, unknown terms and terms no live label holds,
  // so most postings skip the label lookup) and its label IDF.
  const labelTerm = leaves.map((leaf) => {
    const t = leaf.kind === 'term' ? (findTerm(s, leaf.term) ?? -1) : -1;
    return t >= 0 && post(s, t).labelDf > 0 ? t : -1;
  });
  const inLabel = (i: number, slot: number): boolean => {
    const t = labelTerm[i] as number;
    if (t < 0) return false;
    if (label0[slot] === t) return true;
    if (labelRest.size === 0) return false;
    return labelRest.get(slot)?.includes(t) === true;
  };
  return {
    lists,
    idfs: lists.map((l) => idf(live, l.length)),
    avg: s.totalLength / live || 1,
    inLabel,
    labelIdfs: labelTerm.map((t) => (t < 0 ? 0 : idf(live, post(s, t).labelDf))),
  };
}

/**
 * Term at a time: every leaf adds its contribution to the rows that hold it, in leaf order (the same additions,
 * in the same order, as the reference ranker makes per row). Returns the matched slots.
 */
function scoreTermAtATime(s: IndexState, sc: Scoring): number[] {
  const { acc, lengths } = s;
  const touched: number[] = [];
  const seen = new Uint8Array(s.slots);
  for (let i = 0; i < sc.lists.length; i++) {
    const l = sc.lists[i] as LeafList;
    const w = sc.idfs[i] as number;
    const lw = sc.labelIdfs[i] as number;
    for (let k = 0; k < l.length; k++) {
      const slot = l.slots[k] as number;
      if (seen[slot] === 0) {
        seen[slot] = 1;
        touched.push(slot);
        // Leaves before this one contributed 0 to this row: start from 0 + … exactly as the reference.
        acc[slot] = 0;
      }
      acc[slot] = (acc[slot] as number) + leafScore(w, l.freqs[k] as number, lengths[slot] as number, sc.avg, sc.inLabel(i, slot), lw);
    }
  }
  return touched;
}

/** A query with AND: the rows of the match set whose frequencies settle, scored row at a time. */
function scoreBoolean(s: IndexState, root: RankNode, sc: Scoring): number[] {
  const { acc, lengths } = s;
  const { lists } = sc;
  const touched: number[] = [];
  const freqs = new Float64Array(lists.length);
  for (const slot of matchSet(root, lists)) {
    for (let i = 0; i < lists.length; i++) freqs[i] = freqAt(lists[i] as LeafList, slot);
    if (!settleFrequencies(root, freqs)) continue;
    let score = 0;
    for (let i = 0; i < lists.length; i++) score += leafScore(sc.idfs[i] as number, freqs[i] as number, lengths[slot] as number, sc.avg, sc.inLabel(i, slot), sc.labelIdfs[i] as number);
    acc[slot] = score;
    touched.push(slot);
  }
  return touched;
}

/** Offer the scored rows (and, with neighbours, the rows around them) to the heap; clears the marks. */
function selectTop(s: IndexState, touched: number[], options: RankOptions, heap: TopK): void {
  const { acc, mark, cats, prev, next, asks, ids } = s;
  for (const slot of touched) mark[slot] = 1;
  const own = (slot: number): number => (slot >= 0 && mark[slot] === 1 ? (acc[slot] as number) : 0);
  const wanted = options.categories ?? [];
  const catIds = wanted.length === 0 ? undefined : new Set(wanted.map((c) => s.categoryIds.get(c) ?? -1));
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
}

/** The best rows for `query`, exactly as `rankBruteForce` of `lexical-rank.ts` ranks them. */
export function rankIndex(s: IndexState, query: MemoryQueryNode, options: RankOptions): RankedId[] {
  if (s.live === 0) return [];
  const q = compileQuery(query);
  const sc = scoringOf(s, q.leaves);
  if (s.acc.length < s.slots) s.acc = new Float64Array(Math.max(s.slots, s.acc.length * 2));
  if (s.mark.length < s.slots) s.mark = new Uint8Array(s.acc.length);
  const touched = !q.hasAnd ? scoreTermAtATime(s, sc) : scoreBoolean(s, q.root, sc);
  // The links are read by selectTop: relink before it takes its views of prev/next (relink writes in place).
  if (options.neighbours === true && !s.linksValid) relink(s);
  const heap = topK(options.limit);
  selectTop(s, touched, options, heap);
  return heap.sorted();
}
