/**
 * The MCP tool server's sessions (see `createMcpToolServer` in server.ts): one SDK server per session, over any
 * transport or Streamable HTTP. HTTP sessions are keyed by `Mcp-Session-Id`, bound to the tenant that opened them,
 * capped in number and closed when idle.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpRequestIdentity, McpServerTransport, McpToolServerSession } from './server-types';
import { callTool, served, type McpToolServerState, type OpenSession } from './server-tools';

const jsonRpcError = (status: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });

/** A new session of `userId`: a conversation session of the tenant and an SDK server answering list and call. */
async function openSession(s: McpToolServerState, userId: string, surface: string): Promise<OpenSession> {
  const sessionId = `mcp-${randomUUID()}`;
  await s.tools.storage.conversations.ensureSession({ id: sessionId, userId, title: `MCP session (${surface})`, metadata: { surface: 'mcp' }, now: s.now().toISOString() });
  const ids = { sessionId, userId };
  const server = new Server({ name: s.name, version: s.version }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: served(s).map((x) => x.tool as McpTool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => callTool(s, ids, request.params.name, request.params.arguments, extra.signal));
  return { ...ids, server, close: () => server.close().catch(() => {}) };
}

/** Close the HTTP sessions idle longer than `sessionIdleMs`; stop sweeping when none is left. */
function sweep(s: McpToolServerState): void {
  const cutoff = Date.now() - s.sessionIdleMs;
  for (const [id, h] of s.http) {
    if (h.lastSeen < cutoff) {
      s.http.delete(id);
      void h.session.close();
    }
  }
  if (s.http.size === 0 && s.sweeper) {
    clearInterval(s.sweeper);
    s.sweeper = undefined;
  }
}

/** Serve one session over `transport` (stdio, an SDK transport, or the host's own). */
export async function connectTransport(s: McpToolServerState, transport: McpServerTransport, identity?: McpRequestIdentity): Promise<McpToolServerSession> {
  const session = await openSession(s, identity?.userId ?? s.defaultUserId, 'transport');
  // The SDK's own type for the same shape: McpServerTransport mirrors it with a looser message type (every SDK
  // transport is one, test/mcp/server.test.ts); the SDK only ever sends it JSON-RPC messages.
  await session.server.connect(transport as Transport);
  s.stdioSessions.add(session);
  transport.onclose = () => s.stdioSessions.delete(session);
  return { sessionId: session.sessionId, userId: session.userId, close: () => session.close() };
}

/** Whether a browser `Origin` (when sent) is the request's own host (against DNS rebinding). */
function sameOrigin(request: Request, origin: string): boolean {
  try {
    return new URL(origin).host === new URL(request.url).host;
  } catch {
    return false;
  }
}

/** A request of an open session: only the tenant that opened it reaches it; `DELETE` ends it. */
async function continueSession(s: McpToolServerState, request: Request, id: string, userId: string): Promise<Response> {
  const h = s.http.get(id);
  if (!h || h.userId !== userId) return jsonRpcError(404, 'Unknown or expired MCP session; initialize a new one.');
  h.lastSeen = Date.now();
  const response = await h.transport.handleRequest(request);
  if (request.method === 'DELETE') {
    s.http.delete(id);
    await h.session.close();
  }
  return response;
}

/** A first request (an `initialize` POST): a new session within the cap, kept only when it initialized. */
async function startSession(s: McpToolServerState, request: Request, userId: string): Promise<Response> {
  if (request.method !== 'POST') return jsonRpcError(400, 'Mcp-Session-Id header required.');
  if (s.http.size >= s.maxSessions) {
    sweep(s);
    if (s.http.size >= s.maxSessions) return jsonRpcError(503, `Too many MCP sessions (${s.maxSessions}); close one or try later.`);
  }
  const session = await openSession(s, userId, 'http');
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sid) => {
      s.http.set(sid, { session, transport, userId, lastSeen: Date.now() });
      s.sweeper ??= setInterval(() => sweep(s), Math.min(s.sessionIdleMs, 60_000)).unref();
    },
  });
  await session.server.connect(transport);
  const response = await transport.handleRequest(request);
  // A first request that was not a valid initialize opened no session: drop the server.
  if (transport.sessionId === undefined || !s.http.has(transport.sessionId)) await session.close();
  return response;
}

/** Answer one Streamable HTTP request for the authenticated tenant (see `McpToolServer.handleHttp`). */
export async function handleHttp(s: McpToolServerState, request: Request, identity?: McpRequestIdentity): Promise<Response> {
  const userId = identity?.userId ?? s.defaultUserId;
  const origin = request.headers.get('origin');
  if (origin !== null && !sameOrigin(request, origin)) return jsonRpcError(403, `Origin ${origin} may not call this MCP server.`);
  const id = request.headers.get('mcp-session-id');
  if (id !== null) return continueSession(s, request, id, userId);
  return startSession(s, request, userId);
}

/** Stop sweeping and close every session, HTTP and stdio. */
export async function closeSessions(s: McpToolServerState): Promise<void> {
  if (s.sweeper) clearInterval(s.sweeper);
  s.sweeper = undefined;
  const all = [...s.http.values()].map((h) => h.session.close());
  s.http.clear();
  await Promise.all([...all, ...[...s.stdioSessions].map((x) => x.close())]);
  s.stdioSessions.clear();
}
