/**
 * The background runner's ticks and runs: each tick takes over runs dead processes left behind, then claims every
 * due slot; a claimed run goes on in the background under its lease, and its end (or failure, with backoff) is
 * recorded. Also the timer that ticks, and waiting for and stopping runs.
 */
import type { JobRunOutcome, JobRunRecord } from '../storage/job-types';
import { inSpan } from '../util/tracing';
import { formatInterval, LOG, nextAfter, type RunnerEntry, type RunnerState } from './runner-state';

const DEFAULT_LEASE_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 60 * 60_000;
/** How often the runner looks for runs a dead process left behind. */
const INTERRUPTED_SCAN_MS = 60_000;

/** Start every due job; ticks never overlap (a slow claim, a busy database, delays the next tick instead of racing it). */
export function tickRunner(r: RunnerState): Promise<{ started: string[] }> {
  r.ticking ??= tickOnce(r).finally(() => {
    r.ticking = undefined;
  });
  return r.ticking;
}

async function tickOnce(r: RunnerState): Promise<{ started: string[] }> {
  const at = r.now().getTime();
  const started: string[] = [];
  if (at - r.lastInterruptedScan >= INTERRUPTED_SCAN_MS) {
    r.lastInterruptedScan = at;
    for (const run of await r.storage.jobs.interruptedRuns(new Date(at).toISOString())) {
      const entry = r.entries.get(run.jobId);
      if (!entry || entry.running) continue;
      r.logger.warn(`background job "${run.jobId}": taking over the run of ${run.slot} that ${run.owner} left unfinished`, { ...LOG, job: run.jobId });
      if (await launch(r, entry, new Date(run.slot))) started.push(run.jobId);
    }
  }
  for (const entry of r.entries.values()) {
    if (entry.nextAt > at) continue;
    const slot = new Date(entry.nextAt);
    entry.nextAt = nextAfter(entry, at);
    if (entry.running) {
      r.logger.warn(`background job "${entry.job.id}" is still running; the run of ${slot.toISOString()} is skipped`, { ...LOG, job: entry.job.id });
      continue;
    }
    if (entry.backoffUntil > at) continue;
    try {
      if (await launch(r, entry, slot)) started.push(entry.job.id);
    } catch (e) {
      r.logger.error(`background job "${entry.job.id}": could not claim its run`, { ...LOG, error: e instanceof Error ? e.message : String(e) });
    }
  }
  return { started };
}

/** Claim `slot` of `entry` and run it in the background; false when another process has it. */
async function launch(r: RunnerState, entry: RunnerEntry, slot: Date): Promise<boolean> {
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

/** Run a claimed slot, note its outcome on the entry (a failure backs off, doubling to an hour) and record its end. */
async function runClaimed(r: RunnerState, entry: RunnerEntry, slot: Date, claimed: JobRunRecord, abort: AbortController, timeout: NodeJS.Timeout): Promise<void> {
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
    error = (e instanceof Error ? e.message : String(e)).slice(0, 2_000);
    entry.failures += 1;
    entry.lastError = error;
    const base = Math.min(entry.job.every ?? 60_000, 60_000);
    entry.backoffUntil = r.now().getTime() + Math.min(MAX_BACKOFF_MS, base * 2 ** (entry.failures - 1));
    r.logger.warn(`background job "${entry.job.id}" failed (${entry.failures} in a row); next try after ${new Date(entry.backoffUntil).toISOString()}`, { ...LOG, job: entry.job.id, error });
  } finally {
    clearTimeout(timeout);
  }
  try {
    const run = await r.storage.jobs.finishRun(claimed.id, r.owner, { endedAt: r.now().toISOString(), outcome, ...(error !== undefined ? { error } : {}), ...(detail !== undefined ? { detail } : {}) });
    r.onRunEnd?.(run);
  } catch (e) {
    // Another process took the slot over (our lease lapsed): its record stands.
    r.logger.warn(`background job "${entry.job.id}": could not record the end of run ${claimed.id}`, { ...LOG, error: e instanceof Error ? e.message : String(e) });
  }
}

/** Wait until no tick and no run of this process is going. */
export async function idleRunner(r: RunnerState): Promise<void> {
  await r.ticking;
  await Promise.all([...r.entries.values()].map((e) => e.running?.promise));
}

/** Start the timer (unref'd: it never keeps the process alive); it ticks through the runner object. */
export function startRunner(r: RunnerState): void {
  if (r.timer) return;
  r.timer = setInterval(() => {
    void r.self.tick().catch((e: unknown) => r.logger.error('background tick failed', { ...LOG, error: e instanceof Error ? e.message : String(e) }));
  }, r.resolutionMs);
  r.timer.unref?.();
}

/** Stop the timer, abort running jobs and wait for them. */
export async function stopRunner(r: RunnerState): Promise<void> {
  if (r.timer) clearInterval(r.timer);
  r.timer = undefined;
  for (const e of r.entries.values()) e.running?.abort.abort(new Error('the background runner stopped'));
  await r.self.idle();
}
