/**
 * The agent's registry served over MCP (`createMcpToolServer`, `minara mcp serve`), driven by the official
 * SDK client: in memory, over stdio from the real CLI process, and over Streamable HTTP through the gateway.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';
import { createAgentRuntime, createToolCallContext, createToolRegistry, defineTool, MinaraError, PermissionTier, silentLogger, type ToolRegistry } from '@minara/agent';
import { createGateway, DECIDE_SCOPE, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createMcpToolServer, type McpServerTransport, type McpToolServer } from '@minara/agent/mcp';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { afterAll, afterEach, describe, expect, expectTypeOf, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: Record<string, unknown> };
const text = (r: unknown) => (r as Result).content.map((c) => c.text ?? '').join('\n');
const approvalIdOf = (r: unknown) => /Approval id: (\S+?)\./.exec(text(r))?.[1] ?? /approval (\S+) \(/.exec(text(r))?.[1];

function fixture() {
  const runs: string[] = [];
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({
        name: 'get_quote', toolSet: 'read', description: 'A quote', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string().describe('Ticker'), venue: z.string().nullish() }),
        execute: ({ symbol }) => ({ symbol, priceUsd: 100 }),
      }),
      defineTool({
        name: 'save_note', toolSet: 'notes', description: 'Save a note', permissionTier: PermissionTier.CONFIRM_ONCE,
        inputSchema: z.object({ text: z.string().min(1) }),
        execute: ({ text: t }) => {
          runs.push(`save:${t}`);
          return { saved: t };
        },
      }),
      defineTool({
        name: 'rebalance', toolSet: 'notes', description: 'Rebalance', permissionTier: PermissionTier.ALWAYS_CONFIRM,
        inputSchema: z.object({ to: z.string() }),
        execute: ({ to }) => {
          runs.push(`rebalance:${to}`);
          return 'done';
        },
      }),
      defineTool({
        name: 'wire_out', toolSet: 'notes', description: 'Send money', permissionTier: PermissionTier.MANUAL_ONLY,
        inputSchema: z.object({ to: z.string() }),
        execute: () => runs.push('wire'),
      }),
      defineTool({
        name: 'mcp__other__thing', toolSet: 'mcp:other', description: 'Another server', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({}),
        execute: () => 'x',
      }),
    ],
  });
  return { tools, storage, runs };
}

describe('McpServerTransport (our own type at the boundary, so the package types need no MCP SDK)', () => {
  it('accepts every SDK server transport (and the SDK Transport type itself)', () => {
    expectTypeOf<InMemoryTransport>().toExtend<McpServerTransport>();
    expectTypeOf<StdioServerTransport>().toExtend<McpServerTransport>();
    expectTypeOf<WebStandardStreamableHTTPServerTransport>().toExtend<McpServerTransport>();
    expectTypeOf<Transport>().toExtend<McpServerTransport>();
  });
});

async function inMemoryClient(server: McpToolServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('createMcpToolServer', () => {
  const open: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c();
  });

  it('lists visible tools with JSON Schema and annotations; MANUAL_ONLY and other MCP servers’ tools are not served', async () => {
    const { tools } = fixture();
    const server = createMcpToolServer({ tools });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(['get_quote', 'save_note', 'rebalance']);
    const quote = listed[0]!;
    expect(quote.inputSchema).toMatchObject({ type: 'object', properties: { symbol: { type: 'string', description: 'Ticker' } }, required: ['symbol'] });
    expect(quote.inputSchema).not.toHaveProperty('$schema');
    expect(quote.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: true });
    expect(listed[1]!.description).toContain('first call in a session needs');
    expect(listed[2]!.annotations?.destructiveHint).toBe(true);
    // The list is byte-stable between calls (hosts cache it; prompt caches depend on it).
    expect(JSON.stringify((await client.listTools()).tools)).toBe(JSON.stringify(listed));
    // Only the named tool sets.
    const narrow = createMcpToolServer({ tools, toolSets: ['read'] });
    expect(narrow.listTools().map((t) => t.name)).toEqual(['get_quote']);
  });

  it('runs a READ_ONLY call through dispatch with source mcp, audited, with structured content', async () => {
    const { tools } = fixture();
    const server = createMcpToolServer({ tools, userId: 'alice' });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    const r = (await client.callTool({ name: 'get_quote', arguments: { symbol: 'BTC', venue: null } })) as Result;
    expect(r.isError).toBeUndefined();
    expect(JSON.parse(text(r))).toEqual({ symbol: 'BTC', priceUsd: 100 });
    expect(r.structuredContent).toEqual({ symbol: 'BTC', priceUsd: 100 });
    const [row] = await tools.queryAudit({ toolName: 'get_quote' });
    expect(row).toMatchObject({ source: 'mcp', decision: 'allowed' });
    // Bad input is a tool error naming the field (the model can fix it), not a protocol failure.
    const bad = (await client.callTool({ name: 'get_quote', arguments: { symbol: 7 } })) as Result;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/TOOL_INPUT_INVALID: .*symbol/);
  });

  it('a CONFIRM_ONCE call waits for approval, names the id and how to approve, runs on the retry, then is remembered for the session', async () => {
    const { tools, runs } = fixture();
    const server = createMcpToolServer({ tools });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    const first = await client.callTool({ name: 'save_note', arguments: { text: 'hi' } });
    expect((first as Result).isError).toBe(true);
    expect(text(first)).toContain('APPROVAL_REQUIRED');
    expect(text(first)).toContain('minara approvals approve');
    const id = approvalIdOf(first)!;
    expect(id).toBeTruthy();
    // Retrying before anyone decided returns the same request: no duplicates pile up.
    const again = await client.callTool({ name: 'save_note', arguments: { text: 'hi' } });
    expect(text(again)).toContain(`Still waiting for approval ${id}`);
    expect(await tools.approvals.list({ status: 'pending' })).toHaveLength(1);
    expect(runs).toEqual([]);
    await tools.approvals.decide(id, { approved: true });
    const ran = await client.callTool({ name: 'save_note', arguments: { text: 'hi' } });
    expect((ran as Result).isError).toBeUndefined();
    expect(runs).toEqual(['save:hi']);
    expect((await tools.approvals.get(id))?.status).toBe('executed');
    const later = await client.callTool({ name: 'save_note', arguments: { text: 'second' } });
    expect((later as Result).isError).toBeUndefined();
    expect(runs).toEqual(['save:hi', 'save:second']);
    // A new MCP session starts without that grant.
    const other = await inMemoryClient(server);
    open.push(() => other.close());
    expect(text(await other.callTool({ name: 'save_note', arguments: { text: 'x' } }))).toContain('APPROVAL_REQUIRED');
  });

  it('an ALWAYS_CONFIRM call needs an approval each time; a denial is final for that request; an approval binds the exact arguments', async () => {
    const { tools, runs } = fixture();
    const server = createMcpToolServer({ tools });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    const a = approvalIdOf(await client.callTool({ name: 'rebalance', arguments: { to: '60/40' } }))!;
    await tools.approvals.decide(a, { approved: true });
    // Different arguments: the approval for 60/40 does not cover 100/0.
    const other = await client.callTool({ name: 'rebalance', arguments: { to: '100/0' } });
    expect(text(other)).toContain('APPROVAL_REQUIRED');
    expect(runs).toEqual([]);
    expect((await client.callTool({ name: 'rebalance', arguments: { to: '60/40' } }) as Result).isError).toBeUndefined();
    expect(runs).toEqual(['rebalance:60/40']);
    // The next identical call asks again.
    const b = approvalIdOf(await client.callTool({ name: 'rebalance', arguments: { to: '60/40' } }))!;
    expect(b).not.toBe(a);
    await tools.approvals.decide(b, { approved: false, reason: 'no' });
    const denied = await client.callTool({ name: 'rebalance', arguments: { to: '60/40' } });
    expect(text(denied)).toContain('APPROVAL_REQUIRED');
    expect(runs).toEqual(['rebalance:60/40']);
  });

  it('refuses MANUAL_ONLY and unlisted tools by name; the emergency stop blocks writes; approvals from another session do not apply', async () => {
    const { tools, runs } = fixture();
    const server = createMcpToolServer({ tools, toolSets: ['read', 'notes'] });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    await expect(client.callTool({ name: 'wire_out', arguments: { to: 'x' } })).rejects.toThrow(/Unknown tool: wire_out/);
    await expect(client.callTool({ name: 'mcp__other__thing', arguments: {} })).rejects.toThrow(/Unknown tool/);
    expect(runs).toEqual([]);
    // An approval of the same call made in another session (here: a REPL session) is not consumed over MCP.
    const repl = await tools.dispatchDetailed('save_note', { text: 'n' }, { context: createToolCallContext({ sessionId: 'repl-1', source: 'user' }) });
    await tools.approvals.decide(repl.approval!.id, { approved: true });
    expect(text(await client.callTool({ name: 'save_note', arguments: { text: 'n' } }))).toContain('APPROVAL_REQUIRED');
    await tools.emergencyStop.engage('test');
    const stopped = await client.callTool({ name: 'save_note', arguments: { text: 'm' } });
    expect(text(stopped)).toContain('EMERGENCY_STOP');
    expect(text(await client.callTool({ name: 'get_quote', arguments: { symbol: 'ETH' } }))).toContain('priceUsd');
    expect(runs).toEqual([]);
  });

  it('a fund-moving tool over MCP previews without confirm and waits for approval with it: the gate is the registry’s', async () => {
    const fills: string[] = [];
    const tools = createToolRegistry({
      tools: [
        defineTool({
          name: 'buy', toolSet: 'trade', description: 'Buy', permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
          inputSchema: z.object({ symbol: z.string(), amountUsd: z.number().positive(), confirm: z.boolean().nullish() }),
          orderFacts: ({ symbol, amountUsd }) => ({ notionalUsd: amountUsd, asset: symbol, side: 'buy' }),
          preview: ({ symbol, amountUsd }) => ({ preview: true, symbol, amountUsd }),
          execute: ({ symbol, amountUsd }) => fills.push(`${symbol}:${amountUsd}`),
        }),
      ],
    });
    const server = createMcpToolServer({ tools });
    const client = await inMemoryClient(server);
    open.push(() => client.close(), () => server.close());
    expect((await client.listTools()).tools[0]!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(JSON.parse(text(await client.callTool({ name: 'buy', arguments: { symbol: 'ETH', amountUsd: 50 } })))).toMatchObject({ preview: true });
    const ask = await client.callTool({ name: 'buy', arguments: { symbol: 'ETH', amountUsd: 50, confirm: true } });
    expect(text(ask)).toContain('APPROVAL_REQUIRED');
    expect(fills).toEqual([]);
    const rows = await tools.queryAudit({ toolName: 'buy' });
    expect(rows.map((r) => [r.source, r.mode, r.decision])).toEqual([['mcp', 'execute', 'approval_required'], ['mcp', 'preview', 'allowed']]);
  });

  it('checks its options', () => {
    const { tools } = fixture();
    expect(() => createMcpToolServer({ tools: {} as ToolRegistry })).toThrow(MinaraError);
    expect(() => createMcpToolServer({ tools, toolSets: [''] })).toThrow(/toolSets/);
    expect(() => createMcpToolServer({ tools, maxSessions: 0 })).toThrow(/maxSessions/);
  });
});

describe('MCP over Streamable HTTP at the gateway /mcp route', () => {
  let served: ServedGateway | undefined;
  let server: McpToolServer | undefined;
  afterAll(async () => {
    await server?.close();
    await served?.close();
  });

  it('needs the gateway token, binds a session to its tenant, refuses a foreign Origin, and runs calls', async () => {
    const { tools, storage, runs } = fixture();
    const runtime = createAgentRuntime({ model: createScriptedModel([]), tools, storage, logger: silentLogger });
    server = createMcpToolServer({ tools });
    // The MCP host holds alice's host token (request only); alice herself holds a token with the decide scope.
    const tokens: Record<string, { userId: string; scopes?: string[] }> = { 'token-alice': { userId: 'alice' }, 'token-bob': { userId: 'bob' }, 'token-alice-person': { userId: 'alice', scopes: [DECIDE_SCOPE] } };
    const gateway = createGateway({
      runtime, storage, tools, logger: silentLogger, mcp: server,
      authenticate: (request) => {
        const t = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
        return t && tokens[t] ? tokens[t] : null;
      },
    });
    served = await serveGateway({ gateway, port: 0 });
    const url = new URL(`${served.url}/mcp`);
    const connect = async (token?: string) => {
      const client = new Client({ name: 'http-host', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} } });
      await client.connect(transport);
      return { client, transport };
    };
    await expect(connect()).rejects.toThrow(/401|Unauthorized/i);
    const alice = await connect('token-alice');
    expect((await alice.client.listTools()).tools.map((t) => t.name)).toEqual(['get_quote', 'save_note', 'rebalance']);
    const pending = await alice.client.callTool({ name: 'save_note', arguments: { text: 'via http' } });
    const id = approvalIdOf(pending)!;
    // The approval belongs to alice's MCP session: bob cannot see it on the gateway; alice can, and deciding it does not start a turn.
    const list = async (token: string) => (await (await fetch(`${served!.url}/v1/approvals`, { headers: { authorization: `Bearer ${token}` } })).json()) as { approvals: Array<{ id: string; source: string }> };
    expect((await list('token-bob')).approvals).toEqual([]);
    expect((await list('token-alice')).approvals.map((a) => [a.id, a.source])).toEqual([[id, 'mcp']]);
    // The host cannot approve its own call with the token it holds; alice can.
    const byHost = await fetch(`${served.url}/v1/approvals/${id}`, { method: 'POST', headers: { authorization: 'Bearer token-alice', 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
    expect(byHost.status).toBe(403);
    expect(text(await alice.client.callTool({ name: 'save_note', arguments: { text: 'via http' } }))).toContain('Still waiting');
    const decided = await fetch(`${served.url}/v1/approvals/${id}`, { method: 'POST', headers: { authorization: 'Bearer token-alice-person', 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
    expect(decided.status).toBe(200);
    expect(((await decided.json()) as { turn: unknown }).turn).toBeNull();
    expect(text(await alice.client.callTool({ name: 'save_note', arguments: { text: 'via http' } }))).toContain('via http');
    expect(runs).toEqual(['save:via http']);
    // Bob presenting alice's session id gets 404, as if it did not exist.
    const sid = alice.transport.sessionId!;
    const hijack = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer token-bob', 'mcp-session-id': sid, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'save_note', arguments: { text: 'bob' } } }),
    });
    expect(hijack.status).toBe(404);
    // A web page on another origin cannot drive it (DNS rebinding), even with a token.
    const foreign = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer token-alice', origin: 'http://evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(foreign.status).toBe(403);
    expect(runs).toEqual(['save:via http']);
    expect(server.sessionCount()).toBe(1);
    await alice.transport.terminateSession();
    expect(server.sessionCount()).toBe(0);
    await alice.client.close();
  });
});

describe('minara mcp serve (stdio, the real CLI process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'minara-mcp-serve-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MINARA_|ANTHROPIC_|OPENAI_|GATEWAY_)/.test(k)) out[k] = v;
    return { ...out, NO_COLOR: '1' };
  };

  it('an MCP host lists and calls the agent’s tools; a tier-2 call runs after `minara approvals approve` in another process', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'cli/index.ts', 'mcp', 'serve', '--data-dir', dir, '--tool-sets', 'read,file'],
      cwd: ROOT,
      env: env(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop-host', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('get_price');
      expect(names).toContain('write_file');
      expect(names).not.toContain('transfer_token');
      expect(names).not.toContain('buy_token');
      const price = await client.callTool({ name: 'get_price', arguments: { symbol: 'BTC' } });
      expect((price as Result).isError).toBeUndefined();
      expect(text(price)).toMatch(/BTC/);
      const write = await client.callTool({ name: 'write_file', arguments: { path: 'notes/mcp.txt', content: 'from an MCP host' } });
      const id = approvalIdOf(write)!;
      expect(id).toBeTruthy();
      const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args, '--data-dir', dir], { cwd: ROOT, env: env(), encoding: 'utf8', timeout: 30_000 });
      const listed = run(['approvals']);
      expect(listed.status).toBe(0);
      expect(listed.stdout).toContain(id);
      expect(listed.stdout).toContain('from mcp');
      const approve = run(['approvals', 'approve', id]);
      expect(approve.stderr).toBe('');
      expect(approve.status).toBe(0);
      expect(approve.stdout).toContain(`Approved write_file (${id})`);
      expect(run(['approvals', 'approve', id]).stderr).toContain('already approved');
      const done = await client.callTool({ name: 'write_file', arguments: { path: 'notes/mcp.txt', content: 'from an MCP host' } });
      expect((done as Result).isError).toBeUndefined();
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/mcp.txt' } });
      expect(text(read)).toContain('from an MCP host');
    } finally {
      await client.close();
    }
  }, 60_000);

  it('--http serves /mcp on the gateway behind GATEWAY_AUTH_TOKEN, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'mcp', 'serve', '--http', '--port', '0', '--data-dir', dir], {
      cwd: ROOT,
      env: { ...env(), GATEWAY_AUTH_TOKEN: 'a-long-enough-test-token' },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 30_000;
      while (!/at (http:\/\/\S+\/mcp)/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const url = /at (http:\/\/\S+\/mcp)/.exec(out)![1]!;
      expect(out).toContain('(bearer token required)');
      expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401);
      const client = new Client({ name: 'http-host', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer a-long-enough-test-token' } } }));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('get_price');
      expect(names).not.toContain('withdraw_funds');
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000);

  it('rejects bad command lines with exit code 2', () => {
    const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], { cwd: ROOT, env: env(), encoding: 'utf8', timeout: 30_000 });
    expect(run(['mcp', 'serve', '--port', '1']).stderr).toContain('--port and --host need --http');
    expect(run(['mcp', 'frob']).status).toBe(2);
    expect(run(['approvals', 'approve']).status).toBe(2);
    expect(run(['approvals', 'list', '--reason', 'x']).stderr).toContain('--reason only applies');
    expect(run(['serve', '--tool-sets', 'read']).stderr).toContain('only applies to "minara mcp"');
    const unknown = run(['mcp', 'serve', '--tool-sets', 'nope', '--data-dir', dir]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('unknown tool set(s) nope');
  }, 60_000);
});
