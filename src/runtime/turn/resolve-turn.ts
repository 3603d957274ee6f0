import { MinaraError } from '../../errors/minara-error';
import { errorText } from './block-codes';
import type { TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/**
 * End of stage 8, after the model finished: the stop reason the stream left is settled (token budget, pending
 * approvals), and a turn stopped by a repeated blocked call says so in its reply.
 */
export function settleStopReason(turn: TurnState, emit: Emit): void {
  if (turn.stopReason === 'finished' && turn.usage.inputTokens + turn.usage.outputTokens >= turn.turnTokenBudget) turn.stopReason = 'token-budget';
  if (turn.askedUser && turn.stopReason !== 'aborted') turn.stopReason = 'clarification';
  if (turn.pendingApprovals.length > 0) turn.stopReason = 'approval-required';
  if (turn.stopReason === 'repeated-blocked-call') {
    const note = '\n\nI stopped here: the same action was blocked more than once, so retrying will not help. Tell me how you want to proceed.';
    turn.text += note;
    emit({ type: 'text-delta', delta: note });
    turn.responseMessages.push({ role: 'assistant', content: note.trim() });
  }
}

/** A stage between prepare and the model threw: an aborted turn stops as `aborted`, any other failure is an `error` event. */
export function failTurn(deps: TurnDeps, turn: TurnState, error: unknown, emit: Emit): void {
  if (turn.input.abortSignal?.aborted) turn.stopReason = 'aborted';
  else {
    turn.stopReason = 'error';
    const e = MinaraError.isInstance(error) ? error : undefined;
    emit({ type: 'error', code: e?.code ?? 'MODEL_ERROR', message: errorText(error), retryable: e?.retryable ?? false });
    // No model configured is the caller's to show (the error event carries how to set one): logging it as an
    // error too printed the same failure twice, once as a JSON line on stderr.
    if (e?.code !== 'MODEL_NOT_CONFIGURED') deps.logger.error('turn failed', { sessionId: turn.ctx.sessionId, turnId: turn.turnId, error: errorText(error) });
  }
}
