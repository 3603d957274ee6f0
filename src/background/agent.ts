import { type DeliveryQuery, type DeliveryRecord, HEARTBEAT_OK, listDeliveries } from './deliveries';
import { MinaraError } from '../errors/minara-error';
import type { MemoryStore } from '../memory/types';
import type { MemoryScope } from '../storage/memory-types';
import type { AgentRuntime } from '../runtime/runtime';
import type { GenerateResult } from '../runtime/types';
import type { Storage } from '../storage/types';
import { type Logger, silentLogger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';
import { extractScheduleSection } from '../workspace/heartbeat';
import { type BackgroundJob, type BackgroundRunner, createBackgroundRunner } from './runner';
import { type ParsedSchedule, parseSchedule } from './schedule';
import type { WorkflowAutomation } from './workflows';

/** What an autonomous turn produced, handed to {@link AgentBackgroundOptions.deliver}. */
export interface Delivery {
  readonly jobId: string;
  readonly sessionId: string;
  /** `heartbeat`, `cron` (a `## Schedule` entry) or `alert` (a price alert that fired). */
  readonly source: 'heartbeat' | 'cron' | 'alert';
  /** The tenant it is for. @default the background's user */
  readonly userId?: string | undefined;
  /** The turn's answer. */
  readonly text: string;
  readonly at: string;
  readonly stopReason: GenerateResult['stopReason'];
}

/** The reply that means "nothing to report": a heartbeat turn answering only this is not delivered. */
export { HEARTBEAT_OK } from './deliveries';

/** Options of {@link createAgentBackground}. */
export interface AgentBackgroundOptions {
  readonly runtime: AgentRuntime;
  readonly storage: Storage;
  /** The operator's workspace: HEARTBEAT.md's `## Schedule` drives the heartbeat tasks and the timed jobs. */
  readonly workspace?: Workspace | undefined;
  /** The tenant autonomous turns run for. @default 'default' */
  readonly userId?: string | undefined;
  /** Heartbeat turns every this many ms; 0 turns them off. @default 1800000 (30 minutes; `MINARA_HEARTBEAT_EVERY`) */
  readonly heartbeatEveryMs?: number | undefined;
  /** Heartbeat turns only inside these UTC hours, e.g. `{ start: '08:00', end: '22:00' }`. @default all day */
  readonly activeHours?: { readonly start: string; readonly end: string } | undefined;
  /** Soft-deleted memories older than the retention are purged every this many ms; 0 off. @default 1800000 */
  readonly purgeEveryMs?: number | undefined;
  /** The memory stores whose soft-deleted rows the purge job removes (the tenants this process serves). */
  readonly memoryStores?: (() => Iterable<MemoryStore>) | undefined;
  /**
   * Also purge the tenants no store of `memoryStores` serves: the purge job asks the storage for every scope with
   * rows soft-deleted more than this many days ago (`MemoryStorage.expiredSoftDeletedScopes`) and purges them, so a
   * tenant who has not come back since the process started is purged on time too. Set it to the retention those
   * tenants' stores use (`createApp` sets 30, its stores' retention). Served tenants keep their own store's
   * retention. @default off (served tenants only)
   */
  readonly unservedRetentionDays?: number | undefined;
  /** Run the workspace's dreaming pass on the runner (when the workspace has dreaming enabled). @default true */
  readonly dreaming?: boolean | undefined;
  /** Where autonomous turns' answers go besides the session transcript (a chat app, a webhook, a UI). */
  readonly deliver?: ((delivery: Delivery) => void | Promise<void>) | undefined;
  /** Extra jobs of the host. */
  readonly jobs?: readonly BackgroundJob[] | undefined;
  /**
   * The workflows a `## Schedule` entry may run (`- every 1h: workflow rebalance-check`): such an entry starts a stored
   * run of that workflow (no model turn unless a step is one) instead of a turn. Without it such lines are problems.
   */
  readonly workflows?: WorkflowAutomation | undefined;
  /**
   * Asked before each autonomous turn (heartbeat, schedule); a string is why not (the run is skipped with it), e.g.
   * a spent daily budget. @default always admitted
   */
  readonly admit?: (() => Promise<string | undefined> | string | undefined) | undefined;
  /**
   * Admit each autonomous turn (heartbeat, schedule, a workflow with model steps) and reserve its estimated cost
   * until the turn ends (`createAutonomousBudget`); used instead of `admit` for those turns when given.
   * @default `admit`
   */
  readonly reserve?: (() => Promise<{ readonly refusal?: string | undefined; release(): Promise<void> }>) | undefined;
  readonly owner?: string | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
  readonly resolutionMs?: number | undefined;
}

/** The agent's background runner: a {@link BackgroundRunner} with the schedule it read from HEARTBEAT.md. */
export interface AgentBackground extends BackgroundRunner {
  /** The `## Schedule` as last read (entries, heartbeat tasks, problems). */
  schedule(): ParsedSchedule;
  /** Read HEARTBEAT.md again and add, change or remove the timed jobs (each tick does this at most every 5 s). */
  syncSchedule(): Promise<ParsedSchedule>;
  /** Be told of each delivered answer in this process (the REPL prints them); returns the unsubscribe function. */
  onDelivery(listener: (delivery: Delivery) => void): () => void;
  /**
   * Schedule problems the user has not been told about yet, each returned once (then forgotten): `createApp`
   * puts them in the next user turn's notices, so the agent says which HEARTBEAT.md line it ignores and why.
   */
  takeNotices(): string[];
  /** What autonomous turns delivered to a user, newest first, from storage (every process sees the same). */
  deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /**
   * Hand a delivery to this process's listeners (the REPL) and the `deliver` hook (the signed webhook, the host's
   * chat app): the price alerts deliver through it. The caller has stored its session for the Updates bell.
   */
  deliver(delivery: Delivery): Promise<void>;
}

const SCHEDULE_SYNC_MS = 5_000;
const EMPTY: ParsedSchedule = { entries: [], tasks: [], problems: [] };

const minutes = (hhmm: string): number => {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
  if (!m) throw new Error(`expected HH:MM, got ${JSON.stringify(hhmm)}`);
  return Number(m[1]) * 60 + Number(m[2]);
};

/** Whether `at` (UTC) falls in `[start, end)`; a window that wraps midnight (22:00–06:00) is allowed. */
function withinHours(at: Date, hours: { start: string; end: string }): boolean {
  const t = at.getUTCHours() * 60 + at.getUTCMinutes();
  const s = minutes(hours.start);
  const e = minutes(hours.end);
  return s <= e ? t >= s && t < e : t >= s || t < e;
}

/** A memory scope as one comparable string. */
const scopeKey = (scope: MemoryScope): string => JSON.stringify([scope.userId, scope.agentId ?? null]);

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
  // The trace of the turn each run started (by job and slot), for the run's row in the audit trail.
  const traces = new Map<string, { traceId: string; sessionId: string }>();
  const traceOf = (jobId: string, slot: Date, result: GenerateResult, sessionId: string) => {
    const start = result.events.find((e) => e.type === 'turn-start');
    if (start?.type === 'turn-start') traces.set(`${jobId}|${slot.toISOString()}`, { traceId: start.traceId, sessionId });
  };
  const runner = createBackgroundRunner({
    storage,
    now,
    logger,
    onRunEnd: (run) => {
      // A run that started a turn (its trace ties it to the signal, skills, calls and results) or that failed is
      // a row of the audit trail; quiet maintenance runs stay in `storage.jobs` only.
      const trace = traces.get(`${run.jobId}|${run.slot}`);
      traces.delete(`${run.jobId}|${run.slot}`);
      if (!trace && run.outcome !== 'failed') return;
      storage.audit
        .append({
          at: run.endedAt ?? now().toISOString(), kind: 'job_run', toolName: run.jobId, tier: 0, source: run.jobId === 'heartbeat' ? 'heartbeat' : 'cron', userId,
          ...(trace ?? {}), decision: run.outcome === 'failed' ? 'error' : 'allowed', ...(run.error ? { code: 'JOB_FAILED', reason: run.error.slice(0, 500) } : {}),
          durationMs: Math.max(0, Date.parse(run.endedAt ?? run.startedAt) - Date.parse(run.startedAt)), argsJson: '{}',
          detail: { runId: run.id, slot: run.slot, attempt: run.attempt, outcome: run.outcome, owner: run.owner, ...(run.detail ? { note: run.detail } : {}) },
        })
        .catch((error: unknown) => logger.error('audit append failed', { ...log, job: run.jobId, error: error instanceof Error ? error.message : String(error) }));
    },
    ...(options.owner ? { owner: options.owner } : {}),
    ...(options.resolutionMs ? { resolutionMs: options.resolutionMs } : {}),
    jobs: options.jobs ?? [],
  });
  const log = { module: 'background' };
  let current: ParsedSchedule = EMPTY;
  const listeners = new Set<(delivery: Delivery) => void>();
  let lastSync = Number.NEGATIVE_INFINITY;
  const reported = new Set<string>();
  let unnoticed: string[] = [];

  async function readSchedule(): Promise<ParsedSchedule> {
    if (!workspace) return EMPTY;
    const file = await workspace.readFile('HEARTBEAT.md');
    const section = file.exists ? extractScheduleSection(file.content) : undefined;
    return section === undefined ? EMPTY : parseSchedule(section);
  }

  async function deliverTurn(jobId: string, source: Delivery['source'], sessionId: string, result: GenerateResult): Promise<string> {
    if (result.stopReason === 'error') throw new Error(`the turn failed: ${result.text || 'no answer'}`);
    await deliver({ jobId, sessionId, source, text: result.text, at: now().toISOString(), stopReason: result.stopReason });
    return `answered in ${sessionId} (${result.stopReason})`;
  }

  async function deliver(delivery: Delivery): Promise<void> {
    for (const listener of listeners) {
      try {
        listener(delivery);
      } catch (error) {
        logger.warn('background: a delivery listener threw', { ...log, error: error instanceof Error ? error.message : String(error) });
      }
    }
    if (options.deliver) await options.deliver(delivery);
  }

  const day = (slot: Date) => slot.toISOString().slice(0, 10);

  /** Run an autonomous turn under its admission: skipped with the refusal, its reservation released when it ends. */
  async function admitted<T>(fn: () => Promise<T>): Promise<T | { skipped: string }> {
    const admission = options.reserve ? await options.reserve() : { refusal: await options.admit?.(), release: async () => {} };
    if (admission.refusal !== undefined) return { skipped: admission.refusal };
    try {
      return await fn();
    } finally {
      await admission.release();
    }
  }

  function scheduleJob(entry: ParsedSchedule['entries'][number]): BackgroundJob {
    const timing = entry.every !== undefined ? { every: entry.every } : { cron: entry.cron!, ...(entry.timezone ? { timezone: entry.timezone } : {}) };
    const name = entry.workflow;
    if (name !== undefined && workflows) {
      return {
        id: entry.id,
        description: `HEARTBEAT.md: ${entry.line}`.slice(0, 200),
        ...timing,
        run: async ({ slot, signal }) => {
          const go = async () => {
            // The slot is claimed by the runner; the run is claimed again by its key, so a trigger runs once in the fleet.
            const run = await workflows.trigger(name, { trigger: 'schedule', key: `${entry.id}@${slot.toISOString()}`, userId, signal });
            if (!run) return { skipped: `workflow ${name}: this slot already has a run` };
            if (run.status !== 'ok') throw new Error(`workflow ${name} run ${run.id} ${run.status}: ${run.error ?? 'no error recorded'}`);
            return `workflow ${name} run ${run.id} ok (${run.steps.length} steps)`;
          };
          // A workflow with model turns spends the autonomous budget; one of tool steps only does not.
          return ((await workflows.get(name))?.modelSteps ?? 0) > 0 ? admitted(go) : go();
        },
      };
    }
    return {
      id: entry.id,
      description: `HEARTBEAT.md: ${entry.line}`.slice(0, 200),
      ...timing,
      run: ({ slot, signal }) => admitted(async () => {
        const sessionId = `${entry.id.replace(':', '-')}-${day(slot)}`;
        const result = await runtime.generate({
          sessionId,
          userId,
          source: 'cron',
          message: entry.instruction,
          signal: { source: 'cron', signal_id: entry.id, trace_id: `t_${entry.id.replace(':', '_')}_${slot.getTime()}` },
          abortSignal: signal,
          surface: 'background',
        });
        traceOf(entry.id, slot, result, sessionId);
        return deliverTurn(entry.id, 'cron', sessionId, result);
      }),
    };
  }

  async function syncSchedule(): Promise<ParsedSchedule> {
    lastSync = now().getTime();
    let parsed: ParsedSchedule;
    try {
      parsed = await readSchedule();
    } catch (error) {
      logger.warn('background: could not read HEARTBEAT.md; keeping the previous schedule', { ...log, error: error instanceof Error ? error.message : String(error) });
      return current;
    }
    if (parsed.entries.some((e) => e.workflow !== undefined)) {
      // A `workflow <name>` entry needs the automation and a workflow of that name; otherwise the line is a problem.
      const known = workflows ? new Set((await workflows.list()).map((w) => w.id)) : undefined;
      const entries = parsed.entries.filter((e) => e.workflow === undefined || known?.has(e.workflow));
      const problems = parsed.entries
        .filter((e) => !entries.includes(e))
        .map((e) => ({
          line: e.line,
          reason: known
            ? `no workflow named "${e.workflow}" (workflows: ${[...known].join(', ') || 'none; add workflows/<name>.yaml to the workspace'})`
            : 'workflows are not enabled in this app',
        }));
      parsed = { entries, tasks: parsed.tasks, problems: [...parsed.problems, ...problems] };
    }
    for (const p of parsed.problems) {
      if (reported.has(p.line)) continue;
      reported.add(p.line);
      logger.warn(`HEARTBEAT.md ## Schedule: "${p.line}" is ignored: ${p.reason}`, log);
      unnoticed.push(`HEARTBEAT.md ## Schedule: the line "${p.line}" is ignored (${p.reason}). Tell the user once, and offer to fix the line.`);
    }
    const wanted = new Map(parsed.entries.map((e) => [e.id, e]));
    for (const job of runner.status()) if (job.id.startsWith('schedule:') && !wanted.has(job.id)) runner.remove(job.id);
    for (const entry of wanted.values()) if (!runner.has(entry.id)) runner.add(scheduleJob(entry));
    current = parsed;
    return parsed;
  }

  if (heartbeatEveryMs > 0) {
    runner.add({
      id: 'heartbeat',
      description: 'Autonomous turn over the standing tasks of HEARTBEAT.md',
      every: heartbeatEveryMs,
      run: async ({ slot, signal }) => {
        if (options.activeHours && !withinHours(slot, options.activeHours)) return { skipped: `outside active hours ${options.activeHours.start}–${options.activeHours.end} UTC` };
        const { tasks } = await syncSchedule();
        if (tasks.length === 0) return { skipped: 'no tasks in HEARTBEAT.md ## Schedule' };
        return admitted(async () => {
          const sessionId = `heartbeat-${day(slot)}`;
          const message = [
            'Heartbeat: work through these standing tasks now.',
            ...tasks.map((t) => `- ${t}`),
            `If nothing needs the user's attention, answer exactly ${HEARTBEAT_OK} and nothing else.`,
          ].join('\n');
          const result = await runtime.generate({ sessionId, userId, source: 'heartbeat', message, abortSignal: signal, surface: 'background' });
          traceOf('heartbeat', slot, result, sessionId);
          if (result.text.trim() === HEARTBEAT_OK) return { skipped: `${HEARTBEAT_OK}: nothing to report` };
          return deliverTurn('heartbeat', 'heartbeat', sessionId, result);
        });
      },
    });
  }
  if (purgeEveryMs > 0 && options.memoryStores) {
    const stores = options.memoryStores;
    runner.add({
      id: 'memory:purge',
      description: 'Purge soft-deleted memories past their retention',
      every: purgeEveryMs,
      run: async () => {
        let purged = 0;
        const served = new Set<string>();
        for (const store of stores()) {
          purged += await store.purgeExpiredSoftDeleted();
          served.add(scopeKey(store.scope));
        }
        const memory = storage.memory;
        if (unservedRetentionDays !== undefined && memory.expiredSoftDeletedScopes !== undefined) {
          // Tenants not served here: the storage names them (one indexed read), each purged with the given retention.
          const cutoff = new Date(now().getTime() - unservedRetentionDays * 86_400_000).toISOString();
          for (const scope of await memory.expiredSoftDeletedScopes(cutoff)) {
            if (!served.has(scopeKey(scope))) purged += await memory.purgeSoftDeleted(scope, cutoff);
          }
        }
        return `purged ${purged}`;
      },
    });
  }
  // createWorkspace refuses dreaming.enabled without a model, so enabled means it can run.
  if (options.dreaming !== false && workspace?.settings.dreaming.enabled) {
    const settings = workspace.settings.dreaming;
    runner.add({
      id: 'workspace:dream',
      description: 'Dreaming: fold recent daily logs into MEMORY.md proposals',
      every: Math.max(60_000, Math.round(settings.intervalHours * 3_600_000)),
      leaseMs: Math.max(60_000, settings.lockTtlMs),
      run: async ({ signal }) => {
        const result = await workspace.runDreamTick({ signal });
        return result.outcome === 'appended' ? 'appended a dreamed section' : { skipped: result.outcome };
      },
    });
  }

  const tick = runner.tick.bind(runner);
  return Object.assign(runner, {
    schedule: () => current,
    syncSchedule,
    onDelivery(listener: (delivery: Delivery) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    deliveries: (query: DeliveryQuery) => listDeliveries(storage, query),
    deliver,
    takeNotices() {
      const out = unnoticed;
      unnoticed = [];
      return out;
    },
    async tick() {
      if (now().getTime() - lastSync >= SCHEDULE_SYNC_MS) await syncSchedule();
      return tick();
    },
  });
}
