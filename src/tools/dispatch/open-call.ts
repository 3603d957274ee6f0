import { PermissionTier } from '../../safety/permission-tier';
import { callProvenance } from '../../safety/untrusted';
import { createToolCallContext, narrowContext } from '../context';
import { expandToolSetNames } from '../tool-sets';
import type { DispatchOptions } from '../types';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 1, context: the call's context (inside a handler or `runInContext`, the ambient one, which a passed
 * context may only narrow; else the passed one; else a host context), its call id and its clock.
 */
export function openCall(env: DispatchEnv, name: string, args: unknown, opts: DispatchOptions): DispatchCall {
  const started = performance.now();
  const ambient = env.carrier.current();
  const ctx = ambient ? (opts.context ? narrowContext(ambient, opts.context, (names) => expandToolSetNames(names, env.sets)) : ambient)
    : (opts.context ?? createToolCallContext({ sessionId: 'host', source: 'user', operatorAuthored: true }));
  const toolCallId = opts.toolCallId ?? env.generateId('call');
  return {
    name, args, opts, started, ctx, toolCallId,
    tool: undefined, tier: PermissionTier.READ_ONLY, mode: 'execute', input: args, orderFacts: undefined,
    hookApprovalReasons: [], gate: undefined, allowedDecision: 'allowed', provenance: callProvenance(ctx),
  };
}
