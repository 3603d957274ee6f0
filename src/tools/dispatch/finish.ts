import type { MinaraErrorCode } from '../../errors/codes';
import { hashToolInput } from '../../safety/approvals';
import type { ApprovalRecord, AuditDecision } from '../../storage/types';
import { noteExecutedCall } from '../context';
import { err, type ToolEnvelope } from '../envelope';
import type { DispatchOutcome } from '../types';
import { writeAudit } from './audit';
import { extractAuditOutcome } from './outcome';
import { runAfterHooks } from './after-hooks';
import { measureBreakersAfter } from './measure-breakers';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * The last steps of every dispatch, whatever ended it: the audit row, the after-hooks, the journal of
 * executed fund-moving calls (decision capture reads the turn's from its context), the `tool:dispatched`
 * bus event, and the outcome.
 */
export async function finishCall(
  env: DispatchEnv,
  call: DispatchCall,
  envelope: ToolEnvelope,
  decision: AuditDecision,
  extra: { approval?: ApprovalRecord | undefined; approvalId?: string | undefined; auditTier?: number } = {},
): Promise<DispatchOutcome> {
  const { name, ctx, toolCallId, tool, tier, mode, input, orderFacts } = call;
  const durationMs = performance.now() - call.started;
  const code = envelope.ok ? undefined : envelope.code;
  const outcome: DispatchOutcome = { envelope, json: JSON.stringify(envelope), decision, tier, toolCallId, mode, durationMs, approval: extra.approval, ...(orderFacts ? { orderFacts } : {}) };
  await writeAudit(env, {
    toolName: name, tier: extra.auditTier ?? tier, ctx, toolCallId, decision, code, reason: envelope.ok ? undefined : envelope.error,
    durationMs, input, mode, approvalId: extra.approvalId ?? extra.approval?.id, provenance: call.provenance, outcome: env.auditEnabled ? extractAuditOutcome(envelope, { decision, mode, orderFacts }) : undefined,
  }, false, companionWrites(env, call, outcome), call.opts.auditBatch ? { batch: call.opts.auditBatch, hold: tool?.sideEffects === false } : undefined);
  if (tool && env.hooks.length > 0) await runAfterHooks(env, call, envelope, decision, durationMs);
  if (decision !== 'blocked' && decision !== 'approval_required' && decision !== 'denied') await measureBreakersAfter(env, call);
  // Decision capture reads the turn's executed fund-moving calls from its context.
  if (tool?.isFundMoving && mode === 'execute' && envelope.ok && orderFacts) {
    noteExecutedCall(ctx, { toolCallId, toolName: name, input, orderFacts, data: envelope.data, at: env.now().toISOString() });
  }
  if (env.bus) env.bus.emit('tool:dispatched', { toolName: name, decision, sessionId: ctx.sessionId, traceId: ctx.traceId, durationMs });
  return outcome;
}

/** The caller's writes to commit with the row (`DispatchOptions.withAuditRow`); a throw is logged, not the call's. */
function companionWrites(env: DispatchEnv, call: DispatchCall, outcome: DispatchOutcome): ReadonlyArray<() => Promise<unknown>> | undefined {
  try {
    return call.opts.withAuditRow?.(outcome);
  } catch (error) {
    env.logger.error('dispatch: withAuditRow failed', { tool: call.name, error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
}

/**
 * End a call as blocked. The same call (tool and input) blocked again in one turn is cut off with
 * `REPEATED_BLOCKED_CALL`, which tells the model not to retry.
 */
export function blockCall(env: DispatchEnv, call: DispatchCall, code: MinaraErrorCode, reason: string, retryable = false): Promise<DispatchOutcome> {
  const key = `${call.name}\u0000${hashToolInput(call.input)}`;
  const count = (call.ctx.blockedCalls.get(key) ?? 0) + 1;
  call.ctx.blockedCalls.set(key, count);
  if (count >= env.maxRepeatedBlocked) {
    return finishCall(
      env,
      call,
      err(`This exact call was already blocked ${count - 1} time(s) in this turn (${reason}). Do not retry it; tell the user what is needed instead.`, { code: 'REPEATED_BLOCKED_CALL', retryable: false }),
      'blocked',
    );
  }
  return finishCall(env, call, err(reason, { code, retryable }), 'blocked');
}
