import { redactSecrets } from '../safety/secret-patterns';
import type { MinaraErrorCode } from '../errors/codes';
import { MinaraError } from '../errors/minara-error';

/** A successful tool result. */
export interface ToolOk<T = unknown> {
  readonly ok: true;
  readonly data: T;
}

/** A failed or blocked tool result; `retryable: false` tells the model not to retry. */
export interface ToolErr {
  readonly ok: false;
  readonly error: string;
  readonly code: MinaraErrorCode | (string & {});
  readonly retryable: boolean;
  /** Present when the call waits for a human approval. */
  readonly approval?:
    | {
      readonly approvalId: string;
      readonly toolName: string;
      readonly expiresAt: string;
      readonly reason: string;
      /** What a grant covering this fund-moving tool for the user has left today (UTC), when one has a daily cap. */
      readonly grantLeftTodayUsd?: number | undefined;
      /** The call was proposed after untrusted content entered the turn: its sources and the instruction-like passage, if any. */
      readonly provenance?: ApprovalProvenance | undefined;
    }
    | undefined;
}

/** What an approval request says about the untrusted content read before the call was proposed. */
export interface ApprovalProvenance {
  /** Sources read before the call (URLs, `mcp:<server>/<tool>`, `webhook:<name>`), oldest first. */
  readonly untrustedSources: readonly string[];
  /** The first passage among them that reads as an instruction to the agent. */
  readonly passage?: string | undefined;
}

/** The tagged envelope every tool result is shaped into. The model sees the same shape from every tool. */
export type ToolEnvelope<T = unknown> = ToolOk<T> | ToolErr;

const ENVELOPE = Symbol.for('@minara/agent.envelope');

/**
 * A success envelope. Handlers may return plain data instead; the registry wraps it.
 *
 * @example
 * ```ts
 * execute: async ({ symbol }) => ok({ symbol, price: 97000 })
 * ```
 */
export function ok<T>(data: T): ToolOk<T> {
  return brand({ ok: true, data });
}

/**
 * A failure envelope the model sees as a normal tool result.
 *
 * @example
 * ```ts
 * if (!quote) return err('No quote for that pair', { code: 'PROVIDER_ERROR', retryable: true });
 * ```
 */
export function err(message: string, options: { code?: MinaraErrorCode | (string & {}); retryable?: boolean } = {}): ToolErr {
  return brand({ ok: false, error: message, code: options.code ?? 'TOOL_EXECUTION_FAILED', retryable: options.retryable ?? false });
}

/** A failure envelope from anything thrown: `MinaraError` keeps its code; anything else is TOOL_EXECUTION_FAILED. */
export function errFromThrow(error: unknown): ToolErr {
  // Error messages reach the model, the transcript, events and the audit log: secret-looking strings go first.
  if (MinaraError.isInstance(error)) return err(redactSecrets(error.message), { code: error.code, retryable: error.retryable });
  const message = error instanceof Error ? error.message : String(error);
  return err(redactSecrets(message) || 'Tool failed', { code: 'TOOL_EXECUTION_FAILED', retryable: false });
}

/** True for an envelope made by `ok`, `err` or `errFromThrow`. */
export function isToolEnvelope(value: unknown): value is ToolEnvelope {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ENVELOPE] === true;
}

/** Parse an envelope JSON string (as `dispatch` returns it). Throws on anything that is not an envelope. */
export function parseEnvelope(json: string): ToolEnvelope {
  const value: unknown = JSON.parse(json);
  if (typeof value !== 'object' || value === null || typeof (value as { ok?: unknown }).ok !== 'boolean') {
    throw new MinaraError('INVALID_ARGUMENT', 'Not a tool envelope: expected {"ok": true|false, ...}');
  }
  return value as ToolEnvelope;
}

function brand<T extends object>(value: T): T {
  Object.defineProperty(value, ENVELOPE, { value: true, enumerable: false });
  return value;
}
