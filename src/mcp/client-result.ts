/**
 * What the MCP client makes of a server's tool and its result: the permission tier (config and annotations) and
 * the envelope data (text cut at the cap, structured content, attachments described, never inlined).
 */
import { PermissionTier } from '../safety/permission-tier';
import type { McpServerConfig } from './config';

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
