/**
 * run_code's `inputs` run only tools without side effects. The attack: `inputs: [{ tool: 'memory_write', … }]`
 * wrote a memory (memory_write is READ_ONLY by tier: it needs no confirmation, but it changes stored state). Now the
 * inputs are dispatched in a context that only side-effect-free tools (`sideEffects: false`) may run in, enforced by
 * the registry's gate (`SIDE_EFFECTS_REFUSED`), also for a call nested inside an input tool.
 */
import { z } from 'zod';
import {
  createMemoryStore, createMemoryTools, createQuickJsSandbox, createRunCodeTools, createToolCallContext, createToolRegistry, defineTool,
  parseEnvelope, PermissionTier, silentLogger, type CodeSandbox, type ToolRegistry,
} from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: CodeSandbox;
beforeAll(async () => {
  sandbox = createQuickJsSandbox({ timeoutMs: 2_000, memoryBytes: 16 * 1024 * 1024 });
  await sandbox.warm();
});
afterAll(() => sandbox.close());

function build() {
  const storage = createInMemoryStorage();
  const store = createMemoryStore({ storage, scope: { userId: 'u1' }, logger: silentLogger });
  let registry: ToolRegistry | undefined;
  const written: string[] = [];
  registry = createToolRegistry({
    storage,
    tools: [
      ...createRunCodeTools({ sandbox, registry: () => registry }),
      ...createMemoryTools({ store }),
      defineTool({ name: 'get_series', toolSet: 'read', description: 'a series', inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, sideEffects: false, execute: () => [1, 2, 3] }),
      // Declares itself side-effect free but calls a tool that writes: the nested call is refused too.
      defineTool({
        name: 'sneaky_read', toolSet: 'read', description: 'reads, then writes', inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, sideEffects: false,
        execute: async () => parseEnvelope(await registry!.dispatch('note_write', {})),
      }),
      defineTool({ name: 'note_write', toolSet: 'read', description: 'writes', inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, execute: () => written.push('x') }),
    ],
  });
  return { registry, store, written };
}

describe('run_code inputs', () => {
  it('refuses memory_write as an input: nothing is written', async () => {
    const { registry, store } = build();
    const context = createToolCallContext({ sessionId: 'in-1', source: 'user', userId: 'u1' });
    const args = { code: 'return data.w', inputs: [{ name: 'w', tool: 'memory_write', args: { category: 'lesson', content: 'always buy the top' } }] };
    let out = parseEnvelope(await registry.dispatch('run_code', args, { context }));
    if (!out.ok && out.code === 'APPROVAL_REQUIRED') {
      const approvalId = (out as { approval: { approvalId: string } }).approval.approvalId;
      await registry.approvals.decide(approvalId, { approved: true });
      out = parseEnvelope(await registry.dispatch('run_code', args, { context, approvalId }));
    }
    expect(out.ok).toBe(false);
    expect((out as { error: string }).error).toMatch(/memory_write/);
    expect(await store.read({ category: 'lesson' })).toHaveLength(0);
  });

  it('runs a side-effect-free input; a write nested inside one is refused by the gate', async () => {
    const { registry, written } = build();
    const context = createToolCallContext({ sessionId: 'in-2', source: 'cron', userId: 'u1' });
    await registry.grants.create({ toolName: 'run_code', sources: ['cron'] });
    const ok = parseEnvelope(await registry.dispatch('run_code', { code: 'return data.s.length', inputs: [{ name: 's', tool: 'get_series' }] }, { context }));
    expect(ok).toMatchObject({ ok: true, data: { result: 3 } });
    const nested = parseEnvelope(await registry.dispatch('run_code', { code: 'return data.r', inputs: [{ name: 'r', tool: 'sneaky_read' }] }, { context }));
    expect(nested).toMatchObject({ ok: true, data: { result: { ok: false, code: 'SIDE_EFFECTS_REFUSED' } } });
    expect(written).toEqual([]);
    // Outside run_code's inputs the same tool runs as before.
    expect(parseEnvelope(await registry.dispatch('note_write', {}, { context }))).toMatchObject({ ok: true });
    expect(written).toEqual(['x']);
  });
});

describe('side-effect-free contexts', () => {
  it('createToolCallContext({ sideEffectFree: true }) lets only sideEffects: false tools run; defineTool checks the flag', async () => {
    const { registry, written } = build();
    const context = createToolCallContext({ sessionId: 'in-3', source: 'user', sideEffectFree: true });
    expect(context.sideEffectFree).toBe(true);
    expect(parseEnvelope(await registry.dispatch('get_series', {}, { context }))).toMatchObject({ ok: true, data: [1, 2, 3] });
    expect(parseEnvelope(await registry.dispatch('note_write', {}, { context }))).toMatchObject({ ok: false, code: 'SIDE_EFFECTS_REFUSED', error: expect.stringContaining('note_write') });
    expect(parseEnvelope(await registry.dispatch('memory_write', { category: 'lesson', content: 'x' }, { context }))).toMatchObject({ ok: false, code: 'SIDE_EFFECTS_REFUSED' });
    expect(written).toEqual([]);
    expect(() => defineTool({ name: 'pay', toolSet: 'transfer', description: 'x', inputSchema: z.object({}), permissionTier: PermissionTier.CONFIRM_ONCE, sideEffects: false, execute: () => 1 }))
      .toThrow(/field "sideEffects" can be false only on a READ_ONLY tool/);
  });
});
