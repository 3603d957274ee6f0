import type { MinaraErrorCode } from '../errors/codes';
import type { Storage } from '../storage/types';
import type { ToolCallContext, ToolEntry, TurnStage } from '../tools/types';
import { isAutonomousSource } from './permission-tier';

/** A call refused by an operator control. */
export interface OperatorControlBlock {
  readonly code: MinaraErrorCode;
  readonly reason: string;
}

/**
 * True for a turn classified as `discover` only: looking around, not deciding or managing anything. An
 * autonomous turn so classified cannot run fund-moving tools (even under a grant).
 */
export function isDiscoverOnly(stages: readonly TurnStage[] | undefined): boolean {
  return stages !== undefined && stages.includes('discover') && !stages.includes('decide') && !stages.includes('manage');
}

/**
 * The operator's controls, checked by the registry's dispatch in the same step as the tier gate, before it:
 *
 * - **capability switches**: a tool set the operator turned off for the call's user refuses every tool of that
 *   set (`TOOL_SET_DISABLED`), in every mode and from every source; the emergency stop's own tool stays reachable;
 * - **the lifecycle stage**: an autonomous turn classified as `discover` cannot execute a fund-moving tool
 *   (`STAGE_NOT_ALLOWED`), whatever grants exist; its preview (which moves nothing) still runs.
 *
 * Both read storage on every call, so a switch set in another process applies at its next dispatch.
 */
export async function evaluateOperatorControls(
  input: { readonly tool: ToolEntry; readonly context: ToolCallContext; readonly mode: 'preview' | 'execute' },
  deps: { readonly storage: Storage },
): Promise<OperatorControlBlock | undefined> {
  const { tool, context, mode } = input;
  if (mode === 'execute' && tool.isFundMoving && isAutonomousSource(context.source) && isDiscoverOnly(context.lifecycleStages)) {
    return {
      code: 'STAGE_NOT_ALLOWED',
      reason: `Tool "${tool.name}" moves funds, and this ${context.source} turn is classified as discover (${context.lifecycleStages!.join(', ')}); an autonomous discover turn cannot move funds, even under a grant.`,
    };
  }
  if (context.userId !== undefined && !tool.emergencyStopControl) {
    const off = await deps.storage.controls.listDisabledCapabilities({ userId: context.userId });
    const hit = off.find((s) => s.toolSet === tool.toolSet);
    if (hit) {
      return {
        code: 'TOOL_SET_DISABLED',
        reason: `Tool set "${hit.toolSet}" is turned off for ${context.userId}${hit.reason ? ` (${hit.reason})` : ''}; "${tool.name}" does not run until an operator turns it back on.`,
      };
    }
  }
  return undefined;
}
