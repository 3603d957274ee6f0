import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  createAgentRuntime,
  createToolCallContext,
  createToolRegistry,
  type Logger,
  parseEnvelope,
  PermissionTier,
  silentLogger,
} from '@minara/agent';
import { createMcpTools, loadMcpConfigFile, MCP_DEFAULTS, type McpResultFinding, mcpResultData, mcpToolName, mcpToolSet, mcpToolTier, parseMcpConfig } from '@minara/agent/mcp';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const ODD = ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'odd-server.ts')];
const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
const odd = { command: process.execPath, args: ODD, cwd: ROOT };
const user = (sessionId = 's') => createToolCallContext({ sessionId, source: 'user' });
const call = async (registry: ReturnType<typeof createToolRegistry>, name: string, args: unknown, ctx = user()) => parseEnvelope(await registry.dispatch(name, args, { context: ctx })) as {
  ok: boolean; data?: Record<string, unknown>; code?: string; error?: string; retryable?: boolean; approval?: { approvalId: string };
};

function capture(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const put = (level: string) => (message: string, fields?: Record<string, unknown>) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { lines, debug: put('debug'), info: put('info'), warn: put('warn'), error: put('error') };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('MCP config', () => {
  it('expands ${ENV} in command, args, env, url and headers, and names a missing variable and its field', () => {
    const config = parseMcpConfig(
      { mcpServers: { gh: { url: 'https://${HOST}/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, tier: 1 }, fs: { command: 'npx', args: ['-y', '${PKG}'], env: { ROOT: '$${literal}' } } } },
      { HOST: 'example.com', TOKEN: 't0ps3cret', PKG: '@modelcontextprotocol/server-filesystem' },
    );
    expect(config.mcpServers.gh).toMatchObject({ url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t0ps3cret' }, tier: 1 });
    expect(config.mcpServers.fs).toMatchObject({ args: ['-y', '@modelcontextprotocol/server-filesystem'], env: { ROOT: '${literal}' } });
    const missing = (() => {
      try {
        parseMcpConfig({ mcpServers: { gh: { url: 'https://x/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } } }, {});
      } catch (error) {
        return error as ConfigError;
      }
      return undefined;
    })();
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing?.message).toBe('mcp: mcpServers.gh.headers.Authorization: environment variable GITHUB_TOKEN is not set');
  });

  it('refuses a bad shape naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ mcpServers: { a: { command: 'x', url: 'http://y' } } }, /mcpServers\.a: give exactly one of "command"/],
      [{ mcpServers: { a: { command: 'x', tier: 7 } } }, /mcpServers\.a\.tier: expected a permission tier 1–4, got 7/],
      [{ mcpServers: { a: { command: 'x', colour: 'red' } } }, /mcpServers\.a\.colour: unknown field/],
      [{ mcpServers: { a: { url: 'ftp://y' } } }, /mcpServers\.a\.url: expected an http: or https: URL/],
      [{ mcpServers: { 'a b': { command: 'x' } } }, /mcpServers\.a b: a server name is/],
      [{ mcpServers: { a: { command: 'x', tools: { t: { tier: 2, colour: 1 } } } } }, /mcpServers\.a\.tools\.t\.colour: unknown field/],
      [[], /config: expected an object/],
    ];
    for (const [raw, message] of bad) expect(() => parseMcpConfig(raw, {})).toThrow(message);
  });

  it('loads mcp.json from a file; a missing file is an empty config; invalid JSON is a clear error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minara-mcp-'));
    try {
      writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { e: { command: 'node', args: ['${X}'] } } }));
      expect((await loadMcpConfigFile(join(dir, 'mcp.json'), { X: 'server.js' })).mcpServers.e).toMatchObject({ args: ['server.js'] });
      expect(await loadMcpConfigFile(join(dir, 'none.json'))).toEqual({ mcpServers: {} });
      writeFileSync(join(dir, 'bad.json'), '{ nope');
      await expect(loadMcpConfigFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP names and tiers', () => {
  it('names are mcp__<server>__<tool>, snake case, at most 64 characters; tool sets are mcp:<server>', () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('mcp__everything__get_sum');
    expect(mcpToolName('GitHub.com', 'Create PR!')).toBe('mcp__github_com__create_pr');
    const long = mcpToolName('a-very-long-server-name-indeed', 'and_an_even_longer_tool_name_that_goes_on_and_on');
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toMatch(/^mcp__a_very_long_server_name_indeed__and_an_even.*_[0-9a-f]{8}$/);
    expect(long).not.toBe(mcpToolName('a-very-long-server-name-indeed', 'and_an_even_longer_tool_name_that_goes_on_and_on_2'));
    expect(mcpToolSet('GitHub.com')).toBe('mcp:github-com');
  });

  it('tier: operator first, then destructiveHint raises, readOnlyHint lowers only when trusted, else CONFIRM_ONCE', () => {
    const ro = { name: 't', annotations: { readOnlyHint: true } };
    const destructive = { name: 't', annotations: { destructiveHint: true } };
    expect(mcpToolTier({ command: 'x' }, ro)).toBe(PermissionTier.CONFIRM_ONCE);
    expect(mcpToolTier({ command: 'x', trustAnnotations: true }, ro)).toBe(PermissionTier.READ_ONLY);
    expect(mcpToolTier({ command: 'x', trustAnnotations: true }, destructive)).toBe(PermissionTier.ALWAYS_CONFIRM);
    expect(mcpToolTier({ command: 'x' }, { name: 't' })).toBe(PermissionTier.CONFIRM_ONCE);
    expect(mcpToolTier({ command: 'x', tier: PermissionTier.READ_ONLY, tools: { t: { tier: PermissionTier.MANUAL_ONLY } } }, ro)).toBe(PermissionTier.MANUAL_ONLY);
  });

  it('results: text joined and cut at the cap with a note, images described not inlined, resources referenced', () => {
    const data = mcpResultData(
      {
        content: [
          { type: 'text', text: 'a'.repeat(100) },
          { type: 'image', data: 'AAAA'.repeat(1000), mimeType: 'image/png' },
          { type: 'resource_link', uri: 'file:///x.txt', name: 'x' },
        ],
      },
      64,
    );
    expect(data.text).toBe(`${'a'.repeat(64)}\n[… 36 more bytes cut: the result was larger than 64 bytes]`);
    expect(data.attachments).toEqual([{ type: 'image', mimeType: 'image/png', bytes: 3000 }, { type: 'resource', uri: 'file:///x.txt', name: 'x', mimeType: undefined }]);
  });
});

describe('MCP client against real servers', () => {
  const findings: McpResultFinding[] = [];
  const logger = capture();
  let mcp: Awaited<ReturnType<typeof createMcpTools>>;
  let fsDir = '';
  beforeAll(async () => {
    fsDir = mkdtempSync(join(tmpdir(), 'minara-mcp-fs-'));
    mkdirSync(join(fsDir, 'notes'));
    writeFileSync(join(fsDir, 'notes', 'btc.md'), 'BTC thesis: halving supply shock.');
    mcp = await createMcpTools({
      config: {
        mcpServers: {
          everything: { ...everything, trustAnnotations: true, env: { SECRET_TOKEN: 'never-in-logs-123' } },
          odd: { ...odd, trustAnnotations: true, maxResultBytes: 65_536 },
          files: { command: process.execPath, args: [FILESYSTEM, fsDir], trustAnnotations: true },
          silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], connectTimeoutMs: 500 },
          garbage: { command: process.execPath, args: ['-e', 'setInterval(() => console.log("hello, not json"), 20)'], connectTimeoutMs: 500 },
        },
      },
      logger,
      onFinding: (f) => {
        findings.push(f);
      },
    });
  }, 30_000);
  afterAll(async () => {
    await mcp?.close();
    rmSync(fsDir, { recursive: true, force: true });
  });

  it('servers that never answer initialize or write garbage fail with a clear error; the others load', () => {
    const status = Object.fromEntries(mcp.status().map((s) => [s.name, s]));
    expect(status.everything).toMatchObject({ state: 'connected', transport: 'stdio' });
    expect(status.everything!.tools).toBeGreaterThan(5);
    expect(status.files!.state).toBe('connected');
    expect(status.silent).toMatchObject({ state: 'failed', tools: 0 });
    expect(status.silent!.error).toMatch(/no answer to initialize within 500 ms/);
    expect(status.garbage!.state).toBe('failed');
    expect(logger.lines.some((l) => l.includes('server "silent" did not start'))).toBe(true);
    expect(logger.lines.join('\n')).not.toContain('never-in-logs-123');
  });

  it('a tool with an unusable input schema is skipped with a warning naming it', () => {
    const odd = mcp.status().find((s) => s.name === 'odd')!;
    expect(odd.skipped).toEqual([{ tool: 'broken_schema', reason: expect.stringContaining('not usable JSON Schema') }]);
    expect(logger.lines.some((l) => l.includes('skipping tool "broken_schema"'))).toBe(true);
    expect(mcp.tools.map((t) => t.name)).not.toContain('mcp__odd__broken_schema');
  });

  it('a scripted-model turn calls an MCP tool end to end through dispatch, audited', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ tools: mcp.tools, storage });
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'mcp__everything__get_sum', input: { a: 2, b: 40 } }, { toolName: 'mcp__odd__injected', input: {} }] },
      { text: 'It is 42.' },
    ]);
    const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
    const r = await recordEvents(runtime.run({ sessionId: 'mcp-turn', message: 'add 2 and 40' }));
    expect(r.ofType('tool-result')[0]!.output).toMatchObject({ ok: true, data: { server: 'everything', tool: 'get-sum', text: 'The sum of 2 and 40 is 42.' } });
    expect(r.ofType('turn-end')[0]!.text).toBe('It is 42.');
    expect(r.ofType('input-flagged')).toContainEqual(expect.objectContaining({ target: 'tool', kind: 'prompt_injection', pattern: 'ignore_instructions', excerpt: 'mcp__odd__injected' }));
    const audit = await tools.queryAudit({ toolName: 'mcp__everything__get_sum' });
    expect(audit[0]).toMatchObject({ decision: 'allowed', tier: PermissionTier.READ_ONLY, sessionId: 'mcp-turn' });
  });

  it('the environment given to a stdio server is a minimal one plus its own env, not the parent environment', async () => {
    process.env.MINARA_PARENT_ONLY = 'parent-secret-456';
    try {
      const tools = createToolRegistry({ tools: mcp.tools });
      const r = await call(tools, 'mcp__everything__get_env', {});
      expect(String(r.data?.text)).toContain('never-in-logs-123');
      expect(String(r.data?.text)).not.toContain('parent-secret-456');
    } finally {
      delete process.env.MINARA_PARENT_ONLY;
    }
  });

  it('server-filesystem: reads inside its root; a path outside is refused by the server; writes need approval', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ tools: mcp.tools, storage });
    const read = await call(tools, 'mcp__files__read_text_file', { path: join(fsDir, 'notes', 'btc.md') });
    expect(read.data?.text).toContain('halving supply shock');
    const outside = await call(tools, 'mcp__files__read_text_file', { path: '/etc/passwd' });
    expect(outside).toMatchObject({ ok: false, code: 'MCP_ERROR' });
    expect(outside.error).toMatch(/outside allowed directories|Access denied/i);
    const write = await call(tools, 'mcp__files__write_file', { path: join(fsDir, 'x.md'), content: 'hi' });
    expect(write.code).toBe('APPROVAL_REQUIRED');
  });

  it('an enormous result is cut at 64 KB with a note; a prompt injection in a result is flagged', async () => {
    const tools = createToolRegistry({ tools: mcp.tools });
    const huge = await call(tools, 'mcp__odd__huge', {});
    expect(Buffer.byteLength(String(huge.data?.text))).toBeLessThan(66_000);
    expect(MCP_DEFAULTS.maxResultBytes).toBe(65_536);
    expect(String(huge.data?.text)).toMatch(/more bytes cut: the result was larger than 65536 bytes/);
    const injected = await call(tools, 'mcp__odd__injected', {}, user('inj'));
    expect(injected.data?.untrusted).toContainEqual({ kind: 'prompt_injection', pattern: 'ignore_instructions' });
    expect(findings).toContainEqual(expect.objectContaining({ server: 'odd', tool: 'injected', sessionId: 'inj', source: 'user', kind: 'prompt_injection' }));
  });

  it('gate: destructive tools wait for approval, the emergency stop and autonomous sources block, tool sets restrict', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ tools: mcp.tools, storage });
    expect((await call(tools, 'mcp__odd__wipe', { target: 'all' })).code).toBe('APPROVAL_REQUIRED');
    const cron = createToolCallContext({ sessionId: 'c', source: 'cron' });
    const auto = await call(tools, 'mcp__everything__echo', { message: 'x' }, cron);
    expect(auto).toMatchObject({ ok: false, code: 'TOOL_BLOCKED' });
    expect(auto.error).toContain('allowAutonomous');
    const narrow = createToolCallContext({ sessionId: 'n', source: 'user', allowedToolSets: ['mcp:files'] });
    expect((await call(tools, 'mcp__everything__echo', { message: 'x' }, narrow)).code).toBe('TOOL_SET_NOT_ALLOWED');
    await tools.emergencyStop.engage('test');
    expect((await call(tools, 'mcp__odd__wipe', { target: 'all' })).code).toBe('EMERGENCY_STOP');
    expect((await call(tools, 'mcp__everything__echo', { message: 'still reads' })).ok).toBe(true);
    await tools.emergencyStop.release();
    expect(mcp.tools.find((t) => t.name === 'mcp__odd__wipe')!.permissionTier).toBe(PermissionTier.ALWAYS_CONFIRM);
  });

  it('tools/list_changed: the new tool is picked up only when applyToolListChanges runs (a turn boundary)', async () => {
    const tools = createToolRegistry({ tools: mcp.tools });
    expect((await call(tools, 'mcp__odd__add_tool', {})).code).toBe('APPROVAL_REQUIRED');
    const approvals = await tools.approvals.list({ status: 'pending' });
    const id = approvals.find((a) => a.toolName === 'mcp__odd__add_tool')!.id;
    await tools.approvals.decide(id, { approved: true });
    const ran = parseEnvelope(await tools.dispatch('mcp__odd__add_tool', {}, { context: user(), toolCallId: approvals.find((a) => a.id === id)!.toolCallId, approvalId: id }));
    expect(ran.ok).toBe(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(tools.has('mcp__odd__late')).toBe(false);
    expect(mcp.status().find((s) => s.name === 'odd')!.toolListChanged).toBe(true);
    const added = await mcp.applyToolListChanges();
    expect(added.map((t) => t.name)).toEqual(['mcp__odd__late']);
    tools.register(added);
    expect((await call(tools, 'mcp__odd__late', {})).data?.text).toBe('late tool ran');
  });
});

describe('MCP lifecycle', () => {
  it('a crashed stdio server fails calls with retryable MCP_UNAVAILABLE, then restarts and serves again', async () => {
    const mcp = await createMcpTools({ config: { mcpServers: { odd: { ...odd, trustAnnotations: true } } } });
    try {
      const tools = createToolRegistry({ tools: mcp.tools });
      const before = Number((await call(tools, 'mcp__odd__pid', {})).data?.text);
      process.kill(before, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
      const during = await call(tools, 'mcp__odd__pid', {});
      expect(during).toMatchObject({ ok: false, code: 'MCP_UNAVAILABLE', retryable: true });
      let after: number | undefined;
      for (let i = 0; i < 100 && after === undefined; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const r = await call(tools, 'mcp__odd__pid', {});
        if (r.ok) after = Number(r.data?.text);
      }
      expect(after).toBeGreaterThan(0);
      expect(after).not.toBe(before);
      expect(mcp.status()[0]!.state).toBe('connected');
    } finally {
      await mcp.close();
    }
  }, 30_000);

  it('close() ends the child processes; a parent killed with SIGKILL leaves no orphan', async () => {
    const mcp = await createMcpTools({ config: { mcpServers: { e: everything } } });
    const pid = mcp.status()[0]!.pid!;
    expect(alive(pid)).toBe(true);
    await mcp.close();
    await waitFor(() => !alive(pid));

    const parent = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'parent.ts'), EVERYTHING], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(Number(JSON.parse(d.toString()).pid))));
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor(() => !alive(childPid));
  }, 30_000);

  it('Streamable HTTP: server-everything on a loopback port, with headers', async () => {
    const port = await freePort();
    const server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      await new Promise<void>((resolve) => server.stderr.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));
      const mcp = await createMcpTools({ config: parseMcpConfig({ mcpServers: { remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { 'x-api-key': '${K}' }, trustAnnotations: true } } }, { K: 'k1' }) });
      try {
        expect(mcp.status()[0]).toMatchObject({ state: 'connected', transport: 'streamable-http' });
        const tools = createToolRegistry({ tools: mcp.tools });
        expect((await call(tools, 'mcp__remote__echo', { message: 'over http' })).data?.text).toBe('Echo: over http');
      } finally {
        await mcp.close();
      }
    } finally {
      server.kill();
    }
  }, 30_000);

  it('a tier-3 MCP tool stops for approval and executes after approval in a fresh runtime and connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minara-mcp-approve-'));
    try {
      const path = join(dir, 'a.db');
      const first = await createMcpTools({ config: { mcpServers: { odd } } });
      const storage = createSqliteStorage({ path, logger: silentLogger });
      const tools = createToolRegistry({ tools: first.tools, storage, approvalKey: new Uint8Array(32).fill(3) });
      const model = createScriptedModel([{ toolCalls: [{ toolName: 'mcp__odd__wipe', input: { target: 'cache' } }] }, { text: 'Waiting for your approval.' }]);
      const r = await recordEvents(createAgentRuntime({ model, tools, storage, logger: silentLogger }).run({ sessionId: 'w', message: 'wipe the cache' }));
      const approvalId = r.ofType('approval-request')[0]!.approvalId;
      await first.close();
      await tools.approvals.decide(approvalId, { approved: true });
      await storage.close();

      const second = await createMcpTools({ config: { mcpServers: { odd } } });
      const storage2 = createSqliteStorage({ path, logger: silentLogger });
      const tools2 = createToolRegistry({ tools: second.tools, storage: storage2, approvalKey: new Uint8Array(32).fill(3) });
      const model2 = createScriptedModel([{ text: 'Wiped.' }]);
      const r2 = await recordEvents(createAgentRuntime({ model: model2, tools: tools2, storage: storage2, logger: silentLogger }).run({ sessionId: 'w', approvals: [{ approvalId, approved: true }] }));
      expect(r2.ofType('tool-result')[0]!.output).toMatchObject({ ok: true, data: { server: 'odd', tool: 'wipe', text: 'wiped cache' } });
      expect((await tools2.approvals.get(approvalId))?.status).toBe('executed');
      await second.close();
      await storage2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('two servers whose names collide after sanitising are refused with a clear error', async () => {
    await expect(createMcpTools({ config: { mcpServers: { 'e-1': everything, e_1: everything } } })).rejects.toThrow(/"mcp__e_1__echo" names a tool of server "e-1" and one of "e_1"; rename a server/);
  });

  it('neither the root entry nor /sqlite reaches the MCP SDK (it is an optional peer dependency)', () => {
    const reached = (entry: string): Set<string> => {
      const seen = new Set<string>();
      const stack = [entry];
      while (stack.length > 0) {
        const file = stack.pop()!;
        if (seen.has(file)) continue;
        seen.add(file);
        const text = readFileSync(file, 'utf8');
        // Static imports and re-exports only: a dynamic import() is loaded when used.
        for (const m of text.matchAll(/^(?:import|export)\s(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
          const spec = m[1]!;
          if (spec.startsWith('.')) stack.push(resolveTs(join(file, '..', spec)));
          else seen.add(spec);
        }
      }
      return seen;
    };
    for (const entry of ['index.ts', 'storage/sqlite/index.ts']) {
      const all = [...reached(join(ROOT, 'src', entry))];
      // The app reads MCP configs (no SDK); the client that needs the SDK is imported dynamically when used.
      expect(all.filter((f) => f.includes('@modelcontextprotocol') || f.endsWith('/src/mcp/client.ts') || f.endsWith('/src/mcp/index.ts')), entry).toEqual([]);
    }
  });
});

function resolveTs(base: string): string {
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) {
    try {
      if (readFileSync(candidate) && candidate.endsWith('.ts')) return candidate;
    } catch {
      // try the next form
    }
  }
  throw new Error(`cannot resolve ${base}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
