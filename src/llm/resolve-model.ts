import type { EmbeddingModel, LanguageModel } from 'ai';
import { MinaraError } from '../errors/minara-error';

/** Providers `MINARA_MODEL=provider:model` understands. */
export const MODEL_PROVIDERS = ['anthropic', 'openai', 'xai', 'openrouter', 'openai-compatible'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** Defaults when only a provider key is set. */
export const DEFAULT_MODELS: Readonly<Record<'anthropic' | 'openai' | 'xai' | 'openrouter', string>> = {
  anthropic: 'claude-sonnet-4-5',
  openai: 'gpt-4.1-mini',
  xai: 'grok-4',
  openrouter: 'anthropic/claude-sonnet-4.5',
};

/**
 * The providers whose package is an optional peer dependency (installed by the host when used), with the key each
 * needs. `anthropic`, `openai` and `openai-compatible` ship with the package.
 */
const OPTIONAL_PROVIDERS: Readonly<Record<'xai' | 'openrouter', { readonly pkg: string; readonly key: string }>> = {
  xai: { pkg: '@ai-sdk/xai', key: 'XAI_API_KEY' },
  openrouter: { pkg: '@openrouter/ai-sdk-provider', key: 'OPENROUTER_API_KEY' },
};

/** Where the model configuration came from, without loading anything. */
export type ModelConfigStatus =
  | { readonly configured: true; readonly provider: ModelProvider | 'custom'; readonly modelId: string; readonly baseUrl?: string | undefined; readonly label: string }
  | { readonly configured: false; readonly reason: string; readonly help: string };

const MODEL_CHOICES = [
  'No language model is configured. Set one of:',
  '  MINARA_MODEL=anthropic:claude-sonnet-4-5   with ANTHROPIC_API_KEY',
  '  MINARA_MODEL=openai:gpt-4.1-mini           with OPENAI_API_KEY',
  '  MINARA_MODEL=xai:grok-4                    with XAI_API_KEY (npm install @ai-sdk/xai)',
  '  MINARA_MODEL=openrouter:anthropic/claude-sonnet-4.5   with OPENROUTER_API_KEY (npm install @openrouter/ai-sdk-provider)',
  '  MINARA_MODEL=openai-compatible:llama3.1    with MINARA_MODEL_BASE_URL=http://127.0.0.1:11434/v1 (Ollama, LM Studio, vLLM, OpenRouter)',
];

/**
 * How to configure a model, for messages shown to people, in the words of a host application: the environment
 * variables, or `createApp`'s `model` option. Its first line is the same as {@link CLI_MODEL_HELP}'s.
 */
export const MODEL_HELP = [
  ...MODEL_CHOICES,
  "in the environment or a .env file, or pass `model` to createApp: an AI SDK model (e.g. openai('gpt-4.1-mini')) or a \"provider:model\" string.",
].join('\n');

/** {@link MODEL_HELP} for a command line (the `minara` CLI): the last line names the `--model` flag. */
export const CLI_MODEL_HELP = [...MODEL_CHOICES, 'in the shell or in a .env file, or pass --model provider:model.'].join('\n');

/** Environment variables as the resolvers read them (`process.env` or a plain object). */
export type EnvVars = Readonly<Record<string, string | undefined>>;

/**
 * Read the model configuration from options and env without importing a provider: `model` (or
 * `MINARA_MODEL`) as `provider:model`; with none, a provider key alone picks that provider's default. `help` is
 * the instructions an unconfigured status carries (default {@link MODEL_HELP}; the CLI passes {@link CLI_MODEL_HELP}).
 *
 * @example
 * ```ts
 * modelConfigStatus({ env: { MINARA_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'sk-…' } });
 * // { configured: true, provider: 'openai', modelId: 'gpt-4.1-mini', label: 'openai:gpt-4.1-mini' }
 * ```
 */
export function modelConfigStatus(options: { model?: string | undefined; baseUrl?: string | undefined; env?: EnvVars; help?: string | undefined } = {}): ModelConfigStatus {
  const env = options.env ?? process.env;
  const help = options.help ?? MODEL_HELP;
  const spec = options.model ?? env.MINARA_MODEL;
  const baseUrl = options.baseUrl ?? env.MINARA_MODEL_BASE_URL ?? env.MINARA_BASE_URL;
  if (spec === undefined || spec.trim() === '') {
    if (env.ANTHROPIC_API_KEY) return { configured: true, provider: 'anthropic', modelId: DEFAULT_MODELS.anthropic, label: `anthropic:${DEFAULT_MODELS.anthropic}` };
    if (env.OPENAI_API_KEY) return { configured: true, provider: 'openai', modelId: DEFAULT_MODELS.openai, label: `openai:${DEFAULT_MODELS.openai}` };
    return { configured: false, reason: 'MINARA_MODEL is not set and no provider key was found.', help };
  }
  const i = spec.indexOf(':');
  const provider = (i > 0 ? spec.slice(0, i) : '') as ModelProvider;
  const modelId = i > 0 ? spec.slice(i + 1).trim() : '';
  if (!MODEL_PROVIDERS.includes(provider) || modelId === '') {
    // A bare model id names its provider often enough to suggest the fix.
    const bare = i > 0 ? '' : spec.trim();
    const guess = /^(gpt-|o\d|chatgpt-)/i.test(bare) ? `openai:${bare}` : /^claude-/i.test(bare) ? `anthropic:${bare}` : /^grok-/i.test(bare) ? `xai:${bare}` : bare.includes('/') ? `openrouter:${bare}` : undefined;
    return {
      configured: false,
      reason: `MINARA_MODEL="${spec}" is not "provider:model" with provider one of ${MODEL_PROVIDERS.join(', ')}.${guess ? ` Did you mean MINARA_MODEL=${guess}?` : ''}`,
      help,
    };
  }
  if (provider === 'anthropic' && !env.ANTHROPIC_API_KEY) return { configured: false, reason: 'MINARA_MODEL uses anthropic but ANTHROPIC_API_KEY is not set.', help };
  if (provider === 'openai' && !env.OPENAI_API_KEY) return { configured: false, reason: 'MINARA_MODEL uses openai but OPENAI_API_KEY is not set.', help };
  if ((provider === 'xai' || provider === 'openrouter') && !env[OPTIONAL_PROVIDERS[provider].key]) {
    return { configured: false, reason: `MINARA_MODEL uses ${provider} but ${OPTIONAL_PROVIDERS[provider].key} is not set.`, help };
  }
  if (provider === 'openai-compatible' && !baseUrl) return { configured: false, reason: 'MINARA_MODEL uses openai-compatible but MINARA_MODEL_BASE_URL is not set.', help };
  return { configured: true, provider, modelId, ...(provider === 'openai-compatible' ? { baseUrl } : {}), label: `${provider}:${modelId}` };
}

/** Load an optional peer provider package, or say which package to install. */
async function importOptionalProvider<T>(provider: 'xai' | 'openrouter', load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    // The loader's error, or one that wraps it (bundlers and test runners keep the original as `cause`).
    let missing = false;
    for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
      const code = (e as { code?: unknown }).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') missing = true;
    }
    if (missing) {
      const { pkg } = OPTIONAL_PROVIDERS[provider];
      throw new MinaraError('MODEL_NOT_CONFIGURED', `MINARA_MODEL uses ${provider}, whose provider package is an optional peer dependency: npm install ${pkg}`);
    }
    throw error;
  }
}

/**
 * Resolve the configured language model. Provider packages are loaded only when used; `xai` and `openrouter` need
 * their optional peer package (`@ai-sdk/xai`, `@openrouter/ai-sdk-provider`).
 *
 * @throws MinaraError `MODEL_NOT_CONFIGURED` with instructions when nothing usable is configured.
 * @example
 * ```ts
 * const model = await resolveModel({ env: process.env });
 * ```
 */
export async function resolveModel(options: { model?: string | undefined; baseUrl?: string | undefined; env?: EnvVars; help?: string | undefined } = {}): Promise<LanguageModel> {
  const env = options.env ?? process.env;
  const status = modelConfigStatus(options);
  if (!status.configured) throw new MinaraError('MODEL_NOT_CONFIGURED', `${status.reason}\n${status.help}`);
  switch (status.provider) {
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey: env.ANTHROPIC_API_KEY ?? '', ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}) })(status.modelId);
    }
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ apiKey: env.OPENAI_API_KEY ?? '', ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}) })(status.modelId);
    }
    case 'xai': {
      const { createXai } = await importOptionalProvider('xai', () => import('@ai-sdk/xai'));
      return createXai({ apiKey: env.XAI_API_KEY ?? '', ...(env.XAI_BASE_URL ? { baseURL: env.XAI_BASE_URL } : {}) })(status.modelId);
    }
    case 'openrouter': {
      const { createOpenRouter } = await importOptionalProvider('openrouter', () => import('@openrouter/ai-sdk-provider'));
      return createOpenRouter({ apiKey: env.OPENROUTER_API_KEY ?? '', compatibility: 'strict', ...(env.OPENROUTER_BASE_URL ? { baseURL: env.OPENROUTER_BASE_URL } : {}) }).chat(status.modelId, { usage: { include: true } });
    }
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const apiKey = env.OPENAI_COMPATIBLE_API_KEY ?? env.OPENROUTER_API_KEY;
      // includeUsage: ask for stream_options.include_usage, or Ollama, vLLM and LM Studio report zero tokens (budgets and cost need them).
      return createOpenAICompatible({ name: 'openai-compatible', baseURL: status.baseUrl!, includeUsage: true, ...(apiKey ? { apiKey } : {}) }).chatModel(status.modelId);
    }
    case 'custom':
      throw new MinaraError('MODEL_NOT_CONFIGURED', 'A custom model is passed as an object, not resolved from env.');
  }
}

/**
 * Resolve the embedding model from `EMBEDDING_PROVIDER` (`disabled` by default, or `openai` with
 * `EMBEDDING_API_KEY` / `OPENAI_API_KEY`, model `EMBEDDING_MODEL`, default `text-embedding-3-small`).
 * Returns undefined when disabled: memory search is then BM25 + entity boost.
 */
export async function resolveEmbedder(options: { env?: EnvVars } = {}): Promise<EmbeddingModel | undefined> {
  const env = options.env ?? process.env;
  const provider = (env.EMBEDDING_PROVIDER ?? 'disabled').trim().toLowerCase();
  if (provider === '' || provider === 'disabled' || provider === 'none') return undefined;
  if (provider !== 'openai') {
    throw new MinaraError('CONFIG_INVALID', `EMBEDDING_PROVIDER="${provider}" is not supported; use "openai" or "disabled".`);
  }
  const apiKey = env.EMBEDDING_API_KEY ?? env.OPENAI_API_KEY;
  if (!apiKey) throw new MinaraError('CONFIG_INVALID', 'EMBEDDING_PROVIDER=openai needs EMBEDDING_API_KEY or OPENAI_API_KEY.');
  const { createOpenAI } = await import('@ai-sdk/openai');
  return createOpenAI({ apiKey }).embedding(env.EMBEDDING_MODEL ?? 'text-embedding-3-small');
}

/**
 * Configuration warnings about endpoints and credentials, for the host to log once at start. Today: the
 * legacy `MINARA_BASE_URL` (model endpoint only) set together with `MINARA_API_KEY`, a setup that once sent
 * the Minara key to the model server.
 */
export function endpointWarnings(env: EnvVars = process.env): string[] {
  const out: string[] = [];
  if (env.MINARA_BASE_URL && !env.MINARA_MODEL_BASE_URL && env.MINARA_API_KEY) {
    out.push('MINARA_BASE_URL now sets only the model endpoint; the Minara API uses MINARA_API_BASE_URL (default https://api.minara.ai). Rename MINARA_BASE_URL to MINARA_MODEL_BASE_URL to silence this warning.');
  }
  return out;
}
