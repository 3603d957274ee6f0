import { MinaraError } from '../../errors/minara-error';
import type { ToolEnvelope } from '../../tools/envelope';
import type { DispatchOutcome, ToolCallContext } from '../../tools/types';
import { replaceToolResult, toNewMessages } from '../conversation';
import type { AgentEvent } from '../events';
import { BLOCK_CODES, errorText } from './block-codes';
import { recordCall, type TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/**
 * Stage 4, apply approval decisions: each decision of the run is recorded and its call re-dispatched; the
 * result replaces the call's placeholder in the history (or is appended as a note). The history is rewritten
 * once if this stage or the repair before it changed it (`dirty`).
 */
export async function applyApprovalDecisions(deps: TurnDeps, turn: TurnState, dirty: boolean, emit: Emit): Promise<void> {
  const { options, now } = deps;
  const { ctx, input, turnId } = turn;
  let historyDirty = dirty;
  for (const decision of input.approvals ?? []) {
    const resolved = await resolveApproval(deps, ctx, decision);
    if (resolved.event) emit(resolved.event);
    if (resolved.envelope && resolved.toolCallId) {
      const r = replaceToolResult(turn.history, { toolCallId: resolved.toolCallId, approvalId: decision.approvalId }, resolved.envelope);
      if (r.found) turn.history = r.messages;
      else turn.history = [...turn.history, { role: 'user', content: `[Approval ${decision.approvalId} for ${resolved.toolName}: ${JSON.stringify(resolved.envelope)}]` }];
      historyDirty = true;
    }
    if (resolved.toolName && resolved.outcome) recordCall(turn.toolCalls, resolved.toolCallId ?? '', resolved.toolName, resolved.input, resolved.outcome);
  }
  if (historyDirty) await options.storage.conversations.replaceMessages(ctx.sessionId, toNewMessages(turn.history, turnId, now()));
}

/** Decide one pending approval and re-dispatch its call with it (or explain why not). */
async function resolveApproval(
  deps: TurnDeps,
  ctx: ToolCallContext,
  decision: { approvalId: string; approved: boolean; reason?: string | undefined },
): Promise<{ event?: AgentEvent; envelope?: ToolEnvelope; toolCallId?: string; toolName?: string; input?: unknown; outcome?: DispatchOutcome }> {
  const { tools } = deps.options;
  const record = await tools.approvals.get(decision.approvalId);
  if (!record) return { event: { type: 'error', code: 'APPROVAL_NOT_FOUND', message: `No approval request "${decision.approvalId}".`, retryable: false } };
  if (record.sessionId !== undefined && record.sessionId !== ctx.sessionId) {
    return { event: { type: 'error', code: 'APPROVAL_INVALID', message: `Approval "${decision.approvalId}" belongs to another session.`, retryable: false } };
  }
  if (record.status === 'pending') {
    try {
      await tools.approvals.decide(decision.approvalId, { approved: decision.approved, reason: decision.reason });
    } catch (error) {
      const e = MinaraError.isInstance(error) ? error : undefined;
      const envelope: ToolEnvelope = { ok: false, error: errorText(error), code: e?.code ?? 'APPROVAL_INVALID', retryable: false };
      return { event: { type: 'tool-blocked', toolCallId: record.toolCallId, toolName: record.toolName, code: String(envelope.code), reason: envelope.error }, envelope, toolCallId: record.toolCallId, toolName: record.toolName };
    }
  }
  // Re-dispatch with the approval: input validation, hooks and the gate run again against the current policy.
  const input = JSON.parse(record.inputJson) as unknown;
  const outcome = await tools.dispatchDetailed(record.toolName, input, { context: ctx, approvalId: record.id, toolCallId: record.toolCallId });
  const envelope = outcome.envelope;
  const event: AgentEvent =
    !envelope.ok && BLOCK_CODES.has(String(envelope.code))
      ? { type: 'tool-blocked', toolCallId: record.toolCallId, toolName: record.toolName, code: String(envelope.code), reason: envelope.error }
      : { type: 'tool-result', toolCallId: record.toolCallId, toolName: record.toolName, output: envelope };
  return { event, envelope, toolCallId: record.toolCallId, toolName: record.toolName, input, outcome };
}
