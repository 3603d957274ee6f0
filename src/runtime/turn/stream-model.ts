import type { LanguageModelV4ToolCall } from '@ai-sdk/provider';
import type { ModelMessage, StepResult, TextStreamPart, ToolSet } from 'ai';
import { loadAi } from '../../util/lazy-ai';
import { turnTelemetry } from '../ai-telemetry';
import { estimateTokens } from '../conversation';
import { assembleModelCall } from './assemble-model-call';
import { prepareBudgetStep } from './budget-trim';
import { compactOnOverflow, type TurnCompaction } from './compact-history';
import { handleStreamPart } from './handle-stream-part';
import type { TurnState } from './state';
import type { Emit, TurnDeps, TurnPrompt } from './types';

type AiModule = Awaited<ReturnType<typeof loadAi>>;

/**
 * Stage 8, ask the model and dispatch calls: one streamed call per attempt (or, for a run with
 * `modelCall: 'generate'`, one `generateText`: the model's non-streaming call, each step's parts handled when the
 * step ends), its tool calls dispatched through the registry (in the turn's call context), each part handled as
 * the same events either way. A step that overflows the context window is compacted and retried (at most twice).
 */
export async function streamModel(deps: TurnDeps, turn: TurnState, prompt: TurnPrompt, compaction: TurnCompaction, emit: Emit): Promise<void> {
  const ai = await loadAi();
  for (let attempt = 0; ; attempt++) {
    const call = await assembleModelCall(deps, turn, prompt, emit);
    const settings = callSettings(deps, turn, prompt, compaction, emit, call, ai);
    const overflow = turn.input.modelCall === 'generate' ? await generateOnce(deps, turn, settings, attempt, emit, ai.generateText) : await streamOnce(deps, turn, settings, attempt, emit, singleConsumerStreamText(ai));
    if (overflow === undefined) break;
    await compactOnOverflow(deps, turn, compaction, emit);
  }
}

type ModelCall = Awaited<ReturnType<typeof assembleModelCall>>;

/**
 * The AI SDK's `streamText` for one reader: the turn reads each call's `stream` once and keeps each step from
 * `onStepEnd`, so it asks for the SDK's single-consumer variant, which neither tees the stream nor keeps the steps
 * for replay (about 0.04 ms less per three-step turn, docs/runtime.md). An SDK without it gets `streamText`.
 */
function singleConsumerStreamText(ai: AiModule): StreamTextFn {
  return ai.experimental_streamTextLowMemory ?? ai.streamText;
}

/** What the turn needs of a streaming call: its stream of parts, read once. */
type StreamTextFn = (options: Parameters<AiModule['streamText']>[0]) => { readonly stream: AsyncIterable<TextStreamPart<ToolSet>> };

/** What `streamText` and `generateText` are both given for one attempt. */
function callSettings(deps: TurnDeps, turn: TurnState, prompt: TurnPrompt, compaction: TurnCompaction, emit: Emit, call: ModelCall, ai: Pick<AiModule, 'isStepCount' | 'AI_SDK_TELEMETRY_TRACING_CHANNEL'>) {
  const { options } = deps;
  const { input } = turn;
  const { isStepCount } = ai;
  const telemetry = turnTelemetry(options.telemetry, ai.AI_SDK_TELEMETRY_TRACING_CHANNEL);
  const fixedTokens = estimateTokens(call.instructions) + estimateTokens(call.tools === undefined ? '' : Object.keys(call.tools));
  return {
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
    repairToolCall: async ({ toolCall, error }: { toolCall: LanguageModelV4ToolCall; error: Error }) => {
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
    prepareStep: (step: { readonly steps: ReadonlyArray<StepResult<ToolSet>>; readonly messages: ModelMessage[] }) => prepareBudgetStep(turn, step, fixedTokens, compaction, emit),
    ...(input.abortSignal ? { abortSignal: input.abortSignal } : {}),
    ...(telemetry ? { telemetry } : {}),
    maxRetries: 1,
  };
}

type CallSettings = ReturnType<typeof callSettings>;

/** Keeps what a finished step said (persisted even when a later step fails) and the model that answered it. */
function keepStep(turn: TurnState, step: StepResult<ToolSet>): void {
  turn.responseMessages.push(...(step.response.messages as ModelMessage[]));
  // The model that answered (a fallback model reports the one that served the step).
  if (step.response.modelId) turn.answeredBy = step.response.modelId;
}

/** One streamed attempt: each part handled as it arrives. Returns the overflow to retry after, if any. */
async function streamOnce(deps: TurnDeps, turn: TurnState, settings: CallSettings, attempt: number, emit: Emit, streamText: StreamTextFn): Promise<unknown> {
  let overflow: unknown;
  const result = deps.options.tools.runInContext(turn.ctx, () =>
    streamText({
      ...settings,
      onStepEnd: (step: StepResult<ToolSet>) => keepStep(turn, step),
      // Errors arrive as stream parts and become events; nothing is printed.
      onError: () => {},
    }),
  );
  for await (const part of result.stream) {
    const handled = handleStreamPart(deps, turn, part, attempt, emit);
    if (handled && 'pending' in handled) await handled.pending;
    else if (handled) overflow = handled.overflow;
  }
  return overflow;
}

/**
 * One non-streaming attempt (`modelCall: 'generate'`): each step's content, when the step ends (before the loop
 * decides whether to go on), is handled as the parts a stream would have carried, so the turn's events, state and
 * stop reasons are the same; what differs is when they arrive. A model error is thrown, an overflow returned.
 */
async function generateOnce(deps: TurnDeps, turn: TurnState, settings: CallSettings, attempt: number, emit: Emit, generateText: AiModule['generateText']): Promise<unknown> {
  try {
    await deps.options.tools.runInContext(turn.ctx, () =>
      generateText({
        ...settings,
        onStepEnd: async (step: StepResult<ToolSet>) => {
          keepStep(turn, step);
          for (const part of stepParts(step)) {
            const handled = handleStreamPart(deps, turn, part, attempt, emit);
            if (handled && 'pending' in handled) await handled.pending;
          }
        },
      }),
    );
  } catch (error) {
    const handled = handleStreamPart(deps, turn, { type: 'error', error }, attempt, emit);
    if (handled && 'overflow' in handled) return handled.overflow;
  }
  return undefined;
}

/** A finished step's content as the stream parts `handleStreamPart` reads (text, calls, results, the step's end). */
function stepParts(step: StepResult<ToolSet>): TextStreamPart<ToolSet>[] {
  const parts: TextStreamPart<ToolSet>[] = [];
  for (const c of step.content) {
    if (c.type === 'text') parts.push({ type: 'text-delta', id: 'text', text: c.text });
    else if (c.type === 'tool-call' || c.type === 'tool-result' || c.type === 'tool-error') parts.push(c as TextStreamPart<ToolSet>);
  }
  parts.push({ type: 'finish-step', response: step.response, usage: step.usage, finishReason: step.finishReason, rawFinishReason: step.rawFinishReason, providerMetadata: step.providerMetadata } as unknown as TextStreamPart<ToolSet>);
  return parts;
}
