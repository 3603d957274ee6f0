/**
 * The background runner's public types: a job, what its run receives and returns, a job's status, the runner.
 */
import type { JobRunOutcome, JobRunRecord } from '../storage/job-types';

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
