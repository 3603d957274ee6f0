/**
 * The baseline session tools: `clarify` ends the turn with a question (a `clarification-request` event, stop
 * reason `clarification`, carried by the UI stream); `todo` keeps a task list per session in storage;
 * `recommend_features` points at skills and tools from the live registries.
 */
import { parseJsonEventStream, uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import {
  createAgentRuntime, createRecommendFeaturesTool, createSessionTools, createSkillRegistry, createToolCallContext, createToolRegistry, defineSkill,
  parseEnvelope, readTodos, silentLogger, toUIMessageStreamResponse,
} from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

describe('clarify', () => {
  it('ends the turn with a question the UI renders as choices; the answer is the next message', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: createSessionTools({ storage }) });
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'clarify', input: { question: 'Which account should I use?', choices: ['Spot', { label: 'Perps sub-account 1', value: 'perps-1' }] } }] },
      { text: 'Using perps-1.' },
    ]);
    const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
    const first = await recordEvents(runtime.run({ sessionId: 'c1', message: 'move my profits' }));
    expect(first.ofType('clarification-request')[0]).toMatchObject({
      question: 'Which account should I use?',
      choices: [{ label: 'Spot', value: 'Spot' }, { label: 'Perps sub-account 1', value: 'perps-1' }],
      allowFreeText: true,
    });
    expect(first.ofType('turn-end')[0]).toMatchObject({ stopReason: 'clarification', steps: 1 });
    // The scripted model is strict: the second script entry was not consumed by the first turn.
    const second = await recordEvents(runtime.run({ sessionId: 'c1', message: 'perps-1' }));
    expect(second.ofType('turn-end')[0]).toMatchObject({ stopReason: 'finished', text: 'Using perps-1.' });
  });

  it('travels the UI stream as data-minara-clarification-request; bad choices are refused', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: createSessionTools({ storage }) });
    const runtime = createAgentRuntime({ model: createScriptedModel([{ toolCalls: [{ toolName: 'clarify', input: { question: 'Daily or weekly?', choices: ['daily', 'weekly'], allowFreeText: false } }] }]), tools, storage, logger: silentLogger });
    const response = toUIMessageStreamResponse(runtime.run({ sessionId: 'c2', message: 'set up a DCA' }), { messageId: 'm1' });
    const chunks: UIMessageChunk[] = [];
    const reader = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.success) chunks.push(value.value as UIMessageChunk);
    }
    expect(chunks.find((c) => c.type === 'data-minara-clarification-request')).toMatchObject({
      transient: true, data: { type: 'clarification-request', question: 'Daily or weekly?', choices: [{ label: 'daily', value: 'daily' }, { label: 'weekly', value: 'weekly' }], allowFreeText: false },
    });
    expect(chunks.find((c) => c.type === 'finish')).toMatchObject({ finishReason: 'stop' });
    const raw = await recordEvents(createAgentRuntime({ model: createScriptedModel([{ toolCalls: [{ toolName: 'clarify', input: { question: 'Daily or weekly?', choices: ['daily', 'weekly'] } }] }]), tools, storage, logger: silentLogger }).run({ sessionId: 'c3', message: 'x' }));
    expect(raw.ofType('clarification-request')).toHaveLength(1);
    const ctx = createToolCallContext({ sessionId: 's' });
    const one = parseEnvelope(await tools.runInContext(ctx, () => tools.dispatch('clarify', { question: 'Which?', choices: ['only'] })));
    expect(one).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT', error: expect.stringContaining('at least 2 choices') });
  });
});

describe('todo', () => {
  it('keeps a task list per session, persisted in storage, that the model reads back', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: createSessionTools({ storage }) });
    const call = (sessionId: string, args: Record<string, unknown>) => tools.dispatch('todo', args, { context: createToolCallContext({ sessionId }) }).then(parseEnvelope);
    expect(await call('s1', { op: 'add', items: ['Search for ETF flow data', { text: 'Read the top 3 sources', status: 'in_progress' }] })).toMatchObject({
      ok: true, data: { todos: [{ id: 1, text: 'Search for ETF flow data', status: 'pending' }, { id: 2, text: 'Read the top 3 sources', status: 'in_progress' }], pending: 1, inProgress: 1 },
    });
    await call('s1', { op: 'update', id: 1, status: 'done' });
    // Another registry on the same storage (a restart) reads the same list; another session has its own.
    const again = createToolRegistry({ storage, tools: createSessionTools({ storage }) });
    expect(parseEnvelope(await again.dispatch('todo', { op: 'list' }, { context: createToolCallContext({ sessionId: 's1' }) }))).toMatchObject({ ok: true, data: { done: 1, inProgress: 1 } });
    expect(await call('s2', { op: 'list' })).toMatchObject({ ok: true, data: { todos: [] } });
    expect(await call('s1', { op: 'update', id: 9, status: 'done' })).toMatchObject({ ok: false, error: 'id: no task 9 (tasks: 1, 2)' });
    expect(await call('s1', { op: 'remove', id: 2 })).toMatchObject({ ok: true, data: { todos: [{ id: 1 }] } });
    expect((await readTodos(storage, 's1')).map((t) => t.id)).toEqual([1]);
    expect(await call('s1', { op: 'clear' })).toMatchObject({ ok: true, data: { todos: [] } });
  });
});

describe('recommend_features', () => {
  it('routes a topic to matching skills with their tools and tiers; without a topic, an overview', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: createSessionTools({ storage }) });
    const skills = createSkillRegistry({
      tools, env: {},
      skills: [defineSkill({ id: 'planner', description: 'Plan multi-step work with a task list', prompt: 'Use todo.', toolNames: ['todo', 'clarify'], routing: { keywords: ['plan', 'checklist'] } })],
    });
    tools.register(createRecommendFeaturesTool({ skills }));
    const ctx = createToolCallContext({ sessionId: 'r' });
    const topic = parseEnvelope(await tools.dispatch('recommend_features', { topic: 'help me plan a checklist' }, { context: ctx })) as { ok: true; data: { skills: Array<{ id: string; matched: string[]; tools: Array<{ name: string; tier: string }> }> } };
    expect(topic.data.skills[0]).toMatchObject({ id: 'planner', matched: expect.arrayContaining(['kw:plan']), tools: expect.arrayContaining([{ name: 'todo', tier: 'READ_ONLY', description: expect.any(String) }]) });
    const overview = parseEnvelope(await tools.dispatch('recommend_features', {}, { context: ctx })) as { ok: true; data: { toolSets: Array<{ name: string; tools: string[] }> } };
    expect(overview.data.toolSets).toEqual([expect.objectContaining({ name: 'session', tools: ['clarify', 'todo', 'recommend_features'] })]);
  });
});
