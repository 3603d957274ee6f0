/**
 * The agent background's state (`AgentBackgroundState`, built by `createAgentBackground`) and the steps its jobs
 * share: admission of an autonomous turn, delivering its answer, and the audit row of a run that started a turn.
 */
import type { MemoryScope } from '../storage/memory-types';
import type { AgentRuntime } from '../runtime/runtime';
import type { GenerateResult } from '../runtime/types';
import type { JobRunRecord } from '../storage/job-types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';
import type { AgentBackgroundOptions, Delivery } from './agent-types';
import type { BackgroundRunner } from './runner-types';
import type { ParsedSchedule } from './schedule';
import type { WorkflowAutomation } from './workflows';

/** One agent background: its options, its runner, the schedule as last read, and who listens for deliveries. */
export interface AgentBackgroundState {
  readonly runtime: AgentRuntime;
  readonly storage: Storage;
  readonly workspace: Workspace | undefined;
  readonly userId: string;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly workflows: WorkflowAutomation | undefined;
  /** The options the jobs read as given (`admit`, `reserve`, `deliver`, `activeHours`, …). */
  readonly options: AgentBackgroundOptions;
  readonly runner: BackgroundRunner;
  /** The trace of the turn each run started (by job and slot), for the run's row in the audit trail. */
  readonly traces: Map<string, { traceId: string; sessionId: string }>;
  readonly listeners: Set<(delivery: Delivery) => void>;
  /** Schedule problems already logged (each is logged and told once). */
  readonly reported: Set<string>;
  /** The `## Schedule` as last read. */
  current: ParsedSchedule;
  /** When HEARTBEAT.md was last read (ms). */
  lastSync: number;
  /** Schedule problems the user has not been told about yet. */
  unnoticed: string[];
}

/** Log fields of every agent background line. */
export const LOG = { module: 'background' };

/** An empty schedule. */
export const EMPTY: ParsedSchedule = { entries: [], tasks: [], problems: [] };

/** `HH:MM` as minutes after midnight; anything else throws. */
export function minutes(hhmm: string): number {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(hhmm);
  if (!m) throw new Error(`expected HH:MM, got ${JSON.stringify(hhmm)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** Whether `at` (UTC) falls in `[start, end)`; a window that wraps midnight (22:00–06:00) is allowed. */
export function withinHours(at: Date, hours: { start: string; end: string }): boolean {
  const t = at.getUTCHours() * 60 + at.getUTCMinutes();
  const s = minutes(hours.start);
  const e = minutes(hours.end);
  return s <= e ? t >= s && t < e : t >= s || t < e;
}

/** A memory scope as one comparable string. */
export const scopeKey = (scope: MemoryScope): string => JSON.stringify([scope.userId, scope.agentId ?? null]);

/** The UTC day of a slot (`YYYY-MM-DD`): autonomous turns of one day share a session. */
export const day = (slot: Date): string => slot.toISOString().slice(0, 10);

/** Remember the trace of the turn a run started, for the run's audit row. */
export function traceOf(a: AgentBackgroundState, jobId: string, slot: Date, result: GenerateResult, sessionId: string): void {
  const start = result.events.find((e) => e.type === 'turn-start');
  if (start?.type === 'turn-start') a.traces.set(`${jobId}|${slot.toISOString()}`, { traceId: start.traceId, sessionId });
}

/**
 * The end of a run: a run that started a turn (its trace ties it to the signal, skills, calls and results) or that
 * failed is a row of the audit trail; quiet maintenance runs stay in `storage.jobs` only.
 */
export function auditRunEnd(a: AgentBackgroundState, run: JobRunRecord): void {
  const trace = a.traces.get(`${run.jobId}|${run.slot}`);
  a.traces.delete(`${run.jobId}|${run.slot}`);
  if (!trace && run.outcome !== 'failed') return;
  a.storage.audit
    .append({
      at: run.endedAt ?? a.now().toISOString(), kind: 'job_run', toolName: run.jobId, tier: 0, source: run.jobId === 'heartbeat' ? 'heartbeat' : 'cron', userId: a.userId,
      ...(trace ?? {}), decision: run.outcome === 'failed' ? 'error' : 'allowed', ...(run.error ? { code: 'JOB_FAILED', reason: run.error.slice(0, 500) } : {}),
      durationMs: Math.max(0, Date.parse(run.endedAt ?? run.startedAt) - Date.parse(run.startedAt)), argsJson: '{}',
      detail: { runId: run.id, slot: run.slot, attempt: run.attempt, outcome: run.outcome, owner: run.owner, ...(run.detail ? { note: run.detail } : {}) },
    })
    .catch((error: unknown) => a.logger.error('audit append failed', { ...LOG, job: run.jobId, error: error instanceof Error ? error.message : String(error) }));
}

/** Hand a delivery to this process's listeners (one that throws is logged) and the `deliver` hook. */
export async function deliver(a: AgentBackgroundState, delivery: Delivery): Promise<void> {
  for (const listener of a.listeners) {
    try {
      listener(delivery);
    } catch (error) {
      a.logger.warn('background: a delivery listener threw', { ...LOG, error: error instanceof Error ? error.message : String(error) });
    }
  }
  if (a.options.deliver) await a.options.deliver(delivery);
}

/** Deliver an autonomous turn's answer; a failed turn throws (the run fails). */
export async function deliverTurn(a: AgentBackgroundState, jobId: string, source: Delivery['source'], sessionId: string, result: GenerateResult): Promise<string> {
  if (result.stopReason === 'error') throw new Error(`the turn failed: ${result.text || 'no answer'}`);
  await deliver(a, { jobId, sessionId, source, text: result.text, at: a.now().toISOString(), stopReason: result.stopReason });
  return `answered in ${sessionId} (${result.stopReason})`;
}

/** Run an autonomous turn under its admission: skipped with the refusal, its reservation released when it ends. */
export async function admitted<T>(a: AgentBackgroundState, fn: () => Promise<T>): Promise<T | { skipped: string }> {
  const admission = a.options.reserve ? await a.options.reserve() : { refusal: await a.options.admit?.(), release: async () => {} };
  if (admission.refusal !== undefined) return { skipped: admission.refusal };
  try {
    return await fn();
  } finally {
    await admission.release();
  }
}
