import type { AuditDecision } from '../../storage/types';
import type { ToolEnvelope } from '../envelope';
import type { DispatchCall, DispatchEnv } from './types';

/** Part of the finish: the after-hooks see the envelope; one that fails is logged and the outcome stands. */
export async function runAfterHooks(env: DispatchEnv, call: DispatchCall, envelope: ToolEnvelope, decision: AuditDecision, durationMs: number): Promise<void> {
  const tool = call.tool!;
  for (const h of env.hooks) {
    if (!h.after) continue;
    try {
      await h.after({ tool, input: call.input, context: call.ctx, toolCallId: call.toolCallId, tier: call.tier, mode: call.mode, orderFacts: call.orderFacts, envelope, decision, durationMs });
    } catch (error) {
      env.logger.warn('after-hook failed', { hook: h.name, tool: call.name, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
