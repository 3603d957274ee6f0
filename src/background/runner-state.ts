/**
 * The background runner's state (`RunnerState`, built by `createBackgroundRunner`) and its job table: adding and
 * removing jobs, their next slots, and how they are reported.
 */
import { MinaraError } from '../errors/minara-error';
import { parseCron, type CronSchedule } from '../runtime/cron';
import type { JobRunRecord } from '../storage/job-types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import type { BackgroundJob, BackgroundJobStatus, BackgroundRunner } from './runner-types';

const JOB_ID = /^[a-z0-9][a-z0-9:._-]{0,63}$/;
const MIN_EVERY_MS = 1_000;

/** `90000` → `1m30s`, `1800000` → `30m`. */
export function formatInterval(ms: number): string {
  const units: Array<[string, number]> = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]];
  let rest = ms;
  let out = '';
  for (const [u, size] of units) {
    if (rest >= size) {
      out += `${Math.floor(rest / size)}${u}`;
      rest %= size;
    }
  }
  return out || `${ms}ms`;
}

/** A job in this process: its next slot, whether a run is going, and its failures in a row. */
export interface RunnerEntry {
  job: BackgroundJob;
  cron?: CronSchedule;
  nextAt: number;
  running?: { promise: Promise<void>; abort: AbortController } | undefined;
  failures: number;
  backoffUntil: number;
  lastError?: string;
}

/** One runner's resolved options, its jobs, its timer and the tick in progress. */
export interface RunnerState {
  readonly storage: Storage;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly resolutionMs: number;
  readonly onRunEnd: ((run: JobRunRecord) => void) | undefined;
  /** This process's name in run records. */
  readonly owner: string;
  readonly entries: Map<string, RunnerEntry>;
  timer: NodeJS.Timeout | undefined;
  lastInterruptedScan: number;
  ticking: Promise<{ started: string[] }> | undefined;
  /**
   * The runner object as returned: the timer ticks through it and `stop` waits through it, so a wrapper that
   * replaces its `tick` (the agent background syncs HEARTBEAT.md first) is the one the timer calls.
   */
  self: BackgroundRunner;
}

/** Log fields of every runner line. */
export const LOG = { module: 'background' };

/** The first slot of a job after `from` (ms). Interval slots are aligned to the epoch. */
export function nextAfter(e: Pick<RunnerEntry, 'job' | 'cron'>, from: number): number {
  if (e.cron) return e.cron.next(new Date(from)).getTime();
  const every = e.job.every!;
  return Math.floor(from / every) * every + every;
}

/** Check a job and add it, its first slot the next one after now. */
export function addJob(r: RunnerState, job: BackgroundJob): void {
  if (typeof job?.id !== 'string' || !JOB_ID.test(job.id)) throw new MinaraError('INVALID_ARGUMENT', `background job: "id" must match ${String(JOB_ID)}, got ${JSON.stringify(job?.id)}.`);
  if (r.entries.has(job.id)) throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}" already exists.`);
  if (typeof job.run !== 'function') throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": "run" must be a function.`);
  if ((job.every === undefined) === (job.cron === undefined)) throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": give exactly one of "every" (ms) or "cron".`);
  if (job.every !== undefined && !(Number.isSafeInteger(job.every) && job.every >= MIN_EVERY_MS)) {
    throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": "every" must be an integer of at least ${MIN_EVERY_MS} ms, got ${String(job.every)}.`);
  }
  if (job.leaseMs !== undefined && !(Number.isSafeInteger(job.leaseMs) && job.leaseMs >= 1_000)) {
    throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": "leaseMs" must be an integer of at least 1000, got ${String(job.leaseMs)}.`);
  }
  let cron: CronSchedule | undefined;
  if (job.cron !== undefined) {
    try {
      cron = parseCron(job.cron, { timezone: job.timezone });
    } catch (error) {
      throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": cron ${JSON.stringify(job.cron)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const entry: RunnerEntry = { job, ...(cron ? { cron } : {}), nextAt: 0, failures: 0, backoffUntil: 0 };
  entry.nextAt = nextAfter(entry, r.now().getTime());
  r.entries.set(job.id, entry);
}

/** Remove a job, aborting its run if one is going; false when there was none. */
export function removeJob(r: RunnerState, id: string): boolean {
  const entry = r.entries.get(id);
  entry?.running?.abort.abort(new Error('the job was removed'));
  return r.entries.delete(id);
}

/** `every 30m`, `cron 0 9 * * *` or `cron 0 9 * * 1-5 America/New_York`. */
function scheduleText(e: RunnerEntry): string {
  return e.job.every !== undefined ? `every ${formatInterval(e.job.every)}` : `cron ${e.job.cron}${e.cron && e.cron.timezone !== 'UTC' ? ` ${e.cron.timezone}` : ''}`;
}

/** The jobs, their next times and their state in this process. */
export function jobStatus(r: RunnerState): BackgroundJobStatus[] {
  return [...r.entries.values()].map((e) => ({
    id: e.job.id,
    description: e.job.description,
    schedule: scheduleText(e),
    nextRunAt: new Date(e.nextAt).toISOString(),
    running: e.running !== undefined,
    failures: e.failures,
    ...(e.backoffUntil > r.now().getTime() ? { backoffUntil: new Date(e.backoffUntil).toISOString() } : {}),
    ...(e.lastError !== undefined ? { lastError: e.lastError } : {}),
  }));
}

/** One line for people: the jobs and their next times. */
export function describeRunner(r: RunnerState): string {
  const list = r.self.status();
  if (list.length === 0) return 'background: no jobs';
  return `background: ${list.map((j) => `${j.id} (${j.schedule}, next ${j.nextRunAt.slice(11, 16)} UTC)`).join(', ')}`;
}
