/**
 * The agent's tool registry served over MCP: `createMcpToolServer` is wiring over one state object; what is served
 * and how a call runs are in server-tools.ts, the sessions (stdio, any transport, Streamable HTTP) in
 * server-sessions.ts, the public types in server-types.ts (exported from here).
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MinaraError } from '../errors/minara-error';
import type { ApprovalRecord } from '../storage/types';
import { silentLogger } from '../util/logger';
import { closeSessions, connectTransport, handleHttp } from './server-sessions';
import { served, type McpToolServerState } from './server-tools';
import type { CreateMcpToolServerOptions, McpToolServer } from './server-types';

export type {
  CreateMcpToolServerOptions,
  McpJsonRpcMessage,
  McpMessageHandler,
  McpRequestIdentity,
  McpServedTool,
  McpServerTransport,
  McpToolServer,
  McpToolServerSession,
} from './server-types';

const DEFAULT_HINT = (a: ApprovalRecord) =>
  `Ask the person to approve it (\`minara approvals approve ${a.id}\`, or the Approvals page of the web app); then call this tool again with the same arguments. You cannot approve it yourself.`;

/**
 * Serve a tool registry over MCP (stdio or Streamable HTTP), so Claude Desktop, Claude Code, Cursor or any MCP
 * host can call the agent's tools. Every call runs through the registry's one dispatch path with source
 * `mcp`: validation, the tier gate, hooks, approvals, the emergency stop and audit all apply.
 *
 * - MANUAL_ONLY tools are not listed and cannot be called, and nothing a call runs may rise above ALWAYS_CONFIRM; tools
 *   of other MCP servers (`mcp:*` sets) and the meta-tools (`tool_invoke`, `activate_skills`, `delegate`) are not served.
 * - A host requests approvals but never decides them: hand it a credential without the decide capability (the
 *   gateway's `mcpToken`, or a JWT without `approvals:decide`).
 * - A call that needs approval returns an MCP tool error naming the approval id and how to approve it. When the
 *   host calls again with the same arguments in the same session, the approved request is consumed and the
 *   call runs; while it is still pending the same id is returned (no duplicate requests).
 * - Each session is a registry session (CONFIRM_ONCE approvals are remembered for it) and a conversation
 *   session of its tenant, so the gateway shows its approvals to that tenant only.
 *
 * @example
 * ```ts
 * const server = createMcpToolServer({ tools: app.tools, toolSets: ['read', 'memory'] });
 * await server.connectStdio();
 * ```
 */
export function createMcpToolServer(options: CreateMcpToolServerOptions): McpToolServer {
  const { tools, toolSets, userId: defaultUserId = 'default', agentId, name = 'minara-agent', version = '0.1.0', approvalHint = DEFAULT_HINT, logger = silentLogger, now = () => new Date() } = options;
  if (!tools || typeof tools.dispatchDetailed !== 'function') throw new MinaraError('CONFIG_INVALID', 'createMcpToolServer: "tools" must be a tool registry (createToolRegistry).');
  if (toolSets !== undefined && (!Array.isArray(toolSets) || toolSets.some((s) => typeof s !== 'string' || s === ''))) {
    throw new MinaraError('CONFIG_INVALID', 'createMcpToolServer: "toolSets" must be an array of tool-set names.');
  }
  const maxSessions = options.maxSessions ?? 256;
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60_000;
  for (const [field, value] of [['maxSessions', maxSessions], ['sessionIdleMs', sessionIdleMs]] as const) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new MinaraError('CONFIG_INVALID', `createMcpToolServer: "${field}" must be a positive integer, got ${String(value)}.`);
  }
  const s: McpToolServerState = {
    tools, toolSets, defaultUserId, agentId, name, version, approvalHint, logger, now, maxSessions, sessionIdleMs,
    log: { module: 'mcp-server' },
    schemas: new WeakMap(),
    warned: new Set(),
    stdioSessions: new Set(),
    http: new Map(),
    sweeper: undefined,
  };
  return {
    listTools: () => served(s).map((x) => x.tool),
    connect: (transport, identity) => connectTransport(s, transport, identity),
    connectStdio: async (streams = {}) => connectTransport(s, new StdioServerTransport(streams.stdin as never, streams.stdout as never)),
    handleHttp: (request, identity) => handleHttp(s, request, identity),
    sessionCount: () => s.http.size,
    close: () => closeSessions(s),
  };
}
