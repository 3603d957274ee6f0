/**
 * createFallbackModel / createApp({ models }): the next model answers on overload, 5xx, timeouts and network
 * errors, never on a 400; turn-end says which model answered.
 */
import { APICallError, type LanguageModelV4 } from '@ai-sdk/provider';
import { createApp, createFallbackModel, isFallbackError, silentLogger } from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

function failing(status: number | 'stream-error'): LanguageModelV4 & { calls: number } {
  const error = new APICallError({ message: status === 'stream-error' ? 'overloaded' : `HTTP ${status}`, url: 'https://api.example/v1', requestBodyValues: {}, statusCode: status === 'stream-error' ? 529 : status, isRetryable: status !== 400 });
  const model = {
    specificationVersion: 'v4' as const, provider: 'primary', modelId: 'big-model', supportedUrls: {}, calls: 0,
    async doGenerate(): Promise<never> {
      model.calls++;
      throw error;
    },
    async doStream() {
      model.calls++;
      if (status !== 'stream-error') throw error;
      return { stream: new ReadableStream({ start: (c) => { c.enqueue({ type: 'stream-start', warnings: [] }); c.enqueue({ type: 'error', error }); c.close(); } }) };
    },
  };
  return model as unknown as LanguageModelV4 & { calls: number };
}

async function turn(models: LanguageModelV4[]) {
  const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, finance: false, workspace: false, config: { dataDir: mkdtempSync(path.join(tmpdir(), 'minara-fb-')) }, models });
  try {
    const r = await recordEvents(app.runtime.run({ sessionId: 's', message: 'hi' }));
    return { end: r.ofType('turn-end')[0]!, errors: r.ofType('error'), status: app.modelStatus };
  } finally {
    await app.close();
  }
}

describe('model fallback', () => {
  it('falls back on a 529 (and on an error before any output), and turn-end names the model that answered', async () => {
    for (const kind of [529, 503, 'stream-error'] as const) {
      const primary = failing(kind);
      const backup = createScriptedModel([{ text: 'Answered by the backup.' }], { modelId: 'backup-model' });
      const { end, status } = await turn([primary, backup]);
      expect(primary.calls).toBeGreaterThan(0);
      expect(end).toMatchObject({ stopReason: 'finished', text: 'Answered by the backup.', modelId: 'backup-model' });
      expect(status).toMatchObject({ configured: true, label: 'fallback:big-model|backup-model' });
    }
  });

  it('does not fall back on a 400 (the request itself is wrong)', async () => {
    const backup = createScriptedModel([{ text: 'never' }], { modelId: 'backup-model' });
    const { end, errors } = await turn([failing(400), backup]);
    expect(end.stopReason).toBe('error');
    expect(errors[0]?.message).toContain('HTTP 400');
    expect(backup.calls).toHaveLength(0);
  });

  it('classifies errors and refuses bad input', () => {
    expect(isFallbackError({ statusCode: 429 })).toBe(true);
    expect(isFallbackError({ statusCode: 401 })).toBe(false);
    expect(isFallbackError({ name: 'TimeoutError' })).toBe(true);
    expect(isFallbackError({ cause: { code: 'ECONNRESET' } })).toBe(true);
    expect(isFallbackError(new Error('content filtered'))).toBe(false);
    expect(() => createFallbackModel([])).toThrow(/at least one model/);
    expect(() => createFallbackModel(['openai:gpt-4o' as unknown as LanguageModelV4])).toThrow(/models\[0\]/);
  });
});
