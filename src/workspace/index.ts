/**
 * The markdown workspace: SOUL/AGENTS/USER/MEMORY/… files, prompt blocks with precedence and caps,
 * sha256-guarded editing, heartbeat, daily journal, SOUL change disclosure, BOOTSTRAP onboarding,
 * dreaming consolidation, and OpenClaw / Hermes importers.
 *
 * @module
 */
export { createWorkspace, type DailyLogInput, type LoadPromptBlocksOptions, type Workspace } from './workspace';
export { type CreateWorkspaceOptions, resolveWorkspaceSettings, type WorkspaceSettings } from './options';
export {
  defaultWorkspaceDir,
  resolveWorkspaceDir,
  WORKSPACE_DEFAULTS,
  workspaceConfigFromEnv,
  type WorkspaceEnvConfig,
} from './config';
export {
  assertEditableName,
  DAILY_LOG_DIR,
  dailyLogPath,
  EDITABLE_WORKSPACE_FILES,
  parseDailyLogName,
  SEEDABLE_WORKSPACE_FILES,
  STATE_FILES,
  WORKSPACE_FILE_NAMES,
  WORKSPACE_FILE_ROLES,
  type DailyLogName,
  type WorkspaceFileName,
} from './files';
export { WorkspaceConflictError } from './errors';
export { WORKSPACE_TEMPLATES } from './templates/index';
export { seedWorkspaceIfMissing, type SeedResult } from './seed';
export type { WorkspaceFileContent, WorkspaceWriteOptions, WorkspaceWriteResult } from './editor';
export type { PromptBlockName, PromptBuildSettings, PromptFileReport, WorkspaceNotice, WorkspacePromptBlocks } from './prompt-blocks';
export {
  DEFAULT_MAX_FILE_CHARS,
  DEFAULT_MAX_TOTAL_CHARS,
  parseIdentityFields,
  truncateForPrompt,
  type IdentityFields,
  type TruncatedText,
  type WorkspaceLayout,
} from './prompt-format';
export { extractScheduleSection, parseHeartbeat, renderHeartbeat, type HeartbeatInput, type ParsedHeartbeat } from './heartbeat';
export { BOOTSTRAP_DONE_TOKEN, hasBootstrapDoneToken, stripBootstrapDoneToken } from './bootstrap';
export type { TurnEndInput, TurnEndResult } from './turn-end';
export type { JournalTurn } from './daily-log';
export { NOTHING_TO_PROMOTE, CURATOR_INSTRUCTIONS } from './dreaming/prompt';
export { TRUNCATED_HEAD_PREFIX } from './dreaming/selection';
export { DREAMING_LOG_MODULE, type DreamOutcome, type DreamSettings, type DreamTickResult } from './dreaming/task';
export type { DreamScheduler } from './dreaming/scheduler';
export type { DreamedState, QuarantineEntry } from './dreaming/state';
export type { LockRecord } from './file-lock';
export {
  importOpenClawWorkspace,
  OPENCLAW_IMPORT_FILES,
  type ImportFileOutcome,
  type OpenClawImportOptions,
  type OpenClawImportResult,
} from './import/openclaw';
export {
  importHermesMemory,
  parseHermesEntries,
  type HermesImportOptions,
  type HermesImportResult,
  type ImportedMemoryRow,
  type MemoryRowSink,
} from './import/hermes';
export { createTenantWorkspace, OPERATOR_IDENTITY_FILES, type TenantWorkspaceOptions, tenantWorkspaceDir } from './tenant';
