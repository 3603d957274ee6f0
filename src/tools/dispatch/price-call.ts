import { maxTier, isPermissionTier } from '../../safety/permission-tier';
import { computeOrderFacts } from '../order-facts';
import type { DispatchOutcome } from '../types';
import { blockCall } from './finish';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 3, order facts and the computed tier: a fund-moving call states its order facts once (grants, hooks,
 * the preview and the handler all judge these); an executing call's `tierFor` may raise the static tier,
 * which is the floor. A call that cannot be priced or tiered is blocked.
 */
export async function priceCall(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome | undefined> {
  const tool = call.tool!;
  try {
    call.orderFacts = await computeOrderFacts(tool, call.input, call.ctx, call.toolCallId);
  } catch (error) {
    return blockCall(env, call, 'TOOL_BLOCKED', `could not price or check this order: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The static tier is the floor: computed tiers and hooks only raise it.
  if (tool.tierFor && call.mode === 'execute') {
    try {
      const computed = tool.tierFor(call.input);
      if (!isPermissionTier(computed)) throw new Error(`tierFor returned ${String(computed)}`);
      call.tier = maxTier(call.tier, computed);
    } catch (error) {
      return blockCall(env, call, 'TOOL_BLOCKED', `Could not compute the tier for "${call.name}": ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return undefined;
}
