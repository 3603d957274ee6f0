/**
 * MCP: the official filesystem server's tools inside the agent's registry, under the same gate.
 *
 *   npx tsx examples/mcp/index.ts
 *
 * Starts `@modelcontextprotocol/server-filesystem` over stdio on a temporary research folder, registers its
 * tools (`mcp__files__*`, tool set `mcp:files`), then runs one offline turn in which the scripted model reads
 * a note through MCP and tries to write one: the read runs (READ_ONLY, the operator trusts this server's
 * annotations), the write stops for approval (the operator set `write_file` to ALWAYS_CONFIRM).
 * Swap `createScriptedModel([...])` for any AI SDK model to go live.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AgentEvent, createAgentRuntime, createToolRegistry, PermissionTier } from '@minara/agent';
import { createMcpTools, parseMcpConfig } from '@minara/agent/mcp';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

export interface McpExampleResult {
  readonly stopReason: string;
  readonly events: readonly AgentEvent[];
  readonly tools: readonly string[];
}

export async function main(options: { log?: (s: string) => void } = {}): Promise<McpExampleResult> {
  const log = options.log ?? ((s: string) => process.stdout.write(s));
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-mcp-example-'));
  mkdirSync(path.join(dir, 'research'));
  writeFileSync(path.join(dir, 'research', 'eth.md'), 'ETH thesis: staking yield plus fee burn; watch L2 fee share.\n');
  const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

  // The same JSON an mcp.json holds; `${RESEARCH_DIR}` is expanded from the environment given.
  const config = parseMcpConfig(
    {
      mcpServers: {
        files: {
          command: process.execPath,
          args: [server, '${RESEARCH_DIR}'],
          trustAnnotations: true,
          tools: { write_file: { tier: PermissionTier.ALWAYS_CONFIRM } },
        },
      },
    },
    { RESEARCH_DIR: path.join(dir, 'research') },
  );
  const mcp = await createMcpTools({ config });
  try {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: mcp.tools });
    const note = path.join(dir, 'research', 'eth.md');
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'mcp__files__read_text_file', input: { path: note } }] },
      { toolCalls: [{ toolName: 'mcp__files__write_file', input: { path: path.join(dir, 'research', 'summary.md'), content: 'ETH: staking + burn.' } }] },
    ]);
    const runtime = createAgentRuntime({ model, tools, storage });
    const events: AgentEvent[] = [];
    let stopReason = '';
    for await (const event of runtime.run({ sessionId: 'mcp-example', message: 'Summarise my ETH research note into summary.md' })) {
      events.push(event);
      if (event.type === 'tool-call') log(`[tool] ${event.toolName}\n`);
      if (event.type === 'tool-result') log(`[result] ${JSON.stringify(event.output).slice(0, 120)}\n`);
      if (event.type === 'approval-request') log(`[approval needed] ${event.toolName}: ${event.reason}\n`);
      if (event.type === 'turn-end') stopReason = event.stopReason;
    }
    log(`[turn ended] ${stopReason}\n`);
    return { stopReason, events, tools: mcp.tools.map((t) => t.name) };
  } finally {
    await mcp.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
