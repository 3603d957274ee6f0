/**
 * Trade cases as first-class memories. Every `role_memory` case gets one memory row of its own (category
 * `trade_outcome`, source `trade_case`) linked from `role_memory.memory_id`: the memory layer derives its typed
 * entity edges (`traded` the asset, `belongs_to_scenario` from the scenario the opening trade was decided in) and
 * its embedding, so `getEntityNeighborhood('ETH')`, BM25 and hybrid search find the case like any other memory.
 * The row is written when the case is created (decision capture), rewritten with the classification and lessons
 * when the case is reflected, and backfilled for cases that have none (`indexCases`, which `createApp` runs when
 * it opens the storage: the data step of learning migration v3). The frozen snapshot leaves these rows out.
 */
import type { MemoryStore } from '../memory/types';
import type { LearningScope, LearningStorage, RoleCaseRecord } from '../storage/learning-types';
import type { Logger } from '../util/logger';

/** The memory source of a trade case's row. */
export const TRADE_CASE_SOURCE = 'trade_case';
/** The memory category of a trade case's row. */
export const TRADE_CASE_CATEGORY = 'trade_outcome';

/** The reflection's lessons, when it holds any. */
function lessonsOf(reflection: string | undefined): string[] {
  try {
    const r = JSON.parse(reflection ?? '{}') as { lessons?: unknown };
    return Array.isArray(r.lessons) ? r.lessons.filter((l): l is string => typeof l === 'string' && l.trim() !== '').map((l) => l.replace(/\s+/gu, ' ').trim()) : [];
  } catch {
    return [];
  }
}

/**
 * The text of a case's memory row: the asset after a trading verb (so its edge is `traded`), the case line, the
 * scenario and stage it was decided in, and once reflected, the outcome class and lessons.
 */
export function caseMemoryContent(c: RoleCaseRecord, decided: { readonly scenarioId?: string | undefined; readonly stage?: string | undefined } = {}): string {
  const parts = [`Traded ${c.asset}: trade case #${c.id}, ${c.summary}.`];
  if (decided.scenarioId !== undefined || decided.stage !== undefined) parts.push(`Decided in ${[decided.scenarioId, decided.stage && `stage ${decided.stage}`].filter(Boolean).join(', ')}.`);
  if (c.classification !== undefined) {
    const lessons = lessonsOf(c.reflection);
    parts.push(`Reflection: ${c.classification}.${lessons.length > 0 ? ` Lessons: ${lessons.join(' ')}` : ''}`);
  }
  return parts.join(' ');
}

/** What indexing needs: the learning domain, the scope, the tenant's memory store. */
export interface CaseIndexDeps {
  readonly db: LearningStorage;
  readonly scope: LearningScope;
  readonly memory: MemoryStore;
  readonly logger: Logger;
}

const label = (v: unknown) => (typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/u.test(v) ? v : undefined);

/**
 * Write (or rewrite) one case's memory row. A new row is linked with a compare-and-set; when another process
 * linked the case first, this row is removed again. Returns the row id, or undefined when nothing is linked.
 */
export async function indexCase(deps: CaseIndexDeps, c: RoleCaseRecord): Promise<number | undefined> {
  const { db, scope, memory } = deps;
  const trade = await db.getTrade(scope, c.tradeId);
  const scenarioId = label(trade?.details?.['scenarioId']);
  const stage = label(trade?.details?.['stage']);
  const content = caseMemoryContent(c, { scenarioId, stage });
  const metadata = {
    caseId: c.id, tradeId: c.tradeId, asset: c.asset, outcome: c.outcome, role: c.role, realizedPnlUsd: Number(c.realizedPnlUsd.toFixed(2)),
    ...(c.classification ? { classification: c.classification } : {}), ...(stage ? { stage } : {}),
    // A system-supplied scenario becomes a `belongs_to_scenario` edge (never one read from the text).
    ...(scenarioId ? { scenario_id: scenarioId } : {}),
  };
  if (c.memoryId !== undefined) {
    const current = await memory.get(c.memoryId);
    if (!current) return undefined; // the user deleted it: not written again
    if (current.content !== content) await memory.update(c.memoryId, { content, metadata });
    return c.memoryId;
  }
  const { id } = await memory.write({ category: TRADE_CASE_CATEGORY, content, source: TRADE_CASE_SOURCE, metadata });
  if (await db.linkCaseMemory(scope, c.id, id)) return id;
  await memory.hardDelete(id);
  return undefined;
}

/** Index the scope's cases that have no memory row yet, oldest first; returns how many were linked. */
export async function indexCases(deps: CaseIndexDeps, limit: number): Promise<number> {
  let linked = 0;
  for (const c of await deps.db.listCases(deps.scope, { withoutMemory: true, limit })) {
    try {
      if ((await indexCase(deps, c)) !== undefined) linked++;
    } catch (error) {
      deps.logger.warn('trade case index: a case could not be written as a memory', { caseId: c.id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return linked;
}
