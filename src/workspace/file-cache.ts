import { readdir, stat } from 'node:fs/promises';
import { MinaraError, SandboxEscapeError } from '../errors/index';
import { sha256Hex } from '../util/canonical-json';
import { DAILY_LOG_DIR, type DailyLogName, parseDailyLogName } from './files';
import { type ConfinedStat, readConfined, resolveConfined, statConfined } from './safe-fs';

/** The outcome of loading one workspace file. */
export type FileLoad =
  | { readonly status: 'ok'; readonly rel: string; readonly content: string; readonly stat: ConfinedStat; sha256(): string }
  | { readonly status: 'missing'; readonly rel: string }
  | { readonly status: 'refused' | 'too-large'; readonly rel: string; readonly reason: string };

/** A daily journal found under `memory/`. */
export interface DailyLogEntry extends DailyLogName {
  /** Workspace-relative path, e.g. `memory/2026-03-01-s1.md`. */
  readonly rel: string;
}

/** Confined reads with an mtime/size/inode cache, so warm prompt builds only stat. */
export interface WorkspaceFileCache {
  load(rel: string): Promise<FileLoad>;
  /** Daily journals under `memory/` (both the per-session and the legacy aggregate shape), sorted by name. */
  listDailyLogs(): Promise<readonly DailyLogEntry[]>;
  /** Forget one entry (after our own write) or everything. */
  invalidate(rel?: string): void;
  /**
   * After our own write of `rel`: a cache that trusts its own writes keeps `content` as the file (no re-read);
   * any other forgets the entry, as `invalidate` does.
   */
  wrote(rel: string, content: string, stat: () => Promise<ConfinedStat>): Promise<void>;
}

interface Entry {
  readonly key: string;
  readonly content: string;
  readonly stat: ConfinedStat;
  sha?: string;
}

const sig = (s: ConfinedStat) => `${s.realPath}|${s.size}|${s.mtimeMs}|${s.ctimeMs}|${s.ino}`;

/**
 * The daily journals under `memory/`, listed again when the directory changed (by its mtime), or, when `trusted`
 * (an exclusive workspace), only after `forget` (a journal written through the workspace).
 */
function createDailyLogLister(root: string, trusted: boolean): { list(): Promise<readonly DailyLogEntry[]>; forget(): void } {
  let logs: { key: string; list: readonly DailyLogEntry[]; gen: number } | undefined;
  let generation = 0;
  async function list(): Promise<readonly DailyLogEntry[]> {
    if (trusted && logs && logs.gen === generation) return logs.list;
    const gen = generation;
    const settle = (found: readonly DailyLogEntry[]): readonly DailyLogEntry[] => {
      if (trusted) logs = { key: '', list: found, gen };
      return found;
    };
    let real: string | undefined;
    try {
      real = await resolveConfined(root, DAILY_LOG_DIR);
    } catch (error) {
      if (SandboxEscapeError.isInstance(error)) return [];
      throw error;
    }
    if (real === undefined) return settle([]);
    const st = await stat(real);
    if (!st.isDirectory()) return settle([]);
    const key = `${real}|${st.mtimeMs}|${st.ino}`;
    if (logs?.key === key) {
      logs = { ...logs, gen };
      return logs.list;
    }
    const found: DailyLogEntry[] = [];
    for (const name of (await readdir(real)).sort()) {
      const parsed = parseDailyLogName(name);
      if (parsed) found.push({ ...parsed, rel: `${DAILY_LOG_DIR}/${name}` });
    }
    logs = { key, list: found, gen };
    return found;
  }
  return {
    list,
    forget() {
      logs = undefined;
      generation++;
    },
  };
}

/**
 * Create a file cache over the workspace `root`; reads above `maxReadBytes` are refused. With `trustOwnWrites`
 * (an exclusive workspace: this process is its only writer) a file is checked on disk once and then served
 * from memory until `invalidate` names it, which every write through the workspace does.
 */
export function createFileCache(root: string, maxReadBytes: number, options: { readonly trustOwnWrites?: boolean } = {}): WorkspaceFileCache {
  const entries = new Map<string, Entry>();
  const logs = createDailyLogLister(root, options.trustOwnWrites === true);
  const settled = options.trustOwnWrites ? new Map<string, FileLoad>() : undefined;
  // Bumped by every invalidate: a load that raced a write does not settle what it read before the write.
  let generation = 0;

  const ok = (rel: string, entry: Entry): FileLoad => ({
    status: 'ok',
    rel,
    content: entry.content,
    stat: entry.stat,
    sha256: () => (entry.sha ??= sha256Hex(entry.content)),
  });

  async function load(rel: string): Promise<FileLoad> {
    const known = settled?.get(rel);
    if (known) return known;
    const before = generation;
    const result = settled ? await readThrough(rel) : await loadFromDisk(rel);
    if (before === generation) settled?.set(rel, result);
    return result;
  }

  /** A trusted cache's miss: one confined read (its own stat); a file over the cap takes the checked path for its report. */
  async function readThrough(rel: string): Promise<FileLoad> {
    try {
      const read = await readConfined(root, rel, maxReadBytes);
      if (read === undefined) return { status: 'missing', rel };
      const entry: Entry = { key: sig(read), content: read.content, stat: read };
      entries.set(rel, entry);
      return ok(rel, entry);
    } catch (error) {
      if (SandboxEscapeError.isInstance(error) && error.code === 'SANDBOX_ESCAPE') return { status: 'refused', rel, reason: error.message };
      if (MinaraError.isInstance(error) && error.code === 'FILE_TOO_LARGE') return loadFromDisk(rel);
      throw error;
    }
  }

  async function loadFromDisk(rel: string): Promise<FileLoad> {
    try {
      const st = await statConfined(root, rel);
      if (st === undefined) {
        entries.delete(rel);
        return { status: 'missing', rel };
      }
      if (st.size > maxReadBytes) {
        return { status: 'too-large', rel, reason: `${st.size} bytes exceeds the ${maxReadBytes}-byte read cap` };
      }
      const cached = entries.get(rel);
      if (cached && cached.key === sig(st)) return ok(rel, cached);
      const read = await readConfined(root, rel, maxReadBytes);
      if (read === undefined) {
        entries.delete(rel);
        return { status: 'missing', rel };
      }
      const entry: Entry = { key: sig(read), content: read.content, stat: read };
      entries.set(rel, entry);
      return ok(rel, entry);
    } catch (error) {
      entries.delete(rel);
      if (SandboxEscapeError.isInstance(error) && error.code === 'SANDBOX_ESCAPE') return { status: 'refused', rel, reason: error.message };
      if (MinaraError.isInstance(error) && error.code === 'FILE_TOO_LARGE') return { status: 'too-large', rel, reason: error.message };
      throw error;
    }
  }

  function invalidate(rel?: string): void {
    generation++;
    if (rel === undefined) {
      entries.clear();
      settled?.clear();
      logs.forget();
    } else {
      entries.delete(rel);
      settled?.delete(rel);
      if (rel.startsWith(`${DAILY_LOG_DIR}/`)) logs.forget();
    }
  }

  async function wrote(rel: string, content: string, stat: () => Promise<ConfinedStat>): Promise<void> {
    invalidate(rel);
    // Over the cap it is reported as too large on the next load, as a read would find it.
    if (!settled || Buffer.byteLength(content) > maxReadBytes) return;
    const before = generation;
    const st = await stat();
    const entry: Entry = { key: sig(st), content, stat: st };
    entries.set(rel, entry);
    if (before === generation) settled.set(rel, ok(rel, entry));
  }

  return { load, listDailyLogs: logs.list, invalidate, wrote };
}
