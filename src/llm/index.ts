export { CLI_MODEL_HELP, DEFAULT_MODELS, endpointWarnings, type EnvVars, MODEL_HELP, MODEL_PROVIDERS, type ModelConfigStatus, type ModelProvider, modelConfigStatus, resolveEmbedder, resolveModel } from './resolve-model';
export { createFallbackModel, type FallbackModelOptions, isFallbackError } from './fallback-model';
export { DEFAULT_MODEL_PRICES, type ModelPrice, priceFor, usageCostUsd } from './pricing';
