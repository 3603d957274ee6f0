/**
 * The agent background's standing jobs: the heartbeat turn over HEARTBEAT.md's untimed tasks, the purge of
 * soft-deleted memories, and the workspace's dreaming pass.
 */
import type { MemoryStore } from '../memory/types';
import { HEARTBEAT_OK } from './deliveries';
import { syncSchedule } from './agent-schedule';
import { admitted, type AgentBackgroundState, day, deliverTurn, scopeKey, traceOf, withinHours } from './agent-state';
import type { BackgroundJob, BackgroundJobContext } from './runner-types';

/** `heartbeat`: an autonomous turn over the standing tasks, inside the active hours; `HEARTBEAT_OK` is not delivered. */
export function heartbeatJob(a: AgentBackgroundState, every: number): BackgroundJob {
  return {
    id: 'heartbeat',
    description: 'Autonomous turn over the standing tasks of HEARTBEAT.md',
    every,
    run: async ({ slot, signal }) => {
      const hours = a.options.activeHours;
      if (hours && !withinHours(slot, hours)) return { skipped: `outside active hours ${hours.start}–${hours.end} UTC` };
      const { tasks } = await syncSchedule(a);
      if (tasks.length === 0) return { skipped: 'no tasks in HEARTBEAT.md ## Schedule' };
      return admitted(a, () => heartbeatTurn(a, tasks, slot, signal));
    },
  };
}

/** The heartbeat's turn in the day's heartbeat session. */
async function heartbeatTurn(a: AgentBackgroundState, tasks: readonly string[], slot: Date, signal: AbortSignal): Promise<string | { skipped: string }> {
  const sessionId = `heartbeat-${day(slot)}`;
  const message = [
    'Heartbeat: work through these standing tasks now.',
    ...tasks.map((t) => `- ${t}`),
    `If nothing needs the user's attention, answer exactly ${HEARTBEAT_OK} and nothing else.`,
  ].join('\n');
  const result = await a.runtime.generate({ sessionId, userId: a.userId, source: 'heartbeat', message, abortSignal: signal, surface: 'background' });
  traceOf(a, 'heartbeat', slot, result, sessionId);
  if (result.text.trim() === HEARTBEAT_OK) return { skipped: `${HEARTBEAT_OK}: nothing to report` };
  return deliverTurn(a, 'heartbeat', 'heartbeat', sessionId, result);
}

/**
 * `memory:purge`: soft-deleted memories past their retention, for every served tenant, and (with
 * `unservedRetentionDays`) every other tenant the storage names.
 */
export function purgeJob(a: AgentBackgroundState, every: number, stores: () => Iterable<MemoryStore>, unservedRetentionDays: number | undefined): BackgroundJob {
  return {
    id: 'memory:purge',
    description: 'Purge soft-deleted memories past their retention',
    every,
    run: async () => {
      let purged = 0;
      const served = new Set<string>();
      for (const store of stores()) {
        purged += await store.purgeExpiredSoftDeleted();
        served.add(scopeKey(store.scope));
      }
      const memory = a.storage.memory;
      if (unservedRetentionDays !== undefined && memory.expiredSoftDeletedScopes !== undefined) {
        // Tenants not served here: the storage names them (one indexed read), each purged with the given retention.
        const cutoff = new Date(a.now().getTime() - unservedRetentionDays * 86_400_000).toISOString();
        for (const scope of await memory.expiredSoftDeletedScopes(cutoff)) {
          if (!served.has(scopeKey(scope))) purged += await memory.purgeSoftDeleted(scope, cutoff);
        }
      }
      return `purged ${purged}`;
    },
  };
}

/** `workspace:dream`: the workspace's dreaming pass, on its interval and under its lock's lease. */
export function dreamJob(workspace: NonNullable<AgentBackgroundState['workspace']>): BackgroundJob {
  const settings = workspace.settings.dreaming;
  return {
    id: 'workspace:dream',
    description: 'Dreaming: fold recent daily logs into MEMORY.md proposals',
    every: Math.max(60_000, Math.round(settings.intervalHours * 3_600_000)),
    leaseMs: Math.max(60_000, settings.lockTtlMs),
    run: async ({ signal }: BackgroundJobContext) => {
      const result = await workspace.runDreamTick({ signal });
      return result.outcome === 'appended' ? 'appended a dreamed section' : { skipped: result.outcome };
    },
  };
}
