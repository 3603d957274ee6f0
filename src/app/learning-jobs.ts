import type { LanguageModel } from 'ai';
import type { BackgroundJob } from '../background/runner';
import { ConfigError } from '../errors/subclasses';
import { parseDuration } from './env-parse';
import type { MinaraBus } from '../events/bus';
import type { FinancePack } from '../finance/create-finance-pack';
import { createHistorySync } from '../learning/history-sync';
import { createPersonalizationRebuilder, type PersonalizationRebuilder } from '../learning/personalization';
import { METHODOLOGY_SYNTHESIS_USAGE_SOURCE } from '../learning/synthesis';
import type { ModelPrice } from '../llm/pricing';
import { backgroundUsageRecorder } from './extraction';
import type { LearningStore } from '../learning/types';
import type { MemoryStore } from '../memory/types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';

const DAY = 86_400_000;

/** The variable's duration, or the fallback when it is unset or blank. */
function every(env: Readonly<Record<string, string | undefined>>, name: string, fallbackMs: number): number {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallbackMs : parseDuration(value, name);
}

/**
 * The rebuilder listens for `perps_fills:recorded` and `external_spot:recorded` (memory.md): new mirrored trades
 * of this user start a rebuild at once instead of waiting for the daily one. Rebuilds never overlap: events that
 * arrive during one coalesce into one more rebuild after it. A failure is logged (the daily job retries).
 */
export function listenForMirroredTrades(bus: MinaraBus, userId: string, rebuilder: PersonalizationRebuilder, logger: Logger): () => void {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = rebuilder.rebuild()
      .then((r) => logger.debug('personalization rebuilt after mirrored trades', { userId, written: r.written, ...(r.skipped ? { skipped: r.skipped } : {}) }))
      .catch((error: unknown) => logger.warn('personalization rebuild after mirrored trades failed', { userId, error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  const onRecorded = (event: { readonly userId: string }): void => {
    if (event.userId === userId) run();
  };
  bus.on('perps_fills:recorded', onRecorded);
  bus.on('external_spot:recorded', onRecorded);
  return () => {
    bus.off('perps_fills:recorded', onRecorded);
    bus.off('external_spot:recorded', onRecorded);
  };
}

/**
 * The learning loop's background jobs for the operator (the app's user), read from env:
 * - `learning:history-sync` every `MINARA_HISTORY_SYNC_EVERY` (15m for a real adapter; off for paper unless set; `0` off), when
 *   the finance adapter has history methods;
 * - `learning:personalization` every `MINARA_PERSONALIZATION_REBUILD_EVERY` (1d), unless `MINARA_PERSONALIZATION_REBUILD=disabled`
 *   or no model is configured;
 * - `learning:reflection` every `MINARA_ROLE_REFLECTION_EVERY` (6h), only with `MINARA_ROLE_REFLECTION=enabled` and a model;
 * - `learning:synthesis` every `MINARA_METHODOLOGY_SYNTHESIS_EVERY` (1d), unless `MINARA_METHODOLOGY_SYNTHESIS=disabled` or no
 *   model is configured: methodologies proposed from winning patterns of reflected cases (no model call without one).
 */
export function learningJobs(deps: {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly learning: LearningStore | undefined;
  readonly storage: Storage;
  readonly finance: FinancePack | undefined;
  readonly memory: MemoryStore;
  readonly model: LanguageModel | undefined;
  readonly userId: string;
  readonly bus: MinaraBus;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Why a background model call may not start now (the daily budget is spent). */
  readonly admit?: (() => Promise<string | undefined>) | undefined;
  /** The `prices` option (the synthesis pass's tokens are priced into the usage ledger). */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined;
  /** Receives what undoes the jobs' listeners at close (the mirrored-trades listener). */
  readonly onDispose?: ((dispose: () => void) => void) | undefined;
}): BackgroundJob[] {
  const { env, learning, storage, finance, memory, model, userId, bus, now, logger, admit } = deps;
  if (!learning) return [];
  const jobs: BackgroundJob[] = [];
  const scope = { userId };
  const trading = finance?.trading;
  // The mirror is for off-agent history: on by default for a real adapter; for the paper books (whose trades
  // decision capture already records) only when MINARA_HISTORY_SYNC_EVERY asks for it.
  const syncEvery = every(env, 'MINARA_HISTORY_SYNC_EVERY', trading?.simulated === false ? 15 * 60_000 : 0);
  if (trading && syncEvery > 0 && (trading.listPerpFills || trading.listSpotActivity)) {
    const mirror = createHistorySync({ storage, scope, source: trading, bus, now, logger });
    jobs.push({
      id: 'learning:history-sync', description: 'Mirror perp fills and spot activity from the finance adapter', every: syncEvery,
      run: async ({ signal }) => {
        const r = await mirror.sync({ signal });
        const inserted = r.reduce((n, x) => n + x.inserted, 0);
        const failed = r.filter((x) => x.error !== undefined).length;
        return `${inserted} new rows${failed > 0 ? `, ${failed} source(s) failed` : ''}`;
      },
    });
  }
  const rebuild = (env.MINARA_PERSONALIZATION_REBUILD ?? '').trim().toLowerCase();
  if (rebuild !== '' && rebuild !== 'disabled' && rebuild !== 'enabled') {
    throw new ConfigError(`MINARA_PERSONALIZATION_REBUILD: expected enabled or disabled, got ${JSON.stringify(env.MINARA_PERSONALIZATION_REBUILD)}`, ['MINARA_PERSONALIZATION_REBUILD']);
  }
  const rebuildEvery = every(env, 'MINARA_PERSONALIZATION_REBUILD_EVERY', DAY);
  if (rebuild !== 'disabled' && model && rebuildEvery > 0) {
    const rebuilder = createPersonalizationRebuilder({ storage, scope, memory, model, bus, now, logger });
    const off = listenForMirroredTrades(bus, userId, rebuilder, logger);
    deps.onDispose?.(off);
    jobs.push({
      id: 'learning:personalization', description: 'Rebuild personalization facts from recent sessions', every: rebuildEvery,
      run: async ({ signal }) => {
        const r = await rebuilder.rebuild({ signal });
        return r.skipped ? { skipped: r.skipped } : `${r.written} facts written, ${r.duplicates} already known`;
      },
    });
  }
  const reflection = (env.MINARA_ROLE_REFLECTION ?? '').trim().toLowerCase();
  if (reflection === 'enabled' && model) {
    jobs.push({
      id: 'learning:reflection', description: 'Reflect closed trades into lessons (role reflector)', every: every(env, 'MINARA_ROLE_REFLECTION_EVERY', 6 * 3_600_000) || 6 * 3_600_000,
      run: async ({ signal }) => {
        const r = await learning.reflect({ model, limit: 20, signal });
        return r.reflected === 0 && r.failed === 0 ? { skipped: 'no pending cases' } : `${r.reflected} cases reflected, ${r.lessons} lessons, ${r.failed} failed`;
      },
    });
  }
  const synthesis = (env.MINARA_METHODOLOGY_SYNTHESIS ?? '').trim().toLowerCase();
  if (synthesis !== '' && synthesis !== 'disabled' && synthesis !== 'enabled') {
    throw new ConfigError(`MINARA_METHODOLOGY_SYNTHESIS: expected enabled or disabled, got ${JSON.stringify(env.MINARA_METHODOLOGY_SYNTHESIS)}`, ['MINARA_METHODOLOGY_SYNTHESIS']);
  }
  const synthesisEvery = every(env, 'MINARA_METHODOLOGY_SYNTHESIS_EVERY', DAY);
  if (synthesis !== 'disabled' && model && synthesisEvery > 0) {
    const record = backgroundUsageRecorder(storage, deps.prices, METHODOLOGY_SYNTHESIS_USAGE_SOURCE);
    jobs.push({
      id: 'learning:synthesis', description: 'Propose methodologies from winning patterns of reflected trade cases', every: synthesisEvery,
      run: async ({ signal }) => {
        const r = await learning.synthesize({
          model, signal, ...(admit ? { admit } : {}),
          recordUsage: (u) => record({ ...u, userId, sessionId: 'learning-synthesis', at: now().toISOString() }),
        });
        if (r.skipped) return { skipped: r.skipped };
        return `${r.offered} winning patterns offered, ${r.proposed} methodologies proposed, ${r.existing} already known, ${r.dropped} dropped${r.failed ? ' (the model answer was unusable)' : ''}`;
      },
    });
  }
  return jobs;
}
