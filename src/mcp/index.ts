/**
 * `@minara/agent/mcp`: MCP servers' tools as ordinary registry tools (client), and the agent's registry served
^ * over MCP (`createMcpToolServer`). Needs the optional peer dependency `@modelcontextprotocol/sdk`; the root entry never loads it.
 *
 * @module
 * @example
 * ```ts
 * import { createMcpTools, loadMcpConfigFile } from '@minara/agent/mcp';
 *
 * const mcp = await createMcpTools({ config: await loadMcpConfigFile('workspace/mcp.json') });
 * const tools = createToolRegistry({ storage, tools: mcp.tools });
 * ```
 */
import { assertSupportedNode } from '../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

export {
  createMcpTools,
  type CreateMcpToolsOptions,
  MCP_DEFAULTS,
  type McpCallResult,
  mcpResultData,
  type McpResultData,
  type McpResultFinding,
  type McpServerStatus,
  type McpToolInfo,
  mcpToolTier,
  type McpTools,
} from './client';
export {
  loadMcpConfigFile,
  type McpConfig,
  type McpHttpServerConfig,
  type McpServerConfig,
  type McpStdioServerConfig,
  type McpToolSettings,
  parseMcpConfig,
} from './config';
export { MCP_TOOL_NAME_MAX, mcpToolName, mcpToolSet } from './names';
export {
  createMcpToolServer,
  type CreateMcpToolServerOptions,
  type McpJsonRpcMessage,
  type McpMessageHandler,
  type McpRequestIdentity,
  type McpServedTool,
  type McpServerTransport,
  type McpToolServer,
  type McpToolServerSession,
} from './server';
