/**
 * The automation domains of {@link Storage}: stored workflow runs (`workflows`) and price alerts (`alerts`).
 * Both are claimed in storage, so a fleet of processes on one database runs a workflow trigger and fires an
 * alert once.
 */

/** How a stored workflow run ended; `running` while it runs. `interrupted`: its process stopped mid-run (lease lapsed). */
export type WorkflowRunStatus = 'running' | 'ok' | 'failed' | 'interrupted';

/** What started a workflow run. */
export type WorkflowTrigger = 'schedule' | 'webhook' | 'manual';

/** One step of a stored workflow run: what went in, what came out. */
export interface WorkflowRunStep {
  readonly id: string;
  readonly kind: 'tool_call' | 'agent_turn';
  /** The tool (tool steps). */
  readonly tool?: string | undefined;
  /** The resolved input: tool arguments (secrets redacted) or the turn's message. */
  readonly input: unknown;
  /** The tool's envelope, or `{ text, stopReason }` of a turn; large outputs are cut (`truncated: true`). */
  readonly output?: unknown;
  readonly ok: boolean;
  /** The gate's decision (`allowed`, `blocked`, …) or the turn's stop reason. */
  readonly decision?: string | undefined;
  /** The error code of a failed step (`GRANT_REQUIRED`, `TOOL_INPUT_INVALID`, …). */
  readonly code?: string | undefined;
  readonly error?: string | undefined;
  readonly startedAt: string;
  readonly durationMs: number;
}

/** One stored workflow run. */
export interface WorkflowRunRecord {
  /** `wfr_…`. */
  readonly id: string;
  readonly workflowId: string;
  /** The tenant the run acted for. */
  readonly userId: string;
  readonly trigger: WorkflowTrigger;
  /** Unique per workflow: the schedule slot, the webhook's idempotency key, or a fresh id for a manual run. */
  readonly triggerKey: string;
  readonly status: WorkflowRunStatus;
  /** The process that runs (ran) it. */
  readonly owner: string;
  /** The trace id every step's audit row carries. */
  readonly traceId: string;
  readonly startedAt: string;
  /** While `running`: past it the run counts as interrupted. */
  readonly leaseUntil: string;
  readonly endedAt?: string | undefined;
  readonly durationMs?: number | undefined;
  readonly error?: string | undefined;
  readonly steps: readonly WorkflowRunStep[];
  /** Steps not run because an earlier one failed. */
  readonly skipped: readonly string[];
}

/** A run to claim (see {@link WorkflowRunStorage.claimRun}). */
export interface NewWorkflowRun {
  readonly id: string;
  readonly workflowId: string;
  readonly userId: string;
  readonly trigger: WorkflowTrigger;
  readonly triggerKey: string;
  readonly owner: string;
  readonly traceId: string;
  readonly startedAt: string;
  readonly leaseUntil: string;
}

/** Filter of {@link WorkflowRunStorage.listRuns}; newest first. */
export interface WorkflowRunQuery {
  readonly workflowId?: string | undefined;
  /** Only this tenant's runs. */
  readonly userId?: string | undefined;
  readonly status?: WorkflowRunStatus | undefined;
  /** @default 50 */
  readonly limit?: number | undefined;
}

/** Stored workflow runs: one run per workflow and trigger key across every process on the storage. */
export interface WorkflowRunStorage {
  /**
   * Create the run (`running`), atomically across processes. `undefined` when this workflow already has a run for
   * `triggerKey` (another process took the trigger, or it ran before): the caller runs nothing.
   */
  claimRun(run: NewWorkflowRun): Promise<WorkflowRunRecord | undefined>;
  /** Record the steps so far of a run `owner` holds (so an interrupted run shows what it did); false when it does not hold it. */
  saveSteps(id: string, owner: string, steps: readonly WorkflowRunStep[]): Promise<boolean>;
  /** End a run `owner` holds. Throws `NOT_FOUND` when it does not hold a running run of that id. */
  finishRun(
    id: string,
    owner: string,
    result: {
      readonly status: Exclude<WorkflowRunStatus, 'running' | 'interrupted'>;
      readonly endedAt: string;
      readonly durationMs: number;
      readonly error?: string | undefined;
      readonly steps: readonly WorkflowRunStep[];
      readonly skipped: readonly string[];
    },
  ): Promise<WorkflowRunRecord>;
  getRun(id: string): Promise<WorkflowRunRecord | undefined>;
  listRuns(query?: WorkflowRunQuery): Promise<WorkflowRunRecord[]>;
  /**
   * Mark `running` runs whose lease lapsed before `now` as `interrupted` (their process died). They are never run
   * again: a step may have moved funds. Returns how many were marked.
   */
  expireRuns(now: string): Promise<number>;
}

/** What an alert watches for: a price above or below a level, or a move of a percentage from the price when it was set. */
export type AlertCondition = 'above' | 'below' | 'move_pct';

/** Lifecycle of an alert: `active` until it fires (once), is cancelled or expires. */
export type AlertStatus = 'active' | 'fired' | 'cancelled' | 'expired';

/** One stored price alert. */
export interface AlertRecord {
  /** Per storage, increasing. */
  readonly id: number;
  readonly userId: string;
  /** Normalised symbol (`ETH`, `BTC`, `EUR/USD`). */
  readonly asset: string;
  readonly condition: AlertCondition;
  /** A price in USD (`above`, `below`) or a percentage (`move_pct`). */
  readonly threshold: number;
  /** The price when the alert was set (the reference of `move_pct`). */
  readonly basePrice?: number | undefined;
  readonly note?: string | undefined;
  readonly status: AlertStatus;
  readonly createdAt: string;
  readonly expiresAt: string;
  /** The session the alert was set in. */
  readonly sessionId?: string | undefined;
  /** When it fired, was cancelled or expired. */
  readonly endedAt?: string | undefined;
  /** The price that fired it. */
  readonly firedPrice?: number | undefined;
  /** The session its delivery was written to (`alert-<id>-<random>`). */
  readonly deliverySessionId?: string | undefined;
}

/** An alert to create. */
export interface NewAlert {
  readonly userId: string;
  readonly asset: string;
  readonly condition: AlertCondition;
  readonly threshold: number;
  readonly basePrice?: number | undefined;
  readonly note?: string | undefined;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly sessionId?: string | undefined;
}

/** Fields a transition may set. */
export interface AlertTransitionPatch {
  readonly endedAt: string;
  readonly firedPrice?: number | undefined;
  readonly deliverySessionId?: string | undefined;
}

/** Price alerts, per user. `transition` is a compare-and-set, so an alert fires once across processes. */
export interface AlertStorage {
  create(alert: NewAlert): Promise<AlertRecord>;
  /** The user's alert; another user's id is `undefined`. */
  get(userId: string, id: number): Promise<AlertRecord | undefined>;
  /** The user's alerts, newest first. @default limit 50 */
  list(query: { readonly userId: string; readonly status?: AlertStatus | readonly AlertStatus[] | undefined; readonly limit?: number | undefined }): Promise<AlertRecord[]>;
  /** Every user's `active` alerts, oldest first, with ids above `afterId` (the checker's read, page by page). @default limit 1000 */
  listActive(query?: { readonly afterId?: number | undefined; readonly limit?: number | undefined }): Promise<AlertRecord[]>;
  /** How many `active` alerts the user has. */
  countActive(userId: string): Promise<number>;
  /** Move the user's alert from `active` to `to`; the updated record when this caller won, else `undefined`. */
  transition(userId: string, id: number, to: Exclude<AlertStatus, 'active'>, patch: AlertTransitionPatch): Promise<AlertRecord | undefined>;
}
