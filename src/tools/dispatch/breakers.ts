import { isAutonomousSource } from '../../safety/permission-tier';
import type { DispatchOutcome } from '../types';
import { blockCall } from './finish';
import type { DispatchCall, DispatchEnv } from './types';

/** The tenant a call's breaker belongs to (a host call without a user is the default tenant's). */
const userOf = (call: DispatchCall): string => call.ctx.userId ?? 'default';

/**
 * Step 5b, the circuit breakers: an autonomous fund-moving execution (cron, heartbeat, webhook, workflow) of a
 * user whose breaker is tripped — or trips now, measured from the audit trail — is blocked with
 * `CIRCUIT_BREAKER_OPEN` until a person resets it. Previews, user turns and READ_ONLY calls pass. A check that
 * fails blocks the call (fail closed).
 */
export async function checkBreakers(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome | undefined> {
  const breakers = env.breakers;
  if (!breakers || call.mode !== 'execute' || call.tool?.isFundMoving !== true || !isAutonomousSource(call.ctx.source)) return undefined;
  let status;
  try {
    status = await breakers.check(userOf(call));
  } catch (error) {
    return blockCall(env, call, 'TOOL_BLOCKED', `The circuit-breaker check failed, so this autonomous fund-moving call did not run: ${error instanceof Error ? error.message : String(error)}`, true);
  }
  if (!status.tripped) return undefined;
  return blockCall(env, call, 'CIRCUIT_BREAKER_OPEN', `The circuit breaker is tripped (${status.reason ?? status.rule ?? 'tripped'}); autonomous trades are halted until a person resets it (minara breakers reset ${status.userId}).`);
}
