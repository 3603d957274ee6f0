import type { ModelMessage } from 'ai';
import type { CallSource } from '../../safety/permission-tier';
import type { SkillSession } from '../../skills/session';
import type { AuditBatch } from '../../tools/audit-batch';
import type { DispatchOutcome, ToolCallContext } from '../../tools/types';
import type { createCallJournal } from '../call-journal';
import type { PendingApproval, TurnStopReason, TurnUsage } from '../events';
import type { SessionState } from '../session-state';
import type { ApprovalRecord } from '../../storage/types';
import type { TurnDecisionContext } from './prepare-turn';
import type { RunInput, TurnLearningContext, TurnScope, TurnToolCall } from '../types';

/**
 * What the open stage reads ahead for later stages, begun together with the session row (`readTogether`: one look
 * at the database where the storage batches reads). A stage takes its value (and clears it), or reads for itself
 * when it is not there.
 */
export interface TurnReadAhead {
  state?: Promise<SessionState | undefined> | undefined;
  pending?: Promise<ApprovalRecord[]> | undefined;
  history?: Promise<ModelMessage[]> | undefined;
  journal?: Promise<string | undefined> | undefined;
}

/** Take one read from `ahead` (and clear it, so it is read once); undefined when the caller did not read ahead. */
export function takeReadAhead<K extends keyof TurnReadAhead>(ahead: TurnReadAhead | undefined, key: K): TurnReadAhead[K] {
  const value = ahead?.[key];
  if (ahead) ahead[key] = undefined;
  return value;
}

/**
 * The one mutable object a turn carries from stage to stage (src/runtime/turn.ts lists the stages). Fields
 * marked readonly are fixed when the turn opens; the others are what the stages produce as the turn runs.
 */
export interface TurnState {
  readonly turnId: string;
  readonly input: RunInput;
  readonly source: CallSource;
  /** The call context every dispatch of this turn runs in. */
  readonly ctx: ToolCallContext;
  /** The runtime's limits, lowered by the run's own (a run may only lower them). */
  readonly maxSteps: number;
  readonly turnTokenBudget: number;
  /**
   * The side-effect-free calls' audit rows held until the turn's end (`sideEffectFreeAuditRows: 'with-turn'`),
   * committed with its messages; undefined with `'per-call'`.
   */
  readonly auditBatch: AuditBatch | undefined;
  /** Each call that returns is journaled at once, so a step cut short (abort, crash) does not forget it. */
  readonly journal: ReturnType<typeof createCallJournal>;
  /** The reply text streamed so far. */
  text: string;
  stopReason: TurnStopReason;
  /** Tokens of this turn, including delegated sub-agent turns. */
  usage: TurnUsage;
  /** Delegated sub-agent turns: their events are nested in this stream, and their tokens count as this turn's. */
  delegatedUsage: TurnUsage;
  stepCount: number;
  /** The model that answered (a fallback model reports the one that served the step). */
  answeredBy: string | undefined;
  readonly pendingApprovals: PendingApproval[];
  /** A clarifying question (`clarify`) was asked: the turn ends after its step, like a pending approval. */
  askedUser: boolean;
  readonly toolCalls: TurnToolCall[];
  /** Dispatch outcomes of this turn's model tool calls, by tool call id. */
  readonly outcomes: Map<string, DispatchOutcome>;
  /** The session row existed when the turn opened (read once, by the owner check). */
  readonly sessionExists: boolean;
  /** Reads begun ahead with others (one look at the database, `readTogether`), each taken by the stage that needs it. */
  readonly readAhead: TurnReadAhead;
  /** The persisted session state (active skills, frozen memory snapshot, turn count). */
  session: SessionState;
  skillSession: SkillSession | undefined;
  scope: TurnScope;
  learned: TurnLearningContext | undefined;
  /** The scenario and lifecycle stage of the message the turn decides on (set by the prepare stage). */
  decision: TurnDecisionContext;
  /** The conversation as the model will see it (loaded, repaired, decided, compacted). */
  history: ModelMessage[];
  /** Messages the model produced in finished steps; persisted even when a later step fails. */
  responseMessages: ModelMessage[];
}

/** Record one dispatched call on the turn's list (the post-turn record's `toolCalls`). */
export function recordCall(list: TurnToolCall[], toolCallId: string, toolName: string, input: unknown, outcome: DispatchOutcome): void {
  list.push({ toolCallId, toolName, input, decision: outcome.decision, ok: outcome.envelope.ok, code: outcome.envelope.ok ? undefined : String(outcome.envelope.code) });
}
