/**
 * A turn asks the AI SDK for its single-consumer stream (`experimental_streamTextLowMemory`) and falls back to
 * `streamText` on an SDK without it: here the SDK module is replaced by one without the export, and the same turn
 * gives the same events, stored messages and usage either way.
 */
import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { describe, expect, it, vi } from 'vitest';

const without = vi.hoisted(() => ({ lowMemory: false, calls: { lowMemory: 0, streamText: 0 } }));
vi.mock('ai', async (importOriginal) => {
  const ai = await importOriginal<typeof import('ai')>();
  const lowMemory: typeof ai.experimental_streamTextLowMemory = (options) => {
    without.calls.lowMemory++;
    return ai.experimental_streamTextLowMemory(options);
  };
  const streamText: typeof ai.streamText = (options) => {
    without.calls.streamText++;
    return ai.streamText(options);
  };
  return {
    ...ai,
    streamText,
    get experimental_streamTextLowMemory() {
      return without.lowMemory ? undefined : lowMemory;
    },
  };
});

async function turn() {
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY, sideEffects: false, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: symbol === 'BTC' ? 97_000 : 3_400 }) })],
  });
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 100, outputTokens: 10 } },
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }], usage: { inputTokens: 120, outputTokens: 10 } },
    { text: 'BTC is $97,000 and ETH is $3,400.', usage: { inputTokens: 140, outputTokens: 12 } },
  ]);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
  const recorded = await recordEvents(runtime.run({ sessionId: 'single-consumer', message: 'prices of BTC and ETH?' }));
  const end = recorded.ofType('turn-end')[0]!;
  const stored = (await storage.conversations.listMessages('single-consumer')).map((m) => m.role);
  return { types: recorded.types.filter((t) => t !== 'audit'), text: recorded.text, stored, steps: end.steps, usage: end.usage, stopReason: end.stopReason };
}

describe("a turn's streamed model call", () => {
  it('gives the same turn with the single-consumer stream and with streamText', async () => {
    without.lowMemory = false;
    const single = await turn();
    expect(without.calls).toEqual({ lowMemory: 1, streamText: 0 });
    without.lowMemory = true;
    const plain = await turn();
    expect(without.calls).toEqual({ lowMemory: 1, streamText: 1 });
    expect(single.text).toBe('BTC is $97,000 and ETH is $3,400.');
    expect(single.steps).toBe(3);
    expect(single.types.filter((t) => t === 'tool-result')).toHaveLength(2);
    expect(single.stored).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(plain).toEqual(single);
  });
});
