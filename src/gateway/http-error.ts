import type { MinaraErrorCode } from '../errors/codes';
import { MinaraError } from '../errors/minara-error';

/**
 * An error that knows its HTTP status. Route handlers throw it; the gateway turns it into
 * `{ "error": { "code", "message" } }` with that status (plus any `extra` top-level fields).
 */
export class HttpError extends MinaraError {
  readonly status: number;
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  constructor(status: number, code: MinaraErrorCode, message: string, extra?: Readonly<Record<string, unknown>>) {
    super(code, message);
    this.name = 'HttpError';
    this.status = status;
    this.extra = extra;
  }
}

/** The HTTP status a {@link MinaraError} code maps to when a route lets one escape. */
export function statusForCode(code: MinaraErrorCode): number {
  switch (code) {
    case 'HTTP_BAD_REQUEST':
    case 'INVALID_ARGUMENT':
    case 'MEMORY_INVALID':
    case 'LEARNING_INVALID':
    case 'SANDBOX_ESCAPE':
    case 'TOOL_INPUT_INVALID':
    case 'ARTIFACT_INVALID':
    case 'FILE_EMPTY':
    case 'FILE_UNREADABLE':
      return 400;
    case 'HTTP_UNAUTHORIZED':
      return 401;
    case 'HTTP_FORBIDDEN':
    case 'STOP_RELEASE_FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
    case 'WORKSPACE_FILE_NOT_EDITABLE':
    case 'APPROVAL_NOT_FOUND':
    case 'ARTIFACT_NOT_FOUND':
      return 404;
    case 'HTTP_METHOD_NOT_ALLOWED':
      return 405;
    case 'HTTP_CONFLICT':
    case 'WORKSPACE_CONFLICT':
    case 'WORKSPACE_LOCK_HELD':
    case 'APPROVAL_ALREADY_USED':
    case 'APPROVAL_EXPIRED':
    case 'APPROVAL_INVALID':
    case 'LEARNING_TRANSITION_REFUSED':
      return 409;
    case 'HTTP_PAYLOAD_TOO_LARGE':
    case 'MEMORY_TOO_LARGE':
    case 'FILE_TOO_LARGE':
      return 413;
    case 'HTTP_UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'HTTP_TOO_MANY_REQUESTS':
      return 429;
    case 'HTTP_UNAVAILABLE':
    case 'STORAGE_BUSY':
    case 'STORAGE_UNAVAILABLE':
      return 503;
    default:
      return 500;
  }
}

/** A JSON response. */
export function json(status: number, body: unknown, headers?: Readonly<Record<string, string>>): Response {
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', ...headers },
  });
}

/** A JSON error response: `{ "error": { "code", "message" }, ...extra }`. */
export function jsonError(
  status: number,
  code: MinaraErrorCode,
  message: string,
  extra?: Readonly<Record<string, unknown>>,
  headers?: Readonly<Record<string, string>>,
): Response {
  return json(status, { error: { code, message }, ...extra }, headers);
}

/**
 * Turn anything a route threw into a JSON error response. Unknown errors become a 500 whose message
 * does not leak internals; `onInternal` sees the original.
 */
export function errorResponse(error: unknown, onInternal: (error: unknown) => void): Response {
  if (error instanceof HttpError) return jsonError(error.status, error.code, error.message, error.extra);
  if (MinaraError.isInstance(error)) {
    const status = statusForCode(error.code);
    if (status >= 500) onInternal(error);
    return jsonError(status, error.code, status >= 500 && error.code === 'INTERNAL' ? 'Internal error.' : error.message);
  }
  onInternal(error);
  return jsonError(500, 'INTERNAL', 'Internal error.');
}

export const badRequest = (message: string): HttpError => new HttpError(400, 'HTTP_BAD_REQUEST', message);
export const notFound = (message: string): HttpError => new HttpError(404, 'NOT_FOUND', message);
