import type { MinaraErrorCode } from './codes';

const MARKER = Symbol.for('@minara/agent.error');

/** Options shared by every {@link MinaraError} constructor. */
export interface MinaraErrorOptions {
  /** The underlying error, kept on `error.cause`. */
  cause?: unknown;
  /** Whether retrying the same operation can succeed. @default false */
  retryable?: boolean;
}

/**
 * The one error type of `@minara/agent`: a string-literal `code`, a message that says which field and what
 * was expected, and an optional `cause`. Checks survive duplicate package copies through
 * {@link MinaraError.isInstance}, which looks for a `Symbol.for` marker rather than the prototype chain.
 *
 * @example
 * ```ts
 * try { await registry.dispatch('get_price', {}); }
 * catch (e) { if (MinaraError.isInstance(e) && e.code === 'TOOL_NOT_FOUND') console.log(e.message); }
 * ```
 */
export class MinaraError extends Error {
  readonly code: MinaraErrorCode;
  readonly retryable: boolean;
  declare readonly [MARKER]: true;

  constructor(code: MinaraErrorCode, message: string, options: MinaraErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MinaraError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    Object.defineProperty(this, MARKER, { value: true, enumerable: false });
  }

  /** True for any `MinaraError` (or subclass), from any copy of the package. */
  static isInstance(value: unknown): value is MinaraError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARKER] === true;
  }

  /** A plain JSON shape for logs and HTTP bodies. */
  toJSON(): { name: string; code: MinaraErrorCode; message: string; retryable: boolean } {
    return { name: this.name, code: this.code, message: this.message, retryable: this.retryable };
  }
}
