/**
 * What the MCP tool server serves and how a host's call runs (see `createMcpToolServer` in server.ts): the served
 * tools (no MANUAL_ONLY, no other MCP server's, no meta-tools), the approval a repeated call consumes, and the call
 * through the registry's one dispatch path with source `mcp`, bounded to the served tool sets and ALWAYS_CONFIRM.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { hashToolInput } from '../safety/approvals';
import { PermissionTier } from '../safety/permission-tier';
import { permissionTierForRisk } from '../safety/risk-tier';
import type { ApprovalRecord } from '../storage/types';
import { createToolCallContext } from '../tools/context';
import type { ToolEnvelope } from '../tools/envelope';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import { validateToolInput } from '../tools/validate-input';
import type { Logger } from '../util/logger';
import type { McpServedTool, McpToolServerSession } from './server-types';

/** A session with its SDK server. */
export interface OpenSession extends McpToolServerSession {
  readonly server: Server;
}

/** A Streamable HTTP session: its transport, the tenant that opened it, when it was last used. */
export interface HttpSession {
  session: OpenSession;
  transport: WebStandardStreamableHTTPServerTransport;
  userId: string;
  lastSeen: number;
}

/** What the MCP tool server keeps: its options resolved, the schema cache and the open sessions. */
export interface McpToolServerState {
  readonly tools: ToolRegistry;
  readonly toolSets: readonly string[] | undefined;
  readonly defaultUserId: string;
  readonly agentId: string | undefined;
  readonly name: string;
  readonly version: string;
  readonly approvalHint: (approval: ApprovalRecord) => string;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly maxSessions: number;
  readonly sessionIdleMs: number;
  readonly log: { readonly module: 'mcp-server' };
  /** Each tool's JSON Schema, or `null` when it has no object form (computed once per entry). */
  readonly schemas: WeakMap<ToolEntry, McpServedTool['inputSchema'] | null>;
  /** Tools already warned about (not served). */
  readonly warned: Set<string>;
  readonly stdioSessions: Set<McpToolServerSession>;
  /** HTTP sessions by `Mcp-Session-Id`. */
  readonly http: Map<string, HttpSession>;
  /** Closes idle HTTP sessions while any is open. */
  sweeper: NodeJS.Timeout | undefined;
}

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

/** An entry's JSON Schema from the cache (computed on first use); a tool without an object form is warned about once. */
function servedSchema(s: McpToolServerState, entry: ToolEntry): McpServedTool['inputSchema'] | null {
  let schema = s.schemas.get(entry);
  if (schema === undefined) {
    schema = jsonSchemaOf(entry) ?? null;
    s.schemas.set(entry, schema);
  }
  if (schema === null) {
    if (!s.warned.has(entry.name)) s.logger.warn(`mcp serve: tool "${entry.name}" is not served: its input schema has no JSON Schema object form`, s.log);
    s.warned.add(entry.name);
  }
  return schema;
}

/** The tools a host sees, each with the registry entry it calls. */
export function served(s: McpToolServerState): Array<{ entry: ToolEntry; tool: McpServedTool }> {
  const out: Array<{ entry: ToolEntry; tool: McpServedTool }> = [];
  for (const entry of s.tools.list(s.toolSets ? { toolSets: s.toolSets } : undefined)) {
    if (entry.permissionTier === PermissionTier.MANUAL_ONLY || entry.toolSet.startsWith('mcp:') || META_TOOLS.has(entry.name)) continue;
    const schema = servedSchema(s, entry);
    if (schema === null) continue;
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
function servedToolSets(s: McpToolServerState): string[] {
  const { tools, toolSets } = s;
  const names = toolSets ? [...new Set(tools.list({ toolSets }).map((t) => t.toolSet))] : tools.toolSets().map((t) => t.name);
  return names.filter((n) => !n.startsWith('mcp:'));
}

/** An approved, unexpired, unused request of this session for exactly this call; else a pending one. */
async function priorApproval(s: McpToolServerState, sessionId: string, entry: ToolEntry, args: unknown): Promise<{ approved?: ApprovalRecord | undefined; pending?: ApprovalRecord | undefined }> {
  const validated = validateToolInput(entry.inputSchema, args);
  if (!validated.success) return {};
  const hash = hashToolInput(validated.data);
  const at = s.now().toISOString();
  const records = await s.tools.approvals.list({ sessionId, status: ['approved', 'pending'], limit: 200 });
  const mine = records.filter((r) => r.toolName === entry.name && r.inputHash === hash && r.source === 'mcp' && r.expiresAt > at);
  return { approved: mine.find((r) => r.status === 'approved'), pending: mine.find((r) => r.status === 'pending') };
}

/** Run a host's `tools/call` in its session: a served tool only, consuming an approval the person gave for this exact call. */
export async function callTool(s: McpToolServerState, session: { sessionId: string; userId: string }, toolName: string, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
  const found = served(s).find((x) => x.entry.name === toolName);
  if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${toolName}`);
  const { entry } = found;
  const prior = entry.permissionTier === PermissionTier.READ_ONLY ? {} : await priorApproval(s, session.sessionId, entry, args);
  if (!prior.approved && prior.pending) {
    const p = prior.pending;
    return resultOf({ ok: false, error: `Still waiting for approval ${p.id} (${p.reason}); it expires at ${p.expiresAt}.`, code: 'APPROVAL_REQUIRED', retryable: false }, s.approvalHint(p));
  }
  // What the host may reach is bounded in the call's context, which every nested dispatch narrows but never
  // widens: the served tool sets only (never another MCP server's) and nothing above ALWAYS_CONFIRM, so no path
  // (a handler that dispatches, a tier raised by `tierFor` such as the stop's release) puts a MANUAL_ONLY request
  // into the person's queue.
  const context = createToolCallContext({
    sessionId: session.sessionId,
    source: 'mcp',
    userId: session.userId,
    ...(s.agentId ? { agentId: s.agentId } : {}),
    allowedToolSets: servedToolSets(s),
    riskCeiling: permissionTierForRisk('high'),
  });
  const outcome = await s.tools.dispatchDetailed(entry.name, args ?? {}, {
    context,
    signal,
    ...(prior.approved ? { approvalId: prior.approved.id, toolCallId: prior.approved.toolCallId } : {}),
  });
  if (outcome.decision === 'approval_required' && outcome.approval) return resultOf(outcome.envelope, `Approval id: ${outcome.approval.id}. ${s.approvalHint(outcome.approval)}`);
  return resultOf(outcome.envelope);
}
