import { MinaraError } from '../errors/minara-error';
import type { SignalContext } from '../skills/types';
import { type Logger, silentLogger } from '../util/logger';
import { parseCron, type CronSchedule } from './cron';
import type { GenerateResult, RunInput } from './types';

/** A scheduled job: every `every` ms, or on a cron expression (UTC, or in `timezone`). */
export interface ScheduledJob {
  readonly id: string;
  readonly every?: number | undefined;
  readonly cron?: string | undefined;
  /** The time zone `cron` is read in (an IANA name or its city, e.g. `New York`). @default 'UTC' */
  readonly timezone?: string | undefined;
  readonly run: (context: { readonly firedAt: Date; readonly jobId: string }) => unknown;
}

/** What happened at a tick. */
export interface SchedulerTickResult {
  readonly started: readonly string[];
  /** Jobs that were due while their previous run was still going (never overlapped). */
  readonly skippedOverlap: readonly string[];
}

/** The scheduler. */
export interface Scheduler {
  add(job: ScheduledJob): void;
  remove(id: string): boolean;
  jobs(): Array<{ id: string; nextRunAt: string; running: boolean }>;
  /** Run every due job now (used by the timer; call it directly in tests with a fake clock). */
  tick(): SchedulerTickResult;
  /** Wait for running jobs to finish. */
  idle(): Promise<void>;
  start(): void;
  stop(): void;
}

/** Options of {@link createScheduler}. */
export interface SchedulerOptions {
  readonly now?: (() => Date) | undefined;
  /** How often the timer checks for due jobs. @default 1000 */
  readonly resolutionMs?: number | undefined;
  readonly logger?: Logger | undefined;
  /** Called when a job throws (also logged). */
  readonly onError?: ((jobId: string, error: unknown) => void) | undefined;
}

/**
 * A small scheduler for signals and routines: interval or cron jobs, never two runs of the same job at
 * once (a due job whose last run is still going is skipped and logged).
 *
 * @example
 * ```ts
 * const scheduler = createScheduler();
 * scheduler.add(signalJob(runtime, { id: 'btc-drop', cron: '*\/5 * * * *', signal, message: 'Check the BTC drop alert.' }));
 * scheduler.start();
 * ```
 */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const { now = () => new Date(), resolutionMs = 1000, logger = silentLogger, onError } = options;
  const entries = new Map<string, { job: ScheduledJob; cron?: CronSchedule; nextAt: number; running?: Promise<void> | undefined }>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const nextFrom = (e: { job: ScheduledJob; cron?: CronSchedule }, from: Date) => (e.cron ? e.cron.next(from).getTime() : from.getTime() + e.job.every!);

  return {
    add(job) {
      if (typeof job?.id !== 'string' || job.id === '') throw new MinaraError('INVALID_ARGUMENT', 'scheduler.add: "id" must be a non-empty string.');
      if (entries.has(job.id)) throw new MinaraError('INVALID_ARGUMENT', `scheduler.add: a job "${job.id}" already exists.`);
      if (typeof job.run !== 'function') throw new MinaraError('INVALID_ARGUMENT', `scheduler.add: job "${job.id}" needs a "run" function.`);
      if ((job.every === undefined) === (job.cron === undefined)) throw new MinaraError('INVALID_ARGUMENT', `scheduler.add: job "${job.id}" needs exactly one of "every" (ms) or "cron".`);
      if (job.every !== undefined && !(Number.isFinite(job.every) && job.every >= 1000)) throw new MinaraError('INVALID_ARGUMENT', `scheduler.add: job "${job.id}": "every" must be at least 1000 ms.`);
      const entry = { job, ...(job.cron ? { cron: parseCron(job.cron, { timezone: job.timezone }) } : {}), nextAt: 0 };
      entry.nextAt = nextFrom(entry, now());
      entries.set(job.id, entry);
    },
    remove: (id) => entries.delete(id),
    jobs: () => [...entries.values()].map((e) => ({ id: e.job.id, nextRunAt: new Date(e.nextAt).toISOString(), running: e.running !== undefined })),
    tick() {
      const at = now();
      const started: string[] = [];
      const skippedOverlap: string[] = [];
      for (const e of entries.values()) {
        if (e.nextAt > at.getTime()) continue;
        e.nextAt = nextFrom(e, at);
        if (e.running) {
          skippedOverlap.push(e.job.id);
          logger.warn('scheduler overlap_skip', { job: e.job.id });
          continue;
        }
        started.push(e.job.id);
        e.running = Promise.resolve()
          .then(() => e.job.run({ firedAt: at, jobId: e.job.id }))
          .then(
            () => undefined,
            (error: unknown) => {
              logger.error('scheduler job failed', { job: e.job.id, error: error instanceof Error ? error.message : String(error) });
              onError?.(e.job.id, error);
            },
          )
          .finally(() => {
            e.running = undefined;
          });
      }
      return { started, skippedOverlap };
    },
    async idle() {
      await Promise.all([...entries.values()].map((e) => e.running));
    },
    start() {
      if (timer) return;
      timer = setInterval(() => this.tick(), resolutionMs);
      timer.unref?.();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * A job that runs an autonomous turn for a signal: `source` from the signal (cron or webhook), its
 * preloads and suggested stages, and the gate's autonomous rules (cron defaults to read, memory, web).
 */
export function signalJob(
  runtime: { generate(input: RunInput): Promise<GenerateResult> },
  spec: { id: string; every?: number; cron?: string; signal: SignalContext; message: string; sessionId?: string; allowedToolSets?: readonly string[]; onResult?: (r: GenerateResult) => void },
): ScheduledJob {
  return {
    id: spec.id,
    ...(spec.every !== undefined ? { every: spec.every } : {}),
    ...(spec.cron !== undefined ? { cron: spec.cron } : {}),
    run: async ({ firedAt }) => {
      const result = await runtime.generate({
        sessionId: spec.sessionId ?? `${spec.signal.source}-${spec.id}-${firedAt.toISOString().slice(0, 10)}`,
        message: spec.message,
        source: spec.signal.source,
        signal: { ...spec.signal, trace_id: spec.signal.trace_id ?? `t_${spec.id}_${firedAt.getTime()}` },
        ...(spec.allowedToolSets ? { allowedToolSets: spec.allowedToolSets } : {}),
      });
      spec.onResult?.(result);
    },
  };
}
