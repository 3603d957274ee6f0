/**
 * Keeps one in-process lexical index per scope (`lexical-index.ts`) in step with the storage engine, and
 * answers ranked lookups from it: the engine-facing side of ranking.
 *
 * What an engine supplies (three calls of `MemoryStorage`): `textRows` (the scope's rows, all of them or those
 * after an id or of some ids), `textChanges` (a log of rows whose text or category changed or that were
 * deleted) and `getMany` (visibility of the candidates). Inserts are found by id (ids only grow), updates and
 * deletes through the log, so another connection's or process's writes are seen by the next lookup. Before each
 * lookup the index catches up: the log since the last look (changed rows are re-read), then the rows added
 * since. A log that was pruned past the last look reloads the scope.
 *
 * The statistics are the scope's alone and include every stored row of the scope, soft-deleted and retired
 * rows too (they are part of the tenant's own text; a soft delete is undone for free). Rows that a lookup must
 * not return (soft-deleted, retired, other statuses, excluded ids) are dropped after ranking and the ranking is
 * asked again without them until the top is clean, so the result is still the exact top-k of the visible rows.
 *
 * Snapshots: a fresh process would read and tokenise every row of a scope on its first lookup (~0.9 s at 100k
 * rows). Where the engine keeps snapshots (`MemoryStorage.loadTextIndex` / `saveTextIndex`, all built-in
 * engines), the first lookup instead loads the scope's saved index (`lexical-snapshot.ts`: checked, then
 * restored without tokenising) and catches it up from the log position it was saved at, exactly as a kept
 * index catches up; a snapshot that is missing, of another tokenizer, corrupt, or behind a pruned log is
 * ignored and the scope built from its rows. Saves run after the lookup that asked for one (a scope of at
 * least {@link LEXICAL_SNAPSHOT_MIN_ROWS} rows, first built or far behind its snapshot). The engine stores a
 * snapshot only while no row it holds has changed since its position, and drops a scope's snapshot when one of
 * its rows is deleted or its content changes, so a stored snapshot never holds text the table no longer has.
 *
 * Memory: the index of a scope costs ~20 bytes per index term (a 100k-row scope of 20-term rows: ~40 MB).
 * Scopes are evicted least recently used once the indexes of one storage hold more than
 * {@link LEXICAL_CACHE_TERMS} terms; a scope larger than that alone is ranked by a fresh index per lookup
 * (exact, slower) and not kept.
 */
import type { MemoryLookupFilter, MemoryQueryNode, MemoryRecord, MemoryScope, MemoryScoredId, MemoryStorage } from '../storage/memory-types';
import { type ScopeIndex, createScopeIndex } from './lexical-index';
import { decodeIndexSnapshot, encodeIndexSnapshot } from './lexical-snapshot';

/** Most index terms the scope indexes of one storage hold together (~20 bytes each). */
export const LEXICAL_CACHE_TERMS = 8_000_000;

/** Smallest scope (rows) whose index is saved as a snapshot: below it a build from the rows takes ~20 ms. */
export const LEXICAL_SNAPSHOT_MIN_ROWS = 2_000;

/** Options of {@link createLexicalCache} (tests lower the thresholds). */
export interface LexicalCacheOptions {
  /** @default LEXICAL_CACHE_TERMS */
  budgetTerms?: number;
  /** @default LEXICAL_SNAPSHOT_MIN_ROWS */
  snapshotMinRows?: number;
  /**
   * Rows added, changed or removed since the snapshot was read or saved that make the next lookup save a new
   * one: the larger of this and 2% of the scope's rows.
   * @default 500
   */
  snapshotMinChanges?: number;
  /** After an update or delete (which drops the engine's stored snapshot), the least time before saving one anew. @default 30000 */
  snapshotRefreshMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface Entry {
  index: ScopeIndex;
  seq: number;
  used: number;
  lock: Promise<unknown>;
  /** Rows applied since the snapshot this entry was read from or last saved (or since its build). */
  sinceSnapshot: number;
  /** An update or delete was applied since: the engine has dropped its stored snapshot of the scope. */
  dropped: boolean;
  /** When a save was last attempted (ms). */
  savedAt: number;
  /** True while a save is queued. */
  saving: boolean;
}

/** Ranked lookups over the scopes of one storage. */
export interface LexicalCache {
  /**
   * The exact top `filter.limit` visible rows for `query` (visible: not soft-deleted, status in
   * `filter.statuses`, default active and pending; not in `filter.excludeIds`; category in `filter.categories`).
   */
  search(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter, options?: { neighbours?: boolean }): Promise<MemoryScoredId[]>;
  /**
   * As {@link LexicalCache.search}, with the records of the returned ids as read to check their visibility, so the
   * caller need not read them again (one round trip less per lookup on PostgreSQL).
   */
  searchRecords(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter, options?: { neighbours?: boolean }): Promise<LexicalHits>;
  /** Resolves once every snapshot save queued so far has ended (saved, skipped or failed). */
  settled(): Promise<void>;
}

/** What {@link LexicalCache.searchRecords} returns: the ranked ids and the record of each. */
export interface LexicalHits {
  readonly ranked: MemoryScoredId[];
  readonly records: ReadonlyMap<number, MemoryRecord>;
}

const caches = new WeakMap<MemoryStorage, LexicalCache>();

/** The cache of `storage` (one per storage object, shared by every store over it). */
export function lexicalCacheFor(storage: MemoryStorage, budgetTerms: number = LEXICAL_CACHE_TERMS): LexicalCache {
  let cache = caches.get(storage);
  if (cache === undefined) {
    cache = createLexicalCache(storage, { budgetTerms });
    caches.set(storage, cache);
  }
  return cache;
}

const scopeKey = (s: MemoryScope) => JSON.stringify([s.userId, s.agentId ?? null]);

/** What a cache keeps: its storage and settings, the scopes' entries, the use clock and the chain of queued saves. */
interface CacheState {
  readonly storage: MemoryStorage;
  readonly budgetTerms: number;
  readonly snapshotMinRows: number;
  readonly snapshotMinChanges: number;
  readonly snapshotRefreshMs: number;
  readonly now: () => number;
  /** The engine keeps snapshots (`loadTextIndex` and `saveTextIndex`). */
  readonly snapshots: boolean;
  readonly entries: Map<string, Entry>;
  clock: number;
  saves: Promise<void>;
}

function entryOf(c: CacheState, index: ScopeIndex, seq: number, sinceSnapshot: number): Entry {
  return { index, seq, used: ++c.clock, lock: Promise.resolve(), sinceSnapshot, dropped: false, savedAt: 0, saving: false };
}

/** Every row of the scope, tokenised. */
async function build(c: CacheState, scope: MemoryScope): Promise<Entry> {
  // The log position first, then the rows: a change that lands in between is applied again next time.
  const { seq } = await c.storage.textChanges(scope, Number.MAX_SAFE_INTEGER);
  const index = createScopeIndex();
  const rows = await c.storage.textRows(scope);
  for (const row of rows) index.add(row);
  return entryOf(c, index, seq, rows.length);
}

/** The stored snapshot caught up through the change log, or a build when there is none or it cannot serve. */
async function load(c: CacheState, scope: MemoryScope): Promise<Entry> {
  if (c.snapshots) {
    const entry = await fromSnapshot(c, scope);
    if (entry !== undefined) return entry;
  }
  return build(c, scope);
}

async function fromSnapshot(c: CacheState, scope: MemoryScope): Promise<Entry | undefined> {
  let entry: Entry;
  try {
    const bytes = await c.storage.loadTextIndex?.(scope);
    if (bytes === undefined) return undefined;
    const decoded = decodeIndexSnapshot(bytes, scopeKey(scope));
    if (decoded === undefined) return undefined;
    entry = entryOf(c, createScopeIndex(decoded.state), decoded.seq, 0);
  } catch {
    return undefined; // unreadable or inconsistent: build from the rows instead
  }
  // A position ahead of the log (a database restored from an older copy) cannot be caught up from.
  const { seq } = await c.storage.textChanges(scope, Number.MAX_SAFE_INTEGER);
  if (entry.seq > seq) return undefined;
  return catchUp(c, scope, entry);
}

/** Apply the changes since `entry.seq`; a pruned log gives a fresh build instead. */
async function catchUp(c: CacheState, scope: MemoryScope, entry: Entry): Promise<Entry> {
  const { storage } = c;
  const changes = await storage.textChanges(scope, entry.seq);
  if (changes.reset) return build(c, scope);
  const { index } = entry;
  let applied = 0;
  if (changes.ids.length > 0) {
    const changed = [...new Set(changes.ids)].filter((id) => id <= index.maxId);
    for (const id of changed) index.remove(id);
    if (changed.length > 0) {
      entry.dropped = true;
      applied += changed.length;
      for (const row of await storage.textRows(scope, { ids: changed })) if (!index.has(row.id)) index.add(row);
    }
  }
  for (const row of await storage.textRows(scope, { afterId: index.maxId })) {
    if (!index.has(row.id)) {
      index.add(row);
      applied++;
    }
  }
  entry.seq = changes.seq;
  entry.sinceSnapshot += applied;
  return entry;
}

/** Whether the entry's index is worth saving now: big enough, and its stored snapshot missing, dropped or far behind. */
function wantsSave(c: CacheState, entry: Entry): boolean {
  if (!c.snapshots || entry.saving || entry.index.size < c.snapshotMinRows) return false;
  const behind = entry.sinceSnapshot >= Math.max(c.snapshotMinChanges, entry.index.size * 0.02);
  return behind || (entry.dropped && c.now() - entry.savedAt >= c.snapshotRefreshMs);
}

/** The entry's index encoded at one log position, after the current turn of the event loop. */
async function encodeEntry(c: CacheState, scope: MemoryScope, entry: Entry): Promise<{ data: Uint8Array; seq: number; maxId: number } | undefined> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  entry.savedAt = c.now();
  const { seq } = entry;
  const maxId = entry.index.maxId;
  const data = encodeIndexSnapshot({ scopeKey: scopeKey(scope), seq, state: entry.index.state() });
  // Whatever happens, the next save waits for as many changes again (a refused save is retried then).
  entry.sinceSnapshot = 0;
  entry.dropped = false;
  return data === undefined ? undefined : { data, seq, maxId };
}

/**
 * Queue a save of the entry's index when it is worth one (see {@link wantsSave}). It runs after the lookup; the
 * next lookup waits for the encoding (one log position), never for the engine's write (at 100k rows on PostgreSQL
 * ~1 s: the search tail after a bulk load).
 */
function maybeSave(c: CacheState, scope: MemoryScope, entry: Entry): void {
  if (!wantsSave(c, entry)) return;
  entry.saving = true;
  const encoded = encodeEntry(c, scope, entry);
  const locked = entry.lock.then(() => encoded);
  entry.lock = locked.catch(() => undefined);
  // A snapshot only speeds up the next process; a failed save (a read-only file, a closed storage) is not an error of the lookup.
  const stored = locked
    .then((snapshot) => snapshot && c.storage.saveTextIndex?.(scope, snapshot))
    .then(() => undefined, () => undefined)
    .finally(() => (entry.saving = false));
  c.saves = c.saves.then(() => stored);
}

/** Drop the least recently used scopes until the kept indexes fit the term budget. */
function evict(c: CacheState): void {
  let total = 0;
  for (const e of c.entries.values()) total += e.index.termCount;
  if (total <= c.budgetTerms) return;
  for (const [key, e] of [...c.entries].sort((a, b) => a[1].used - b[1].used)) {
    if (total <= c.budgetTerms) break;
    c.entries.delete(key);
    total -= e.index.termCount;
  }
}

/** The scope's index, caught up; serialised per scope. */
async function indexFor(c: CacheState, scope: MemoryScope): Promise<ScopeIndex> {
  const key = scopeKey(scope);
  const existing = c.entries.get(key);
  if (existing === undefined) {
    const entry = await load(c, scope);
    if (entry.index.termCount <= c.budgetTerms) {
      c.entries.set(key, entry);
      evict(c);
    }
    maybeSave(c, scope, entry);
    return entry.index;
  }
  existing.used = ++c.clock;
  const run = existing.lock.then(() => catchUp(c, scope, existing));
  existing.lock = run.catch(() => undefined);
  try {
    const next = await run;
    if (next !== existing) c.entries.set(key, next);
    evict(c);
    maybeSave(c, scope, next);
    return next.index;
  } catch (error) {
    c.entries.delete(key);
    throw error;
  }
}

/** The exact top-k of the visible rows: rank, drop what the lookup may not return, rank again until the top is clean. */
async function search(c: CacheState, ...[scope, query, filter, options = {}]: Parameters<LexicalCache['search']>): Promise<LexicalHits> {
  const index = await indexFor(c, scope);
  const statuses = filter.statuses ?? ['active', 'pending'];
  const rejected = new Set<number>(filter.excludeIds ?? []);
  for (;;) {
    const ranked = index.rank(query, {
      limit: filter.limit,
      categories: filter.categories,
      neighbours: options.neighbours === true,
      skip: (id) => rejected.has(id),
    });
    if (ranked.length === 0) return { ranked: [], records: new Map() };
    const records = new Map((await c.storage.getMany(scope, ranked.map((r) => r.id))).map((r) => [r.id, r]));
    let clean = true;
    for (const r of ranked) {
      const rec = records.get(r.id);
      if (rec === undefined || rec.deletedAt !== undefined || !statuses.includes(rec.status)) {
        rejected.add(r.id);
        clean = false;
      }
    }
    if (clean) return { ranked, records };
  }
}

/** A cache over one storage (exported for tests; stores use {@link lexicalCacheFor}): wiring over a {@link CacheState}. */
export function createLexicalCache(storage: MemoryStorage, options: LexicalCacheOptions = {}): LexicalCache {
  const c: CacheState = {
    storage,
    budgetTerms: options.budgetTerms ?? LEXICAL_CACHE_TERMS,
    snapshotMinRows: options.snapshotMinRows ?? LEXICAL_SNAPSHOT_MIN_ROWS,
    snapshotMinChanges: options.snapshotMinChanges ?? 500,
    snapshotRefreshMs: options.snapshotRefreshMs ?? 30_000,
    now: options.now ?? Date.now,
    snapshots: storage.loadTextIndex !== undefined && storage.saveTextIndex !== undefined,
    entries: new Map(),
    clock: 0,
    saves: Promise.resolve(),
  };
  return {
    search: async (...a) => (await search(c, ...a)).ranked,
    searchRecords: (...a) => search(c, ...a),
    settled: () => c.saves,
  };
}
