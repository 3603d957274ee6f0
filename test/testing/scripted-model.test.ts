import { generateText, isStepCount, streamText, tool, jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { createFakeClock, createScriptedModel, estimatePromptTokens, recordEvents } from '@minara/agent/testing';

describe('createScriptedModel', () => {
  it('plays steps in order, records what the provider received, and enforces consumption', async () => {
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 100, cacheReadTokens: 80 } },
      { text: 'BTC is 97k.' },
    ]);
    const calls: unknown[] = [];
    const result = streamText({
      model,
      instructions: [{ role: 'system', content: 'You are Minara.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }],
      prompt: 'price?',
      tools: { get_price: tool({ inputSchema: jsonSchema<{ symbol: string }>({ type: 'object', properties: { symbol: { type: 'string' } } }), execute: async (input) => { calls.push(input); return { price: 97000 }; } }) },
      stopWhen: isStepCount(5),
    });
    expect(await result.text).toBe('BTC is 97k.');
    expect(calls).toEqual([{ symbol: 'BTC' }]);
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]!.prompt[0]).toMatchObject({ role: 'system', content: 'You are Minara.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } });
    expect(model.calls[0]!.tools?.map((t) => t.name)).toEqual(['get_price']);
    const usage = await result.usage;
    expect(usage.inputTokenDetails.cacheReadTokens).toBe(80);
    model.assertConsumed();
  });

  it('fails loudly on an unexpected extra call and on unconsumed steps', async () => {
    const extra = createScriptedModel([{ text: 'one' }]);
    await generateText({ model: extra, prompt: 'a' });
    await expect(generateText({ model: extra, prompt: 'b', maxRetries: 0 })).rejects.toThrow(/unexpected model call #2/);
    expect(() => extra.assertConsumed()).toThrow(/unexpected extra model call/);
    const leftover = createScriptedModel([{ text: 'one' }, { text: 'two' }]);
    await generateText({ model: leftover, prompt: 'a' });
    expect(leftover.remaining).toBe(1);
    expect(() => leftover.assertConsumed()).toThrow(/1 scripted step\(s\) were never used/);
  });

  it('supports steps computed from the call', async () => {
    const model = createScriptedModel([(call) => ({ text: `you sent ${call.prompt.length} message(s)` })]);
    expect((await generateText({ model, prompt: 'x' })).text).toBe('you sent 1 message(s)');
  });
});

describe('createFakeClock and recordEvents', () => {
  it('moves only when told', () => {
    const clock = createFakeClock('2026-03-01T00:00:00Z');
    expect(clock.now().toISOString()).toBe('2026-03-01T00:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2026-03-01T00:00:01.500Z');
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });

  it('collects events', async () => {
    async function* events() {
      yield { type: 'text-delta', delta: 'Hel' } as const;
      yield { type: 'text-delta', delta: 'lo' } as const;
      yield { type: 'turn-end' } as const;
    }
    const r = await recordEvents(events());
    expect(r.types).toEqual(['text-delta', 'text-delta', 'turn-end']);
    expect(r.text).toBe('Hello');
    expect(r.ofType('turn-end')).toHaveLength(1);
  });

  it('serialises scripted tool input like JSON.stringify, at any depth, without recursion', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const sample = { s: 'q"\n', n: [1, -2.5, null, undefined, NaN], b: true, d: new Date(0), skip: undefined, f: () => 1, nested: { e: [], o: {} } };
    const model = createScriptedModel([{ toolCalls: [{ toolName: 'a', input: sample, toolCallId: 'c1' }, { toolName: 'b', input: deep, toolCallId: 'c2' }] }]);
    const r = await model.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    const inputs = r.content.flatMap((c) => (c.type === 'tool-call' ? [c.input] : []));
    expect(inputs[0]).toBe(JSON.stringify(sample));
    expect(inputs[1]).toBe(`${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`);
    expect(estimatePromptTokens([sample])).toBe(Math.ceil(JSON.stringify([sample]).length / 4));
    expect(estimatePromptTokens(deep)).toBe(Math.ceil((5000 * 6 + 3) / 4));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => estimatePromptTokens(cycle)).toThrow(TypeError);
  });
});
