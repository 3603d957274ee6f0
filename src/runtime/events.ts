import type { CallSource } from '../safety/permission-tier';
import type { ApprovalProvenance, ToolEnvelope } from '../tools/envelope';
import type { PostTurnRecord } from './types';

/** Token usage of one step or a whole turn. */
export interface TurnUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Input tokens read from the provider's prompt cache. */
  readonly cacheReadTokens: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cacheWriteTokens: number;
}

/** Why a turn ended. */
export type TurnStopReason =
  | 'finished'
  | 'approval-required'
  /** The model asked the user a question (`clarify`); the answer is the next message. */
  | 'clarification'
  | 'max-steps'
  | 'token-budget'
  | 'repeated-blocked-call'
  | 'aborted'
  | 'error';

/** An approval the turn is waiting for. */
export interface PendingApproval {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly reason: string;
  readonly tier: number;
  readonly expiresAt: string;
  /** What a grant covering this fund-moving tool for the user has left today (UTC), when one has a daily cap. */
  readonly grantLeftTodayUsd?: number | undefined;
  /** Set when the call was proposed after untrusted content entered the conversation: "proposed after reading: …". */
  readonly provenance?: ApprovalProvenance | undefined;
}

/**
 * The one event stream of a turn, consumed identically by the CLI and the gateway.
 * `type` is a kebab-case noun-verb; every event is one readonly object.
 */
export type AgentEvent =
  | { readonly type: 'turn-start'; readonly turnId: string; readonly sessionId: string; readonly traceId: string; readonly source: CallSource; readonly at: string }
  /**
   * Something that reads as prompt injection or a secret entered the turn. For untrusted content (a tool result, a
   * webhook payload) `source` names where it came from and `pattern` is `instruction:<classes>` (the classifier's).
   */
  | {
      readonly type: 'input-flagged'; readonly target: 'message' | 'memory' | 'workspace' | 'history' | 'tool'; readonly kind: 'prompt_injection' | 'secret';
      readonly pattern: string; readonly excerpt: string; readonly source?: string | undefined;
    }
  | { readonly type: 'skill-activated'; readonly skillIds: readonly string[]; readonly via: 'signal' | 'scenario' | 'model' | 'session'; readonly shed: readonly string[] }
  | { readonly type: 'compaction'; readonly beforeTokens: number; readonly afterTokens: number; readonly steps: readonly string[] }
  | { readonly type: 'text-delta'; readonly delta: string }
  | { readonly type: 'tool-call'; readonly toolCallId: string; readonly toolName: string; readonly input: unknown }
  | { readonly type: 'tool-result'; readonly toolCallId: string; readonly toolName: string; readonly output: ToolEnvelope }
  | { readonly type: 'tool-blocked'; readonly toolCallId: string; readonly toolName: string; readonly code: string; readonly reason: string }
  | ({ readonly type: 'approval-request' } & PendingApproval)
  /**
   * The model asked the user a question with `clarify`; the turn ends (`stopReason: 'clarification'`). Render the
   * choices (send the picked `value` as the next message) and, when `allowFreeText`, a text box.
   */
  | {
      readonly type: 'clarification-request';
      readonly toolCallId: string;
      readonly question: string;
      readonly choices: ReadonlyArray<{ readonly label: string; readonly value: string }>;
      readonly allowFreeText: boolean;
    }
  | { readonly type: 'step-end'; readonly stepNumber: number; readonly finishReason: string; readonly usage: TurnUsage }
  | {
      readonly type: 'turn-end';
      readonly turnId: string;
      readonly sessionId: string;
      readonly text: string;
      readonly stopReason: TurnStopReason;
      readonly steps: number;
      /** Tokens of the whole turn, delegated sub-agent turns included. */
      readonly usage: TurnUsage;
      /** The part of `usage` spent by delegated sub-agent turns (absent when none ran). */
      readonly delegatedUsage?: TurnUsage | undefined;
      readonly toolsUsed: readonly string[];
      readonly pendingApprovals: readonly PendingApproval[];
      /** The model that answered the last step, as its provider reports it (with a fallback model: the one that served). */
      readonly modelId?: string | undefined;
      /** The untrusted sources the conversation had read by the end of the turn (see `PostTurnRecord.untrustedSources`). */
      readonly untrustedSources?: readonly string[] | undefined;
    }
  /** The `post_turn` record, emitted once just before `turn-end`: tool calls, executions, skills and methodologies in play. */
  | { readonly type: 'post-turn'; readonly record: PostTurnRecord }
  | { readonly type: 'error'; readonly code: string; readonly message: string; readonly retryable: boolean }
  /** An event of a sub-agent turn the `delegate` call `toolCallId` runs, nested in the parent's stream. */
  | { readonly type: 'subagent'; readonly toolCallId: string; readonly sessionId: string; readonly event: AgentEvent };

/** Where a turn's `emit` is kept in its ToolCallContext `state`, so a tool (`delegate`) can nest events in the stream. */
export const TURN_EMIT_KEY = 'minara.turn.emit';

/** The `type` of every {@link AgentEvent}. */
export type AgentEventType = AgentEvent['type'];

export const ZERO_USAGE: TurnUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

export function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}
