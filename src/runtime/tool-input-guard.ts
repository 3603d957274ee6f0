import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { LanguageModel } from 'ai';
import { jsonTextBoundsProblem, REJECTED_TOOL_INPUT_KEY } from '../tools/input-bounds';

const replacement = (problem: string) => JSON.stringify({ [REJECTED_TOOL_INPUT_KEY]: `${problem}; send a smaller, flatter input` });

/** A tool call's input, or the stand-in when it is too large or nested too deep. */
function guarded<T extends { readonly type: string; readonly input?: unknown }>(part: T): T {
  if (part.type !== 'tool-call' || typeof part.input !== 'string') return part;
  const problem = jsonTextBoundsProblem(part.input);
  return problem ? { ...part, input: replacement(problem) } : part;
}

/**
 * Wrap a model so a tool call whose input is too large or nested too deep never reaches the AI SDK's JSON
 * parser (5,000 levels overflow its stack and used to crash the turn after the tools had run): the input is
 * replaced by a small stand-in that the registry refuses as `TOOL_INPUT_INVALID` with the reason. Models given by id (strings) are returned unchanged.
 *
 * A plain `LanguageModelV4` object that forwards to the model (what `wrapLanguageModel` builds), written here so
 * that creating a runtime does not load the `ai` package: it loads with the first model call.
 */
export function guardToolInputs(model: LanguageModel): LanguageModel {
  if (typeof model === 'string') return model;
  const inner = model as LanguageModelV4;
  const wrapped: LanguageModelV4 = {
    specificationVersion: inner.specificationVersion,
    provider: inner.provider,
    modelId: inner.modelId,
    get supportedUrls() {
      return inner.supportedUrls;
    },
    async doGenerate(options) {
      const result = await inner.doGenerate(options);
      return { ...result, content: result.content.map((part) => guarded(part)) };
    },
    async doStream(options) {
      const result = await inner.doStream(options);
      const guard = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
        transform(part, controller) {
          controller.enqueue(guarded(part));
        },
      });
      return { ...result, stream: result.stream.pipeThrough(guard) };
    },
  };
  return wrapped;
}
