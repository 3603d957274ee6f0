import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { defineStage } from './stage';

/**
 * Stage 4 — slippage: a call may ask for at most `maxSlippageBps`, and the order's expected slippage must
 * fit within the smaller of the call's cap and the configured one.
 */
export function createSlippageHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return defineStage('slippage', deps, isPackTool, ({ facts, limits }) => {
    if (facts.requestedSlippageBps !== undefined && facts.requestedSlippageBps > limits.maxSlippageBps) {
      return { block: `slippage cap ${facts.requestedSlippageBps} bps is above the ${limits.maxSlippageBps} bps limit`, retryable: true };
    }
    const cap = Math.min(facts.requestedSlippageBps ?? limits.maxSlippageBps, limits.maxSlippageBps);
    if (facts.expectedSlippageBps !== undefined && facts.expectedSlippageBps > cap) {
      return { block: `expected slippage ${facts.expectedSlippageBps} bps exceeds the ${cap} bps cap; trade a smaller size` };
    }
    return undefined;
  });
}
