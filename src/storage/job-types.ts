/** How a background job's run ended; `running` while it runs (or until its lease shows it was interrupted). */
export type JobRunOutcome = 'running' | 'ok' | 'failed' | 'skipped';

/** One run of a background job for one scheduled slot. */
export interface JobRunRecord {
  readonly id: number;
  readonly jobId: string;
  /** The scheduled time this run is for (ISO): every process computes the same slots, so a slot runs once. */
  readonly slot: string;
  /** Who runs (ran) it: `<host>:<pid>:<random>` of the process. */
  readonly owner: string;
  /** 1 for the first try of the slot; more when an interrupted run was taken over. */
  readonly attempt: number;
  readonly startedAt: string;
  /** While `running`: the owner's lease; past it, the run counts as interrupted and may be taken over. */
  readonly leaseUntil: string;
  readonly outcome: JobRunOutcome;
  readonly endedAt?: string | undefined;
  readonly error?: string | undefined;
  /** A short note of what the run did (e.g. `no tasks`, `purged 3`). */
  readonly detail?: string | undefined;
}

/** Background job runs: one run per job and slot across every process on the storage. */
export interface JobStorage {
  /**
   * Claim the run of `jobId` for `slot`, atomically across processes: creates it (`running`, leased to `owner`
   * until `leaseUntil`), or takes over a `running` one whose lease expired before `now` (its process died).
   * Returns `undefined` when the slot is running elsewhere under a live lease or already ended.
   */
  claimRun(input: { readonly jobId: string; readonly slot: string; readonly owner: string; readonly now: string; readonly leaseUntil: string }): Promise<JobRunRecord | undefined>;
  /** Extend the lease of a run `owner` holds (long jobs); false when it no longer holds it. */
  renewRun(id: number, owner: string, leaseUntil: string): Promise<boolean>;
  /** End a run `owner` holds. Throws `NOT_FOUND` when it does not hold it (another process took it over). */
  finishRun(id: number, owner: string, result: { readonly endedAt: string; readonly outcome: Exclude<JobRunOutcome, 'running'>; readonly error?: string | undefined; readonly detail?: string | undefined }): Promise<JobRunRecord>;
  /** Runs, newest first. @default limit 50 */
  listRuns(query?: { readonly jobId?: string | undefined; readonly outcome?: JobRunOutcome | undefined; readonly limit?: number | undefined }): Promise<JobRunRecord[]>;
  /** Runs still `running` whose lease expired before `now`: interrupted by a crash, to be taken over. */
  interruptedRuns(now: string): Promise<JobRunRecord[]>;
}
