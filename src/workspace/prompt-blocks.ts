import type { CallSource } from '../safety/permission-tier';
import { sha256Hex } from '../util/canonical-json';
import type { FileLoad, WorkspaceFileCache } from './file-cache';
import { isoDate } from './files';
import {
  activeUserDirectives,
  detectLayout,
  isDirectiveUserMd,
  MIN_REMAINING_CHARS,
  stripFrontmatter,
  truncateForPrompt,
  type WorkspaceLayout,
} from './prompt-format';

/** Which prompt block a workspace file feeds. */
export type PromptBlockName = 'identity' | 'dynamic' | 'bootstrap';

/** What happened to one workspace file while building the prompt blocks. */
export interface PromptFileReport {
  /** Workspace-relative path (`SOUL.md`, `memory/2026-03-01-s1.md`). */
  readonly file: string;
  readonly block: PromptBlockName;
  /**
   * `included` / `truncated`: in the prompt. `empty`: present but blank. `missing`: absent. `filtered`:
   * hidden from this source. `skipped-budget`: the total cap ran out. `refused`: a symlink out of the
   * workspace. `too-large`: above the read cap.
   */
  readonly status: 'included' | 'truncated' | 'empty' | 'missing' | 'filtered' | 'skipped-budget' | 'refused' | 'too-large';
  /** Characters injected into the prompt (0 unless included or truncated). */
  readonly chars: number;
  /** Characters of the file after frontmatter stripping (0 when not read). */
  readonly originalChars: number;
  readonly reason?: string;
}

/** A situational message for the dynamic tail of the prompt. */
export type WorkspaceNotice =
  | { readonly kind: 'soul-changed'; readonly message: string; readonly previousSha256: string; readonly currentSha256: string }
  | { readonly kind: 'file-truncated'; readonly file: string; readonly message: string }
  | { readonly kind: 'file-unreadable'; readonly file: string; readonly message: string };

/**
 * The workspace's contribution to the system prompt, in precedence order: `identity` (cached), then
 * `dynamic` (leads the dynamic tail), then `bootstrap`, then `notices`. Derived layers (skills,
 * personalization, methodology) go after all of them, so the workspace wins any conflict.
 */
export interface WorkspacePromptBlocks {
  /**
   * SOUL.md + AGENTS.md (then TOOLS.md and IDENTITY.md, both long-lived). Cache-stable: byte-identical
   * across calls while those files are unchanged, whatever the session. Put it in a cached system block.
   * Empty string when there is nothing to show. Sub-agents get AGENTS.md only.
   */
  readonly identity: string;
  /** sha256 of `identity`, for cache-stability assertions and logs. */
  readonly identityHash: string;
  /**
   * The memory snapshot: USER.md, MEMORY.md, HEARTBEAT.md, then the recent daily journal (today and
   * yesterday, UTC), in that order. Changes between turns; do not cache. Empty string when nothing applies.
   */
  readonly dynamic: string;
  /** First-run onboarding instructions while BOOTSTRAP.md exists (interactive `user` turns only). */
  readonly bootstrap: string | undefined;
  /** One-time or situational notices (SOUL.md changed, a file truncated or unreadable). */
  readonly notices: readonly WorkspaceNotice[];
  /** Per-file report in prompt order, for `/context`-style inspection. */
  readonly files: readonly PromptFileReport[];
  /** The detected on-disk layout. */
  readonly layout: WorkspaceLayout;
  /** The source these blocks were filtered for. */
  readonly source: CallSource;
  /** Characters of workspace file content injected across all blocks. */
  readonly totalChars: number;
}

/** Caps and switches for {@link buildPromptBlocks}. */
export interface PromptBuildSettings {
  readonly maxFileChars: number;
  readonly maxTotalChars: number;
  readonly maxUserDirectivesChars: number;
  readonly heartbeatEnabled: boolean;
  /** How many days of journal (ending today) feed the snapshot. */
  readonly journalDays: number;
  /** At most this many journal files (the newest) feed the snapshot. */
  readonly maxJournalFiles: number;
}

interface PlanItem {
  readonly file: string;
  readonly block: PromptBlockName;
  readonly visible: boolean;
  readonly markMissing?: boolean;
  readonly label?: string;
}

const IDENTITY_HEADER =
  '# Workspace identity\n\nThese workspace files define who you are and how you work. If SOUL.md is present, embody its persona and tone. The workspace is ground truth: when it conflicts with inferred preferences, methodologies or playbooks later in this prompt, the workspace wins.';
const DYNAMIC_HEADER =
  '# Workspace memory snapshot\n\nCurated between-session memory from the workspace. It outranks anything inferred later in this prompt.';
const BOOTSTRAP_HEADER =
  '# First-run onboarding (BOOTSTRAP.md)\n\nBOOTSTRAP.md exists, so this workspace is still being set up: follow it before anything else. Ask first; write USER.md only after the operator answers; then end that reply with the token BOOTSTRAP_DONE on its own line.';

/** Which files a source sees: sub-agents AGENTS only; autonomous sources no MEMORY.md, journal or bootstrap. */
export function visibleTo(source: CallSource, file: string): boolean {
  if (source === 'subagent') return file === 'AGENTS.md';
  if (source === 'user') return true;
  return file !== 'MEMORY.md' && file !== 'BOOTSTRAP.md' && !file.startsWith('memory/');
}

/** Build the prompt blocks from the (cached) workspace files. */
export async function buildPromptBlocks(
  cache: WorkspaceFileCache,
  settings: PromptBuildSettings,
  context: { readonly source: CallSource; readonly now: Date; readonly root: string; readonly extraNotices?: readonly WorkspaceNotice[] },
): Promise<WorkspacePromptBlocks> {
  const { source } = context;
  const journal = await recentJournal(cache, context.now, settings);
  const plan: PlanItem[] = [
    { file: 'SOUL.md', block: 'identity', visible: visibleTo(source, 'SOUL.md'), markMissing: true },
    { file: 'AGENTS.md', block: 'identity', visible: true, markMissing: true },
    { file: 'TOOLS.md', block: 'identity', visible: visibleTo(source, 'TOOLS.md') },
    { file: 'IDENTITY.md', block: 'identity', visible: visibleTo(source, 'IDENTITY.md') },
    { file: 'USER.md', block: 'dynamic', visible: visibleTo(source, 'USER.md') },
    { file: 'MEMORY.md', block: 'dynamic', visible: visibleTo(source, 'MEMORY.md') },
    { file: 'HEARTBEAT.md', block: 'dynamic', visible: settings.heartbeatEnabled && visibleTo(source, 'HEARTBEAT.md') },
    ...journal.map((rel) => ({ file: rel, block: 'dynamic' as const, visible: visibleTo(source, rel), label: `${rel} (daily journal)` })),
    { file: 'BOOTSTRAP.md', block: 'bootstrap', visible: visibleTo(source, 'BOOTSTRAP.md') },
  ];
  const loads = await Promise.all(plan.map((p) => (p.visible || p.file === 'AGENTS.md' || p.file === 'USER.md' || p.file === 'TOOLS.md' ? cache.load(p.file) : undefined)));
  const text = (l: FileLoad | undefined) => (l?.status === 'ok' ? l.content : undefined);
  const layout = detectLayout({ agents: text(loads[1]), user: text(loads[4]), hasTools: loads[2]?.status === 'ok' });

  const sections: Record<PromptBlockName, string[]> = { identity: [], dynamic: [], bootstrap: [] };
  const files: PromptFileReport[] = [];
  const notices: WorkspaceNotice[] = [...(context.extraNotices ?? [])];
  let remaining = settings.maxTotalChars;
  let total = 0;

  plan.forEach((item, i) => {
    const load = loads[i];
    const base = { file: item.file, block: item.block };
    if (!item.visible || load === undefined) {
      files.push({ ...base, status: 'filtered', chars: 0, originalChars: 0 });
      return;
    }
    if (load.status === 'missing') {
      files.push({ ...base, status: 'missing', chars: 0, originalChars: 0 });
      if (item.markMissing) sections[item.block].push(`## ${item.file}\n\n[MISSING] Expected at: <workspace>/${item.file}`);
      return;
    }
    if (load.status !== 'ok') {
      files.push({ ...base, status: load.status, chars: 0, originalChars: 0, reason: load.reason });
      notices.push({ kind: 'file-unreadable', file: item.file, message: `${item.file} was not loaded: ${load.reason}` });
      return;
    }
    let content = stripFrontmatter(load.content);
    let cap = settings.maxFileChars;
    if (item.file === 'USER.md' && isDirectiveUserMd(content)) {
      content = activeUserDirectives(content);
      cap = Math.min(cap, settings.maxUserDirectivesChars);
    }
    content = content.trimEnd();
    if (content.trim() === '') {
      files.push({ ...base, status: 'empty', chars: 0, originalChars: content.length });
      return;
    }
    if (remaining < MIN_REMAINING_CHARS) {
      files.push({ ...base, status: 'skipped-budget', chars: 0, originalChars: content.length });
      return;
    }
    const cut = truncateForPrompt(content, item.file, Math.min(cap, remaining));
    remaining -= cut.text.length;
    total += cut.text.length;
    files.push({ ...base, status: cut.truncated ? 'truncated' : 'included', chars: cut.text.length, originalChars: cut.originalChars });
    if (cut.truncated) {
      notices.push({
        kind: 'file-truncated',
        file: item.file,
        message: `${item.file} was truncated in the prompt (kept ${cut.keptHead}+${cut.keptTail} of ${cut.originalChars} chars); read the file for full content.`,
      });
    }
    sections[item.block].push(item.block === 'bootstrap' ? cut.text : `## ${item.label ?? item.file}\n\n${cut.text}`);
  });

  const identity = sections.identity.length > 0 ? `${IDENTITY_HEADER}\n\n${sections.identity.join('\n\n')}\n` : '';
  const dynamic = sections.dynamic.length > 0 ? `${DYNAMIC_HEADER}\n\n${sections.dynamic.join('\n\n')}\n` : '';
  const bootstrap = sections.bootstrap.length > 0 ? `${BOOTSTRAP_HEADER}\n\n${sections.bootstrap.join('\n\n')}\n` : undefined;
  const same = sameIdentity(cache, identity);
  return { identity: same.text, identityHash: same.sha256, dynamic, bootstrap, notices, files, layout, source, totalChars: total };
}

/** The identity blocks a cache built last (a few: one per source), each with its sha256. */
const recentIdentities = new WeakMap<WorkspaceFileCache, Array<{ readonly text: string; readonly sha256: string }>>();
const RECENT_IDENTITIES = 4;

/**
 * The identity block as built before when its text is the same (compared in full, so never stale): the earlier
 * string and its sha256, instead of hashing it again and holding a fresh copy of it at every turn.
 */
function sameIdentity(cache: WorkspaceFileCache, text: string): { readonly text: string; readonly sha256: string } {
  let recent = recentIdentities.get(cache);
  if (!recent) recentIdentities.set(cache, (recent = []));
  const known = recent.find((r) => r.text === text);
  if (known) return known;
  const built = { text, sha256: sha256Hex(text) };
  recent.unshift(built);
  if (recent.length > RECENT_IDENTITIES) recent.pop();
  return built;
}

async function recentJournal(cache: WorkspaceFileCache, now: Date, settings: PromptBuildSettings): Promise<string[]> {
  if (settings.journalDays <= 0 || settings.maxJournalFiles <= 0) return [];
  const days = new Set<string>();
  for (let d = 0; d < settings.journalDays; d++) days.add(isoDate(new Date(now.getTime() - d * 86_400_000)));
  const logs = (await cache.listDailyLogs()).filter((l) => days.has(l.date));
  // Sorted by name: date first, then the legacy aggregate (`YYYY-MM-DD.md`) before per-session files.
  logs.sort((a, b) => a.date.localeCompare(b.date) || (a.session ?? '').localeCompare(b.session ?? ''));
  return logs.slice(-settings.maxJournalFiles).map((l) => l.rel);
}
