import { isClarification } from '../../tools/session-tools';
import type { TextStreamPart, ToolSet } from 'ai';
import type { ApprovalRecord } from '../../storage/types';
import type { ToolEnvelope } from '../../tools/envelope';
import { addUsage, type PendingApproval, type TurnUsage } from '../events';
import { auditUndispatchedCall } from './audit-trail';
import { FLAGGED_KEY, flagPassages } from './label-input';
import { turnProvenance } from '../../safety/untrusted';
import { BLOCK_CODES, errorText } from './block-codes';
import { recordCall, type TurnState } from './state';
import type { Emit, TurnDeps } from './types';

const OVERFLOW = /context(?:[_ -]length| window)|too many tokens|prompt is too long|maximum context|input is too long|reduce the length/i;

/**
 * What handling one part left to the stream loop: nothing, a context-window overflow the loop may still retry,
 * or a storage read to wait for before the next part (kept synchronous otherwise, so the stream is consumed
 * without extra ticks).
 */
export type StreamPartResult = undefined | { readonly overflow: unknown } | { readonly pending: Promise<void> };

/**
 * Part of stage 8: one part of the model's stream becomes events and turn state (text, usage, steps, calls,
 * pending approvals, stop reason). An error part that is not a retryable overflow is thrown.
 */
export function handleStreamPart(deps: TurnDeps, turn: TurnState, part: TextStreamPart<ToolSet>, attempt: number, emit: Emit): StreamPartResult {
  switch (part.type) {
    case 'text-delta':
      turn.text += part.text;
      emit({ type: 'text-delta', delta: part.text });
      break;
    case 'tool-call':
      emit({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
      break;
    case 'tool-result': {
      const pending = handleToolResult(deps, turn, part, emit);
      if (pending) return { pending };
      break;
    }
    case 'tool-error':
      emit({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: { ok: false, error: String(part.error), code: 'TOOL_EXECUTION_FAILED', retryable: false } });
      // A call that never reached dispatch (not offered this turn, unparseable input) is still a row of the audit trail.
      if (!turn.outcomes.has(part.toolCallId)) return { pending: auditUndispatchedCall(deps, turn.ctx, part, turn.auditBatch) };
      break;
    case 'finish-step': {
      turn.stepCount++;
      const u: TurnUsage = {
        inputTokens: part.usage.inputTokens ?? 0,
        outputTokens: part.usage.outputTokens ?? 0,
        cacheReadTokens: part.usage.inputTokenDetails?.cacheReadTokens ?? 0,
        cacheWriteTokens: part.usage.inputTokenDetails?.cacheWriteTokens ?? 0,
      };
      turn.usage = addUsage(turn.usage, u);
      emit({ type: 'step-end', stepNumber: turn.stepCount, finishReason: part.finishReason, usage: u });
      if (part.finishReason === 'tool-calls' && turn.stepCount >= turn.maxSteps && turn.pendingApprovals.length === 0 && turn.stopReason === 'finished') turn.stopReason = 'max-steps';
      break;
    }
    case 'abort':
      turn.stopReason = 'aborted';
      break;
    case 'error':
      if (OVERFLOW.test(errorText(part.error)) && attempt < 2) return { overflow: part.error };
      throw part.error;
    default:
      break;
  }
  return undefined;
}

type ToolResultPart = Extract<TextStreamPart<ToolSet>, { type: 'tool-result' }>;

/**
 * A call returned: classify it by its envelope (a call made through tool_invoke carries the inner call's
 * outcome) as an approval request, a blocked call or a result. Returns a promise only when the approval
 * record must be read from storage.
 */
function handleToolResult(deps: TurnDeps, turn: TurnState, part: ToolResultPart, emit: Emit): Promise<void> | undefined {
  const outcome = turn.outcomes.get(part.toolCallId);
  const envelope = part.output as ToolEnvelope;
  if (outcome) recordCall(turn.toolCalls, part.toolCallId, part.toolName, part.input, outcome);
  if (!envelope.ok && envelope.code === 'APPROVAL_REQUIRED' && envelope.approval) {
    const a = envelope.approval;
    if (outcome?.approval?.id === a.approvalId) requestApproval(turn, part, a, outcome.approval, emit);
    else return deps.options.tools.approvals.get(a.approvalId).then((record) => requestApproval(turn, part, a, record, emit));
  } else if (!envelope.ok && BLOCK_CODES.has(String(envelope.code))) {
    emit({ type: 'tool-blocked', toolCallId: part.toolCallId, toolName: part.toolName, code: String(envelope.code), reason: envelope.error });
    if (envelope.code === 'REPEATED_BLOCKED_CALL') turn.stopReason = 'repeated-blocked-call';
  } else {
    emit({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: envelope });
    if (envelope.ok && isClarification(envelope.data)) {
      turn.askedUser = true;
      const q = envelope.data;
      emit({ type: 'clarification-request', toolCallId: part.toolCallId, question: q.question, choices: q.choices, allowFreeText: q.allowFreeText });
    }
    // Instruction-like passages in an untrusted tool's result (labelled at dispatch): shown to the person.
    // (A call made through tool_invoke has its own call id: the passages not yet shown are this result's.)
    const all = turnProvenance(turn.ctx)?.passages ?? [];
    const shown = (turn.ctx.state.get(FLAGGED_KEY) as number | undefined) ?? 0;
    const passages = all.slice(shown);
    turn.ctx.state.set(FLAGGED_KEY, all.length);
    const flagged = passages.length > 0 ? flagPassages(deps, turn.ctx, passages, 'tool', emit) : undefined;
    // A tool that scanned untrusted content it returned (MCP results) lists its findings: surface them.
    const untrusted = envelope.ok ? (envelope.data as { untrusted?: unknown } | undefined)?.untrusted : undefined;
    if (Array.isArray(untrusted)) {
      for (const f of untrusted as Array<{ kind?: unknown; pattern?: unknown }>) {
        if (f?.kind !== 'prompt_injection' && f?.kind !== 'secret') continue;
        emit({ type: 'input-flagged', target: 'tool', kind: f.kind, pattern: String(f.pattern), excerpt: part.toolName });
      }
    }
    if (flagged) return flagged;
  }
  return undefined;
}

/** The call waits for the user: a pending approval on the turn and an `approval-request` event. */
function requestApproval(
  turn: TurnState,
  part: ToolResultPart,
  a: NonNullable<Extract<ToolEnvelope, { ok: false }>['approval']>,
  record: ApprovalRecord | undefined,
  emit: Emit,
): void {
  const pending: PendingApproval = {
    approvalId: a.approvalId, toolCallId: part.toolCallId, toolName: record?.toolName ?? a.toolName,
    input: record ? (JSON.parse(record.inputJson) as unknown) : part.input, reason: a.reason, tier: record?.tier ?? 0, expiresAt: a.expiresAt,
    ...(a.grantLeftTodayUsd !== undefined ? { grantLeftTodayUsd: a.grantLeftTodayUsd } : {}),
    ...(a.provenance !== undefined ? { provenance: a.provenance } : {}),
  };
  turn.pendingApprovals.push(pending);
  emit({ type: 'approval-request', ...pending });
}
