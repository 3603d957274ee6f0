import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { scanInput, type ScanFinding } from '../safety/input-scanner';
import { type CallSource, isAutonomousSource, PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import { type Logger, silentLogger } from '../util/logger';
import type { McpConfig, McpServerConfig, McpStdioServerConfig } from './config';
import { mcpToolName, mcpToolSet } from './names';

/** Defaults of the per-server policy (see {@link McpServerConfig}). */
export const MCP_DEFAULTS = Object.freeze({ connectTimeoutMs: 10_000, callTimeoutMs: 60_000, maxResultBytes: 65_536 });
const RESTART_BACKOFF_MS = [250, 500, 1_000, 2_000, 5_000, 10_000] as const;

/** The state of one server. */
export interface McpServerStatus {
  readonly name: string;
  readonly transport: 'stdio' | 'streamable-http' | 'sse';
  /**
   * `idle` (a lazy server before the first turn), `connected`, `restarting` after a crash (calls fail with
   * retryable `MCP_UNAVAILABLE`), `failed` at start, `closed`.
   */
  readonly state: 'idle' | 'connected' | 'restarting' | 'failed' | 'closed';
  /** Registry tools from this server. */
  readonly tools: number;
  /** Tools the server listed that were not registered (hidden by config or with an unusable schema), with why. */
  readonly skipped: ReadonlyArray<{ readonly tool: string; readonly reason: string }>;
  /** The last connection error, if any. */
  readonly error?: string | undefined;
  /** The server's tool list changed; {@link McpTools.applyToolListChanges} picks it up. */
  readonly toolListChanged: boolean;
  /** The child process id of a stdio server while it runs. */
  readonly pid?: number | undefined;
}

/** A scanner finding in a server's result (prompt injection or a secret). */
export interface McpResultFinding extends ScanFinding {
  readonly server: string;
  readonly tool: string;
  readonly toolCallId: string;
  readonly sessionId: string;
  /** The source of the call that got the result. */
  readonly source: CallSource;
}

/** Options of {@link createMcpTools}. */
export interface CreateMcpToolsOptions {
  /** Servers, in the `{ mcpServers }` shape (see {@link parseMcpConfig}). */
  readonly config: McpConfig;
  readonly logger?: Logger | undefined;
  /**
   * Called for each scanner finding in a result (the runtime's input scanner, as for recalled memory). The
   * result still reaches the model, marked `untrusted`; `createApp` writes an audit row per finding.
   */
  readonly onFinding?: ((finding: McpResultFinding) => void | Promise<void>) | undefined;
  /** Client name announced to servers. @default 'minara-agent' */
  readonly clientName?: string | undefined;
}

/** What {@link createMcpTools} returns. */
export interface McpTools {
  /** Registry tools, one per registered server tool: pass them to `createToolRegistry({ tools })` or `register`. */
  readonly tools: readonly ToolEntry[];
  /** Each server's state and tool count. */
  status(): McpServerStatus[];
  /**
   * The turn boundary: connect lazy servers not yet started, re-list the tools of servers that announced
   * `tools/list_changed`, and return the registry tools to add (`createApp` does this before every turn and
   * registers them). Never call it mid-turn: a turn's tool list stays byte-stable. Tools a server dropped
   * fail with `TOOL_UNAVAILABLE`; a new tool whose name collides with a known one is skipped with a warning.
   */
  applyToolListChanges(): Promise<ToolEntry[]>;
  /** Close every connection and end stdio child processes. */
  close(): Promise<void>;
}

/** What {@link mcpToolTier} reads of a server's tool (a subset of MCP's `Tool`). */
export interface McpToolInfo {
  readonly name: string;
  readonly annotations?: { readonly readOnlyHint?: boolean | undefined; readonly destructiveHint?: boolean | undefined } | undefined;
}

/** A `tools/call` result as {@link mcpResultData} reads it (a subset of MCP's `CallToolResult`). */
export interface McpCallResult {
  readonly content?: ReadonlyArray<
    | { readonly type: 'text'; readonly text: string }
    | { readonly type: 'image' | 'audio'; readonly data: string; readonly mimeType: string }
    | { readonly type: 'resource_link'; readonly uri: string; readonly name: string; readonly mimeType?: string | undefined }
    | { readonly type: 'resource'; readonly resource: { readonly uri: string; readonly mimeType?: string | undefined; readonly text?: string | undefined; readonly blob?: string | undefined } }
  > | undefined;
  readonly structuredContent?: Readonly<Record<string, unknown>> | undefined;
  readonly isError?: boolean | undefined;
}

/** The tier a server tool gets from the operator's config and the server's annotations. */
export function mcpToolTier(server: McpServerConfig, tool: McpToolInfo): PermissionTier {
  const explicit = server.tools?.[tool.name]?.tier ?? server.tier;
  if (explicit !== undefined) return explicit;
  if (tool.annotations?.destructiveHint === true) return PermissionTier.ALWAYS_CONFIRM;
  if (server.trustAnnotations === true && tool.annotations?.readOnlyHint === true) return PermissionTier.READ_ONLY;
  return PermissionTier.CONFIRM_ONCE;
}

/** Cut text to `max` UTF-8 bytes, on a character boundary. */
function cut(text: string, max: number): { text: string; truncated: number } {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= max) return { text, truncated: 0 };
  let kept = Buffer.from(text, 'utf8').subarray(0, max).toString('utf8');
  if (kept.endsWith('\uFFFD')) kept = kept.slice(0, -1);
  return { text: kept, truncated: bytes - Buffer.byteLength(kept, 'utf8') };
}

/** The envelope data of an MCP tool's result (see {@link mcpResultData}). */
export interface McpResultData {
  /** The text parts joined, cut at the cap with a note. */
  readonly text: string;
  /** `structuredContent`, when it fits the cap. */
  readonly structured?: unknown;
  /** Images and audio (type, mime type, size) and resources (URI), never inlined. */
  readonly attachments: readonly unknown[];
  /** Bytes of text cut away (0 when all fit). */
  readonly truncatedBytes: number;
}

/**
 * An MCP result as envelope data: text parts joined (cut at `maxBytes` with a note), structured content kept,
 * images and audio described (mime type and size), resources referenced by URI (embedded text counts
 * towards the cap).
 */
export function mcpResultData(result: McpCallResult, maxBytes: number): McpResultData {
  const texts: string[] = [];
  const attachments: unknown[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'image' || part.type === 'audio') attachments.push({ type: part.type, mimeType: part.mimeType, bytes: Math.floor((part.data.length * 3) / 4) });
    else if (part.type === 'resource_link') attachments.push({ type: 'resource', uri: part.uri, name: part.name, mimeType: part.mimeType });
    else if (part.type === 'resource') {
      const r = part.resource;
      if (typeof r.text === 'string') texts.push(`[resource ${r.uri}]\n${r.text}`);
      attachments.push({ type: 'resource', uri: r.uri, mimeType: r.mimeType, ...(r.blob ? { bytes: Math.floor((r.blob.length * 3) / 4) } : {}) });
    }
  }
  const joined = cut(texts.join('\n'), maxBytes);
  let structured: unknown = result.structuredContent;
  if (structured !== undefined && Buffer.byteLength(JSON.stringify(structured), 'utf8') > maxBytes) structured = undefined;
  const text = joined.truncated > 0 ? `${joined.text}\n[… ${joined.truncated} more bytes cut: the result was larger than ${maxBytes} bytes]` : joined.text;
  return { text, ...(structured === undefined ? {} : { structured }), attachments, truncatedBytes: joined.truncated };
}

interface Connection {
  client: Client;
  transport: Transport;
  kind: McpServerStatus['transport'];
}

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
  return {
    tools,
    status: () => servers.map((s) => s.status()),
    async applyToolListChanges() {
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
    },
    async close() {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}

function isStdio(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}

function createServer(
  name: string,
  config: McpServerConfig,
  deps: { logger: Logger; onFinding: CreateMcpToolsOptions['onFinding']; clientName: string },
) {
  const connectTimeoutMs = config.connectTimeoutMs ?? MCP_DEFAULTS.connectTimeoutMs;
  const callTimeoutMs = config.callTimeoutMs ?? MCP_DEFAULTS.callTimeoutMs;
  const maxResultBytes = config.maxResultBytes ?? MCP_DEFAULTS.maxResultBytes;
  const toolSet = mcpToolSet(name);
  let conn: Connection | undefined;
  let state: McpServerStatus['state'] = config.lazy === true ? 'idle' : 'failed';
  let lastError: string | undefined;
  let listed: McpTool[] = [];
  let skipped: Array<{ tool: string; reason: string }> = [];
  let toolListChanged = false;
  let closed = false;
  let restarts = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const live = new Set<string>();
  const log = { module: 'mcp', server: name };

  /** A fresh SDK client (declaring no capabilities) connected over `transport`, or closed on timeout. */
  async function open(transport: Transport, kind: McpServerStatus['transport']): Promise<Connection> {
    const client = new Client({ name: deps.clientName, version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      toolListChanged = true;
    });
    await withTimeout(client.connect(transport, { timeout: connectTimeoutMs }), connectTimeoutMs, () => transport.close());
    return { client, transport, kind };
  }

  async function connect(): Promise<Connection> {
    if (isStdio(config)) {
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
        return await open(transport, 'stdio');
      } catch (error) {
        throw new Error(`${errorText(error)}${tail ? ` (stderr: ${tail.trim().split('\n').slice(-3).join(' | ')})` : ''}`);
      }
    }
    const url = new URL(config.url);
    const requestInit = { headers: { ...(config.headers ?? {}) } };
    try {
      return await open(new StreamableHTTPClientTransport(url, { requestInit }), 'streamable-http');
    } catch (error) {
      // Servers that predate Streamable HTTP answer the POST with 400, 404 or 405: try the SSE transport once.
      if (!/\b40[045]\b/.test(errorText(error))) throw error;
      return open(new SSEClientTransport(url, { requestInit }), 'sse');
    }
  }

  async function listTools(c: Connection): Promise<McpTool[]> {
    const out: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await c.client.listTools(cursor ? { cursor } : {}, { timeout: connectTimeoutMs });
      out.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  function watch(c: Connection): void {
    c.client.onclose = () => {
      if (closed || conn !== c) return;
      conn = undefined;
      state = 'restarting';
      lastError = 'the server closed the connection';
      deps.logger.warn('mcp: server disconnected; restarting with backoff', { ...log });
      scheduleRestart();
    };
  }

  function scheduleRestart(): void {
    if (closed || restartTimer) return;
    const delay = RESTART_BACKOFF_MS[Math.min(restarts, RESTART_BACKOFF_MS.length - 1)] as number;
    restarts++;
    restartTimer = setTimeout(async () => {
      restartTimer = undefined;
      try {
        const c = await connect();
        if (closed) {
          await c.client.close();
          return;
        }
        conn = c;
        watch(c);
        state = 'connected';
        lastError = undefined;
        restarts = 0;
        deps.logger.info('mcp: server reconnected', { ...log });
      } catch (error) {
        lastError = errorText(error);
        deps.logger.warn('mcp: restart failed; retrying', { ...log, error: lastError });
        scheduleRestart();
      }
    }, delay);
    restartTimer.unref();
  }

  function toEntries(tools: readonly McpTool[]): ToolEntry[] {
    const out: ToolEntry[] = [];
    skipped = [];
    for (const tool of tools) {
      if (config.tools?.[tool.name]?.hidden === true) {
        skipped.push({ tool: tool.name, reason: 'hidden by config' });
        continue;
      }
      let inputSchema: z.ZodType;
      try {
        inputSchema = z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
      } catch (error) {
        const reason = `its input schema is not usable JSON Schema: ${errorText(error)}`;
        skipped.push({ tool: tool.name, reason });
        deps.logger.warn(`mcp: skipping tool "${tool.name}": ${reason}`, { ...log });
        continue;
      }
      const registryName = mcpToolName(name, tool.name);
      live.add(tool.name);
      out.push(
        defineTool({
          name: registryName,
          toolSet,
          description: `${(tool.description ?? tool.title ?? tool.name).slice(0, 1_000)} (MCP server "${name}", tool "${tool.name}")`,
          permissionTier: mcpToolTier(config, tool),
          // Another server's output: untrusted unless the operator marks the server trusted.
          trust: config.trusted === true ? 'trusted' : 'untrusted',
          source: () => `mcp:${name}/${tool.name}`,
          inputSchema,
          timeoutMs: callTimeoutMs,
          checkFn: () => live.has(tool.name),
          execute: async (input, ctx) => {
            if (isAutonomousSource(ctx.call.source) && config.allowAutonomous !== true) {
              throw new MinaraError('TOOL_BLOCKED', `MCP server "${name}" does not allow autonomous calls (source ${ctx.call.source}); set allowAutonomous in its config`);
            }
            const c = conn;
            if (c === undefined) {
              throw new MinaraError('MCP_UNAVAILABLE', `MCP server "${name}" is ${state === 'restarting' ? 'restarting after a crash' : state}; try again shortly`, { retryable: state !== 'closed' });
            }
            let result: unknown;
            try {
              result = await c.client.callTool({ name: tool.name, arguments: (input ?? {}) as Record<string, unknown> }, undefined, { signal: ctx.signal, timeout: callTimeoutMs });
            } catch (error) {
              if (ctx.signal.aborted) throw error;
              const text = errorText(error);
              const down = conn !== c;
              throw new MinaraError(down ? 'MCP_UNAVAILABLE' : 'MCP_ERROR', `MCP server "${name}" tool "${tool.name}": ${text}`, { retryable: down || /timed? ?out/i.test(text) });
            }
            const data = mcpResultData(result as McpCallResult, maxResultBytes);
            const findings = data.text ? scanInput(data.text) : [];
            for (const f of findings) {
              await deps.onFinding?.({ ...f, server: name, tool: tool.name, toolCallId: ctx.toolCallId, sessionId: ctx.call.sessionId, source: ctx.call.source });
            }
            if ((result as McpCallResult).isError === true) throw new MinaraError('MCP_ERROR', `MCP server "${name}" tool "${tool.name}" failed: ${data.text.slice(0, 2_000) || 'no message'}`);
            return {
              server: name,
              tool: tool.name,
              ...data,
              ...(findings.length > 0 ? { untrusted: findings.map((f) => ({ kind: f.kind, pattern: f.pattern })) } : {}),
            };
          },
        }),
      );
    }
    return out;
  }

  let entries: ToolEntry[] = [];
  let starting: Promise<void> | undefined;
  return {
    name,
    lazy: config.lazy === true,
    /** Connect and list tools, once (concurrent callers share the attempt). */
    start(): Promise<void> {
      starting ??= (async () => {
        if (closed) return;
        try {
          conn = await connect();
          if (closed) {
            await conn.client.close().catch(() => {});
            conn = undefined;
            return;
          }
          listed = await listTools(conn);
          entries = toEntries(listed);
          watch(conn);
          state = 'connected';
        } catch (error) {
          lastError = errorText(error);
          state = 'failed';
          deps.logger.error(`mcp: server "${name}" did not start: ${lastError}`, { ...log });
          const c = conn;
          conn = undefined;
          await c?.client.close().catch(() => {});
        }
      })();
      return starting;
    },
    entries: () => entries,
    async relist(): Promise<ToolEntry[]> {
      if (!toolListChanged || conn === undefined) return [];
      toolListChanged = false;
      listed = await listTools(conn);
      live.clear();
      const fresh = toEntries(listed);
      const known = new Set(entries.map((e) => e.name));
      entries = fresh;
      return fresh.filter((e) => !known.has(e.name));
    },
    status(): McpServerStatus {
      const pid = conn?.transport instanceof StdioClientTransport ? (conn.transport.pid ?? undefined) : undefined;
      return {
        name,
        transport: conn?.kind ?? (isStdio(config) ? 'stdio' : 'streamable-http'),
        state,
        tools: entries.length,
        skipped,
        ...(lastError ? { error: lastError } : {}),
        toolListChanged,
        ...(pid ? { pid } : {}),
      };
    },
    async close(): Promise<void> {
      closed = true;
      state = 'closed';
      if (restartTimer) clearTimeout(restartTimer);
      const c = conn;
      conn = undefined;
      await c?.client.close().catch(() => {});
    },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
