import { permissionTierForRisk } from '../safety/risk-tier';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { hashToolInput } from '../safety/approvals';
import { PermissionTier } from '../safety/permission-tier';
import type { ApprovalRecord } from '../storage/types';
import { createToolCallContext } from '../tools/context';
import type { ToolEnvelope } from '../tools/envelope';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import { validateToolInput } from '../tools/validate-input';
import { type Logger, silentLogger } from '../util/logger';

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

/** What {@link createMcpToolServer} returns. */
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

const DEFAULT_HINT = (a: ApprovalRecord) =>
  `Ask the person to approve it (\`minara approvals approve ${a.id}\`, or the Approvals page of the web app); then call this tool again with the same arguments. You cannot approve it yourself.`;

/**
 * Tools that are the model's means of reaching other tools (`tool_invoke`, `activate_skills`, `delegate`): an MCP
 * host sees every served tool directly, so these are never served (they could reach tools the host is not listed).
 */
const META_TOOLS: ReadonlySet<string> = new Set(['tool_invoke', 'activate_skills', 'delegate']);

/** A served tool's JSON Schema, from its zod input schema (as the model would send it). */
function jsonSchemaOf(entry: ToolEntry): McpServedTool['inputSchema'] | undefined {
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(entry.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  delete schema.$schema;
  if (schema.type !== 'object') return undefined;
  return schema as McpServedTool['inputSchema'];
}

function describe(entry: ToolEntry): string {
  if (entry.permissionTier === PermissionTier.READ_ONLY) return entry.description;
  const when = entry.permissionTier === PermissionTier.CONFIRM_ONCE ? 'the first call in a session needs' : 'every call needs';
  return `${entry.description}\n\n(Permission tier ${entry.permissionTier}: ${when} a person's approval; the error names the approval id.)`;
}

/** The envelope as an MCP result: data as JSON text (and structured content when it is an object). */
function resultOf(envelope: ToolEnvelope, extra?: string): CallToolResult {
  if (envelope.ok) {
    const data = envelope.data;
    const text = typeof data === 'string' ? data : JSON.stringify(data ?? null);
    const structured = typeof data === 'object' && data !== null && !Array.isArray(data) ? { structuredContent: data as Record<string, unknown> } : {};
    return { content: [{ type: 'text', text }], ...structured };
  }
  const code = envelope.code ? `${envelope.code}: ` : '';
  return { content: [{ type: 'text', text: `${code}${envelope.error}${extra ? `\n${extra}` : ''}` }], isError: true };
}

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
  const log = { module: 'mcp-server' };
  const schemas = new WeakMap<ToolEntry, McpServedTool['inputSchema'] | null>();
  const warned = new Set<string>();

  function served(): Array<{ entry: ToolEntry; tool: McpServedTool }> {
    const out: Array<{ entry: ToolEntry; tool: McpServedTool }> = [];
    for (const entry of tools.list(toolSets ? { toolSets } : undefined)) {
      if (entry.permissionTier === PermissionTier.MANUAL_ONLY || entry.toolSet.startsWith('mcp:') || META_TOOLS.has(entry.name)) continue;
      let schema = schemas.get(entry);
      if (schema === undefined) {
        schema = jsonSchemaOf(entry) ?? null;
        schemas.set(entry, schema);
      }
      if (schema === null) {
        if (!warned.has(entry.name)) logger.warn(`mcp serve: tool "${entry.name}" is not served: its input schema has no JSON Schema object form`, log);
        warned.add(entry.name);
        continue;
      }
      out.push({
        entry,
        tool: {
          name: entry.name,
          description: describe(entry),
          inputSchema: schema,
          annotations: {
            readOnlyHint: entry.permissionTier === PermissionTier.READ_ONLY,
            destructiveHint: entry.isFundMoving || entry.permissionTier >= PermissionTier.ALWAYS_CONFIRM,
            openWorldHint: true,
          },
        },
      });
    }
    return out;
  }

  /** The tool sets calls from a host may reach: the served ones (or every set), never another MCP server's. */
  function servedToolSets(): string[] {
    const names = toolSets ? [...new Set(tools.list({ toolSets }).map((t) => t.toolSet))] : tools.toolSets().map((t) => t.name);
    return names.filter((n) => !n.startsWith('mcp:'));
  }

  /** An approved, unexpired, unused request of this session for exactly this call; else a pending one. */
  async function priorApproval(sessionId: string, entry: ToolEntry, args: unknown): Promise<{ approved?: ApprovalRecord | undefined; pending?: ApprovalRecord | undefined }> {
    const validated = validateToolInput(entry.inputSchema, args);
    if (!validated.success) return {};
    const hash = hashToolInput(validated.data);
    const at = now().toISOString();
    const records = await tools.approvals.list({ sessionId, status: ['approved', 'pending'], limit: 200 });
    const mine = records.filter((r) => r.toolName === entry.name && r.inputHash === hash && r.source === 'mcp' && r.expiresAt > at);
    return { approved: mine.find((r) => r.status === 'approved'), pending: mine.find((r) => r.status === 'pending') };
  }

  async function callTool(session: { sessionId: string; userId: string }, toolName: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
    const found = served().find((s) => s.entry.name === toolName);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${toolName}`);
    const { entry } = found;
    const prior = entry.permissionTier === PermissionTier.READ_ONLY ? {} : await priorApproval(session.sessionId, entry, args);
    if (!prior.approved && prior.pending) {
      const p = prior.pending;
      return resultOf({ ok: false, error: `Still waiting for approval ${p.id} (${p.reason}); it expires at ${p.expiresAt}.`, code: 'APPROVAL_REQUIRED', retryable: false }, approvalHint(p));
    }
    // What the host may reach is bounded in the call's context, which every nested dispatch narrows but never
    // widens: the served tool sets only (never another MCP server's) and nothing above ALWAYS_CONFIRM, so no path
    // (a handler that dispatches, a tier raised by `tierFor` such as the stop's release) puts a MANUAL_ONLY request
    // into the person's queue.
    const context = createToolCallContext({
      sessionId: session.sessionId,
      source: 'mcp',
      userId: session.userId,
      ...(agentId ? { agentId } : {}),
      allowedToolSets: servedToolSets(),
      riskCeiling: permissionTierForRisk('high'),
    });
    const outcome = await tools.dispatchDetailed(entry.name, args ?? {}, {
      context,
      signal,
      ...(prior.approved ? { approvalId: prior.approved.id, toolCallId: prior.approved.toolCallId } : {}),
    });
    if (outcome.decision === 'approval_required' && outcome.approval) return resultOf(outcome.envelope, `Approval id: ${outcome.approval.id}. ${approvalHint(outcome.approval)}`);
    return resultOf(outcome.envelope);
  }

  interface OpenSession extends McpToolServerSession {
    readonly server: Server;
  }

  async function openSession(userId: string, surface: string): Promise<OpenSession> {
    const sessionId = `mcp-${randomUUID()}`;
    await tools.storage.conversations.ensureSession({ id: sessionId, userId, title: `MCP session (${surface})`, metadata: { surface: 'mcp' }, now: now().toISOString() });
    const ids = { sessionId, userId };
    const server = new Server({ name, version }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: served().map((s) => s.tool as McpTool) }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => callTool(ids, request.params.name, request.params.arguments, extra.signal));
    return { ...ids, server, close: () => server.close().catch(() => {}) };
  }

  const stdioSessions = new Set<McpToolServerSession>();
  const http = new Map<string, { session: OpenSession; transport: WebStandardStreamableHTTPServerTransport; userId: string; lastSeen: number }>();
  let sweeper: NodeJS.Timeout | undefined;

  function sweep(): void {
    const cutoff = Date.now() - sessionIdleMs;
    for (const [id, s] of http) {
      if (s.lastSeen < cutoff) {
        http.delete(id);
        void s.session.close();
      }
    }
    if (http.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  const jsonRpcError = (status: number, message: string) =>
    new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });

  return {
    listTools: () => served().map((s) => s.tool),
    async connect(transport, identity) {
      const session = await openSession(identity?.userId ?? defaultUserId, 'transport');
      // The SDK's own type for the same shape: McpServerTransport mirrors it with a looser message type (every SDK
      // transport is one, test/mcp/server.test.ts); the SDK only ever sends it JSON-RPC messages.
      await session.server.connect(transport as Transport);
      stdioSessions.add(session);
      transport.onclose = () => stdioSessions.delete(session);
      return { sessionId: session.sessionId, userId: session.userId, close: () => session.close() };
    },
    async connectStdio(streams = {}) {
      const transport = new StdioServerTransport(streams.stdin as never, streams.stdout as never);
      return this.connect(transport);
    },
    async handleHttp(request, identity) {
      const userId = identity?.userId ?? defaultUserId;
      const origin = request.headers.get('origin');
      if (origin !== null) {
        let same = false;
        try {
          same = new URL(origin).host === new URL(request.url).host;
        } catch {
          same = false;
        }
        if (!same) return jsonRpcError(403, `Origin ${origin} may not call this MCP server.`);
      }
      const id = request.headers.get('mcp-session-id');
      if (id !== null) {
        const s = http.get(id);
        if (!s || s.userId !== userId) return jsonRpcError(404, 'Unknown or expired MCP session; initialize a new one.');
        s.lastSeen = Date.now();
        const response = await s.transport.handleRequest(request);
        if (request.method === 'DELETE') {
          http.delete(id);
          await s.session.close();
        }
        return response;
      }
      if (request.method !== 'POST') return jsonRpcError(400, 'Mcp-Session-Id header required.');
      if (http.size >= maxSessions) {
        sweep();
        if (http.size >= maxSessions) return jsonRpcError(503, `Too many MCP sessions (${maxSessions}); close one or try later.`);
      }
      const session = await openSession(userId, 'http');
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          http.set(sid, { session, transport, userId, lastSeen: Date.now() });
          sweeper ??= setInterval(sweep, Math.min(sessionIdleMs, 60_000)).unref();
        },
      });
      await session.server.connect(transport);
      const response = await transport.handleRequest(request);
      // A first request that was not a valid initialize opened no session: drop the server.
      if (transport.sessionId === undefined || !http.has(transport.sessionId)) await session.close();
      return response;
    },
    sessionCount: () => http.size,
    async close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      const all = [...http.values()].map((s) => s.session.close());
      http.clear();
      await Promise.all([...all, ...[...stdioSessions].map((s) => s.close())]);
      stdioSessions.clear();
    },
  };
}
