import { MinaraError } from '../errors/minara-error';
import { createLearningStore } from '../learning/store';
import type { LearningStore, LearningStoreOptions } from '../learning/types';
import { createFactConsolidator } from '../memory/consolidator';
import { createMemoryStore } from '../memory/store';
import type { MemoryStore } from '../memory/types';
import type { Storage } from '../storage/types';
import type { DisposerStack } from './disposers';
import { softDeleteRetentionDays } from './feature-gates';
import type { AppModels } from './models';
import type { AppSettings } from './settings';

/** Memory and learning, one store per tenant, each made on first use. */
export interface AppMemory {
  /** The memory store of a tenant (cached per user id). */
  readonly memoryFor: (userId: string) => MemoryStore;
  /** The memory stores made so far (the purge job walks them). */
  readonly memoryStores: () => Iterable<MemoryStore>;
  /** The learning store of a tenant (cached per user and agent); undefined when `learning: false`. */
  readonly learningFor: (userId: string, agentId?: string) => LearningStore | undefined;
  /** The learning options; undefined when `learning: false`. */
  readonly learningOptions: Partial<LearningStoreOptions> | undefined;
  /** Days a soft-deleted memory is kept (`softDeleteRetentionDays`, `MEMORY_SOFT_DELETE_RETENTION_DAYS`). */
  readonly retentionDays: number;
}

/**
 * The memory and learning part. Memory: one store per tenant; `MEMORY_CONSOLIDATION_ENABLED=1` turns on the LLM
 * fact consolidator (utility model, else the main one; `MEMORY_CONSOLIDATION_GUIDANCE` steers it), only when a
 * model is configured. Learning: one store per tenant (user, agent) for decision capture after turns and the
 * learned prompt block. Both kinds of store are closed on release (learning first).
 */
export function assembleMemoryAndLearning(settings: AppSettings, storage: Storage, models: AppModels, disposers: DisposerStack): AppMemory {
  const { options, env, logger, bus, now } = settings;
  const { model, modelStatus, embedder } = models;
  const retentionDays = softDeleteRetentionDays(options.softDeleteRetentionDays, env);
  const consolidationOn = /^(1|true|yes|on)$/i.test(env.MEMORY_CONSOLIDATION_ENABLED ?? '');
  const consolidator = consolidationOn && modelStatus.configured
    ? createFactConsolidator({ model: options.utilityModel ?? model, enabled: true, logger, ...(env.MEMORY_CONSOLIDATION_GUIDANCE ? { guidance: env.MEMORY_CONSOLIDATION_GUIDANCE } : {}) })
    : undefined;
  const stores = new Map<string, MemoryStore>();
  const memoryFor = (uid: string): MemoryStore => {
    if (typeof uid !== 'string' || uid.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'memoryFor: userId must be a non-empty string.');
    let store = stores.get(uid);
    if (!store) {
      store = createMemoryStore({ storage, scope: { userId: uid }, bus, logger, now, softDeleteRetentionDays: retentionDays, ...(embedder ? { embedder } : {}), ...(consolidator ? { consolidator } : {}) });
      stores.set(uid, store);
    }
    return store;
  };
  disposers.push(async () => {
    for (const store of stores.values()) await store.close();
  });

  const learningStores = new Map<string, LearningStore>();
  const learningOptions = options.learning === false ? undefined : (options.learning ?? {});
  // The role reflector's model (on demand: `learning.reflect()`): the utility model, else the main one, when configured.
  const reflectionModel = models.backgroundModel;
  const learningFor = (uid: string, agentId?: string): LearningStore | undefined => {
    if (!learningOptions) return undefined;
    const key = `${uid}\u0000${agentId ?? ''}`;
    let store = learningStores.get(key);
    if (!store) {
      store = createLearningStore({ ...learningOptions, storage, audit: storage.audit, ...(reflectionModel ? { model: reflectionModel } : {}), scope: agentId ? { userId: uid, agentId } : { userId: uid }, memory: memoryFor(uid), bus, logger, now });
      learningStores.set(key, store);
    }
    return store;
  };
  disposers.push(() => {
    for (const l of learningStores.values()) l.close();
  });
  return { memoryFor, memoryStores: () => stores.values(), learningFor, learningOptions, retentionDays };
}

/**
 * The data step of learning migration v3: trade cases without their memory row (cases recorded before the
 * migration, or whose row a crash kept from being written) get one now, for every tenant of the storage, a
 * bounded number per open (the rest at the next). Deterministic and cheap (no model; embeddings are queued).
 */
export async function indexTradeCases(storage: Storage, memory: AppMemory, logger: AppSettings['logger'], maxCases = 10_000): Promise<number> {
  if (!memory.learningOptions) return 0;
  let linked = 0;
  for (const scope of await storage.learning.caseMemoryScopes(100)) {
    if (linked >= maxCases) break;
    const learning = memory.learningFor(scope.userId, scope.agentId);
    if (learning) linked += (await learning.indexCases({ limit: Math.max(1, Math.min(1000, maxCases - linked)) })).linked;
  }
  if (linked > 0) logger.info('trade cases indexed as memories', { linked });
  return linked;
}
