import { describe, expect, it } from 'vitest';
import { createToolRegistry, parseEnvelope } from '@minara/agent';
import { createInMemoryStorage, recordEvents } from '@minara/agent/testing';
import { financeTools, setup } from './helpers';

const deepText = (levels: number) => `{"symbol":${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}}`;

describe('deeply nested or huge tool input from the model', () => {
  it('5,000 levels: the call is refused as TOOL_INPUT_INVALID, the turn goes on, and the transcript is whole', async () => {
    const { runtime, storage, ledger } = setup([
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }, { toolName: 'get_price', inputText: deepText(5000) }] },
      { text: 'BTC is 97,000; the other call was malformed.' },
    ]);
    const r = await recordEvents(runtime.run({ sessionId: 'deep', message: 'prices' }));
    expect(r.ofType('error')).toEqual([]);
    const results = r.ofType('tool-result');
    expect(results).toHaveLength(2);
    expect(results[1]!.output).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID', error: expect.stringContaining('nested more than 64 levels') });
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('finished');
    expect(ledger.calls).toEqual(['get_price:BTC']);
    // user, assistant (2 calls), tool results, assistant answer: the next turn knows what ran.
    const roles = (await storage.conversations.listMessages('deep')).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('5,000 levels given to createScriptedModel as an object: the double fails like the real path (a clear error, the tools already run kept)', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const { runtime, storage, ledger, model } = setup([
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }, { toolName: 'get_price', input: { symbol: deep } }] },
      { text: 'BTC is 97,000; the other call was malformed.' },
    ]);
    const r = await recordEvents(runtime.run({ sessionId: 'deep-object', message: 'prices' }));
    expect(r.ofType('error')).toEqual([]);
    const results = r.ofType('tool-result');
    expect(results).toHaveLength(2);
    expect(results[0]!.output).toMatchObject({ ok: true });
    expect(results[1]!.output).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID', error: expect.stringContaining('nested more than 64 levels') });
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('finished');
    expect(ledger.calls).toEqual(['get_price:BTC']);
    expect((await storage.conversations.listMessages('deep-object')).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    model.assertConsumed();
  });

  it('the registry bounds depth and size for every caller, before any schema walks the input', async () => {
    const tools = createToolRegistry({ tools: financeTools({ calls: [], sessions: [] }), storage: createInMemoryStorage() });
    let deep: unknown = 'x';
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const r = parseEnvelope(await tools.dispatch('get_price', { symbol: deep })) as { code?: string; error?: string };
    expect(r.code).toBe('TOOL_INPUT_INVALID');
    const huge = parseEnvelope(await tools.dispatch('get_price', { symbol: 'x'.repeat(1_000_001) })) as { code?: string; error?: string };
    expect(huge.code).toBe('TOOL_INPUT_INVALID');
    expect(huge.error).toContain('1000000');
    const audit = await tools.queryAudit({ toolName: 'get_price' });
    expect(audit.every((a) => a.argsJson.length < 1000)).toBe(true);
  });
});

