import type { MinaraErrorCode } from '../../errors/codes';
import type { PermissionTier } from '../../safety/permission-tier';
import type { BeforeHookCall, BeforeHookResult, ToolCallContext, ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import type { FinanceLimits } from '../limits';
import { hostOrderFacts, isPackFundMoving, type OrderFacts, orderFacts } from '../order-facts';

/** The six stages of the finance safety stack, in order. */
export const SAFETY_STAGES = ['intent', 'token_safety', 'exposure', 'slippage', 'risk_caps', 'confirm_gate'] as const;
export type SafetyStage = (typeof SAFETY_STAGES)[number];

/** One stage's decision about one call, kept for the audit row. */
export interface StageDecision {
  readonly stage: SafetyStage;
  readonly outcome: 'pass' | 'block' | 'raise_tier' | 'require_approval' | 'skip';
  readonly detail?: string | undefined;
}

/** What a stage returns: nothing (pass) or a tightening. */
export type StageResult =
  | undefined
  | { readonly block: string; readonly code?: MinaraErrorCode | undefined; readonly retryable?: boolean | undefined }
  | { readonly raiseTier: PermissionTier; readonly reason: string }
  | { readonly requireApproval: string };

/** What a stage sees. */
export interface StageInput {
  readonly call: BeforeHookCall;
  readonly facts: OrderFacts;
  readonly limits: FinanceLimits;
}

const traceKey = (toolCallId: string) => `finance:trace:${toolCallId}`;

/** Record a stage decision for this call (read by the audit hook). */
export function recordStage(ctx: ToolCallContext, toolCallId: string, d: StageDecision): void {
  const key = traceKey(toolCallId);
  const list = (ctx.state.get(key) as StageDecision[] | undefined) ?? [];
  list.push(d);
  ctx.state.set(key, list);
}

/** The decisions recorded for this call, removed from the turn state. */
export function takeStages(ctx: ToolCallContext, toolCallId: string): StageDecision[] {
  const key = traceKey(toolCallId);
  const list = (ctx.state.get(key) as StageDecision[] | undefined) ?? [];
  ctx.state.delete(key);
  return list;
}

/**
 * A before-hook for one stage over every fund-moving tool of the registry, the pack's and the host's: the
 * pack's tools are judged on their priced facts (computed once per call, shared with the preview), a host's
 * tool on the facts its `orderFacts` stated (computed once by the registry). It fails closed when facts
 * cannot be had, runs `fn`, records the decision and maps it to a hook result. Hooks only tighten.
 */
export function defineStage(
  stage: SafetyStage,
  deps: FinanceDeps,
  isPackTool: (tool: ToolEntry) => boolean,
  fn: (input: StageInput) => StageResult | Promise<StageResult>,
): ToolHook {
  return {
    name: `finance.${stage}`,
    async before(call): Promise<BeforeHookResult> {
      if (!call.tool.isFundMoving) return undefined;
      let facts: OrderFacts;
      try {
        if (isPackTool(call.tool) && isPackFundMoving(call.tool.name)) {
          facts = await orderFacts(deps, call.context, call.toolCallId, call.tool.name, call.input);
        } else if (call.orderFacts) {
          facts = hostOrderFacts(call.tool.name, call.orderFacts);
        } else {
          throw new Error(`tool "${call.tool.name}" moves funds but stated no order facts`);
        }
      } catch (error) {
        const reason = `could not price or check this order: ${error instanceof Error ? error.message : String(error)}`;
        recordStage(call.context, call.toolCallId, { stage, outcome: 'block', detail: reason });
        return { block: reason, code: 'TOOL_BLOCKED', retryable: false };
      }
      const limits = await deps.limits();
      const r = await fn({ call, facts, limits });
      if (!r) {
        recordStage(call.context, call.toolCallId, { stage, outcome: 'pass' });
        return undefined;
      }
      if ('block' in r) {
        recordStage(call.context, call.toolCallId, { stage, outcome: 'block', detail: r.block });
        return { block: r.block, code: r.code ?? 'TOOL_BLOCKED', retryable: r.retryable ?? false };
      }
      if ('raiseTier' in r) {
        recordStage(call.context, call.toolCallId, { stage, outcome: 'raise_tier', detail: r.reason });
        return { raiseTier: r.raiseTier, reason: r.reason };
      }
      recordStage(call.context, call.toolCallId, { stage, outcome: 'require_approval', detail: r.requireApproval });
      return { requireApproval: r.requireApproval };
    },
  };
}
