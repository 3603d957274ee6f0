/** The learning store's preferences: proposals, the operator's approval and rejection, graduation at turn start. */
import { MinaraError } from '../errors/minara-error';
import { normalizeLearningText } from '../storage/learning-logic';
import type { PreferenceRecord } from '../storage/learning-types';
import { audited, emitPreference, type LearningStoreState, mustPreference, nowIso, refused } from './store-state';
import type { LearningStore } from './types';

/** A hard constraint's finance limits (`{"maxLeverage":3}`) become `hard_constraint.*` profile entries (they only tighten). */
async function applyHardConstraint(s: LearningStoreState, value: string): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
  for (const [field, v] of Object.entries(parsed)) {
    const text = Array.isArray(v) ? v.map(String).join(',') : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string' ? String(v) : undefined;
    if (text !== undefined && /^[A-Za-z]{1,64}$/u.test(field)) await s.memory!.profile.set(`hard_constraint.${field}`, text);
  }
}

/** Activate a proposed preference: the `learned_preference` memory first, then the compare-and-set (undone if lost). */
async function activate(s: LearningStoreState, p: PreferenceRecord): Promise<PreferenceRecord | undefined> {
  const { memory } = s;
  let memoryId: number | undefined;
  if (memory) {
    memoryId = (await memory.write({ category: 'preference', content: p.text, source: 'learned_preference', metadata: { preferenceId: p.id, dimension: p.dimension, kind: p.kind } })).id;
  }
  const next = await s.db.transitionPreference(s.scope, p.id, { from: ['proposed'], to: 'active', now: nowIso(s), ...(memoryId !== undefined ? { memoryId } : {}) });
  if (!next) {
    if (memoryId !== undefined) await memory?.hardDelete(memoryId);
    return undefined;
  }
  if (next.kind === 'hard_constraint' && next.value !== undefined && memory) await applyHardConstraint(s, next.value);
  emitPreference(s, next);
  return next;
}

export async function proposePreference(s: LearningStoreState, input: Parameters<LearningStore['proposePreference']>[0]): ReturnType<LearningStore['proposePreference']> {
  if (typeof input !== 'object' || input === null || typeof input.text !== 'string' || input.text.trim() === '') {
    throw new MinaraError('LEARNING_INVALID', 'proposePreference: text must be a non-empty string');
  }
  const kind = input.kind ?? 'behavioural';
  try {
    const r = await s.db.upsertPreference(s.scope, {
      dimension: input.dimension, kind, text: input.text.trim(), normalizedText: normalizeLearningText(input.text), source: input.source ?? 'api',
      ...(input.value !== undefined ? { value: input.value } : {}), now: nowIso(s),
    });
    if (r.created) emitPreference(s, r.preference);
    return r;
  } catch (error) {
    if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw new MinaraError('LEARNING_INVALID', error.message.replace('learning.upsertPreference', 'proposePreference'));
    throw error;
  }
}

export async function approvePreference(s: LearningStoreState, id: number): Promise<PreferenceRecord> {
  const p = await mustPreference(s, id);
  if (p.state !== 'proposed') throw refused(`Preference #${id} is ${p.state}; only a proposed preference can be approved.`);
  const next = await activate(s, p);
  if (!next) throw refused(`Preference #${id} changed state meanwhile; nothing was approved.`);
  await audited(s, 'approvePreference', { id, kind: next.kind, dimension: next.dimension });
  return next;
}

export async function rejectPreference(s: LearningStoreState, id: number): Promise<PreferenceRecord> {
  const p = await mustPreference(s, id);
  const next = await s.db.transitionPreference(s.scope, id, { from: ['proposed', 'active'], to: 'rejected', now: nowIso(s) });
  if (!next) throw refused(`Preference #${id} is already rejected.`);
  // Its memory is soft-deleted (recoverable), never lost.
  if (p.memoryId !== undefined) await s.memory?.softDelete(p.memoryId);
  emitPreference(s, next);
  await audited(s, 'rejectPreference', { id, kind: next.kind, dimension: next.dimension });
  return next;
}

/** Promote proposed behavioural preferences that meet the graduation rule (turn start); hard constraints never. */
export async function graduatePreferences(s: LearningStoreState): Promise<PreferenceRecord[]> {
  const proposed = await s.db.listPreferences(s.scope, { states: ['proposed'], kinds: ['behavioural'], limit: 200 });
  const out: PreferenceRecord[] = [];
  for (const p of proposed.sort((a, b) => a.id - b.id)) {
    if (p.kind !== 'behavioural' || p.evidence < s.rule.minEvidence) continue;
    if (p.evidence / (p.evidence + p.contradictions) < s.rule.minConsistency) continue;
    const next = await activate(s, p);
    if (next) out.push(next);
  }
  return out;
}
