import type { DispatchCall, DispatchEnv } from './types';

/**
 * After a fund-moving execution (any source): measure the user's breaker again, so a losing trade trips it and
 * notifies at once rather than at the next autonomous call. Never changes the call's outcome; failures are logged.
 */
export async function measureBreakersAfter(env: DispatchEnv, call: DispatchCall): Promise<void> {
  if (!env.breakers || call.mode !== 'execute' || call.tool?.isFundMoving !== true) return;
  try {
    await env.breakers.check(call.ctx.userId ?? 'default');
  } catch (error) {
    env.logger.warn('breakers: the check after a fund-moving call failed', { tool: call.name, error: error instanceof Error ? error.message : String(error) });
  }
}
