/**
 * The learning store's state (one tenant's storage, memory, bus, rules and compiled-page cache) and the small
 * helpers every part of the store uses: the clock, the change events, the not-found and refusal errors, the
 * audit row of an operator's decision.
 */
import { MinaraError } from '../errors/minara-error';
import type { MinaraBusEvents } from '../events/bus';
import type { LearningScope, LearningStorage, MethodologyPolicy, MethodologyRecord, PreferenceRecord } from '../storage/learning-types';
import type { Logger } from '../util/logger';
import type { createPageCache } from './compiled-pages';
import type { LearningStoreOptions, PreferenceGraduationRule } from './types';

/** Everything a part of the learning store works with. */
export interface LearningStoreState {
  readonly options: LearningStoreOptions;
  readonly scope: LearningScope;
  /** The scope as event fields. */
  readonly who: { readonly userId: string; readonly agentId?: string };
  readonly db: LearningStorage;
  readonly memory: LearningStoreOptions['memory'];
  readonly bus: LearningStoreOptions['bus'];
  readonly logger: Logger;
  readonly clock: () => Date;
  readonly policy: MethodologyPolicy;
  readonly rule: PreferenceGraduationRule;
  readonly minePreferences: boolean;
  readonly maxPromptMethodologies: number;
  readonly maxPromptPreferences: number;
  readonly compiledPageTimeline: number;
  /** Compiled pages: a TTL LRU cleared by this tenant's events (subscribed on first use) and by this store's writes. */
  readonly pages: ReturnType<typeof createPageCache>;
  /** The bus listener that clears the pages on this tenant's events. */
  readonly invalidate: (e: { readonly userId: string; readonly agentId?: string | undefined }) => void;
  /** Whether `invalidate` is subscribed. */
  listening: boolean;
}

/** The events that clear a tenant's compiled pages. */
export const INVALIDATING = ['memory:written', 'trade:recorded', 'trade:outcome_updated', 'methodology:changed', 'preference:changed', 'role_memory:reflected'] as const;

/** Now as an ISO string. */
export const nowIso = (s: LearningStoreState) => s.clock().toISOString();

/** A methodology changed: this store's pages are cleared (also without a bus), then the event goes on the bus. */
export function emitMethodology(s: LearningStoreState, m: MethodologyRecord, change: MinaraBusEvents['methodology:changed']['change']): void {
  s.pages.clear();
  s.bus?.emit('methodology:changed', { ...s.who, methodologyId: m.id, change, state: m.state, confidence: m.confidence, uses: m.uses });
}

/** A preference changed: as {@link emitMethodology}. */
export function emitPreference(s: LearningStoreState, p: PreferenceRecord): void {
  s.pages.clear();
  s.bus?.emit('preference:changed', { ...s.who, preferenceId: p.id, state: p.state, dimension: p.dimension });
}

export async function mustMethodology(s: LearningStoreState, id: number): Promise<MethodologyRecord> {
  const m = await s.db.getMethodology(s.scope, id);
  if (!m) throw new MinaraError('NOT_FOUND', `No methodology #${id} in this scope.`);
  return m;
}

export async function mustPreference(s: LearningStoreState, id: number): Promise<PreferenceRecord> {
  const p = await s.db.getPreference(s.scope, id);
  if (!p) throw new MinaraError('NOT_FOUND', `No preference #${id} in this scope.`);
  return p;
}

export const refused = (message: string) => new MinaraError('LEARNING_TRANSITION_REFUSED', message);

/** One audit row per decision a person made (never for automatic transitions). */
export async function audited(s: LearningStoreState, call: string, args: Record<string, unknown>): Promise<void> {
  await s.options.audit?.append({ at: nowIso(s), toolName: `learning.${call}`, tier: 0, source: 'learning', decision: 'allowed', durationMs: 0, argsJson: JSON.stringify({ ...s.who, ...args }) });
}
