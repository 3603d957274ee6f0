import { createHash } from 'node:crypto';

/** Longest registry name an MCP tool gets (the limit most model APIs put on tool names). */
export const MCP_TOOL_NAME_MAX = 64;

/** Lowercase snake-case part of a registry name. */
function sanitise(part: string): string {
  return part.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '') || 'x';
}

/**
 * The registry name of a server's tool: `mcp__<server>__<tool>`, lowercase snake case, at most
 * {@link MCP_TOOL_NAME_MAX} characters (a longer one keeps its start and ends with 8 hex of its hash).
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${sanitise(server)}__${sanitise(tool)}`;
  if (full.length <= MCP_TOOL_NAME_MAX) return full;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${full.slice(0, MCP_TOOL_NAME_MAX - 9).replace(/_+$/, '')}_${hash}`;
}

/** The tool set of a server's tools: `mcp:<server>`. */
export function mcpToolSet(server: string): string {
  return `mcp:${sanitise(server).replace(/_/g, '-').slice(0, 48)}`;
}
