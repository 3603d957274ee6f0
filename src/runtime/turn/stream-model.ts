import type { ModelMessage, StepResult, ToolSet } from 'ai';
import { loadAi } from '../../util/lazy-ai';
import { estimateTokens } from '../conversation';
import { assembleModelCall } from './assemble-model-call';
import { prepareBudgetStep } from './budget-trim';
import { compactOnOverflow, type TurnCompaction } from './compact-history';
import { handleStreamPart } from './handle-stream-part';
import type { TurnState } from './state';
import type { Emit, TurnDeps, TurnPrompt } from './types';

/**
 * Stage 8, stream the model and dispatch calls: one `streamText` per attempt, its tool calls dispatched through
 * the registry (in the turn's call context), each stream part handled as it arrives. A step that overflows the
 * context window is compacted and retried (at most twice).
 */
export async function streamModel(deps: TurnDeps, turn: TurnState, prompt: TurnPrompt, compaction: TurnCompaction, emit: Emit): Promise<void> {
  const { options } = deps;
  const { input } = turn;
  const { isStepCount, streamText } = await loadAi();
  for (let attempt = 0; ; attempt++) {
    let overflow: unknown;
    const call = await assembleModelCall(deps, turn, prompt, emit);
    const fixedTokens = estimateTokens(call.instructions) + estimateTokens(call.tools === undefined ? '' : Object.keys(call.tools));
    const result = options.tools.runInContext(turn.ctx, () =>
      streamText({
        model: deps.model,
        instructions: call.instructions,
        messages: call.messages,
        tools: call.tools,
        toolOrder: prompt.toolNames,
        toolCallConcurrency: 1,
        stopWhen: [
          isStepCount(Math.max(1, turn.maxSteps - turn.stepCount)),
          () => turn.pendingApprovals.length > 0,
          () => turn.askedUser,
          () => turn.stopReason === 'repeated-blocked-call',
          () => turn.usage.inputTokens + turn.usage.outputTokens >= turn.turnTokenBudget,
        ],
        // A call to a registered tool that is not in this turn's list is rerouted through tool_invoke,
        // so it still goes through dispatch (gate, hooks, audit) instead of failing as an unknown tool.
        repairToolCall: async ({ toolCall, error }) => {
          if (error.name !== 'AI_NoSuchToolError' || !prompt.toolNames.includes('tool_invoke') || !options.tools.has(toolCall.toolName)) return null;
          let args: unknown = {};
          try {
            args = toolCall.input ? JSON.parse(toolCall.input) : {};
          } catch {
            return null;
          }
          return { ...toolCall, toolName: 'tool_invoke', input: JSON.stringify({ name: toolCall.toolName, args }) };
        },
        // Each call fits what is left of the turn's token budget; near the budget the step must answer in text.
        prepareStep: (step) => prepareBudgetStep(turn, step, fixedTokens, compaction, emit),
        onStepEnd: (step: StepResult<ToolSet>) => {
          turn.responseMessages.push(...(step.response.messages as ModelMessage[]));
          // The model that answered (a fallback model reports the one that served the step).
          if (step.response.modelId) turn.answeredBy = step.response.modelId;
        },
        ...(input.abortSignal ? { abortSignal: input.abortSignal } : {}),
        ...(options.telemetry ? { telemetry: options.telemetry } : {}),
        maxRetries: 1,
        // Errors arrive as stream parts and become events; nothing is printed.
        onError: () => {},
      }),
    );
    for await (const part of result.stream) {
      const handled = handleStreamPart(deps, turn, part, attempt, emit);
      if (handled && 'pending' in handled) await handled.pending;
      else if (handled) overflow = handled.overflow;
    }
    if (overflow === undefined) break;
    await compactOnOverflow(deps, turn, compaction, emit);
  }
}
