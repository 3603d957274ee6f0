import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { compareIntent, parseIntent } from '../intent';
import { defineStage } from './stage';

/**
 * Stage 1 — intent check: the call's stated `intent` must match its arguments (side, asset, size,
 * leverage). A mismatch blocks. A missing intent blocks execution (previews may omit it) unless the
 * pack was created with `requireIntent: false`.
 */
export function createIntentCheckHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return defineStage('intent', deps, isPackTool, ({ call, facts }) => {
    const raw = (call.input as { intent?: unknown }).intent;
    const intent = parseIntent(raw);
    if (!intent) {
      if (call.mode === 'execute' && deps.requireIntent) {
        return { block: `State your intent in the "intent" field (e.g. "${facts.side} ${facts.asset} ${Math.round(facts.sizeUsd)} USD") so it can be checked against the arguments`, retryable: true };
      }
      return undefined;
    }
    const problems = compareIntent(intent, facts, call.input as Record<string, unknown>, deps.isStable);
    if (problems.length > 0) return { block: `Stated intent does not match the call: ${problems.join('; ')}`, retryable: false };
    call.context.state.set(`finance:intent:${call.toolCallId}`, intent);
    return undefined;
  });
}
