/**
 * The finance learning loop: decision capture, outcome attribution, Wilson-scored methodologies with
 * graduation and quarantine, learned preferences, and the learned block of a turn's prompt.
 *
 * @module
 */
export { createLearningStore } from './store';
export { ABSENCE_PREFERENCE_EVIDENCE, absenceEvidenceEnough } from './capture';
export { createTurnLearning, type TurnLearningOptions } from './turn-learning';
export type { LearningStore, LearningStoreOptions, MethodologyInput, PreferenceGraduationRule, PreferenceInput } from './types';
export { methodologyLine, type MethodologySeedEntry, parseMethodologySeed, preferenceLine, renderLearningBlock } from './prompt';
export { assetClassOf, normalizeAsset } from './assets';
export { DEFAULT_METHODOLOGY_POLICY, normalizeLearningText, WILSON_Z_95, wilsonLowerBound } from '../storage/learning-logic';
export { createHistorySync, type HistorySource, type HistorySync, type HistorySyncItem, type HistorySyncOptions } from './history-sync';
export { fillUid, normalizePerpsFill, normalizeSpotActivity } from './normalize-fill';
export { ROLE_OUTCOME_CLASSES, type ReflectionResult } from './reflection';
export { createPersonalizationRebuilder, type PersonalizationRebuilder, type PersonalizationRebuilderOptions, type PersonalizationRebuildResult } from './personalization';
export { type CompiledPageOptions, compilePage } from './compiled-pages';
export { createLearningTools, LEARNING_TOOL_NAMES, learningWriteReview, type LearningToolsOptions } from './tools';
export {
  CHAT_EXTRACTED_SOURCE, createMemoryExtractor, DEFAULT_MEMORY_EXTRACTION_MODE, type ExtractionAnswer, type ExtractionUsage, looksLikeAgentInstruction,
  MEMORY_EXTRACTION_MODES, MEMORY_EXTRACTION_USAGE_SOURCE, type MemoryExtractionMode, type MemoryExtractionResult, type MemoryExtractor, type MemoryExtractorOptions,
} from './extraction';
export {
  METHODOLOGY_SYNTHESIS_USAGE_SOURCE, type SynthesisOptions, type SynthesisPattern, type SynthesisResult, type SynthesisUsage, synthesisKeyOf, synthesisSourceRef,
} from './synthesis';
export { caseMemoryContent, TRADE_CASE_CATEGORY, TRADE_CASE_SOURCE } from './case-memories';
