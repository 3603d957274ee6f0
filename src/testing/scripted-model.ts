import type { LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { stringifyJsonIteratively } from './json-text';
import { jsonTextLength } from '../util/json-length';

/** One scripted model step: what the model "says" on one call. */
export interface ScriptedStep {
  /** Assistant text for this step. */
  readonly text?: string | undefined;
  /** Reasoning text (sent before the answer). */
  readonly reasoning?: string | undefined;
  /**
   * Tool calls; `input` is an object (serialised to JSON for the provider protocol, without recursion, so an
   * input nested thousands of levels deep reaches the runtime as JSON text the way a real provider sends it),
   * or `inputText` the raw JSON text a provider would send (to play malformed, huge or deeply nested model output).
   */
  readonly toolCalls?: ReadonlyArray<{ readonly toolName: string; readonly input?: unknown; readonly inputText?: string | undefined; readonly toolCallId?: string | undefined }> | undefined;
  /** Token usage reported for this step. Input tokens default to a deterministic estimate of the prompt size. */
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number; readonly cacheReadTokens?: number; readonly cacheWriteTokens?: number } | undefined;
  /** @default 'tool-calls' when the step has tool calls, else 'stop' */
  readonly finishReason?: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other' | undefined;
  /** Make this call fail with this error (to test error paths and overflow recovery). */
  readonly error?: Error | string | undefined;
}

/** A step, or a function of the call that returns one (for responses that depend on the prompt). */
export type ScriptEntry = ScriptedStep | ((call: ScriptedCall) => ScriptedStep);

/** What the provider received on one call. */
export interface ScriptedCall {
  /** 0-based call index. */
  readonly index: number;
  readonly kind: 'stream' | 'generate';
  /** The prompt as the provider sees it: system blocks (with providerOptions), then messages. */
  readonly prompt: LanguageModelV4CallOptions['prompt'];
  /** Tools in the order the provider received them. */
  readonly tools: LanguageModelV4CallOptions['tools'];
  readonly toolChoice: LanguageModelV4CallOptions['toolChoice'];
  readonly providerOptions: LanguageModelV4CallOptions['providerOptions'];
  /** The full call options. */
  readonly options: LanguageModelV4CallOptions;
}

/** A `MockLanguageModelV4` driven by a script, with strict accounting. */
export type ScriptedModel = MockLanguageModelV4 & {
  /** Every call the provider received, in order. */
  readonly calls: readonly ScriptedCall[];
  /** Steps not consumed yet. */
  readonly remaining: number;
  /** Throws when a step was left unconsumed or an unexpected extra call happened. */
  assertConsumed(): void;
  /** Append more steps (e.g. for the next turn). */
  push(...steps: ScriptEntry[]): void;
};

/** Options for {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /** @default 'scripted' */
  readonly provider?: string | undefined;
  /** @default 'scripted-model' */
  readonly modelId?: string | undefined;
  /** Delay between stream chunks, to exercise cancellation. @default 0 */
  readonly chunkDelayMs?: number | undefined;
}

/**
 * Characters of the JSON text of data: counted for plain data (long strings' lengths remembered by content), else
 * the engine's `JSON.stringify` (fast), the iterative one when the value is nested too deep for it. The same number
 * whichever way.
 */
function jsonLength(value: unknown): number {
  return jsonTextLength(value, (v) => {
    try {
      return JSON.stringify(v);
    } catch (error) {
      if (error instanceof RangeError) return stringifyJsonIteratively(v);
      throw error;
    }
  });
}

/** A deterministic input-token estimate: characters of the serialised prompt / 4 (any nesting depth). */
export function estimatePromptTokens(prompt: unknown, tools?: unknown): number {
  return Math.ceil(jsonLength(prompt) / 4 + (tools ? jsonLength(tools) / 4 : 0));
}

/**
 * A scripted language model for offline tests and demos, built on `MockLanguageModelV4`. Each call
 * consumes the next step; an unexpected extra call fails the call loudly (and `assertConsumed` throws),
 * and so do steps left over. Every call is recorded in `model.calls` with the prompt, tools and provider
 * options the provider received, so tests can assert cache markers and byte-stable prefixes.
 *
 * @example
 * ```ts
 * const model = createScriptedModel([
 *   { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
 *   { text: 'BTC is $97,250.' },
 * ]);
 * // … run a turn …
 * model.assertConsumed();
 * expect(model.calls[0].prompt[0]).toMatchObject({ role: 'system' });
 * ```
 */
export function createScriptedModel(steps: readonly ScriptEntry[], options: ScriptedModelOptions = {}): ScriptedModel {
  const { provider = 'scripted', modelId = 'scripted-model', chunkDelayMs = 0 } = options;
  const queue: ScriptEntry[] = [...steps];
  const calls: ScriptedCall[] = [];
  const unexpected: number[] = [];
  let callIds = 0;

  const next = (kind: 'stream' | 'generate', opts: LanguageModelV4CallOptions): ScriptedStep => {
    const call: ScriptedCall = { index: calls.length, kind, prompt: opts.prompt, tools: opts.tools, toolChoice: opts.toolChoice, providerOptions: opts.providerOptions, options: opts };
    calls.push(call);
    const entry = queue.shift();
    if (entry === undefined) {
      unexpected.push(call.index);
      throw new Error(`createScriptedModel: unexpected model call #${call.index + 1}; the script has no step left (${calls.length - 1} consumed).`);
    }
    const step = typeof entry === 'function' ? entry(call) : entry;
    if (step.error !== undefined) throw typeof step.error === 'string' ? new Error(step.error) : step.error;
    return step;
  };

  const usageOf = (step: ScriptedStep, opts: LanguageModelV4CallOptions): LanguageModelV4Usage => {
    const input = step.usage?.inputTokens ?? estimatePromptTokens(opts.prompt, opts.tools);
    const cacheRead = step.usage?.cacheReadTokens;
    const cacheWrite = step.usage?.cacheWriteTokens;
    const output = step.usage?.outputTokens ?? Math.ceil(((step.text ?? '').length + jsonLength(step.toolCalls ?? [])) / 4);
    return {
      inputTokens: { total: input, noCache: input - (cacheRead ?? 0) - (cacheWrite ?? 0), cacheRead, cacheWrite },
      outputTokens: { total: output, text: output, reasoning: undefined },
    };
  };
  const finishOf = (step: ScriptedStep) => ({
    unified: step.finishReason ?? ((step.toolCalls?.length ?? 0) > 0 ? ('tool-calls' as const) : ('stop' as const)),
    raw: undefined,
  });
  const toolCallsOf = (step: ScriptedStep) =>
    (step.toolCalls ?? []).map((tc) => ({ toolCallId: tc.toolCallId ?? `call_${++callIds}`, toolName: tc.toolName, input: tc.inputText ?? stringifyJsonIteratively(tc.input ?? {}) ?? '{}' }));

  const model = new MockLanguageModelV4({
    provider,
    modelId,
    doStream: async (opts) => {
      const step = next('stream', opts);
      const chunks: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (step.reasoning) chunks.push({ type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: step.reasoning }, { type: 'reasoning-end', id: 'r' });
      if (step.text) {
        chunks.push({ type: 'text-start', id: 't' });
        // A few deltas, so streaming consumers see more than one piece.
        for (const piece of step.text.match(/.{1,24}/gsu) ?? []) chunks.push({ type: 'text-delta', id: 't', delta: piece });
        chunks.push({ type: 'text-end', id: 't' });
      }
      for (const tc of toolCallsOf(step)) chunks.push({ type: 'tool-call', ...tc });
      chunks.push({ type: 'finish', finishReason: finishOf(step), usage: usageOf(step, opts) });
      const signal = opts.abortSignal;
      let i = 0;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          if (signal?.aborted) {
            controller.error(signal.reason ?? new DOMException('Aborted', 'AbortError'));
            return;
          }
          if (chunkDelayMs > 0 && i > 0) await new Promise((r) => setTimeout(r, chunkDelayMs));
          if (i < chunks.length) controller.enqueue(chunks[i++]!);
          else controller.close();
        },
      });
      return { stream };
    },
    doGenerate: async (opts) => {
      const step = next('generate', opts);
      const content: LanguageModelV4Content[] = [];
      if (step.reasoning) content.push({ type: 'reasoning', text: step.reasoning });
      if (step.text) content.push({ type: 'text', text: step.text });
      for (const tc of toolCallsOf(step)) content.push({ type: 'tool-call', ...tc });
      return { content, finishReason: finishOf(step), usage: usageOf(step, opts), warnings: [] };
    },
  });

  Object.defineProperties(model, {
    calls: { get: () => calls, enumerable: true },
    remaining: { get: () => queue.length, enumerable: true },
  });
  return Object.assign(model, {
    assertConsumed() {
      const problems: string[] = [];
      if (queue.length > 0) problems.push(`${queue.length} scripted step(s) were never used`);
      if (unexpected.length > 0) problems.push(`unexpected extra model call(s) #${unexpected.map((i) => i + 1).join(', #')}`);
      if (problems.length > 0) throw new Error(`createScriptedModel: ${problems.join('; ')}.`);
    },
    push(...more: ScriptEntry[]) {
      queue.push(...more);
    },
  }) as ScriptedModel;
}
