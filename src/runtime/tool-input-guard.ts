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
 * The model's stream with each tool call's input guarded: a pull-driven `ReadableStream` over the model's own
 * reader (one read per part pulled), about a third of what `pipeThrough(new TransformStream(...))` costs per
 * model call. Cancelling it cancels the model's stream.
 */
function guardedStream(source: ReadableStream<LanguageModelV4StreamPart>): ReadableStream<LanguageModelV4StreamPart> {
  const reader = source.getReader();
  return new ReadableStream<LanguageModelV4StreamPart>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(guarded(value));
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
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
      return { ...result, stream: guardedStream(result.stream) };
    },
  };
  return wrapped;
}
