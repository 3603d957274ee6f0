/**
 * The context the model saw at each decision: the system prompt of the decision's first model call (instructions,
 * the learned block, memory, the workspace files — everything the runtime put before the message). Each distinct
 * prompt is kept once, by its sha256, for `system_prompts.jsonl`; a decision names the one it was given.
 */
import { createHash } from 'node:crypto';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';

/** Which system prompt a decision's model was given (the text is in system_prompts.jsonl under this sha256). */
export interface DecisionContext {
  readonly sha256: string;
  readonly chars: number;
}

/** What {@link createPromptLog} returns. */
export interface PromptLog {
  /** The model to give the runtime: the same model, its first call's prompt noted at each decision. */
  readonly model: LanguageModelV4;
  /** The system prompt of the first call since the last `take` (undefined when the model was not called). */
  take(): DecisionContext | undefined;
  /** `system_prompts.jsonl`: one `{ sha256, text }` per distinct system prompt, in first-seen order. */
  file(): string;
}

/** Note the first call's prompt of every decision; hash and keep its system part once. */
export function createPromptLog(inner: LanguageModelV4): PromptLog {
  const texts = new Map<string, string>();
  let first: LanguageModelV4CallOptions['prompt'] | undefined;
  const note = (o: LanguageModelV4CallOptions) => {
    first ??= o.prompt;
    return o;
  };
  const model: LanguageModelV4 = {
    specificationVersion: 'v4', provider: inner.provider, modelId: inner.modelId, supportedUrls: inner.supportedUrls,
    doGenerate: (o) => inner.doGenerate(note(o)),
    doStream: (o) => inner.doStream(note(o)),
  };
  return {
    model,
    take() {
      const prompt = first;
      first = undefined;
      if (!prompt) return undefined;
      const text = prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
      const sha256 = createHash('sha256').update(text).digest('hex');
      if (!texts.has(sha256)) texts.set(sha256, text);
      return { sha256, chars: text.length };
    },
    file: () => [...texts].map(([sha256, text]) => `${JSON.stringify({ sha256, text })}\n`).join(''),
  };
}
