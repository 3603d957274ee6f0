/**
 * An in-process cache of each scope's sign-bit vectors, searched by Hamming distance in JavaScript.
 *
 * Why: the sqlite-vec bit scan of a 100k-row partition costs ~90 ms on the 2-core reference machine, while
 * the same scan over a packed `Uint32Array` costs a few milliseconds. sqlite-vec stays the persistent index
 * (and the path used when a scope does not fit the cache budget); the cache is loaded from the covering index
 * `memory_vectors_scope_bits` (~50 bytes a row, not the 1.5 KB float blobs).
 *
 * Freshness: every transaction that adds or removes vectors of a scope bumps that scope's row in
 * `memory_vector_generations` (in the same transaction). A search reads the row (one primary-key lookup)
 * and reloads the scope when the generation differs from the one the cache was built at, so another
 * connection's or process's writes are seen by the next search. This connection's own writes patch the
 * cache in place when it was current just before them, so a steady stream of embeddings does not force
 * reloads.
 */
import type { MemoryScope } from '../memory-types';
import type { SqliteHandle } from './handle';

/** Scopes' bits kept in memory, in bytes (least recently searched scope evicted first). */
export const VECTOR_CACHE_BYTES = 64 * 1024 * 1024;

/** Sign bits of a vector, packed LSB-first and padded to whole bytes (sqlite-vec's `bit[]` layout). */
export function signBits(v: Float32Array): Buffer {
  const out = Buffer.alloc(Math.ceil(v.length / 8));
  for (let i = 0; i < v.length; i++) if ((v[i] as number) > 0) out[i >> 3] = (out[i >> 3] as number) | (1 << (i & 7));
  return out;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** One scope's vectors: slot i holds `ids[i]` and words `[i * words, (i + 1) * words)`. */
interface ScopeBits {
  gen: number;
  words: number;
  count: number;
  ids: Float64Array;
  bits: Uint32Array;
  slots: Map<number, number>;
}

const agentKey = (scope: MemoryScope) => scope.agentId ?? '';
const keyOf = (scope: MemoryScope) => `${scope.userId}\u0000${agentKey(scope)}`;
const bytesOf = (s: ScopeBits) => s.ids.byteLength + s.bits.byteLength;

/** Copy packed bytes into a word array at `slot` (bytes beyond `bytes.length` stay zero). */
function putBits(s: ScopeBits, slot: number, bytes: Uint8Array): void {
  const view = new Uint8Array(s.bits.buffer, slot * s.words * 4, s.words * 4);
  view.fill(0);
  view.set(bytes.subarray(0, s.words * 4));
}

function grow(s: ScopeBits, need: number): void {
  if (need <= s.ids.length) return;
  const cap = Math.max(need, s.ids.length * 2, 64);
  const ids = new Float64Array(cap);
  ids.set(s.ids.subarray(0, s.count));
  const bits = new Uint32Array(cap * s.words);
  bits.set(s.bits.subarray(0, s.count * s.words));
  s.ids = ids;
  s.bits = bits;
}

/** What one connection's cache keeps: the scopes' bits (least recently searched first) and the scopes found too large. */
interface BitsCacheState {
  readonly handle: SqliteHandle;
  readonly budgetBytes: number;
  readonly scopes: Map<string, ScopeBits>;
  /** Scopes found too large for the budget, with the generation they were measured at. */
  readonly tooLarge: Map<string, number>;
}

function readGen(c: BitsCacheState, scope: MemoryScope): number {
  return (c.handle.prepare('SELECT gen FROM memory_vector_generations WHERE user_id = ? AND agent_key = ?').pluck().get(scope.userId, agentKey(scope)) as number | undefined) ?? 0;
}

/** The scope's bits read from the covering index, or undefined when they do not fit the budget. */
function load(c: BitsCacheState, scope: MemoryScope, words: number, gen: number): ScopeBits | undefined {
  const key = keyOf(scope);
  if (c.tooLarge.get(key) === gen) return undefined;
  const rows = c.handle
    .prepare('SELECT memory_id, bits FROM memory_vectors WHERE user_id = ? AND agent_id IS ? AND bits IS NOT NULL')
    .raw()
    .all(scope.userId, scope.agentId ?? null) as Array<[number, Uint8Array]>;
  const s: ScopeBits = { gen, words, count: 0, ids: new Float64Array(rows.length), bits: new Uint32Array(rows.length * words), slots: new Map() };
  if (bytesOf(s) > c.budgetBytes) {
    if (c.tooLarge.size >= 1024) c.tooLarge.clear();
    c.tooLarge.set(key, gen);
    return undefined;
  }
  for (const [id, bytes] of rows) {
    putBits(s, s.count, bytes);
    s.ids[s.count] = id;
    s.slots.set(id, s.count++);
  }
  return s;
}

/** Drop the least recently searched scopes (never `keep`) until the cache fits its budget. */
function evict(c: BitsCacheState, keep: string): void {
  let total = 0;
  for (const s of c.scopes.values()) total += bytesOf(s);
  for (const [k, s] of c.scopes) {
    if (total <= c.budgetBytes) break;
    if (k === keep) continue;
    c.scopes.delete(k);
    total -= bytesOf(s);
  }
}

/** The scope's current bits (reloaded when its generation or width changed), marked most recently used. */
function currentBits(c: BitsCacheState, scope: MemoryScope, words: number): ScopeBits | undefined {
  const key = keyOf(scope);
  const gen = readGen(c, scope);
  let s = c.scopes.get(key);
  c.scopes.delete(key);
  if (s === undefined || s.gen !== gen || s.words !== words) {
    s = load(c, scope, words, gen);
    if (s === undefined) return undefined;
  }
  c.scopes.set(key, s); // most recently used last
  evict(c, key);
  return s;
}

/** The `k` ids of `s` nearest to `query` by Hamming distance (ties: newest id first): a histogram of distances, then one pass. */
function hammingNearest(s: ScopeBits, query: Uint8Array, k: number): number[] {
  const { words } = s;
  const q = new Uint32Array(words);
  new Uint8Array(q.buffer).set(query.subarray(0, words * 4));
  const n = s.count;
  const maxD = words * 32;
  const dist = new Uint16Array(n);
  const hist = new Uint32Array(maxD + 1);
  const bits = s.bits;
  for (let i = 0, o = 0; i < n; i++) {
    let d = 0;
    for (let j = 0; j < words; j++, o++) d += popcount(((bits[o] as number) ^ (q[j] as number)) >>> 0);
    dist[i] = d;
    hist[d] = (hist[d] as number) + 1;
  }
  let threshold = maxD;
  for (let d = 0, seen = 0; d <= maxD; d++) {
    seen += hist[d] as number;
    if (seen >= k) {
      threshold = d;
      break;
    }
  }
  const below: number[] = [];
  const at: number[] = [];
  for (let i = 0; i < n; i++) {
    const d = dist[i] as number;
    if (d < threshold) below.push(s.ids[i] as number);
    else if (d === threshold) at.push(s.ids[i] as number);
  }
  at.sort((a, b) => b - a);
  return below.concat(at.slice(0, Math.max(0, k - below.length)));
}

/** Apply removals (the last slot moves into the freed one) and puts (new slots appended) to a scope's bits. */
function applyChange(s: ScopeBits, put: ReadonlyArray<{ id: number; bits: Uint8Array }>, removed: readonly number[]): void {
  for (const id of removed) {
    const slot = s.slots.get(id);
    if (slot === undefined) continue;
    const last = --s.count;
    if (slot !== last) {
      const lastId = s.ids[last] as number;
      s.ids[slot] = lastId;
      s.bits.copyWithin(slot * s.words, last * s.words, (last + 1) * s.words);
      s.slots.set(lastId, slot);
    }
    s.slots.delete(id);
  }
  for (const p of put) {
    let slot = s.slots.get(p.id);
    if (slot === undefined) {
      grow(s, s.count + 1);
      slot = s.count++;
      s.slots.set(p.id, slot);
      s.ids[slot] = p.id;
    }
    putBits(s, slot, p.bits);
  }
}

/**
 * Bump the scope's generation (inside the writing transaction) and, when the cache was current just
 * before, apply the change to it; otherwise drop it so the next search reloads.
 */
function changed(c: BitsCacheState, scope: MemoryScope, put: ReadonlyArray<{ id: number; bits: Uint8Array }>, removed: readonly number[]): void {
  const gen = c.handle
    .prepare(
      `INSERT INTO memory_vector_generations (user_id, agent_key, gen) VALUES (?, ?, 1)
       ON CONFLICT (user_id, agent_key) DO UPDATE SET gen = gen + 1 RETURNING gen`,
    )
    .pluck()
    .get(scope.userId, agentKey(scope)) as number;
  const key = keyOf(scope);
  const s = c.scopes.get(key);
  if (s === undefined) return;
  if (s.gen !== gen - 1 || put.some((p) => Math.ceil(p.bits.length / 4) !== s.words)) {
    c.scopes.delete(key);
    return;
  }
  s.gen = gen;
  applyChange(s, put, removed);
}

/** The cache of one connection: wiring over a {@link BitsCacheState}. */
export function createVectorBitsCache(handle: SqliteHandle, budgetBytes = VECTOR_CACHE_BYTES) {
  const c: BitsCacheState = { handle, budgetBytes, scopes: new Map(), tooLarge: new Map() };
  return {
    /**
     * The `k` ids of the scope nearest to `query` by Hamming distance (ties: newest id first), or undefined
     * when the scope does not fit the budget (the caller then asks sqlite-vec). Runs inside a read.
     */
    nearest(scope: MemoryScope, query: Uint8Array, k: number): number[] | undefined {
      const s = currentBits(c, scope, Math.ceil(query.length / 4));
      return s === undefined ? undefined : hammingNearest(s, query, k);
    },
    /** See {@link changed}. */
    changed: (scope: MemoryScope, put: ReadonlyArray<{ id: number; bits: Uint8Array }>, removed: readonly number[]): void => changed(c, scope, put, removed),
    /** Forget everything (e.g. when a transaction that patched the cache rolled back). */
    clear(): void {
      c.scopes.clear();
      c.tooLarge.clear();
    },
  };
}
