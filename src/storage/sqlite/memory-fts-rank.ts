/**
 * BM25 for the windowed full-text lookup, computed in JavaScript over the window FTS5 returns.
 *
 * Why: `bm25(memories_fts, 1, 0, 0)` costs ~10 ms per query at 100k rows per tenant on the 2-core reference
 * machine, although the window itself (the newest 1,000 matching rowids of the scope) costs < 1 ms. FTS5
 * pays for (a) the IDF of *every* phrase of the MATCH, including the scope token, whose doclist holds one
 * entry per row of the tenant (100k), and (b) per row, decoding the position lists of every phrase (the scope
 * token's too) plus a `docsize` lookup. Only the text column has weight, so the scope and category phrases
 * contribute exactly 0 to the score; computing the same formula here skips their cost.
 *
 * The formula is FTS5's (`fts5_aux.c`, the same one the in-memory engine implements in `memory-bm25.ts`):
 * k1 = 1.2, b = 0.75, IDF = ln((N − n + 0.5) / (n + 0.5)) floored at 1e-6 with `n` the rows of the whole
 * index whose text column holds the leaf (every tenant, soft-deleted rows included, as FTS5 counts it), N
 * and the average row size read from the index's own totals record, and a row size that counts the tokens
 * of all three indexed columns. `n` comes from `COUNT(*)` of the leaf alone, which is what FTS5's
 * `xQueryPhrase` walks (for a plain ASCII term, from a temp `fts5vocab` table, which gives the same count
 * cheaper); it is cached and carried forward as rows are indexed (see {@link createFtsStats}).
 *
 * The same cache holds the expansions of prefix leaves for the window's MATCH (`windowQuery`): a prefix that
 * covers at most {@link PREFIX_EXPANSION_LIMIT} index terms is matched as the OR of those terms, which FTS5 walks
 * lazily, instead of as a prefix, which FTS5 answers by merging every matching term's doclist first.
 */
import type { MemoryQueryNode } from '../memory-types';
import { compileBm25, leaves, type Bm25Doc, type Bm25Stats } from '../in-memory/memory-bm25';
import type { SqliteHandle } from './handle';

type Leaf = ReturnType<typeof leaves>[number];

/** Decode SQLite's big-endian varint (as FTS5 writes its totals record) at `offset`. */
export function readVarint(buf: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = buf[offset + i];
    if (byte === undefined) return { value, next: offset + i };
    if (i === 8) return { value: value * 256 + byte, next: offset + 9 };
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return { value, next: offset + 9 };
}

/** A row's tokens and its size over the three indexed columns (text, category, scope token). */
export function ftsDoc(searchText: string, category: string): Bm25Doc {
  const tokens = searchText.split(' ').filter((t) => t.length > 0);
  const categoryTokens = category.split(/[^a-z0-9]+/u).filter((t) => t.length > 0).length;
  return { tokens, size: tokens.length + categoryTokens + 1 };
}

/** The FTS5 rendering of one leaf restricted to the text column (how FTS5's IDF pass sees it). */
function leafMatch(leaf: Leaf): string {
  return leaf.kind === 'term'
    ? `search_text:"${leaf.text.replaceAll('"', '""')}"${leaf.prefix === true ? '*' : ''}`
    : `search_text:"${leaf.tokens.map((t) => t.replaceAll('"', '""')).join(' ')}"`;
}

const DF_CACHE_LIMIT = 4096;
/** Most prefixes whose expansion is cached. */
const EXPANSION_CACHE_LIMIT = 1024;

/**
 * A plain term whose text the `unicode61` tokenizer keeps as it is (ASCII lower-case letters and digits): its
 * document frequency in the text column is the `doc` count of an `fts5vocab` `col` table, the same number
 * `COUNT(*) … MATCH 'search_text:"term"'` gives, for ~70 % of the cost (no MATCH machinery per row).
 */
function vocabTerm(leaf: Leaf): boolean {
  return leaf.kind === 'term' && leaf.prefix !== true && /^[a-z0-9]+$/u.test(leaf.text);
}

/** Connections whose temp `fts5vocab` table exists (`false`: it cannot be created; use `COUNT(*)`). */
const vocabReady = new WeakMap<object, boolean>();

/** Whether this connection's temp `fts5vocab` table exists (created on first use, outside transactions only). */
function vocabTable(handle: SqliteHandle): boolean {
  const db = handle.db as Partial<SqliteHandle['db']> | undefined;
  if (typeof db !== 'object' || db === null || typeof db.exec !== 'function') return false;
  let ready = vocabReady.get(db);
  if (ready === undefined) {
    // Created outside any transaction only: a rollback of the caller's transaction would drop it again.
    if (db.inTransaction === true) return false;
    try {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.minara_memories_fts_vocab USING fts5vocab(main, 'memories_fts', 'col')`);
      ready = true;
    } catch {
      ready = false;
    }
    vocabReady.set(db, ready);
  }
  return ready;
}

/** Run `read` against the vocab table; `undefined` when it is unavailable (it is then recreated on next use). */
function withVocab<T>(handle: SqliteHandle, read: () => T): T | undefined {
  if (!vocabTable(handle)) return undefined;
  try {
    return read();
  } catch {
    vocabReady.delete(handle.db as object);
    return undefined;
  }
}

function vocabCount(handle: SqliteHandle, term: string): number | undefined {
  return withVocab(handle, () => {
    const n = handle.prepare(`SELECT doc FROM temp.minara_memories_fts_vocab WHERE term = ? AND col = 'search_text'`).pluck().get(term) as number | undefined;
    return n ?? 0;
  });
}

/**
 * Most index terms a prefix leaf is expanded to for the window lookup (`windowQuery` of {@link createFtsStats}); a wider
 * prefix keeps FTS5's own prefix query.
 */
export const PREFIX_EXPANSION_LIMIT = 32;

/**
 * A prefix the expansion handles: ASCII letters and digits (the index holds them as they are), and not one a
 * scope token (`s` + 20 hex digits) could start with, because the vocab walk would then step through the
 * doclists of many tenants' scope tokens before it reaches the text terms.
 */
function expandable(prefix: string): boolean {
  return /^[a-z0-9]+$/u.test(prefix) && !/^s[0-9a-f]{0,20}$/u.test(prefix);
}

/**
 * The text-column terms of the index that start with `prefix`, in term order; `null` when there are more than
 * {@link PREFIX_EXPANSION_LIMIT}; `undefined` when the vocab table is unavailable. Reads terms in order from
 * `prefix` on and stops at the first term past it, so it costs the doclist walks of the matching terms only
 * (fts5vocab aggregates each term as its cursor reaches it).
 */
function vocabPrefixTerms(handle: SqliteHandle, prefix: string): Set<string> | null | undefined {
  return withVocab(handle, () => {
    const terms = new Set<string>();
    const rows = handle.prepare(`SELECT term, col FROM temp.minara_memories_fts_vocab WHERE term >= ? ORDER BY term`).iterate(prefix) as IterableIterator<{
      term: string;
      col: string;
    }>;
    for (const row of rows) {
      if (!row.term.startsWith(prefix)) break;
      if (row.col !== 'search_text') continue;
      terms.add(row.term);
      if (terms.size > PREFIX_EXPANSION_LIMIT) return null; // for-of closes the cursor
    }
    return terms;
  });
}

/** Most rows a cache update reads; a larger catch-up drops the cache instead. */
const DELTA_ROWS_LIMIT = 2000;
/** Most row × leaf checks spent on prefix and phrase leaves in one update; beyond it they are dropped. */
const DELTA_SCAN_LIMIT = 50_000;

interface CachedFrequency {
  n: number;
  readonly leaf: Leaf;
}

/** Whether `leaf` matches the text column of a row whose text is `searchText` (as FTS5's MATCH does). */
function leafMatches(leaf: Leaf, searchText: string): boolean {
  return leaf.kind === 'term' ? countTokenMatches(searchText, leaf.text, leaf.prefix === true) > 0 : countTokenMatches(searchText, leaf.tokens.join(' '), false) > 0;
}

/**
 * Index statistics with a per-leaf document-frequency cache that survives writes.
 *
 * The cache is valid for one state of `memory_fts_state` (migration v4): the watermark `indexed_through` and
 * `changes`, which the row triggers bump whenever they change the index of an already indexed row. When only
 * the watermark moved (rows were indexed, by any connection), the cached counts are brought forward from the
 * newly indexed rows themselves, read in the same snapshot: a plain term adds the rows whose tokens contain
 * it, a prefix or phrase the rows it matches. When `changes` moved (an indexed row was updated or deleted) the
 * cache is dropped. Every first count stays exact (`fts5vocab` or `COUNT(*)`), so the numbers always equal
 * FTS5's.
 */
export function createFtsStats(handle: SqliteHandle) {
  const st: FtsStatsState = { handle, df: new Map(), expansions: new Map(), through: -1, changes: -1 };
  return {
    /** Outside any transaction, before a lookup: create the connection's vocab table if it does not exist yet. */
    ensureVocab(): void {
      vocabTable(handle);
    },

    /** Drop the cache (the triggers already tell it about row changes; this is for anything else). */
    bump(): void {
      st.df.clear();
      st.expansions.clear();
      st.through = -1;
    },

    /**
     * `query` as the window lookup should MATCH it: each prefix leaf that the index expands to at most
     * {@link PREFIX_EXPANSION_LIMIT} terms becomes the OR of those terms. Same rows, found lazily: FTS5 answers
     * a prefix query by first merging the doclists of every matching term over the whole index (all tenants)
     * into one buffer (~1 ms for `slip*` at 100k rows per tenant, ~4 ms for `fund*`; more in a process with a
     * large heap), while an OR of terms is walked newest-first and stops at the window. Scoring keeps the
     * original leaf. The expansions are cached with the frequency cache and carried forward the same way (a
     * newly indexed token with the prefix joins it). Runs inside the caller's read.
     */
    windowQuery(query: MemoryQueryNode): MemoryQueryNode {
      syncStats(st);
      return expandQuery(st, query);
    },

    /** N, average size and per-leaf hits for `query`. Runs inside the caller's read. */
    stats(query: MemoryQueryNode): Bm25Stats {
      syncStats(st);
      const { rowCount, total } = indexTotals(handle);
      const hits = leaves(query).map((leaf) => leafFrequency(st, leaf));
      return { rowCount, avgSize: rowCount === 0 ? 1 : total / rowCount, hits };
    },
  };
}

/** What {@link createFtsStats} keeps: the frequency and prefix caches and the index state they are valid for. */
interface FtsStatsState {
  readonly handle: SqliteHandle;
  readonly df: Map<string, CachedFrequency>;
  /** Prefix → its text terms (`null`: wider than {@link PREFIX_EXPANSION_LIMIT}). Same validity as `df`. */
  readonly expansions: Map<string, Set<string> | null>;
  /** `indexed_through` and `changes` of `memory_fts_state` the caches are valid for (-1: none). */
  through: number;
  changes: number;
}

/** Bring the caches to the index state of the current snapshot. */
function syncStats(st: FtsStatsState): void {
  const state = st.handle.prepare('SELECT indexed_through AS through, changes FROM memory_fts_state WHERE id = 1').get() as
    | { through: number; changes: number }
    | undefined;
  if (state === undefined || state.changes !== st.changes || state.through < st.through || state.through - st.through > DELTA_ROWS_LIMIT) {
    st.df.clear();
    st.expansions.clear();
  } else if (state.through > st.through && (st.df.size > 0 || st.expansions.size > 0)) {
    carryForward(st, state.through);
  }
  st.through = state?.through ?? -1;
  st.changes = state?.changes ?? -1;
}

/** Bring cached frequencies and expansions forward over the rows indexed since `st.through`, read in this snapshot. */
function carryForward(st: FtsStatsState, through: number): void {
  const texts = st.handle.prepare('SELECT search_text FROM memories WHERE id > ? AND id <= ?').pluck().all(st.through, through) as string[];
  const docsWithToken = new Map<string, number>();
  for (const text of texts) {
    for (const token of new Set(text.split(' '))) if (token.length > 0) docsWithToken.set(token, (docsWithToken.get(token) ?? 0) + 1);
  }
  let scanBudget = DELTA_SCAN_LIMIT;
  for (const [key, entry] of st.df) {
    const { leaf } = entry;
    if (leaf.kind === 'term' && leaf.prefix !== true) {
      entry.n += docsWithToken.get(leaf.text) ?? 0;
    } else if (scanBudget >= texts.length) {
      scanBudget -= texts.length;
      for (const text of texts) if (leafMatches(leaf, text)) entry.n++;
    } else {
      st.df.delete(key);
    }
  }
  for (const [prefix, terms] of st.expansions) {
    if (terms === null) continue;
    for (const token of docsWithToken.keys()) if (token.startsWith(prefix)) terms.add(token);
    if (terms.size > PREFIX_EXPANSION_LIMIT) st.expansions.set(prefix, null);
  }
}

/** A prefix leaf as the OR of its terms, when it has few enough; otherwise the leaf itself. */
function expandLeaf(st: FtsStatsState, node: MemoryQueryNode & { kind: 'term' }): MemoryQueryNode {
  if (node.prefix !== true || !expandable(node.text)) return node;
  let terms = st.expansions.get(node.text);
  if (terms === undefined) {
    terms = vocabPrefixTerms(st.handle, node.text);
    if (terms === undefined) return node; // vocab unavailable: nothing cached
    if (st.expansions.size >= EXPANSION_CACHE_LIMIT) st.expansions.clear();
    st.expansions.set(node.text, terms);
  }
  if (terms === null || terms.size === 0) return node;
  const children = [...terms].sort().map((text): MemoryQueryNode => ({ kind: 'term', text }));
  return children.length === 1 ? (children[0] as MemoryQueryNode) : { kind: 'or', children };
}

function expandQuery(st: FtsStatsState, node: MemoryQueryNode): MemoryQueryNode {
  switch (node.kind) {
    case 'term':
      return expandLeaf(st, node);
    case 'phrase':
      return node;
    case 'and':
    case 'or':
      return { kind: node.kind, children: node.children.map((child) => expandQuery(st, child)) };
  }
}

/** N and the total size of the indexed rows, from FTS5's averages record. */
function indexTotals(handle: SqliteHandle): { rowCount: number; total: number } {
  const block = handle.prepare('SELECT block FROM memories_fts_data WHERE id = 1').pluck().get() as Uint8Array | undefined;
  let rowCount = 0;
  let total = 0;
  if (block !== undefined) {
    const n = readVarint(block, 0);
    rowCount = n.value;
    for (let off = n.next, col = 0; off < block.length && col < 3; col++) {
      const c = readVarint(block, off);
      total += c.value;
      off = c.next;
    }
  }
  return { rowCount, total };
}

/** A leaf's document frequency: cached, else counted exactly (`fts5vocab` or `COUNT(*)`) and cached. */
function leafFrequency(st: FtsStatsState, leaf: Leaf): number {
  const key = leafMatch(leaf);
  let entry = st.df.get(key);
  if (entry === undefined) {
    let n = vocabTerm(leaf) ? vocabCount(st.handle, leaf.kind === 'term' ? leaf.text : '') : undefined;
    n ??= st.handle.prepare('SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?').pluck().get(key) as number;
    if (st.df.size >= DF_CACHE_LIMIT) st.df.clear();
    entry = { n, leaf };
    st.df.set(key, entry);
  }
  return entry.n;
}

/**
 * Whole-token occurrences of `needle` (one token, or a phrase's tokens joined by single spaces) in `text`
 * (tokens joined by single spaces): a hit must start at a token boundary and, unless `prefix`, end at one.
 * Overlapping phrase hits count, as a token-by-token scan counts them. Equivalent to counting ` needle `
 * (` needle` for a prefix) in ` text `, without building the padded copy per row.
 */
export function countTokenMatches(text: string, needle: string, prefix: boolean): number {
  const len = needle.length;
  if (len === 0) return 0;
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) !== 32) continue;
    if (!prefix && i + len < text.length && text.charCodeAt(i + len) !== 32) continue;
    n++;
  }
  return n;
}

function tokenCount(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf(' '); i !== -1; i = text.indexOf(' ', i + 1)) n++;
  return n;
}

/** Score window rows (higher is better, i.e. `-bm25()`). */
export function scoreRows(query: MemoryQueryNode, rows: ReadonlyArray<{ id: number; text: string; category: string }>, stats: Bm25Stats): Array<{ id: number; score: number }> {
  const bm25 = compileBm25(query);
  const needles = bm25.leaves.map((l) => (l.kind === 'term' ? l.text : l.tokens.join(' ')));
  const prefixes = bm25.leaves.map((l) => l.kind === 'term' && l.prefix === true);
  const categorySize = new Map<string, number>();
  const out = new Array<{ id: number; score: number }>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as { id: number; text: string; category: string };
    let cat = categorySize.get(row.category);
    if (cat === undefined) {
      cat = ftsDoc('', row.category).size - 1;
      categorySize.set(row.category, cat);
    }
    // A fresh array per row: scoreFrequencies zeroes the leaves of failed AND subtrees in place.
    const freqs = new Array<number>(needles.length);
    for (let i = 0; i < needles.length; i++) freqs[i] = countTokenMatches(row.text, needles[i] as string, prefixes[i] as boolean);
    out[r] = { id: row.id, score: bm25.scoreFrequencies(freqs, tokenCount(row.text) + cat + 1, stats) };
  }
  return out;
}
