import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CLI_MODEL_HELP, createApp, defineSkill, defineTool, type MinaraApp, MODEL_HELP, PermissionTier, silentLogger } from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';

const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
const tmp = () => mkdtempSync(path.join(tmpdir(), 'minara-app-'));
const open = async (opts: Parameters<typeof createApp>[0]) => {
  const app = await createApp({ logger: silentLogger, envFileDir: false, ...opts });
  apps.push(app);
  return app;
};

describe('createApp', () => {
  it('wires storage under dataDir, built-in tools, a seeded workspace and the runtime; with no model, turns explain how to configure one', async () => {
    const dataDir = tmp();
    const app = await open({ env: { MINARA_DATA_DIR: dataDir } });
    expect(app.config.dbPath).toBe(path.join(dataDir, 'minara.db'));
    expect(existsSync(app.config.dbPath)).toBe(true);
    expect(existsSync(path.join(dataDir, 'workspace', 'SOUL.md'))).toBe(true);
    expect(app.tools.list().map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'write_file', 'list_files', 'memory_write', 'memory_search', 'memory_read', 'activate_skills', 'tool_invoke']));
    expect(app.modelStatus.configured).toBe(false);
    const r = await recordEvents(app.runtime.run({ sessionId: 'no-model', message: 'hello' }));
    const error = r.ofType('error')[0]!;
    expect(error.code).toBe('MODEL_NOT_CONFIGURED');
    expect(error.message).toMatch(/MINARA_MODEL=anthropic/);
    // A host is told about its own knobs (the env, createApp's `model`), not the CLI's --model flag.
    expect(error.message).toContain('pass `model` to createApp');
    expect(error.message).not.toContain('--model');
    expect(app.modelStatus).toMatchObject({ configured: false, help: MODEL_HELP });
    expect(r.ofType('turn-end')[0]!.stopReason).toBe('error');
  });

  it('a second finance pack in packs is refused with what to do instead (the built-in one is on by default)', async () => {
    const { createFinancePack } = await import('@minara/agent/finance');
    const dataDir = tmp();
    await expect(open({ env: { MINARA_DATA_DIR: dataDir }, packs: [({ storage }) => createFinancePack({ storage, provider: 'paper' })] })).rejects.toThrow(
      /^packs\[0\]: its tool "[a-z_]+" is the finance pack's, which createApp already adds; configure that one with `finance: \{ … \}`, or pass `finance: false` to bring your own\.$/,
    );
    // With the built-in pack off, the host's own finance pack is the one.
    const app = await open({ env: { MINARA_DATA_DIR: tmp() }, finance: false, packs: [({ storage }) => createFinancePack({ storage, provider: 'paper' })] });
    expect(app.tools.has('buy_token')).toBe(true);
  });

  it('words the no-model instructions for the surface: modelHelp (the CLI passes CLI_MODEL_HELP)', async () => {
    const app = await open({ env: { MINARA_DATA_DIR: tmp() }, modelHelp: CLI_MODEL_HELP });
    const r = await recordEvents(app.runtime.run({ sessionId: 'no-model', message: 'hello' }));
    expect(r.ofType('error')[0]!.message).toContain('pass --model provider:model');
    expect(CLI_MODEL_HELP.split('\n')[0]).toBe(MODEL_HELP.split('\n')[0]);
  });

  it('accepts replacements: model, extra tools and skills, SKILL.md directories; memory is scoped per user', async () => {
    const dataDir = tmp();
    const skillsDir = path.join(dataDir, 'my-skills', 'greeter');
    mkdirSync(skillsDir, { recursive: true });
    writeFileSync(path.join(skillsDir, 'SKILL.md'), '---\nname: greeter\ndescription: Greets people warmly\nmetadata:\n  minara:\n    id: demo.greeter\n    routing:\n      keywords: [hello]\n---\nSay hello back.\n');
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'memory_write', input: { category: 'preference', content: 'likes short answers' } }] },
      { text: 'Noted.' },
    ]);
    const echo = defineTool({ name: 'echo', toolSet: 'read', description: 'Echo', inputSchema: z.object({ text: z.string() }), permissionTier: PermissionTier.READ_ONLY, execute: ({ text }) => text });
    const app = await open({
      env: { MINARA_DATA_DIR: dataDir },
      model,
      tools: [echo],
      skills: [defineSkill({ id: 'demo.echo', description: 'Echo things', prompt: 'Use echo.', toolNames: ['echo'], priority: 50, activation: 'auto', routing: { keywords: ['echo'] } })],
      skillDirs: [path.join(dataDir, 'my-skills')],
    });
    expect(app.modelStatus).toMatchObject({ configured: true, provider: 'custom' });
    expect(app.skills.list().map((s) => s.id)).toEqual(expect.arrayContaining(['demo.echo', 'demo.greeter', 'minara.core']));
    await app.runtime.generate({ sessionId: 's1', message: 'remember I like short answers', userId: 'alice' });
    expect((await app.memoryFor('alice').read()).map((m) => m.content)).toEqual(['likes short answers']);
    expect(await app.memoryFor('bob').read()).toEqual([]);
    expect(() => app.memoryFor('')).toThrow(/userId/);
  });

  it('is pure given options and env: two apps on the same inputs send the same prompt and tools', async () => {
    const dataDir = tmp();
    const a = await open({ env: { MINARA_DATA_DIR: dataDir }, model: createScriptedModel([]) });
    const pa = await a.runtime.buildSystemPromptBlocks({ sessionId: 'same', message: 'hi' });
    await a.close();
    apps.length = 0;
    const b = await open({ env: { MINARA_DATA_DIR: dataDir }, model: createScriptedModel([]), surface: 'gateway' });
    const pb = await b.runtime.buildSystemPromptBlocks({ sessionId: 'same', message: 'hi' });
    expect(pb.blocks.filter((x) => x.cache)).toEqual(pa.blocks.filter((x) => x.cache));
    expect(pb.toolNames).toEqual(pa.toolNames);
  });

  it('loads .env from envFileDir without overriding given values, and rejects bad config clearly', async () => {
    const dir = tmp();
    writeFileSync(path.join(dir, '.env'), `MINARA_LOG_LEVEL=error\nMINARA_DATA_DIR=${path.join(dir, 'from-file')}\n`);
    const app = await createApp({ env: { MINARA_DATA_DIR: path.join(dir, 'from-shell') }, envFileDir: dir, logger: silentLogger, model: createScriptedModel([]) });
    apps.push(app);
    expect(app.config.logLevel).toBe('error');
    expect(app.config.dataDir).toBe(path.join(dir, 'from-shell'));
    expect(app.envLoad?.sources).toEqual({ MINARA_LOG_LEVEL: 'file', MINARA_DATA_DIR: 'shell' });
    await expect(createApp({ env: { MINARA_DATA_DIR: tmp(), GATEWAY_PORT: 'x' }, envFileDir: false, logger: silentLogger })).rejects.toThrow(/gatewayPort \(GATEWAY_PORT\)/);
  });

  it('packs contribute tools, hooks, skills and a scenario classifier', async () => {
    const seen: string[] = [];
    const app = await open({
      env: { MINARA_DATA_DIR: tmp() },
      model: createScriptedModel([{ toolCalls: [{ toolName: 'ping', input: {} }] }, { text: 'done' }]),
      packs: [
        ({ storage }) => ({
          tools: [defineTool({ name: 'ping', toolSet: 'read', description: 'Ping', inputSchema: z.object({}), permissionTier: 1, execute: () => ({ pong: storage.kind }) })],
          hooks: [{ name: 'watch', after: ({ tool }) => { seen.push(tool.name); } }],
          scenarios: { classify: (m) => (m.includes('ping') ? { id: 'SCENARIO_PING', playbook: 'Call ping once.' } : undefined) },
        }),
      ],
      skills: [],
    });
    const r = await app.runtime.generate({ sessionId: 'p', message: 'ping please' });
    expect(r.text).toBe('done');
    expect(seen).toContain('ping'); // reached through tool_invoke: the tool is not in the baseline list
    const sys = (app.runtime.options.model as ReturnType<typeof createScriptedModel>).calls[0]!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content));
    expect(sys.some((t) => t.includes('SCENARIO_PING') && t.includes('Call ping once.'))).toBe(true);
  });
});

describe('createApp with the finance pack', () => {
  it('includes the finance pack by default (paper trading), and none with finance: false', async () => {
    const withFinance = await open({ env: { MINARA_DATA_DIR: tmp() }, model: createScriptedModel([]) });
    expect(withFinance.finance).toBeDefined();
    expect(withFinance.tools.has('get_price') && withFinance.tools.has('buy_token') && withFinance.tools.has('emergency_stop')).toBe(true);
    expect(withFinance.skills.has('minara.core')).toBe(true);
    const without = await open({ env: { MINARA_DATA_DIR: tmp() }, model: createScriptedModel([]), finance: false });
    expect(without.finance).toBeUndefined();
    expect(without.tools.has('buy_token')).toBe(false);
  });

  it("a user's hard_constraint profile entries tighten the limits and never loosen them", async () => {
    const app = await open({ env: { MINARA_DATA_DIR: tmp() }, model: createScriptedModel([]), finance: { limits: { maxTradeUsd: 1_000 } } });
    await app.memory.profile.set('hard_constraint.maxTradeUsd', '100');
    expect((await app.finance!.limits()).maxTradeUsd).toBe(100);
    await app.memory.profile.set('hard_constraint.maxTradeUsd', '5000');
    expect((await app.finance!.limits()).maxTradeUsd).toBe(1_000);
  });
});
