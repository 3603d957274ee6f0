import { MinaraError } from '../errors/minara-error';

/** What a model costs, in USD per million tokens. */
export interface ModelPrice {
  readonly inputPerMTok: number;
  readonly outputPerMTok: number;
  /** Input read from the prompt cache. @default inputPerMTok */
  readonly cacheReadPerMTok?: number | undefined;
  /** Input written to the prompt cache. @default inputPerMTok */
  readonly cacheWritePerMTok?: number | undefined;
}

/**
 * List prices of common models (USD per million tokens) as published by their providers at the time of writing;
 * keys match a model id or its start (`claude-sonnet-4-5` matches `claude-sonnet-4-5-20250929`). Prices change:
 * pass your own table (`createApp({ prices })`) to override or extend it.
 */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75 },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
  'claude-haiku-4': { inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1 },
  'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 },
  'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 },
});

/** The price of a model id: the longest key of `prices` it equals or starts with (after any `provider:` prefix). */
export function priceFor(modelId: string, prices: Readonly<Record<string, ModelPrice>> = DEFAULT_MODEL_PRICES): ModelPrice | undefined {
  const id = modelId.includes(':') ? modelId.slice(modelId.indexOf(':') + 1) : modelId;
  let best: string | undefined;
  for (const key of Object.keys(prices)) if (id.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : prices[best];
}

/**
 * The USD cost of a turn's usage. `inputTokens` includes the cached ones (the AI SDK's convention), so cache reads
 * and writes are priced at their own rates and only the rest at the input rate.
 */
export function usageCostUsd(usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadTokens: number; readonly cacheWriteTokens: number }, price: ModelPrice): number {
  for (const [k, v] of Object.entries(price)) {
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) throw new MinaraError('INVALID_ARGUMENT', `price.${k} must be a non-negative number of USD per million tokens, got ${String(v)}`);
  }
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const usd =
    uncached * price.inputPerMTok +
    usage.cacheReadTokens * (price.cacheReadPerMTok ?? price.inputPerMTok) +
    usage.cacheWriteTokens * (price.cacheWritePerMTok ?? price.inputPerMTok) +
    usage.outputTokens * price.outputPerMTok;
  return Math.round((usd / 1_000_000) * 1e6) / 1e6;
}
