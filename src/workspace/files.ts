import { MinaraError } from '../errors/index';
import { SandboxEscapeError } from '../errors/index';

/** The root-level workspace files, in OpenClaw's bootstrap load order. */
export const WORKSPACE_FILE_NAMES = [
  'AGENTS.md',
  'SOUL.md',
  'TOOLS.md',
  'IDENTITY.md',
  'USER.md',
  'HEARTBEAT.md',
  'BOOTSTRAP.md',
  'MEMORY.md',
] as const;

/** One of the root-level workspace file names. */
export type WorkspaceFileName = (typeof WORKSPACE_FILE_NAMES)[number];

/** What each workspace file is for (the spec's file-set table). */
export const WORKSPACE_FILE_ROLES: Readonly<Record<WorkspaceFileName, string>> = {
  'SOUL.md': 'Identity, voice, boundaries. Long-lived; edits trigger a one-time disclosure to the user.',
  'AGENTS.md': 'Session startup rules, safety defaults. Long-lived.',
  'IDENTITY.md': 'Display name, emoji, vibe (UI surface). Long-lived.',
  'USER.md': 'Operator profile (timezone, focus, risk, watchlist). Long-lived.',
  'MEMORY.md': 'Curated facts / preferences / decisions; dreaming appends "## Dreamed YYYY-MM-DD" sections.',
  'BOOTSTRAP.md': 'Two-stage first-run onboarding playbook; archived after the agent emits BOOTSTRAP_DONE.',
  'TOOLS.md': 'Environment-specific tool / skill notes. Operator-curated.',
  'HEARTBEAT.md': 'Between-session memo, rewritten at every turn end; the user owns "## Schedule".',
};

/**
 * Files an editor (REPL, Web UI, gateway) may read and write through `readFile` / `writeFile`.
 * Daily journals and the dreaming state files are not on it.
 */
export const EDITABLE_WORKSPACE_FILES: ReadonlySet<string> = new Set<WorkspaceFileName>(WORKSPACE_FILE_NAMES);

/** Files copied from the shipped templates by `seed()`. HEARTBEAT.md is deliberately absent. */
export const SEEDABLE_WORKSPACE_FILES = ['SOUL.md', 'AGENTS.md', 'IDENTITY.md', 'USER.md', 'MEMORY.md', 'TOOLS.md'] as const;

/** Directory (relative to the workspace root) holding the daily journals. */
export const DAILY_LOG_DIR = 'memory';

/** State files of the workspace root (all JSON, all safe to inspect by hand). */
export const STATE_FILES = {
  soulState: '.soul-state.json',
  dreamingLock: '.dreaming.lock',
  dreamedState: '.dreamed-state.json',
  dreamedQuarantine: '.dreamed-quarantine.json',
  writeLock: '.workspace-write.lock',
} as const;

/** `YYYY-MM-DD.md` (legacy aggregate) or `YYYY-MM-DD-<session>.md` (per session). */
const DAILY_LOG_RE = /^(\d{4})-(\d{2})-(\d{2})(?:-([A-Za-z0-9_.-]+))?\.md$/;

/** A parsed daily-journal file name. */
export interface DailyLogName {
  /** The base name, e.g. `2026-03-01-s1.md`. */
  readonly fileName: string;
  /** `YYYY-MM-DD`. */
  readonly date: string;
  /** The session part, or `undefined` for a legacy aggregate log. */
  readonly session: string | undefined;
}

/** Parse a daily-journal file name, or `undefined` when the name is not one. */
export function parseDailyLogName(fileName: string): DailyLogName | undefined {
  const m = DAILY_LOG_RE.exec(fileName);
  if (!m) return undefined;
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (Number.isNaN(Date.parse(`${date}T00:00:00Z`))) return undefined;
  return { fileName, date, session: m[4] };
}

/** A session id made safe for a file name: `[A-Za-z0-9_-]`, at most 64 characters. */
export function sessionFileSlug(sessionId: string): string {
  const slug = sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return slug.length > 0 ? slug : 'session';
}

/** `memory/YYYY-MM-DD-<session>.md` for a date (UTC) and a session. */
export function dailyLogPath(date: Date, sessionId: string): string {
  return `${DAILY_LOG_DIR}/${isoDate(date)}-${sessionFileSlug(sessionId)}.md`;
}

/** `YYYY-MM-DD` in UTC. */
export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * Check a file name given to an editor API. Throws `SANDBOX_ESCAPE` for a name with a path separator,
 * `..`, a NUL byte or an absolute path, and `WORKSPACE_FILE_NOT_EDITABLE` for any other name outside
 * the whitelist. Nothing is read or written before this check passes.
 */
export function assertEditableName(name: unknown): WorkspaceFileName {
  if (typeof name !== 'string' || name.length === 0) {
    throw new MinaraError('INVALID_ARGUMENT', `name: expected a workspace file name such as "MEMORY.md", got ${describe(name)}.`);
  }
  if (name.includes('\0')) throw new SandboxEscapeError(name.replace(/\0/g, '\\0'), 'a workspace file name may not contain a NUL byte');
  if (name.includes('/') || name.includes('\\')) throw new SandboxEscapeError(name, 'a workspace file name may not contain a path separator');
  if (name === '.' || name === '..' || name.includes('..')) throw new SandboxEscapeError(name, 'a workspace file name may not contain ".."');
  if (/^[A-Za-z]:/.test(name)) throw new SandboxEscapeError(name, 'a workspace file name may not be an absolute path');
  if (!EDITABLE_WORKSPACE_FILES.has(name)) {
    throw new MinaraError(
      'WORKSPACE_FILE_NOT_EDITABLE',
      `name: "${name}" is not an editable workspace file; expected one of ${[...EDITABLE_WORKSPACE_FILES].join(', ')}.`,
    );
  }
  return name as WorkspaceFileName;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? '""' : value === null ? 'null' : typeof value;
}
