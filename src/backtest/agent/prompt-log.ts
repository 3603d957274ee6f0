/**
 * The context the model saw at each decision: the system prompt of the decision's first model call (instructions,
 * the learned block, memory, the workspace files — everything the runtime put before the message). Each distinct
 * prompt is kept once, by its sha256, for `system_prompts.jsonl`; a decision names the one it was given.
 */
import { createHash, type Hash } from 'node:crypto';
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

/**
 * Note the first call's prompt of every decision; hash and keep its system part once. The system messages are kept
 * as they came (joined with a blank line only when the file is written), so a block the runtime sends unchanged at
 * every decision (the workspace identity) is held once, not once per decision; and the hash of that first block is
 * taken once and resumed (`Hash.copy`) while it stays the same text: the digest is the one of the joined text.
 */
export function createPromptLog(inner: LanguageModelV4): PromptLog {
  const texts = new Map<string, readonly string[]>();
  let first: LanguageModelV4CallOptions['prompt'] | undefined;
  let lead: { readonly text: string; readonly hash: Hash } | undefined;
  const note = (o: LanguageModelV4CallOptions) => {
    first ??= o.prompt;
    return o;
  };
  let previous: readonly string[] = [];
  /** A block equal to the previous decision's at the same place is held as that one string (one copy kept). */
  const intern = (parts: string[]): string[] => {
    for (let i = 0; i < parts.length && i < previous.length; i++) if (parts[i] === previous[i]) parts[i] = previous[i]!;
    previous = parts;
    return parts;
  };
  const digest = (parts: readonly string[]): string => {
    if (parts.length === 0) return createHash('sha256').digest('hex');
    const head = parts[0]!;
    if (lead?.text !== head) lead = { text: head, hash: createHash('sha256').update(head) };
    const hash = lead.hash.copy();
    for (let i = 1; i < parts.length; i++) hash.update('\n\n').update(parts[i]!);
    return hash.digest('hex');
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
      const parts = intern(prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])));
      const sha256 = digest(parts);
      if (!texts.has(sha256)) texts.set(sha256, parts);
      return { sha256, chars: parts.reduce((n, p) => n + p.length, 0) + 2 * Math.max(0, parts.length - 1) };
    },
    file: () => [...texts].map(([sha256, parts]) => `${JSON.stringify({ sha256, text: parts.join('\n\n') })}\n`).join(''),
  };
}
