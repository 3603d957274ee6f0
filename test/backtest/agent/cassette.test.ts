import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, jsonSchema, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { MinaraError } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { canonicalJson, cassetteKey, cassetteRequest, createCassetteModel, normaliseGeneratedIds } from '@minara/agent/backtest';

const dir = () => mkdtempSync(join(tmpdir(), 'cassette-'));

describe('model cassettes', () => {
  it('records generate and stream calls, then replays them offline with identical answers', async () => {
    const path = join(dir(), 'c.json');
    const scripted = createScriptedModel([{ text: 'BTC looks strong.' }, { text: 'Streaming answer here.' }], { modelId: 'claude-sonnet-4-5' });
    const rec = createCassetteModel({ model: scripted, mode: 'record', cassette: path });
    const a = await generateText({ model: rec, prompt: 'What about BTC?', temperature: 0 });
    const s = streamText({ model: rec, prompt: 'Stream please' });
    const streamed = await s.text;
    rec.save();
    expect(rec.stats).toEqual({ replayed: 0, recorded: 2 });

    const replay = createCassetteModel({ cassette: path });
    expect(replay.modelId).toBe('claude-sonnet-4-5');
    const b = await generateText({ model: replay, prompt: 'What about BTC?', temperature: 0 });
    const s2 = streamText({ model: replay, prompt: 'Stream please' });
    expect(b.text).toBe(a.text);
    expect(await s2.text).toBe(streamed);
    expect((await s2.usage).inputTokens).toBe((await s.usage).inputTokens);
    expect(replay.stats).toEqual({ replayed: 2, recorded: 0 });
  });

  it('a call recorded streamed answers the same request asked without streaming, and the other way round', async () => {
    const path = join(dir(), 'kinds.json');
    const script = () => createScriptedModel([
      { text: 'Buying a little BTC here, the trend is up.', toolCalls: [{ toolName: 'buy', input: { symbol: 'BTC', usd: 100 } }], usage: { inputTokens: 321, outputTokens: 12 } },
      { text: 'A plain answer.' },
    ]);
    const tools = { buy: { description: 'Buy', inputSchema: jsonSchema({ type: 'object', properties: { symbol: { type: 'string' }, usd: { type: 'number' } } }) } };
    const rec = createCassetteModel({ model: script(), mode: 'record', cassette: path });
    const streamed = streamText({ model: rec, prompt: 'Decide on BTC', tools, temperature: 0 });
    const streamedCalls = await streamed.toolCalls;
    const streamedText = await streamed.text;
    const generatedLive = await generateText({ model: rec, prompt: 'Answer plainly', temperature: 0 });
    rec.save();

    const replay = createCassetteModel({ cassette: path });
    const g = await generateText({ model: replay, prompt: 'Decide on BTC', tools, temperature: 0 });
    expect(g.text).toBe(streamedText);
    expect(g.toolCalls.map((c) => [c.toolName, c.input])).toEqual(streamedCalls.map((c) => [c.toolName, c.input]));
    expect(g.usage.inputTokens).toBe(321);
    expect(g.finishReason).toBe('tool-calls');
    const s = streamText({ model: replay, prompt: 'Answer plainly', temperature: 0 });
    expect(await s.text).toBe(generatedLive.text);
    expect(await s.finishReason).toBe(generatedLive.finishReason);
    expect(replay.stats).toEqual({ replayed: 2, recorded: 0 });
    // A request recorded neither way still misses, naming the call.
    await expect(generateText({ model: replay, prompt: 'never recorded', temperature: 0 })).rejects.toThrow(/cassette miss/);
  });

  it('saves byte-identical files for the same calls (stable key order)', async () => {
    const d = dir();
    const run = async (p: string) => {
      const rec = createCassetteModel({ model: createScriptedModel([{ text: 'x' }]), mode: 'record', cassette: p });
      await generateText({ model: rec, prompt: 'same', temperature: 0.5, seed: 3 });
      rec.save();
      return readFileSync(p, 'utf8');
    };
    expect(await run(join(d, 'a.json'))).toBe(await run(join(d, 'b.json')));
  });

  it('keys each call as normaliseGeneratedIds then cassetteKey would, ids in object keys included', async () => {
    const a = 'apr_k3x9q2m7v8b1n4c6z0w5';
    const b = 'trc_p9o8i7u6y5t4r3e2w1q0';
    const call = (first: string, second: string) => ({
      prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `approve ${first} then ${second}` }] }],
      // An id inside an object key renames the key, which can reorder the keys: the key is then computed from the re-canonicalised request.
      providerOptions: { zz: { [first]: 1, 'apr_#a': 4, mm: 2, [second]: 3 } },
    });
    const rec = createCassetteModel({ model: createScriptedModel([{ text: 'one' }]), mode: 'record', cassette: join(dir(), 'ids.json') });
    await rec.doGenerate(call(a, b));
    const entry = rec.toFile().entries[0]!;
    expect(entry.key).toBe(cassetteKey(normaliseGeneratedIds(cassetteRequest('scripted:scripted-model', 'generate', call(a, b)))));
    expect(JSON.stringify(entry.request)).toContain('apr_#1');
    // The same call with other ids replays; an id in plain text only is keyed from the canonical text as it is.
    const other = 'apr_a1b2c3d4e5f6g7h8i9j0k1';
    const replay = createCassetteModel({ cassette: rec.toFile() });
    expect((await replay.doGenerate(call(other, 'trc_z9y8x7w6v5u4t3s2r1q0p9'))).content).toEqual([{ type: 'text', text: 'one' }]);
    const plain = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `hello ${a}` }] }] };
    const rec2 = createCassetteModel({ model: createScriptedModel([{ text: 'two' }]), mode: 'record', cassette: join(dir(), 'plain.json') });
    await rec2.doGenerate(plain);
    expect(rec2.toFile().entries[0]!.key).toBe(cassetteKey(normaliseGeneratedIds(cassetteRequest('scripted:scripted-model', 'generate', plain))));
  });

  it('keys ignore key order but see every setting', () => {
    const base = { prompt: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }], temperature: 0 };
    const k1 = cassetteKey(cassetteRequest('p:m', 'generate', base));
    const k2 = cassetteKey(cassetteRequest('p:m', 'generate', { temperature: 0, prompt: base.prompt }));
    const k3 = cassetteKey(cassetteRequest('p:m', 'generate', { ...base, temperature: 0.7 }));
    const k4 = cassetteKey(cassetteRequest('p:other', 'generate', base));
    expect(k1).toBe(k2);
    expect(k3).not.toBe(k1);
    expect(k4).not.toBe(k1);
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
  });

  it('a miss in replay fails with CASSETTE_MISS and a diff against the nearest recording, calling no model', async () => {
    const path = join(dir(), 'c.json');
    const rec = createCassetteModel({ model: createScriptedModel([{ text: 'one' }, { text: 'two' }]), mode: 'record', cassette: path });
    await generateText({ model: rec, prompt: 'The price of BTC on 2024-01-02 is 42000' });
    await generateText({ model: rec, prompt: 'Something entirely different about bonds' });
    rec.save();
    const replay = createCassetteModel({ cassette: path });
    const error = await generateText({ model: replay, prompt: 'The price of BTC on 2024-01-03 is 42000', maxRetries: 0 }).catch((e: unknown) => e);
    const cause = MinaraError.isInstance(error) ? error : (error as { lastError?: unknown; cause?: unknown }).lastError ?? (error as { cause?: unknown }).cause ?? error;
    const text = String((cause as Error).message ?? cause);
    expect(text).toContain('cassette miss');
    expect(text).toContain('-');
    expect(text).toContain('2024-01-02');
    expect(text).toContain('2024-01-03');
    expect(text).not.toContain('bonds');
  });

  it('auto mode replays what it has and records the rest; identical requests replay in recorded order', async () => {
    const path = join(dir(), 'c.json');
    const rec = createCassetteModel({ model: createScriptedModel([{ text: 'first' }, { text: 'second' }]), mode: 'record', cassette: path });
    await generateText({ model: rec, prompt: 'same' });
    await generateText({ model: rec, prompt: 'same' });
    rec.save();
    const auto = createCassetteModel({ model: createScriptedModel([{ text: 'new' }]), mode: 'auto', cassette: path });
    expect((await generateText({ model: auto, prompt: 'same' })).text).toBe('first');
    expect((await generateText({ model: auto, prompt: 'same' })).text).toBe('second');
    expect((await generateText({ model: auto, prompt: 'other' })).text).toBe('new');
    expect(auto.stats).toEqual({ replayed: 2, recorded: 1 });
  });

  it('bad options and files name the field', () => {
    expect(() => createCassetteModel({ mode: 'record', cassette: 'x.json' })).toThrow(/options.model/);
    expect(() => createCassetteModel({ cassette: join(dir(), 'missing.json') })).toThrow(/no cassette at/);
    expect(() => createCassetteModel({ cassette: { format: 'nope' } as never })).toThrow(/minara-cassette/);
  });
});
