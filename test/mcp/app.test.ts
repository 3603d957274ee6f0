/**
 * MCP through the assembled app and the CLI: `createApp({ mcp })`, `<workspace>/mcp.json`, `--mcp-config`,
 * `minara mcp list`, audit rows for scanner findings in results, and close() ending the servers.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, createToolCallContext, parseEnvelope, silentLogger } from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const ODD = { command: process.execPath, args: ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'odd-server.ts')], cwd: ROOT, trustAnnotations: true };
const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'minara-mcp-app-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('createApp with MCP servers', () => {
  it('registers the servers\' tools in app.tools, audits scanner findings in results, and close() ends the servers', async () => {
    const dir = temp();
    const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, model: createScriptedModel([]), config: { dataDir: dir }, mcp: { mcpServers: { odd: ODD } } });
    const pid = app.mcp!.status()[0]!.pid!;
    try {
      expect(app.tools.has('mcp__odd__injected')).toBe(true);
      expect(app.tools.list({ toolSets: ['mcp:odd'] }).map((t) => t.name)).toContain('mcp__odd__pid');
      const ctx = createToolCallContext({ sessionId: 'app-mcp', source: 'user' });
      const r = parseEnvelope(await app.tools.dispatch('mcp__odd__injected', {}, { context: ctx }));
      expect(r.ok).toBe(true);
      const rows = await app.storage.audit.query({ sessionId: 'app-mcp' });
      expect(rows.map((row) => row.code)).toContain('INPUT_PROMPT_INJECTION');
      expect(rows.filter((row) => row.code === 'INPUT_PROMPT_INJECTION').map((row) => [row.toolName, row.reason, row.source])).toContainEqual(['mcp__odd__injected', 'mcp result: ignore_instructions', 'user']);
    } finally {
      await app.close();
    }
    const end = Date.now() + 5000;
    while (alive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('a lazy server starts at the first turn; a tool it adds mid-turn joins at the next turn boundary, never inside the turn', async () => {
    const dir = temp();
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'mcp__odd__add_tool', input: {} }] },
      { toolCalls: [{ toolName: 'mcp__odd__late', input: {} }] },
      { text: 'first turn done' },
      { toolCalls: [{ toolName: 'mcp__odd__late', input: {} }] },
      { text: 'second turn done' },
    ]);
    const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, model, config: { dataDir: dir }, mcp: { mcpServers: { odd: { ...ODD, lazy: true, tier: 1 } } } });
    try {
      // Nothing started yet: no process, no tools.
      expect(app.mcp!.status()[0]).toMatchObject({ state: 'idle', tools: 0 });
      expect(app.mcp!.status()[0]!.pid).toBeUndefined();
      expect(app.tools.has('mcp__odd__pid')).toBe(false);
      const first = await recordEvents(app.runtime.run({ sessionId: 'lazy', message: 'add a tool, then use it' }));
      expect(app.mcp!.status()[0]!.state).toBe('connected');
      const results = first.ofType('tool-result');
      // add_tool ran (through tool_invoke: MCP tools sit outside the active skills' core list) …
      expect(results[0]!.output).toMatchObject({ ok: true, data: { tool: 'add_tool', text: 'added' } });
      // … and the tool it announced is not callable inside the same turn.
      expect(results[1]!.output).toMatchObject({ ok: false });
      expect(JSON.stringify(results[1]!.output)).toContain("unavailable tool 'mcp__odd__late'");
      expect(app.tools.has('mcp__odd__late')).toBe(false);
      const second = await recordEvents(app.runtime.run({ sessionId: 'lazy', message: 'use it now' }));
      expect(app.tools.has('mcp__odd__late')).toBe(true);
      const late = second.ofType('tool-result')[0]!;
      expect(late.output).toMatchObject({ ok: true, data: { text: 'late tool ran' } });
    } finally {
      await app.close();
    }
  }, 30_000);

  it('reads <workspace>/mcp.json by default; a missing env var in it fails createApp naming the variable', async () => {
    const dir = temp();
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    writeFileSync(join(dir, 'workspace', 'mcp.json'), JSON.stringify({ mcpServers: { odd: { ...ODD, env: { TOKEN: '${ODD_TOKEN}' } } } }));
    await expect(createApp({ envFileDir: false, env: {}, logger: silentLogger, config: { dataDir: dir, workspaceDir: join(dir, 'workspace') } })).rejects.toThrow(
      'mcp: mcpServers.odd.env.TOKEN: environment variable ODD_TOKEN is not set',
    );
    const app = await createApp({ envFileDir: false, env: { ODD_TOKEN: 'x' }, logger: silentLogger, config: { dataDir: dir, workspaceDir: join(dir, 'workspace') } });
    try {
      expect(app.mcp?.status()[0]).toMatchObject({ name: 'odd', state: 'connected' });
    } finally {
      await app.close();
    }
    const none = await createApp({ envFileDir: false, env: {}, logger: silentLogger, config: { dataDir: temp() } });
    expect(none.mcp).toBeUndefined();
    await none.close();
  }, 30_000);

  it('minara mcp list --mcp-config prints each server with its state and tool count', () => {
    const dir = temp();
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { odd: ODD, dead: { command: process.execPath, args: ['-e', 'process.exit(1)'], connectTimeoutMs: 2000 } } }));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'mcp', 'list', '--mcp-config', join(dir, 'mcp.json'), '--data-dir', dir], {
      cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, NO_COLOR: '1', MINARA_LOG_LEVEL: 'silent' }, timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^odd\s+connected\s+stdio\s+6 tools$/m);
    expect(r.stdout).toMatch(/^dead\s+failed\s+stdio\s+0 tools {2}! /m);
    expect(r.stdout).toContain('odd: skipped broken_schema: its input schema is not usable JSON Schema');
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'mcp', 'nope'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
  }, 60_000);
});
