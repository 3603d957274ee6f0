import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { type LanguageModel, wrapLanguageModel } from 'ai';
import { jsonTextBoundsProblem, REJECTED_TOOL_INPUT_KEY } from '../tools/input-bounds';

const replacement = (problem: string) => JSON.stringify({ [REJECTED_TOOL_INPUT_KEY]: `${problem}; send a smaller, flatter input` });

/**
 * Wrap a model so a tool call whose input is too large or nested too deep never reaches the AI SDK's JSON
 * parser (5,000 levels overflow its stack and used to crash the turn after the tools had run): the input is
 * replaced by a small stand-in that the registry refuses as `TOOL_INPUT_INVALID` with the reason. Models given by id (strings) are returned unchanged.
 */
export function guardToolInputs(model: LanguageModel): LanguageModel {
  if (typeof model === 'string') return model;
  return wrapLanguageModel({
    model: model as LanguageModelV4,
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate }) => {
        const result = await doGenerate();
        return {
          ...result,
          content: result.content.map((part) => {
            if (part.type !== 'tool-call') return part;
            const problem = jsonTextBoundsProblem(part.input);
            return problem ? { ...part, input: replacement(problem) } : part;
          }),
        };
      },
      wrapStream: async ({ doStream }) => {
        const result = await doStream();
        const guard = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            if (part.type === 'tool-call') {
              const problem = jsonTextBoundsProblem(part.input);
              if (problem) {
                controller.enqueue({ ...part, input: replacement(problem) });
                return;
              }
            }
            controller.enqueue(part);
          },
        });
        return { ...result, stream: result.stream.pipeThrough(guard) };
      },
    },
  });
}
