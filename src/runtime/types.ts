import type { UntrustedSource } from '../safety/untrusted';
import type { TelemetryOptions } from 'ai';
import type { LanguageModel } from 'ai';
import type { MinaraBus } from '../events/bus';
import type { MemoryStore } from '../memory/types';
import type { CallSource } from '../safety/permission-tier';
import type { SkillRegistry } from '../skills/registry';
import type { LifecycleStage } from '../skills/taxonomy';
import type { SignalContext } from '../skills/types';
import type { Storage } from '../storage/types';
import type { ToolOrderFacts, ToolRegistry } from '../tools/types';
import type { IdGenerator } from '../util/ids';
import type { Logger } from '../util/logger';
import type { ModelPrice } from '../llm/pricing';
import type { Workspace } from '../workspace/workspace';
import type { MessageTranslator } from '../files/message-translator';
import type { CompactionOptions } from './compaction';
import type { AgentEvent, PendingApproval, TurnStopReason, TurnUsage } from './events';

/** The tenant a turn runs for; memory is scoped by it. */
export interface TurnScope {
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly sessionId: string;
}

/** What the L0.5 scenario classifier returns for a message (e.g. from the finance pack). */
export interface ScenarioMatch {
  readonly id: string;
  /** A short procedural playbook injected into the dynamic prompt tail. */
  readonly playbook: string;
  /** Skills to preload for this turn. */
  readonly preloadSkills?: readonly string[] | undefined;
  readonly score?: number | undefined;
  readonly reasons?: readonly string[] | undefined;
}

/** Picks at most one scenario per turn, deterministically. */
export interface ScenarioClassifier {
  classify(message: string, context: { readonly source: CallSource }): ScenarioMatch | undefined;
}

/** One tool call of a finished turn, for decision-capture hooks. */
export interface TurnToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly decision: string;
  readonly ok: boolean;
  readonly code?: string | undefined;
}

/** The fill an execution reported (the `fill` of an order result), when its handler said. */
export interface TurnExecutionFill {
  readonly symbol: string;
  readonly side: string;
  readonly quantity: number;
  readonly price: number;
  readonly notionalUsd: number;
  readonly feeUsd: number;
  readonly realizedPnlUsd: number;
}

/** One fund-moving execution of a turn (confirmed, executed and successful), as decision capture records it. */
export interface TurnExecution {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  /** The registry's normalised order facts of the call (notional, asset, side, quantity). */
  readonly orderFacts: ToolOrderFacts;
  /** The provider's order id, when the result carries one (`orderId`). */
  readonly orderId?: string | undefined;
  /** `filled`, `duplicate` when the provider had already executed this client order id, or `queued` (fills later; not yet a trade). */
  readonly status?: string | undefined;
  /** The fill facts, when the result carries them (`fill`). */
  readonly fill?: TurnExecutionFill | undefined;
  /** Provider name and whether it was simulated, when the result says. */
  readonly provider?: string | undefined;
  readonly simulated?: boolean | undefined;
  /** When it executed (the result's `at`, else the dispatch time). */
  readonly at: string;
  /** The agent role (`agentId`) or the active skill that offers the tool, else `agent`. */
  readonly role: string;
}

/**
 * The `post_turn` record: what end-of-turn hooks receive and what the `post-turn` event carries. Decision
 * capture, usage accounting and observability all read this one record.
 */
export interface TurnSummary {
  readonly sessionId: string;
  readonly turnId: string;
  readonly traceId: string;
  readonly source: CallSource;
  readonly userId: string;
  readonly userText?: string | undefined;
  readonly text: string;
  readonly stopReason: TurnStopReason;
  readonly steps: number;
  /** Tokens of the whole turn, delegated sub-agent turns included. */
  readonly usage: TurnUsage;
  /** The part of `usage` spent by delegated sub-agent turns (absent when none ran). */
  readonly delegatedUsage?: TurnUsage | undefined;
  readonly toolCalls: readonly TurnToolCall[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly turnCount: number;
  /** The model that answered (as on `turn-end`), when the provider reported it. */
  readonly modelId?: string | undefined;
  readonly agentId?: string | undefined;
  /** Skills active at the end of the turn. */
  readonly activeSkills: readonly string[];
  /** Methodologies the learning loop put in this turn's prompt. */
  readonly methodologyIds: readonly number[];
  /** Learned preferences the learning loop put in this turn's prompt. */
  readonly preferenceIds: readonly number[];
  /** The turn's fund-moving executions with their order facts. */
  readonly executions: readonly TurnExecution[];
  /**
   * The untrusted sources the conversation had read by the end of this turn (URLs, `mcp:<server>/<tool>`,
   * `webhook:<id>`, `upload:<key>`); absent when none. Kept with the turn: the session state carries them on.
   */
  readonly untrustedSources?: readonly string[] | undefined;
  /** The message itself came from outside (a webhook payload, content the host labelled): extraction skips it. */
  readonly messageUntrusted?: boolean | undefined;
  /**
   * The L0.5 scenario (`SCENARIO_SPOT_TRADE`, …) of the message the turn decided on: its own, or for a run that
   * only carries approval decisions, the message of the turn that proposed the calls. Decision capture stores it
   * with each trade; methodology synthesis groups trade cases by it.
   */
  readonly scenarioId?: string | undefined;
  /** The first lifecycle stage (`discover`, `evaluate`, `decide`, `manage`) the same message shows. */
  readonly stage?: LifecycleStage | undefined;
}

/** The `post_turn` record (the same object as {@link TurnSummary}). */
export type PostTurnRecord = TurnSummary;

/** What the learning loop adds to a turn before the model is called. */
export interface TurnLearningContext {
  /** Text for the dynamic prompt tail (after the workspace blocks), or undefined for none. */
  readonly block?: string | undefined;
  readonly methodologyIds: readonly number[];
  readonly preferenceIds: readonly number[];
}

/**
 * The learning loop as the runtime sees it (`createTurnLearning` in `@minara/agent` implements it): before the
 * model is called it runs preference graduation and returns the learned block for the dynamic tail; after
 * the turn it captures the decisions of the `post_turn` record. Failures are logged; the turn goes on.
 */
export interface TurnLearning {
  prepareTurn(input: { readonly scope: TurnScope; readonly source: CallSource; readonly message?: string | undefined }): Promise<TurnLearningContext>;
  captureTurn(record: PostTurnRecord): Promise<void>;
}

/** What an `onTurnStart` hook learns about the turn. */
export interface TurnStartInfo {
  readonly turnId: string;
  readonly sessionId: string;
  readonly source: CallSource;
  readonly userId: string;
}

/** Options of {@link createAgentRuntime}. */
export interface AgentRuntimeOptions {
  /** Any AI SDK language model. */
  readonly model: LanguageModel;
  /** The tool registry; every tool call goes through its dispatch. */
  readonly tools: ToolRegistry;
  /**
   * Conversations, approvals and the runtime's per-session state. It must be the registry's storage (a
   * different one is refused with `CONFIG_INVALID`). @default the registry's storage (`tools.storage`)
   */
  readonly storage?: Storage | undefined;
  /** Skills: routed every turn; `activate_skills` and `tool_invoke` are registered when missing. */
  readonly skills?: SkillRegistry | undefined;
  /** Memory: one store, or a function that gives the store for a turn's scope (multi-tenant hosts). */
  readonly memory?: MemoryStore | ((scope: TurnScope) => MemoryStore) | undefined;
  /**
   * The markdown workspace: identity and dynamic blocks, and the end-of-turn hook. A function gives each
   * tenant its own (e.g. `createTenantWorkspace`), like `memory`, so no tenant's heartbeat, journal or notes
   * reach another tenant's prompt.
   */
  readonly workspace?: Workspace | ((scope: TurnScope) => Workspace | undefined) | undefined;
  /**
   * One `workspace` object belongs to the default user: a turn for any other user is refused (`CONFIG_INVALID`)
   * unless this is true, and then each other user gets a tenant view over it (`createTenantWorkspace`: the
   * operator's identity files, the user's own USER.md, MEMORY.md, heartbeat and journal), so no user's sessions,
   * approvals or journal reach another user's prompt. A gateway with per-user identities refuses a runtime with one
   * workspace object unless this is true. @default false
   */
  readonly sharedWorkspace?: boolean | undefined;
  /** L0.5 scenario classifier (playbook + preloads). */
  readonly scenarios?: ScenarioClassifier | undefined;
  /** A cheaper model for LLM autocompaction. @default no LLM compaction (hard trim instead) */
  readonly utilityModel?: LanguageModel | undefined;
  /** Replaces the built-in persona when no workspace identity is present. */
  readonly identity?: string | undefined;
  /** Model steps per turn. @default 12 */
  readonly maxSteps?: number | undefined;
  /** Cumulative input + output tokens one turn may spend across its steps. @default 400000 */
  readonly turnTokenBudget?: number | undefined;
  /** The compaction ladder's settings (context window, thresholds, …). */
  readonly compaction?: Omit<CompactionOptions, 'summarizer' | 'reinject'> | undefined;
  /** Tenant when a run gives none. @default 'default' */
  readonly defaultUserId?: string | undefined;
  /** Tool sets cron and heartbeat turns may use when the run gives none. @default ['read', 'memory', 'web'] */
  readonly cronAllowedToolSets?: readonly string[] | undefined;
  /** Surface name for the heartbeat (`repl`, `gateway`, …). @default 'sdk' */
  readonly surface?: string | undefined;
  /**
   * Called at the start of every turn, before its prompt and tool list are built: the turn boundary where a
   * host may change the registry (`createApp` registers MCP servers' new tools here). A hook that throws is
   * logged and the turn goes on. Each turn awaits its hooks: keep them short.
   */
  readonly onTurnStart?: ReadonlyArray<(turn: TurnStartInfo) => void | Promise<void>> | undefined;
  /**
   * Notices from the host for a turn's prompt (the `## Notices` block of the dynamic tail, after the
   * workspace's): `createApp` hands the user, once, a HEARTBEAT.md schedule entry the runner had to ignore.
   * Called once per turn; a provider that throws is logged and the turn goes on without its notices.
   */
  readonly notices?: ((turn: TurnStartInfo) => readonly string[] | Promise<readonly string[]>) | undefined;
  /**
   * The AI SDK's telemetry settings, passed to every model call (its own spans, under the turn's `minara.turn`).
   * @default the AI SDK's default; record inputs only if your tracing backend may hold message text
   */
  readonly telemetry?: TelemetryOptions | undefined;
  /**
   * The learning loop: learned methodologies and preferences in the dynamic tail, preference graduation before
   * the model is called, decision capture after the turn (before `onTurnEnd`). @default none
   */
  readonly learning?: TurnLearning | undefined;
  /**
   * Attachments: turns a run's `attachments` (file keys) into reference parts of the stored user message and,
   * before each model call, reference parts into the provider's image, file or text parts (`createMessageTranslator`).
   * Without it, a run with attachments is refused. @default none
   */
  readonly messageTranslator?: MessageTranslator | undefined;
  /**
   * The usage ledger: after every turn (a sub-agent's tokens count in its parent's turn) its tokens and cost go to
   * `storage.usage`, which `GET /v1/usage` sums. `false` records nothing. @default true
   */
  readonly recordUsage?: boolean | undefined;
  /**
   * When the audit rows of side-effect-free calls (tools declared `sideEffects: false`) commit. `'with-turn'`: held
   * and committed with the turn's stored messages, one commit a turn instead of one a call, or earlier: before the
   * turn calls any other tool (its gate, grants and breakers see them), and whenever 32 are held. `'per-call'`: each
   * as its call returns, like every other row. A process that dies mid-turn loses the held rows with the turn's
   * unsaved messages; a call with side effects never has its own row held (docs/runtime.md, "Eleventh round").
   * @default 'with-turn'
   */
  readonly sideEffectFreeAuditRows?: 'with-turn' | 'per-call' | undefined;
  /** Prices per model id (USD per million tokens) for the ledger's cost, merged over `DEFAULT_MODEL_PRICES`. @default DEFAULT_MODEL_PRICES */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined;
  /** Decision-capture and observability hooks, called after every turn (errors are logged). */
  readonly onTurnEnd?: ReadonlyArray<(summary: TurnSummary) => void | Promise<void>> | undefined;
  readonly bus?: MinaraBus | undefined;
  readonly logger?: Logger | undefined;
  readonly now?: (() => Date) | undefined;
  readonly generateId?: IdGenerator | undefined;
}

/** A decision on a pending approval, sent with the next run. */
export interface ApprovalDecision {
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string | undefined;
}

/** Input of `runtime.run`. Give a `message`, `approvals`, or both. */
export interface RunInput {
  readonly sessionId: string;
  readonly message?: string | undefined;
  /**
   * Keys of uploaded files (`fileStore.put`, `POST /v1/files`) attached to `message`; they must be the run's user's.
   * Needs the runtime's `messageTranslator`.
   */
  readonly attachments?: readonly string[] | undefined;
  /** @default 'user' */
  readonly source?: CallSource | undefined;
  /**
   * The message (or its parts) came from outside the person and the operator (another user's shared content, a
   * forwarded e-mail, a document): label the turn untrusted with these sources. A `webhook` turn is labelled
   * `webhook:<signal id>` without it; attachments are labelled `upload:<key>`.
   */
  readonly untrusted?: readonly UntrustedSource[] | undefined;
  /** The signal of a cron or webhook turn (preloads skills, suggests stages). */
  readonly signal?: SignalContext | undefined;
  /** Tool sets this turn may use (cron defaults to `cronAllowedToolSets`). */
  readonly allowedToolSets?: readonly string[] | undefined;
  /** Cancels the turn. */
  readonly abortSignal?: AbortSignal | undefined;
  /** Decisions on approvals this session is waiting for; the calls are re-validated and run or denied. */
  readonly approvals?: readonly ApprovalDecision[] | undefined;
  readonly userId?: string | undefined;
  readonly agentId?: string | undefined;
  /** The turn was written by the operator (lifts the sandbox-skill refusal for autonomous sources). */
  readonly operatorAuthored?: boolean | undefined;
  /** Overrides the runtime's surface for this turn's heartbeat. */
  readonly surface?: string | undefined;
  /** Model steps for this run; only lowers the runtime's `maxSteps`. */
  readonly maxSteps?: number | undefined;
  /** Tokens for this run; only lowers the runtime's `turnTokenBudget`. */
  readonly turnTokenBudget?: number | undefined;
  /**
   * How the model is called: `'stream'` (the default: `streamText`, text and calls as they arrive) or
   * `'generate'` (`generateText`, the model's non-streaming call: each step's events arrive when the step ends).
   * The turn's tools, gate, audit, stored messages and result are the same either way; `'generate'` costs a
   * fraction of the CPU per step (no stream pipeline), which is what a backtest or batch job wants. Keep
   * `'stream'` for a person watching, and for providers that require streaming for long outputs.
   * @default 'stream'
   */
  readonly modelCall?: 'stream' | 'generate' | undefined;
}

/** A whole turn collected by `runtime.generate`. */
export interface GenerateResult {
  readonly text: string;
  readonly stopReason: TurnStopReason;
  readonly usage: TurnUsage;
  readonly steps: number;
  readonly pendingApprovals: readonly PendingApproval[];
  readonly events: readonly AgentEvent[];
  readonly turnId: string;
}

/** Runtime options once resolved: the storage is always the registry's. */
export type ResolvedRuntimeOptions = AgentRuntimeOptions & { readonly storage: Storage };
