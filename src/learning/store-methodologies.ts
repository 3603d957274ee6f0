/** The learning store's methodologies: creation (and seeding) and the operator's transitions, each audited. */
import { MinaraError } from '../errors/minara-error';
import { normalizeLearningText } from '../storage/learning-logic';
import type { MethodologyRecord } from '../storage/learning-types';
import { assetClassOf } from './assets';
import { parseMethodologySeed } from './prompt';
import { audited, emitMethodology, type LearningStoreState, mustMethodology, nowIso, refused } from './store-state';
import type { LearningStore } from './types';

type Input = Parameters<LearningStore['createMethodology']>[0];

export async function createMethodology(s: LearningStoreState, input: Input): ReturnType<LearningStore['createMethodology']> {
  if (typeof input !== 'object' || input === null || typeof input.text !== 'string' || input.text.trim() === '') {
    throw new MinaraError('LEARNING_INVALID', 'createMethodology: text must be a non-empty string');
  }
  const assetClass = input.assetClass ?? (input.asset !== undefined ? assetClassOf(input.asset) : undefined);
  if (assetClass === undefined) {
    throw new MinaraError('LEARNING_INVALID', `createMethodology: give assetClass (crypto_major, perps, forex, … or any)${input.asset !== undefined ? `; the asset ${JSON.stringify(input.asset)} has no known class` : ''}`);
  }
  try {
    const r = await s.db.upsertMethodology(s.scope, {
      assetClass, text: input.text.trim(), normalizedText: normalizeLearningText(input.text), origin: input.origin ?? 'api',
      ...(input.sourceRef !== undefined ? { sourceRef: input.sourceRef } : {}), now: nowIso(s),
      ...(input.state !== undefined ? { state: input.state } : {}),
      ...(input.state === 'proposed' ? { stateReason: input.stateReason?.slice(0, 500) ?? 'proposed: waiting for the operator (accept it to put it on trial, or quarantine it)' } : {}),
    });
    if (r.created) emitMethodology(s, r.methodology, 'created');
    return r;
  } catch (error) {
    if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw new MinaraError('LEARNING_INVALID', error.message.replace('learning.upsertMethodology', 'createMethodology'));
    throw error;
  }
}

export async function seedMethodologies(s: LearningStoreState, seed: string, seedOptions: { readonly sourceRef?: string | undefined } = {}) {
  const entries = parseMethodologySeed(seed);
  let created = 0;
  for (const e of entries) {
    const r = await createMethodology(s, { text: e.text, assetClass: e.assetClass, origin: 'seed', ...(seedOptions.sourceRef !== undefined ? { sourceRef: seedOptions.sourceRef } : {}) });
    if (r.created) created++;
  }
  return { created, existing: entries.length - created };
}

export async function graduateMethodology(s: LearningStoreState, id: number, graduateOptions: Parameters<LearningStore['graduateMethodology']>[1] = {}): Promise<MethodologyRecord> {
  const m = await mustMethodology(s, id);
  if (m.state === 'quarantined') throw refused(`Methodology #${id} is quarantined (${m.stateReason ?? 'demoted'}); reinstate it first.`);
  if (m.state === 'proposed') throw refused(`Methodology #${id} is proposed and was never on trial; accept it first.`);
  if (m.state === 'graduated') throw refused(`Methodology #${id} is already graduated.`);
  const { policy } = s;
  if (m.graduationProposedAt === undefined && graduateOptions.force !== true) {
    throw refused(`Methodology #${id} is not proposed for graduation (Wilson ${m.confidence.toFixed(3)} with ${m.uses} uses; needs ≥ ${policy.graduationMinConfidence} with ≥ ${policy.graduationMinUses}); pass force to graduate it anyway.`);
  }
  const reason = graduateOptions.reason ?? (graduateOptions.force === true ? 'graduated by the operator (forced)' : 'graduated by the operator');
  const next = await s.db.transitionMethodology(s.scope, id, { from: ['candidate'], to: 'graduated', now: nowIso(s), reason });
  if (!next) throw refused(`Methodology #${id} changed state meanwhile; nothing was graduated.`);
  emitMethodology(s, next, 'graduated');
  await audited(s, 'graduateMethodology', { id, force: graduateOptions.force === true, reason: next.stateReason });
  return next;
}

/** An operator's transition other than graduation: the compare-and-set, the event, the audit row. */
async function operatorTransition(
  s: LearningStoreState, id: number, call: 'acceptMethodology' | 'quarantineMethodology' | 'reinstateMethodology',
  change: { readonly from: readonly MethodologyRecord['state'][]; readonly to: MethodologyRecord['state']; readonly reason: string }, whenRefused: string,
): Promise<MethodologyRecord> {
  await mustMethodology(s, id);
  const next = await s.db.transitionMethodology(s.scope, id, { ...change, now: nowIso(s) });
  if (!next) throw refused(whenRefused);
  emitMethodology(s, next, call === 'acceptMethodology' ? 'accepted' : call === 'quarantineMethodology' ? 'quarantined' : 'reinstated');
  await audited(s, call, { id, reason: next.stateReason });
  return next;
}

export const acceptMethodology = (s: LearningStoreState, id: number, reason?: string) =>
  operatorTransition(s, id, 'acceptMethodology', { from: ['proposed'], to: 'candidate', reason: reason ?? 'accepted by the operator: on trial' }, `Methodology #${id} is not proposed; only a proposed methodology can be accepted.`);

export const quarantineMethodology = (s: LearningStoreState, id: number, reason?: string) =>
  operatorTransition(s, id, 'quarantineMethodology', { from: ['proposed', 'candidate', 'graduated'], to: 'quarantined', reason: reason ?? 'quarantined by the operator' }, `Methodology #${id} is already quarantined.`);

export const reinstateMethodology = (s: LearningStoreState, id: number, reason?: string) =>
  operatorTransition(s, id, 'reinstateMethodology', { from: ['quarantined'], to: 'candidate', reason: reason ?? 'reinstated by the operator' }, `Methodology #${id} is not quarantined.`);
