import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { guardToolInputs } from '../../src/runtime/tool-input-guard';

/** A model whose stream is given by the test. */
function modelOf(stream: ReadableStream<LanguageModelV4StreamPart>): LanguageModelV4 {
  return {
    specificationVersion: 'v4', provider: 'test', modelId: 'm', supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => ({ stream }),
  } as unknown as LanguageModelV4;
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

describe('the tool-input guard on a model stream', () => {
  it('passes every part through in order and replaces an oversized tool input', async () => {
    const deep = `{"a":${'['.repeat(100)}${']'.repeat(100)}}`;
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'get_price', input: '{"symbol":"BTC"}' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'get_price', input: deep },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } },
    ] as LanguageModelV4StreamPart[];
    const source = new ReadableStream<LanguageModelV4StreamPart>({ start: (c) => { for (const p of parts) c.enqueue(p); c.close(); } });
    const guarded = guardToolInputs(modelOf(source)) as LanguageModelV4;
    const out = await readAll((await guarded.doStream({ prompt: [] } as never)).stream);
    expect(out.map((p) => p.type)).toEqual(['stream-start', 'tool-call', 'tool-call', 'finish']);
    expect(out[1]).toBe(parts[1]);
    expect((out[2] as { input: string }).input).toContain('nested more than 64 levels');
  });

  it('an error in the model stream errors the guarded stream; cancelling the guarded stream cancels the model stream', async () => {
    const failing = new ReadableStream<LanguageModelV4StreamPart>({ pull: (c) => c.error(new Error('connection reset')) });
    const g1 = guardToolInputs(modelOf(failing)) as LanguageModelV4;
    await expect(readAll((await g1.doStream({ prompt: [] } as never)).stream)).rejects.toThrow('connection reset');

    let cancelled: unknown;
    const endless = new ReadableStream<LanguageModelV4StreamPart>({ pull: (c) => c.enqueue({ type: 'text-delta', id: 't', delta: 'x' }), cancel: (reason) => void (cancelled = reason) });
    const g2 = guardToolInputs(modelOf(endless)) as LanguageModelV4;
    const reader = (await g2.doStream({ prompt: [] } as never)).stream.getReader();
    await reader.read();
    await reader.cancel('user aborted');
    expect(cancelled).toBe('user aborted');
  });
});
