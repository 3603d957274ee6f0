import { describe, expect, it } from 'vitest';
import { MinaraError, modelConfigStatus, resolveEmbedder, resolveModel } from '@minara/agent';

describe('model resolution', () => {
  it('reads MINARA_MODEL=provider:model and the usual key names', async () => {
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'anthropic:claude-sonnet-4-5', ANTHROPIC_API_KEY: 'k' } })).toMatchObject({ configured: true, provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
    const m = await resolveModel({ env: { MINARA_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'k' } });
    expect(typeof m === 'object' && m.modelId).toBe('gpt-4.1-mini');
    const local = await resolveModel({ env: { MINARA_MODEL: 'openai-compatible:llama3.1', MINARA_BASE_URL: 'http://127.0.0.1:11434/v1' } });
    expect(typeof local === 'object' && local.modelId).toBe('llama3.1');
    const a = await resolveModel({ env: { MINARA_MODEL: 'anthropic:claude-haiku-4-5', ANTHROPIC_API_KEY: 'k' } });
    expect(typeof a === 'object' && a.provider).toMatch(/anthropic/);
  });

  it('falls back to a provider default when only a key is set; --model wins over env', () => {
    expect(modelConfigStatus({ env: { ANTHROPIC_API_KEY: 'k' } })).toMatchObject({ configured: true, label: 'anthropic:claude-sonnet-4-5' });
    expect(modelConfigStatus({ model: 'openai:gpt-4o', env: { MINARA_MODEL: 'anthropic:x', OPENAI_API_KEY: 'k' } })).toMatchObject({ provider: 'openai', modelId: 'gpt-4o' });
  });

  it('explains what is missing, clearly', async () => {
    expect(modelConfigStatus({ env: {} })).toMatchObject({ configured: false, reason: expect.stringContaining('MINARA_MODEL is not set') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'claude' } })).toMatchObject({ configured: false, reason: expect.stringContaining('"provider:model"') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'anthropic:x' } })).toMatchObject({ configured: false, reason: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'openai-compatible:x' } })).toMatchObject({ configured: false, reason: expect.stringContaining('MINARA_MODEL_BASE_URL') });
    await expect(resolveModel({ env: {} })).rejects.toSatisfy((e) => MinaraError.isInstance(e) && e.code === 'MODEL_NOT_CONFIGURED' && e.message.includes('MINARA_MODEL=anthropic'));
  });

  it('resolves the embedder from EMBEDDING_PROVIDER, disabled by default', async () => {
    expect(await resolveEmbedder({ env: {} })).toBeUndefined();
    expect(await resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'disabled' } })).toBeUndefined();
    const e = await resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'openai', OPENAI_API_KEY: 'k' } });
    expect(typeof e === 'object' && e?.modelId).toBe('text-embedding-3-small');
    await expect(resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'openai' } })).rejects.toThrow(/EMBEDDING_API_KEY/);
    await expect(resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'cohere' } })).rejects.toThrow(/not supported/);
  });
});
