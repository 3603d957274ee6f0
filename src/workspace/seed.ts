import { lstat, readdir, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ensurePrivateDirSync } from '../util/private-fs';
import { DAILY_LOG_DIR, SEEDABLE_WORKSPACE_FILES, STATE_FILES, WORKSPACE_FILE_NAMES } from './files';
import { createExclusiveConfined, TEMP_FILE_PATTERN } from './safe-fs';
import { WORKSPACE_TEMPLATES } from './templates/index';

/** What {@link seedWorkspaceIfMissing} did. */
export interface SeedResult {
  /** Absolute workspace directory. */
  readonly dir: string;
  /** Whether the workspace had no workspace content before this call (so BOOTSTRAP.md was seeded). */
  readonly brandNew: boolean;
  /** Files written from templates. */
  readonly created: readonly string[];
  /** Seedable files left alone because they already existed. */
  readonly existing: readonly string[];
  /** Orphaned temp / stale-lock files from crashed writers that were removed. */
  readonly sweptOrphans: number;
}

/** Lock records being written, and moved-aside stale locks (older releases); temp files of atomic writes are {@link TEMP_FILE_PATTERN}. */
const LOCK_ORPHAN_RE = /^\..+\.[0-9a-f]{24}\.(?:stale|tmp)$/;
const isOrphan = (name: string) => TEMP_FILE_PATTERN.test(name) || LOCK_ORPHAN_RE.test(name);
const ORPHAN_AGE_MS = 10 * 60 * 1000;

/** Remove temp files a crashed writer left behind (older than 10 minutes; live writers hold them for ms). */
async function sweepOrphans(root: string): Promise<number> {
  let swept = 0;
  for (const dir of [root, join(root, DAILY_LOG_DIR)]) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!isOrphan(name)) continue;
      const path = join(dir, name);
      const st = await lstat(path).catch(() => undefined);
      if (st?.isFile() && Date.now() - st.mtimeMs > ORPHAN_AGE_MS) {
        await unlink(path).then(() => swept++, () => {});
      }
    }
  }
  return swept;
}

/** True when `dir` holds nothing a previous setup or an operator would have left. */
async function isBrandNew(dir: string): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
  const known = new Set<string>([...WORKSPACE_FILE_NAMES, DAILY_LOG_DIR, STATE_FILES.soulState, 'memory.md', 'skills']);
  return !entries.some((e) => known.has(e) || e.startsWith('BOOTSTRAP.md.done.'));
}

/**
 * Copy every missing template into the workspace. Idempotent and race-safe: each file is created with
 * an exclusive link, so an existing (or concurrently created) file is never overwritten. HEARTBEAT.md is
 * never seeded (a seeded heartbeat would lie about session continuity), and BOOTSTRAP.md only into a
 * brand-new workspace. Orphaned temp files of crashed writers (older than 10 minutes) are swept.
 *
 * @example
 * ```ts
 * const { created, brandNew } = await seedWorkspaceIfMissing('/home/me/.minara/workspace');
 * ```
 */
export async function seedWorkspaceIfMissing(dir: string): Promise<SeedResult> {
  const root = resolve(dir);
  const brandNew = await isBrandNew(root);
  ensurePrivateDirSync(root);
  const names: string[] = [...SEEDABLE_WORKSPACE_FILES];
  if (brandNew) names.push('BOOTSTRAP.md');
  const created: string[] = [];
  const existing: string[] = [];
  for (const name of names) {
    // Most starts find every file: one lstat each instead of writing and syncing a temp file to learn it exists.
    if (await lstat(join(root, name)).then(() => true, () => false)) {
      existing.push(name);
      continue;
    }
    const template = WORKSPACE_TEMPLATES[name as keyof typeof WORKSPACE_TEMPLATES];
    if (await createExclusiveConfined(root, name, template)) created.push(name);
    else existing.push(name);
  }
  return { dir: root, brandNew, created, existing, sweptOrphans: await sweepOrphans(root) };
}
