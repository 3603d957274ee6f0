/**
 * The agent background's public types: a delivery, the options, and the background itself.
 */
import type { MemoryStore } from '../memory/types';
import type { AgentRuntime } from '../runtime/runtime';
import type { GenerateResult } from '../runtime/types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';
import type { DeliveryQuery, DeliveryRecord } from './deliveries';
import type { BackgroundJob, BackgroundRunner } from './runner-types';
import type { ParsedSchedule } from './schedule';
import type { WorkflowAutomation } from './workflows';

/** What an autonomous turn produced, handed to {@link AgentBackgroundOptions.deliver}. */
export interface Delivery {
  readonly jobId: string;
  readonly sessionId: string;
  /** `heartbeat`, `cron` (a `## Schedule` entry) or `alert` (a price alert that fired). */
  readonly source: 'heartbeat' | 'cron' | 'alert';
  /** The tenant it is for. @default the background's user */
  readonly userId?: string | undefined;
  /** The turn's answer. */
  readonly text: string;
  readonly at: string;
  readonly stopReason: GenerateResult['stopReason'];
}

/** Options of {@link createAgentBackground}. */
export interface AgentBackgroundOptions {
  readonly runtime: AgentRuntime;
  readonly storage: Storage;
  /** The operator's workspace: HEARTBEAT.md's `## Schedule` drives the heartbeat tasks and the timed jobs. */
  readonly workspace?: Workspace | undefined;
  /** The tenant autonomous turns run for. @default 'default' */
  readonly userId?: string | undefined;
  /** Heartbeat turns every this many ms; 0 turns them off. @default 1800000 (30 minutes; `MINARA_HEARTBEAT_EVERY`) */
  readonly heartbeatEveryMs?: number | undefined;
  /** Heartbeat turns only inside these UTC hours, e.g. `{ start: '08:00', end: '22:00' }`. @default all day */
  readonly activeHours?: { readonly start: string; readonly end: string } | undefined;
  /** Soft-deleted memories older than the retention are purged every this many ms; 0 off. @default 1800000 */
  readonly purgeEveryMs?: number | undefined;
  /** The memory stores whose soft-deleted rows the purge job removes (the tenants this process serves). */
  readonly memoryStores?: (() => Iterable<MemoryStore>) | undefined;
  /**
   * Also purge the tenants no store of `memoryStores` serves: the purge job asks the storage for every scope with
   * rows soft-deleted more than this many days ago (`MemoryStorage.expiredSoftDeletedScopes`) and purges them, so a
   * tenant who has not come back since the process started is purged on time too. Set it to the retention those
   * tenants' stores use (`createApp` sets 30, its stores' retention). Served tenants keep their own store's
   * retention. @default off (served tenants only)
   */
  readonly unservedRetentionDays?: number | undefined;
  /** Run the workspace's dreaming pass on the runner (when the workspace has dreaming enabled). @default true */
  readonly dreaming?: boolean | undefined;
  /** Where autonomous turns' answers go besides the session transcript (a chat app, a webhook, a UI). */
  readonly deliver?: ((delivery: Delivery) => void | Promise<void>) | undefined;
  /** Extra jobs of the host. */
  readonly jobs?: readonly BackgroundJob[] | undefined;
  /**
   * The workflows a `## Schedule` entry may run (`- every 1h: workflow rebalance-check`): such an entry starts a stored
   * run of that workflow (no model turn unless a step is one) instead of a turn. Without it such lines are problems.
   */
  readonly workflows?: WorkflowAutomation | undefined;
  /**
   * Asked before each autonomous turn (heartbeat, schedule); a string is why not (the run is skipped with it), e.g.
   * a spent daily budget. @default always admitted
   */
  readonly admit?: (() => Promise<string | undefined> | string | undefined) | undefined;
  /**
   * Admit each autonomous turn (heartbeat, schedule, a workflow with model steps) and reserve its estimated cost
   * until the turn ends (`createAutonomousBudget`); used instead of `admit` for those turns when given.
   * @default `admit`
   */
  readonly reserve?: (() => Promise<{ readonly refusal?: string | undefined; release(): Promise<void> }>) | undefined;
  readonly owner?: string | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
  readonly resolutionMs?: number | undefined;
}

/** The agent's background runner: a {@link BackgroundRunner} with the schedule it read from HEARTBEAT.md. */
export interface AgentBackground extends BackgroundRunner {
  /** The `## Schedule` as last read (entries, heartbeat tasks, problems). */
  schedule(): ParsedSchedule;
  /** Read HEARTBEAT.md again and add, change or remove the timed jobs (each tick does this at most every 5 s). */
  syncSchedule(): Promise<ParsedSchedule>;
  /** Be told of each delivered answer in this process (the REPL prints them); returns the unsubscribe function. */
  onDelivery(listener: (delivery: Delivery) => void): () => void;
  /**
   * Schedule problems the user has not been told about yet, each returned once (then forgotten): `createApp`
   * puts them in the next user turn's notices, so the agent says which HEARTBEAT.md line it ignores and why.
   */
  takeNotices(): string[];
  /** What autonomous turns delivered to a user, newest first, from storage (every process sees the same). */
  deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /**
   * Hand a delivery to this process's listeners (the REPL) and the `deliver` hook (the signed webhook, the host's
   * chat app): the price alerts deliver through it. The caller has stored its session for the Updates bell.
   */
  deliver(delivery: Delivery): Promise<void>;
}
