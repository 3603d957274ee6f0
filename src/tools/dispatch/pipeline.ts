import type { DispatchOptions, DispatchOutcome } from '../types';
import { applyApproval } from './approval';
import { executeCall } from './execute';
import { gateCall } from './gate';
import { runBeforeHooks } from './before-hooks';
import { openCall } from './open-call';
import { priceCall } from './price-call';
import type { DispatchEnv } from './types';
import { validateCall } from './validate';

/**
 * One dispatch, step by step. Each step is one file under src/tools/dispatch/ and works on the one call
 * object `openCall` returns; a step that ends the call returns its outcome (every ending goes through
 * `finishCall`: audit row, after-hooks, journal, bus event), otherwise the next step runs.
 */
export async function dispatchCall(env: DispatchEnv, name: string, args: unknown, opts: DispatchOptions): Promise<DispatchOutcome> {
  const call = openCall(env, name, args, opts); //           1. context (open-call.ts)
  const invalid = validateCall(env, call); //                 2. validate: tool, availability, bounds, schema (validate.ts)
  if (invalid) return invalid;
  const unpriced = await priceCall(env, call); //             3. order facts and computed tier (price-call.ts)
  if (unpriced) return unpriced;
  const hooked = await runBeforeHooks(env, call); //          4. before-hooks (before-hooks.ts)
  if (hooked) return hooked;
  const gated = await gateCall(env, call); //                 5. tier gate and grants (gate.ts)
  if (gated) return gated;
  const held = await applyApproval(env, call); //             6. approval: request or consume (approval.ts)
  if (held) return held;
  return executeCall(env, call); //                           7. execute with timeout, 8. audit, after-hooks, journal (execute.ts, finish.ts)
}
