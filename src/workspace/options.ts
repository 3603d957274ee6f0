import type { LanguageModel } from 'ai';
import { ConfigError } from '../errors/index';
import type { Logger } from '../util/logger';
import { defaultWorkspaceDir, expandHome, WORKSPACE_DEFAULTS } from './config';
import type { DreamSettings } from './dreaming/task';
import type { PromptBuildSettings } from './prompt-blocks';
import { DEFAULT_MAX_FILE_CHARS, DEFAULT_MAX_TOTAL_CHARS, DEFAULT_MAX_USER_DIRECTIVES_CHARS } from './prompt-format';
import { DEFAULT_MAX_READ_BYTES } from './safe-fs';

/** Options of `createWorkspace`. Spread `workspaceConfigFromEnv(process.env)` in to honour the env vars. */
export interface CreateWorkspaceOptions {
  /** Workspace directory (`~` expanded). @default ~/.minara/workspace */
  dir?: string | undefined;
  /** Clock used for heartbeat times, journal dates, archive names, dream sections and lock ages. @default () => new Date() */
  now?: (() => Date) | undefined;
  /** Structured logger. @default silentLogger */
  logger?: Logger | undefined;
  /** Rewrite HEARTBEAT.md at every turn end (and show it in the prompt). @default true */
  heartbeat?: boolean | undefined;
  /**
   * This process is the workspace's only writer and nothing else edits its files (a backtest's scratch workspace,
   * deleted when the run ends). The prompt's file cache then trusts its own writes instead of checking every file
   * on disk at every turn, and the heartbeat is written without the cross-process write lock (an in-process queue
   * orders this workspace's writes) and without fsync. Files are still written, confined and replaced atomically.
   * Never set it on a workspace an editor, another process or a person may change. @default false
   */
  exclusive?: boolean | undefined;
  /** Daily journal writer. */
  dailyLog?: {
    /** @default false */
    enabled?: boolean | undefined;
    /** Append every this many turns. @default 5 */
    interval?: number | undefined;
  } | undefined;
  /** Dreaming consolidation. */
  dreaming?: {
    /** Let `startDreamScheduler()` run ticks. @default false */
    enabled?: boolean | undefined;
    /** The curator model (any AI SDK `LanguageModel`). Required when `enabled`. */
    model?: LanguageModel | undefined;
    /** @default 24 */
    intervalHours?: number | undefined;
    /** Byte budget across all selected logs. @default 262144 */
    totalInputBytes?: number | undefined;
    /** Per-log (and MEMORY.md) tail cap. @default 65536 */
    maxFileBytes?: number | undefined;
    /** Lock TTL for stale takeover. @default 1800000 */
    lockTtlMs?: number | undefined;
    /** Only logs dated within this many days. @default 7 */
    windowDays?: number | undefined;
    /** Model call timeout. @default 90% of lockTtlMs */
    timeoutMs?: number | undefined;
  } | undefined;
  /** Prompt caps. */
  caps?: {
    /** Per-file cap in characters. @default 20000 */
    maxFileChars?: number | undefined;
    /** Total cap across all workspace files, in characters. @default 60000 */
    maxTotalChars?: number | undefined;
    /** Cap of a mid-2026 directives USER.md. @default 4000 */
    maxUserDirectivesChars?: number | undefined;
    /** Largest file read at all (bigger ones are refused). @default 2097152 */
    maxReadBytes?: number | undefined;
    /** Days of daily journal in the snapshot (today counts as one). @default 2 */
    journalDays?: number | undefined;
    /** Most journal files in the snapshot. @default 8 */
    maxJournalFiles?: number | undefined;
  } | undefined;
}

/** Options after defaults and validation. */
export interface WorkspaceSettings {
  readonly dir: string;
  readonly heartbeat: boolean;
  /** See {@link CreateWorkspaceOptions.exclusive}. */
  readonly exclusive: boolean;
  readonly dailyLog: { readonly enabled: boolean; readonly interval: number };
  readonly dreaming: DreamSettings & { readonly enabled: boolean; readonly intervalHours: number };
  readonly prompt: PromptBuildSettings;
  readonly maxReadBytes: number;
}

function check(field: string, value: number | undefined, fallback: number, kind: 'int' | 'number', min = 1): number {
  if (value === undefined) return fallback;
  const valid = typeof value === 'number' && Number.isFinite(value) && value >= min && (kind === 'number' || Number.isInteger(value));
  if (!valid) throw new ConfigError(`${field}: expected ${kind === 'int' ? 'an integer' : 'a number'} >= ${min}, got ${String(value)}.`, [field]);
  return value;
}

/** Apply defaults and validate; throws `ConfigError` naming the bad field. */
export function resolveWorkspaceSettings(options: CreateWorkspaceOptions): WorkspaceSettings {
  const { dir, heartbeat = WORKSPACE_DEFAULTS.heartbeat, exclusive = false, dailyLog = {}, dreaming = {}, caps = {} } = options;
  if (dir !== undefined && (typeof dir !== 'string' || dir.trim() === '' || dir.includes('\0'))) {
    throw new ConfigError('dir: expected a non-empty directory path.', ['dir']);
  }
  const lockTtlMs = check('dreaming.lockTtlMs', dreaming.lockTtlMs, WORKSPACE_DEFAULTS.dreamLockTtlMs, 'int');
  const intervalHours = check('dreaming.intervalHours', dreaming.intervalHours, WORKSPACE_DEFAULTS.dreamIntervalHours, 'number', 1 / 3600);
  if (intervalHours * 3_600_000 > 2 ** 31 - 1) {
    throw new ConfigError(`dreaming.intervalHours: at most ${Math.floor((2 ** 31 - 1) / 3_600_000)} hours (timer limit), got ${intervalHours}.`, ['dreaming.intervalHours']);
  }
  const enabled = dreaming.enabled ?? WORKSPACE_DEFAULTS.dreamEnabled;
  if (enabled && dreaming.model === undefined) {
    throw new ConfigError('dreaming.model: dreaming is enabled but no LanguageModel was given.', ['dreaming.model']);
  }
  return {
    dir: dir === undefined ? defaultWorkspaceDir() : expandHome(dir),
    heartbeat: Boolean(heartbeat),
    exclusive: exclusive === true,
    dailyLog: {
      enabled: dailyLog.enabled ?? WORKSPACE_DEFAULTS.dailyLogEnabled,
      interval: check('dailyLog.interval', dailyLog.interval, WORKSPACE_DEFAULTS.dailyLogInterval, 'int'),
    },
    dreaming: {
      enabled,
      intervalHours,
      lockTtlMs,
      totalInputBytes: check('dreaming.totalInputBytes', dreaming.totalInputBytes, WORKSPACE_DEFAULTS.dreamTotalInputBytes, 'int'),
      maxFileBytes: check('dreaming.maxFileBytes', dreaming.maxFileBytes, WORKSPACE_DEFAULTS.dreamMaxFileBytes, 'int'),
      windowDays: check('dreaming.windowDays', dreaming.windowDays, WORKSPACE_DEFAULTS.dreamWindowDays, 'int'),
      timeoutMs: check('dreaming.timeoutMs', dreaming.timeoutMs, Math.floor(lockTtlMs * 0.9), 'int'),
    },
    prompt: {
      maxFileChars: check('caps.maxFileChars', caps.maxFileChars, DEFAULT_MAX_FILE_CHARS, 'int', 100),
      maxTotalChars: check('caps.maxTotalChars', caps.maxTotalChars, DEFAULT_MAX_TOTAL_CHARS, 'int', 100),
      maxUserDirectivesChars: check('caps.maxUserDirectivesChars', caps.maxUserDirectivesChars, DEFAULT_MAX_USER_DIRECTIVES_CHARS, 'int', 100),
      heartbeatEnabled: Boolean(heartbeat),
      journalDays: check('caps.journalDays', caps.journalDays, 2, 'int', 0),
      maxJournalFiles: check('caps.maxJournalFiles', caps.maxJournalFiles, 8, 'int', 0),
    },
    maxReadBytes: check('caps.maxReadBytes', caps.maxReadBytes, DEFAULT_MAX_READ_BYTES, 'int', 1024),
  };
}
