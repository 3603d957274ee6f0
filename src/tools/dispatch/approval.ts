import { PermissionTier } from '../../safety/permission-tier';
import { err, errFromThrow, type ToolEnvelope } from '../envelope';
import type { DispatchOutcome } from '../types';
import { finishCall } from './finish';
import { grantLeftForCall } from './grant-spend';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 6, approval: a call the gate holds for a human becomes a persisted, signed approval request (the
 * outcome says so). A call the gate lets through on a presented approval consumes it (bound to tool, input,
 * call id, session and source; single use); a CONFIRM_ONCE approval is remembered for the rest of its
 * session. Returns the outcome that ends the call here, or nothing to go on.
 */
export async function applyApproval(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome | undefined> {
  const { name, ctx, toolCallId, input, tier, opts } = call;
  const decision = call.gate!;
  if (decision.kind === 'approval_required') {
    // A call proposed after untrusted content says so on its record, card and audit row. The passage it read goes to
    // the person only: the AI SDK tools give the model this envelope without it (`toModelOutput` in ../ai-sdk.ts).
    const p = call.provenance;
    const reason = p ? `${decision.reason} (${p.summary}${p.passage ? `; it read: "${p.passage.slice(0, 200)}"` : ''})` : decision.reason;
    const approval = await env.approvals.request({
      toolName: name, toolCallId, input, tier, source: ctx.source, reason, sessionId: ctx.sessionId, traceId: ctx.traceId,
    });
    const envelope = err(`Waiting for approval: ${reason}`, { code: 'APPROVAL_REQUIRED', retryable: false });
    const grantLeftTodayUsd = await grantLeftForCall(env, call);
    const withApproval: ToolEnvelope = {
      ...envelope,
      approval: {
        approvalId: approval.id, toolName: name, expiresAt: approval.expiresAt, reason,
        ...(grantLeftTodayUsd !== undefined ? { grantLeftTodayUsd } : {}),
        ...(p ? { provenance: { untrustedSources: p.untrustedSources, ...(p.passage ? { passage: p.passage } : {}) } } : {}),
      },
    };
    return finishCall(env, call, withApproval, 'approval_required', { approval });
  }
  if (decision.kind === 'allow' && decision.via === 'approval' && opts.approvalId !== undefined) {
    try {
      const record = await env.approvals.consume(opts.approvalId, { toolName: name, input, toolCallId: opts.toolCallId, sessionId: ctx.sessionId, source: ctx.source });
      // CONFIRM_ONCE: the first approval in a session is remembered for the rest of that session (the one it was issued in).
      if (tier === PermissionTier.CONFIRM_ONCE && record.sessionId !== undefined) await env.grants.grantForSession(record.sessionId, name);
    } catch (error) {
      const e = errFromThrow(error);
      return finishCall(env, call, e, e.code === 'APPROVAL_DENIED' ? 'denied' : 'blocked', { approvalId: opts.approvalId });
    }
    call.allowedDecision = 'approved';
  }
  return undefined;
}
