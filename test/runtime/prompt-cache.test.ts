import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLearningStore, createMemoryStore, createMemoryTools, createTurnLearning, createWorkspace, renderSystemPrompt } from '@minara/agent';
import { createInMemoryStorage, recordEvents } from '@minara/agent/testing';
import { setup, systemTexts } from './helpers';

describe('cache-stable prompt blocks', () => {
  it('two turns with the same active skills send byte-identical cached blocks and tool lists', async () => {
    const activate = { toolCalls: [{ toolName: 'activate_skills', input: { ids: ['minara.core'] } }] };
    const { runtime, model } = setup([activate, { text: 'loaded' }, { text: 'turn 2' }, { text: 'turn 3' }]);
    await runtime.generate({ sessionId: 'c1', message: 'I want to swap' });
    await runtime.generate({ sessionId: 'c1', message: 'price of BTC?' });
    await runtime.generate({ sessionId: 'c1', message: 'price of ETH?' });
    const [, , t2, t3] = model.calls;
    const cached = (c: typeof t2) => c!.prompt.filter((m) => m.role === 'system' && m.providerOptions !== undefined).map((m) => String(m.content));
    expect(cached(t2)).toHaveLength(2);
    expect(cached(t2)).toEqual(cached(t3));
    expect(JSON.stringify(t2!.tools)).toBe(JSON.stringify(t3!.tools));
    expect(t2!.tools!.map((t) => t.name)).toEqual(['activate_skills', 'get_price', 'tool_invoke', 'swap_tokens']);
    // The first call of the session had the same cached prefix, although skills were activated mid-turn.
    expect(cached(model.calls[0])).toEqual(cached(t2));
    expect(cached(model.calls[1])).toEqual(cached(model.calls[0]));
  });

  it('mid-turn activation appends guidance to the tool result instead of rebuilding the prefix', async () => {
    const { runtime, model } = setup([{ toolCalls: [{ toolName: 'activate_skills', input: { ids: ['minara.core'] } }] }, { text: 'ok' }]);
    const r = await recordEvents(runtime.run({ sessionId: 'm1', message: 'swap please' }));
    expect(r.ofType('skill-activated')[0]).toMatchObject({ skillIds: ['minara.core'], via: 'model' });
    const result = r.ofType('tool-result')[0]!.output as { ok: true; data: { guidance: string } };
    expect(result.data.guidance).toContain('Preview swaps before confirming');
    expect(systemTexts(model.calls[1]!.prompt)).toEqual(systemTexts(model.calls[0]!.prompt));
  });

  it('the memory snapshot is frozen for the session: a write in turn 1 is not in turn 2, and appears in the next session', async () => {
    const storage = createInMemoryStorage();
    const memory = createMemoryStore({ storage, scope: { userId: 'default' } });
    await memory.write({ category: 'preference', content: 'prefers weekly charts' });
    const memoryTools = createMemoryTools({ store: memory });
    const { runtime, model, tools } = setup(
      [{ toolCalls: [{ toolName: 'memory_write', input: { category: 'preference', content: 'always use 0.5% slippage' } }] }, { text: 'noted' }, { text: 'turn 2' }, { text: 'new session' }],
      { storage, memory },
    );
    tools.register(memoryTools);
    await runtime.generate({ sessionId: 'mem-1', message: 'remember: always 0.5% slippage' });
    await runtime.generate({ sessionId: 'mem-1', message: 'what do you know?' });
    await runtime.generate({ sessionId: 'mem-2', message: 'what do you know?' });
    const snapshotOf = (i: number) => systemTexts(model.calls[i]!.prompt).find((t) => t.startsWith('<memory-context>')) ?? '';
    expect(snapshotOf(0)).toContain('prefers weekly charts');
    expect(snapshotOf(0)).not.toContain('0.5% slippage');
    expect(snapshotOf(2)).toBe(snapshotOf(0));
    expect(snapshotOf(3)).toContain('0.5% slippage');
    expect(snapshotOf(3)).toContain('prefers weekly charts');
  });

  it('buildSystemPrompt returns the plain prompt for --dump-prompt, in block order', async () => {
    const { runtime } = setup([]);
    const { blocks, toolNames } = await runtime.buildSystemPromptBlocks({ sessionId: 'dump', message: 'swap BTC' });
    expect(blocks.map((b) => b.id)).toEqual(['identity', 'skill-catalog', 'routing']);
    expect(blocks.map((b) => b.cache)).toEqual([true, true, false]);
    expect(toolNames).toContain('activate_skills');
    expect(await runtime.buildSystemPrompt({ sessionId: 'dump', message: 'swap BTC' })).toBe(renderSystemPrompt(blocks));
  });
});

describe('workspace in the turn', () => {
  it('uses SOUL + AGENTS as the cached identity, leads the dynamic tail with the workspace files, and writes the heartbeat at turn end', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-ws-rt-'));
    const workspace = createWorkspace({ dir });
    await workspace.seed();
    writeFileSync(path.join(dir, 'SOUL.md'), '# SOUL.md\nYou are Tess, a terse trading desk assistant.\n');
    const { runtime, model } = setup([{ text: 'Hello.\nBOOTSTRAP_DONE' }, { text: 'second' }], { workspace, surface: 'repl' });
    await runtime.generate({ sessionId: 'ws-1', message: 'hi' });
    const sys = systemTexts(model.calls[0]!.prompt);
    expect(sys[0]).toContain('You are Tess');
    expect(sys[0]).toContain('How tools work here');
    const heartbeat = readFileSync(path.join(dir, 'HEARTBEAT.md'), 'utf8');
    expect(heartbeat).toContain('ws-1');
    expect(heartbeat).toContain('repl');
    // BOOTSTRAP_DONE at the end of the reply archives BOOTSTRAP.md; the next prompt has no bootstrap block.
    expect(existsSync(path.join(dir, 'BOOTSTRAP.md'))).toBe(false);
    expect(readdirSync(dir).some((f) => f.startsWith('BOOTSTRAP.md.done.'))).toBe(true);
    await runtime.generate({ sessionId: 'ws-1', message: 'again' });
    const blocksBefore = await runtime.buildSystemPromptBlocks({ sessionId: 'ws-1' });
    expect(blocksBefore.blocks.map((b) => b.id)).not.toContain('bootstrap');
    const before = systemTexts(model.calls[0]!.prompt);
    const after = systemTexts(model.calls[1]!.prompt);
    expect(before.length).toBe(after.length + 1); // the bootstrap block is gone
    expect(after.every((t) => before.includes(t) || !t.includes('BOOTSTRAP_DONE'))).toBe(true);
    expect(systemTexts(model.calls[1]!.prompt)[0]).toBe(sys[0]);
  });
});

describe('learned context in the dynamic tail', () => {
  it('methodologies and preferences change between turns without touching the cached prefix; the block follows the workspace', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-ws-learn-'));
    const workspace = createWorkspace({ dir });
    await workspace.seed();
    const storage = createInMemoryStorage();
    const learning = createLearningStore({ storage, scope: { userId: 'default' } });
    const { runtime, model } = setup([{ text: 'one' }, { text: 'two' }, { text: 'three' }], {
      storage, workspace, learning: createTurnLearning({ learningFor: () => learning }),
    });
    const { methodology } = await learning.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts above the prior day high' });
    await runtime.generate({ sessionId: 'L1', message: 'should I buy BTC?' });
    await learning.graduateMethodology(methodology.id, { force: true });
    await learning.proposePreference({ dimension: 'slippage', text: 'Caps slippage at 0.5%' }).then(({ preference }) => learning.approvePreference(preference.id));
    await runtime.generate({ sessionId: 'L1', message: 'should I buy BTC?' });
    await runtime.generate({ sessionId: 'L1', message: 'hello' });
    const cached = (i: number) => model.calls[i]!.prompt.filter((m) => m.role === 'system' && m.providerOptions !== undefined).map((m) => String(m.content));
    expect(cached(1)).toEqual(cached(0));
    expect(cached(2)).toEqual(cached(0));
    expect(JSON.stringify(model.calls[1]!.tools)).toBe(JSON.stringify(model.calls[0]!.tools));
    const learned = (i: number) => systemTexts(model.calls[i]!.prompt).find((t) => t.startsWith('## Learned from outcomes'));
    expect(learned(0)).toContain(`#${methodology.id} [on trial · no outcomes yet]`);
    expect(learned(1)).toContain(`#${methodology.id} [graduated · no outcomes yet]`);
    expect(learned(1)).toContain('- [slippage] Caps slippage at 0.5%');
    expect(learned(2)).not.toContain('### Methodologies'); // no asset in the message: preferences only
    const blocks = await runtime.buildSystemPromptBlocks({ sessionId: 'L1', message: 'BTC?' });
    const ids = blocks.blocks.map((b) => b.id);
    expect(ids.indexOf('learning')).toBeGreaterThan(ids.indexOf('workspace'));
    expect(blocks.blocks.find((b) => b.id === 'learning')!.cache).toBe(false);
  });
});
