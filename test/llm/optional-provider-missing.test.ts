import { describe, expect, it, vi } from 'vitest';

// Without the optional peer package, resolving an xai / openrouter model says which package to install.
vi.mock('@ai-sdk/xai', () => {
  throw Object.assign(new Error("Cannot find package '@ai-sdk/xai'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('an optional provider package that is not installed', () => {
  it('MINARA_MODEL=xai:… without @ai-sdk/xai fails with MODEL_NOT_CONFIGURED naming the package', async () => {
    const { MinaraError, resolveModel } = await import('@minara/agent');
    const failure = await resolveModel({ env: { MINARA_MODEL: 'xai:grok-4', XAI_API_KEY: 'k' } }).catch((e: unknown) => e);
    expect(MinaraError.isInstance(failure) && failure.code).toBe('MODEL_NOT_CONFIGURED');
    expect((failure as Error).message).toBe('MINARA_MODEL uses xai, whose provider package is an optional peer dependency: npm install @ai-sdk/xai');
  });
});
