import { MinaraError } from '../../errors/minara-error';
import type { MinaraApp } from '../../app/types';
import type { MemoryCategory } from '../../memory/types';

/**
 * Something that existed before or during the backtest window, with the time it came to exist. The run's stores
 * start empty and each item is written into them only once the simulated clock reaches its `at`, so at any
 * decision the memory, learning, workspace and alert stores hold exactly what existed at that time (point in
 * time by construction). `at` is an ISO time or ms since epoch; an item without one is refused (never guessed).
 */
export type HistoryItem =
  | { readonly kind: 'memory'; readonly at: string | number; readonly content: string; readonly category?: MemoryCategory | undefined }
  /** A fact (the fact layer); `at` is when it was recorded. */
  | { readonly kind: 'fact'; readonly at: string | number; readonly content: string }
  /** A trade case with its outcome: `at` is when the outcome closed (not when the trade opened). */
  | { readonly kind: 'trade-case'; readonly at: string | number; readonly content: string; readonly openedAt?: string | number | undefined }
  /** A methodology; `at` is when it was learned, i.e. after the last outcome it learned from closed. */
  | { readonly kind: 'methodology'; readonly at: string | number; readonly text: string; readonly asset?: string | undefined }
  | { readonly kind: 'preference'; readonly at: string | number; readonly dimension: string; readonly text: string }
  /** A workspace file's content as of `at` (its last edit). */
  | { readonly kind: 'workspace-file'; readonly at: string | number; readonly name: string; readonly content: string }
  | { readonly kind: 'daily-log'; readonly at: string | number; readonly summary: string }
  /** A price alert set at `at`. */
  | { readonly kind: 'alert'; readonly at: string | number; readonly asset: string; readonly condition: 'above' | 'below'; readonly threshold: number; readonly note?: string | undefined };

/** The release schedule of a run's history. */
export interface HistoryReleaser {
  /** Write every item whose time is at or before `now` and not written yet; returns how many were written. */
  releaseUpTo(now: number): Promise<number>;
  /** Items written so far, items still in the future. */
  readonly counts: { readonly released: number; readonly pending: number };
}

/** Parse an item's time; a missing or invalid one names the item. */
function timeOf(item: { readonly at?: unknown }, index: number): number {
  const at = item.at;
  const ms = typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : Number.NaN;
  if (!Number.isFinite(ms)) throw new MinaraError('INVALID_ARGUMENT', `history[${index}].at: expected the ISO time or ms since epoch when it came to exist (undated history is refused, never guessed), got ${JSON.stringify(at)}`);
  return ms;
}

/**
 * Check a run's history and schedule its release into the app's stores (see {@link HistoryItem}). Items are
 * released in time order; writes go through the app's own stores (memory, fact layer, learning, workspace,
 * alerts) with the app's clock set to the simulated now, so their created-at is the simulated time.
 */
export function scheduleHistory(app: MinaraApp, items: readonly HistoryItem[], userId: string): HistoryReleaser {
  const queue = items.map((item, index) => ({ item, index, at: timeOf(item, index) })).sort((a, b) => a.at - b.at || a.index - b.index);
  for (const { item, index } of queue) {
    if (item.kind === 'trade-case' && item.openedAt !== undefined && timeOf({ at: item.openedAt }, index) > timeOf(item, index)) {
      throw new MinaraError('INVALID_ARGUMENT', `history[${index}]: a trade case closes (at) after it opens (openedAt)`);
    }
  }
  let next = 0;
  const write = async (item: HistoryItem): Promise<void> => {
    const memory = app.memoryFor(userId);
    switch (item.kind) {
      case 'memory':
        await memory.write({ category: item.category ?? 'observation', content: item.content, source: 'user_manual' });
        return;
      case 'fact':
        await memory.recordFact(item.content);
        return;
      case 'trade-case':
        await memory.write({ category: 'trade_outcome', content: item.content, source: 'user_manual' });
        return;
      case 'methodology': {
        const learning = app.learningFor(userId);
        if (learning) await learning.createMethodology({ text: item.text, origin: 'import', ...(item.asset ? { asset: item.asset } : {}) });
        return;
      }
      case 'preference': {
        const learning = app.learningFor(userId);
        if (!learning) return;
        const { preference } = await learning.proposePreference({ dimension: item.dimension, text: item.text, source: 'import' });
        if (preference.state !== 'active') await learning.approvePreference(preference.id);
        return;
      }
      case 'workspace-file': {
        const ws = app.workspaceFor(userId);
        if (!ws) return;
        const current = await ws.readFile(item.name).catch(() => undefined);
        await ws.writeFile(item.name, item.content, { expectedSha256: current?.sha256 ?? null });
        return;
      }
      case 'daily-log': {
        const ws = app.workspaceFor(userId);
        if (ws) await ws.appendDailyLog({ sessionId: 'backtest-history', surface: 'backtest', summary: item.summary });
        return;
      }
      case 'alert': {
        const createdAt = new Date(timeOf(item, 0));
        await app.storage.alerts.create({ userId, asset: item.asset.toUpperCase(), condition: item.condition, threshold: item.threshold, createdAt: createdAt.toISOString(), expiresAt: new Date(createdAt.getTime() + 30 * 86_400_000).toISOString(), ...(item.note ? { note: item.note } : {}) });
        return;
      }
    }
  };
  return {
    async releaseUpTo(now) {
      let n = 0;
      while (next < queue.length && queue[next]!.at <= now) {
        await write(queue[next]!.item);
        next++;
        n++;
      }
      return n;
    },
    get counts() {
      return { released: next, pending: queue.length - next };
    },
  };
}
