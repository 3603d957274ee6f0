/**
 * The public types of the MCP tool server (`createMcpToolServer` in server.ts, which re-exports them). Declared
 * without the MCP SDK's types, so a consumer without the optional SDK still type-checks.
 */
import type { ApprovalRecord } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';

/** Options of {@link createMcpToolServer}. */
export interface CreateMcpToolServerOptions {
  /** The registry whose tools are served. Every call runs through its `dispatch` with source `mcp`. */
  readonly tools: ToolRegistry;
  /** Serve only these tool sets (with their `includes`). @default every visible tool */
  readonly toolSets?: readonly string[] | undefined;
  /** The tenant of stdio sessions (and of HTTP requests that name none). @default 'default' */
  readonly userId?: string | undefined;
  readonly agentId?: string | undefined;
  /** Server name announced to hosts. @default 'minara-agent' */
  readonly name?: string | undefined;
  /** Server version announced to hosts. @default '0.1.0' */
  readonly version?: string | undefined;
  /**
   * How a person approves a call, appended to the approval error the host sees.
   * @default `minara approvals approve <id>` or the gateway route
   */
  readonly approvalHint?: ((approval: ApprovalRecord) => string) | undefined;
  /** Most concurrent HTTP sessions; an `initialize` beyond it gets 503. @default 256 */
  readonly maxSessions?: number | undefined;
  /** An HTTP session with no request for this long is closed. @default 1800000 (30 minutes) */
  readonly sessionIdleMs?: number | undefined;
  readonly logger?: Logger | undefined;
  readonly now?: (() => Date) | undefined;
}

/** A tool as {@link McpToolServer.listTools} serves it. */
export interface McpServedTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the input (`type: "object"`). */
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly annotations: { readonly readOnlyHint: boolean; readonly destructiveHint: boolean; readonly openWorldHint: boolean };
}

/** Who an HTTP request is (the gateway's authenticated tenant). */
export interface McpRequestIdentity {
  readonly userId: string;
}

/** One connected MCP session. */
export interface McpToolServerSession {
  /** The registry session id its calls run in (approvals and CONFIRM_ONCE grants are per session). */
  readonly sessionId: string;
  readonly userId: string;
  close(): Promise<void>;
}

/** A JSON-RPC 2.0 message as an MCP transport carries it (request, notification, result or error). */
export interface McpJsonRpcMessage {
  readonly jsonrpc: '2.0';
  readonly [field: string]: unknown;
}

/**
 * The receive callback of an {@link McpServerTransport}. Declared as a method type (compared bivariantly), so the
 * SDK's generic `onmessage` (`<T extends JSONRPCMessage>(message: T, extra?) => void`) fits it.
 */
export type McpMessageHandler = { handle(message: McpJsonRpcMessage, extra?: unknown): void }['handle'];

/**
 * An MCP server transport, as {@link McpToolServer.connect} takes it: the shape of the MCP SDK's `Transport`
 * (`@modelcontextprotocol/sdk/shared/transport.js`), declared here so that this package's types never need the
 * optional SDK installed (a consumer without it still type-checks with `skipLibCheck` off). Every SDK transport
 * (`StdioServerTransport`, `WebStandardStreamableHTTPServerTransport`, `InMemoryTransport`, a host's own) is one.
 */
export interface McpServerTransport {
  start(): Promise<void>;
  send(message: McpJsonRpcMessage, options?: Readonly<Record<string, unknown>>): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  /** Set by the server before `start()`: called with each message received. */
  onmessage?: McpMessageHandler | undefined;
  sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
}

/** What {@link createMcpToolServer} returns. */
export interface McpToolServer {
  /** The tools a host sees: visible tools of the served sets, without MANUAL_ONLY tools and without other MCP servers' tools. */
  listTools(): McpServedTool[];
  /** Serve one session over stdin/stdout (what `minara mcp serve` does). Log to stderr only: stdout carries the protocol. */
  connectStdio(streams?: { readonly stdin?: NodeJS.ReadableStream | undefined; readonly stdout?: NodeJS.WritableStream | undefined }): Promise<McpToolServerSession>;
  /** Serve one session over any MCP server transport (an SDK transport or one of the host's own). */
  connect(transport: McpServerTransport, identity?: McpRequestIdentity): Promise<McpToolServerSession>;
  /**
   * Answer one Streamable HTTP request (`POST`, `GET` or `DELETE` on the MCP path) as a web-standard handler.
   * Sessions are keyed by `Mcp-Session-Id` and bound to the identity that opened them: another tenant gets 404.
   * Authenticate before calling it (the gateway's `/mcp` route does); a browser `Origin` that is not the
   * request's own host is refused (403), against DNS rebinding.
   */
  handleHttp(request: Request, identity?: McpRequestIdentity): Promise<Response>;
  /** Open HTTP sessions. */
  sessionCount(): number;
  /** Close every session. */
  close(): Promise<void>;
}
