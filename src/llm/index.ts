export { DEFAULT_MODELS, endpointWarnings, MODEL_HELP, MODEL_PROVIDERS, type ModelConfigStatus, type ModelProvider, modelConfigStatus, resolveEmbedder, resolveModel } from './resolve-model';
