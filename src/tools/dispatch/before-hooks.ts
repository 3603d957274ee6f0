import { maxTier, isPermissionTier } from '../../safety/permission-tier';
import type { DispatchOutcome } from '../types';
import { blockCall } from './finish';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 4, before-hooks: policies may block the call, require an approval or raise the tier, never lower it.
 * A failing policy fails closed. Returns the blocked outcome, or nothing to go on.
 */
export async function runBeforeHooks(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome | undefined> {
  const tool = call.tool!;
  for (const h of env.hooks) {
    if (!h.before) continue;
    let result;
    try {
      result = await h.before({ tool, input: call.input, context: call.ctx, toolCallId: call.toolCallId, tier: call.tier, mode: call.mode, orderFacts: call.orderFacts });
    } catch (error) {
      // A failing policy fails closed.
      return blockCall(env, call, 'TOOL_BLOCKED', `Policy "${h.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!result) continue;
    if ('block' in result) return blockCall(env, call, result.code ?? 'TOOL_BLOCKED', `${result.block} (policy "${h.name}")`, result.retryable ?? false);
    if ('requireApproval' in result) call.hookApprovalReasons.push(result.requireApproval);
    else if ('raiseTier' in result && isPermissionTier(result.raiseTier)) call.tier = maxTier(call.tier, result.raiseTier);
  }
  return undefined;
}
