import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors/index';

/** Default workspace directory: `~/.minara/workspace`. */
export function defaultWorkspaceDir(home: string = homedir()): string {
  return join(home, '.minara', 'workspace');
}

/** Defaults of the workspace lifecycle and dreaming settings. */
export const WORKSPACE_DEFAULTS = {
  heartbeat: true,
  dailyLogEnabled: false,
  dailyLogInterval: 5,
  dreamEnabled: false,
  dreamIntervalHours: 24,
  dreamTotalInputBytes: 256 * 1024,
  dreamMaxFileBytes: 64 * 1024,
  dreamLockTtlMs: 30 * 60 * 1000,
  dreamWindowDays: 7,
} as const;

/** What {@link workspaceConfigFromEnv} returns: spread it into `createWorkspace` options. */
export interface WorkspaceEnvConfig {
  dir?: string;
  heartbeat?: boolean;
  dailyLog?: { enabled?: boolean; interval?: number };
  dreaming?: { enabled?: boolean; intervalHours?: number; totalInputBytes?: number; lockTtlMs?: number };
}

/** Expand a leading `~` to the home directory and make the path absolute. */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(home, path.slice(2));
  return resolve(path);
}

function parseBool(name: string, raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name}: expected 1/0 (or true/false, yes/no, on/off), got ${JSON.stringify(raw)}.`, [name]);
}

function parseNumber(name: string, raw: string, kind: 'int' | 'number'): number {
  const v = raw.trim();
  const n = Number(v);
  const okShape = kind === 'int' ? /^\d+$/.test(v) : /^\d+(?:\.\d+)?$/.test(v);
  if (!okShape || !Number.isFinite(n) || n <= 0) {
    throw new ConfigError(`${name}: expected a positive ${kind === 'int' ? 'integer' : 'number'}, got ${JSON.stringify(raw)}.`, [name]);
  }
  return n;
}

/**
 * Read the workspace settings from environment variables (unset or empty variables keep the defaults):
 * `MINARA_WORKSPACE_DIR`, `WORKSPACE_HEARTBEAT_ENABLED`, `WORKSPACE_DAILY_LOG_ENABLED`,
 * `WORKSPACE_DAILY_LOG_INTERVAL`, `WORKSPACE_DREAM_ENABLED`, `WORKSPACE_DREAM_INTERVAL_HOURS`,
 * `WORKSPACE_DREAM_TOTAL_INPUT_BYTES`, `WORKSPACE_DREAM_LOCK_TTL_MS`. A bad value throws a
 * `ConfigError` naming the variable and what was expected.
 *
 * @example
 * ```ts
 * const workspace = createWorkspace({ ...workspaceConfigFromEnv(process.env), dreaming: { model } });
 * ```
 */
export function workspaceConfigFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): WorkspaceEnvConfig {
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v;
  };
  const out: WorkspaceEnvConfig = {};
  const dir = get('MINARA_WORKSPACE_DIR');
  if (dir !== undefined) out.dir = expandHome(dir.trim());
  const hb = get('WORKSPACE_HEARTBEAT_ENABLED');
  if (hb !== undefined) out.heartbeat = parseBool('WORKSPACE_HEARTBEAT_ENABLED', hb);
  const dlEnabled = get('WORKSPACE_DAILY_LOG_ENABLED');
  const dlInterval = get('WORKSPACE_DAILY_LOG_INTERVAL');
  if (dlEnabled !== undefined || dlInterval !== undefined) {
    out.dailyLog = {};
    if (dlEnabled !== undefined) out.dailyLog.enabled = parseBool('WORKSPACE_DAILY_LOG_ENABLED', dlEnabled);
    if (dlInterval !== undefined) out.dailyLog.interval = parseNumber('WORKSPACE_DAILY_LOG_INTERVAL', dlInterval, 'int');
  }
  const dream: NonNullable<WorkspaceEnvConfig['dreaming']> = {};
  const de = get('WORKSPACE_DREAM_ENABLED');
  if (de !== undefined) dream.enabled = parseBool('WORKSPACE_DREAM_ENABLED', de);
  const dh = get('WORKSPACE_DREAM_INTERVAL_HOURS');
  if (dh !== undefined) dream.intervalHours = parseNumber('WORKSPACE_DREAM_INTERVAL_HOURS', dh, 'number');
  const db = get('WORKSPACE_DREAM_TOTAL_INPUT_BYTES');
  if (db !== undefined) dream.totalInputBytes = parseNumber('WORKSPACE_DREAM_TOTAL_INPUT_BYTES', db, 'int');
  const dt = get('WORKSPACE_DREAM_LOCK_TTL_MS');
  if (dt !== undefined) dream.lockTtlMs = parseNumber('WORKSPACE_DREAM_LOCK_TTL_MS', dt, 'int');
  if (Object.keys(dream).length > 0) out.dreaming = dream;
  return out;
}

/**
 * The workspace directory by precedence: explicit `dir`, then `--workspace <dir>` / `--workspace=<dir>` in
 * `argv`, then `MINARA_WORKSPACE_DIR`, then `~/.minara/workspace`.
 */
export function resolveWorkspaceDir(
  options: { dir?: string; argv?: readonly string[]; env?: Readonly<Record<string, string | undefined>>; home?: string } = {},
): string {
  const { dir, argv = [], env = {}, home = homedir() } = options;
  if (dir !== undefined && dir !== '') return expandHome(dir, home);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--workspace') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ConfigError('--workspace: expected a directory after the flag.', ['--workspace']);
      return expandHome(next, home);
    }
    if (a.startsWith('--workspace=')) {
      const v = a.slice('--workspace='.length);
      if (v === '') throw new ConfigError('--workspace: expected a directory after "=".', ['--workspace']);
      return expandHome(v, home);
    }
  }
  const fromEnv = env.MINARA_WORKSPACE_DIR?.trim();
  if (fromEnv) return expandHome(fromEnv, home);
  return defaultWorkspaceDir(home);
}
