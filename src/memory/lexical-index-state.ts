/**
 * The state of one scope index (`lexical-index.ts`) and the functions that keep it: the vocabulary, the
 * postings, the slots of the rows and their neighbour links. Ranking reads it (`lexical-index-rank.ts`), a
 * snapshot loads and saves it (`lexical-index-io.ts`).
 */
import { indexTerms, labelTerms } from './text';
import { type RankDoc, asksQuestion, prefixCovers } from './lexical-rank';

export interface Postings {
  slots: Int32Array;
  freqs: Int32Array;
  length: number;
  /** Live rows holding the term. */
  df: number;
  /** Live rows whose label holds the term. */
  labelDf: number;
}

/**
 * An index's content without its postings (they are derived): the live rows in id order, each row's index
 * terms and label terms as ids into `terms`, its category as an index into `categories`, and whether it asks a
 * question. `createScopeIndex` rebuilds an index from it without tokenising any text.
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

/** The postings of a restored state in one flat array (`start[t]..start[t + 1]` per term). */
export interface BasePostings {
  start: Int32Array;
  slots: Int32Array;
  freqs: Int32Array;
  df: Int32Array;
  labelDf: Int32Array;
}

/** Everything one scope index holds; the functions of this file and its siblings read and change it. */
export interface IndexState {
  /** Term id → index term. */
  names: string[];
  /**
   * The terms of a restored state are `names[0 .. sortedTerms)`, in ascending order, and are found by binary
   * search (no map of a large vocabulary to build on load); `vocab` maps every later term to its id.
   */
  sortedTerms: number;
  vocab: Map<string, number>;
  /**
   * The ids of the terms after `sortedTerms` (every term of an index built from rows), in ascending order of the
   * term, as of `names.length === upTo`: prefix lookups search it instead of testing the whole vocabulary. Built on
   * the first prefix lookup and again once the terms added since outnumber an eighth of it (see {@link eachTermWithPrefix}).
   */
  tail?: { readonly names: readonly string[]; readonly from: number; readonly upTo: number; readonly ids: Int32Array } | undefined;
  /** Term id → its postings; `undefined` for a term of a restored state not touched since (see {@link post}). */
  postings: Array<Postings | undefined>;
  /**
   * The postings of a restored state, in one flat array: one allocation instead of two typed arrays per term.
   * A term's own {@link Postings} views its range when first touched.
   */
  base: BasePostings | undefined;
  ids: Int32Array;
  lengths: Int32Array;
  cats: Int32Array;
  alive: Uint8Array;
  /** 1 when the slot's row asks a question (`asksQuestion`). */
  asks: Uint8Array;
  prev: Int32Array;
  next: Int32Array;
  /** Every slot's index term ids, back to back: slot s holds `store[docStart[s] .. docStart[s] + lengths[s])`. */
  store: Int32Array<ArrayBufferLike>;
  storeLength: number;
  docStart: Int32Array;
  /** The first label term id per slot (−1: no label); the rest of a multi-term label in `labelRest`. */
  label0: Int32Array;
  labelRest: Map<number, Int32Array>;
  categories: string[];
  categoryIds: Map<string, number>;
  /**
   * Slots `0 .. ordered)` hold ascending ids (rows added in id order, the usual case) and are found by binary
   * search; a row added out of order (a changed row read again) is found through `outOfOrder`.
   */
  ordered: number;
  outOfOrder: Map<number, number>;
  slots: number;
  live: number;
  dead: number;
  totalLength: number;
  maxId: number;
  /** Slot of the live row with the highest id, when the neighbour links are in order. */
  lastSlot: number;
  linksValid: boolean;
  acc: Float64Array;
  /** Per-query marks: 1 = matched (in `touched`), 2 = neighbour-only candidate; cleared after each query. */
  mark: Uint8Array;
  /** Per-term counts of the row being inserted (indexed by term id, zero between rows) and its distinct terms. */
  counts: Int32Array;
  distinct: number[];
}

/** An empty index state. */
export function newIndexState(): IndexState {
  return {
    names: [],
    sortedTerms: 0,
    vocab: new Map(),
    postings: [],
    base: undefined,
    ids: new Int32Array(1024),
    lengths: new Int32Array(1024),
    cats: new Int32Array(1024),
    alive: new Uint8Array(1024),
    asks: new Uint8Array(1024),
    prev: new Int32Array(1024),
    next: new Int32Array(1024),
    store: new Int32Array(4096),
    storeLength: 0,
    docStart: new Int32Array(1024),
    label0: new Int32Array(1024).fill(-1),
    labelRest: new Map(),
    categories: [],
    categoryIds: new Map(),
    ordered: 0,
    outOfOrder: new Map(),
    slots: 0,
    live: 0,
    dead: 0,
    totalLength: 0,
    maxId: 0,
    lastSlot: -1,
    linksValid: true,
    acc: new Float64Array(1024),
    mark: new Uint8Array(1024),
    counts: new Int32Array(1024),
    distinct: [],
  };
}

export function grow(a: Int32Array, need: number): Int32Array {
  if (need <= a.length) return a;
  const next = new Int32Array(Math.max(need, a.length * 2, 4));
  next.set(a);
  return next;
}

const emptyPostings = (): Postings => ({ slots: new Int32Array(2), freqs: new Int32Array(2), length: 0, df: 0, labelDf: 0 });

/** The id of an index term, or `undefined` when the vocabulary does not hold it. */
export function findTerm(s: IndexState, t: string): number | undefined {
  const id = s.vocab.get(t);
  if (id !== undefined || s.sortedTerms === 0) return id;
  const names = s.names;
  let lo = 0;
  let hi = s.sortedTerms - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = names[mid] as string;
    if (v === t) return mid;
    if (v < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** Terms added since the sorted tail was built that a prefix lookup tests one by one before it is built again. */
const TAIL_SLACK = 256;

/** The sorted ids of the terms after `sortedTerms` ({@link IndexState.tail}), built again when stale or far behind. */
function sortedTail(s: IndexState): NonNullable<IndexState['tail']> {
  const { names, sortedTerms } = s;
  const tail = s.tail;
  if (tail !== undefined && tail.names === names && tail.from === sortedTerms && names.length - tail.upTo <= Math.max(TAIL_SLACK, (tail.upTo - tail.from) >> 3)) return tail;
  const ids = new Int32Array(names.length - sortedTerms);
  for (let i = 0; i < ids.length; i++) ids[i] = sortedTerms + i;
  ids.sort((a, b) => {
    const x = names[a] as string;
    const y = names[b] as string;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  s.tail = { names, from: sortedTerms, upTo: names.length, ids };
  return s.tail;
}

/** Calls `fn` with the id of every term that starts with one of `prefixes` (each once). */
export function eachTermWithPrefix(s: IndexState, prefixes: readonly string[], fn: (t: number) => void): void {
  const { names, sortedTerms } = s;
  const tail = sortedTail(s);
  // The two sorted runs, the restored terms and the tail: the range of each prefix by binary search (a term under
  // two prefixes is visited once).
  const seen = new Set<number>();
  const visit = (t: number) => {
    if (prefixes.length > 1) {
      if (seen.has(t)) return;
      seen.add(t);
    }
    fn(t);
  };
  for (const prefix of prefixes) {
    let lo = 0;
    let hi = sortedTerms;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((names[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let t = lo; t < sortedTerms && (names[t] as string).startsWith(prefix); t++) visit(t);
    const { ids } = tail;
    lo = 0;
    hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((names[ids[mid] as number] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < ids.length && (names[ids[i] as number] as string).startsWith(prefix); i++) visit(ids[i] as number);
  }
  // The few terms added since the tail was sorted.
  for (let t = tail.upTo; t < names.length; t++) if (prefixCovers(prefixes, names[t] as string)) fn(t);
}

/** The postings of term `t` (a term of a restored state gets its own view of the flat array when first touched). */
export function post(s: IndexState, t: number): Postings {
  let p = s.postings[t];
  if (p === undefined) {
    const b = s.base as BasePostings;
    const from = b.start[t] as number;
    const to = b.start[t + 1] as number;
    p = { slots: b.slots.subarray(from, to), freqs: b.freqs.subarray(from, to), length: to - from, df: b.df[t] as number, labelDf: b.labelDf[t] as number };
    s.postings[t] = p;
  }
  return p;
}

/** A slot's index term ids. */
export function termsOf(s: IndexState, slot: number): Int32Array {
  return s.store.subarray(s.docStart[slot] as number, (s.docStart[slot] as number) + (s.lengths[slot] as number));
}

/** A slot's label term ids (usually none or one). */
export function labelsOf(s: IndexState, slot: number): Int32Array {
  const first = s.label0[slot] as number;
  if (first < 0) return new Int32Array(0);
  const rest = s.labelRest.get(slot);
  if (rest === undefined) return Int32Array.of(first);
  const all = new Int32Array(rest.length + 1);
  all[0] = first;
  all.set(rest, 1);
  return all;
}

/** The live slot of `id`, or −1. */
export function slotOf(s: IndexState, id: number): number {
  const o = s.outOfOrder.get(id);
  if (o !== undefined) return o;
  const ids = s.ids;
  let lo = 0;
  let hi = s.ordered - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid] as number;
    if (v === id) return s.alive[mid] === 1 ? mid : -1;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The id of an index term, added to the vocabulary when new. */
function termId(s: IndexState, t: string): number {
  let id = findTerm(s, t);
  if (id === undefined) {
    id = s.postings.length;
    s.vocab.set(t, id);
    s.names.push(t);
    s.postings.push(emptyPostings());
  }
  return id;
}

/** Term ids of a list of index terms (new terms are added to the vocabulary). */
function termIdsOf(s: IndexState, list: readonly string[]): Int32Array {
  const out = new Int32Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = termId(s, list[i] as string);
  return out;
}

/** Room for `n` slots in every per-slot array. */
export function ensureSlots(s: IndexState, n: number): void {
  if (n <= s.ids.length) return;
  const cap = Math.max(n, s.ids.length * 2);
  const g32 = (a: Int32Array) => {
    const b = new Int32Array(cap);
    b.set(a);
    return b;
  };
  s.ids = g32(s.ids);
  s.lengths = g32(s.lengths);
  s.docStart = g32(s.docStart);
  s.cats = g32(s.cats);
  s.prev = g32(s.prev);
  s.next = g32(s.next);
  const l0 = new Int32Array(cap).fill(-1);
  l0.set(s.label0);
  s.label0 = l0;
  const al = new Uint8Array(cap);
  al.set(s.alive);
  s.alive = al;
  const as = new Uint8Array(cap);
  as.set(s.asks);
  s.asks = as;
}

/** Append the slot to the postings of each of its terms, with the term's frequency in the row. */
function insertTerms(s: IndexState, slot: number, terms: Int32Array): void {
  if (s.counts.length < s.postings.length) {
    const bigger = new Int32Array(Math.max(s.postings.length, s.counts.length * 2));
    bigger.set(s.counts);
    s.counts = bigger;
  }
  const { counts, distinct } = s;
  distinct.length = 0;
  for (let i = 0; i < terms.length; i++) {
    const t = terms[i] as number;
    if (counts[t] === 0) distinct.push(t);
    counts[t] = (counts[t] as number) + 1;
  }
  for (const t of distinct) {
    const p = post(s, t);
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
}

/** Keep the slot's term ids in the flat store. */
function storeTerms(s: IndexState, slot: number, terms: Int32Array): void {
  if (s.storeLength + terms.length > s.store.length) {
    const bigger = new Int32Array(Math.max(s.storeLength + terms.length, s.store.length * 2));
    bigger.set(s.store.subarray(0, s.storeLength));
    s.store = bigger;
  }
  s.docStart[slot] = s.storeLength;
  s.store.set(terms, s.storeLength);
  s.storeLength += terms.length;
}

function categoryId(s: IndexState, category: string): number {
  let cat = s.categoryIds.get(category);
  if (cat === undefined) {
    cat = s.categories.length;
    s.categories.push(category);
    s.categoryIds.set(category, cat);
  }
  return cat;
}

/** Put a row into a new slot. */
export function addSlot(s: IndexState, id: number, terms: Int32Array, labels: Int32Array, category: string, question: boolean): void {
  const slot = s.slots++;
  ensureSlots(s, s.slots);
  s.ids[slot] = id;
  s.lengths[slot] = terms.length;
  s.cats[slot] = categoryId(s, category);
  s.alive[slot] = 1;
  s.asks[slot] = question ? 1 : 0;
  storeTerms(s, slot, terms);
  s.label0[slot] = labels.length === 0 ? -1 : (labels[0] as number);
  if (labels.length > 1) s.labelRest.set(slot, labels.slice(1));
  for (const t of labels) post(s, t).labelDf++;
  if (slot === s.ordered && (slot === 0 || id > (s.ids[slot - 1] as number))) s.ordered++;
  else s.outOfOrder.set(id, slot);
  insertTerms(s, slot, terms);
  s.live++;
  s.totalLength += terms.length;
  if (s.linksValid && id > s.maxId) {
    s.prev[slot] = s.lastSlot;
    s.next[slot] = -1;
    if (s.lastSlot >= 0) s.next[s.lastSlot] = slot;
    s.lastSlot = slot;
  } else s.linksValid = false;
  if (id > s.maxId) s.maxId = id;
}

/** Add a row, tokenising its content (its id must not be present). */
export function addRow(s: IndexState, doc: RankDoc): void {
  if (slotOf(s, doc.id) >= 0) throw new Error(`row ${doc.id} is already indexed`);
  addSlot(s, doc.id, termIdsOf(s, indexTerms(doc.content)), termIdsOf(s, labelTerms(doc.content)), doc.category, asksQuestion(doc.content));
}

/** Remove a row (no-op when absent); compacts once dead slots are many. */
export function removeRow(s: IndexState, id: number): void {
  const slot = slotOf(s, id);
  if (slot < 0) return;
  s.outOfOrder.delete(id);
  s.alive[slot] = 0;
  s.live--;
  s.dead++;
  s.totalLength -= s.lengths[slot] as number;
  for (const t of new Set(termsOf(s, slot))) post(s, t).df--;
  for (const t of labelsOf(s, slot)) post(s, t).labelDf--;
  s.label0[slot] = -1;
  s.labelRest.delete(slot);
  s.linksValid = false;
  if (s.dead > 1024 && s.dead > s.live / 4) compact(s);
}

/** Rebuild postings and slots from the live rows, in id order (drops dead slots). */
function compact(s: IndexState): void {
  const rows: Array<{ id: number; terms: Int32Array; labels: Int32Array; category: string; question: boolean }> = [];
  for (let slot = 0; slot < s.slots; slot++) {
    if (s.alive[slot] !== 1) continue;
    rows.push({ id: s.ids[slot] as number, terms: termsOf(s, slot), labels: labelsOf(s, slot), category: s.categories[s.cats[slot] as number] as string, question: s.asks[slot] === 1 });
  }
  rows.sort((a, b) => a.id - b.id);
  for (let t = 0; t < s.postings.length; t++) {
    const p = s.postings[t];
    if (p === undefined) s.postings[t] = emptyPostings();
    else {
      p.length = 0;
      p.df = 0;
      p.labelDf = 0;
    }
  }
  s.base = undefined;
  s.ordered = 0;
  s.outOfOrder.clear();
  s.store = new Int32Array(Math.max(4096, s.storeLength));
  s.storeLength = 0;
  s.label0.fill(-1);
  s.labelRest = new Map();
  s.slots = 0;
  s.live = 0;
  s.dead = 0;
  s.totalLength = 0;
  s.lastSlot = -1;
  s.linksValid = true;
  const keepMax = s.maxId;
  s.maxId = 0;
  s.alive.fill(0);
  for (const r of rows) addSlot(s, r.id, r.terms, r.labels, r.category, r.question);
  s.maxId = keepMax;
}

/** The live slots in id order. */
export function liveSlotsById(s: IndexState): number[] {
  const order: number[] = [];
  for (let slot = 0; slot < s.slots; slot++) if (s.alive[slot] === 1) order.push(slot);
  const ids = s.ids;
  order.sort((a, b) => (ids[a] as number) - (ids[b] as number));
  return order;
}

/** Relink neighbours in id order (after out-of-order adds or removals). */
export function relink(s: IndexState): void {
  let last = -1;
  for (const slot of liveSlotsById(s)) {
    s.prev[slot] = last;
    s.next[slot] = -1;
    if (last >= 0) s.next[last] = slot;
    last = slot;
  }
  s.lastSlot = last;
  s.linksValid = true;
}
