import type { MinaraBus } from '../../events/bus';
import type { ApprovalService } from '../../safety/approvals';
import type { CircuitBreakers } from '../../safety/circuit-breakers';
import type { GrantService } from '../../safety/grants';
import type { PermissionTier } from '../../safety/permission-tier';
import type { GateDecision } from '../../safety/tier-gate';
import type { CallProvenance, ResolvedUntrustedContentPolicy } from '../../safety/untrusted';
import type { AuditDecision, Storage } from '../../storage/types';
import type { IdGenerator } from '../../util/ids';
import type { Logger } from '../../util/logger';
import type { createContextCarrier } from '../context';
import type { DispatchOptions, EmergencyStopApi, ToolCallContext, ToolEntry, ToolHook, ToolOrderFacts, ToolSetDefinition } from '../types';

/** What every dispatch of one registry shares: its tools, sets, hooks and services, fixed by `createToolRegistry`. */
export interface DispatchEnv {
  readonly tools: ReadonlyMap<string, ToolEntry>;
  readonly sets: Map<string, ToolSetDefinition>;
  readonly hooks: readonly ToolHook[];
  readonly storage: Storage;
  /** Write one audit row per dispatch. */
  readonly auditEnabled: boolean;
  readonly approvals: ApprovalService;
  readonly grants: GrantService;
  readonly emergencyStop: EmergencyStopApi;
  /** The AsyncLocalStorage that carries the ambient call context. */
  readonly carrier: ReturnType<typeof createContextCarrier>;
  /** Identical blocked calls in one turn before the call is cut off. */
  readonly maxRepeatedBlocked: number;
  readonly bus: MinaraBus | undefined;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly generateId: IdGenerator;
  /** A tool whose `checkFn` fails is not available in this environment. */
  readonly visible: (t: ToolEntry) => boolean;
  /**
   * Production without an approval key outside the database: calls whose effective tier is this or above are
   * refused (an approval signed with a key anyone who reads the database holds would authorise them).
   */
  readonly keylessTierLimit?: number | undefined;
  /** Per-user circuit breakers for autonomous fund-moving calls (`dispatch/breakers.ts`). */
  readonly breakers?: CircuitBreakers | undefined;
  /** What untrusted content in a turn changes at the gate (`createToolRegistry({ untrustedContent })`). */
  readonly untrustedPolicy: ResolvedUntrustedContentPolicy;
}

/**
 * The one object a dispatch carries through its steps (src/tools/dispatch/pipeline.ts lists them). Fields
 * marked readonly are fixed when the call opens; the others are what the steps learn as the call goes on.
 */
export interface DispatchCall {
  readonly name: string;
  /** The input as the caller gave it. */
  readonly args: unknown;
  readonly opts: DispatchOptions;
  /** `performance.now()` when the dispatch began (durations in the audit row and the outcome). */
  readonly started: number;
  /** The call context: the ambient one (narrowed by `opts.context`), else `opts.context`, else a host context. */
  readonly ctx: ToolCallContext;
  readonly toolCallId: string;
  /** The tool, once found. */
  tool: ToolEntry | undefined;
  /** The static tier, raised by `tierFor` and hooks, never lowered. */
  tier: PermissionTier;
  /** A fund-moving call without `confirm: true` is a preview. */
  mode: 'preview' | 'execute';
  /** The validated input (the raw one until validation; a marker when its bounds were exceeded). */
  input: unknown;
  orderFacts: ToolOrderFacts | undefined;
  /** Reasons before-hooks gave to require an approval. */
  hookApprovalReasons: string[];
  /** The tier gate's decision, once taken. */
  gate: GateDecision | undefined;
  /** How an allowed call is audited: `approved` when it presented a consumed approval. */
  allowedDecision: AuditDecision;
  /** What the turn had read from outside when the call was proposed (undefined: nothing untrusted). */
  readonly provenance: CallProvenance | undefined;
}
