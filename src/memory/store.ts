/**
 * `createMemoryStore`: the scoped memory store over any storage engine. Thin wiring over validation
 * (`validate.ts`), text (`text.ts`), edges (`edges.ts`), search (`search.ts`), the snapshot (`snapshot.ts`),
 * the embedding queue (`embedding-queue.ts`) and the fact layer (`fact-layer.ts`).
 */
import { MinaraError } from '../errors/minara-error';
import type { MemoryRecord } from '../storage/memory-types';
import { createConsoleLogger } from '../util/logger';
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
  if (typeof options !== 'object' || options === null) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: options are required ({ storage, scope })');
  const scope = validateScope(options.scope);
  if (typeof options.storage !== 'object' || options.storage === null || typeof options.storage.memory !== 'object') {
    throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `storage` must be a Storage with a memory domain (createSqliteStorage or createInMemoryStorage)');
  }
  const storage = options.storage.memory;
  const clock = options.now ?? (() => new Date());
  const now = () => clock().toISOString();
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  const { bus, embedder, consolidator } = options;
  const maxContentBytes = options.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
  const retentionDays = options.softDeleteRetentionDays ?? 30;
  if (!Number.isInteger(maxContentBytes) || maxContentBytes < 1) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `maxContentBytes` must be a positive integer');
  if (!Number.isFinite(retentionDays) || retentionDays < 0) throw new MinaraError('CONFIG_INVALID', 'createMemoryStore: `softDeleteRetentionDays` must be a non-negative number');

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
          embedder,
          storage,
          scope,
          logger,
          concurrency: options.embeddingConcurrency,
          batchSize: options.embeddingBatchSize,
          retries: options.embeddingRetries,
        });
  const agentField = scope.agentId === undefined ? {} : { agentId: scope.agentId };
  const snapshots = new Map<string, MemorySnapshot>();

  const enqueue = async (r: MemoryRecord): Promise<void> => {
    if (queue !== undefined && r.embeddingState === 'pending' && (await isVectorAvailable())) {
      queue.enqueue({ id: r.id, content: r.content, contentHash: r.contentHash });
    }
  };
  const { prepareRow, writeInput } = createRowPreparer({ maxContentBytes, now });
  const afterInsert = async (record: MemoryRecord): Promise<{ id: number }> => {
    await enqueue(record);
    bus?.emit('memory:written', { id: record.id, userId: scope.userId, ...agentField, category: record.category });
    return { id: record.id };
  };
  const insertRow = async (input: RowInput) => afterInsert(await storage.insert(scope, prepareRow(input)));
  const facts = createFactLayer({
    storage,
    scope,
    now,
    logger,
    bus,
    consolidator,
    debounceMs: options.factSweepDebounceMs ?? 250,
    insertPending: (content, metadata, source) =>
      insertRow({ category: FACT_CATEGORY, content, metadata, source: undefined, status: 'pending', forceSource: source }),
  });

  const store: MemoryStore = {
    scope,
    async write(input: MemoryWriteInput) {
      checkObject('input', input);
      const category = validateName('category', input.category);
      if (category === FACT_CATEGORY) {
        validateContent(input.content, maxContentBytes);
        return facts.recordFact(input.content, validateMetadata(input.metadata));
      }
      return insertRow({ category, content: input.content, metadata: input.metadata, source: input.source, status: 'active' });
    },

    async writeMany(inputs) {
      if (!Array.isArray(inputs)) throw new MinaraError('MEMORY_INVALID', '`inputs` must be an array of write inputs');
      validateLimit(inputs.length, 1, 'inputs.length');
      const rows = (inputs as readonly MemoryWriteInput[]).map((input, i) => {
        try {
          return prepareRow(writeInput(input));
        } catch (error) {
          if (MinaraError.isInstance(error)) throw new MinaraError(error.code, `inputs[${i}]: ${error.message}`, { cause: error });
          throw error;
        }
      });
      const records = await storage.insertMany(scope, rows);
      const out: Array<{ id: number }> = [];
      for (const r of records) {
        out.push(await afterInsert(r));
        if (r.category === FACT_CATEGORY) facts.recorded(r.id);
      }
      return out;
    },

    async get(id, opts) {
      const r = await storage.get(scope, validateId(id), { includeDeleted: opts?.includeDeleted === true });
      return r === undefined ? undefined : toItem(r);
    },

    async update(id, input) {
      validateId(id);
      checkObject('input', input);
      const category = input.category === undefined ? undefined : validateName('category', input.category);
      const content = input.content === undefined ? undefined : validateContent(input.content, maxContentBytes);
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
        now: now(),
      });
      if (updated === undefined) throw new MinaraError('NOT_FOUND', `memory ${id} does not exist in this scope`);
      if (changedText) await enqueue(updated);
      bus?.emit('memory:written', { id, userId: scope.userId, ...agentField, category: updated.category });
      return toItem(updated);
    },

    async read(opts = {}) {
      const limit = validateLimit(opts.limit, 20);
      const category = opts.category === undefined ? undefined : validateName('category', opts.category);
      const source = opts.source === undefined ? undefined : validateName('source', opts.source);
      const rows = await storage.list(scope, { ...(category === undefined ? {} : { categories: [category] }), ...(source === undefined ? {} : { source }), limit });
      return rows.map((r) => toHit(r, 0));
    },

    async search(query, opts) {
      return (await store.searchWithInfo(query, opts)).hits;
    },

    async searchWithInfo(query, opts) {
      return runSearch(
        { storage, scope, logger, embeddings: queue, vectorAvailable: isVectorAvailable, queryEmbeddingTimeoutMs: options.queryEmbeddingTimeoutMs ?? 2000,
          minVectorSimilarity: options.minVectorSimilarity ?? 0.2,
        },
        query,
        opts,
      );
    },

    async softDelete(id) {
      const done = await storage.softDelete(scope, validateId(id), now());
      if (done) bus?.emit('memory:deleted', { id, userId: scope.userId, hard: false });
      return done;
    },

    async restore(id) {
      return storage.restore(scope, validateId(id), now());
    },

    async hardDelete(id) {
      const done = await storage.hardDelete(scope, validateId(id));
      if (done) bus?.emit('memory:deleted', { id, userId: scope.userId, hard: true });
      return done;
    },

    async purgeExpiredSoftDeleted(cutoff) {
      if (cutoff !== undefined && (!(cutoff instanceof Date) || Number.isNaN(cutoff.getTime()))) {
        throw new MinaraError('MEMORY_INVALID', '`cutoff` must be a valid Date');
      }
      const at = cutoff ?? new Date(clock().getTime() - retentionDays * DAY_MS);
      return storage.purgeSoftDeleted(scope, at.toISOString());
    },

    profile: {
      async get(key) {
        return (await storage.profileGet(scope, validateProfileEntry(key).key))?.value;
      },
      async set(key, value, options = {}) {
        const entry = validateProfileEntry(key, value);
        const setBy = options.setBy ?? 'user';
        if (setBy !== 'user' && setBy !== 'agent') throw new MinaraError('MEMORY_INVALID', `profile \`setBy\` must be "user" or "agent", got ${JSON.stringify(setBy)}`);
        return storage.profileSet(scope, entry.key, entry.value, now(), setBy);
      },
      async list() {
        return storage.profileList(scope);
      },
      async delete(key) {
        return storage.profileDelete(scope, validateProfileEntry(key).key);
      },
    },

    async loadSnapshot(opts = {}) {
      const sessionId = opts.sessionId;
      if (sessionId !== undefined) {
        const cached = snapshots.get(sessionId);
        if (cached !== undefined) return cached;
      }
      const limit = validateLimit(opts.limit, SNAPSHOT_LIMIT);
      // Trade cases are episodes, found by search and by entity: they never crowd the frozen block.
      const [profile, memories] = await Promise.all([storage.profileList(scope), storage.list(scope, { limit, excludeSources: SNAPSHOT_EXCLUDED_SOURCES })]);
      const text = renderMemorySnapshot({ profile, memories });
      const snapshot: MemorySnapshot = { text, memoryIds: memories.map((m) => m.id), profileKeys: profile.map((p) => p.key), hash: snapshotHash(text) };
      if (sessionId !== undefined) {
        snapshots.set(sessionId, snapshot);
        if (snapshots.size > SNAPSHOT_CACHE_SIZE) snapshots.delete(snapshots.keys().next().value as string);
      }
      return snapshot;
    },

    async recordFact(content, opts) {
      validateContent(content, maxContentBytes);
      const source = opts?.source === undefined ? 'agent_recorded' : validateName('source', opts.source);
      if (source === 'user_manual') throw new MinaraError('MEMORY_INVALID', '`source` user_manual is reserved for memories a person wrote by hand; a recorded fact cannot claim it');
      return facts.recordFact(content, validateMetadata(opts?.metadata), source);
    },
    consolidatePending: () => facts.consolidatePending(),
    consolidationEvents: (opts) => facts.events(opts),
    getEntityNeighborhood: (entity, opts) => entityNeighborhood(storage, scope, entity, opts?.limit),
    topEntities: (opts) => topEntities(storage, scope, opts),

    async flushEmbeddings() {
      await queue?.flush();
    },

    async backfillEmbeddings(opts = {}) {
      if (queue === undefined || !(await isVectorAvailable())) return 0;
      const limit = validateLimit(opts.limit, 1000);
      const rows = await storage.listByEmbeddingState(scope, opts.includeFailed === true ? ['pending', 'failed'] : ['pending'], limit);
      for (const r of rows) queue.enqueue({ id: r.id, content: r.content, contentHash: r.contentHash });
      return rows.length;
    },

    async close() {
      await facts.close();
      await queue?.close();
    },
  };
  return store;
}
