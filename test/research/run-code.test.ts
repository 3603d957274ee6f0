/**
 * run_code: the QuickJS WebAssembly sandbox against escape attempts (an infinite loop, memory bombs, constructor
 * and prototype tricks, the host environment, the network, a huge output, deep recursion), each a clear error with
 * the sandbox healthy afterwards; the tool through the registry (CONFIRM_ONCE: asks once per session; autonomous
 * sources need a stored grant), inputs read through read-only tools, a chart artifact; the e2b adapter against a
 * 127.0.0.1 fixture of e2b's API with the key reaching only the API host.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { z } from 'zod';
import {
  type CodeSandbox, createArtifactStore, createE2bSandbox, createQuickJsSandbox, createRunCodeTools, createToolCallContext, createToolRegistry, defineTool,
  parseEnvelope, PermissionTier, type ToolRegistry,
} from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let sandbox: CodeSandbox;
beforeAll(async () => {
  sandbox = createQuickJsSandbox({ timeoutMs: 1_000, memoryBytes: 16 * 1024 * 1024, maxOutputBytes: 100_000 });
  await sandbox.warm();
});
afterAll(() => sandbox.close());

/** After every refused run, a plain run still works: the sandbox (and this process) stayed healthy. */
const healthy = async () => expect(await sandbox.run('return data.a + data.b', { a: 40, b: 2 })).toMatchObject({ ok: true, value: 42 });

describe('QuickJS sandbox', () => {
  it('runs a function body over JSON data and returns JSON, with console output as logs', async () => {
    const r = await sandbox.run('console.log("n =", data.length, { first: data[0] }); return { sum: data.reduce((a, b) => a + b, 0), when: new Date(0).toISOString() }', [1, 2, 3]);
    expect(r).toEqual({ ok: true, value: { sum: 6, when: '1970-01-01T00:00:00.000Z' }, logs: ['n = 3 {"first":1}'], logsCut: false });
    expect(await sandbox.run('return undefined', null)).toMatchObject({ ok: true, value: null });
  });

  it('an infinite loop is stopped at the time limit', async () => {
    expect(await sandbox.run('while (true) {}', null)).toMatchObject({ ok: false, kind: 'timeout' });
    await healthy();
    expect(await sandbox.run('for (;;) { try { while (true) {} } catch (e) {} }', null)).toMatchObject({ ok: false, kind: 'timeout' });
    await healthy();
  });

  it('a memory bomb ends at the memory limit (or, stuck in one native call, by the hard stop)', async () => {
    const small = createQuickJsSandbox({ timeoutMs: 20_000, memoryBytes: 8 * 1024 * 1024 });
    try {
      expect(await small.run('const a = []; for (let i = 0; ; i++) a.push({ i, s: "k" + i });', null)).toMatchObject({ ok: false, kind: 'memory', message: expect.stringContaining('out of memory') });
      expect(await small.run('return 1', null)).toMatchObject({ ok: true, value: 1 });
    } finally {
      await small.close();
    }
    // Large allocations end at the WebAssembly memory's maximum with `memory` too (test/research/sandbox-memory.test.ts
    // covers every bomb shape and the host's RSS).
    for (const bomb of ['const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);', 'const a = []; for (;;) a.push(new Array(1e5).fill(1.5));', 'let s = "x"; for (;;) s += s;']) {
      expect(await sandbox.run(bomb, null)).toMatchObject({ ok: false, kind: 'memory' });
      await healthy();
    }
  });

  it('constructor and prototype tricks find no host: no process, require, globalThis of Node', async () => {
    expect(await sandbox.run('return this.constructor.constructor("return process")()', null)).toMatchObject({ ok: false, kind: 'error', message: expect.stringContaining('TypeError') });
    expect(await sandbox.run('return (function () {}).constructor("return process")()', null)).toMatchObject({ ok: false, kind: 'error', message: expect.stringContaining("'process' is not defined") });
    expect(await sandbox.run('return Function("return this")().process', null)).toMatchObject({ ok: true, value: null });
    expect(await sandbox.run('return Object.getPrototypeOf(async function () {}).constructor("return require")()', null)).toMatchObject({ ok: false, message: expect.stringContaining("'require' is not defined") });
    const names = await sandbox.run('return Object.getOwnPropertyNames(globalThis).filter((n) => /^(process|require|module|exports|Buffer|fetch|setTimeout|setInterval|XMLHttpRequest|WebSocket|std|os|Deno|Bun)$/.test(n))', null);
    expect(names).toEqual({ ok: true, value: [], logs: [], logsCut: false });
    // Prototype pollution stays inside the run: the next run sees clean built-ins.
    expect(await sandbox.run('Object.prototype.polluted = 1; Array.prototype.push = null; return 1', null)).toMatchObject({ ok: true });
    expect(await sandbox.run('return [({}).polluted === undefined, typeof [].push]', null)).toMatchObject({ ok: true, value: [true, 'function'] });
    await healthy();
  });

  it('the host environment is out of reach', async () => {
    process.env.MINARA_SANDBOX_CANARY = 'canary-7f3a';
    try {
      expect(await sandbox.run('return process.env.MINARA_SANDBOX_CANARY', null)).toMatchObject({ ok: false, message: expect.stringContaining("'process' is not defined") });
      const dump = await sandbox.run('const seen = []; for (const k of Object.getOwnPropertyNames(globalThis)) seen.push(k + "=" + String(globalThis[k]).slice(0, 50)); return seen.join("\\n")', null);
      expect(dump.ok).toBe(true);
      expect(JSON.stringify(dump)).not.toContain('canary-7f3a');
    } finally {
      delete process.env.MINARA_SANDBOX_CANARY;
    }
    await healthy();
  });

  it('the network is absent: no fetch, no XMLHttpRequest, no import', async () => {
    expect(await sandbox.run('return fetch("http://127.0.0.1:1/")', null)).toMatchObject({ ok: false, message: expect.stringContaining("'fetch' is not defined") });
    expect(await sandbox.run('return new XMLHttpRequest()', null)).toMatchObject({ ok: false, message: expect.stringContaining("'XMLHttpRequest' is not defined") });
    const dynamicImport = await sandbox.run('return import("node:net")', null);
    expect(dynamicImport.ok).toBe(false);
    // An async body still works: its promise settles through the job queue.
    expect(await sandbox.run('return (async () => (await Promise.resolve(20)) + 1)()', null)).toMatchObject({ ok: true, value: 21 });
    expect(await sandbox.run('return new Promise(() => {})', null)).toMatchObject({ ok: false, message: expect.stringContaining('never settles') });
    await healthy();
  });

  it('a huge result or huge logs are refused or cut, deep recursion ends cleanly', async () => {
    expect(await sandbox.run('return "x".repeat(2e6)', null)).toMatchObject({ ok: false, kind: 'output', message: expect.stringContaining('the limit is 100000') });
    const logs = await sandbox.run('for (let i = 0; i < 20000; i++) console.log("line " + i); return 1', null);
    expect(logs).toMatchObject({ ok: true, value: 1, logsCut: true });
    expect(await sandbox.run('function f() { return f() + 1 } return f()', null)).toMatchObject({ ok: false, kind: 'stack' });
    expect(await sandbox.run('const o = {}; o.self = o; return o', null)).toMatchObject({ ok: false, kind: 'error', message: expect.stringContaining('circular') });
    await healthy();
  });

  it('refuses bad input clearly', async () => {
    await expect(sandbox.run('', null)).rejects.toThrow(/code: expected JavaScript source/);
    const tiny = createQuickJsSandbox({ maxInputBytes: 10 });
    await expect(tiny.run('return 1', 'x'.repeat(100))).rejects.toThrow(/data: 102 characters of JSON; the limit is 10/);
    await tiny.close();
  });
});

describe('run_code tool', () => {
  const candles = Array.from({ length: 300 }, (_, i) => ({ t: i, c: 100 + Math.sin(i / 10) * 5 }));
  const build = () => {
    const storage = createInMemoryStorage();
    const artifacts = createArtifactStore({ storage });
    let registry: ToolRegistry | undefined;
    registry = createToolRegistry({
      storage,
      tools: [
        ...createRunCodeTools({ sandbox, artifacts, registry: () => registry }),
        defineTool({ name: 'get_ohlcv', toolSet: 'read', description: 'candles', inputSchema: z.object({ symbol: z.string() }), permissionTier: PermissionTier.READ_ONLY, sideEffects: false, execute: ({ symbol }) => ({ symbol, candles }) }),
        defineTool({ name: 'send_money', toolSet: 'transfer', description: 'x', inputSchema: z.object({}), permissionTier: PermissionTier.CONFIRM_ONCE, execute: () => 'sent' }),
      ],
    });
    return { registry, artifacts };
  };

  it('asks the user once per session, then runs; an EMA over tool data comes back as JSON and a chart artifact', async () => {
    const { registry } = build();
    const ctx = createToolCallContext({ sessionId: 'rc-1', source: 'user', userId: 'u1' });
    const code = [
      'const closes = data.ohlcv.candles.map((k) => k.c);',
      'const k = 2 / (data.period + 1); let ema = closes[0]; const series = [];',
      'for (const c of closes) { ema = c * k + ema * (1 - k); series.push(ema); }',
      'return { last: Number(series.at(-1).toFixed(4)), chart: { mark: "line", data: { values: series.map((y, x) => ({ x, y })) }, encoding: { x: { field: "x", type: "quantitative" }, y: { field: "y", type: "quantitative" } } } };',
    ].join('\n');
    const args = { code, data: { period: 20 }, inputs: [{ name: 'ohlcv', tool: 'get_ohlcv', args: { symbol: 'BTC' } }], chart: { title: 'BTC EMA(20)' } };
    const first = parseEnvelope(await registry.dispatch('run_code', args, { context: ctx, toolCallId: 'c1' }));
    expect(first).toMatchObject({ ok: false, code: 'APPROVAL_REQUIRED' });
    const approvalId = (first as { approval: { approvalId: string } }).approval.approvalId;
    await registry.approvals.decide(approvalId, { approved: true });
    const ran = parseEnvelope(await registry.dispatch('run_code', args, { context: ctx, toolCallId: 'c1', approvalId })) as { ok: true; data: { result: { last: number }; chart: { uri: string }; engine: string } };
    expect(ran.ok).toBe(true);
    let ema = candles[0]!.c;
    for (const c of candles) ema = c.c * (2 / 21) + ema * (1 - 2 / 21);
    expect(ran.data.result).toEqual({ last: Number(ema.toFixed(4)) });
    expect(ran.data.engine).toBe('quickjs');
    expect(ran.data.chart.uri).toMatch(/^chart:\/\//);
    // Remembered for the session: the next run does not ask.
    const again = parseEnvelope(await registry.dispatch('run_code', { code: 'return 1' }, { context: ctx }));
    expect(again).toMatchObject({ ok: true, data: { result: 1 } });
    // The inner read went through dispatch (audited as a call of its own).
    expect((await registry.queryAudit({ toolName: 'get_ohlcv' })).length).toBeGreaterThan(0);
  });

  it('autonomous sources need a stored grant; only read-only tools can feed inputs; failures are clear errors', async () => {
    const { registry } = build();
    const cron = createToolCallContext({ sessionId: 'rc-cron', source: 'cron' });
    expect(parseEnvelope(await registry.dispatch('run_code', { code: 'return 1' }, { context: cron }))).toMatchObject({ ok: false, code: 'GRANT_REQUIRED' });
    await registry.grants.create({ toolName: 'run_code', sources: ['cron'] });
    expect(parseEnvelope(await registry.dispatch('run_code', { code: 'return 2' }, { context: cron }))).toMatchObject({ ok: true, data: { result: 2 } });
    const refused = parseEnvelope(await registry.dispatch('run_code', { code: 'return 1', inputs: [{ name: 'x', tool: 'send_money' }] }, { context: cron }));
    expect(refused).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT', error: expect.stringContaining('not a read-only data tool') });
    const threw = parseEnvelope(await registry.dispatch('run_code', { code: 'console.log("before"); throw new RangeError("bad period")' }, { context: cron }));
    expect(threw).toMatchObject({ ok: false, code: 'TOOL_EXECUTION_FAILED', retryable: false });
    expect((threw as { error: string }).error).toMatch(/the code threw an error: RangeError: bad period\nlogs before it stopped:\nbefore/);
    const python = parseEnvelope(await registry.dispatch('run_code', { code: 'result = 1', language: 'python' }, { context: cron }));
    expect(python).toMatchObject({ ok: false, code: 'TOOL_INPUT_INVALID' });
  });
});

describe('e2b adapter', () => {
  const KEY = 'e2b_0123456789abcdef0123456789abcdef01234567';
  const TOKEN = 'envd-token-9f8e7d6c5b4a';
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.url === '/api/sandboxes' && req.method === 'POST') {
          if (req.headers['x-api-key'] !== KEY) return res.writeHead(401, { 'content-type': 'application/json' }).end(`{"code":401,"message":"Invalid API key: ${String(req.headers['x-api-key'])}"}`);
          return res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ templateID: 'code-interpreter-v1', sandboxID: 'iabc123def', clientID: '6532622b', envdVersion: '0.2.0', envdAccessToken: TOKEN, domain: null }));
        }
        if (req.url === '/box/iabc123def/execute' && req.method === 'POST') {
          if (req.headers['x-access-token'] !== TOKEN) return res.writeHead(401).end();
          const { code } = JSON.parse(body) as { code: string };
          const lines = code.includes('raise')
            ? [{ type: 'stdout', text: 'working\n', timestamp: 1 }, { type: 'error', name: 'ValueError', value: 'bad window', traceback: '...' }]
            : [{ type: 'stdout', text: 'mean computed\n', timestamp: 1 }, { type: 'stdout', text: '\n__MINARA_RESULT__{"mean": 2.0}\n', timestamp: 2 }, { type: 'number_of_executions', execution_count: 1 }];
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          for (const l of lines) res.write(`${JSON.stringify(l)}\n`);
          return res.end();
        }
        if (req.url === '/api/sandboxes/iabc123def' && req.method === 'DELETE') return res.writeHead(204).end();
        return res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => server.close());

  it('creates a sandbox without internet, runs Python with the data, reads the result, kills the sandbox; the key goes only to the API host', async () => {
    const python = createE2bSandbox({ apiKey: KEY, apiUrl: `${base}/api`, sandboxUrl: (id) => `${base}/box/${id}` });
    const r = await python.run('import statistics\nresult = {"mean": statistics.mean(data)}\nprint("mean computed")', [1, 2, 3]);
    expect(r).toEqual({ ok: true, value: { mean: 2 }, logs: ['mean computed'], logsCut: false });
    const create = seen.find((s) => s.url === '/api/sandboxes')!;
    expect(JSON.parse(create.body)).toMatchObject({ templateID: 'code-interpreter-v1', allow_internet_access: false });
    const exec = seen.find((s) => s.url.endsWith('/execute'))!;
    expect(exec.headers['x-api-key']).toBeUndefined();
    expect(exec.headers['x-access-token']).toBe(TOKEN);
    expect(JSON.parse(exec.body).code).toContain('data = __minara_json.loads("[1,2,3]")');
    expect(seen.some((s) => s.method === 'DELETE' && s.url === '/api/sandboxes/iabc123def' && s.headers['x-api-key'] === KEY)).toBe(true);
    for (const s of seen.filter((x) => !x.url.startsWith('/api/'))) expect(JSON.stringify(s)).not.toContain(KEY);

    const failed = await python.run('raise ValueError("bad window")', null);
    expect(failed).toMatchObject({ ok: false, kind: 'error', message: 'ValueError: bad window', logs: ['working'] });

    const wrong = createE2bSandbox({ apiKey: 'e2b_ffffffffffffffffffffffffffffffffffffffff', apiUrl: `${base}/api`, sandboxUrl: (id) => `${base}/box/${id}` });
    const denied = await wrong.run('result = 1', null).catch((e: Error) => e);
    expect(denied).toBeInstanceOf(Error);
    expect((denied as Error).message).toContain('HTTP 401');
    expect((denied as Error).message).not.toContain('e2b_ffffffff');
    expect(() => createE2bSandbox({ apiKey: KEY, apiUrl: 'http://e2b.example.com' })).toThrow(/must be https/);
  });
});
