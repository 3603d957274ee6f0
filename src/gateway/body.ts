import { HttpError, badRequest } from './http-error';

/** 1 MiB: the default request body limit. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Read a JSON object body with a size limit. The limit is checked against `Content-Length` before
 * anything is read, and again while streaming (chunked bodies): reading stops at the first byte past the
 * limit. Errors: 415 when the body is not `application/json`, 413 past the limit, 400 for an empty body,
 * invalid UTF-8, invalid JSON, or JSON that is not an object.
 */
/** The body as UTF-8 text, read up to `maxBytes` (413 past it): for routes that must verify the exact bytes (HMAC). */
export async function readRawText(request: Request, maxBytes: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const bytes = await readLimited(request, maxBytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('body: not valid UTF-8.');
  }
}

export async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new HttpError(415, 'HTTP_UNSUPPORTED_MEDIA_TYPE', `content-type: expected application/json, got ${type === '' ? 'none' : JSON.stringify(type)}.`);
  }
  const text = await readRawText(request, maxBytes);
  if (text.length === 0) throw badRequest('body: expected a JSON object, got an empty body.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`body: invalid JSON (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(`body: expected a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`);
  }
  return value as Record<string, unknown>;
}

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, 'HTTP_PAYLOAD_TOO_LARGE', `body: larger than the ${maxBytes}-byte limit.`);
}

/** Field helpers that name the field and what was expected. */
export const field = {
  string(body: Record<string, unknown>, name: string, opts: { optional?: boolean; min?: number; max?: number } = {}): string | undefined {
    const v = body[name];
    if (v === undefined && opts.optional) return undefined;
    if (typeof v !== 'string') throw badRequest(`${name}: expected a string, got ${describe(v)}.`);
    if (opts.min !== undefined && v.length < opts.min) throw badRequest(`${name}: expected at least ${opts.min} character(s).`);
    if (opts.max !== undefined && v.length > opts.max) throw badRequest(`${name}: expected at most ${opts.max} characters, got ${v.length}.`);
    return v;
  },
  boolean(body: Record<string, unknown>, name: string): boolean {
    const v = body[name];
    if (typeof v !== 'boolean') throw badRequest(`${name}: expected true or false, got ${describe(v)}.`);
    return v;
  },
  /** Reject keys outside `allowed`, naming the first unknown one. */
  only(body: Record<string, unknown>, allowed: readonly string[]): void {
    const extra = Object.keys(body).find((k) => !allowed.includes(k));
    if (extra !== undefined) throw badRequest(`${extra}: unknown field; expected only ${allowed.join(', ')}.`);
  },
};

export function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}
