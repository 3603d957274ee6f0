/**
 * `createLearningStore`: the finance learning loop of one tenant over any storage engine. Decision capture
 * and outcome attribution (`captureTurn`), methodologies (Wilson-scored; graduation proposed automatically,
 * applied by an operator call; quarantine automatic), learned preferences (mined, graduated at turn start;
 * hard constraints only by an explicit call), and the learned block of a turn's prompt. The factory checks its
 * options and builds a {@link LearningStoreState}; the methods are the named functions of `store-turn.ts`,
 * `store-methodologies.ts`, `store-preferences.ts` and `store-passes.ts`.
 */
import { MinaraError } from '../errors/minara-error';
import { checkLearningScope } from '../storage/learning-checks';
import { DEFAULT_METHODOLOGY_POLICY } from '../storage/learning-logic';
import type { MethodologyPolicy } from '../storage/learning-types';
import { createConsoleLogger } from '../util/logger';
import { createPageCache } from './compiled-pages';
import { acceptMethodology, createMethodology, graduateMethodology, quarantineMethodology, reinstateMethodology, seedMethodologies } from './store-methodologies';
import { indexCases, reflect, synthesize } from './store-passes';
import { approvePreference, graduatePreferences, proposePreference, rejectPreference } from './store-preferences';
import type { LearningStoreState } from './store-state';
import { captureTurn, closeStore, compiledPage, promptContext } from './store-turn';
import type { LearningStore, LearningStoreOptions, PreferenceGraduationRule } from './types';

/** A non-negative integer option; CONFIG_INVALID naming it otherwise. */
function checkCounts(values: Record<string, number>): void {
  for (const [k, v] of Object.entries(values)) {
    if (!Number.isSafeInteger(v) || v < 0) throw new MinaraError('CONFIG_INVALID', `createLearningStore: ${k} must be a non-negative integer, got ${String(v)}`);
  }
}

/** Check the options and build the store's state. */
function learningStoreState(options: LearningStoreOptions): LearningStoreState {
  if (typeof options !== 'object' || options === null) throw new MinaraError('CONFIG_INVALID', 'createLearningStore: options are required ({ storage, scope })');
  if (typeof options.storage?.learning !== 'object' || options.storage.learning === null) {
    throw new MinaraError('CONFIG_INVALID', 'createLearningStore: `storage` must be a Storage with a learning domain (createSqliteStorage or createInMemoryStorage)');
  }
  try {
    checkLearningScope('createLearningStore', options.scope);
  } catch (error) {
    throw new MinaraError('CONFIG_INVALID', error instanceof Error ? error.message : String(error));
  }
  const scope = options.scope.agentId === undefined ? { userId: options.scope.userId } : { userId: options.scope.userId, agentId: options.scope.agentId };
  const { memory, bus, minePreferences = true, maxPromptMethodologies = 6, maxPromptPreferences = 8 } = options;
  const clock = options.now ?? (() => new Date());
  const policy: MethodologyPolicy = Object.freeze({ ...DEFAULT_METHODOLOGY_POLICY, ...options.policy });
  const rule: PreferenceGraduationRule = Object.freeze({ minEvidence: 5, minConsistency: 0.8, ...options.preferenceGraduation });
  checkCounts({ maxPromptMethodologies, maxPromptPreferences });
  const { compiledPageTtlMs = 60_000, compiledPageCacheSize = 256, compiledPageTimeline = 10 } = options;
  checkCounts({ compiledPageTtlMs, compiledPageCacheSize, compiledPageTimeline });
  const pages = createPageCache({ ttlMs: compiledPageTtlMs, maxEntries: compiledPageCacheSize, now: () => clock().getTime() });
  return {
    options, scope, who: { userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) }, db: options.storage.learning, memory, bus,
    logger: options.logger ?? createConsoleLogger({ level: 'warn' }), clock, policy, rule, minePreferences, maxPromptMethodologies, maxPromptPreferences, compiledPageTimeline, pages,
    invalidate: (e) => {
      if (e.userId === scope.userId && (e.agentId ?? undefined) === scope.agentId) pages.clear();
    },
    listening: false,
  };
}

/**
 * Create the learning store of one tenant.
 *
 * @example
 * ```ts
 * import { createLearningStore } from '@minara/agent';
 *
 * const learning = createLearningStore({ storage, scope: { userId: 'u1' }, memory });
 * const { methodology } = await learning.createMethodology({ asset: 'BTC', text: 'Buy pullbacks to the 20-day average in an uptrend' });
 * // … turns run; closed trades score it …
 * const m = await learning.getMethodology(methodology.id);
 * if (m?.graduationProposedAt) await learning.graduateMethodology(m.id); // the operator's call
 * ```
 */
export function createLearningStore(options: LearningStoreOptions): LearningStore {
  const s = learningStoreState(options);
  const { db, scope } = s;
  return {
    scope,
    policy: s.policy,
    captureTurn: (record) => captureTurn(s, record),
    createMethodology: (input) => createMethodology(s, input),
    seedMethodologies: (seed, seedOptions) => seedMethodologies(s, seed, seedOptions),
    getMethodology: (id) => db.getMethodology(scope, id),
    listMethodologies: (query) => db.listMethodologies(scope, query),
    graduateMethodology: (id, graduateOptions) => graduateMethodology(s, id, graduateOptions),
    acceptMethodology: (id, reason) => acceptMethodology(s, id, reason),
    quarantineMethodology: (id, reason) => quarantineMethodology(s, id, reason),
    reinstateMethodology: (id, reason) => reinstateMethodology(s, id, reason),
    listTrades: (query) => db.listTrades(scope, query),
    indexCases: (indexOptions) => indexCases(s, indexOptions),
    listCases: (query) => db.listCases(scope, query),
    proposePreference: (input) => proposePreference(s, input),
    listPreferences: (query) => db.listPreferences(scope, query),
    approvePreference: (id) => approvePreference(s, id),
    rejectPreference: (id) => rejectPreference(s, id),
    graduatePreferences: () => graduatePreferences(s),
    promptContext: (message) => promptContext(s, message),
    compiledPage: (entity, pageOptions) => compiledPage(s, entity, pageOptions),
    close: () => closeStore(s),
    synthesize: (synthesisOptions) => synthesize(s, synthesisOptions),
    reflect: (reflectOptions) => reflect(s, reflectOptions),
  };
}
