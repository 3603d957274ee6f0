/**
 * The MCP client: `createMcpTools` connects to the configured servers (one `createServer` each, client-server.ts)
 * and gathers their tools as registry tools (client-tool.ts). Its public types live in client-types.ts, the tier
 * and result helpers in client-result.ts; all are exported from here.
 */
import { MinaraError } from '../errors/minara-error';
import type { ToolEntry } from '../tools/types';
import { type Logger, silentLogger } from '../util/logger';
import { createServer, type McpServerHandle } from './client-server';
import type { CreateMcpToolsOptions, McpTools } from './client-types';

export { MCP_DEFAULTS, type CreateMcpToolsOptions, type McpResultFinding, type McpServerStatus, type McpTools } from './client-types';
export { type McpCallResult, mcpResultData, type McpResultData, type McpToolInfo, mcpToolTier } from './client-result';

/**
 * Connect to MCP servers with the official `@modelcontextprotocol/sdk` client (stdio and Streamable HTTP,
 * falling back to SSE for servers that only have it) and turn their tools into ordinary registry tools, so
 * every call goes through the registry's one dispatch path: validation, tier gate, hooks, approvals, audit,
 * emergency stop and timeouts. Servers connect in parallel; one that fails or times out is reported in
 * `status()` and logged, and the rest still load.
 *
 * Names are `mcp__<server>__<tool>` and each server's tools form the tool set `mcp:<server>`. A stdio server
 * that exits is restarted with backoff; meanwhile its calls fail with retryable `MCP_UNAVAILABLE`. Sampling
 * and other server-to-client requests are not offered (the client declares no capabilities), so a server
 * that asks gets a clean "method not found".
 *
 * @example
 * ```ts
 * const mcp = await createMcpTools({ config: parseMcpConfig(JSON.parse(readFileSync('mcp.json', 'utf8'))) });
 * const tools = createToolRegistry({ storage, tools: [...myTools, ...mcp.tools] });
 * // …
 * await mcp.close();
 * ```
 */
export async function createMcpTools(options: CreateMcpToolsOptions): Promise<McpTools> {
  const { config, logger = silentLogger, onFinding, clientName = 'minara-agent' } = options;
  if (typeof config !== 'object' || config === null || typeof config.mcpServers !== 'object') {
    throw new MinaraError('CONFIG_INVALID', 'createMcpTools: config must be { mcpServers: { … } } (see parseMcpConfig)');
  }
  const servers = Object.entries(config.mcpServers).map(([name, server]) => createServer(name, server, { logger, onFinding, clientName }));
  await Promise.all(servers.filter((s) => !s.lazy).map((s) => s.start()));
  const names = new Map<string, string>();
  const tools = await gatherTools(servers, names);
  return {
    tools,
    status: () => servers.map((s) => s.status()),
    applyToolListChanges: () => applyToolListChanges(servers, names, logger),
    async close() {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

/** The started servers' tools, each name recorded with its server; two servers naming one tool close all and throw. */
async function gatherTools(servers: readonly McpServerHandle[], names: Map<string, string>): Promise<ToolEntry[]> {
  const tools: ToolEntry[] = [];
  for (const s of servers) {
    for (const entry of s.entries()) {
      const other = names.get(entry.name);
      if (other !== undefined) {
        await Promise.all(servers.map((x) => x.close()));
        throw new MinaraError('CONFIG_INVALID', `createMcpTools: "${entry.name}" names a tool of server "${other}" and one of "${s.name}"; rename a server`);
      }
      names.set(entry.name, s.name);
      tools.push(entry);
    }
  }
  return tools;
}

/** The turn boundary (see `McpTools.applyToolListChanges`): start idle servers, re-list changed ones, the new tools. */
async function applyToolListChanges(servers: readonly McpServerHandle[], names: Map<string, string>, logger: Logger): Promise<ToolEntry[]> {
  const idle = servers.filter((s) => s.status().state === 'idle');
  await Promise.all(idle.map((s) => s.start()));
  const added: ToolEntry[] = [];
  for (const s of servers) {
    for (const entry of idle.includes(s) ? s.entries() : await s.relist()) {
      const owner = names.get(entry.name);
      if (owner === s.name) continue;
      if (owner !== undefined) {
        logger.warn(`mcp: skipping "${entry.name}" of server "${s.name}": the name is taken by server "${owner}"`, { module: 'mcp', server: s.name });
        continue;
      }
      names.set(entry.name, s.name);
      added.push(entry);
    }
  }
  return added;
}
