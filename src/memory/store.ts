/**
 * `createMemoryStore`: the scoped memory store over any storage engine. Thin wiring over validation
 * (`validate.ts`), text (`text.ts`), edges (`edges.ts`), search (`search.ts`), the snapshot (`snapshot.ts`),
 * the embedding queue (`embedding-queue.ts`) and the fact layer (`fact-layer.ts`).
 */
import { MinaraError } from '../errors/minara-error';
import type { MemoryRecord, MemoryScope, MemoryStorage } from '../storage/memory-types';
import { type Logger, createConsoleLogger } from '../util/logger';
import { extractMemoryEdges } from './edges';
import { createEmbeddingQueue, type EmbeddingQueue } from './embedding-queue';
import { entityNeighborhood, topEntities } from './entity-graph';
import { FACT_CATEGORY, createFactLayer } from './fact-layer';
import { runSearch, toHit } from './search';
import { type RowInput, checkObject, createRowPreparer, initialEmbeddingState, toItem } from './write-rows';
import { SNAPSHOT_LIMIT, renderMemorySnapshot, snapshotHash } from './snapshot';
import { buildSearchText, contentHash } from './text';
import type { MemorySnapshot, MemoryStore, MemoryStoreOptions, MemoryWriteInput } from './types';
import {
  DEFAULT_MAX_CONTENT_BYTES,
  validateContent,
  validateId,
  validateLimit,
  validateMetadata,
  validateName,
  validateProfileEntry,
  validateScope,
} from './validate';

const DAY_MS = 86_400_000;
const SNAPSHOT_CACHE_SIZE = 256;
/** Sources the frozen snapshot leaves out: trade cases (reached by search, entity lookups and compiled pages). */
// Trade cases are episodes; `proposed` rows wait for an operator (written after untrusted content, see memory/tools.ts).
const SNAPSHOT_EXCLUDED_SOURCES = ['trade_case', 'proposed'];

/** What one memory store keeps: its scope, its engine, its settings and its helpers. */
interface StoreState {
  storage: MemoryStorage;
  scope: MemoryScope;
  clock: () => Date;
  now: () => string;
  logger: Logger;
  bus: MemoryStoreOptions['bus'];
  queue: EmbeddingQueue | undefined;
  maxContentBytes: number;
  retentionDays: number;
  queryEmbeddingTimeoutMs: number;
  minVectorSimilarity: number;
  agentField: { agentId?: string };
  /** Frozen snapshots per session (at most {@link SNAPSHOT_CACHE_SIZE}). */
  snapshots: Map<string, MemorySnapshot>;
  isVectorAvailable: () => Promise<boolean>;
  prepareRow: RowPreparer['prepareRow'];
  writeInput: RowPreparer['writeInput'];
  /** Set right after the state (its pending inserts go through {@link insertRow}). */
  facts: FactLayer;
}

type RowPreparer = ReturnType<typeof createRowPreparer>;
type FactLayer = ReturnType<typeof createFactLayer>;

/** The checked options a store is built from. */
function checkOptions(options: MemoryStoreOptions) {
  if (typeof options !== 'object' || options === null) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: options are required ({ storage, scope })');
  const scope = validateScope(options.scope);
  if (typeof options.storage !== 'object' || options.storage === null || typeof options.storage.memory !== 'object') {
    throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `storage` must be a Storage with a memory domain (createSqliteStorage or createInMemoryStorage)');
  }
  const maxContentBytes = options.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
  const retentionDays = options.softDeleteRetentionDays ?? 30;
  if (!Number.isInteger(maxContentBytes) || maxContentBytes < 1) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `maxContentBytes` must be a positive integer');
  if (!Number.isFinite(retentionDays) || retentionDays < 0) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `softDeleteRetentionDays` must be a non-negative number');
  return { scope, storage: options.storage.memory, maxContentBytes, retentionDays };
}

/** Queue a new or changed row for embedding (when an embedder is set and vectors are available). */
async function enqueue(s: StoreState, r: MemoryRecord): Promise<void> {
  if (s.queue !== undefined && r.embeddingState === 'pending' && (await s.isVectorAvailable())) {
    s.queue.enqueue({ id: r.id, content: r.content, contentHash: r.contentHash });
  }
}

async function afterInsert(s: StoreState, record: MemoryRecord): Promise<{ id: number }> {
  await enqueue(s, record);
  s.bus?.emit('memory:written', { id: record.id, userId: s.scope.userId, ...s.agentField, category: record.category });
  return { id: record.id };
}

async function insertRow(s: StoreState, input: RowInput): Promise<{ id: number }> {
  return afterInsert(s, await s.storage.insert(s.scope, s.prepareRow(input)));
}

async function write(s: StoreState, input: MemoryWriteInput): Promise<{ id: number }> {
  checkObject('input', input);
  const category = validateName('category', input.category);
  if (category === FACT_CATEGORY) {
    validateContent(input.content, s.maxContentBytes);
    return s.facts.recordFact(input.content, validateMetadata(input.metadata));
  }
  return insertRow(s, { category, content: input.content, metadata: input.metadata, source: input.source, status: 'active' });
}

async function writeMany(s: StoreState, inputs: readonly MemoryWriteInput[]): Promise<Array<{ id: number }>> {
  if (!Array.isArray(inputs)) throw new MinaraError('MEMORY_INVALID', '`inputs` must be an array of write inputs');
  validateLimit(inputs.length, 1, 'inputs.length');
  const rows = (inputs as readonly MemoryWriteInput[]).map((input, i) => {
    try {
      return s.prepareRow(s.writeInput(input));
    } catch (error) {
      if (MinaraError.isInstance(error)) throw new MinaraError(error.code, `inputs[${i}]: ${error.message}`, { cause: error });
      throw error;
    }
  });
  const records = await s.storage.insertMany(s.scope, rows);
  const out: Array<{ id: number }> = [];
  for (const r of records) {
    out.push(await afterInsert(s, r));
    if (r.category === FACT_CATEGORY) s.facts.recorded(r.id);
  }
  return out;
}

async function update(s: StoreState, id: number, input: Parameters<MemoryStore['update']>[1]): ReturnType<MemoryStore['update']> {
  const { storage, scope } = s;
  validateId(id);
  checkObject('input', input);
  const category = input.category === undefined ? undefined : validateName('category', input.category);
  const content = input.content === undefined ? undefined : validateContent(input.content, s.maxContentBytes);
  const metadata = input.metadata === null ? null : validateMetadata(input.metadata);
  const source = input.source === undefined ? undefined : validateName('source', input.source);
  const current = await storage.get(scope, id);
  if (current === undefined) throw new MinaraError('NOT_FOUND', `memory ${id} does not exist in this scope`);
  const nextContent = content ?? current.content;
  const nextMetadata = metadata === undefined ? current.metadata : (metadata ?? undefined);
  const hash = contentHash(nextContent);
  const changedText = hash !== current.contentHash;
  const updated = await storage.update(scope, id, {
    ...(category === undefined ? {} : { category }),
    ...(content === undefined ? {} : { content, searchText: buildSearchText(content) }),
    ...(metadata === undefined ? {} : { metadata }),
    ...(source === undefined ? {} : { source }),
    ...(changedText ? { contentHash: hash, embeddingState: initialEmbeddingState(nextContent) } : {}),
    ...(content !== undefined || metadata !== undefined ? { edges: extractMemoryEdges(nextContent, nextMetadata) } : {}),
    now: s.now(),
  });
  if (updated === undefined) throw new MinaraError('NOT_FOUND', `memory ${id} does not exist in this scope`);
  if (changedText) await enqueue(s, updated);
  s.bus?.emit('memory:written', { id, userId: scope.userId, ...s.agentField, category: updated.category });
  return toItem(updated);
}

async function read(s: StoreState, opts: Parameters<MemoryStore['read']>[0] = {}): ReturnType<MemoryStore['read']> {
  const limit = validateLimit(opts.limit, 20);
  const category = opts.category === undefined ? undefined : validateName('category', opts.category);
  const source = opts.source === undefined ? undefined : validateName('source', opts.source);
  const rows = await s.storage.list(s.scope, { ...(category === undefined ? {} : { categories: [category] }), ...(source === undefined ? {} : { source }), limit });
  return rows.map((r) => toHit(r, 0));
}

async function purgeExpiredSoftDeleted(s: StoreState, cutoff: Date | undefined): Promise<number> {
  if (cutoff !== undefined && (!(cutoff instanceof Date) || Number.isNaN(cutoff.getTime()))) {
    throw new MinaraError('MEMORY_INVALID', '`cutoff` must be a valid Date');
  }
  const at = cutoff ?? new Date(s.clock().getTime() - s.retentionDays * DAY_MS);
  return s.storage.purgeSoftDeleted(s.scope, at.toISOString());
}

function profileOf(s: StoreState): MemoryStore['profile'] {
  const { storage, scope } = s;
  return {
    async get(key) {
      return (await storage.profileGet(scope, validateProfileEntry(key).key))?.value;
    },
    async set(key, value, options = {}) {
      const entry = validateProfileEntry(key, value);
      const setBy = options.setBy ?? 'user';
      if (setBy !== 'user' && setBy !== 'agent') throw new MinaraError('MEMORY_INVALID', `profile \`setBy\` must be "user" or "agent", got ${JSON.stringify(setBy)}`);
      return storage.profileSet(scope, entry.key, entry.value, s.now(), setBy);
    },
    async list() {
      return storage.profileList(scope);
    },
    async delete(key) {
      return storage.profileDelete(scope, validateProfileEntry(key).key);
    },
  };
}

async function loadSnapshot(s: StoreState, opts: Parameters<MemoryStore['loadSnapshot']>[0] = {}): Promise<MemorySnapshot> {
  const { snapshots } = s;
  const sessionId = opts.sessionId;
  if (sessionId !== undefined) {
    const cached = snapshots.get(sessionId);
    if (cached !== undefined) return cached;
  }
  const limit = validateLimit(opts.limit, SNAPSHOT_LIMIT);
  // Trade cases are episodes, found by search and by entity: they never crowd the frozen block.
  const [profile, memories] = await Promise.all([s.storage.profileList(s.scope), s.storage.list(s.scope, { limit, excludeSources: SNAPSHOT_EXCLUDED_SOURCES })]);
  const text = renderMemorySnapshot({ profile, memories });
  const snapshot: MemorySnapshot = { text, memoryIds: memories.map((m) => m.id), profileKeys: profile.map((p) => p.key), hash: snapshotHash(text) };
  if (sessionId !== undefined) {
    snapshots.set(sessionId, snapshot);
    if (snapshots.size > SNAPSHOT_CACHE_SIZE) snapshots.delete(snapshots.keys().next().value as string);
  }
  return snapshot;
}

async function recordFact(s: StoreState, content: string, opts: Parameters<MemoryStore['recordFact']>[1]): ReturnType<MemoryStore['recordFact']> {
  validateContent(content, s.maxContentBytes);
  const source = opts?.source === undefined ? 'agent_recorded' : validateName('source', opts.source);
  if (source === 'user_manual') throw new MinaraError('MEMORY_INVALID', '`source` user_manual is reserved for memories a person wrote by hand; a recorded fact cannot claim it');
  return s.facts.recordFact(content, validateMetadata(opts?.metadata), source);
}

async function backfillEmbeddings(s: StoreState, opts: Parameters<MemoryStore['backfillEmbeddings']>[0] = {}): Promise<number> {
  const { queue } = s;
  if (queue === undefined || !(await s.isVectorAvailable())) return 0;
  const limit = validateLimit(opts.limit, 1000);
  const rows = await s.storage.listByEmbeddingState(s.scope, opts.includeFailed === true ? ['pending', 'failed'] : ['pending'], limit);
  for (const r of rows) queue.enqueue({ id: r.id, content: r.content, contentHash: r.contentHash });
  return rows.length;
}

/** The store's state; its fact layer is wired to it by the caller. */
function newStoreState(options: MemoryStoreOptions): Omit<StoreState, 'facts'> {
  const { scope, storage, maxContentBytes, retentionDays } = checkOptions(options);
  const clock = options.now ?? (() => new Date());
  const now = () => clock().toISOString();
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  const { embedder } = options;
  let vectorAvailable: Promise<boolean> | undefined;
  const isVectorAvailable = (): Promise<boolean> => {
    vectorAvailable ??= storage.vectorInfo().then(
      (i) => i.available,
      () => false,
    );
    return vectorAvailable;
  };
  const queue: EmbeddingQueue | undefined =
    embedder === undefined
      ? undefined
      : createEmbeddingQueue({
          embedder, storage, scope, logger, concurrency: options.embeddingConcurrency, batchSize: options.embeddingBatchSize, retries: options.embeddingRetries,
        });
  const { prepareRow, writeInput } = createRowPreparer({ maxContentBytes, now });
  return {
    storage, scope, clock, now, logger, bus: options.bus, queue, maxContentBytes, retentionDays,
    queryEmbeddingTimeoutMs: options.queryEmbeddingTimeoutMs ?? 2000, minVectorSimilarity: options.minVectorSimilarity ?? 0.2,
    agentField: scope.agentId === undefined ? {} : { agentId: scope.agentId },
    snapshots: new Map(), isVectorAvailable, prepareRow, writeInput,
  };
}

/**
 * Create a memory store confined to one tenant (`scope`). Writes persist at once (row, full-text index and
 * edges in one transaction); embeddings are computed in the background when an `embedder` is given.
 *
 * Scoping: a store with `{ userId }` sees only that user's rows without an agent; a store with
 * `{ userId, agentId }` sees only that agent's rows. No path runs a query without the scope.
 *
 * @example
 * ```ts
 * import { createMemoryStore } from '@minara/agent';
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const memory = createMemoryStore({ storage, scope: { userId: 'u1' } });
 * await memory.write({ category: 'preference', content: 'always use 0.5% slippage on swaps' });
 * await memory.profile.set('risk_tolerance', 'conservative');
 * const hits = await memory.search('slip*', { limit: 5 });
 * const { text } = await memory.loadSnapshot({ sessionId: 's1' }); // inject once per session
 * ```
 */
export function createMemoryStore(options: MemoryStoreOptions): MemoryStore {
  const base = newStoreState(options);
  const { storage, scope, queue } = base;
  const facts = createFactLayer({
    storage,
    scope,
    now: base.now,
    logger: base.logger,
    bus: base.bus,
    consolidator: options.consolidator,
    debounceMs: options.factSweepDebounceMs ?? 250,
    insertPending: (content, metadata, source) =>
      insertRow(s, { category: FACT_CATEGORY, content, metadata, source: undefined, status: 'pending', forceSource: source }),
  });
  const s: StoreState = { ...base, facts };

  const store: MemoryStore = {
    scope,
    write: (input) => write(s, input),
    writeMany: (inputs) => writeMany(s, inputs),
    async get(id, opts) {
      const r = await storage.get(scope, validateId(id), { includeDeleted: opts?.includeDeleted === true });
      return r === undefined ? undefined : toItem(r);
    },
    update: (id, input) => update(s, id, input),
    read: (opts) => read(s, opts),
    async search(query, opts) {
      return (await store.searchWithInfo(query, opts)).hits;
    },
    searchWithInfo: (query, opts) =>
      runSearch(
        { storage, scope, logger: s.logger, embeddings: queue, vectorAvailable: s.isVectorAvailable, queryEmbeddingTimeoutMs: s.queryEmbeddingTimeoutMs, minVectorSimilarity: s.minVectorSimilarity },
        query,
        opts,
      ),
    async softDelete(id) {
      const done = await storage.softDelete(scope, validateId(id), s.now());
      if (done) s.bus?.emit('memory:deleted', { id, userId: scope.userId, hard: false });
      return done;
    },
    restore: async (id) => storage.restore(scope, validateId(id), s.now()),
    async hardDelete(id) {
      const done = await storage.hardDelete(scope, validateId(id));
      if (done) s.bus?.emit('memory:deleted', { id, userId: scope.userId, hard: true });
      return done;
    },
    purgeExpiredSoftDeleted: (cutoff) => purgeExpiredSoftDeleted(s, cutoff),
    profile: profileOf(s),
    loadSnapshot: (opts) => loadSnapshot(s, opts),
    recordFact: (content, opts) => recordFact(s, content, opts),
    consolidatePending: () => facts.consolidatePending(),
    consolidationEvents: (opts) => facts.events(opts),
    getEntityNeighborhood: (entity, opts) => entityNeighborhood(storage, scope, entity, opts?.limit),
    topEntities: (opts) => topEntities(storage, scope, opts),
    async flushEmbeddings() {
      await queue?.flush();
    },
    backfillEmbeddings: (opts) => backfillEmbeddings(s, opts),
    async close() {
      await facts.close();
      await queue?.close();
    },
  };
  return store;
}
