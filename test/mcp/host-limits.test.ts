/**
 * What an MCP host can reach (issue 33, attacks 3 and 4), driven by the official MCP SDK client over Streamable HTTP
 * on a real gateway: nothing the server does not list (not through `tool_invoke`, not through a handler that
 * dispatches, not through a tier raised by `tierFor`), and a stop that halts only the user the host acts for.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime, createSkillMetaTools, createSkillRegistry, createSkillSession, createToolCallContext, createToolRegistry, defineTool, parseEnvelope, PermissionTier, silentLogger } from '@minara/agent';
import { createFinancePack, createSimulatedMarket } from '@minara/agent/finance';
import { createGateway, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createMcpToolServer, type McpToolServer } from '@minara/agent/mcp';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const TOKEN = 'person-token-0123456789abcdef';
const MCP_TOKEN = 'mcp-host-token-0123456789abcdef';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text ?? '').join('\n');

let served: ServedGateway | undefined;
let server: McpToolServer | undefined;
afterEach(async () => {
  await server?.close();
  await served?.close();
  served = undefined;
  server = undefined;
});

async function setup() {
  const storage = createInMemoryStorage();
  const pack = createFinancePack({ storage, market: createSimulatedMarket({ seed: 7 }) });
  const relayed: string[] = [];
  const registry = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage }));
  // A served READ_ONLY tool whose handler dispatches another tool with the caller's context.
  registry.register(
    defineTool({
      name: 'relay', toolSet: 'read', description: 'Runs another tool by name', permissionTier: PermissionTier.READ_ONLY,
      inputSchema: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }),
      execute: async ({ name, args }, ctx) => {
        relayed.push(name);
        return parseEnvelope(await registry.dispatch(name, args, { context: ctx.call }));
      },
    }),
  );
  const skills = createSkillRegistry({ skills: pack.skills, tools: registry, env: {} });
  registry.register(createSkillMetaTools({ skills, session: createSkillSession({ registry: skills }) }).all);
  const runtime = createAgentRuntime({ model: createScriptedModel([]), tools: registry, storage, logger: silentLogger });
  server = createMcpToolServer({ tools: registry });
  const gateway = createGateway({ runtime, storage, tools: registry, logger: silentLogger, mcp: server, authToken: TOKEN, mcpToken: MCP_TOKEN });
  served = await serveGateway({ gateway, port: 0 });
  const client = new Client({ name: 'mcp-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${MCP_TOKEN}` } } }));
  return { storage, registry, client, relayed };
}

describe('attack 3: nothing served over MCP reaches a tool the server does not list', () => {
  it('the meta-tools are not served; MANUAL_ONLY tools cannot be reached by name, through tool_invoke, a relaying handler or a raised tier', async () => {
    const { registry, client, relayed } = await setup();
    expect(registry.has('tool_invoke')).toBe(true);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const hidden of ['tool_invoke', 'activate_skills', 'delegate', 'withdraw_funds', 'transfer_token']) expect(names, hidden).not.toContain(hidden);
    expect(names).toContain('relay');
    expect(names).toContain('emergency_stop');
    await expect(client.callTool({ name: 'withdraw_funds', arguments: { asset: 'USDC', amount: 5, destination: 'attacker' } })).rejects.toThrow(/Unknown tool/);
    await expect(client.callTool({ name: 'tool_invoke', arguments: { name: 'withdraw_funds', args: { asset: 'USDC', amount: 5, destination: 'attacker', confirm: true } } })).rejects.toThrow(/Unknown tool/);
    // A served handler that dispatches with the host's context: the context bounds it.
    const viaRelay = await client.callTool({ name: 'relay', arguments: { name: 'withdraw_funds', args: { asset: 'USDC', amount: 5, destination: 'attacker', confirm: true, intent: 'withdraw 5 USDC' } } });
    expect(relayed).toEqual(['withdraw_funds']);
    expect(text(viaRelay)).toMatch(/RISK_CEILING_EXCEEDED/);
    // The stop's release is tier 4 only through tierFor: refused, not queued for the person.
    const release = await client.callTool({ name: 'emergency_stop', arguments: { action: 'release' } });
    expect(release.isError).toBe(true);
    expect(text(release)).toMatch(/RISK_CEILING_EXCEEDED/);
    // Nothing the host authored waits in the person's queue.
    expect(await registry.approvals.list({ status: 'pending' })).toEqual([]);
    await client.close();
  });
});

describe('attack 4: a user stop halts that user only; the global stop is the operator’s', () => {
  it("an MCP host engaging the stop halts the default user's trading, not bob's; the tool never releases the global stop", async () => {
    const { registry, client } = await setup();
    const buy = (userId: string) =>
      registry.dispatchDetailed('buy_token', { symbol: 'ETH', amountUsd: 10, intent: 'buy 10 USD of ETH', confirm: true }, {
        context: createToolCallContext({ sessionId: `s-${userId}`, source: 'user', userId }),
      });
    const engaged = await client.callTool({ name: 'emergency_stop', arguments: { action: 'engage', reason: 'the host says so' } });
    expect(engaged.isError).toBeFalsy();
    expect(await registry.emergencyStop.status()).toEqual({ engaged: false });
    expect(await registry.emergencyStop.status({ userId: 'default' })).toMatchObject({ engaged: true, scope: 'user', userId: 'default', reason: 'the host says so' });
    expect((await buy('default')).envelope).toMatchObject({ ok: false, code: 'EMERGENCY_STOP' });
    // Another tenant keeps trading (its first buy in a session asks for confirmation: not blocked by the stop).
    expect(JSON.stringify((await buy('bob')).envelope)).not.toContain('EMERGENCY_STOP');
    // The operator's global stop halts everyone, and the user's own release (a person's approval) does not lift it.
    await registry.emergencyStop.engage('operator drill');
    expect((await buy('bob')).envelope).toMatchObject({ ok: false, code: 'EMERGENCY_STOP' });
    const ctx = createToolCallContext({ sessionId: 's-bob-release', source: 'user', userId: 'bob' });
    const first = await registry.dispatchDetailed('emergency_stop', { action: 'release' }, { context: ctx, toolCallId: 'rel-1' });
    expect(first.decision).toBe('approval_required');
    await registry.approvals.decide(first.approval!.id, { approved: true });
    const second = await registry.dispatchDetailed('emergency_stop', { action: 'release' }, { context: ctx, toolCallId: 'rel-1', approvalId: first.approval!.id });
    expect(second.envelope).toMatchObject({ ok: false, code: 'EMERGENCY_STOP' });
    expect(await registry.emergencyStop.status()).toMatchObject({ engaged: true, scope: 'global' });
    await registry.emergencyStop.release();
    expect(JSON.stringify((await buy('bob')).envelope)).not.toContain('EMERGENCY_STOP');
    // The default user's own stop outlives the global release: only that user (a person) releases it.
    expect((await buy('default')).envelope).toMatchObject({ ok: false, code: 'EMERGENCY_STOP' });
    await client.close();
  });
});
