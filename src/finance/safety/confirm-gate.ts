import { isAutonomousSource, PermissionTier } from '../../safety/permission-tier';
import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { defineStage, recordStage } from './stage';

/**
 * Stage 6 — preview/confirm and the tier gate. The registry's gate enforces tiers, approvals and preview
 * mode; this stage adds what it cannot know: a spot trade sized in units is raised to ALWAYS_CONFIRM once
 * its USD size (priced) exceeds `confirmOnceMaxUsd` (after preference tightening), and funds never leave
 * from an autonomous source (cron, webhook, workflow), not even as a preview.
 */
export function createConfirmGateHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  const stage = defineStage('confirm_gate', deps, isPackTool, ({ call, facts, limits }) => {
    if ((facts.kind === 'transfer' || facts.kind === 'withdraw') && isAutonomousSource(call.context.source)) {
      return { block: `funds can never leave the account from a ${call.context.source} source`, code: 'MANUAL_ONLY_AUTONOMOUS' };
    }
    if (facts.kind === 'spot' && facts.sizeUsd > limits.confirmOnceMaxUsd && call.tier < PermissionTier.ALWAYS_CONFIRM) {
      return { raiseTier: PermissionTier.ALWAYS_CONFIRM, reason: `${facts.sizeUsd.toFixed(2)} USD is above the ${limits.confirmOnceMaxUsd} USD confirm-once size` };
    }
    return undefined;
  });
  return stage;
}

/**
 * Part of stage 6 that runs first, before any pricing: a tool of the `transfer` set (the pack's or a
 * host's) is refused from an autonomous source, preview included.
 */
export function createTransferSourceGuard(): ToolHook {
  return {
    name: 'finance.transfer_source',
    before(call) {
      if (call.tool.toolSet !== 'transfer' || !isAutonomousSource(call.context.source)) return undefined;
      recordStage(call.context, call.toolCallId, { stage: 'confirm_gate', outcome: 'block', detail: 'transfer from an autonomous source' });
      return { block: `funds can never leave the account from a ${call.context.source} source`, code: 'MANUAL_ONLY_AUTONOMOUS' };
    },
  };
}

/**
 * The emergency-stop release guard: releasing through the `emergency_stop` tool is refused from
 * autonomous sources and needs an explicit approval on every call (MANUAL_ONLY in effect).
 */
export function createEmergencyReleaseGuard(isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return {
    name: 'finance.emergency_release',
    before(call) {
      if (!isPackTool(call.tool) || call.tool.name !== 'emergency_stop') return undefined;
      if ((call.input as { action?: string }).action !== 'release') return undefined;
      if (isAutonomousSource(call.context.source)) {
        recordStage(call.context, call.toolCallId, { stage: 'confirm_gate', outcome: 'block', detail: 'release from an autonomous source' });
        return { block: `releasing the emergency stop is MANUAL_ONLY and cannot run from a ${call.context.source} source`, code: 'MANUAL_ONLY_AUTONOMOUS' };
      }
      recordStage(call.context, call.toolCallId, { stage: 'confirm_gate', outcome: 'require_approval', detail: 'emergency stop release' });
      return { requireApproval: 'releasing the emergency stop is MANUAL_ONLY and needs your explicit approval' };
    },
  };
}
