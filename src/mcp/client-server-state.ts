/**
 * What the MCP client keeps per server (see client-server.ts): its policy, the live connection and what the
 * server last listed. One typed object the server's named functions take first.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolEntry } from '../tools/types';
import type { Logger } from '../util/logger';
import type { McpServerConfig } from './config';
import type { CreateMcpToolsOptions, McpServerStatus } from './client-types';

/** An SDK client connected to the server, over the transport that worked. */
export interface McpConnection {
  client: Client;
  transport: Transport;
  kind: McpServerStatus['transport'];
}

/** What every server of one `createMcpTools` shares. */
export interface McpServerDeps {
  logger: Logger;
  onFinding: CreateMcpToolsOptions['onFinding'];
  clientName: string;
}

/** One server's policy and state. */
export interface McpServerState {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly deps: McpServerDeps;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly maxResultBytes: number;
  /** The registry tool set of its tools (`mcp:<server>`). */
  readonly toolSet: string;
  /** The fields every log line of this server carries. */
  readonly log: { readonly module: 'mcp'; readonly server: string };
  /** The server's tool names it still lists (a tool it dropped fails `checkFn`, so `TOOL_UNAVAILABLE`). */
  readonly live: Set<string>;
  conn: McpConnection | undefined;
  state: McpServerStatus['state'];
  lastError: string | undefined;
  listed: McpTool[];
  skipped: Array<{ tool: string; reason: string }>;
  /** The server announced `tools/list_changed` since the last listing. */
  toolListChanged: boolean;
  closed: boolean;
  /** Restarts since the last good connection (picks the backoff). */
  restarts: number;
  restartTimer: NodeJS.Timeout | undefined;
  /** The registry tools of the last listing. */
  entries: ToolEntry[];
  /** The one start attempt (concurrent callers share it). */
  starting: Promise<void> | undefined;
}

/** An error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
