/**
 * Read caches for the SQLite engine: per-turn reads (capability switches, pending approvals, kv values, session
 * rows, the last message seq) answered from memory while nothing changed, never stale.
 *
 * Two things can change a cached row:
 * - **another connection** (this process or another) commits: SQLite's `PRAGMA data_version` then returns a
 *   different number on this connection (https://sqlite.org/pragma.html#pragma_data_version). Each entry keeps
 *   the `data_version` it was read at, and each lookup reads `data_version` first (one statement, ~2 µs): a
 *   mismatch reads the row again. The version is read BEFORE the row, so a commit landing between the two
 *   leaves the entry older than its value (a spurious miss next time), never the reverse.
 * - **this connection** writes (its own commits do not move `data_version`): the domain that writes a key
 *   invalidates it at once (and marks it dirty until the transaction ends, so a read inside the transaction does
 *   not cache an uncommitted value), and may hand the cache the value it wrote, applied only after the outermost
 *   transaction COMMITs ({@link CommitTracker.afterCommit}); a rollback drops it, so the cache never claims a write
 *   that did not happen. Rows written by the host through `storage.handle` are not known by key: a host `read` or
 *   `write` clears every cache when it returns (and no cache answers while it runs), and a host that takes the raw
 *   connection (`handle.db`) or a statement (`handle.prepare`) turns the caches off for the life of the storage.
 */
import type Database from 'better-sqlite3';
import type { SqliteHandle } from './handle';
import type { SqliteHandleInternal } from './sqlite-handle';

/**
 * Commit tracking around the engine's handle, and the state the caches share: the connection's `data_version`,
 * whether a transaction is open, the after-commit queue, the host's use of the raw connection.
 */
export interface CommitTracker {
  /** `PRAGMA data_version` now; inside this handle's write transaction, read once per transaction (the write lock holds it still). */
  version(): number;
  /** Inside a write transaction: the version if this transaction already read it, else undefined (nothing is run). */
  knownVersion(): number | undefined;
  /** Run `fn` once the outermost write transaction commits; dropped when it (or the nested write that queued it) fails. Outside a write: now. */
  afterCommit(fn: () => void): void;
  /**
   * May a value read now be cached? Not while the host runs its own statement or after it took the raw
   * connection; inside a transaction only when this transaction has not written the key (`dirty`).
   */
  mayCache(dirty: () => boolean): boolean;
  /** False while a host `read`/`write` runs, and for good once the host took the raw connection or a statement: lookups then read the database. */
  readonly enabled: boolean;
  /** True while a transaction is open on the connection. */
  inTransaction(): boolean;
  /**
   * Inside a write: a number that stays the same while this transaction goes on as it is, and changes when a new one
   * begins, a nested write in it fails (its savepoint rolled back) or the caches are invalidated; outside: undefined.
   * What a domain learned from its own writes in the transaction holds while the number stands.
   */
  transactionToken(): number | undefined;
  /** Forget every entry of every cache, and drop the after-commit updates queued so far. */
  invalidateAll(): void;
  /**
   * Run `start` (synchronously) with the lookups it begins outside a transaction validated against one
   * `data_version` read, taken at the first of them, instead of one each (`Storage.batchReads`). Sound because
   * nothing but `start`'s own code runs until it returns, so nothing this process does can have learned of a commit
   * the shared read missed; a write begun inside ends the sharing (its lock wait could let one land). Nested: the
   * outer burst's read stands.
   */
  burst(start: () => void): void;
  /** A cache joins the tracker (cleared by {@link invalidateAll}; told when each transaction ends). */
  register(cache: CacheHooks): void;
}

/** What the tracker calls on each cache. */
export interface CacheHooks {
  clear(): void;
  endTransaction(): void;
}

/** What `storage.handle` reports to the tracker: a host statement running, or the raw connection handed out. */
interface HostSwitches {
  hostRunning(delta: 1 | -1): void;
  disable(): void;
}

/** The engine handle with commit tracking: what the domain modules use. */
export interface TrackedSqliteHandle extends SqliteHandleInternal {
  readonly reads: CommitTracker;
}

/**
 * The connection's `PRAGMA data_version`, read outside a transaction: once per lookup, or once per
 * {@link CommitTracker.burst} (`forget` ends a burst's sharing: a write began, the caches were cleared).
 */
function versionReader(inner: SqliteHandleInternal) {
  /** Prepared once and kept (not through the statement cache, whose eviction would cost a prepare). */
  let statement: Database.Statement | undefined;
  /** Inside `burst`: true; `shared` is the one `data_version` its lookups share once read. */
  let bursting = false;
  let shared: number | undefined;
  const read = (): number => {
    statement ??= inner.prepare('PRAGMA data_version').pluck();
    return statement.get() as number;
  };
  return {
    read,
    outside(): number {
      if (!bursting) return read();
      shared ??= read();
      return shared;
    },
    burst(start: () => void): void {
      if (bursting) return start();
      bursting = true;
      shared = undefined;
      try {
        start();
      } finally {
        bursting = false;
        shared = undefined;
      }
    },
    forget(): void {
      shared = undefined;
    },
  };
}

/**
 * Wrap the engine's handle: writes run as before; the tracker learns where the outermost transaction commits or
 * rolls back (a nested write that fails rolls back to its savepoint: what it queued is dropped with it).
 */
export function trackCommits(inner: SqliteHandleInternal): TrackedSqliteHandle & { readonly host: HostSwitches } {
  const caches: CacheHooks[] = [];
  /** After-commit updates of the open transaction, each with the epoch it was queued in. */
  let queued: Array<{ readonly epoch: number; readonly fn: () => void }> = [];
  let depth = 0;
  let epoch = 0;
  let hostDepth = 0;
  let enabled = true;
  /** `invalidateAll` ran inside the open transaction: nothing read in it is cached. */
  let allDirty = false;
  let txVersion: number | undefined;
  /** Moves at each outermost write attempt, each failed nested write and each invalidation (`transactionToken`). */
  let txSerial = 0;

  /** A transaction this handle did not open (a host's, a domain's own `db.transaction`); false once closed. */
  const otherTransaction = (): boolean => !inner.closed && inner.db.inTransaction;
  const versions = versionReader(inner);
  const readVersion = versions.read;
  const endTransaction = (): void => {
    queued = [];
    txVersion = undefined;
    allDirty = false;
    for (const cache of caches) cache.endTransaction();
  };

  const tracker: CommitTracker = {
    version() {
      if (depth === 0) return versions.outside();
      txVersion ??= readVersion();
      return txVersion;
    },
    knownVersion() {
      return depth === 0 ? undefined : txVersion;
    },
    afterCommit(fn) {
      if (depth === 0) fn();
      else queued.push({ epoch, fn });
    },
    mayCache(dirty) {
      if (!enabled || hostDepth > 0) return false;
      if (depth === 0 && !otherTransaction()) return true;
      return !allDirty && !dirty();
    },
    get enabled() {
      // While a host statement runs, rows may have changed under the caches: every read goes to the database.
      return enabled && hostDepth === 0;
    },
    inTransaction() {
      return depth > 0 || otherTransaction();
    },
    transactionToken() {
      return depth === 0 ? undefined : txSerial;
    },
    burst: versions.burst,
    invalidateAll() {
      epoch++;
      versions.forget();
      txSerial++;
      if (depth > 0) allDirty = true;
      for (const cache of caches) cache.clear();
    },
    register(cache) {
      caches.push(cache);
    },
  };

  /** Run one write level: the outermost applies the queue once it committed; a nested one keeps or drops its part. */
  const level = <T>(run: (reset: () => void) => T): T => {
    if (depth === 0) {
      let committed: typeof queued = [];
      try {
        const result = run(endTransaction);
        committed = queued;
        return result;
      } finally {
        endTransaction();
        for (const item of committed) if (item.epoch === epoch) item.fn();
      }
    }
    const mark = queued.length;
    try {
      return run(() => undefined);
    } catch (error) {
      queued.length = mark;
      txSerial++;
      throw error;
    }
  };

  return {
    get db(): Database.Database {
      return inner.db;
    },
    get vectorAvailable() {
      return inner.vectorAvailable;
    },
    get logger() {
      return inner.logger;
    },
    get closed() {
      return inner.closed;
    },
    reads: tracker,
    host: {
      hostRunning(delta) {
        hostDepth += delta;
      },
      disable() {
        enabled = false;
        tracker.invalidateAll();
      },
    },
    read: (operation, fn) => inner.read(operation, fn),
    prepare: (sql) => inner.prepare(sql),
    close: () => inner.close(),
    write<T>(operation: string, fn: (db: Database.Database) => T): T {
      return level((reset) =>
        inner.write(operation, (db) => {
          // A retried attempt (SQLITE_BUSY) starts over: what the failed attempt queued is dropped.
          reset();
          versions.forget();
          if (depth === 0) txSerial++;
          depth++;
          try {
            return fn(db);
          } finally {
            depth--;
          }
        }),
      );
    },
    writeAll(operation, start) {
      level((reset) =>
        inner.writeAll(operation, () => {
          reset();
          versions.forget();
          if (depth === 0) txSerial++;
          depth++;
          try {
            start();
          } finally {
            depth--;
          }
        }),
      );
    },
  };
}

/**
 * The handle given to the host as `storage.handle`: the same connection, but the caches cannot know which rows a
 * host statement touches. A host `read`/`write` clears every cache when it returns (no cache answers while it
 * runs); taking `db` or a statement from `prepare` turns the caches off for good.
 */
export function hostHandle(tracked: TrackedSqliteHandle & { readonly host: HostSwitches }): SqliteHandle {
  const { host: switches } = tracked;
  const host = <T>(run: () => T): T => {
    switches.hostRunning(1);
    try {
      return run();
    } finally {
      switches.hostRunning(-1);
      tracked.reads.invalidateAll();
    }
  };
  return {
    get db(): Database.Database {
      const db = tracked.db;
      switches.disable();
      return db;
    },
    get vectorAvailable() {
      return tracked.vectorAvailable;
    },
    get logger() {
      return tracked.logger;
    },
    read: (operation, fn) => host(() => tracked.read(operation, fn)),
    write: (operation, fn) => host(() => tracked.write(operation, fn)),
    prepare(sql) {
      const statement = tracked.prepare(sql);
      switches.disable();
      return statement;
    },
  };
}

/** Options of {@link createReadCache}. */
export interface ReadCacheOptions<V> {
  /** Most entries kept; the least recently used goes first. */
  readonly maxEntries: number;
  /** With `weigh`: the most total weight kept (say, characters); a value heavier than a quarter of it is not cached. */
  readonly maxWeight?: number | undefined;
  readonly weigh?: ((value: V) => number) | undefined;
}

/** One cache of rows by key, validated by `data_version` and told of this connection's writes. */
export interface ReadCache<V> {
  /** The cached value when nothing changed since it was read; else `load()` (cached when safe). */
  get(key: string, load: () => V): V;
  /** The entry if it is still valid (`{ value }`), else undefined; nothing is loaded. */
  peek(key: string): { readonly value: V } | undefined;
  /**
   * Inside a write: `key` changed. The entry is dropped now; once the transaction commits it becomes `after.value`
   * (read at `after.version`, from {@link CommitTracker.version} inside the same write) or stays absent.
   */
  wrote(key: string, after?: { readonly value: V; readonly version: number }): void;
  /** Inside a write: rows changed that no key names; every entry is dropped. */
  wroteAll(): void;
  /** Entries held (for tests). */
  readonly size: number;
}

/** A cache registered with the tracker. Keys are strings; build them from the query's parameters. */
export function createReadCache<V>(tracker: CommitTracker, options: ReadCacheOptions<V>): ReadCache<V> {
  const { maxEntries, maxWeight = Number.POSITIVE_INFINITY, weigh } = options;
  const entries = new Map<string, Entry<V>>();
  const dirty = new Set<string>();
  let dirtyAll = false;
  let weight = 0;

  const drop = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    weight -= entry.weight;
  };
  const store = (key: string, version: number, value: V): void => {
    drop(key);
    const w = weigh === undefined ? 0 : weigh(value);
    if (w * 4 > maxWeight) return;
    entries.set(key, { version, value, weight: w });
    weight += w;
    while (entries.size > maxEntries || weight > maxWeight) {
      const oldest = entries.keys().next();
      if (oldest.done === true) break;
      drop(oldest.value);
    }
  };
  const valid = (key: string, version: number): Entry<V> | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.version !== version) {
      drop(key);
      return undefined;
    }
    // Most recently used last.
    entries.delete(key);
    entries.set(key, entry);
    return entry;
  };
  const isDirty = (key: string) => (): boolean => dirtyAll || dirty.has(key);

  tracker.register({
    clear() {
      entries.clear();
      weight = 0;
      if (tracker.inTransaction()) dirtyAll = true;
    },
    endTransaction() {
      dirty.clear();
      dirtyAll = false;
    },
  });

  return {
    get(key, load) {
      if (!tracker.enabled) return load();
      // The version first: a commit between it and the read leaves the entry older than its value, never newer.
      const version = tracker.version();
      const hit = valid(key, version);
      if (hit !== undefined) return hit.value;
      const value = load();
      if (tracker.mayCache(isDirty(key))) store(key, version, value);
      return value;
    },
    peek(key) {
      if (!tracker.enabled) return undefined;
      return valid(key, tracker.version());
    },
    wrote(key, after) {
      drop(key);
      if (tracker.inTransaction()) dirty.add(key);
      tracker.afterCommit(() => (after === undefined ? drop(key) : store(key, after.version, after.value)));
    },
    wroteAll() {
      entries.clear();
      weight = 0;
      if (tracker.inTransaction()) dirtyAll = true;
      tracker.afterCommit(() => {
        entries.clear();
        weight = 0;
      });
    },
    get size() {
      return entries.size;
    },
  };
}

/** An entry: the value, the `data_version` it was read at, its weight. */
interface Entry<V> {
  readonly version: number;
  readonly value: V;
  readonly weight: number;
}
