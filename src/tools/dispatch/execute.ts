import type { AuditDecision } from '../../storage/types';
import { err, errFromThrow, isToolEnvelope, ok, type ToolEnvelope } from '../envelope';
import type { DispatchOutcome } from '../types';
import { writeAudit } from './audit';
import { finishCall } from './finish';
import { refundGrantClaim, withGrantLeft } from './grant-spend';
import { runWithTimeout } from './run-with-timeout';
import type { DispatchCall, DispatchEnv } from './types';
import { describeToolSource, recordUntrusted } from '../../safety/untrusted';

/** The text of a result the classifier reads (strings of the data, at most 200,000 characters). */
function resultText(data: unknown): string {
  if (typeof data === 'string') return data.slice(0, 200_000);
  const parts: string[] = [];
  let size = 0;
  const walk = (v: unknown, depth: number): void => {
    if (size > 200_000 || depth > 8) return;
    if (typeof v === 'string') {
      parts.push(v);
      size += v.length;
    } else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(data, 0);
  return parts.join('\n');
}

/** A successful result of an untrusted tool labels the turn with its source(s); its text is classified. */
function labelUntrusted(call: DispatchCall, data: unknown): void {
  const tool = call.tool!;
  let declared: string | readonly string[] | undefined;
  try {
    declared = tool.source?.(call.input, data);
  } catch {
    declared = undefined;
  }
  const sources = describeToolSource(tool.name, declared);
  const text = resultText(data);
  sources.forEach((source, i) => recordUntrusted(call.ctx, { kind: 'tool', source, tool: tool.name, toolCallId: call.toolCallId }, i === 0 ? text : undefined));
}

/**
 * Step 7, execute with timeout: the preview or the handler runs inside the call's context (a nested dispatch
 * inherits it and can only narrow it), under its timeout and the caller's signal. A fund-moving execution is
 * audited before the side effect (an `executing` row; a call whose row cannot be written does not run).
 * Then step 8, the finish: audit, after-hooks, journal.
 */
export async function executeCall(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome> {
  const { name, ctx, toolCallId, tier, mode, input, opts } = call;
  const tool = call.tool!;
  const run = mode === 'preview' ? tool.preview! : tool.execute;
  if (mode === 'execute' && tool.isFundMoving) {
    // Audit before the side effect: a process killed mid-transfer leaves an `executing` row; a call whose
    // row cannot be written does not run.
    try {
      await writeAudit(env, { toolName: name, tier, ctx, toolCallId, decision: 'executing', durationMs: performance.now() - call.started, input, mode, approvalId: opts.approvalId, provenance: call.provenance }, true);
    } catch (error) {
      await refundGrantClaim(env, call);
      return finishCall(env, call, err(`The audit log could not be written, so this fund-moving call did not run: ${error instanceof Error ? error.message : String(error)}`, { code: 'TOOL_BLOCKED', retryable: true }), 'blocked', { approvalId: opts.approvalId });
    }
  }
  let envelope: ToolEnvelope;
  let outcome: AuditDecision = call.allowedDecision;
  try {
    // The handler runs inside its call's context: a nested dispatch inherits it and can only narrow it.
    const result = await env.carrier.run(ctx, () => runWithTimeout(run, input, { call: ctx, toolCallId, tier, approvalId: opts.approvalId, orderFacts: call.orderFacts }, tool.timeoutMs, opts.signal, name));
    envelope = isToolEnvelope(result) ? result : ok(result === undefined ? null : result);
    if (!envelope.ok) {
      outcome = 'error';
      await refundGrantClaim(env, call);
    } else if (mode === 'preview') envelope = await withGrantLeft(env, call, envelope);
  } catch (error) {
    envelope = errFromThrow(error);
    outcome = 'error';
  }
  ctx.usedTools.add(name);
  if (envelope.ok && tool.trust === 'untrusted') labelUntrusted(call, envelope.data);
  return finishCall(env, call, envelope, outcome, { approvalId: opts.approvalId });
}
