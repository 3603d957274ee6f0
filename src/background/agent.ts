import { MinaraError } from '../errors/minara-error';
import { silentLogger } from '../util/logger';
import { dreamJob, heartbeatJob, purgeJob } from './agent-jobs';
import { syncSchedule } from './agent-schedule';
import { type AgentBackgroundState, auditRunEnd, deliver, EMPTY, minutes } from './agent-state';
import type { AgentBackground, AgentBackgroundOptions, Delivery } from './agent-types';
import { type DeliveryQuery, listDeliveries } from './deliveries';
import { createBackgroundRunner } from './runner';

export type { AgentBackground, AgentBackgroundOptions, Delivery } from './agent-types';

/** The reply that means "nothing to report": a heartbeat turn answering only this is not delivered. */
export { HEARTBEAT_OK } from './deliveries';

const SCHEDULE_SYNC_MS = 5_000;

/**
 * The agent's background work on one {@link BackgroundRunner}:
 *
 * | job | schedule | what |
 * | --- | --- | --- |
 * | `heartbeat` | every `heartbeatEveryMs` (30 min) | an autonomous turn (`source: 'heartbeat'`) over the untimed entries of HEARTBEAT.md's `## Schedule`; none → no model call; a reply of only `HEARTBEAT_OK` is not delivered |
 * | `schedule:<hash>` | the entry's interval or cron | a `cron` turn with the entry's instruction, delivered |
 * | `memory:purge` | every 30 min | soft-deleted memories past their retention, for every served tenant (and every other tenant of the storage with `unservedRetentionDays`) |
 * | `workspace:dream` | the workspace's dreaming interval | the dreaming pass (when the workspace enables it) |
 *
 * Edits to HEARTBEAT.md take effect at the next tick (no restart); an entry that does not parse is logged once
 * and listed by `schedule().problems`, never fatal.
 *
 * Wiring only: the state and the shared steps (admission, delivery, the audit row) are `agent-state.ts`, the
 * `## Schedule` and its jobs `agent-schedule.ts`, the standing jobs `agent-jobs.ts`, the public types
 * `agent-types.ts`; the runner underneath is `runner.ts`.
 */
export function createAgentBackground(options: AgentBackgroundOptions): AgentBackground {
  const { runtime, storage, workspace, userId = 'default', heartbeatEveryMs = 30 * 60_000, purgeEveryMs = 30 * 60_000, now = () => new Date(), logger = silentLogger, workflows } = options;
  const unservedRetentionDays = options.unservedRetentionDays;
  if (unservedRetentionDays !== undefined && (typeof unservedRetentionDays !== 'number' || !Number.isFinite(unservedRetentionDays) || unservedRetentionDays < 0)) {
    throw new MinaraError('CONFIG_INVALID', `createAgentBackground: unservedRetentionDays must be a non-negative number of days, got ${String(unservedRetentionDays)}`);
  }
  if (options.activeHours) {
    minutes(options.activeHours.start);
    minutes(options.activeHours.end);
  }
  const runner = createBackgroundRunner({
    storage,
    now,
    logger,
    onRunEnd: (run) => auditRunEnd(a, run),
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.resolutionMs ? { resolutionMs: options.resolutionMs } : {}),
    jobs: options.jobs ?? [],
  });
  const a: AgentBackgroundState = {
    runtime, storage, workspace, userId, now, logger, workflows, options, runner,
    traces: new Map(), listeners: new Set(), reported: new Set(), current: EMPTY, lastSync: Number.NEGATIVE_INFINITY, unnoticed: [],
  };
  if (heartbeatEveryMs > 0) runner.add(heartbeatJob(a, heartbeatEveryMs));
  if (purgeEveryMs > 0 && options.memoryStores) runner.add(purgeJob(a, purgeEveryMs, options.memoryStores, unservedRetentionDays));
  // createWorkspace refuses dreaming.enabled without a model, so enabled means it can run.
  if (options.dreaming !== false && workspace?.settings.dreaming.enabled) runner.add(dreamJob(workspace));

  const tick = runner.tick.bind(runner);
  return Object.assign(runner, {
    schedule: () => a.current,
    syncSchedule: () => syncSchedule(a),
    onDelivery(listener: (delivery: Delivery) => void) {
      a.listeners.add(listener);
      return () => a.listeners.delete(listener);
    },
    deliveries: (query: DeliveryQuery) => listDeliveries(storage, query),
    deliver: (delivery: Delivery) => deliver(a, delivery),
    takeNotices: () => takeNotices(a),
    async tick() {
      if (now().getTime() - a.lastSync >= SCHEDULE_SYNC_MS) await syncSchedule(a);
      return tick();
    },
  });
}

/** Schedule problems the user has not been told about yet, each returned once. */
function takeNotices(a: AgentBackgroundState): string[] {
  const out = a.unnoticed;
  a.unnoticed = [];
  return out;
}
