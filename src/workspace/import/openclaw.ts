import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { SandboxEscapeError } from '../../errors/index';
import type { Logger } from '../../util/logger';
import { silentLogger } from '../../util/logger';
import { DAILY_LOG_DIR, parseDailyLogName } from '../files';
import { atomicWriteConfined, createExclusiveConfined, readConfined, resolveConfined } from '../safe-fs';
import { WORKSPACE_TEMPLATES } from '../templates/index';
import { withWriteLock } from '../write-lock';

/** Root files the OpenClaw importer copies. BOOTSTRAP.md and HEARTBEAT.md are deliberately skipped. */
export const OPENCLAW_IMPORT_FILES = ['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'MEMORY.md'] as const;

/** Options of {@link importOpenClawWorkspace}. */
export interface OpenClawImportOptions {
  /** The OpenClaw workspace, e.g. `~/.openclaw/workspace`. */
  readonly from: string;
  /** The Minara workspace directory. */
  readonly to: string;
  /**
   * Replace files that already exist in the target. Without it, existing files are kept, except ones
   * still byte-identical to Minara's shipped template (nothing of the operator's is lost replacing those).
   * @default false
   */
  readonly overwrite?: boolean;
  /** Also copy `memory/YYYY-MM-DD.md` and per-session daily logs. @default true */
  readonly includeDailyLogs?: boolean;
  /** Largest file copied. @default 2097152 */
  readonly maxFileBytes?: number;
  readonly logger?: Logger;
}

/** One file's fate in an import. */
export interface ImportFileOutcome {
  /** Workspace-relative path. */
  readonly file: string;
  readonly action: 'copied' | 'replaced-template' | 'overwritten' | 'skipped-exists' | 'skipped-by-design' | 'refused';
  readonly reason?: string;
}

/** What an import did. */
export interface OpenClawImportResult {
  readonly files: readonly ImportFileOutcome[];
}

/**
 * Copy an OpenClaw workspace (classic or mid-2026 layout) into a Minara workspace. Reads are confined to
 * the source (symlinks out are refused) and size-bounded; writes are atomic and never overwrite an
 * operator's file unless `overwrite` is set.
 *
 * @example
 * ```ts
 * const { files } = await importOpenClawWorkspace({ from: '~/.openclaw/workspace', to: workspace.dir });
 * ```
 */
export async function importOpenClawWorkspace(options: OpenClawImportOptions): Promise<OpenClawImportResult> {
  const { overwrite = false, includeDailyLogs = true, maxFileBytes = 2 * 1024 * 1024, logger = silentLogger } = options;
  const from = resolve(options.from);
  const to = resolve(options.to);
  const files: ImportFileOutcome[] = [
    { file: 'BOOTSTRAP.md', action: 'skipped-by-design', reason: 'one-time onboarding playbook; Minara ships its own' },
    { file: 'HEARTBEAT.md', action: 'skipped-by-design', reason: 'rewritten every turn; a stale one would lie about continuity' },
  ];
  const names: string[] = [...OPENCLAW_IMPORT_FILES];
  if (includeDailyLogs) names.push(...(await listSourceLogs(from)));

  await withWriteLock(to, logger, async () => {
    for (const rel of names) {
      let source;
      try {
        source = await readConfined(from, rel, maxFileBytes);
      } catch (error) {
        files.push({ file: rel, action: 'refused', reason: error instanceof Error ? error.message : String(error) });
        continue;
      }
      if (source === undefined) continue;
      if (await createExclusiveConfined(to, rel, source.content)) {
        files.push({ file: rel, action: 'copied' });
        continue;
      }
      const existing = await readConfined(to, rel, maxFileBytes).catch(() => undefined);
      const template = (WORKSPACE_TEMPLATES as Record<string, string | undefined>)[rel];
      if (overwrite || (template !== undefined && existing?.content === template)) {
        await atomicWriteConfined(to, rel, source.content);
        files.push({ file: rel, action: overwrite ? 'overwritten' : 'replaced-template' });
      } else {
        files.push({ file: rel, action: 'skipped-exists', reason: 'the target exists; pass overwrite: true to replace it' });
      }
    }
  });
  logger.info('openclaw_import', { module: 'workspace/import', from, to, files });
  return { files };
}

async function listSourceLogs(from: string): Promise<string[]> {
  let dir: string | undefined;
  try {
    dir = await resolveConfined(from, DAILY_LOG_DIR);
  } catch (error) {
    if (SandboxEscapeError.isInstance(error)) return [];
    throw error;
  }
  if (dir === undefined) return [];
  const entries = await readdir(dir).catch(() => [] as string[]);
  return entries.filter((n) => parseDailyLogName(n) !== undefined).sort().map((n) => `${DAILY_LOG_DIR}/${n}`);
}
