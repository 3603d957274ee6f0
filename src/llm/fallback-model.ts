import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { MinaraError } from '../errors/minara-error';
import { type Logger, silentLogger } from '../util/logger';

/** Options of {@link createFallbackModel}. */
export interface FallbackModelOptions {
  readonly logger?: Logger | undefined;
  /** Decide whether an error moves on to the next model. @default {@link isFallbackError} */
  readonly shouldFallback?: ((error: unknown) => boolean) | undefined;
}

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);

/**
 * Whether a model error is worth trying the next model for: overload and rate limits (429, 529), server errors
 * (5xx), timeouts and network failures, or anything the provider marks `isRetryable`. Never a 4xx that says the
 * request itself is wrong (400, 401, 403, 404, 413, 422) and never a safety refusal: the next model would be asked
 * the same thing.
 */
export function isFallbackError(error: unknown): boolean {
  const e = error as { statusCode?: unknown; isRetryable?: unknown; name?: unknown; code?: unknown; cause?: unknown } | undefined;
  if (e === undefined || e === null) return false;
  if (typeof e.statusCode === 'number') return RETRYABLE_STATUS.has(e.statusCode) || e.statusCode >= 500;
  if (e.isRetryable === true) return true;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return e.name === 'TimeoutError';
  const code = typeof e.code === 'string' ? e.code : typeof (e.cause as { code?: unknown } | undefined)?.code === 'string' ? (e.cause as { code: string }).code : '';
  return /^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|UND_ERR_)/.test(code);
}

/**
 * One model that is several: calls go to the first; a call that fails with an error {@link isFallbackError}
 * accepts (overload, 5xx, timeouts, network) goes to the next, and so on. A stream falls back only before it
 * has produced anything (an error as its first part, or a failed request); once text flows, it is that model's
 * answer. The model that answered is in the stream's `response-metadata` (`modelId`), which the runtime puts on
 * `turn-end` as `modelId`.
 *
 * @example
 * ```ts
 * const model = createFallbackModel([anthropic('claude-sonnet-4-5'), openai('gpt-4.1')]);
 * const app = await createApp({ model });
 * ```
 */
export function createFallbackModel(models: readonly LanguageModelV4[], options: FallbackModelOptions = {}): LanguageModelV4 {
  if (!Array.isArray(models) || models.length === 0) throw new MinaraError('CONFIG_INVALID', 'createFallbackModel: give at least one model.');
  for (const [i, m] of models.entries()) {
    if (typeof m !== 'object' || m === null || m.specificationVersion !== 'v4') throw new MinaraError('CONFIG_INVALID', `createFallbackModel: models[${i}] must be an AI SDK language model object (specification v4).`);
  }
  const { logger = silentLogger, shouldFallback = isFallbackError } = options;
  const primary = models[0]!;
  const label = (m: LanguageModelV4) => `${m.provider}:${m.modelId}`;

  async function attempt<T>(call: (m: LanguageModelV4) => PromiseLike<T>, settle?: (m: LanguageModelV4, value: T) => Promise<T>): Promise<T> {
    let last: unknown;
    for (const [i, model] of models.entries()) {
      try {
        const value = await call(model);
        return settle ? await settle(model, value) : value;
      } catch (error) {
        last = error;
        const next = models[i + 1];
        if (!next || !shouldFallback(error)) throw error;
        logger.warn(`model ${label(model)} failed; falling back to ${label(next)}`, { module: 'llm', error: error instanceof Error ? error.message : String(error) });
      }
    }
    throw last;
  }

  /** Read the first part; an error part before any output counts as the call failing. */
  async function settleStream(model: LanguageModelV4, result: Awaited<ReturnType<LanguageModelV4['doStream']>>) {
    const reader = result.stream.getReader();
    const buffered: LanguageModelV4StreamPart[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.type === 'error') {
        await reader.cancel().catch(() => {});
        throw value.error;
      }
      buffered.push(value);
      // Metadata and stream-start carry no output: keep reading until the first real part.
      if (value.type !== 'stream-start' && value.type !== 'response-metadata') break;
    }
    // Say which model answered, when the provider did not.
    if (!buffered.some((p) => p.type === 'response-metadata')) buffered.unshift({ type: 'response-metadata', modelId: model.modelId });
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        for (const p of buffered) controller.enqueue(p);
      },
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return { ...result, stream };
  }

  return {
    specificationVersion: 'v4',
    provider: primary.provider,
    modelId: models.map((m) => m.modelId).join('|'),
    supportedUrls: primary.supportedUrls,
    doGenerate: (callOptions: LanguageModelV4CallOptions) =>
      attempt(
        (m) => m.doGenerate(callOptions),
        async (m, result) => ({ ...result, response: { ...result.response, modelId: result.response?.modelId ?? m.modelId } }),
      ),
    doStream: (callOptions: LanguageModelV4CallOptions) => attempt((m) => m.doStream(callOptions), settleStream),
  };
}
