/**
 * `createLearningStore`: the finance learning loop of one tenant over any storage engine. Decision capture
 * and outcome attribution (`captureTurn`), methodologies (Wilson-scored; graduation proposed automatically,
 * applied by an operator call; quarantine automatic), learned preferences (mined, graduated at turn start;
 * hard constraints only by an explicit call), and the learned block of a turn's prompt.
 */
import { MinaraError } from '../errors/minara-error';
import type { MinaraBusEvents } from '../events/bus';
import type { PostTurnRecord } from '../runtime/types';
import { checkLearningScope } from '../storage/learning-checks';
import { DEFAULT_METHODOLOGY_POLICY, normalizeLearningText } from '../storage/learning-logic';
import type { CaptureResult, LearningScope, LearningStorage, MethodologyPolicy, MethodologyRecord, PreferenceObservation, PreferenceRecord } from '../storage/learning-types';
import { createConsoleLogger } from '../util/logger';
import { assetClassOf, assetsOfMessage, normalizeAsset } from './assets';
import { compilePage, createPageCache } from './compiled-pages';
import { absenceEvidenceEnough, observationsOf, tradeRowsOf } from './capture';
import { parseMethodologySeed, renderLearningBlock } from './prompt';
import { reflectCases } from './reflection';
import { synthesisKeyOf, synthesizeMethodologies } from './synthesis';
import { indexCase, indexCases } from './case-memories';
import type { LearningStore, LearningStoreOptions, PreferenceGraduationRule } from './types';

const EMPTY: CaptureResult = Object.freeze({ recorded: [], duplicates: [], closed: [], updated: [], methodologyChanges: [], cases: [], preferences: [] });

/** Drop "avoids <class>" support while the history is too short to say so (ABSENCE_PREFERENCE_EVIDENCE). */
async function withEnoughAbsenceEvidence(
  db: Pick<LearningStorage, 'listTrades'>, scope: LearningScope, observations: PreferenceObservation[],
  rows: ReadonlyArray<{ readonly action: string; readonly asset: string; readonly assetClass?: string | undefined; readonly orderId: string }>,
): Promise<PreferenceObservation[]> {
  const absence = observations.filter((o) => o.effect === 'support' && o.value?.startsWith('avoid:'));
  if (absence.length === 0) return observations;
  const prior = await db.listTrades(scope, { action: 'open', limit: 500 });
  const seen = new Set(prior.map((t) => t.orderId));
  const opens = [...prior, ...rows.filter((r) => r.action === 'open' && !seen.has(r.orderId))].map((t) => ({ asset: t.asset, assetClass: t.assetClass }));
  const enough = new Map<string, boolean>();
  return observations.filter((o) => {
    if (!absence.includes(o)) return true;
    const cls = o.value!.slice('avoid:'.length);
    if (!enough.has(cls)) enough.set(cls, absenceEvidenceEnough(opens, cls));
    return enough.get(cls)!;
  });
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
  const db = options.storage.learning;
  const { memory, bus, minePreferences = true, maxPromptMethodologies = 6, maxPromptPreferences = 8 } = options;
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  const clock = options.now ?? (() => new Date());
  const now = () => clock().toISOString();
  const policy: MethodologyPolicy = Object.freeze({ ...DEFAULT_METHODOLOGY_POLICY, ...options.policy });
  const rule: PreferenceGraduationRule = Object.freeze({ minEvidence: 5, minConsistency: 0.8, ...options.preferenceGraduation });
  for (const [k, v] of Object.entries({ maxPromptMethodologies, maxPromptPreferences })) {
    if (!Number.isSafeInteger(v) || v < 0) throw new MinaraError('CONFIG_INVALID', `createLearningStore: ${k} must be a non-negative integer, got ${String(v)}`);
  }
  const who = { userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) };

  // Compiled pages: a TTL LRU cleared by this tenant's events (subscribed on first use) and by this store's writes.
  const { compiledPageTtlMs = 60_000, compiledPageCacheSize = 256, compiledPageTimeline = 10 } = options;
  for (const [k, v] of Object.entries({ compiledPageTtlMs, compiledPageCacheSize, compiledPageTimeline })) {
    if (!Number.isSafeInteger(v) || v < 0) throw new MinaraError('CONFIG_INVALID', `createLearningStore: ${k} must be a non-negative integer, got ${String(v)}`);
  }
  const pages = createPageCache({ ttlMs: compiledPageTtlMs, maxEntries: compiledPageCacheSize, now: () => clock().getTime() });
  const mine = (e: { readonly userId: string; readonly agentId?: string | undefined }) => e.userId === scope.userId && (e.agentId ?? undefined) === scope.agentId;
  const invalidate = (e: { readonly userId: string; readonly agentId?: string | undefined }) => {
    if (mine(e)) pages.clear();
  };
  const INVALIDATING = ['memory:written', 'trade:recorded', 'trade:outcome_updated', 'methodology:changed', 'preference:changed', 'role_memory:reflected'] as const;
  let listening = false;

  // Every change clears this store's compiled pages (also without a bus), then goes on the bus.
  const emitMethodology = (m: MethodologyRecord, change: MinaraBusEvents['methodology:changed']['change']) => {
    pages.clear();
    bus?.emit('methodology:changed', { ...who, methodologyId: m.id, change, state: m.state, confidence: m.confidence, uses: m.uses });
  };
  const emitPreference = (p: PreferenceRecord) => {
    pages.clear();
    bus?.emit('preference:changed', { ...who, preferenceId: p.id, state: p.state, dimension: p.dimension });
  };

  const mustMethodology = async (id: number): Promise<MethodologyRecord> => {
    const m = await db.getMethodology(scope, id);
    if (!m) throw new MinaraError('NOT_FOUND', `No methodology #${id} in this scope.`);
    return m;
  };
  const mustPreference = async (id: number): Promise<PreferenceRecord> => {
    const p = await db.getPreference(scope, id);
    if (!p) throw new MinaraError('NOT_FOUND', `No preference #${id} in this scope.`);
    return p;
  };
  const refused = (message: string) => new MinaraError('LEARNING_TRANSITION_REFUSED', message);
  /** One audit row per decision a person made (never for automatic transitions). */
  const audited = async (call: string, args: Record<string, unknown>) => {
    await options.audit?.append({ at: now(), toolName: `learning.${call}`, tier: 0, source: 'learning', decision: 'allowed', durationMs: 0, argsJson: JSON.stringify({ ...who, ...args }) });
  };

  /** Activate a proposed preference: the `learned_preference` memory first, then the compare-and-set (undone if lost). */
  async function activate(p: PreferenceRecord): Promise<PreferenceRecord | undefined> {
    let memoryId: number | undefined;
    if (memory) {
      memoryId = (await memory.write({ category: 'preference', content: p.text, source: 'learned_preference', metadata: { preferenceId: p.id, dimension: p.dimension, kind: p.kind } })).id;
    }
    const next = await db.transitionPreference(scope, p.id, { from: ['proposed'], to: 'active', now: now(), ...(memoryId !== undefined ? { memoryId } : {}) });
    if (!next) {
      if (memoryId !== undefined) await memory?.hardDelete(memoryId);
      return undefined;
    }
    if (next.kind === 'hard_constraint' && next.value !== undefined && memory) await applyHardConstraint(next.value);
    emitPreference(next);
    return next;
  }

  /** A hard constraint's finance limits (`{"maxLeverage":3}`) become `hard_constraint.*` profile entries (they only tighten). */
  async function applyHardConstraint(value: string): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
    for (const [field, v] of Object.entries(parsed)) {
      const text = Array.isArray(v) ? v.map(String).join(',') : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' ? String(v) : undefined;
      if (text !== undefined && /^[A-Za-z]{1,64}$/u.test(field)) await memory!.profile.set(`hard_constraint.${field}`, text);
    }
  }

  const store: LearningStore = {
    scope,
    policy,

    async captureTurn(record) {
      if (typeof record !== 'object' || record === null || !Array.isArray(record.executions)) throw new MinaraError('LEARNING_INVALID', 'captureTurn: record must be a post-turn record with executions');
      if (record.executions.length === 0) return EMPTY;
      const rows = tradeRowsOf(record);
      const observations = minePreferences ? await withEnoughAbsenceEvidence(db, scope, observationsOf(record), rows) : [];
      // One transaction: trades, closes, attribution, cases and preference evidence.
      const result = rows.length > 0 || observations.length > 0 ? await db.recordExecutions(scope, { executions: rows, policy, now: now(), observations }) : EMPTY;
      if (result.recorded.length > 0 || result.updated.length > 0) pages.clear();
      for (const p of result.preferences) if (p.evidence === 1 && p.contradictions === 0 && p.state === 'proposed') emitPreference(p);
      if (bus) {
        for (const t of result.recorded) bus.emit('trade:recorded', { ...who, tradeId: t.id, asset: t.asset, action: t.action });
        for (const t of result.updated) bus.emit('trade:outcome_updated', { ...who, tradeId: t.id, asset: t.asset, ...(t.outcome ? { outcome: t.outcome } : {}) });
        for (const c of result.methodologyChanges) emitMethodology(c.methodology, c.change);
      }
      for (const c of result.methodologyChanges) {
        if (c.change === 'quarantined') logger.warn('methodology quarantined', { methodologyId: c.methodology.id, reason: c.methodology.stateReason });
      }
      // Each new case becomes a memory of its own (edges, embedding); a failure is logged and backfilled later.
      if (memory) {
        for (const c of result.cases) {
          await indexCase({ db, scope, memory, logger }, c).catch((error: unknown) =>
            logger.warn('trade case index: the case memory was not written; indexCases() backfills it', { caseId: c.id, error: error instanceof Error ? error.message : String(error) }));
        }
      }
      return result;
    },

    async createMethodology(input) {
      if (typeof input !== 'object' || input === null || typeof input.text !== 'string' || input.text.trim() === '') {
        throw new MinaraError('LEARNING_INVALID', 'createMethodology: text must be a non-empty string');
      }
      const assetClass = input.assetClass ?? (input.asset !== undefined ? assetClassOf(input.asset) : undefined);
      if (assetClass === undefined) {
        throw new MinaraError('LEARNING_INVALID', `createMethodology: give assetClass (crypto_major, perps, forex, … or any)${input.asset !== undefined ? `; the asset ${JSON.stringify(input.asset)} has no known class` : ''}`);
      }
      try {
        const r = await db.upsertMethodology(scope, {
          assetClass, text: input.text.trim(), normalizedText: normalizeLearningText(input.text), origin: input.origin ?? 'api',
          ...(input.sourceRef !== undefined ? { sourceRef: input.sourceRef } : {}), now: now(),
          ...(input.state !== undefined ? { state: input.state } : {}),
          ...(input.state === 'proposed' ? { stateReason: input.stateReason?.slice(0, 500) ?? 'proposed: waiting for the operator (accept it to put it on trial, or quarantine it)' } : {}),
        });
        if (r.created) emitMethodology(r.methodology, 'created');
        return r;
      } catch (error) {
        if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw new MinaraError('LEARNING_INVALID', error.message.replace('learning.upsertMethodology', 'createMethodology'));
        throw error;
      }
    },

    async seedMethodologies(seed, seedOptions = {}) {
      const entries = parseMethodologySeed(seed);
      let created = 0;
      for (const e of entries) {
        const r = await store.createMethodology({ text: e.text, assetClass: e.assetClass, origin: 'seed', ...(seedOptions.sourceRef !== undefined ? { sourceRef: seedOptions.sourceRef } : {}) });
        if (r.created) created++;
      }
      return { created, existing: entries.length - created };
    },

    getMethodology: (id) => db.getMethodology(scope, id),
    listMethodologies: (query) => db.listMethodologies(scope, query),

    async graduateMethodology(id, graduateOptions = {}) {
      const m = await mustMethodology(id);
      if (m.state === 'quarantined') throw refused(`Methodology #${id} is quarantined (${m.stateReason ?? 'demoted'}); reinstate it first.`);
      if (m.state === 'proposed') throw refused(`Methodology #${id} is proposed and was never on trial; accept it first.`);
      if (m.state === 'graduated') throw refused(`Methodology #${id} is already graduated.`);
      if (m.graduationProposedAt === undefined && graduateOptions.force !== true) {
        throw refused(`Methodology #${id} is not proposed for graduation (Wilson ${m.confidence.toFixed(3)} with ${m.uses} uses; needs ≥ ${policy.graduationMinConfidence} with ≥ ${policy.graduationMinUses}); pass force to graduate it anyway.`);
      }
      const next = await db.transitionMethodology(scope, id, { from: ['candidate'], to: 'graduated', now: now(), reason: graduateOptions.reason ?? (graduateOptions.force === true ? 'graduated by the operator (forced)' : 'graduated by the operator') });
      if (!next) throw refused(`Methodology #${id} changed state meanwhile; nothing was graduated.`);
      emitMethodology(next, 'graduated');
      await audited('graduateMethodology', { id, force: graduateOptions.force === true, reason: next.stateReason });
      return next;
    },

    async acceptMethodology(id, reason) {
      await mustMethodology(id);
      const next = await db.transitionMethodology(scope, id, { from: ['proposed'], to: 'candidate', now: now(), reason: reason ?? 'accepted by the operator: on trial' });
      if (!next) throw refused(`Methodology #${id} is not proposed; only a proposed methodology can be accepted.`);
      emitMethodology(next, 'accepted');
      await audited('acceptMethodology', { id, reason: next.stateReason });
      return next;
    },

    async quarantineMethodology(id, reason) {
      await mustMethodology(id);
      const next = await db.transitionMethodology(scope, id, { from: ['proposed', 'candidate', 'graduated'], to: 'quarantined', now: now(), reason: reason ?? 'quarantined by the operator' });
      if (!next) throw refused(`Methodology #${id} is already quarantined.`);
      emitMethodology(next, 'quarantined');
      await audited('quarantineMethodology', { id, reason: next.stateReason });
      return next;
    },

    async reinstateMethodology(id, reason) {
      await mustMethodology(id);
      const next = await db.transitionMethodology(scope, id, { from: ['quarantined'], to: 'candidate', now: now(), reason: reason ?? 'reinstated by the operator' });
      if (!next) throw refused(`Methodology #${id} is not quarantined.`);
      emitMethodology(next, 'reinstated');
      await audited('reinstateMethodology', { id, reason: next.stateReason });
      return next;
    },

    listTrades: (query) => db.listTrades(scope, query),

    async indexCases(indexOptions = {}) {
      if (!memory) throw new MinaraError('CONFIG_INVALID', 'indexCases: the learning store needs `memory` to write case memories (createLearningStore({ memory }))');
      const limit = indexOptions.limit ?? 1000;
      if (!Number.isSafeInteger(limit) || limit < 1) throw new MinaraError('LEARNING_INVALID', `indexCases: limit must be a positive integer, got ${String(limit)}`);
      return { linked: await indexCases({ db, scope, memory, logger }, limit) };
    },
    listCases: (query) => db.listCases(scope, query),

    async proposePreference(input) {
      if (typeof input !== 'object' || input === null || typeof input.text !== 'string' || input.text.trim() === '') {
        throw new MinaraError('LEARNING_INVALID', 'proposePreference: text must be a non-empty string');
      }
      const kind = input.kind ?? 'behavioural';
      try {
        const r = await db.upsertPreference(scope, {
          dimension: input.dimension, kind, text: input.text.trim(), normalizedText: normalizeLearningText(input.text), source: input.source ?? 'api',
          ...(input.value !== undefined ? { value: input.value } : {}), now: now(),
        });
        if (r.created) emitPreference(r.preference);
        return r;
      } catch (error) {
        if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw new MinaraError('LEARNING_INVALID', error.message.replace('learning.upsertPreference', 'proposePreference'));
        throw error;
      }
    },

    listPreferences: (query) => db.listPreferences(scope, query),

    async approvePreference(id) {
      const p = await mustPreference(id);
      if (p.state !== 'proposed') throw refused(`Preference #${id} is ${p.state}; only a proposed preference can be approved.`);
      const next = await activate(p);
      if (!next) throw refused(`Preference #${id} changed state meanwhile; nothing was approved.`);
      await audited('approvePreference', { id, kind: next.kind, dimension: next.dimension });
      return next;
    },

    async rejectPreference(id) {
      const p = await mustPreference(id);
      const next = await db.transitionPreference(scope, id, { from: ['proposed', 'active'], to: 'rejected', now: now() });
      if (!next) throw refused(`Preference #${id} is already rejected.`);
      // Its memory is soft-deleted (recoverable), never lost.
      if (p.memoryId !== undefined) await memory?.softDelete(p.memoryId);
      emitPreference(next);
      await audited('rejectPreference', { id, kind: next.kind, dimension: next.dimension });
      return next;
    },

    async graduatePreferences() {
      const proposed = await db.listPreferences(scope, { states: ['proposed'], kinds: ['behavioural'], limit: 200 });
      const out: PreferenceRecord[] = [];
      for (const p of proposed.sort((a, b) => a.id - b.id)) {
        if (p.kind !== 'behavioural' || p.evidence < rule.minEvidence) continue;
        if (p.evidence / (p.evidence + p.contradictions) < rule.minConsistency) continue;
        const next = await activate(p);
        if (next) out.push(next);
      }
      return out;
    },

    async promptContext(message) {
      const { assets, classes } = message ? assetsOfMessage(message) : { assets: [], classes: [] };
      const methodologies =
        classes.length > 0 && maxPromptMethodologies > 0
          ? await db.listMethodologies(scope, { states: ['graduated', 'candidate'], assetClasses: [...classes, 'any'], limit: maxPromptMethodologies })
          : [];
      const preferences =
        maxPromptPreferences > 0
          ? (await db.listPreferences(scope, { states: ['active'], limit: maxPromptPreferences })).sort((a, b) => (a.dimension < b.dimension ? -1 : a.dimension > b.dimension ? 1 : a.id - b.id))
          : [];
      const block = renderLearningBlock({ assets, classes, methodologies, preferences });
      return { ...(block !== undefined ? { block } : {}), methodologyIds: methodologies.map((m) => m.id), preferenceIds: preferences.map((p) => p.id) };
    },

    async compiledPage(entity, pageOptions = {}) {
      if (typeof entity !== 'string' || entity.trim() === '' || entity.length > 64) throw new MinaraError('LEARNING_INVALID', 'compiledPage: entity must be a symbol or pair of 1-64 characters (BTC, $eth, EUR/USD)');
      if (bus && !listening) {
        listening = true;
        for (const event of INVALIDATING) bus.on(event, invalidate);
      }
      const key = `${normalizeAsset(entity)}${pageOptions.includeHardConstraints === false ? '|nohc' : ''}${pageOptions.includeTrades === false ? '|notrades' : ''}`;
      const hit = pages.get(key);
      if (hit !== undefined) return hit;
      const text = await compilePage(db, scope, entity, { ...pageOptions, timelineLimit: compiledPageTimeline });
      pages.set(key, text);
      return text;
    },

    close() {
      if (!listening || !bus) return;
      for (const event of INVALIDATING) bus.off(event, invalidate);
      listening = false;
    },

    async synthesize(synthesisOptions = {}) {
      const model = synthesisOptions.model ?? options.model;
      if (typeof model !== 'object' && typeof model !== 'string') throw new MinaraError('MODEL_NOT_CONFIGURED', 'synthesize: a model is required (synthesize({ model }) or createLearningStore({ model }))');
      const { limit = 500, minCases = 5, minConfidence = 0.5, maxPatterns = 10 } = synthesisOptions;
      for (const [k, v] of Object.entries({ limit, minCases, maxPatterns })) {
        if (!Number.isSafeInteger(v) || v < 1) throw new MinaraError('LEARNING_INVALID', `synthesize: ${k} must be a positive integer, got ${String(v)}`);
      }
      if (!(typeof minConfidence === 'number' && minConfidence >= 0 && minConfidence <= 1)) throw new MinaraError('LEARNING_INVALID', `synthesize: minConfidence must be a number from 0 to 1, got ${String(minConfidence)}`);
      return synthesizeMethodologies(
        {
          listReflected: (n) => db.listCases(scope, { status: 'reflected', limit: n }),
          getTrade: (id) => db.getTrade(scope, id),
          synthesized: async () => {
            const out = new Map<string, number>();
            for (const m of await db.listMethodologies(scope, { limit: 5000 })) {
              const key = synthesisKeyOf(m.sourceRef);
              if (key !== undefined && !out.has(key)) out.set(key, m.id);
            }
            return out;
          },
          createMethodology: async (i) => {
            const r = await store.createMethodology({ text: i.text, assetClass: i.assetClass, origin: 'synthesis', sourceRef: i.sourceRef, state: i.state });
            return { id: r.methodology.id, created: r.created };
          },
          recordUsage: synthesisOptions.recordUsage, admit: synthesisOptions.admit, logger,
        },
        { limit, minCases, minConfidence, maxPatterns, model, ...(synthesisOptions.signal ? { signal: synthesisOptions.signal } : {}) },
      );
    },

    async reflect(reflectOptions = {}) {
      if (!memory) throw new MinaraError('CONFIG_INVALID', 'reflect: the learning store needs `memory` to write lessons (createLearningStore({ memory }))');
      const model = reflectOptions.model ?? options.model;
      if (typeof model !== 'object' && typeof model !== 'string') throw new MinaraError('MODEL_NOT_CONFIGURED', 'reflect: a model is required (reflect({ model }) or createLearningStore({ model }))');
      const limit = reflectOptions.limit ?? 10;
      if (!Number.isSafeInteger(limit) || limit < 1) throw new MinaraError('LEARNING_INVALID', `reflect: limit must be a positive integer, got ${String(limit)}`);
      return reflectCases(
        {
          memory, logger,
          listPending: (n, role) => db.listCases(scope, { status: 'pending', limit: n, ...(role !== undefined ? { role } : {}) }),
          markReflected: (id, r) => db.markCaseReflected(scope, id, { ...r, now: now() }),
          createMethodology: async (c, text) => (await store.createMethodology({ text, assetClass: c.assetClass ?? 'any', origin: 'lesson', sourceRef: `case:${c.id}` })).created,
          onReflected: async (c, classification, lessons, reflection) => {
            pages.clear();
            bus?.emit('role_memory:reflected', { ...who, caseId: c.id, classification, lessons });
            // The case's memory now carries its classification and lessons (re-indexed, re-embedded).
            await indexCase({ db, scope, memory, logger }, { ...c, classification, reflection, reflectedAt: now() }).catch((error: unknown) =>
              logger.warn('trade case index: the reflected case memory was not rewritten', { caseId: c.id, error: error instanceof Error ? error.message : String(error) }));
          },
        },
        { ...reflectOptions, model, limit },
      );
    },
  };
  return store;
}
