/**
 * A scope index's state in and out: {@link restoreIndex} loads a {@link ScopeIndexState} (a snapshot's content)
 * into an empty index without tokenising any text, {@link exportIndex} writes the live rows out in that form.
 */
import { type BasePostings, type IndexState, type ScopeIndexState, ensureSlots, liveSlotsById } from './lexical-index-state';

const bad = (what: string): never => {
  throw new Error(`inconsistent index state: ${what}`);
};

/** The flat postings of a state, each term's range sized by its `df`; checks every term id and frequency. */
function flatPostings(st: ScopeIndexState): BasePostings {
  const n = st.ids.length;
  const nTerms = st.terms.length;
  const start = new Int32Array(nTerms + 1);
  for (let t = 0; t < nTerms; t++) {
    const d = st.df[t] as number;
    if (d < 1 || d > n) bad('document frequency');
    start[t + 1] = (start[t] as number) + d;
  }
  if (st.termOffsets[0] !== 0 || st.labelOffsets[0] !== 0 || st.termOffsets[n] !== st.termIds.length || st.labelOffsets[n] !== st.labelIds.length) bad('offsets');
  const fill = start.slice(0, nTerms);
  const slots = new Int32Array(start[nTerms] as number);
  const freqs = new Int32Array(start[nTerms] as number);
  // The row a term's latest posting belongs to, and where that posting is (a repeat adds to its frequency).
  const seenAt = new Int32Array(nTerms).fill(-1);
  const lastAt = new Int32Array(nTerms);
  const { termOffsets, termIds } = st;
  for (let r = 0; r < n; r++) {
    const from = termOffsets[r] as number;
    const to = termOffsets[r + 1] as number;
    if (to < from) bad('offsets');
    for (let k = from; k < to; k++) {
      const t = termIds[k] as number;
      if (t >>> 0 >= nTerms) bad('term id');
      if (seenAt[t] !== r) {
        seenAt[t] = r;
        const at = fill[t] as number;
        if (at >= (start[t + 1] as number)) bad('document frequency');
        fill[t] = at + 1;
        lastAt[t] = at;
        slots[at] = r;
        freqs[at] = 1;
      } else freqs[lastAt[t] as number] = (freqs[lastAt[t] as number] as number) + 1;
    }
  }
  for (let t = 0; t < nTerms; t++) if (fill[t] !== start[t + 1]) bad('document frequency');
  return { start, slots, freqs, df: st.df.slice(), labelDf: new Int32Array(nTerms) };
}

/** Row r's label terms into its slot (checked), counting each term's label frequency. */
function restoreLabels(s: IndexState, st: ScopeIndexState, r: number, labelDf: Int32Array): void {
  const l0 = st.labelOffsets[r] as number;
  const l1 = st.labelOffsets[r + 1] as number;
  if (l1 < l0) bad('offsets');
  if (l1 === l0) return;
  for (let k = l0; k < l1; k++) {
    const t = st.labelIds[k] as number;
    if (t >>> 0 >= st.terms.length) bad('label id');
    for (let j = l0; j < k; j++) if (st.labelIds[j] === t) bad('label repeats a term');
    labelDf[t] = (labelDf[t] as number) + 1;
  }
  s.label0[r] = st.labelIds[l0] as number;
  if (l1 - l0 > 1) s.labelRest.set(r, st.labelIds.slice(l0 + 1, l1));
}

/** The rows of a state into slots `0 .. n)`, in id order and linked; returns the last id. */
function restoreRows(s: IndexState, st: ScopeIndexState, labelDf: Int32Array): number {
  const n = st.ids.length;
  const { termOffsets, labelOffsets } = st;
  const nCategories = st.categories.length;
  const { ids, lengths, cats, alive, asks, docStart, prev, next } = s;
  let lastId = 0;
  let total = 0;
  for (let r = 0; r < n; r++) {
    const from = termOffsets[r] as number;
    const to = termOffsets[r + 1] as number;
    const id = st.ids[r] as number;
    if (id <= lastId) bad('ids not ascending');
    lastId = id;
    const cat = st.cats[r] as number;
    if (cat >>> 0 >= nCategories || (st.asks[r] as number) > 1) bad('category or flag');
    ids[r] = id;
    lengths[r] = to - from;
    cats[r] = cat;
    alive[r] = 1;
    asks[r] = st.asks[r] as number;
    docStart[r] = from;
    if (labelOffsets[r + 1] !== labelOffsets[r]) restoreLabels(s, st, r, labelDf);
    prev[r] = r - 1;
    next[r] = r + 1 < n ? r + 1 : -1;
    total += to - from;
  }
  s.totalLength += total;
  return lastId;
}

/**
 * Load a state into the (empty) index: slots in id order, the postings into one flat array (each term's range
 * sized by its `df`). Checks the state as it goes (ids ascending, offsets monotone, every id in range, the
 * document frequencies exact) and throws on the first inconsistency; the caller then rebuilds from the rows.
 */
export function restoreIndex(s: IndexState, st: ScopeIndexState): void {
  const n = st.ids.length;
  const nTerms = st.terms.length;
  if (st.df.length !== nTerms || st.cats.length !== n || st.asks.length !== n || st.termOffsets.length !== n + 1 || st.labelOffsets.length !== n + 1) bad('section lengths');
  for (let t = 1; t < nTerms; t++) if (!((st.terms[t - 1] as string) < (st.terms[t] as string))) bad('terms out of order');
  s.names = st.terms.slice();
  s.sortedTerms = nTerms;
  for (let c = 0; c < st.categories.length; c++) s.categoryIds.set(st.categories[c] as string, c);
  if (s.categoryIds.size !== st.categories.length) bad('duplicate categories');
  s.categories.push(...st.categories);
  s.postings.length = nTerms;
  ensureSlots(s, n);
  const base = flatPostings(st);
  const lastId = restoreRows(s, st, base.labelDf);
  if (st.maxId < lastId) bad('maxId');
  s.base = base;
  s.store = st.termIds;
  s.storeLength = st.termIds.length;
  s.slots = n;
  s.ordered = n;
  s.live = n;
  s.lastSlot = n - 1;
  s.linksValid = true;
  s.maxId = st.maxId;
}

/** The terms live rows hold, in ascending order, with their document frequencies and a map from old ids. */
function liveVocabulary(s: IndexState, order: readonly number[]) {
  const { store, docStart, lengths, label0, labelRest, names } = s;
  const used = new Uint8Array(s.postings.length);
  let termTotal = 0;
  let labelTotal = 0;
  for (const slot of order) {
    const from = docStart[slot] as number;
    const to = from + (lengths[slot] as number);
    for (let i = from; i < to; i++) used[store[i] as number] = 1;
    termTotal += to - from;
    if ((label0[slot] as number) >= 0) {
      used[label0[slot] as number] = 1;
      labelTotal++;
      const rest = labelRest.get(slot);
      if (rest !== undefined) {
        for (const t of rest) used[t] = 1;
        labelTotal += rest.length;
      }
    }
  }
  const live: number[] = [];
  for (let t = 0; t < used.length; t++) if (used[t] === 1) live.push(t);
  live.sort((a, b) => ((names[a] as string) < (names[b] as string) ? -1 : 1));
  const remap = new Int32Array(s.postings.length);
  const df = new Int32Array(live.length);
  const terms = live.map((t, i) => {
    remap[t] = i;
    df[i] = s.postings[t]?.df ?? ((s.base as BasePostings).df[t] as number);
    return names[t] as string;
  });
  return { terms, df, remap, termTotal, labelTotal };
}

/** The live rows in a compact, id-ordered form (a snapshot persists it; see `lexical-snapshot.ts`). */
export function exportIndex(s: IndexState): ScopeIndexState {
  const order = liveSlotsById(s);
  // A compact vocabulary (only the terms live rows hold) in ascending order, and the categories in use.
  const { terms, df, remap, termTotal, labelTotal } = liveVocabulary(s, order);
  const { store, docStart, lengths, label0, labelRest } = s;
  const catRemap = new Int32Array(s.categories.length).fill(-1);
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
    const slot = order[r] as number;
    outIds[r] = s.ids[slot] as number;
    const from = docStart[slot] as number;
    const to = from + (lengths[slot] as number);
    for (let i = from; i < to; i++) termIdsOut[tk++] = remap[store[i] as number] as number;
    termOffsets[r + 1] = tk;
    if ((label0[slot] as number) >= 0) {
      labelIdsOut[lk++] = remap[label0[slot] as number] as number;
      const rest = labelRest.size === 0 ? undefined : labelRest.get(slot);
      if (rest !== undefined) for (let i = 0; i < rest.length; i++) labelIdsOut[lk++] = remap[rest[i] as number] as number;
    }
    labelOffsets[r + 1] = lk;
    const c = s.cats[slot] as number;
    if ((catRemap[c] as number) < 0) {
      catRemap[c] = catNames.length;
      catNames.push(s.categories[c] as string);
    }
    outCats[r] = catRemap[c] as number;
    outAsks[r] = s.asks[slot] as number;
  }
  return { terms, categories: catNames, df, ids: outIds, termOffsets, termIds: termIdsOut, labelOffsets, labelIds: labelIdsOut, cats: outCats, asks: outAsks, maxId: s.maxId };
}
