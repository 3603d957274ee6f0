import { createAgentRuntime, createMemoryStore, createToolRegistry, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

const promptText = (model: ReturnType<typeof createScriptedModel>, i: number) => JSON.stringify(model.calls[i]!.prompt);

describe('the frozen memory snapshot is stored once per session, not with every turn', () => {
  it('a new session keeps the snapshot under its own key; each turn still sends it; the state row stays small', async () => {
    const storage = createInMemoryStorage();
    const memory = createMemoryStore({ storage, scope: { userId: 'default' }, logger: silentLogger });
    await memory.write({ category: 'preference', content: 'prefers weekly charts of ETH' });
    const model = createScriptedModel([{ text: 'one' }, { text: 'two' }]);
    const runtime = createAgentRuntime({ model, tools: createToolRegistry({ storage }), storage, memory, logger: silentLogger });
    await runtime.generate({ sessionId: 's', message: 'hi' });
    await memory.write({ category: 'preference', content: 'dislikes meme coins' }); // after the freeze: not in this session
    await runtime.generate({ sessionId: 's', message: 'again' });
    for (const i of [0, 1]) {
      expect(promptText(model, i)).toContain('weekly charts of ETH');
      expect(promptText(model, i)).not.toContain('meme coins');
    }
    const row = (await storage.meta.get('runtime:session:s'))!;
    expect(row).not.toContain('weekly charts');
    expect(JSON.parse(row)).toMatchObject({ turnCount: 2, memory: 'own-key' });
    expect(await storage.meta.get('runtime:session-memory:s')).toContain('weekly charts of ETH');
  });

  it('a session stored before the split (snapshot inline in the state row) keeps its snapshot', async () => {
    const storage = createInMemoryStorage();
    await storage.conversations.ensureSession({ id: 'old', userId: 'default', now: new Date().toISOString() });
    await storage.meta.set('runtime:session:old', JSON.stringify({ memorySnapshot: '<memory-context>\n- likes SOL staking\n</memory-context>', activeSkills: [], turnCount: 3 }));
    const memory = createMemoryStore({ storage, scope: { userId: 'default' }, logger: silentLogger });
    const model = createScriptedModel([{ text: 'one' }, { text: 'two' }]);
    const runtime = createAgentRuntime({ model, tools: createToolRegistry({ storage }), storage, memory, logger: silentLogger });
    await runtime.generate({ sessionId: 'old', message: 'hi' });
    await runtime.generate({ sessionId: 'old', message: 'again' });
    expect(promptText(model, 0)).toContain('likes SOL staking');
    expect(promptText(model, 1)).toContain('likes SOL staking');
    expect(JSON.parse((await storage.meta.get('runtime:session:old'))!)).toMatchObject({ turnCount: 5 });
  });
});
