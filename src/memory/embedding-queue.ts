/**
 * The background embedding queue. A write enqueues its row and returns; batches are embedded later
 * (`setImmediate`), with bounded concurrency, and stored through the engine, which moves the row's
 * `embedding_state` from `pending` to `embedded` (or `failed`).
 *
 * Identical content is embedded once: a process-wide LRU keyed by model + content hash, then the engine's
 * stored vector of any row of the scope with the same hash, and only then the embedding model.
 */
import type { EmbeddingModel } from 'ai';
import { loadAi } from '../util/lazy-ai';
import type { MemoryScope, MemoryStorage } from '../storage/memory-types';
import type { Logger } from '../util/logger';

/** One row waiting for its vector. */
export interface EmbeddingJob {
  readonly id: number;
  readonly content: string;
  readonly contentHash: string;
}

/** Options of {@link createEmbeddingQueue}. */
export interface EmbeddingQueueOptions {
  readonly embedder: EmbeddingModel;
  readonly storage: MemoryStorage;
  readonly scope: MemoryScope;
  readonly logger: Logger;
  /** @default 2 */
  readonly concurrency?: number | undefined;
  /** @default 32 */
  readonly batchSize?: number | undefined;
  /** @default 2 */
  readonly retries?: number | undefined;
}

/** The queue a store owns. */
export interface EmbeddingQueue {
  enqueue(job: EmbeddingJob): void;
  /** Resolves when the queue is empty and nothing is in flight. */
  flush(): Promise<void>;
  /** Embed a search query within `timeoutMs`; undefined on failure or timeout. */
  embedQuery(text: string, timeoutMs: number): Promise<Float32Array | undefined>;
  /** Stop accepting jobs and wait for the ones in flight. */
  close(): Promise<void>;
  readonly pending: number;
}

const CACHE_LIMIT = 10_000;
/** Process-wide vector cache: `model|hash` → vector (insertion-ordered Map as an LRU). */
const vectorCache = new Map<string, Float32Array>();

function cacheGet(key: string): Float32Array | undefined {
  const v = vectorCache.get(key);
  if (v !== undefined) {
    vectorCache.delete(key);
    vectorCache.set(key, v);
  }
  return v;
}

function cacheSet(key: string, v: Float32Array): void {
  vectorCache.set(key, v);
  if (vectorCache.size > CACHE_LIMIT) {
    const oldest = vectorCache.keys().next();
    if (oldest.done !== true) vectorCache.delete(oldest.value);
  }
}

/** A stable identity of an embedding model for cache keys. */
export function embedderKey(model: EmbeddingModel): string {
  if (typeof model === 'string') return model;
  return `${model.provider}/${model.modelId}`;
}

/** Create the embedding queue of one store. */
export function createEmbeddingQueue(options: EmbeddingQueueOptions): EmbeddingQueue {
  const { embedder, storage, scope, logger } = options;
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const batchSize = Math.max(1, options.batchSize ?? 32);
  const retries = Math.max(0, options.retries ?? 2);
  const modelKey = embedderKey(embedder);
  const queue: EmbeddingJob[] = [];
  let inFlight = 0;
  let scheduled = false;
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  const settleIdle = (): void => {
    if (queue.length === 0 && inFlight === 0 && !scheduled) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  };

  const processBatch = async (batch: EmbeddingJob[]): Promise<void> => {
    const vectors = new Map<string, Float32Array>();
    const missing = new Map<string, string>();
    for (const job of batch) {
      if (vectors.has(job.contentHash) || missing.has(job.contentHash)) continue;
      const cached = cacheGet(`${modelKey}|${job.contentHash}`) ?? (await storage.vectorByContentHash(scope, job.contentHash));
      if (cached !== undefined) vectors.set(job.contentHash, cached);
      else missing.set(job.contentHash, job.content);
    }
    if (missing.size > 0) {
      const hashes = Array.from(missing.keys());
      try {
        const { embedMany } = await loadAi();
        const { embeddings } = await embedMany({ model: embedder, values: Array.from(missing.values()), maxRetries: retries });
        hashes.forEach((hash, i) => {
          const raw = embeddings[i];
          if (raw === undefined) return;
          const v = Float32Array.from(raw);
          vectors.set(hash, v);
          cacheSet(`${modelKey}|${hash}`, v);
        });
      } catch (error) {
        logger.warn('memory embedding failed; rows marked failed', { count: batch.length, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const ok = batch.filter((j) => vectors.has(j.contentHash));
    const failed = batch.filter((j) => !vectors.has(j.contentHash)).map((j) => j.id);
    try {
      if (ok.length > 0) {
        await storage.upsertVectors(
          scope,
          ok.map((j) => ({ id: j.id, contentHash: j.contentHash, vector: vectors.get(j.contentHash) as Float32Array })),
        );
      }
    } catch (error) {
      logger.error('memory vector store failed; rows marked failed', { error: error instanceof Error ? error.message : String(error) });
      failed.push(...ok.map((j) => j.id));
    }
    if (failed.length > 0) await storage.setEmbeddingState(scope, failed, 'failed').catch(() => undefined);
  };

  const drain = (): void => {
    scheduled = false;
    while (inFlight < concurrency && queue.length > 0) {
      const batch = queue.splice(0, batchSize);
      inFlight++;
      processBatch(batch)
        .catch((error: unknown) => logger.error('memory embedding batch crashed', { error: error instanceof Error ? error.message : String(error) }))
        .finally(() => {
          inFlight--;
          if (queue.length > 0) drain();
          settleIdle();
        });
    }
    settleIdle();
  };

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(drain);
  };

  return {
    get pending() {
      return queue.length + inFlight;
    },
    enqueue(job) {
      if (closed) return;
      queue.push(job);
      schedule();
    },
    flush() {
      if (queue.length === 0 && inFlight === 0 && !scheduled) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    async embedQuery(text, timeoutMs) {
      const key = `${modelKey}|q|${text}`;
      const cached = cacheGet(key);
      if (cached !== undefined) return cached;
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => {
            controller.abort();
            resolve(undefined);
          }, timeoutMs);
        });
        const { embed } = await loadAi();
        const result = await Promise.race([embed({ model: embedder, value: text, maxRetries: 0, abortSignal: controller.signal }), timeout]);
        if (result === undefined) {
          logger.warn('memory query embedding timed out; searching BM25 only', { timeoutMs });
          return undefined;
        }
        const v = Float32Array.from(result.embedding);
        cacheSet(key, v);
        return v;
      } catch (error) {
        logger.warn('memory query embedding failed; searching BM25 only', { error: error instanceof Error ? error.message : String(error) });
        return undefined;
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    },
    async close() {
      closed = true;
      await this.flush();
    },
  };
}

/** Clear the process-wide vector cache (tests, model swaps). */
export function clearEmbeddingCache(): void {
  vectorCache.clear();
}
