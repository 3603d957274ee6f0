/**
 * The MCP client's public types and the defaults of its per-server policy (re-exported by `client.ts`, the
 * `@minara/agent/mcp` entry's source of them).
 */
import type { ScanFinding } from '../safety/input-scanner';
import type { CallSource } from '../safety/permission-tier';
import type { ToolEntry } from '../tools/types';
import type { Logger } from '../util/logger';
import type { McpConfig } from './config';

/** Defaults of the per-server policy (see {@link McpServerConfig}). */
export const MCP_DEFAULTS = Object.freeze({ connectTimeoutMs: 10_000, callTimeoutMs: 60_000, maxResultBytes: 65_536 });

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
