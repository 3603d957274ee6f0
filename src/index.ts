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
import { assertSupportedNode } from './util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

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
export { APP_VIEWS, type AppView, createEventBus, type MinaraBus, type MinaraBusEvents } from './events/bus';

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
export { type ApprovalProvenance, err, errFromThrow, isToolEnvelope, ok, parseEnvelope, type ToolEnvelope, type ToolErr, type ToolOk } from './tools/envelope';
export type {
  AfterHookCall,
  ApprovalsApi,
  BeforeHookCall,
  BeforeHookResult,
  CapabilitiesApi,
  DispatchOptions,
  DispatchOutcome,
  EmergencyStopApi,
  EmergencyStopScope,
  EmergencyStopStatus,
  GrantActor,
  GrantsApi,
  OrderFactsContext,
  OrderSide,
  StoredGrantInput,
  ToolCallContext,
  ToolCallContextInit,
  ToolDefinition,
  ToolEntry,
  ToolExecutionContext,
  ToolHook,
  ToolOrderFacts,
  ToolRegistry,
  ToolSetDefinition,
  TurnStage,
} from './tools/types';

export { DEFAULT_TOOL_TIMEOUT_MS, defineTool, defineToolFactory, type ToolFactory } from './tools/define-tool';
export { createToolRegistry, type ToolRegistryOptions } from './tools/registry';
export { MAX_TOOL_INPUT_BYTES, MAX_TOOL_INPUT_DEPTH } from './tools/input-bounds';
export { createToolCallContext } from './tools/context';
export { BUILTIN_TOOL_SETS } from './tools/tool-sets';
export { createFileTools, type FileToolsOptions } from './tools/file-tools';
export { createWebTools, type WebToolsOptions } from './tools/web-tools';
export { createWebSearchTools, type WebSearchResult, type WebSearchToolsOptions } from './tools/web-search';
export {
  type Clarification, type ClarificationChoice, CLARIFY_TOOL, createSessionTools, isClarification, readTodos, type SessionToolsOptions, type TodoItem,
} from './tools/session-tools';
export { createRecommendFeaturesTool, type RecommendFeaturesOptions } from './skills/recommend-features';
export {
  type BraveSearchOptions, createBraveSearchProvider, createSearxngSearchProvider, createTavilySearchProvider, type ProviderBaseOptions, providerBaseUrl, providerRequest,
  type ProviderRequestInit, type SearxngSearchOptions, type TavilySearchOptions, WEB_SEARCH_PROVIDERS, type WebSearchFreshness, type WebSearchHit,
  type WebSearchProvider, webSearchProviderFromEnv, type WebSearchRequest,
} from './tools/search-providers';
export { type BrowserToolsOptions, createBrowserTools, findChromium } from './tools/browser-tools';
export { createUrlPolicy, isPublicAddress, type UrlPolicy, type UrlPolicyOptions } from './tools/url-policy';
export { type SettledToolCall, toAISDKTools, type ToAISDKToolsOptions } from './tools/ai-sdk';
export { type AuditBatch, type AuditBatchOptions, createAuditBatch } from './tools/audit-batch';
export { openInSandbox, type OpenInSandboxOptions, resolveInSandbox, type SandboxOptions } from './safety/sandbox';
export { findPersonalData, normaliseForScan, PERSONAL_DATA_CLASSES, type PersonalDataClass } from './safety/personal-data';
export { type ApprovalBinding, DEFAULT_APPROVAL_TTL_MS, hashToolInput } from './safety/approvals';
export { DEFAULT_GRANT_MAX_LIFETIME_MS, type GrantBounds } from './safety/grant-input';
export { definedOnly, type DefinedOnly } from './util/defined';
export {
  APPROVAL_KEY_BYTES, defaultApprovalKeyPath, isProductionEnv, parseApprovalKey, resolveApprovalKey, type ResolveApprovalKeyOptions, type ResolvedApprovalKey,
} from './safety/approval-key';

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
// ── the audit trail: outcomes, the hash chain, verify ─────────────────────────
export type {
  AuditChainHead, AuditChainKeyOptions, AuditChainLink, AuditChainProblem, AuditChainRow, AuditFill, AuditKind, AuditOutcome, AuditVerifyOptions, AuditVerifyReport,
} from './storage/audit-types';
export { AUDIT_GENESIS_HASH, AUDIT_KINDS, auditLeafText, auditRowHash } from './storage/audit-chain';
// ── the audit trail's integrity: keyed links, signed checkpoints, inclusion proofs ──
export { type AuditKeys, auditKeyId, deriveAuditKeys, parseAuditPublicKey } from './safety/audit-keys';
export {
  type AuditCheckpoint, type AuditCheckpointer, type AuditCheckpointerOptions, type AuditCheckpointSink, createAuditCheckpointer, createFileCheckpointSink,
  createHttpCheckpointSink, defaultAuditInstance, type HttpCheckpointSinkOptions, signAuditCheckpoint, type SignedAuditCheckpoint, verifyAuditCheckpoint,
} from './safety/audit-checkpoint';
export {
  type AuditInclusionProof, auditMerkleLeafHash, auditMerkleProof, type AuditProofCheck, proveAuditRow, type ProveAuditRowOptions, type SignedAuditTreeHead, verifyAuditProof,
} from './safety/audit-proof';
export { verifyAuditTrail, type VerifyAuditTrailOptions } from './safety/audit-verify';
export {
  AUDIT_CHECKPOINT_FILE, AUDIT_PUBLIC_KEY_FILE, type AuditIntegrity, type AuditIntegrityOptions, checkAuditChainKey, createAuditIntegrity,
} from './safety/audit-integrity';
export { extractAuditOutcome } from './tools/dispatch/outcome';
export {
  type BreakerStatus, type BreakerTrip, type CircuitBreakers, type CircuitBreakersOptions, createCircuitBreakers, deliverNotice,
} from './safety/circuit-breakers';
export {
  type BreakerLimits, type BreakerMetrics, type BreakerRule, checkBreakerLimits, DEFAULT_BREAKER_LIMITS, judgeBreaker, measureBreakerRows,
} from './safety/breaker-rules';
export {
  AUDIT_CSV_COLUMNS, auditCsvRecord, type AuditFilter, exportAudit, type ExportAuditOptions, readAuditTrace, type ReadAuditTraceOptions,
} from './safety/audit-trail';
export type { JobRunOutcome, JobRunRecord, JobStorage } from './storage/job-types';
export type { SpendReservation, SpendReservationRequest, UsageEntry, UsageStorage, UsageTotals, UserUsageTotals } from './storage/usage-types';
export { type AutonomousAdmission, createAutonomousBudget } from './safety/autonomy-admission';
export type { CapabilitySwitchRecord, ControlStorage, GrantSpendReservation, QuotaSettingsRecord, RequestCount } from './storage/control-types';
export { isDiscoverOnly } from './safety/operator-controls';
export type {
  AlertCondition,
  AlertRecord,
  AlertStatus,
  AlertStorage,
  AlertTransitionPatch,
  NewAlert,
  NewWorkflowRun,
  WorkflowRunQuery,
  WorkflowRunRecord,
  WorkflowRunStatus,
  WorkflowRunStep,
  WorkflowRunStorage,
  WorkflowTrigger,
} from './storage/automation-types';
export {
  type BackgroundJob,
  type BackgroundJobContext,
  type BackgroundJobResult,
  type BackgroundJobStatus,
  type BackgroundRunner,
  type BackgroundRunnerOptions,
  createBackgroundRunner,
  formatInterval,
} from './background/runner';
export { type AgentBackground, type AgentBackgroundOptions, createAgentBackground, type Delivery, HEARTBEAT_OK } from './background/agent';
export { type DeliveryQuery, type DeliveryRecord, listDeliveries } from './background/deliveries';
export { createWebhookDelivery, type WebhookDeliveryOptions } from './background/delivery';
export { signWebhook, verifyWebhookSignature } from './util/webhook-signature';
export { type ParsedSchedule, parseSchedule, type ScheduleEntry } from './background/schedule';
export {
  createWorkflowAutomation,
  type WorkflowAutomation,
  type WorkflowAutomationOptions,
  type WorkflowInfo,
  type WorkflowTriggerOptions,
} from './background/workflows';
// What a storage engine's memory domain takes and returns (the `MemoryStorage` contract).
export type {
  ConsolidationEventInput,
  MemoryEdgeRecord,
  MemoryEntityCount,
  MemoryListQuery,
  MemoryStats,
  MemoryLookupFilter,
  MemoryRowPatch,
  MemoryScoredId,
  MemoryVectorInfo,
  MemoryVectorInput,
  NewMemoryRow,
} from './storage/memory-types';

// ── skills (issue: Skills) ── BEGIN skills
export {
  ACTIVATE_SKILLS_TOOL,
  type ActivateOptions,
  type ActivationVia,
  type AnalyzedText,
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
  isRiskTier,
  isSkill,
  LICENSE_FILE_NAMES,
  type LicenseCategory,
  type LicenseDetection,
  LIFECYCLE_STAGES,
  type LifecycleStage,
  loadSkillDirectories,
  loadSkillPackage,
  type NormalizedConditions,
  permissionTierForRisk,
  RISK_TIERS,
  type RiskTier,
  riskTierOf,
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
export {
  applyEntityBoost,
  buildSearchText,
  CATEGORY_PATTERN,
  type ConsolidationContext,
  type ConsolidationDecision,
  type ConsolidationEvent,
  type ConsolidationResult,
  type ConsolidationVerdict,
  contentHash,
  createFactConsolidator,
  createMemoryStore,
  createMemoryTools,
  DEFAULT_MAX_CONTENT_BYTES,
  type EmbeddingState,
  ENTITY_BOOST,
  type EntityNeighborhood,
  extractFinanceEntities,
  extractMemoryEdges,
  type FactConsolidator,
  type FactConsolidatorOptions,
  type FinanceEntity,
  type FinanceEntityKind,
  type LoadSnapshotOptions,
  MAX_CO_OCCURRING_TICKERS,
  MAX_EDGES_PER_CONTENT,
  MAX_GUIDANCE_CHARS,
  MAX_LIMIT,
  MAX_RETIREMENTS_PER_FACT,
  MEMORY_CONTEXT_CLOSE,
  MEMORY_CONTEXT_OPEN,
  MEMORY_SYSTEM_NOTE,
  MEMORY_TOOL_NAMES,
  PROPOSED_FACT_CATEGORY,
  PROPOSED_MEMORY_SOURCE,
  acceptHeldMemory,
  type HeldMemoryDecision,
  listHeldMemories,
  rejectHeldMemory,
  type MemoryCategory,
  type MemoryEdgeType,
  type MemoryHit,
  type MemoryItem,
  type MemoryQueryNode,
  type MemoryReadOptions,
  type MemoryRecord,
  type MemoryScope,
  type MemorySearchInfo,
  type MemorySearchMode,
  type MemoryEdgeInput,
  type MemorySearchOptions,
  type MemorySnapshot,
  type MemorySource,
  type MemoryStatus,
  type MemoryStorage,
  type MemoryStore,
  type MemoryStoreOptions,
  type MemoryToolsOptions,
  type MemoryUpdateInput,
  type MemoryWriteInput,
  normalizeContent,
  normalizeEntity,
  parseSearchQuery,
  type ParsedQuery,
  type ProfileAuthor,
  type ProfileEntry,
  reciprocalRankFusion,
  renderMemorySnapshot,
  RRF_K,
  SNAPSHOT_LIMIT,
  type SnapshotInput,
  tokenize,
} from './memory/index';
// ── END memory

// ── workspace (issue: Workspace) ── BEGIN workspace
export {
  assertEditableName,
  BOOTSTRAP_DONE_TOKEN,
  CURATOR_INSTRUCTIONS,
  type CreateWorkspaceOptions,
  createWorkspace,
  createTenantWorkspace,
  OPERATOR_IDENTITY_FILES,
  type TenantWorkspaceOptions,
  tenantWorkspaceDir,
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
  type PromptBuildSettings,
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

// ── runtime (issue: Runtime) ── BEGIN runtime
export {
  type AgentEvent,
  type AgentEventType,
  type AgentRuntime,
  type AgentRuntimeOptions,
  type ResolvedRuntimeOptions,
  type AgentTurnStep,
  type ApprovalDecision,
  buildIdentityText,
  buildSystemPromptBlocks,
  COMPACTION_MARKER,
  compactMessages,
  type CompactionOptions,
  type CompactionResult,
  createAgentRuntime,
  DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS,
  createDelegateTool,
  createScheduler,
  type CronOptions,
  type CronSchedule,
  DEFAULT_IDENTITY,
  type DelegateToolOptions,
  estimateTokens,
  type GenerateResult,
  INTERRUPTED_ENVELOPE,
  MAX_CACHE_BREAKPOINTS,
  type MinaraDataEventType,
  type MinaraDataParts,
  type MinaraUIMessage,
  type MinaraUITools,
  parseCron,
  type PendingApproval,
  type PromptBlock,
  type PromptBlockId,
  type PromptBlockInput,
  renderSystemPrompt,
  repairOrphanedToolCalls,
  resolveTimeZone,
  type RunInput,
  runWorkflow,
  RUNTIME_RULES,
  type ScenarioClassifier,
  type ScenarioMatch,
  type ScheduledJob,
  type Scheduler,
  type SchedulerOptions,
  type SchedulerTickResult,
  signalJob,
  toInstructions,
  type ToolCallStep,
  toUIMessages,
  toUIMessageStream,
  toUIMessageStreamResponse,
  type ToUIMessageStreamOptions,
  type TurnScope,
  type TurnStartInfo,
  type TurnStopReason,
  type TurnSummary,
  type PostTurnRecord,
  type TurnExecution,
  type TurnExecutionFill,
  type TurnLearning,
  type TurnLearningContext,
  type TurnToolCall,
  type TurnUsage,
  validateWorkflow,
  type WorkflowDefinition,
  type WorkflowResult,
  type WorkflowResults,
  type WorkflowStep,
  type WorkflowStepResult,
  type WorkflowRunOptions,
  formatWorkflowIssues,
  parseWorkflowFile,
  type ParseWorkflowFileOptions,
  WORKFLOW_NAME,
  type WorkflowFileIssue,
  workflowFromSpec,
  type WorkflowSpec,
  type WorkflowSpecStep,
  type StartedWorkflowRun,
  startStoredWorkflow,
  type StoredWorkflowOptions,
  toStoredStep,
} from './runtime/index';
export { INJECTION_PATTERNS, type InjectionPattern, type ScanFinding, scanInput } from './safety/input-scanner';
export {
  callProvenance, type CallProvenance, DEFAULT_UNTRUSTED_CONTENT_POLICY, describeToolSource, type FlaggedPassage, parseTurnProvenance, recordUntrusted,
  type ResolvedUntrustedContentPolicy, resolveUntrustedContentPolicy, restoreProvenance, type TrustLabel, type TurnProvenance, turnProvenance,
  UNTRUSTED_STATE_KEY, type UntrustedContentPolicy, type UntrustedKind, type UntrustedSource,
} from './safety/untrusted';
export {
  classifyInstruction, findInstructionPassages, INSTRUCTION_CLASSES, type InstructionClass, type InstructionPassage, looksLikeInstruction, normaliseForClassifier,
} from './safety/instruction-classifier';
// ── END runtime

// ── learning (issue 14: the learning loop) ── BEGIN learning
export {
  assetClassOf,
  type CompiledPageOptions,
  compilePage,
  createHistorySync,
  createLearningTools,
  createLearningStore,
  createPersonalizationRebuilder,
  createTurnLearning,
  DEFAULT_METHODOLOGY_POLICY,
  fillUid,
  LEARNING_TOOL_NAMES,
  type LearningToolsOptions,
  learningWriteReview,
  type HistorySource,
  type HistorySync,
  type HistorySyncItem,
  type HistorySyncOptions,
  normalizePerpsFill,
  normalizeSpotActivity,
  type LearningStore,
  type LearningStoreOptions,
  type MethodologyInput,
  methodologyLine,
  type MethodologySeedEntry,
  normalizeAsset,
  normalizeLearningText,
  parseMethodologySeed,
  type PersonalizationRebuilder,
  type PersonalizationRebuilderOptions,
  type PersonalizationRebuildResult,
  type PreferenceGraduationRule,
  type PreferenceInput,
  preferenceLine,
  type ReflectionResult,
  renderLearningBlock,
  ROLE_OUTCOME_CLASSES,
  type TurnLearningOptions,
  WILSON_Z_95,
  wilsonLowerBound,
} from './learning/index';
// What a storage engine's learning domain takes and returns (the `LearningStorage` contract).
export type {
  CaptureResult,
  ExternalSpotRecord,
  HistorySyncAttempt,
  HistorySyncState,
  ImportedTradeCase,
  LearningScope,
  LearningStats,
  LearningStorage,
  MethodologyChange,
  MethodologyOrigin,
  MethodologyPolicy,
  MethodologyQuery,
  MethodologyRecord,
  MethodologyRestore,
  MethodologyState,
  NewExternalSpotActivity,
  NewMethodology,
  NewPerpsFill,
  NewPreference,
  NewTradeExecution,
  PerpsFillRecord,
  PersonalizationSnapshot,
  PreferenceKind,
  PreferenceObservation,
  PreferenceQuery,
  PreferenceRecord,
  PreferenceRestore,
  PreferenceSource,
  PreferenceState,
  RoleCaseQuery,
  RoleCaseRecord,
  RoleOutcomeClass,
  TradeAction,
  TradeKind,
  TradeOutcome,
  TradeQuery,
  TradeRecord,
  TradeStatus,
} from './storage/learning-types';
// ── END learning
// ── learning from conversations and outcomes (issue 29) ── BEGIN learning-loop
export {
  ABSENCE_PREFERENCE_EVIDENCE,
  absenceEvidenceEnough,
  CHAT_EXTRACTED_SOURCE,
  createMemoryExtractor,
  DEFAULT_MEMORY_EXTRACTION_MODE,
  type ExtractionAnswer,
  type ExtractionUsage,
  looksLikeAgentInstruction,
  MEMORY_EXTRACTION_MODES,
  MEMORY_EXTRACTION_USAGE_SOURCE,
  type MemoryExtractionMode,
  type MemoryExtractionResult,
  type MemoryExtractor,
  type MemoryExtractorOptions,
  METHODOLOGY_SYNTHESIS_USAGE_SOURCE,
  type SynthesisOptions,
  type SynthesisPattern,
  type SynthesisResult,
  type SynthesisUsage,
  synthesisKeyOf,
  synthesisSourceRef,
  caseMemoryContent,
  TRADE_CASE_CATEGORY,
  TRADE_CASE_SOURCE,
} from './learning/index';
export type { ExtractionTurnRecord, NewExtractionTurn } from './storage/learning-types';
// ── END learning-loop
// ── ops (issue 17: doctor, memory export and import) ── BEGIN ops
export {
  bucketCount,
  DEFAULT_DOCTOR_FIXES,
  DOCTOR_FIXES,
  type DoctorCount,
  type DoctorFixName,
  type DoctorFixOptions,
  type DoctorFixReport,
  type DoctorFixResult,
  type DoctorOptions,
  type DoctorReport,
  type SnapshotDirtyCounters,
  exportMemory,
  type ExportMemoryOptions,
  type ExportMemoryResult,
  formatDoctorFixReport,
  formatDoctorReport,
  formatImportReport,
  importMemory,
  type ImportFileResult,
  type ImportMemoryOptions,
  type ImportMemoryResult,
  type LoosePath,
  MEMORY_EXPORT_SCHEMA_VERSION,
  memoryFileName,
  runDoctor,
  runDoctorFixes,
  VOLATILE_FIELDS,
} from './ops/index';
// ── END ops

// ── artifacts and files (issue 16) ── BEGIN artifacts
export {
  ARTIFACT_ID,
  ARTIFACT_ID_PREFIX,
  ARTIFACT_TOOL_NAMES,
  artifactUri,
  CHROMIUM_PATHS,
  compileChart,
  createArtifactMaterializer,
  createArtifactStore,
  createArtifactTools,
  DEFAULT_CHART_LIMITS,
  escapeHtml,
  findArtifactUris,
  jsonForScript,
  launchChartPngRenderer,
  markdownToHtml,
  newArtifactId,
  parseArtifactRef,
  renderArtifactHtml,
  toArtifact,
  VIEWER_CSP,
} from './artifacts/index';
export type {
  Artifact,
  ArtifactBase,
  ArtifactCallScope,
  ArtifactHtmlOptions,
  ArtifactMaterializer,
  ArtifactMaterializerOptions,
  ArtifactReference,
  ArtifactStore,
  ArtifactStoreOptions,
  ArtifactToolsOptions,
  ChartArtifactData,
  ChartLimits,
  ChartPngRenderer,
  CompiledChart,
  CreateChartInput,
  CreateReportInput,
  CreateSpreadsheetInput,
  MaterializedArtifact,
  ReportArtifactData,
  SpreadsheetArtifactData,
} from './artifacts/index';
export type {
  ArtifactKind,
  ArtifactQuery,
  ArtifactRecord,
  ArtifactScope,
  ArtifactStatus,
  ArtifactStorage,
  FileStorage,
  NewArtifact,
  StoredFileRecord,
} from './storage/artifact-types';
export {
  attachmentKeyOf,
  createFileStore,
  createMessageTranslator,
  DEFAULT_MAX_FILE_BYTES,
  describeBytes,
  FILE_KEY,
  FILE_REF_PREFIX,
  parseSpreadsheet,
  sniffContentType,
  SPREADSHEET_TYPES,
} from './files/index';
export type {
  FileStore,
  FileStoreOptions,
  MessageTranslator,
  MessageTranslatorOptions,
  ParsedSheet,
  ParsedSpreadsheet,
  ParseSpreadsheetOptions,
  PutFileInput,
  SniffResult,
  StoredFile,
} from './files/index';
// ── END artifacts

// ── research: the code sandbox, deep research ──────────────────────────────────
export {
  analysisDefinition, checkCitations, citationNumbers, type CitationProblem, claimBlocks, type CodeSandbox,
  codeAnalysisDefinition, type CodeSandboxLimits, type CodeSandboxResult, createE2bSandbox, createMethodologyLensTool, createQuickJsSandbox,
  createResearchReportTool, createResearchSkills, createRunCodeTools, deepResearchDefinition, type E2bSandboxOptions, memoryAlertsDefinition,
  type MethodologyLensOptions, type QuickJsSandboxOptions, RESEARCH_SKILL_DEFINITIONS, type ResearchReportToolOptions, type RunCodeToolsOptions,
} from './research/index';
export { type FetchedPage, fetchedPages, htmlTitle, normalizePageUrl, noteFetchedPage } from './tools/fetched-pages';

// ── app (issue: createApp) ───────────────────────────────────────────────────
export {
  type AppPack, createApp, type CreateAppOptions, createNotConfiguredModel, createResearchPack, type DisabledFeature, HARD_CONSTRAINT_PREFIX, type MinaraApp, readHardConstraints, type ResearchPackDeps,
  type ResearchPackOptions,
} from './app/index';

// ── models ───────────────────────────────────────────────────────────────────
export { createFallbackModel, type FallbackModelOptions, isFallbackError } from './llm/fallback-model';
export { DEFAULT_MODEL_PRICES, type ModelPrice, priceFor, usageCostUsd } from './llm/pricing';
export { assertSupportedNode, MIN_NODE_VERSION, nodeVersionProblem } from './util/node-version';
export { CLI_MODEL_HELP, DEFAULT_MODELS, endpointWarnings, type EnvVars, MODEL_HELP, MODEL_PROVIDERS, type ModelConfigStatus, type ModelProvider, modelConfigStatus, resolveEmbedder, resolveModel } from './llm/index';

// ── memory ranking (issue 22) ── BEGIN memory-ranking
export {
  BM25_B,
  BM25_K1,
  indexTerm,
  indexTerms,
  LABEL_WEIGHT,
  labelTerms,
  NEIGHBOUR_DECAY,
  NEIGHBOUR_WEIGHT,
  QUESTION_ROW_FACTOR,
  rankBruteForce,
  type RankDoc,
  type RankedId,
  type RankOptions,
} from './memory/index';
export type { MemoryTextChanges, MemoryTextIndexSnapshot, MemoryTextRow } from './storage/memory-types';
// ── END memory-ranking
