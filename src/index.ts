/**
 * `@minara/agent`: an embeddable TypeScript SDK for finance-grade AI agents.
 *
 * @module
 * @example
 * ```ts
 * import { createToolRegistry, defineTool, PermissionTier } from '@minara/agent';
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 * import { z } from 'zod';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const getPrice = defineTool({
 *   name: 'get_price', toolSet: 'read', description: 'Spot price of a token',
 *   inputSchema: z.object({ symbol: z.string() }), permissionTier: PermissionTier.READ_ONLY,
 *   execute: async ({ symbol }) => ({ symbol, price: 97000 }),
 * });
 * const tools = createToolRegistry({ tools: [getPrice], storage });
 * console.log(await tools.dispatch('get_price', { symbol: 'BTC' }));
 * ```
 */

// ── errors ───────────────────────────────────────────────────────────────────
export {
  ApprovalError,
  ConfigError,
  ERROR_CODES,
  type FieldIssue,
  MinaraError,
  type MinaraErrorCode,
  type MinaraErrorOptions,
  SandboxEscapeError,
  StorageError,
  ToolCallBlockedError,
  ToolInputError,
  ToolNotFoundError,
} from './errors/index';

// ── utilities ────────────────────────────────────────────────────────────────
export { createConsoleLogger, type Logger, type LogFields, type LogLevel, silentLogger } from './util/logger';
export { generateId, type IdGenerator } from './util/ids';
export { createEventBus, type MinaraBus, type MinaraBusEvents } from './events/bus';

// ── safety ───────────────────────────────────────────────────────────────────
export {
  AUTONOMOUS_SOURCES,
  type CallSource,
  isAutonomousSource,
  isPermissionTier,
  maxTier,
  PermissionTier,
  permissionTierName,
} from './safety/permission-tier';
export {
  findSecrets,
  redactSecrets,
  redactValue,
  SECRET_PATTERNS,
  type SecretMatch,
  type SecretPattern,
} from './safety/secret-patterns';

// ── tools ────────────────────────────────────────────────────────────────────
export { err, errFromThrow, isToolEnvelope, ok, parseEnvelope, type ToolEnvelope, type ToolErr, type ToolOk } from './tools/envelope';
export type {
  AfterHookCall,
  ApprovalsApi,
  BeforeHookCall,
  BeforeHookResult,
  DispatchOptions,
  DispatchOutcome,
  EmergencyStopApi,
  GrantsApi,
  StoredGrantInput,
  ToolCallContext,
  ToolCallContextInit,
  ToolDefinition,
  ToolEntry,
  ToolExecutionContext,
  ToolHook,
  ToolRegistry,
  ToolSetDefinition,
} from './tools/types';

export { DEFAULT_TOOL_TIMEOUT_MS, defineTool, defineToolFactory, type ToolFactory } from './tools/define-tool';
export { createToolRegistry, type ToolRegistryOptions } from './tools/registry';
export { createToolCallContext } from './tools/context';
export { BUILTIN_TOOL_SETS } from './tools/tool-sets';
export { createFileTools, type FileToolsOptions } from './tools/file-tools';
export { toAISDKTools, type ToAISDKToolsOptions } from './tools/ai-sdk';
export { resolveInSandbox, type SandboxOptions } from './safety/sandbox';
export { DEFAULT_APPROVAL_TTL_MS, hashToolInput } from './safety/approvals';

// ── config ───────────────────────────────────────────────────────────────────
export { type EnvSource, loadEnv, type LoadEnvOptions, type LoadEnvResult } from './config/load-env';
export { loadConfig, type MinaraConfig, type MinaraConfigInput, MinaraConfigSchema } from './config/config';

// ── storage (interface; engines live in @minara/agent/sqlite and @minara/agent/testing) ──
export type {
  ApprovalQuery,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalStorage,
  ApprovalTransitionPatch,
  AuditDecision,
  AuditEntry,
  AuditEntryInput,
  AuditQuery,
  AuditStorage,
  ConversationStorage,
  GrantArgLimit,
  GrantQuery,
  GrantRecord,
  GrantStorage,
  InstanceInfo,
  MetaStorage,
  NewMessage,
  SessionRecord,
  Storage,
  StorageCapabilities,
  StoredMessage,
} from './storage/types';

// ── skills (issue: Skills) ── BEGIN skills
export {
  ACTIVATE_SKILLS_TOOL,
  type ActivateOptions,
  type ActivationVia,
  applySignalPreload,
  ASSET_CLASSES,
  assembleSkillPrompt,
  type AssetClass,
  type CatalogRenderOptions,
  type CatalogState,
  classifyMessage,
  classifySpdx,
  createExternalSkillsManager,
  createSkillMetaTools,
  createSkillRegistry,
  createSkillRouter,
  createSkillSession,
  createSkillSessionStore,
  DEFAULT_ALWAYS_INCLUDE_TOOLS,
  defineSkill,
  detectAssetClasses,
  detectLicense,
  detectPackageLicense,
  type ExternalSkillRecord,
  type ExternalSkillsManager,
  type ExternalSkillsManagerOptions,
  type ExternalSkillSource,
  extractRoutingEntities,
  type FinanceAnalysis,
  type HiddenSkill,
  inferLifecycleStages,
  isAssetClass,
  isLifecycleStage,
  isSkill,
  LICENSE_FILE_NAMES,
  type LicenseCategory,
  type LicenseDetection,
  LIFECYCLE_STAGES,
  type LifecycleStage,
  loadSkillDirectories,
  loadSkillPackage,
  type NormalizedConditions,
  type NormalizedRouting,
  normalizePlatform,
  type ParsedSkillMd,
  parseSignalContext,
  parseSkillMd,
  renderCatalog,
  renderRoutedCatalog,
  renderSignalBlock,
  renderSkillsCatalogPage,
  type RoutedCatalogEntry,
  type RoutingEntity,
  type RouteExplanation,
  ROUTE_ASSET_SCORE,
  ROUTE_CO_ACTIVATE_SCORE,
  ROUTE_KEYWORD_CAP,
  ROUTE_KEYWORD_SCORE,
  ROUTE_SIGNAL_SCORE,
  ROUTE_STAGE_SCORE,
  type SignalContext,
  signalContextSchema,
  type SignalPreloadResult,
  type SignalSeverity,
  type Skill,
  SKILL_BODY_BUDGET_CHARS,
  SKILL_DESCRIPTION_MAX_CHARS,
  SKILL_PROMPT_MAX_CHARS,
  type SkillActivation,
  type SkillActivationRecord,
  SkillActivationRefusedError,
  type SkillActivationResult,
  type SkillConditions,
  type SkillDefinition,
  SkillDefinitionError,
  type SkillIssue,
  type SkillLoadIssue,
  type SkillLoadOptions,
  type SkillLoadResult,
  type SkillMetaTools,
  type SkillMetaToolsOptions,
  SkillNotFoundError,
  type SkillOrigin,
  type SkillPromptResult,
  type SkillReference,
  type SkillRegistry,
  type SkillRegistryOptions,
  type SkillRouter,
  type SkillRouterOptions,
  type SkillRouting,
  type SkillSession,
  type SkillSessionOptions,
  type SkillSessionStore,
  type SkillsCatalogPageOptions,
  sortSkillsForCatalog,
  STAGE_TRIGGERS,
  TOOL_INVOKE_TOOL,
  type TurnRoutingContext,
  validateSkillDefinition,
} from './skills/index';
// ── END skills

// ── memory (issue: Memory) ── BEGIN memory
// ── END memory

// ── workspace (issue: Workspace) ── BEGIN workspace
export {
  assertEditableName,
  BOOTSTRAP_DONE_TOKEN,
  CURATOR_INSTRUCTIONS,
  type CreateWorkspaceOptions,
  createWorkspace,
  DAILY_LOG_DIR,
  type DailyLogInput,
  type DailyLogName,
  dailyLogPath,
  DEFAULT_MAX_FILE_CHARS,
  DEFAULT_MAX_TOTAL_CHARS,
  defaultWorkspaceDir,
  type DreamedState,
  DREAMING_LOG_MODULE,
  type DreamOutcome,
  type DreamScheduler,
  type DreamSettings,
  type DreamTickResult,
  EDITABLE_WORKSPACE_FILES,
  extractScheduleSection,
  type HeartbeatInput,
  type HermesImportOptions,
  type HermesImportResult,
  hasBootstrapDoneToken,
  type IdentityFields,
  type ImportedMemoryRow,
  type ImportFileOutcome,
  importHermesMemory,
  importOpenClawWorkspace,
  type JournalTurn,
  type LoadPromptBlocksOptions,
  type LockRecord,
  type MemoryRowSink,
  NOTHING_TO_PROMOTE,
  OPENCLAW_IMPORT_FILES,
  type OpenClawImportOptions,
  type OpenClawImportResult,
  type ParsedHeartbeat,
  parseDailyLogName,
  parseHeartbeat,
  parseHermesEntries,
  parseIdentityFields,
  type PromptBlockName,
  type PromptFileReport,
  type QuarantineEntry,
  renderHeartbeat,
  resolveWorkspaceDir,
  resolveWorkspaceSettings,
  SEEDABLE_WORKSPACE_FILES,
  type SeedResult,
  seedWorkspaceIfMissing,
  STATE_FILES,
  stripBootstrapDoneToken,
  TRUNCATED_HEAD_PREFIX,
  type TruncatedText,
  truncateForPrompt,
  type TurnEndInput,
  type TurnEndResult,
  type Workspace,
  WORKSPACE_DEFAULTS,
  WORKSPACE_FILE_NAMES,
  WORKSPACE_FILE_ROLES,
  WORKSPACE_TEMPLATES,
  workspaceConfigFromEnv,
  WorkspaceConflictError,
  type WorkspaceEnvConfig,
  type WorkspaceFileContent,
  type WorkspaceFileName,
  type WorkspaceLayout,
  type WorkspaceNotice,
  type WorkspacePromptBlocks,
  type WorkspaceSettings,
  type WorkspaceWriteOptions,
  type WorkspaceWriteResult,
} from './workspace/index';
// ── END workspace
