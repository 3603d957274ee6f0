import { simulateReadableStream, streamText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { createToolCallContext, createToolRegistry, type SettledToolCall, toAISDKTools } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { sampleTools } from './helpers';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function modelCalling(toolName: string, input: unknown) {
  return new MockLanguageModelV4({
    doStream: [
      {
        stream: simulateReadableStream({
          chunks: [
            { type: 'tool-call' as const, toolCallId: 'c1', toolName, input: JSON.stringify(input) },
            { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage },
          ],
        }),
      },
      {
        stream: simulateReadableStream({
          chunks: [
            { type: 'text-start' as const, id: 't' },
            { type: 'text-delta' as const, id: 't', delta: 'done' },
            { type: 'text-end' as const, id: 't' },
            { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: undefined }, usage },
          ],
        }),
      },
    ],
  });
}

describe('toAISDKTools', () => {
  it('runs model tool calls through dispatch: gate, audit and envelope', async () => {
    const log: string[] = [];
    const storage = createInMemoryStorage();
    const registry = createToolRegistry({ tools: sampleTools(log), storage });
    const ctx = createToolCallContext({ sessionId: 'ai', source: 'cron' });
    const tools = toAISDKTools(registry, ['get_price', 'withdraw']);
    const outputs = await registry.runInContext(ctx, async () => {
      const result = streamText({ model: modelCalling('withdraw', { address: '0xabc', amount: 9 }), tools, toolOrder: ['get_price', 'withdraw'], stopWhen: isStepCount(3), prompt: 'send it' });
      const parts: unknown[] = [];
      for await (const part of result.stream) if (part.type === 'tool-result') parts.push(part.output);
      return parts;
    });
    expect(outputs).toEqual([expect.objectContaining({ ok: false, code: 'MANUAL_ONLY_AUTONOMOUS' })]);
    expect(log).toEqual([]);
    const rows = await registry.queryAudit({ sessionId: 'ai' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ toolName: 'withdraw', decision: 'blocked', toolCallId: 'c1', source: 'cron' });
  });

  it('malformed model input still reaches dispatch and is audited', async () => {
    const registry = createToolRegistry({ tools: sampleTools(), storage: createInMemoryStorage() });
    const tools = toAISDKTools(registry, ['get_price']);
    const result = streamText({ model: modelCalling('get_price', { symbol: 42 }), tools, stopWhen: isStepCount(3), prompt: 'x' });
    const outs: unknown[] = [];
    for await (const part of result.stream) if (part.type === 'tool-result') outs.push(part.output);
    expect(outs).toEqual([expect.objectContaining({ ok: false, code: 'TOOL_INPUT_INVALID' })]);
    expect((await registry.queryAudit({ toolName: 'get_price' }))[0]).toMatchObject({ decision: 'error', code: 'TOOL_INPUT_INVALID' });
  });

  it('onSettled is awaited with the call and its envelope before the AI SDK sees the result', async () => {
    const registry = createToolRegistry({ tools: sampleTools(), storage: createInMemoryStorage() });
    const order: string[] = [];
    const settled: SettledToolCall[] = [];
    const tools = toAISDKTools(registry, ['get_price'], {
      onSettled: async (call) => {
        await new Promise((r) => setTimeout(r, 20));
        settled.push(call);
        order.push('settled');
      },
    });
    const result = streamText({ model: modelCalling('get_price', { symbol: 'BTC' }), tools, stopWhen: isStepCount(3), prompt: 'x' });
    for await (const part of result.stream) if (part.type === 'tool-result') order.push('result');
    expect(order).toEqual(['settled', 'result']);
    expect(settled).toEqual([{ toolName: 'get_price', toolCallId: 'c1', input: { symbol: 'BTC' }, envelope: expect.objectContaining({ ok: true }) }]);
  });

  it('describes inputs with JSON Schema and refuses unknown names', () => {
    const registry = createToolRegistry({ tools: sampleTools() });
    const tools = toAISDKTools(registry, ['swap_tokens']);
    expect(tools.swap_tokens!.description).toBe('Swap');
    expect(() => toAISDKTools(registry, ['nope'])).toThrow(/nope/);
  });
});
