import type { EmbeddingModel, LanguageModel } from 'ai';
import { createFallbackModel } from '../llm/fallback-model';
import { modelConfigStatus, type ModelConfigStatus, resolveEmbedder, resolveModel } from '../llm/resolve-model';
import { type DisabledFeature, disabledFeatures } from './feature-gates';
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
  /** Features the configuration turned on that start disabled for want of what they need (feature-gates.ts). */
  readonly disabledFeatures: readonly DisabledFeature[];
  /** Whether a feature is among `disabledFeatures`. */
  readonly isOff: (feature: DisabledFeature['feature']) => boolean;
}

/** The models part: the model and its status, the embedder, and the features that start disabled without them. */
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
    modelStatus = modelConfigStatus({ model: config.model, baseUrl: config.baseUrl, env, help: options.modelHelp });
    model = modelStatus.configured ? await resolveModel({ model: config.model, baseUrl: config.baseUrl, env }) : createNotConfiguredModel(modelStatus);
  }
  // Features the environment turns on without what they need start disabled, one warning each (feature-gates.ts).
  const disabled = disabledFeatures({
    env, modelConfigured: modelStatus.configured, embedderGiven: options.embedder !== undefined, tradingProviderAvailable: Boolean(env.MINARA_API_KEY) || (options.finance !== false && options.finance?.provider !== undefined),
    heartbeatGiven: options.background?.heartbeatEveryMs !== undefined, workspaceGiven: options.workspace !== undefined,
  });
  for (const d of disabled) logger.warn(d.message);
  const isOff = (feature: DisabledFeature['feature']) => disabled.some((d) => d.feature === feature);
  const embedder = options.embedder === false || isOff('embeddings') ? undefined : (options.embedder ?? (await resolveEmbedder({ env })));
  const backgroundModel = modelStatus.configured ? (options.utilityModel ?? model) : undefined;
  return { model, modelStatus, embedder, backgroundModel, disabledFeatures: disabled, isOff };
}
