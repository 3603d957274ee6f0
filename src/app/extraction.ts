import type { BackgroundJob } from '../background/runner';
import { ConfigError } from '../errors/subclasses';
import {
  createMemoryExtractor, DEFAULT_MEMORY_EXTRACTION_MODE, MEMORY_EXTRACTION_MODES, MEMORY_EXTRACTION_USAGE_SOURCE, type MemoryExtractionMode, type MemoryExtractor,
} from '../learning/extraction';
import { DEFAULT_MODEL_PRICES, type ModelPrice, priceFor, usageCostUsd } from '../llm/pricing';
import type { Storage } from '../storage/types';
import { parseDuration } from './env-parse';
import type { AppMemory } from './memory';
import type { AppModels } from './models';
import type { AppSettings } from './settings';

/**
 * Records a background pass's model call in the usage ledger (one row per call, priced like turns) under
 * `source`, which the daily budget of autonomous spend sums (`AUTONOMOUS_SPEND_SOURCES`).
 */
export function backgroundUsageRecorder(storage: Storage, prices: Readonly<Record<string, ModelPrice>> | undefined, source: string) {
  const table = { ...DEFAULT_MODEL_PRICES, ...prices };
  return async (u: { callId: string; userId: string; sessionId: string; modelId: string; at: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }) => {
    const price = priceFor(u.modelId, table);
    await storage.usage.record({
      turnId: u.callId, sessionId: u.sessionId, userId: u.userId, source, modelId: u.modelId, at: u.at,
      inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadTokens: u.cacheReadTokens, cacheWriteTokens: u.cacheWriteTokens,
      costUsd: price ? usageCostUsd(u, price) : 0,
    });
  };
}

/** The memory extraction pass of the app (`MEMORY_EXTRACTION`). */
export interface AppExtraction {
  readonly mode: MemoryExtractionMode;
  /** Undefined when the mode is `off` or no model is configured (the pass is then skipped, said once in the log). */
  readonly extractor: MemoryExtractor | undefined;
  /** The background job that drains the queue (`memory:extraction`), when the pass runs. */
  readonly job: BackgroundJob | undefined;
}

/** The mode: the option, else `MEMORY_EXTRACTION`, else the default (`nightly`); anything else is a ConfigError. */
export function memoryExtractionMode(option: MemoryExtractionMode | undefined, env: Readonly<Record<string, string | undefined>>): { mode: MemoryExtractionMode; explicit: boolean } {
  const raw = option ?? env.MEMORY_EXTRACTION;
  if (raw === undefined || raw.trim() === '') return { mode: DEFAULT_MEMORY_EXTRACTION_MODE, explicit: false };
  const mode = raw.trim().toLowerCase() as MemoryExtractionMode;
  if (!MEMORY_EXTRACTION_MODES.includes(mode)) {
    throw new ConfigError(`memoryExtraction (MEMORY_EXTRACTION): expected ${MEMORY_EXTRACTION_MODES.join(', ')}, got ${JSON.stringify(raw)}`, ['memoryExtraction']);
  }
  return { mode, explicit: true };
}

/**
 * The memory extraction part: after a user turn the runtime part queues the user's message (`enqueue`); the job
 * `memory:extraction` drains the queue in batches, every `MEMORY_EXTRACTION_EVERY` (default 1m) with `after_turn`
 * or at 03:00 UTC with `nightly`. Its tokens go to the usage ledger (source `memory_extraction`, priced like
 * turns) and count in the daily budget of autonomous spend, which `admit` enforces before every model call.
 */
export function assembleExtraction(
  settings: AppSettings,
  parts: { readonly storage: Storage; readonly models: AppModels; readonly memory: AppMemory; readonly admit: () => Promise<string | undefined> },
): AppExtraction {
  const { options, env, logger, now } = settings;
  const { storage, models, memory, admit } = parts;
  const { mode, explicit } = memoryExtractionMode(options.memoryExtraction, env);
  const everyEnv = env.MEMORY_EXTRACTION_EVERY;
  const every = everyEnv !== undefined && everyEnv.trim() !== '' ? parseDuration(everyEnv, 'MEMORY_EXTRACTION_EVERY') : 60_000;
  if (mode === 'off' || (mode === 'after_turn' && every === 0)) return { mode: 'off', extractor: undefined, job: undefined };
  const model = models.backgroundModel;
  if (!model) {
    // One line: the pass is skipped for want of a model (nothing is queued meanwhile).
    const line = `memory extraction (MEMORY_EXTRACTION=${mode}) skipped: no model configured`;
    if (explicit) logger.warn(line);
    else logger.info(line);
    return { mode, extractor: undefined, job: undefined };
  }
  const extractor = createMemoryExtractor({
    storage,
    memoryFor: (scope) => memory.memoryFor(scope.userId),
    model,
    admit,
    recordUsage: backgroundUsageRecorder(storage, options.prices, MEMORY_EXTRACTION_USAGE_SOURCE),
    now,
    logger,
  });
  const job: BackgroundJob = {
    id: 'memory:extraction',
    description: 'Learn durable facts and preferences from recent user turns (MEMORY_EXTRACTION)',
    ...(mode === 'nightly' ? { cron: '0 3 * * *' } : { every }),
    run: async ({ signal }) => {
      const r = await extractor.run({ signal });
      if (r.turns === 0) return { skipped: r.skipped ?? 'no queued turns' };
      return `${r.turns} turns, ${r.written} memories learned, ${r.duplicates} already known, ${r.personalData + r.instructions} dropped by the gates${r.failed > 0 ? `, ${r.failed} batch(es) failed` : ''}${r.skipped ? ` (stopped: ${r.skipped})` : ''}`;
    },
  };
  return { mode, extractor, job };
}
