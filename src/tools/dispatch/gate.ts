import { evaluateOperatorControls } from '../../safety/operator-controls';
import { evaluateTierGate } from '../../safety/tier-gate';
import { expandToolSetNames } from '../tool-sets';
import type { DispatchOutcome } from '../types';
import { blockCall } from './finish';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * Step 5, the tier gate and grants: the one place the permission policy is enforced (allowed tool sets, the
 * emergency stop, autonomous sources, the risk ceiling, the analysis → trade boundary, grants, approvals).
 * Sets `call.gate`; returns the blocked outcome when the gate blocks or fails, else nothing to go on.
 */
export async function gateCall(env: DispatchEnv, call: DispatchCall): Promise<DispatchOutcome | undefined> {
  const { name, ctx } = call;
  if (env.keylessTierLimit !== undefined && call.mode === 'execute' && call.tier >= env.keylessTierLimit) {
    return blockCall(env, call, 'TOOL_BLOCKED', `"${name}" needs a person's approval signed with a key outside the database, and this production registry has none (set MINARA_APPROVAL_KEY; see resolveApprovalKey).`);
  }
  const analysisUsed = [...ctx.usedTools].some((n) => n !== name && env.tools.get(n)?.isAnalysis === true);
  const allowedToolSets = ctx.allowedToolSets ? expandToolSetNames(ctx.allowedToolSets, env.sets) : undefined;
  try {
    // The operator's controls first (capability switches, the lifecycle stage), then the tier gate and grants.
    const controlled = await evaluateOperatorControls({ tool: call.tool!, context: ctx, mode: call.mode }, { storage: env.storage });
    if (controlled) {
      call.gate = { kind: 'block', ...controlled };
      return blockCall(env, call, controlled.code, controlled.reason);
    }
    call.gate = await evaluateTierGate(
      {
        tool: call.tool!, input: call.input, orderFacts: call.orderFacts, context: ctx, tier: call.tier, mode: call.mode,
        hookApprovalReasons: call.hookApprovalReasons, hasApproval: call.opts.approvalId !== undefined, allowedToolSets, analysisUsed,
        provenance: call.provenance, untrustedPolicy: env.untrustedPolicy,
      },
      { grants: env.grants, emergencyStop: env.emergencyStop },
    );
  } catch (error) {
    return blockCall(env, call, 'TOOL_BLOCKED', `The permission check failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (call.gate.kind === 'block') return blockCall(env, call, call.gate.code, call.gate.reason);
  return undefined;
}
