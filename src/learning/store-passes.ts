/** The learning store's background passes over its cases: the case-memory backfill, reflection and synthesis. */
import { MinaraError } from '../errors/minara-error';
import { indexCase, indexCases as indexCaseMemories } from './case-memories';
import { reflectCases } from './reflection';
import { createMethodology } from './store-methodologies';
import { type LearningStoreState, nowIso } from './store-state';
import { synthesisKeyOf, synthesizeMethodologies } from './synthesis';
import type { LearningStore } from './types';

export async function indexCases(s: LearningStoreState, indexOptions: Parameters<LearningStore['indexCases']>[0] = {}): ReturnType<LearningStore['indexCases']> {
  const { memory } = s;
  if (!memory) throw new MinaraError('CONFIG_INVALID', 'indexCases: the learning store needs `memory` to write case memories (createLearningStore({ memory }))');
  const limit = indexOptions.limit ?? 1000;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new MinaraError('LEARNING_INVALID', `indexCases: limit must be a positive integer, got ${String(limit)}`);
  return { linked: await indexCaseMemories({ db: s.db, scope: s.scope, memory, logger: s.logger }, limit) };
}

/** Synthesis keys already turned into methodologies, by key. */
async function synthesized(s: LearningStoreState): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of await s.db.listMethodologies(s.scope, { limit: 5000 })) {
    const key = synthesisKeyOf(m.sourceRef);
    if (key !== undefined && !out.has(key)) out.set(key, m.id);
  }
  return out;
}

export async function synthesize(s: LearningStoreState, synthesisOptions: Parameters<LearningStore['synthesize']>[0] = {}): ReturnType<LearningStore['synthesize']> {
  const model = synthesisOptions.model ?? s.options.model;
  if (typeof model !== 'object' && typeof model !== 'string') throw new MinaraError('MODEL_NOT_CONFIGURED', 'synthesize: a model is required (synthesize({ model }) or createLearningStore({ model }))');
  const { limit = 500, minCases = 5, minConfidence = 0.5, maxPatterns = 10 } = synthesisOptions;
  for (const [k, v] of Object.entries({ limit, minCases, maxPatterns })) {
    if (!Number.isSafeInteger(v) || v < 1) throw new MinaraError('LEARNING_INVALID', `synthesize: ${k} must be a positive integer, got ${String(v)}`);
  }
  if (!(typeof minConfidence === 'number' && minConfidence >= 0 && minConfidence <= 1)) throw new MinaraError('LEARNING_INVALID', `synthesize: minConfidence must be a number from 0 to 1, got ${String(minConfidence)}`);
  const { db, scope } = s;
  return synthesizeMethodologies(
    {
      listReflected: (n) => db.listCases(scope, { status: 'reflected', limit: n }),
      getTrade: (id) => db.getTrade(scope, id),
      synthesized: () => synthesized(s),
      createMethodology: async (i) => {
        const r = await createMethodology(s, { text: i.text, assetClass: i.assetClass, origin: 'synthesis', sourceRef: i.sourceRef, state: i.state });
        return { id: r.methodology.id, created: r.created };
      },
      recordUsage: synthesisOptions.recordUsage, admit: synthesisOptions.admit, logger: s.logger,
    },
    { limit, minCases, minConfidence, maxPatterns, model, ...(synthesisOptions.signal ? { signal: synthesisOptions.signal } : {}) },
  );
}

export async function reflect(s: LearningStoreState, reflectOptions: Parameters<LearningStore['reflect']>[0] = {}): ReturnType<LearningStore['reflect']> {
  const { memory, db, scope, logger } = s;
  if (!memory) throw new MinaraError('CONFIG_INVALID', 'reflect: the learning store needs `memory` to write lessons (createLearningStore({ memory }))');
  const model = reflectOptions.model ?? s.options.model;
  if (typeof model !== 'object' && typeof model !== 'string') throw new MinaraError('MODEL_NOT_CONFIGURED', 'reflect: a model is required (reflect({ model }) or createLearningStore({ model }))');
  const limit = reflectOptions.limit ?? 10;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new MinaraError('LEARNING_INVALID', `reflect: limit must be a positive integer, got ${String(limit)}`);
  return reflectCases(
    {
      memory, logger,
      listPending: (n, role) => db.listCases(scope, { status: 'pending', limit: n, ...(role !== undefined ? { role } : {}) }),
      markReflected: (id, r) => db.markCaseReflected(scope, id, { ...r, now: nowIso(s) }),
      createMethodology: async (c, text) => (await createMethodology(s, { text, assetClass: c.assetClass ?? 'any', origin: 'lesson', sourceRef: `case:${c.id}` })).created,
      onReflected: async (c, classification, lessons, reflection) => {
        s.pages.clear();
        s.bus?.emit('role_memory:reflected', { ...s.who, caseId: c.id, classification, lessons });
        // The case's memory now carries its classification and lessons (re-indexed, re-embedded).
        await indexCase({ db, scope, memory, logger }, { ...c, classification, reflection, reflectedAt: nowIso(s) }).catch((error: unknown) =>
          logger.warn('trade case index: the reflected case memory was not rewritten', { caseId: c.id, error: error instanceof Error ? error.message : String(error) }));
      },
    },
    { ...reflectOptions, model, limit },
  );
}
