/** The learning store at a turn's edges: decision capture at turn end; the learned block and compiled pages at turn start. */
import { MinaraError } from '../errors/minara-error';
import type { PostTurnRecord } from '../runtime/types';
import type { CaptureResult, LearningScope, LearningStorage, PreferenceObservation } from '../storage/learning-types';
import { assetsOfMessage, normalizeAsset } from './assets';
import { absenceEvidenceEnough, observationsOf, tradeRowsOf } from './capture';
import { indexCase } from './case-memories';
import { compilePage, type CompiledPageOptions } from './compiled-pages';
import { renderLearningBlock } from './prompt';
import { emitMethodology, emitPreference, INVALIDATING, type LearningStoreState, nowIso } from './store-state';
import type { LearningStore } from './types';

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

/** What a capture tells the tenant: pages cleared, new preferences, trade and methodology events, quarantine warnings. */
function announceCapture(s: LearningStoreState, result: CaptureResult): void {
  const { bus, who } = s;
  if (result.recorded.length > 0 || result.updated.length > 0) s.pages.clear();
  for (const p of result.preferences) if (p.evidence === 1 && p.contradictions === 0 && p.state === 'proposed') emitPreference(s, p);
  if (bus) {
    for (const t of result.recorded) bus.emit('trade:recorded', { ...who, tradeId: t.id, asset: t.asset, action: t.action });
    for (const t of result.updated) bus.emit('trade:outcome_updated', { ...who, tradeId: t.id, asset: t.asset, ...(t.outcome ? { outcome: t.outcome } : {}) });
    for (const c of result.methodologyChanges) emitMethodology(s, c.methodology, c.change);
  }
  for (const c of result.methodologyChanges) {
    if (c.change === 'quarantined') s.logger.warn('methodology quarantined', { methodologyId: c.methodology.id, reason: c.methodology.stateReason });
  }
}

/** Decision capture: one transaction for trades, closes, attribution, cases and preference evidence; then each new case's memory. */
export async function captureTurn(s: LearningStoreState, record: PostTurnRecord): Promise<CaptureResult> {
  if (typeof record !== 'object' || record === null || !Array.isArray(record.executions)) throw new MinaraError('LEARNING_INVALID', 'captureTurn: record must be a post-turn record with executions');
  if (record.executions.length === 0) return EMPTY;
  const { db, scope, memory, logger } = s;
  const rows = tradeRowsOf(record);
  const observations = s.minePreferences ? await withEnoughAbsenceEvidence(db, scope, observationsOf(record), rows) : [];
  const result = rows.length > 0 || observations.length > 0 ? await db.recordExecutions(scope, { executions: rows, policy: s.policy, now: nowIso(s), observations }) : EMPTY;
  announceCapture(s, result);
  // Each new case becomes a memory of its own (edges, embedding); a failure is logged and backfilled later.
  if (memory) {
    for (const c of result.cases) {
      await indexCase({ db, scope, memory, logger }, c).catch((error: unknown) =>
        logger.warn('trade case index: the case memory was not written; indexCases() backfills it', { caseId: c.id, error: error instanceof Error ? error.message : String(error) }));
    }
  }
  return result;
}

/** The learned block for a turn's dynamic tail. */
export async function promptContext(s: LearningStoreState, message?: string): ReturnType<LearningStore['promptContext']> {
  const { db, scope, maxPromptMethodologies, maxPromptPreferences } = s;
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
}

/** One asset's compiled page, from the cache when fresh (the bus listener is subscribed on first use). */
export async function compiledPage(s: LearningStoreState, entity: string, pageOptions: CompiledPageOptions = {}): Promise<string> {
  if (typeof entity !== 'string' || entity.trim() === '' || entity.length > 64) throw new MinaraError('LEARNING_INVALID', 'compiledPage: entity must be a symbol or pair of 1-64 characters (BTC, $eth, EUR/USD)');
  if (s.bus && !s.listening) {
    s.listening = true;
    for (const event of INVALIDATING) s.bus.on(event, s.invalidate);
  }
  const key = `${normalizeAsset(entity)}${pageOptions.includeHardConstraints === false ? '|nohc' : ''}${pageOptions.includeTrades === false ? '|notrades' : ''}`;
  const hit = s.pages.get(key);
  if (hit !== undefined) return hit;
  const text = await compilePage(s.db, s.scope, entity, { ...pageOptions, timelineLimit: s.compiledPageTimeline });
  s.pages.set(key, text);
  return text;
}

/** Stop listening to the bus. */
export function closeStore(s: LearningStoreState): void {
  if (!s.listening || !s.bus) return;
  for (const event of INVALIDATING) s.bus.off(event, s.invalidate);
  s.listening = false;
}
