import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import type { JobRunRecord } from '../storage/job-types';
import type { Storage } from '../storage/types';
import { type Logger, silentLogger } from '../util/logger';
import { idleRunner, startRunner, stopRunner, tickRunner } from './runner-run';
import { addJob, describeRunner, jobStatus, removeJob, type RunnerState } from './runner-state';
import type { BackgroundJob, BackgroundRunner } from './runner-types';

export { formatInterval } from './runner-state';
export type { BackgroundJob, BackgroundJobContext, BackgroundJobResult, BackgroundJobStatus, BackgroundRunner } from './runner-types';

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
 *
 * Wiring only: the state and the job table are `runner-state.ts` (a `RunnerState`), ticks, runs and the timer
 * `runner-run.ts`, the public types `runner-types.ts`.
 */
export function createBackgroundRunner(options: BackgroundRunnerOptions): BackgroundRunner {
  const { storage, now = () => new Date(), logger = silentLogger, resolutionMs = 1_000, onRunEnd } = options;
  if (!storage || typeof storage.jobs?.claimRun !== 'function') throw new MinaraError('CONFIG_INVALID', 'createBackgroundRunner: "storage" must be a Storage with the jobs domain.');
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const runner: BackgroundRunner = {
    add: (job) => addJob(r, job),
    remove: (id) => removeJob(r, id),
    has: (id) => r.entries.has(id),
    status: () => jobStatus(r),
    runs: (query) => storage.jobs.listRuns(query),
    tick: () => tickRunner(r),
    idle: () => idleRunner(r),
    start: () => startRunner(r),
    stop: () => stopRunner(r),
    get started() {
      return r.timer !== undefined;
    },
    describe: () => describeRunner(r),
  };
  const r: RunnerState = { storage, now, logger, resolutionMs, onRunEnd, owner, entries: new Map(), timer: undefined, lastInterruptedScan: 0, ticking: undefined, self: runner };
  for (const job of options.jobs ?? []) addJob(r, job);
  return runner;
}
