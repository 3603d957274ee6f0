import type { EmbeddingModel, LanguageModel } from 'ai';
import { createFallbackModel } from '../llm/fallback-model';
import { modelConfigStatus, type ModelConfigStatus, resolveEmbedder, resolveModel } from '../llm/resolve-model';
import { createNotConfiguredModel } from './not-configured-model';
import type { AppSettings } from './settings';

/** The models of the app. */
export interface AppModels {
  /** The turn's model (a fallback chain, the given model, the one env names, or one that explains how to configure one). */
  readonly model: LanguageModel;
  readonly modelStatus: ModelConfigStatus;
  readonly embedder: EmbeddingModel | undefined;
  /**
   * The model for work beside the turns (the role reflector, the learning jobs): the utility model, else the
   * main one; undefined when no model is configured.
   */
  readonly backgroundModel: LanguageModel | undefined;
}

/** The models part: the model and its status, the embedder. */
export async function resolveAppModels(settings: AppSettings): Promise<AppModels> {
  const { options, config, env, logger } = settings;
  let model: LanguageModel;
  let modelStatus: ModelConfigStatus;
  if (options.models !== undefined) {
    model = createFallbackModel(options.models, { logger });
    modelStatus = { configured: true, provider: 'custom', modelId: model.modelId, label: `fallback:${model.modelId}` };
  } else if (options.model !== undefined && typeof options.model !== 'string') {
    model = options.model;
    const modelId = typeof model === 'string' ? model : model.modelId;
    modelStatus = { configured: true, provider: 'custom', modelId, label: `custom:${modelId}` };
  } else {
    modelStatus = modelConfigStatus({ model: config.model, baseUrl: config.baseUrl, env });
    model = modelStatus.configured ? await resolveModel({ model: config.model, baseUrl: config.baseUrl, env }) : createNotConfiguredModel(modelStatus);
  }
  const embedder = options.embedder === false ? undefined : (options.embedder ?? (await resolveEmbedder({ env })));
  const backgroundModel = modelStatus.configured ? (options.utilityModel ?? model) : undefined;
  return { model, modelStatus, embedder, backgroundModel };
}
