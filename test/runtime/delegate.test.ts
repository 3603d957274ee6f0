/**
 * The delegate tool: a sub-agent turn on a narrower tool set with its own budget; it can never widen.
 */
import { z } from 'zod';
import { createAgentRuntime, createDelegateTool, createToolRegistry, defineTool, parseEnvelope, PermissionTier, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents, type ScriptEntry } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

function setup(script: ScriptEntry[]) {
  const ran: string[] = [];
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({ name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => { ran.push(`price:${symbol}`); return { symbol, priceUsd: 100 }; } }),
      defineTool({
        name: 'buy', toolSet: 'trade', description: 'Buy', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }),
        execute: ({ symbol }) => { ran.push(`buy:${symbol}`); return 'bought'; },
      }),
    ],
  });
  const model = createScriptedModel(script);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
  tools.register(createDelegateTool({ runtime, tools, allowedToolSets: ['read', 'trade'], maxSteps: 3 }));
  return { runtime, tools, model, ran, storage };
}

describe('createDelegateTool', () => {
  it('runs a sub-agent turn on the granted sets and returns its answer, tools used and usage', async () => {
    const { runtime, ran, model } = setup([
      { toolCalls: [{ toolName: 'delegate', input: { task: 'Get the BTC price', toolSets: ['read'] } }] },
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, // the child
      { text: 'BTC is 100.' }, // the child answers
      { text: 'My helper says BTC is 100.' }, // the parent
    ]);
    const r = await recordEvents(runtime.run({ sessionId: 'p', message: 'price via a helper' }));
    const result = r.ofType('tool-result').find((e) => e.toolName === 'delegate')!;
    expect(result.output).toMatchObject({ ok: true, data: { answer: 'BTC is 100.', toolSets: ['read'], toolsUsed: ['get_price'], sessionId: 'p:sub1', usage: { inputTokens: expect.any(Number) } } });
    expect(ran).toEqual(['price:BTC']);
    // The child's events are nested in the parent's stream, under the delegate call.
    const nested = r.ofType('subagent');
    const call = r.ofType('tool-call').find((e) => e.toolName === 'delegate')!;
    expect(nested.every((e) => e.toolCallId === call.toolCallId && e.sessionId === 'p:sub1')).toBe(true);
    expect(nested.map((e) => e.event.type)).toEqual(expect.arrayContaining(['turn-start', 'tool-call', 'tool-result', 'turn-end']));
    // The child saw only its granted tools.
    expect((model.calls[1]!.tools ?? []).map((t) => t.name).sort()).toEqual(['get_price']);
    // Its tokens are the parent's: turn-end usage = the parent's own steps + the child's turn, with the child's part named.
    const childEnd = nested.find((e) => e.event.type === 'turn-end')!.event as Extract<(typeof nested)[number]['event'], { type: 'turn-end' }>;
    const own = r.ofType('step-end').reduce((n, e) => n + e.usage.inputTokens, 0);
    const end = r.ofType('turn-end')[0]!;
    expect(childEnd.usage.inputTokens).toBeGreaterThan(0);
    expect(end.delegatedUsage).toEqual(childEnd.usage);
    expect(end.usage.inputTokens).toBe(own + childEnd.usage.inputTokens);
  });

  it('a child cannot call a tool outside its set, and cannot widen the parent turn’s sets', async () => {
    const { runtime, tools, ran } = setup([
      { toolCalls: [{ toolName: 'delegate', input: { task: 'Buy BTC', toolSets: ['read'] } }] },
      { toolCalls: [{ toolName: 'buy', input: { symbol: 'BTC' } }] }, // the child tries a tool it was not given
      { text: 'I could not buy.' },
      { text: 'Done.' },
    ]);
    await recordEvents(runtime.run({ sessionId: 'q', message: 'buy through a helper' }));
    expect(ran).toEqual([]);
    // A parent limited to read cannot hand trade to a child: the child gets at most what the parent has.
    const { createToolCallContext } = await import('@minara/agent');
    const ctx = createToolCallContext({ sessionId: 'r', allowedToolSets: ['read', 'agents'] });
    const narrowed = parseEnvelope(await tools.dispatch('delegate', { task: 'buy', toolSets: ['trade', 'read'] }, { context: ctx })) as { ok: boolean; data?: { toolSets: string[] } };
    expect(narrowed.ok).toBe(true);
    expect(narrowed.data!.toolSets).toEqual(['read']);
    // Nothing left after the intersection: refused, no child turn.
    const none = createToolCallContext({ sessionId: 's', allowedToolSets: ['memory', 'agents'] });
    const out = parseEnvelope(await tools.dispatch('delegate', { task: 'buy', toolSets: ['trade'] }, { context: none }));
    expect(out).toMatchObject({ ok: false, code: 'TOOL_BLOCKED' });
    expect(String((out as { error: string }).error)).toMatch(/^toolSets: none of trade may be delegated/);
    expect(parseEnvelope(await tools.dispatch('delegate', { task: 'x', toolSets: ['nope'] }))).toMatchObject({ ok: false, error: expect.stringContaining('toolSets: unknown tool set(s) nope') });
  });
});
