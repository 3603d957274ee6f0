import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { COMPACTION_MARKER, compactMessages, estimateTokens, repairOrphanedToolCalls } from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';
import { setup } from './helpers';

function longConversation(turns: number, toolOutputChars = 2000): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `question ${i} about BTC` });
    out.push({ role: 'assistant', content: [{ type: 'reasoning', text: 'thinking '.repeat(50) }, { type: 'tool-call', toolCallId: `c${i}`, toolName: 'get_price', input: { symbol: 'BTC' } }] });
    out.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'get_price', output: { type: 'json', value: { ok: true, data: { blob: 'x'.repeat(toolOutputChars) } } } }] });
    out.push({ role: 'assistant', content: `answer ${i}` });
  }
  return out;
}

const balanced = (messages: readonly ModelMessage[]) => repairOrphanedToolCalls(messages).repaired.length === 0;

describe('compaction ladder', () => {
  it('does nothing under the trigger, and is idempotent once compacted', async () => {
    const small = longConversation(2, 10);
    const r = await compactMessages(small, { contextWindowTokens: 100_000 });
    expect(r).toMatchObject({ changed: false, steps: [] });
    const big = longConversation(30);
    const once = await compactMessages(big, { contextWindowTokens: 20_000 });
    expect(once.changed).toBe(true);
    const twice = await compactMessages(once.messages, { contextWindowTokens: 20_000 });
    expect(twice.changed).toBe(false);
  });

  it('tries the zero-LLM rungs first, keeps recent messages and never splits a tool call from its result', async () => {
    const big = longConversation(30);
    const r = await compactMessages(big, { contextWindowTokens: 20_000, keepRecentMessages: 8 });
    expect(r.steps).toContain('collapse-tool-results');
    expect(r.afterTokens).toBeLessThan(r.beforeTokens);
    expect(r.messages.slice(-8)).toEqual(big.slice(-8));
    expect(balanced(r.messages)).toBe(true);
  });

  it('autocompacts with the utility model only when still over budget, then re-injects top-N memories', async () => {
    const big = longConversation(40, 20);
    const summarizer = createScriptedModel([{ text: '- user tracks BTC closely' }]);
    const r = await compactMessages(big, {
      contextWindowTokens: 3_000, keepRecentMessages: 4, summarizer,
      reinject: async (q, n) => [`[preference] ${q} slippage 0.5% (top ${n})`], query: 'BTC',
    });
    expect(r.steps).toEqual(expect.arrayContaining(['autocompact', 'reinject']));
    expect(r.messages[0]).toMatchObject({ role: 'user' });
    expect(String(r.messages[0]!.content)).toContain(COMPACTION_MARKER);
    expect(String(r.messages[0]!.content)).toContain('user tracks BTC closely');
    expect(String(r.messages[0]!.content)).toContain('Relevant memories');
    expect(balanced(r.messages)).toBe(true);
    summarizer.assertConsumed();
    // Next pass slices at the boundary and keeps the summary first.
    const again = await compactMessages([...r.messages, ...longConversation(1, 10)], { contextWindowTokens: 3_000, keepRecentMessages: 4 });
    expect(String(again.messages[0]!.content)).toContain(COMPACTION_MARKER);
  });

  it('falls back to a hard trim without a utility model', async () => {
    const r = await compactMessages(longConversation(40, 20), { contextWindowTokens: 3_000, keepRecentMessages: 4 });
    expect(r.steps).toContain('hard-trim');
    expect(estimateTokens(r.messages)).toBeLessThan(estimateTokens(longConversation(40, 20)));
  });
});

describe('compaction in the runtime', () => {
  it('emits a compaction event with before/after tokens and persists the compacted history', async () => {
    const { runtime, storage } = setup([{ text: 'a' }, { text: 'b' }], { compaction: { contextWindowTokens: 2_000, keepRecentMessages: 2 } });
    await storage.conversations.ensureSession({ id: 'cmp', now: new Date().toISOString() });
    await storage.conversations.appendMessages('cmp', longConversation(20, 200).map((m) => ({ role: m.role, json: JSON.stringify(m), createdAt: new Date().toISOString() })));
    const r = await recordEvents(runtime.run({ sessionId: 'cmp', message: 'new question' }));
    const c = r.ofType('compaction')[0]!;
    expect(c.afterTokens).toBeLessThan(c.beforeTokens);
    const stored = await storage.conversations.listMessages('cmp');
    expect(stored.length).toBeLessThan(81);
    // A second turn over the compacted history does not compact again (idempotent across resume).
    const r2 = await recordEvents(runtime.run({ sessionId: 'cmp', message: 'next' }));
    expect(r2.ofType('compaction')).toHaveLength(0);
  });

  it('the overflow guard compacts and retries a step that exceeds the context window', async () => {
    const { runtime, model } = setup([{ error: 'prompt is too long: 250000 tokens > 200000 maximum' }, { text: 'recovered after trimming' }]);
    const r = await recordEvents(runtime.run({ sessionId: 'ovf', message: 'hi' }));
    expect(r.ofType('compaction')[0]!.steps).toContain('overflow-retry');
    expect(r.text).toBe('recovered after trimming');
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('finished');
    model.assertConsumed();
  });

  it('stops a turn at the cumulative token budget', async () => {
    const call = { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 600, outputTokens: 10 } };
    const { runtime, model } = setup([call, { text: 'Here is what I have so far.', usage: { inputTokens: 600, outputTokens: 10 } }], { turnTokenBudget: 650 });
    const r = await runtime.generate({ sessionId: 'budget', message: 'loop' });
    expect(r.stopReason).toBe('token-budget');
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.toolChoice).toEqual({ type: 'none' });
  });

  it('prepareStep trims each call to what is left of the turn budget (zero-LLM rungs), without changing the stored history', async () => {
    const call = { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 3_000, outputTokens: 20 } };
    const { runtime, model, storage } = setup([call, { text: 'fits the budget', usage: { inputTokens: 1_000, outputTokens: 10 } }], { turnTokenBudget: 9_000 });
    // A session whose history (~10k tokens of old tool output) is over this turn's budget but far under the context window.
    await storage.conversations.ensureSession({ id: 'trim', userId: 'default', now: '2026-01-01T00:00:00.000Z' });
    const history = longConversation(10, 4_000);
    await storage.conversations.appendMessages('trim', history.map((m, i) => ({ role: m.role, json: JSON.stringify(m), createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() })));
    expect(estimateTokens(history)).toBeGreaterThan(9_000);
    const r = await recordEvents(runtime.run({ sessionId: 'trim', message: 'and now?' }));
    const trims = r.ofType('compaction').filter((c) => c.steps.includes('turn-budget'));
    expect(trims.length).toBeGreaterThanOrEqual(1);
    expect(trims[0]!.afterTokens).toBeLessThan(trims[0]!.beforeTokens);
    expect(trims[0]!.steps).toContain('collapse-tool-results');
    // Every call the model received fits what was left of the budget when it was made.
    for (const c of model.calls) expect(estimateTokens(c.prompt)).toBeLessThan(9_000);
    expect(JSON.stringify(model.calls[0]!.prompt)).toContain('"collapsed":true');
    // The recent messages (the new question) are kept, and the stored history still holds the full outputs.
    expect(JSON.stringify(model.calls[0]!.prompt)).toContain('and now?');
    const stored = await storage.conversations.listMessages('trim', { limit: 500 });
    expect(stored.some((m) => m.json.includes('x'.repeat(4_000)))).toBe(true);
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('finished');
    model.assertConsumed();
  });

  it('stops at maxSteps', async () => {
    const call = { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] };
    const { runtime } = setup([call, call, call], { maxSteps: 2 });
    const r = await runtime.generate({ sessionId: 'steps', message: 'loop' });
    expect(r).toMatchObject({ stopReason: 'max-steps', steps: 2 });
  });
});
