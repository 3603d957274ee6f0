import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { parseCron, type CronSchedule } from '../runtime/cron';
import type { JobRunRecord, JobRunOutcome } from '../storage/job-types';
import type { Storage } from '../storage/types';
import { type Logger, silentLogger } from '../util/logger';
import { inSpan } from '../util/tracing';

/** What a job's `run` receives. */
export interface BackgroundJobContext {
  readonly jobId: string;
  /** The scheduled time this run is for (the same in every process). */
  readonly slot: Date;
  /** 1, or more when this run takes over one a dead process left behind. */
  readonly attempt: number;
  /** Aborted when the run outlives its lease or the runner stops. */
  readonly signal: AbortSignal;
}

/** What a run may return: a short note of what it did, or that there was nothing to do. */
export type BackgroundJobResult = string | { readonly skipped: string } | undefined | void;

/** A job the runner schedules: every `every` ms (aligned to the epoch) or on a cron expression (UTC). */
export interface BackgroundJob {
  /** `[a-z0-9][a-z0-9:._-]*`, at most 64 characters. */
  readonly id: string;
  /** One line for people (`/jobs`, `minara jobs`). */
  readonly description: string;
  readonly every?: number | undefined;
  readonly cron?: string | undefined;
  /** How long a run may hold its slot; past it the run is aborted and another process may take it over. @default 600000 */
  readonly leaseMs?: number | undefined;
  readonly run: (context: BackgroundJobContext) => BackgroundJobResult | Promise<BackgroundJobResult>;
}

/** A job as the runner reports it. */
export interface BackgroundJobStatus {
  readonly id: string;
  readonly description: string;
  /** `every 30m` or `cron 0 9 * * *`. */
  readonly schedule: string;
  readonly nextRunAt: string;
  readonly running: boolean;
  /** Failures in a row in this process; the job waits `backoffUntil` before its next run. */
  readonly failures: number;
  readonly backoffUntil?: string | undefined;
  readonly lastError?: string | undefined;
}

/** Options of {@link createBackgroundRunner}. */
export interface BackgroundRunnerOptions {
  /** Where runs are recorded and slots claimed (shared by every process of the fleet). */
  readonly storage: Storage;
  readonly jobs?: readonly BackgroundJob[] | undefined;
  /** This process's name in run records. @default `<hostname>:<pid>:<random>` */
  readonly owner?: string | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
  /** How often the timer looks for due jobs. @default 1000 */
  readonly resolutionMs?: number | undefined;
  /** Called after each run ends (tests, delivery, metrics). */
  readonly onRunEnd?: ((run: JobRunRecord) => void) | undefined;
}

/** The background runner: see {@link createBackgroundRunner}. */
export interface BackgroundRunner {
  add(job: BackgroundJob): void;
  remove(id: string): boolean;
  has(id: string): boolean;
  /** The jobs, their next times and their state in this process. */
  status(): BackgroundJobStatus[];
  /** Recorded runs (every process's), newest first. */
  runs(query?: { readonly jobId?: string | undefined; readonly outcome?: JobRunOutcome | undefined; readonly limit?: number | undefined }): Promise<JobRunRecord[]>;
  /** Start every due job (the timer calls it; tests call it with a fake clock). Resolves once the due runs are claimed, not finished. */
  tick(): Promise<{ readonly started: readonly string[] }>;
  /** Wait until no run of this process is going. */
  idle(): Promise<void>;
  /** Start the timer (unref'd: it never keeps the process alive). */
  start(): void;
  /** Stop the timer, abort running jobs and wait for them. */
  stop(): Promise<void>;
  readonly started: boolean;
  /** One line for people: the jobs and their next times. */
  describe(): string;
}

const JOB_ID = /^[a-z0-9][a-z0-9:._-]{0,63}$/;
const MIN_EVERY_MS = 1_000;
const DEFAULT_LEASE_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 60 * 60_000;
/** How often the runner looks for runs a dead process left behind. */
const INTERRUPTED_SCAN_MS = 60_000;

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

interface Entry {
  job: BackgroundJob;
  cron?: CronSchedule;
  nextAt: number;
  running?: { promise: Promise<void>; abort: AbortController } | undefined;
  failures: number;
  backoffUntil: number;
  lastError?: string;
}

/** What one runner keeps: its settings, its jobs, its timer and the tick in flight. */
interface RunnerState {
  storage: Storage;
  now: () => Date;
  logger: Logger;
  onRunEnd: ((run: JobRunRecord) => void) | undefined;
  owner: string;
  entries: Map<string, Entry>;
  timer: NodeJS.Timeout | undefined;
  lastInterruptedScan: number;
  ticking: Promise<{ started: string[] }> | undefined;
}

const log = { module: 'background' };
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function nextAfter(e: Pick<Entry, 'job' | 'cron'>, from: number): number {
  if (e.cron) return e.cron.next(new Date(from)).getTime();
  const every = e.job.every!;
  return Math.floor(from / every) * every + every;
}

/** The job's cron schedule, checked (undefined for an interval job); throws a clear error on a bad job. */
function checkJob(r: RunnerState, job: BackgroundJob): CronSchedule | undefined {
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
  if (job.cron === undefined) return undefined;
  try {
    return parseCron(job.cron);
  } catch (error) {
    throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}": cron ${JSON.stringify(job.cron)}: ${message(error)}`);
  }
}

function addJob(r: RunnerState, job: BackgroundJob): void {
  const cron = checkJob(r, job);
  const entry: Entry = { job, ...(cron ? { cron } : {}), nextAt: 0, failures: 0, backoffUntil: 0 };
  entry.nextAt = nextAfter(entry, r.now().getTime());
  r.entries.set(job.id, entry);
}

/** Run one claimed slot of `entry` to its end and record the outcome (never throws). */
async function runClaimed(r: RunnerState, entry: Entry, slot: Date, claimed: JobRunRecord, abort: AbortController, timeout: NodeJS.Timeout): Promise<void> {
  let outcome: Exclude<JobRunOutcome, 'running'> = 'ok';
  let detail: string | undefined;
  let error: string | undefined;
  try {
    const result = await inSpan('minara.job', { 'minara.job.id': entry.job.id, 'minara.job.slot': slot.toISOString(), 'minara.job.attempt': claimed.attempt }, async (span) => {
      const res = await entry.job.run({ jobId: entry.job.id, slot, attempt: claimed.attempt, signal: abort.signal });
      span.setAttribute('minara.job.outcome', res && typeof res === 'object' ? 'skipped' : 'ok');
      return res;
    });
    if (typeof result === 'string') detail = result.slice(0, 500);
    else if (result && typeof result === 'object' && typeof result.skipped === 'string') {
      outcome = 'skipped';
      detail = result.skipped.slice(0, 500);
    }
    entry.failures = 0;
    entry.backoffUntil = 0;
    delete entry.lastError;
  } catch (e) {
    outcome = 'failed';
    error = message(e).slice(0, 2_000);
    entry.failures += 1;
    entry.lastError = error;
    const base = Math.min(entry.job.every ?? 60_000, 60_000);
    entry.backoffUntil = r.now().getTime() + Math.min(MAX_BACKOFF_MS, base * 2 ** (entry.failures - 1));
    r.logger.warn(`background job "${entry.job.id}" failed (${entry.failures} in a row); next try after ${new Date(entry.backoffUntil).toISOString()}`, { ...log, job: entry.job.id, error });
  } finally {
    clearTimeout(timeout);
  }
  try {
    const run = await r.storage.jobs.finishRun(claimed.id, r.owner, { endedAt: r.now().toISOString(), outcome, ...(error !== undefined ? { error } : {}), ...(detail !== undefined ? { detail } : {}) });
    const { onRunEnd } = r;
    onRunEnd?.(run);
  } catch (e) {
    // Another process took the slot over (our lease lapsed): its record stands.
    r.logger.warn(`background job "${entry.job.id}": could not record the end of run ${claimed.id}`, { ...log, error: message(e) });
  }
}

/** Claim `slot` of `entry` and run it in the background; false when another process has it. */
async function launch(r: RunnerState, entry: Entry, slot: Date): Promise<boolean> {
  const at = r.now();
  const leaseMs = entry.job.leaseMs ?? DEFAULT_LEASE_MS;
  const claimed = await r.storage.jobs.claimRun({ jobId: entry.job.id, slot: slot.toISOString(), owner: r.owner, now: at.toISOString(), leaseUntil: new Date(at.getTime() + leaseMs).toISOString() });
  if (!claimed) return false;
  const abort = new AbortController();
  const timeout = setTimeout(() => abort.abort(new Error(`the run outlived its ${formatInterval(leaseMs)} lease`)), leaseMs);
  timeout.unref?.();
  const promise = runClaimed(r, entry, slot, claimed, abort, timeout).finally(() => {
    entry.running = undefined;
  });
  entry.running = { promise, abort };
  return true;
}

/** Take over the runs other processes left unfinished (once a minute). */
async function takeOverInterrupted(r: RunnerState, at: number, started: string[]): Promise<void> {
  if (at - r.lastInterruptedScan < INTERRUPTED_SCAN_MS) return;
  r.lastInterruptedScan = at;
  for (const run of await r.storage.jobs.interruptedRuns(new Date(at).toISOString())) {
    const entry = r.entries.get(run.jobId);
    if (!entry || entry.running) continue;
    r.logger.warn(`background job "${run.jobId}": taking over the run of ${run.slot} that ${run.owner} left unfinished`, { ...log, job: run.jobId });
    if (await launch(r, entry, new Date(run.slot))) started.push(run.jobId);
  }
}

async function tickOnce(r: RunnerState): Promise<{ started: string[] }> {
  const at = r.now().getTime();
  const started: string[] = [];
  await takeOverInterrupted(r, at, started);
  for (const entry of r.entries.values()) {
    if (entry.nextAt > at) continue;
    const slot = new Date(entry.nextAt);
    entry.nextAt = nextAfter(entry, at);
    if (entry.running) {
      r.logger.warn(`background job "${entry.job.id}" is still running; the run of ${slot.toISOString()} is skipped`, { ...log, job: entry.job.id });
      continue;
    }
    if (entry.backoffUntil > at) continue;
    try {
      if (await launch(r, entry, slot)) started.push(entry.job.id);
    } catch (e) {
      r.logger.error(`background job "${entry.job.id}": could not claim its run`, { ...log, error: message(e) });
    }
  }
  return { started };
}

const schedule = (e: Entry) => (e.job.every !== undefined ? `every ${formatInterval(e.job.every)}` : `cron ${e.job.cron}`);

function statusOf(r: RunnerState): BackgroundJobStatus[] {
  return [...r.entries.values()].map((e) => ({
    id: e.job.id,
    description: e.job.description,
    schedule: schedule(e),
    nextRunAt: new Date(e.nextAt).toISOString(),
    running: e.running !== undefined,
    failures: e.failures,
    ...(e.backoffUntil > r.now().getTime() ? { backoffUntil: new Date(e.backoffUntil).toISOString() } : {}),
    ...(e.lastError !== undefined ? { lastError: e.lastError } : {}),
  }));
}

function removeJob(r: RunnerState, id: string): boolean {
  const entry = r.entries.get(id);
  entry?.running?.abort.abort(new Error('the job was removed'));
  return r.entries.delete(id);
}

/** One tick at a time: a slow claim (a busy database) delays the next tick instead of racing it. */
function tick(r: RunnerState): Promise<{ started: string[] }> {
  r.ticking ??= tickOnce(r).finally(() => {
    r.ticking = undefined;
  });
  return r.ticking;
}

/**
 * The background runner: jobs on intervals or cron expressions, each run recorded in storage and claimed
 * per scheduled slot, so processes sharing the storage (two on one SQLite file, a fleet on one database) run
 * each slot once. A run a process left behind when it died is taken over once its lease expires: nothing
 * is lost or run twice. A job never overlaps itself; a failing job backs off (doubling, at most an hour) and
 * is reported; runs never block a user turn (they are ordinary async work beside it).
 *
 * @example
 * ```ts
 * const runner = createBackgroundRunner({ storage, jobs: [{ id: 'report', description: 'Daily report', cron: '0 7 * * *', run: () => sendReport() }] });
 * runner.start();
 * ```
 */
export function createBackgroundRunner(options: BackgroundRunnerOptions): BackgroundRunner {
  const { storage, now = () => new Date(), logger = silentLogger, resolutionMs = 1_000, onRunEnd } = options;
  if (!storage || typeof storage.jobs?.claimRun !== 'function') throw new MinaraError('CONFIG_INVALID', 'createBackgroundRunner: "storage" must be a Storage with the jobs domain.');
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const r: RunnerState = { storage, now, logger, onRunEnd, owner, entries: new Map(), timer: undefined, lastInterruptedScan: 0, ticking: undefined };
  for (const job of options.jobs ?? []) addJob(r, job);

  const runner: BackgroundRunner = {
    add: (job) => addJob(r, job),
    remove: (id) => removeJob(r, id),
    has: (id) => r.entries.has(id),
    status: () => statusOf(r),
    runs: (query) => storage.jobs.listRuns(query),
    tick: () => tick(r),
    async idle() {
      await r.ticking;
      await Promise.all([...r.entries.values()].map((e) => e.running?.promise));
    },
    start() {
      if (r.timer) return;
      r.timer = setInterval(() => {
        void runner.tick().catch((e: unknown) => logger.error('background tick failed', { ...log, error: message(e) }));
      }, resolutionMs);
      r.timer.unref?.();
    },
    async stop() {
      if (r.timer) clearInterval(r.timer);
      r.timer = undefined;
      for (const e of r.entries.values()) e.running?.abort.abort(new Error('the background runner stopped'));
      await runner.idle();
    },
    get started() {
      return r.timer !== undefined;
    },
    describe() {
      const list = runner.status();
      if (list.length === 0) return 'background: no jobs';
      return `background: ${list.map((j) => `${j.id} (${j.schedule}, next ${j.nextRunAt.slice(11, 16)} UTC)`).join(', ')}`;
    },
  };
  return runner;
}
