import { resolve } from 'node:path';
import { MinaraError } from '../../errors/index';
import { findSecrets } from '../../safety/secret-patterns';
import type { Logger } from '../../util/logger';
import { silentLogger } from '../../util/logger';
import { isoDate } from '../files';
import { atomicWriteConfined, readConfined, statConfined } from '../safe-fs';
import { withWriteLock } from '../write-lock';

/** One memory row handed to a {@link MemoryRowSink}. */
export interface ImportedMemoryRow {
  /** `fact` for Hermes MEMORY.md entries, `profile` for USER.md entries (overridable). */
  readonly category: string;
  readonly content: string;
  /** `hermes:MEMORY.md` or `hermes:USER.md`. */
  readonly source: string;
}

/** Where "memory rows" go: the host wires this to its memory store (the workspace never imports it). */
export interface MemoryRowSink {
  write(entry: ImportedMemoryRow): void | Promise<void>;
}

/** Options of {@link importHermesMemory}. */
export interface HermesImportOptions {
  /** `$HERMES_HOME` (e.g. `~/.hermes` or a profile dir) or its `memories/` directory. */
  readonly from: string;
  /** Minara workspace directory: entries are appended to MEMORY.md as sections. Give this or `sink`. */
  readonly to?: string | undefined;
  /** Memory-row sink: entries are written as rows instead. */
  readonly sink?: MemoryRowSink | undefined;
  /** Row categories. @default { memory: 'fact', user: 'profile' } */
  readonly categories?: { readonly memory: string; readonly user: string } | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** What a Hermes import did. */
export interface HermesImportResult {
  readonly imported: number;
  /** Entries already present (in MEMORY.md, or repeated in the source). */
  readonly duplicates: number;
  /** Entries refused because they match a secret pattern (never imported). */
  readonly refused: readonly { readonly source: string; readonly pattern: string }[];
  /** Which source files were found. */
  readonly sources: readonly string[];
}

/** Split a Hermes memory file into entries: they are separated by a line holding only `§`. */
export function parseHermesEntries(content: string): string[] {
  const entries = content
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*§[ \t]*(?:\n|$)/)
    .map((e) => e.replace(/^[ \t]*§[ \t]*\n/, '').trim())
    .filter((e) => e !== '' && e !== '§');
  return [...new Set(entries)];
}

async function locate(from: string): Promise<string> {
  const root = resolve(from);
  if ((await statConfined(root, 'memories/MEMORY.md')) || (await statConfined(root, 'memories/USER.md'))) return resolve(root, 'memories');
  return root;
}

const bullet = (entry: string) => `- ${entry.split('\n').join('\n  ')}`;

/**
 * Import Hermes Agent memory (`memories/MEMORY.md` and `memories/USER.md`, `§`-separated entries) either
 * into the workspace's MEMORY.md as `## Imported from Hermes YYYY-MM-DD` (append-only, deduplicated
 * against what is already there) or into memory rows through `sink`. Entries that match a secret
 * pattern are refused.
 */
export async function importHermesMemory(options: HermesImportOptions): Promise<HermesImportResult> {
  const { to, sink, categories = { memory: 'fact', user: 'profile' }, now = () => new Date(), logger = silentLogger } = options;
  if ((to === undefined) === (sink === undefined)) {
    throw new MinaraError('INVALID_ARGUMENT', 'to / sink: give exactly one destination (a workspace directory or a memory-row sink).');
  }
  const dir = await locate(options.from);
  const groups: Array<{ file: 'MEMORY.md' | 'USER.md'; title: string; category: string; entries: string[] }> = [];
  const refused: Array<{ source: string; pattern: string }> = [];
  const sources: string[] = [];
  for (const [file, title, category] of [
    ['MEMORY.md', 'Notes (Hermes MEMORY.md)', categories.memory],
    ['USER.md', 'User profile (Hermes USER.md)', categories.user],
  ] as const) {
    const read = await readConfined(dir, file, 1024 * 1024);
    if (read === undefined) continue;
    sources.push(resolve(dir, file));
    const entries: string[] = [];
    for (const entry of parseHermesEntries(read.content)) {
      const hit = findSecrets(entry, { includeIdentifiers: true })[0];
      if (hit) refused.push({ source: `hermes:${file}`, pattern: hit.pattern });
      else entries.push(entry);
    }
    groups.push({ file, title, category, entries });
  }

  let imported = 0;
  let duplicates = 0;
  if (sink !== undefined) {
    for (const g of groups) {
      for (const content of g.entries) {
        await sink.write({ category: g.category, content, source: `hermes:${g.file}` });
        imported++;
      }
    }
  } else if (to !== undefined) {
    const root = resolve(to);
    await withWriteLock(root, logger, async () => {
      const existing = (await readConfined(root, 'MEMORY.md'))?.content;
      const parts: string[] = [];
      const flat = (t: string) => t.replace(/\s+/g, ' ').trim();
      const haystack = flat(existing ?? '');
      for (const g of groups) {
        const fresh = g.entries.filter((e) => !haystack.includes(flat(e)));
        duplicates += g.entries.length - fresh.length;
        if (fresh.length > 0) parts.push(`### ${g.title}\n\n${fresh.map(bullet).join('\n')}`);
        imported += fresh.length;
      }
      if (parts.length === 0) return;
      const section = `## Imported from Hermes ${isoDate(now())}\n\n${parts.join('\n\n')}\n`;
      const base = existing === undefined || existing.trim() === '' ? '# MEMORY.md - Long-Term Memory\n\n' : existing.endsWith('\n\n') ? existing : existing.endsWith('\n') ? `${existing}\n` : `${existing}\n\n`;
      await atomicWriteConfined(root, 'MEMORY.md', `${base}${section}`);
    });
  }
  logger.info('hermes_import', { module: 'workspace/import', imported, duplicates, refused: refused.length, sources });
  return { imported, duplicates, refused, sources };
}
