/**
 * The general fact layer. `recordFact` writes a `pending` fact (`category: 'fact'`, `source: 'agent_recorded'`, or
 * `chat_extracted` for the memory extraction pass)
 * and emits `fact:recorded`; a debounced background sweep runs {@link FactLayer.consolidatePending}:
 *
 * 1. deterministic dedup: pending facts oldest first; a fact whose normalised content equals an already
 *    settled fact or `personalization` row of the scope is retired (superseded by the older one) — the older
 *    statement survives; otherwise it settles as `active`;
 * 2. the optional {@link FactConsolidator} judges each newly settled fact against similar older ones.
 *
 * `user_manual` rows are never retired by any pass (the engines refuse it too). Nothing is hard-deleted.
 */
import type { MinaraBus } from '../events/bus';
import type { ConsolidationEvent, MemoryScope, MemoryStorage } from '../storage/memory-types';
import type { Logger } from '../util/logger';
import type { FactConsolidator } from './consolidator';
import type { ConsolidationResult } from './types';
import { validateLimit } from './validate';

/** Category the fact layer writes. */
export const FACT_CATEGORY = 'fact';
/** Categories a pending fact is deduplicated against. */
const DEDUP_CATEGORIES = [FACT_CATEGORY, 'personalization'];

/** Options of {@link createFactLayer}. */
export interface FactLayerOptions {
  readonly storage: MemoryStorage;
  readonly scope: MemoryScope;
  readonly now: () => string;
  readonly logger: Logger;
  readonly bus?: MinaraBus | undefined;
  readonly consolidator?: FactConsolidator | undefined;
  readonly debounceMs: number;
  /** Writes a validated pending fact row (the store's write path). */
  readonly insertPending: (content: string, metadata: Readonly<Record<string, unknown>> | undefined, source: string) => Promise<{ id: number }>;
}

/** The fact layer of one store. */
export interface FactLayer {
  recordFact(content: string, metadata?: Readonly<Record<string, unknown>>, source?: string): Promise<{ id: number }>;
  /** Announce a pending fact stored by another path (`writeMany`) and schedule the sweep. */
  recorded(id: number): void;
  consolidatePending(): Promise<ConsolidationResult>;
  events(options?: { factId?: number; limit?: number }): Promise<ConsolidationEvent[]>;
  /** Run a scheduled sweep now and stop scheduling. */
  close(): Promise<void>;
}

/** Create the fact layer of one store. */
export function createFactLayer(options: FactLayerOptions): FactLayer {
  const { storage, scope, now, logger, bus, consolidator, debounceMs } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<ConsolidationResult> | undefined;
  let closed = false;

  const sweepOnce = async (): Promise<ConsolidationResult> => {
    let processed = 0;
    let retired = 0;
    let settled = 0;
    let llmDecisions = 0;
    const llmOn = consolidator !== undefined && (await consolidator.isEnabled());
    const seen = new Set<number>();
    for (;;) {
      const pending = (await storage.list(scope, { categories: [FACT_CATEGORY], statuses: ['pending'], order: 'created_asc', limit: 200 })).filter(
        (f) => !seen.has(f.id),
      );
      if (pending.length === 0) break;
      for (const fact of pending) {
        seen.add(fact.id);
        processed++;
        const same = await storage.list(scope, { categories: DEDUP_CATEGORIES, statuses: ['active'], contentHash: fact.contentHash, order: 'created_asc', limit: 1 });
        const older = same.find((r) => r.id !== fact.id);
        if (older !== undefined) {
          await storage.retire(scope, fact.id, { supersededBy: older.id, now: now() });
          await storage.appendConsolidationEvent(scope, {
            pass: 'dedup',
            decision: 'retired_duplicate',
            factId: fact.id,
            otherId: older.id,
            reason: 'exact normalised duplicate of an older statement; the older survives',
            now: now(),
          });
          retired++;
          continue;
        }
        await storage.setStatus(scope, fact.id, 'active');
        settled++;
        if (llmOn && consolidator !== undefined) {
          try {
            llmDecisions += await consolidator.resolve({ storage, scope, fact: { ...fact, status: 'active' }, now });
          } catch (error) {
            logger.warn('fact consolidator failed; fact kept', { factId: fact.id, error: error instanceof Error ? error.message : String(error) });
          }
        }
      }
    }
    return { processed, retired, settled, llmDecisions };
  };

  const consolidatePending = (): Promise<ConsolidationResult> => {
    const run = (running ?? Promise.resolve(undefined)).catch(() => undefined).then(sweepOnce);
    running = run;
    return run.finally(() => {
      if (running === run) running = undefined;
    });
  };

  const schedule = (): void => {
    if (closed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      consolidatePending().catch((error: unknown) => logger.warn('fact sweep failed', { error: error instanceof Error ? error.message : String(error) }));
    }, debounceMs);
    timer.unref?.();
  };

  const recorded = (id: number): void => {
    bus?.emit('fact:recorded', { id, userId: scope.userId, ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }) });
    schedule();
  };

  return {
    async recordFact(content, metadata, source = 'agent_recorded') {
      const { id } = await options.insertPending(content, metadata, source);
      recorded(id);
      return { id };
    },
    recorded,
    consolidatePending,
    async events(query = {}) {
      const limit = validateLimit(query.limit, 100);
      return storage.listConsolidationEvents(scope, { factId: query.factId, limit });
    },
    async close() {
      closed = true;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
        await consolidatePending();
      } else if (running !== undefined) {
        await running.catch(() => undefined);
      }
    },
  };
}
