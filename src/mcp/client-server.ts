/**
 * One MCP server as the client sees it (see `createMcpTools` in client.ts): connect (stdio, or Streamable HTTP
 * falling back to SSE), list its tools, restart a crashed server with backoff, re-list on `tools/list_changed`,
 * report its status and close. `createServer` is wiring; each step is a named function over `McpServerState`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolEntry } from '../tools/types';
import type { McpServerConfig, McpStdioServerConfig } from './config';
import { errorText, type McpConnection, type McpServerDeps, type McpServerState } from './client-server-state';
import { toEntries } from './client-tool';
import { MCP_DEFAULTS, type McpServerStatus } from './client-types';
import { mcpToolSet } from './names';

const RESTART_BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000, 10_000] as const;

/** One server, as `createMcpTools` drives it. */
export interface McpServerHandle {
  readonly name: string;
  readonly lazy: boolean;
  /** Connect and list tools, once (concurrent callers share the attempt). */
  start(): Promise<void>;
  /** The registry tools of the last listing. */
  entries(): ToolEntry[];
  /** Re-list after `tools/list_changed`: the registry tools that are new. */
  relist(): Promise<ToolEntry[]>;
  status(): McpServerStatus;
  close(): Promise<void>;
}

function isStdio(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}

/** Reject after `ms`, running `onTimeout` (close the transport) so nothing is left running. */
async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Promise<void> | void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          void Promise.resolve(onTimeout()).catch(() => {});
          reject(new Error(`no answer to initialize within ${ms} ms`));
        }, ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A fresh SDK client (declaring no capabilities) connected over `transport`, or closed on timeout. */
async function open(s: McpServerState, transport: Transport, kind: McpServerStatus['transport']): Promise<McpConnection> {
  const client = new Client({ name: s.deps.clientName, version: '0.1.0' }, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    s.toolListChanged = true;
  });
  await withTimeout(client.connect(transport, { timeout: s.connectTimeoutMs }), s.connectTimeoutMs, () => transport.close());
  return { client, transport, kind };
}

/** Start a stdio server's process and connect; a failure carries the last lines of its stderr. */
async function connectStdio(s: McpServerState, config: McpStdioServerConfig): Promise<McpConnection> {
  const transport = new StdioClientTransport({
    command: config.command,
    args: [...(config.args ?? [])],
    env: { ...getDefaultEnvironment(), ...(config.env ?? {}) },
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'pipe',
  });
  // Keep the server's stderr out of our output; the last lines explain a crash.
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-2_000);
  });
  try {
    return await open(s, transport, 'stdio');
  } catch (error) {
    throw new Error(`${errorText(error)}${tail ? ` (stderr: ${tail.trim().split('\n').slice(-3).join(' | ')})` : ''}`);
  }
}

/** Connect over the server's transport (an HTTP server that predates Streamable HTTP gets SSE). */
async function connect(s: McpServerState): Promise<McpConnection> {
  const { config } = s;
  if (isStdio(config)) return connectStdio(s, config);
  const url = new URL(config.url);
  const requestInit = { headers: { ...(config.headers ?? {}) } };
  try {
    return await open(s, new StreamableHTTPClientTransport(url, { requestInit }), 'streamable-http');
  } catch (error) {
    // Servers that predate Streamable HTTP answer the POST with 400, 404 or 405: try the SSE transport once.
    if (!/\b40[045]\b/.test(errorText(error))) throw error;
    return open(s, new SSEClientTransport(url, { requestInit }), 'sse');
  }
}

/** Every page of the server's tool list. */
async function listTools(s: McpServerState, c: McpConnection): Promise<McpTool[]> {
  const out: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await c.client.listTools(cursor ? { cursor } : {}, { timeout: s.connectTimeoutMs });
    out.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** When the live connection closes (the server crashed or hung up), restart with backoff. */
function watch(s: McpServerState, c: McpConnection): void {
  c.client.onclose = () => {
    if (s.closed || s.conn !== c) return;
    s.conn = undefined;
    s.state = 'restarting';
    s.lastError = 'the server closed the connection';
    s.deps.logger.warn('mcp: server disconnected; restarting with backoff', { ...s.log });
    scheduleRestart(s);
  };
}

/** One reconnection attempt (the restart timer's); a failure schedules the next. */
async function restart(s: McpServerState): Promise<void> {
  s.restartTimer = undefined;
  try {
    const c = await connect(s);
    if (s.closed) {
      await c.client.close();
      return;
    }
    s.conn = c;
    watch(s, c);
    s.state = 'connected';
    s.lastError = undefined;
    s.restarts = 0;
    s.deps.logger.info('mcp: server reconnected', { ...s.log });
  } catch (error) {
    s.lastError = errorText(error);
    s.deps.logger.warn('mcp: restart failed; retrying', { ...s.log, error: s.lastError });
    scheduleRestart(s);
  }
}

/** Reconnect after the next backoff delay (one timer at a time; none once closed). */
function scheduleRestart(s: McpServerState): void {
  if (s.closed || s.restartTimer) return;
  const delay = RESTART_BACKOFF_MS[Math.min(s.restarts, RESTART_BACKOFF_MS.length - 1)] as number;
  s.restarts++;
  s.restartTimer = setTimeout(() => restart(s), delay);
  s.restartTimer.unref();
}

/** The start attempt: connect, list the tools, watch the connection; a failure leaves the server `failed`. */
async function startOnce(s: McpServerState): Promise<void> {
  if (s.closed) return;
  try {
    s.conn = await connect(s);
    if (s.closed) {
      await s.conn.client.close().catch(() => {});
      s.conn = undefined;
      return;
    }
    s.listed = await listTools(s, s.conn);
    s.entries = toEntries(s, s.listed);
    watch(s, s.conn);
    s.state = 'connected';
  } catch (error) {
    s.lastError = errorText(error);
    s.state = 'failed';
    s.deps.logger.error(`mcp: server "${s.name}" did not start: ${s.lastError}`, { ...s.log });
    const c = s.conn;
    s.conn = undefined;
    await c?.client.close().catch(() => {});
  }
}

/** Re-list after `tools/list_changed`; the registry tools that are new (the dropped ones stop being live). */
async function relist(s: McpServerState): Promise<ToolEntry[]> {
  if (!s.toolListChanged || s.conn === undefined) return [];
  s.toolListChanged = false;
  s.listed = await listTools(s, s.conn);
  s.live.clear();
  const fresh = toEntries(s, s.listed);
  const known = new Set(s.entries.map((e) => e.name));
  s.entries = fresh;
  return fresh.filter((e) => !known.has(e.name));
}

function status(s: McpServerState): McpServerStatus {
  const { conn } = s;
  const pid = conn?.transport instanceof StdioClientTransport ? (conn.transport.pid ?? undefined) : undefined;
  return {
    name: s.name,
    transport: conn?.kind ?? (isStdio(s.config) ? 'stdio' : 'streamable-http'),
    state: s.state,
    tools: s.entries.length,
    skipped: s.skipped,
    ...(s.lastError ? { error: s.lastError } : {}),
    toolListChanged: s.toolListChanged,
    ...(pid ? { pid } : {}),
  };
}

/** Stop restarting and close the connection (ending a stdio server's process). */
async function close(s: McpServerState): Promise<void> {
  s.closed = true;
  s.state = 'closed';
  if (s.restartTimer) clearTimeout(s.restartTimer);
  const c = s.conn;
  s.conn = undefined;
  await c?.client.close().catch(() => {});
}

/** One server with its policy (timeouts, result cap) and nothing connected yet. */
export function createServer(name: string, config: McpServerConfig, deps: McpServerDeps): McpServerHandle {
  const s: McpServerState = {
    name,
    config,
    deps,
    connectTimeoutMs: config.connectTimeoutMs ?? MCP_DEFAULTS.connectTimeoutMs,
    callTimeoutMs: config.callTimeoutMs ?? MCP_DEFAULTS.callTimeoutMs,
    maxResultBytes: config.maxResultBytes ?? MCP_DEFAULTS.maxResultBytes,
    toolSet: mcpToolSet(name),
    log: { module: 'mcp', server: name },
    live: new Set(),
    conn: undefined,
    state: config.lazy === true ? 'idle' : 'failed',
    lastError: undefined,
    listed: [],
    skipped: [],
    toolListChanged: false,
    closed: false,
    restarts: 0,
    restartTimer: undefined,
    entries: [],
    starting: undefined,
  };
  return {
    name,
    lazy: config.lazy === true,
    start: () => (s.starting ??= startOnce(s)),
    entries: () => s.entries,
    relist: () => relist(s),
    status: () => status(s),
    close: () => close(s),
  };
}
