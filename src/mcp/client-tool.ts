/**
 * A server's listed tools as registry tools (see client-server.ts): each call goes through the registry's one
 * dispatch path, then to the server over the live connection; the result comes back as envelope data, scanned
 * for injection and secrets.
 */
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { scanInput } from '../safety/input-scanner';
import { isAutonomousSource } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import { type McpCallResult, mcpResultData, mcpToolTier } from './client-result';
import { errorText, type McpServerState } from './client-server-state';
import { mcpToolName } from './names';

/** Call `tool` on the server for one registry call: refuse autonomous calls unless allowed, fail fast while down. */
async function callServerTool(s: McpServerState, tool: McpTool, input: unknown, ctx: ToolExecutionContext) {
  const { name, config } = s;
  if (isAutonomousSource(ctx.call.source) && config.allowAutonomous !== true) {
    throw new MinaraError('TOOL_BLOCKED', `MCP server "${name}" does not allow autonomous calls (source ${ctx.call.source}); set allowAutonomous in its config`);
  }
  const c = s.conn;
  if (c === undefined) {
    throw new MinaraError('MCP_UNAVAILABLE', `MCP server "${name}" is ${s.state === 'restarting' ? 'restarting after a crash' : s.state}; try again shortly`, { retryable: s.state !== 'closed' });
  }
  let result: unknown;
  try {
    result = await c.client.callTool({ name: tool.name, arguments: (input ?? {}) as Record<string, unknown> }, undefined, { signal: ctx.signal, timeout: s.callTimeoutMs });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const text = errorText(error);
    const down = s.conn !== c;
    throw new MinaraError(down ? 'MCP_UNAVAILABLE' : 'MCP_ERROR', `MCP server "${name}" tool "${tool.name}": ${text}`, { retryable: down || /timed? ?out/i.test(text) });
  }
  const data = mcpResultData(result as McpCallResult, s.maxResultBytes);
  const findings = data.text ? scanInput(data.text) : [];
  for (const f of findings) {
    await s.deps.onFinding?.({ ...f, server: name, tool: tool.name, toolCallId: ctx.toolCallId, sessionId: ctx.call.sessionId, source: ctx.call.source });
  }
  if ((result as McpCallResult).isError === true) throw new MinaraError('MCP_ERROR', `MCP server "${name}" tool "${tool.name}" failed: ${data.text.slice(0, 2_000) || 'no message'}`);
  return {
    server: name,
    tool: tool.name,
    ...data,
    ...(findings.length > 0 ? { untrusted: findings.map((f) => ({ kind: f.kind, pattern: f.pattern })) } : {}),
  };
}

/** One server tool as a registry tool (`mcp__<server>__<tool>`, in the tool set `mcp:<server>`). */
function toEntry(s: McpServerState, tool: McpTool, registryName: string, inputSchema: z.ZodType): ToolEntry {
  const { name, config } = s;
  return defineTool({
    name: registryName,
    toolSet: s.toolSet,
    description: `${(tool.description ?? tool.title ?? tool.name).slice(0, 1_000)} (MCP server "${name}", tool "${tool.name}")`,
    permissionTier: mcpToolTier(config, tool),
    // Another server's output: untrusted unless the operator marks the server trusted.
    trust: config.trusted === true ? 'trusted' : 'untrusted',
    source: () => `mcp:${name}/${tool.name}`,
    inputSchema,
    timeoutMs: s.callTimeoutMs,
    checkFn: () => s.live.has(tool.name),
    execute: (input, ctx) => callServerTool(s, tool, input, ctx),
  });
}

/**
 * The registry tools of a listing: tools hidden by config, or whose input schema is not usable JSON Schema, are
 * skipped (recorded in `s.skipped`, which this resets); the rest are marked live.
 */
export function toEntries(s: McpServerState, tools: readonly McpTool[]): ToolEntry[] {
  const out: ToolEntry[] = [];
  s.skipped = [];
  for (const tool of tools) {
    if (s.config.tools?.[tool.name]?.hidden === true) {
      s.skipped.push({ tool: tool.name, reason: 'hidden by config' });
      continue;
    }
    let inputSchema: z.ZodType;
    try {
      inputSchema = z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (error) {
      const reason = `its input schema is not usable JSON Schema: ${errorText(error)}`;
      s.skipped.push({ tool: tool.name, reason });
      s.deps.logger.warn(`mcp: skipping tool "${tool.name}": ${reason}`, { ...s.log });
      continue;
    }
    const registryName = mcpToolName(s.name, tool.name);
    s.live.add(tool.name);
    out.push(toEntry(s, tool, registryName, inputSchema));
  }
  return out;
}
