/**
 * The finance learning loop: decision capture, outcome attribution, Wilson-scored methodologies with
 * graduation and quarantine, learned preferences, and the learned block of a turn's prompt.
 *
 * @module
 */
export { createLearningStore } from './store';
export { createTurnLearning, type TurnLearningOptions } from './turn-learning';
export type { LearningStore, LearningStoreOptions, MethodologyInput, PreferenceGraduationRule, PreferenceInput } from './types';
export { methodologyLine, type MethodologySeedEntry, parseMethodologySeed, preferenceLine, renderLearningBlock } from './prompt';
export { assetClassOf, normalizeAsset } from './assets';
export { DEFAULT_METHODOLOGY_POLICY, normalizeLearningText, WILSON_Z_95, wilsonLowerBound } from '../storage/learning-logic';
