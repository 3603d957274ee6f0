import type { ModelMessage, StepResult, ToolSet } from 'ai';
import { compactMessages } from '../compaction';
import { estimateTokens } from '../conversation';
import type { TurnCompaction } from './compact-history';
import type { TurnState } from './state';
import type { Emit } from './types';

/** Tokens kept free for the step's own answer when the turn budget is nearly spent (at most this, or 5 % of the budget). */
const OUTPUT_RESERVE_TOKENS = 4_096;

/** What `prepareStep` returns: the model must answer in text, and/or the step's trimmed messages. */
export interface BudgetStep {
  readonly toolChoice?: 'none';
  readonly messages?: ModelMessage[];
}

/**
 * `prepareStep` (agent-loop §3): before each model call, trim the step's messages so the call fits what is left
 * of the turn's cumulative token budget (`turnTokenBudget`, input + output over all steps). The next prompt is
 * estimated cheaply (the previous step's input tokens plus what it added; the messages themselves on the first
 * step); only when it would not fit are the zero-LLM rungs of the compaction ladder run on the step's messages
 * (collapse old tool results, microcompact, hard trim at a user boundary; never a paid summary), keeping the
 * recent messages. Near the budget (90 % spent) the step must answer in text. The stored history is not changed:
 * the trim applies to this turn's remaining calls only (AI SDK 7 carries a returned `messages` forward).
 */
export async function prepareBudgetStep(
  turn: TurnState,
  step: { readonly steps: ReadonlyArray<StepResult<ToolSet>>; readonly messages: ModelMessage[] },
  fixedTokens: number,
  compaction: TurnCompaction,
  emit: Emit,
): Promise<BudgetStep | undefined> {
  const budget = turn.turnTokenBudget;
  const used = turn.usage.inputTokens + turn.usage.outputTokens;
  const toolChoice = used >= budget * 0.9 ? ('none' as const) : undefined;
  const reserve = Math.min(OUTPUT_RESERVE_TOKENS, Math.ceil(budget * 0.05));
  const last = step.steps.at(-1);
  const estimate = last?.usage.inputTokens !== undefined
    ? last.usage.inputTokens + estimateTokens(last.response.messages)
    : fixedTokens + estimateTokens(step.messages);
  if (used + estimate + reserve <= budget) return toolChoice ? { toolChoice } : undefined;
  const allowed = budget - used - reserve - fixedTokens;
  if (allowed <= 0) return { toolChoice: 'none' };
  const trimmed = await compactMessages(step.messages, {
    contextWindowTokens: allowed, triggerRatio: 1, targetRatio: 1,
    ...(compaction.keepRecentMessages !== undefined ? { keepRecentMessages: compaction.keepRecentMessages } : {}),
    ...(compaction.maxToolResultChars !== undefined ? { maxToolResultChars: compaction.maxToolResultChars } : {}),
  });
  if (!trimmed.changed) return toolChoice ? { toolChoice } : undefined;
  emit({ type: 'compaction', beforeTokens: trimmed.beforeTokens, afterTokens: trimmed.afterTokens, steps: [...trimmed.steps, 'turn-budget'] });
  return { ...(toolChoice ? { toolChoice } : {}), messages: trimmed.messages };
}
