import { isoDate } from '../files';
import type { DailyLogEntry } from '../file-cache';
import { readTailConfined, statConfined } from '../safe-fs';

/** Prefix of a daily log whose head was cut to fit the per-file cap. */
export const TRUNCATED_HEAD_PREFIX = '[...truncated head]\n';

/** A daily log chosen for a dream. */
export interface SelectedLog {
  /** Workspace-relative path. */
  readonly rel: string;
  /** Base name (what quarantine records). */
  readonly fileName: string;
  readonly mtimeMs: number;
  /** The text fed to the model (tail-truncated, with the prefix when cut). */
  readonly content: string;
  /** Bytes counted against the total budget. */
  readonly bytes: number;
  readonly truncated: boolean;
}

/** Selection inputs. */
export interface SelectionOptions {
  readonly watermark: number;
  readonly quarantined: ReadonlySet<string>;
  readonly windowDays: number;
  readonly now: Date;
  readonly totalInputBytes: number;
  readonly maxFileBytes: number;
}

/**
 * Pick the daily logs for one dream: newer than the watermark, not quarantined, dated within the window;
 * then a contiguous newest-first run that fits the total byte budget (the newest is always kept). Each
 * log is tail-truncated to `maxFileBytes`. Returned oldest first, the order the model reads them in.
 */
export async function selectDreamLogs(root: string, logs: readonly DailyLogEntry[], options: SelectionOptions): Promise<SelectedLog[]> {
  const oldest = isoDate(new Date(options.now.getTime() - options.windowDays * 86_400_000));
  const candidates: Array<{ entry: DailyLogEntry; mtimeMs: number; size: number }> = [];
  for (const entry of logs) {
    if (options.quarantined.has(entry.fileName) || entry.date < oldest) continue;
    const st = await statConfined(root, entry.rel).catch(() => undefined);
    if (st === undefined || st.mtimeMs <= options.watermark) continue;
    candidates.push({ entry, mtimeMs: st.mtimeMs, size: st.size });
  }
  candidates.sort((a, b) => b.mtimeMs - a.mtimeMs || b.entry.fileName.localeCompare(a.entry.fileName));
  const picked: SelectedLog[] = [];
  let total = 0;
  for (const c of candidates) {
    const estimate = Math.min(c.size, options.maxFileBytes);
    if (picked.length > 0 && total + estimate > options.totalInputBytes) break;
    const tail = await readTailConfined(root, c.entry.rel, options.maxFileBytes).catch(() => undefined);
    if (tail === undefined) continue;
    const bytes = Buffer.byteLength(tail.content);
    if (picked.length > 0 && total + bytes > options.totalInputBytes) break;
    total += bytes;
    picked.push({
      rel: c.entry.rel,
      fileName: c.entry.fileName,
      mtimeMs: Math.max(c.mtimeMs, tail.mtimeMs),
      content: tail.truncated ? `${TRUNCATED_HEAD_PREFIX}${tail.content}` : tail.content,
      bytes,
      truncated: tail.truncated,
    });
  }
  return picked.reverse();
}
