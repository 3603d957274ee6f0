/**
 * The skill system: define skills, gate them at registration, route them deterministically (L0),
 * activate them per session, and load SKILL.md packages (built-in folders and vendored externals).
 *
 * @module
 */
export {
  type CatalogRenderOptions,
  type CatalogState,
  renderCatalog,
  renderRoutedCatalog,
  sortSkillsForCatalog,
} from './catalog';
export { renderSkillsCatalogPage, type SkillsCatalogPageOptions } from './catalog-doc';
export {
  defineSkill,
  isSkill,
  SKILL_DESCRIPTION_MAX_CHARS,
  SKILL_PROMPT_MAX_CHARS,
  SkillDefinitionError,
  type SkillIssue,
  validateSkillDefinition,
} from './define-skill';
export { SkillActivationRefusedError, SkillNotFoundError } from './errors';
export {
  createExternalSkillsManager,
  type ExternalSkillRecord,
  type ExternalSkillsManager,
  type ExternalSkillsManagerOptions,
  type ExternalSkillSource,
} from './external';
export { normalizePlatform } from './gating';
export { detectPackageLicense } from './external-license';
export { classifySpdx, detectLicense, LICENSE_FILE_NAMES, type LicenseCategory, type LicenseDetection } from './license';
export { createSkillMetaTools, type SkillMetaTools, type SkillMetaToolsOptions } from './meta-tools';
export { assembleSkillPrompt, SKILL_BODY_BUDGET_CHARS, type SkillPromptResult } from './prompt';
export { createSkillRegistry, type HiddenSkill, type SkillRegistry, type SkillRegistryOptions } from './registry';
export {
  createSkillRouter,
  ROUTE_ASSET_SCORE,
  ROUTE_CO_ACTIVATE_SCORE,
  ROUTE_KEYWORD_CAP,
  ROUTE_KEYWORD_SCORE,
  ROUTE_SIGNAL_SCORE,
  ROUTE_STAGE_SCORE,
  type SkillRouter,
  type SkillRouterOptions,
} from './router';
export {
  ACTIVATE_SKILLS_TOOL,
  type ActivateOptions,
  type ActivationVia,
  createSkillSession,
  createSkillSessionStore,
  DEFAULT_ALWAYS_INCLUDE_TOOLS,
  type SkillActivationRecord,
  type SkillActivationResult,
  type SkillSession,
  type SkillSessionOptions,
  type SkillSessionStore,
  TOOL_INVOKE_TOOL,
} from './session';
export { applySignalPreload, parseSignalContext, renderSignalBlock, signalContextSchema, type SignalPreloadResult } from './signals';
export {
  loadSkillDirectories,
  loadSkillPackage,
  parseSkillMd,
  type SkillLoadIssue,
  type SkillLoadOptions,
  type SkillLoadResult,
  type ParsedSkillMd,
} from './skill-md';
export type { AnalyzedText } from './text-match';
export {
  ASSET_CLASSES,
  type AssetClass,
  classifyMessage,
  detectAssetClasses,
  type FinanceAnalysis,
  inferLifecycleStages,
  isAssetClass,
  isLifecycleStage,
  isRiskTier,
  LIFECYCLE_STAGES,
  type LifecycleStage,
  permissionTierForRisk,
  RISK_TIERS,
  type RiskTier,
  riskTierOf,
  STAGE_TRIGGERS,
} from './taxonomy';
export { extractRoutingEntities, type RoutingEntity } from './taxonomy-entities';
export type {
  NormalizedConditions,
  NormalizedRouting,
  RoutedCatalogEntry,
  RouteExplanation,
  SignalContext,
  SignalSeverity,
  Skill,
  SkillActivation,
  SkillConditions,
  SkillDefinition,
  SkillOrigin,
  SkillReference,
  SkillRouting,
  TurnRoutingContext,
} from './types';
