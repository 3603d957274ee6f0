import type { LanguageModelV4 } from '@ai-sdk/provider';
import { MinaraError } from '../errors/minara-error';
import type { ModelConfigStatus } from '../llm/resolve-model';

/**
 * A stand-in model for an app with no model configured: everything else works (tools, memory, slash
 * commands), and a turn fails with `MODEL_NOT_CONFIGURED` and the instructions to configure one.
 */
export function createNotConfiguredModel(status: ModelConfigStatus): LanguageModelV4 {
  const fail = (): never => {
    const detail = status.configured ? '' : `${status.reason}\n${status.help}`;
    throw new MinaraError('MODEL_NOT_CONFIGURED', detail || 'No language model is configured.');
  };
  return {
    specificationVersion: 'v4',
    provider: 'minara',
    modelId: 'not-configured',
    supportedUrls: {},
    doGenerate: async () => fail(),
    doStream: async () => fail(),
  };
}
