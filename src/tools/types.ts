import type { RiskTier } from '../safety/risk-tier';
import type { CircuitBreakers } from '../safety/circuit-breakers';
import type { z } from 'zod';
import type { MinaraErrorCode } from '../errors/codes';
import type { CallSource, PermissionTier } from '../safety/permission-tier';
import type { ApprovalRecord, AuditDecision, GrantArgLimit, GrantRecord, AuditEntry, AuditQuery, ApprovalQuery, Storage } from '../storage/types';
import type { ApprovalBinding } from '../safety/approvals';
import type { ToolEnvelope } from './envelope';
import type { CapabilitySwitchRecord } from '../storage/control-types';
import type { TrustLabel } from '../safety/untrusted';
import type { AuditBatch } from './audit-batch';

/** A lifecycle stage of a turn (the skill taxonomy's `LifecycleStage`): what the request is about. */
export type TurnStage = 'discover' | 'evaluate' | 'decide' | 'manage';

/**
 * Per-turn state every tool call in the turn sees, threaded through `AsyncLocalStorage`.
 * One context per turn; concurrent turns never share one.
 */
export interface ToolCallContext {
  /** Conversation session. Session grants (CONFIRM_ONCE) are remembered per session. */
  readonly sessionId: string;
  /** Where the turn came from; autonomous sources cannot answer confirmations. */
  readonly source: CallSource;
  /** Correlates every audit row, approval and event of one turn or workflow run. */
  readonly traceId: string;
  /** Turn id, when inside a runtime turn. */
  readonly turnId?: string | undefined;
  /** Tenant for scoped tools (memory). */
  readonly userId?: string | undefined;
  readonly agentId?: string | undefined;
  /** Tool sets this turn may use (expanded through `includes`); undefined means all. */
  readonly allowedToolSets?: readonly string[] | undefined;
  /** Highest effective tier this turn may run at all; above it calls are blocked. */
  readonly riskCeiling?: PermissionTier | undefined;
  /** True when a human operator authored the turn (not a model-initiated or signal turn). */
  readonly operatorAuthored?: boolean | undefined;
  /**
   * Only side-effect-free tools (`sideEffects: false`) run in this context; others are refused with
   * `SIDE_EFFECTS_REFUSED`. run_code dispatches its `inputs` so; a nested call keeps it.
   */
  readonly sideEffectFree?: boolean | undefined;
  /**
   * The turn's lifecycle stages (the signal's `suggested_stages`, else inferred from the message). An autonomous
   * turn classified as `discover` only cannot execute fund-moving tools (`STAGE_NOT_ALLOWED`).
   */
  readonly lifecycleStages?: readonly TurnStage[] | undefined;
  /** Tools used so far this turn (mutated by dispatch). Drives the analysis → trade boundary. */
  readonly usedTools: Set<string>;
  /** Blocked-call counts by `tool + input hash` in this turn (mutated by dispatch). */
  readonly blockedCalls: Map<string, number>;
  /** Free per-turn state for hooks (e.g. stated intent). */
  readonly state: Map<string, unknown>;
}

/** Options to {@link createToolCallContext}. */
export interface ToolCallContextInit {
  sessionId: string;
  source?: CallSource;
  traceId?: string;
  turnId?: string;
  userId?: string;
  agentId?: string;
  allowedToolSets?: readonly string[];
  /** Highest tier the turn may run: a finance `RiskTier` (`'high'`) or the `PermissionTier` it maps to. */
  riskCeiling?: PermissionTier | RiskTier;
  operatorAuthored?: boolean;
  /** Only side-effect-free tools run in this context (see {@link ToolCallContext.sideEffectFree}). */
  sideEffectFree?: boolean;
  lifecycleStages?: readonly TurnStage[];
}

/** What a tool handler receives besides its input. */
export interface ToolExecutionContext {
  /** The turn context of the call. */
  readonly call: ToolCallContext;
  /** Id of this tool call (model call id or generated). */
  readonly toolCallId: string;
  /** Aborted on timeout or when the caller cancels. */
  readonly signal: AbortSignal;
  /** Effective tier the gate applied. */
  readonly tier: PermissionTier;
  /** Id of the approval this execution consumed, if any. */
  readonly approvalId?: string | undefined;
  /** The normalised order facts of a fund-moving call, computed once by the registry before any check. */
  readonly orderFacts?: ToolOrderFacts | undefined;
}

/** What a fund-moving call does, in the words the safety checks use. */
export type OrderSide = 'buy' | 'sell' | 'swap' | 'long' | 'short' | 'close' | 'transfer' | 'withdraw';

/**
 * The normalised facts of one fund-moving call: computed once per call by the registry from the tool's
 * `orderFacts`, then judged by grants (`argLimits` on `notionalUsd`/`amountUsd`, `asset`, `side`,
 * `destination`), hooks (the finance safety stack), previews and the handler alike. A tool never gets
 * to size an order one way for the checks and another way for the handler.
 */
export interface ToolOrderFacts {
  /** Notional of the order in USD (finite, ≥ 0). */
  readonly notionalUsd: number;
  /** The asset the call is about (upper-case symbol: the non-stable leg, the perp market, the asset sent). */
  readonly asset: string;
  readonly side: OrderSide;
  /** External destination of a transfer or withdrawal. */
  readonly destination?: string | undefined;
  /** Units of `asset`, when known. */
  readonly quantity?: number | undefined;
}

/** What a tool's `orderFacts` function receives besides its input. */
export interface OrderFactsContext {
  readonly call: ToolCallContext;
  readonly toolCallId: string;
}

/** The tool set a tool belongs to, and the sets it includes. */
export interface ToolSetDefinition {
  readonly name: string;
  readonly description: string;
  /** Other tool sets whose tools this set also covers. */
  readonly includes?: readonly string[] | undefined;
}

/**
 * What `defineTool` accepts. `TSchema` is the zod schema; the handler input is inferred from it.
 * Fund-moving tools must provide `preview`: without `confirm: true` the registry runs `preview`
 * (never `execute`), so a call the user has not confirmed cannot move funds.
 */
export interface ToolDefinition<TSchema extends z.ZodType = z.ZodType> {
  /** Unique snake_case name the model calls. */
  readonly name: string;
  /** Tool set (`read`, `trade`, `memory`, …); the allowed-tool-set whitelist is checked against it. */
  readonly toolSet: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** zod schema of the input; use `.nullish()` for optional fields (models send `null`). */
  readonly inputSchema: TSchema;
  /** Static tier: the floor every policy starts from. */
  readonly permissionTier: PermissionTier;
  /** Moves funds: follows preview/confirm and the analysis → trade boundary. @default false */
  readonly isFundMoving?: boolean | undefined;
  /** Counts as analysis for the analysis → trade boundary. @default false */
  readonly isAnalysis?: boolean | undefined;
  /**
   * `false` declares the tool side-effect free: it only reads (no stored state written, nothing sent or started on
   * anyone's behalf). Only such tools run in a side-effect-free context (`ToolCallContext.sideEffectFree`, e.g.
   * run_code's `inputs`). The tier is a separate matter: `memory_write` is READ_ONLY (no confirmation) but has side
   * effects. @default true
   */
  readonly sideEffects?: boolean | undefined;
  /**
   * This tool controls the emergency stop itself (e.g. its release). While the stop is engaged it is not
   * blocked by the stop, but every other rule of its tier still applies (a MANUAL_ONLY release still needs
   * an explicit approval and is refused from autonomous sources). Set it on that one tool only. @default false
   */
  readonly emergencyStopControl?: boolean | undefined;
  /** Availability check; when it returns false the tool is hidden and not callable. */
  readonly checkFn?: (() => boolean) | undefined;
  /** Handler timeout. @default 30000 */
  readonly timeoutMs?: number | undefined;
  /** A tier computed from the validated input; it can only raise the static tier. */
  readonly tierFor?: ((input: z.output<NoInfer<TSchema>>) => PermissionTier) | undefined;
  /** Preview of a fund-moving call (route, expected output, fees): must move nothing. */
  readonly preview?: ((input: z.output<NoInfer<TSchema>>, ctx: ToolExecutionContext) => unknown) | undefined;
  /**
   * Required for fund-moving tools: the normalised order facts of a call (notional USD, asset, side,
   * destination). The registry computes them once per call, before grants and hooks judge the call; a
   * call whose facts cannot be computed is blocked. A fund-moving tool without it is refused at registration.
   */
  readonly orderFacts?: ((input: z.output<NoInfer<TSchema>>, ctx: OrderFactsContext) => ToolOrderFacts | Promise<ToolOrderFacts>) | undefined;
  /** The handler. Return data (wrapped as `{ok:true,data}`), or an envelope from `ok`/`err`; throw on failure. */
  readonly execute: (input: z.output<NoInfer<TSchema>>, ctx: ToolExecutionContext) => unknown;
  /**
   * Where this tool's results come from: `trusted` (the person, the operator, the agent's own stores) or
   * `untrusted` (a web page, a search result, another server). A successful result of an `untrusted` tool labels
   * the turn: later calls carry the provenance, and the untrusted-content policy applies (docs/safety.md).
   * @default 'trusted'
   */
  readonly trust?: TrustLabel | undefined;
  /** The source(s) of an untrusted result: URLs, a server, a file. @default the tool's name */
  readonly source?: ((input: z.output<NoInfer<TSchema>>, result: unknown) => string | readonly string[] | undefined) | undefined;
}

/**
 * A registered tool, type-erased so a registry of fifty tools stays cheap to type-check.
 * Input is validated by the schema at dispatch.
 */
export interface ToolEntry {
  readonly name: string;
  readonly toolSet: string;
  readonly description: string;
  readonly inputSchema: z.ZodType;
  readonly permissionTier: PermissionTier;
  readonly isFundMoving: boolean;
  readonly isAnalysis: boolean;
  /** False when the tool is declared side-effect free ({@link ToolDefinition.sideEffects}); undefined or true otherwise. */
  readonly sideEffects?: boolean | undefined;
  readonly emergencyStopControl: boolean;
  readonly checkFn?: (() => boolean) | undefined;
  readonly timeoutMs: number;
  readonly tierFor?: ((input: unknown) => PermissionTier) | undefined;
  readonly preview?: ((input: unknown, ctx: ToolExecutionContext) => unknown) | undefined;
  readonly orderFacts?: ((input: unknown, ctx: OrderFactsContext) => ToolOrderFacts | Promise<ToolOrderFacts>) | undefined;
  readonly execute: (input: unknown, ctx: ToolExecutionContext) => unknown;
  /** Where its results come from (see {@link ToolDefinition.trust}); absent means `trusted`. */
  readonly trust?: TrustLabel | undefined;
  readonly source?: ((input: unknown, result: unknown) => string | readonly string[] | undefined) | undefined;
}

/** What a before-hook sees. */
export interface BeforeHookCall {
  readonly tool: ToolEntry;
  /** Validated input. */
  readonly input: unknown;
  readonly context: ToolCallContext;
  readonly toolCallId: string;
  /** Effective tier so far (static floor, raised by `tierFor` and earlier hooks). */
  readonly tier: PermissionTier;
  /** `preview` when a fund-moving tool is called without `confirm: true`. */
  readonly mode: 'preview' | 'execute';
  /** The call's normalised order facts (fund-moving tools only). */
  readonly orderFacts?: ToolOrderFacts | undefined;
}

/**
 * What a before-hook may return. Hooks can only tighten: block, require a fresh approval, or raise the
 * tier. There is no way to lower a tier or skip the gate.
 */
export type BeforeHookResult =
  | undefined
  | void
  | { readonly block: string; readonly code?: MinaraErrorCode | undefined; readonly retryable?: boolean | undefined }
  | { readonly requireApproval: string }
  | { readonly raiseTier: PermissionTier; readonly reason?: string | undefined };

/** What an after-hook sees. */
export interface AfterHookCall extends BeforeHookCall {
  readonly envelope: ToolEnvelope;
  readonly decision: AuditDecision;
  readonly durationMs: number;
}

/** A named hook pair. Before-hooks run in registration order, after the built-in tier computation. */
export interface ToolHook {
  readonly name: string;
  readonly before?: ((call: BeforeHookCall) => BeforeHookResult | Promise<BeforeHookResult>) | undefined;
  readonly after?: ((call: AfterHookCall) => void | Promise<void>) | undefined;
}

/** Options for one dispatch. */
export interface DispatchOptions {
  /**
   * Context for this call. Outside any call it is used as given; inside a handler (or `runInContext`) it
   * can only narrow the ambient context: the session, trace and user stay the caller's, an autonomous
   * source stays autonomous, allowed tool sets intersect and the lower risk ceiling wins.
   */
  readonly context?: ToolCallContext | undefined;
  /** Model tool-call id; generated when absent. */
  readonly toolCallId?: string | undefined;
  /** An approved approval request that authorises this exact call. */
  readonly approvalId?: string | undefined;
  /** Cancels the call. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Storage writes to commit together with the call's audit row: called once with the outcome, just before the
   * row is written, it returns the writes to begin (each starting synchronously), or nothing. Where the storage
   * batches writes (`Storage.batchWrites`, SQLite) the row and these are one transaction, all or nothing; else,
   * or when the batch fails, they run one by one after the row. Their failures are logged, never thrown. The
   * runtime journals each returned call this way (one commit per call instead of two).
   */
  readonly withAuditRow?: ((outcome: DispatchOutcome) => ReadonlyArray<() => Promise<unknown>> | undefined) | undefined;
  /**
   * Hold the row of a call to a side-effect-free tool (`sideEffects: false`) in this batch instead of committing it
   * now (see {@link AuditBatch}); any other call commits the held rows before its gate runs. The runtime passes one
   * per turn and commits it with the turn's messages.
   */
  readonly auditBatch?: AuditBatch | undefined;
}

/** The full outcome of a dispatch; `dispatch` returns `json` only. */
export interface DispatchOutcome {
  readonly envelope: ToolEnvelope;
  /** The envelope as the JSON string the model sees. */
  readonly json: string;
  readonly decision: AuditDecision;
  readonly tier: PermissionTier;
  readonly toolCallId: string;
  readonly mode: 'preview' | 'execute';
  readonly durationMs: number;
  /** The approval request created when `decision` is `approval_required`. */
  readonly approval?: ApprovalRecord | undefined;
  /** The normalised order facts of a fund-moving call (computed once by the registry), when it got that far. */
  readonly orderFacts?: ToolOrderFacts | undefined;
}

/** Input to create a stored grant. */
export interface StoredGrantInput {
  /** One tool (the original form); `tools` and `toolSets` name more. At least one tool or tool set is required. */
  readonly toolName?: string | undefined;
  /** Tools the grant covers; each must be registered. */
  readonly tools?: readonly string[] | undefined;
  /** Tool sets whose tools the grant covers (through `includes`); each must be known to the registry. */
  readonly toolSets?: readonly string[] | undefined;
  /** The user the grant is for: only that user's calls use it. Omit for a host-wide grant (every user). */
  readonly userId?: string | undefined;
  /** Sources covered (cron, heartbeat, webhook, workflow); omit for every autonomous source. */
  readonly sources?: readonly CallSource[] | undefined;
  readonly argLimits?: Readonly<Record<string, GrantArgLimit>> | undefined;
  /** Most USD one call may move, judged on the order's true notional (its order facts). */
  readonly capPerCallUsd?: number | undefined;
  /** Most USD that may execute under the grant per UTC day (kept across processes). */
  readonly capPerDayUsd?: number | undefined;
  /** ISO time (in the future) or a duration in ms from now. */
  readonly expiresAt?: string | number | undefined;
  readonly note?: string | undefined;
}

/** Who acts on a grant or a stop, for its audit row. */
export interface GrantActor {
  /** A user id, `cli`, `sdk`, … @default 'sdk' */
  readonly by?: string | undefined;
}

/** Approvals as the host sees them: list pending requests, decide them. */
export interface ApprovalsApi {
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  list(query?: ApprovalQuery): Promise<ApprovalRecord[]>;
  /** Approve or deny a pending request; the decision is signed with the instance key. */
  decide(approvalId: string, decision: { approved: boolean; reason?: string | undefined }): Promise<ApprovalRecord>;
  /** Verify an approval authorises exactly this call and mark it used (single use). */
  consume(approvalId: string, binding: ApprovalBinding): Promise<ApprovalRecord>;
}

/** Grants as the host sees them. */
export interface GrantsApi {
  /**
   * Create a stored grant that lets autonomous calls of its tools run within its limits. Bad input throws
   * `INVALID_ARGUMENT` naming the field (an unknown tool or tool set, a negative cap, an expiry in the past) and
   * stores nothing. Appends a `grant.create` audit row.
   */
  create(input: StoredGrantInput, actor?: GrantActor): Promise<GrantRecord>;
  /** Revoke a grant; true when it was live. Appends a `grant.revoke` audit row when it was. */
  revoke(grantId: string, actor?: GrantActor): Promise<boolean>;
  list(query?: { toolName?: string; kind?: 'session' | 'stored'; sessionId?: string; userId?: string; includeRevoked?: boolean }): Promise<GrantRecord[]>;
  get(grantId: string): Promise<GrantRecord | undefined>;
  /** USD executed under the grant today (UTC). */
  spentToday(grantId: string): Promise<number>;
  /** USD the grant has left today under its daily cap (0 when revoked or expired); undefined without a daily cap. */
  leftToday(grantId: string): Promise<number | undefined>;
}

/** Capability switches: an operator turns one user's tool set off or back on (see `createCapabilitySwitches`). */
export interface CapabilitiesApi {
  /** Turn `toolSet` off for the user; true when it was on. An unknown tool set throws `INVALID_ARGUMENT`. */
  disable(toolSet: string, scope: { readonly userId: string; readonly reason?: string | undefined; readonly by?: string | undefined }): Promise<boolean>;
  /** Turn it back on; true when it was off. */
  enable(toolSet: string, scope: { readonly userId: string; readonly by?: string | undefined }): Promise<boolean>;
  /** The tool sets turned off, for one user or everyone. */
  list(query?: { readonly userId?: string | undefined }): Promise<CapabilitySwitchRecord[]>;
}

/** Engage or release the emergency stop; while engaged only READ_ONLY tools run (in every process). */
/** Which stop: a user's (`{ userId }`), or the global one (no scope, or no `userId`). */
export interface EmergencyStopScope {
  readonly userId?: string | undefined;
  /** Who engages or releases it, for the audit row and the stored stop (a user id, `cli`, `sdk`). @default 'sdk' */
  readonly by?: string | undefined;
  /**
   * The authority acting: `operator` (the SDK host, the CLI, an operator's credential) or `user` (a tenant acting
   * on their own stop: the gateway for a tenant's credential, the `emergency_stop` tool). A stop is released only
   * at the level it was engaged: a `user` may release only the stop they engaged themselves, never the global
   * stop or one an operator engaged on them (`STOP_RELEASE_FORBIDDEN`). @default 'operator'
   */
  readonly actor?: 'operator' | 'user' | undefined;
}

/** Whether a stop applies, and which one. */
export interface EmergencyStopStatus {
  readonly engaged: boolean;
  readonly reason?: string | undefined;
  /** ISO time it was engaged. */
  readonly since?: string | undefined;
  /** `global` (the operator's, halts everyone) or `user` (halts one user's agent); absent when not engaged. */
  readonly scope?: 'global' | 'user' | undefined;
  /** The user of a `user` stop. */
  readonly userId?: string | undefined;
  /** Who engaged it: `operator` (only an operator releases it) or `user` (the user themself). Absent when not engaged. */
  readonly engagedBy?: 'operator' | 'user' | undefined;
  /** The `by` it was engaged with (a user id, `cli`, `sdk`), when recorded. */
  readonly by?: string | undefined;
}

/**
 * The emergency stop, per user or global (see `createEmergencyStop`). `status({ userId })` answers for that user's
 * calls: the global stop when engaged, else the user's own; `status()` answers for the global stop only.
 */
export interface EmergencyStopApi {
  /** Engage the global stop (no scope: an operator action) or one user's. */
  engage(reason: string, scope?: EmergencyStopScope): Promise<void>;
  /** Release the global stop (no scope) or one user's; the other scope is untouched. */
  release(scope?: EmergencyStopScope): Promise<void>;
  status(scope?: EmergencyStopScope): Promise<EmergencyStopStatus>;
  /** The user's own stop, whether or not the global one is engaged (what a banner or a prompt shows beside it). */
  userStatus(userId: string): Promise<EmergencyStopStatus>;
}

/** The tool registry: the single path that runs a tool. */
export interface ToolRegistry {
  register(tool: ToolEntry | readonly ToolEntry[]): void;
  /** The tool, or undefined when unknown or hidden by its `checkFn`. */
  get(name: string): ToolEntry | undefined;
  has(name: string): boolean;
  /** Visible tools, in registration order, optionally only those in the given tool sets (with `includes`). */
  list(filter?: { toolSets?: readonly string[] | undefined }): ToolEntry[];
  /** Tool sets known to the registry. */
  toolSets(): ToolSetDefinition[];
  /** The tool-set names a set covers, itself included (transitive `includes`). */
  expandToolSets(names: readonly string[]): Set<string>;
  /** Run a tool through validation, the gate, hooks, the handler and audit; returns the envelope JSON. */
  dispatch(name: string, args: unknown, options?: DispatchOptions): Promise<string>;
  /** Like `dispatch` with the whole outcome. */
  dispatchDetailed(name: string, args: unknown, options?: DispatchOptions): Promise<DispatchOutcome>;
  /** Run `fn` with `context` as the ambient call context. */
  runInContext<T>(context: ToolCallContext, fn: () => T): T;
  /** The ambient call context, if any. */
  currentContext(): ToolCallContext | undefined;
  readonly approvals: ApprovalsApi;
  readonly grants: GrantsApi;
  readonly emergencyStop: EmergencyStopApi;
  /** Capability switches: a user's tool set turned off, enforced at dispatch. */
  readonly capabilities: CapabilitiesApi;
  /** The per-user circuit breakers dispatch enforces (undefined when built with `breakers: false`). */
  readonly breakers: CircuitBreakers | undefined;
  /** Where this registry keeps approvals, grants, the emergency stop and the audit log. */
  readonly storage: Storage;
  /** Audit rows, newest first. */
  queryAudit(filter?: AuditQuery): Promise<AuditEntry[]>;
}
