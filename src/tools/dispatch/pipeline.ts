import type { DispatchOptions, DispatchOutcome } from '../types';
import { applyApproval } from './approval';
import { checkBreakers } from './breakers';
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
  // 1. Context: the call context (ambient, narrowed), the call id, the clock.
  const call = openCall(env, name, args, opts);
  // 2. Validate: the tool, its availability, input bounds and schema; the mode.
  const invalid = validateCall(env, call);
  if (invalid) return invalid;
  // 2b. A call with side effects first commits the side-effect-free calls' rows held before it (audit-batch.ts):
  // its gate, grants and breakers, and the log's order, see every row before it.
  if (opts.auditBatch !== undefined && call.tool?.sideEffects !== false) await opts.auditBatch.flush();
  // 3. Order facts and the computed tier.
  const unpriced = await priceCall(env, call);
  if (unpriced) return unpriced;
  // 4. Before-hooks: block, require an approval, raise the tier.
  const hooked = await runBeforeHooks(env, call);
  if (hooked) return hooked;
  // 5. The tier gate and grants.
  const gated = await gateCall(env, call);
  if (gated) return gated;
  // 5b. Circuit breakers: a tripped user's autonomous fund-moving executions stop here.
  const halted = await checkBreakers(env, call);
  if (halted) return halted;
  // 6. Approval: request one, or consume the one presented.
  const held = await applyApproval(env, call);
  if (held) return held;
  // 7. Execute with timeout; then (as every ending) the audit row, after-hooks and journal (finish.ts).
  return executeCall(env, call);
}
