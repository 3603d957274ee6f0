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

/** A job the runner schedules: every `every` ms (aligned to the epoch) or on a cron expression (UTC, or in `timezone`). */
export interface BackgroundJob {
  /** `[a-z0-9][a-z0-9:._-]*`, at most 64 characters. */
  readonly id: string;
  /** One line for people (`/jobs`, `minara jobs`). */
  readonly description: string;
  readonly every?: number | undefined;
  readonly cron?: string | undefined;
  /** The time zone `cron` is read in (an IANA name or its city, e.g. `New York`), across daylight-saving changes. @default 'UTC' */
  readonly timezone?: string | undefined;
  /** How long a run may hold its slot; past it the run is aborted and another process may take it over. @default 600000 */
  readonly leaseMs?: number | undefined;
  readonly run: (context: BackgroundJobContext) => BackgroundJobResult | Promise<BackgroundJobResult>;
}

/** A job as the runner reports it. */
export interface BackgroundJobStatus {
  readonly id: string;
  readonly description: string;
  /** `every 30m`, `cron 0 9 * * *` or `cron 0 9 * * 1-5 America/New_York`. */
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
  const entries = new Map<string, Entry>();
  let timer: NodeJS.Timeout | undefined;
  let lastInterruptedScan = 0;
  let ticking: Promise<{ started: string[] }> | undefined;
  const log = { module: 'background' };

  const nextAfter = (e: Pick<Entry, 'job' | 'cron'>, from: number): number => {
    if (e.cron) return e.cron.next(new Date(from)).getTime();
    const every = e.job.every!;
    return Math.floor(from / every) * every + every;
  };

  function add(job: BackgroundJob): void {
    if (typeof job?.id !== 'string' || !JOB_ID.test(job.id)) throw new MinaraError('INVALID_ARGUMENT', `background job: "id" must match ${String(JOB_ID)}, got ${JSON.stringify(job?.id)}.`);
    if (entries.has(job.id)) throw new MinaraError('INVALID_ARGUMENT', `background job "${job.id}" already exists.`);
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
    const entry: Entry = { job, ...(cron ? { cron } : {}), nextAt: 0, failures: 0, backoffUntil: 0 };
    entry.nextAt = nextAfter(entry, now().getTime());
    entries.set(job.id, entry);
  }
  for (const job of options.jobs ?? []) add(job);

  /** Claim `slot` of `entry` and run it in the background; false when another process has it. */
  async function launch(entry: Entry, slot: Date): Promise<boolean> {
    const at = now();
    const leaseMs = entry.job.leaseMs ?? DEFAULT_LEASE_MS;
    const claimed = await storage.jobs.claimRun({ jobId: entry.job.id, slot: slot.toISOString(), owner, now: at.toISOString(), leaseUntil: new Date(at.getTime() + leaseMs).toISOString() });
    if (!claimed) return false;
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(new Error(`the run outlived its ${formatInterval(leaseMs)} lease`)), leaseMs);
    timeout.unref?.();
    const promise = (async () => {
      let outcome: Exclude<JobRunOutcome, 'running'> = 'ok';
      let detail: string | undefined;
      let error: string | undefined;
      try {
        const result = await inSpan('minara.job', { 'minara.job.id': entry.job.id, 'minara.job.slot': slot.toISOString(), 'minara.job.attempt': claimed.attempt }, async (span) => {
          const r = await entry.job.run({ jobId: entry.job.id, slot, attempt: claimed.attempt, signal: abort.signal });
          span.setAttribute('minara.job.outcome', r && typeof r === 'object' ? 'skipped' : 'ok');
          return r;
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
        error = (e instanceof Error ? e.message : String(e)).slice(0, 2_000);
        entry.failures += 1;
        entry.lastError = error;
        const base = Math.min(entry.job.every ?? 60_000, 60_000);
        entry.backoffUntil = now().getTime() + Math.min(MAX_BACKOFF_MS, base * 2 ** (entry.failures - 1));
        logger.warn(`background job "${entry.job.id}" failed (${entry.failures} in a row); next try after ${new Date(entry.backoffUntil).toISOString()}`, { ...log, job: entry.job.id, error });
      } finally {
        clearTimeout(timeout);
      }
      try {
        const run = await storage.jobs.finishRun(claimed.id, owner, { endedAt: now().toISOString(), outcome, ...(error !== undefined ? { error } : {}), ...(detail !== undefined ? { detail } : {}) });
        onRunEnd?.(run);
      } catch (e) {
        // Another process took the slot over (our lease lapsed): its record stands.
        logger.warn(`background job "${entry.job.id}": could not record the end of run ${claimed.id}`, { ...log, error: e instanceof Error ? e.message : String(e) });
      }
    })().finally(() => {
      entry.running = undefined;
    });
    entry.running = { promise, abort };
    return true;
  }

  async function tickOnce(): Promise<{ started: string[] }> {
    const at = now().getTime();
    const started: string[] = [];
    if (at - lastInterruptedScan >= INTERRUPTED_SCAN_MS) {
      lastInterruptedScan = at;
      for (const run of await storage.jobs.interruptedRuns(new Date(at).toISOString())) {
        const entry = entries.get(run.jobId);
        if (!entry || entry.running) continue;
        logger.warn(`background job "${run.jobId}": taking over the run of ${run.slot} that ${run.owner} left unfinished`, { ...log, job: run.jobId });
        if (await launch(entry, new Date(run.slot))) started.push(run.jobId);
      }
    }
    for (const entry of entries.values()) {
      if (entry.nextAt > at) continue;
      const slot = new Date(entry.nextAt);
      entry.nextAt = nextAfter(entry, at);
      if (entry.running) {
        logger.warn(`background job "${entry.job.id}" is still running; the run of ${slot.toISOString()} is skipped`, { ...log, job: entry.job.id });
        continue;
      }
      if (entry.backoffUntil > at) continue;
      try {
        if (await launch(entry, slot)) started.push(entry.job.id);
      } catch (e) {
        logger.error(`background job "${entry.job.id}": could not claim its run`, { ...log, error: e instanceof Error ? e.message : String(e) });
      }
    }
    return { started };
  }

  const schedule = (e: Entry) => (e.job.every !== undefined ? `every ${formatInterval(e.job.every)}` : `cron ${e.job.cron}${e.cron && e.cron.timezone !== 'UTC' ? ` ${e.cron.timezone}` : ''}`);

  const runner: BackgroundRunner = {
    add,
    remove(id) {
      const entry = entries.get(id);
      entry?.running?.abort.abort(new Error('the job was removed'));
      return entries.delete(id);
    },
    has: (id) => entries.has(id),
    status: () =>
      [...entries.values()].map((e) => ({
        id: e.job.id,
        description: e.job.description,
        schedule: schedule(e),
        nextRunAt: new Date(e.nextAt).toISOString(),
        running: e.running !== undefined,
        failures: e.failures,
        ...(e.backoffUntil > now().getTime() ? { backoffUntil: new Date(e.backoffUntil).toISOString() } : {}),
        ...(e.lastError !== undefined ? { lastError: e.lastError } : {}),
      })),
    runs: (query) => storage.jobs.listRuns(query),
    tick() {
      // Ticks never overlap: a slow claim (a busy database) delays the next tick instead of racing it.
      ticking ??= tickOnce().finally(() => {
        ticking = undefined;
      });
      return ticking;
    },
    async idle() {
      await ticking;
      await Promise.all([...entries.values()].map((e) => e.running?.promise));
    },
    start() {
      if (timer) return;
      timer = setInterval(() => {
        void runner.tick().catch((e: unknown) => logger.error('background tick failed', { ...log, error: e instanceof Error ? e.message : String(e) }));
      }, resolutionMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const e of entries.values()) e.running?.abort.abort(new Error('the background runner stopped'));
      await runner.idle();
    },
    get started() {
      return timer !== undefined;
    },
    describe() {
      const list = runner.status();
      if (list.length === 0) return 'background: no jobs';
      return `background: ${list.map((j) => `${j.id} (${j.schedule}, next ${j.nextRunAt.slice(11, 16)} UTC)`).join(', ')}`;
    },
  };
  return runner;
}
