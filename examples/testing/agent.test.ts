/**
 * How to test an agent built on @minara/agent without a network or a model key:
 * a scripted model, in-memory storage, and assertions on the event stream and on what the provider received.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';

const getPrice = defineTool({
  name: 'get_price',
  toolSet: 'read',
  description: 'Spot price of a token in USD',
  inputSchema: z.object({ symbol: z.string() }),
  permissionTier: PermissionTier.READ_ONLY,
  execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
});

describe('my agent', () => {
  it('answers a price question with one tool call', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ tools: [getPrice], storage });
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
      { text: 'BTC is $97,000.' },
    ]);
    const runtime = createAgentRuntime({ model, tools, storage });

    const { types, text, ofType } = await recordEvents(runtime.run({ sessionId: 'test-1', message: 'BTC price?' }));

    expect(text).toBe('BTC is $97,000.');
    expect(ofType('tool-result')[0]!.output).toEqual({ ok: true, data: { symbol: 'BTC', priceUsd: 97_000 } });
    expect(types.at(-1)).toBe('turn-end');
    // What the provider received: the tool list and the cached system prefix.
    expect(model.calls[0]!.tools?.map((t) => t.name)).toEqual(['get_price']);
    expect(model.calls[0]!.prompt[0]).toMatchObject({ role: 'system', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } });
    // Every scripted step was used, and no unexpected call happened.
    model.assertConsumed();
  });
});
