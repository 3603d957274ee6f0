import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { renderArtifactHtml, VIEWER_CSP } from '../artifacts/viewer';
import { describeBytes } from '../files/file-store';
import { MinaraError } from '../errors/minara-error';
import { badRequest, HttpError, json, notFound } from './http-error';
import type { RouteContext, RouteHandler } from './router';
import { decodeParam } from './router';
import type { GatewayDeps } from './types';

/** Types served inline; anything else is a download (a stored file never runs in the gateway's origin). */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain', 'text/csv', 'application/json', 'text/markdown']);

/**
 * A lookup that found nothing in the caller's scope: answered 404 (never 403, so ids of other users cannot be
 * probed) and written to the audit log, since an id that exists for someone else reads the same.
 */
async function notFoundAudited(deps: GatewayDeps, what: 'artifact' | 'file', id: string, userId: string): Promise<never> {
  try {
    await deps.options.storage.audit.append({
      at: deps.now().toISOString(), toolName: `gateway:${what}s`, tier: 0, source: 'gateway', decision: 'blocked', code: 'NOT_FOUND',
      reason: `${what} not found in the caller's scope (missing, or another user's)`, durationMs: 0,
      argsJson: JSON.stringify({ [what === 'artifact' ? 'id' : 'key']: id.slice(0, 200), userId }),
    });
  } catch (error) {
    deps.logger.warn('gateway: could not audit a not-found lookup', { error: error instanceof Error ? error.message : String(error) });
  }
  throw notFound(`No ${what} "${id.slice(0, 200)}".`);
}

/** How long a signed view link works. */
export const VIEW_LINK_TTL_MS = 10 * 60_000;

/**
 * Signed view links: `GET /v1/artifacts/:id` returns `viewUrl` (`…/view?u=<user>&exp=<ms>&sig=<hmac>`), which a
 * page can put in an iframe `src` (a frame cannot send the bearer token). The HMAC key is random per gateway
 * instance, the signature binds artifact id, user and expiry, and the link expires after {@link VIEW_LINK_TTL_MS}.
 */
export function createViewLinks(now: () => Date) {
  const key = randomBytes(32);
  const mac = (id: string, userId: string, exp: number) => createHmac('sha256', key).update(`${id}\n${userId}\n${exp}`).digest('base64url');
  return {
    sign(id: string, userId: string): string {
      const exp = now().getTime() + VIEW_LINK_TTL_MS;
      return `/v1/artifacts/${encodeURIComponent(id)}/view?u=${encodeURIComponent(userId)}&exp=${exp}&sig=${mac(id, userId, exp)}`;
    },
    /** The user a valid link was signed for, or undefined. */
    verify(id: string, url: URL): string | undefined {
      const userId = url.searchParams.get('u');
      const exp = Number(url.searchParams.get('exp'));
      const sig = url.searchParams.get('sig') ?? '';
      if (!userId || !Number.isSafeInteger(exp) || exp < now().getTime()) return undefined;
      const want = Buffer.from(mac(id, userId, exp));
      const got = Buffer.from(sig);
      return got.length === want.length && timingSafeEqual(got, want) ? userId : undefined;
    },
  };
}

function artifactsOf(deps: GatewayDeps) {
  const store = deps.options.artifacts;
  if (!store) throw notFound('Artifacts are not enabled on this gateway.');
  return store;
}

/** `GET /v1/artifacts`: the caller's artifacts, newest first (`?session=`, `?limit=` 1–200). */
export function listArtifacts(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId }: RouteContext) => {
    const store = artifactsOf(deps);
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 200)) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(limitRaw)}.`);
    const session = url.searchParams.get('session');
    const list = await store.list({ userId }, { limit: limitRaw === null ? 50 : Number(limitRaw), ...(session ? { sessionId: session } : {}) });
    return json(200, { artifacts: list.map(({ data: _data, ...meta }) => ({ ...meta, view: `/v1/artifacts/${meta.id}/view` })) });
  };
}

/** `GET /v1/artifacts/:id`: the artifact with its payload (`:id` may be an id or a URI). */
export function getArtifact(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const id = decodeParam('id', params['id'] ?? '');
    const artifact = await artifactsOf(deps).find({ userId }, id);
    if (!artifact) return notFoundAudited(deps, 'artifact', id, userId);
    return json(200, { artifact: { ...artifact, view: `/v1/artifacts/${artifact.id}/view`, ...(deps.viewLinks ? { viewUrl: deps.viewLinks.sign(artifact.id, userId) } : {}) } });
  };
}

/**
 * `GET /v1/artifacts/:id/view`: the self-contained HTML viewer, sandboxed by its CSP (`sandbox allow-scripts`:
 * an opaque origin that cannot read the gateway's cookies or storage; no network).
 */
export function viewArtifact(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const id = decodeParam('id', params['id'] ?? '');
    const artifact = await artifactsOf(deps).find({ userId }, id);
    if (!artifact) return notFoundAudited(deps, 'artifact', id, userId);
    const html = renderArtifactHtml(artifact);
    return new Response(html, {
      status: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8', 'content-length': String(Buffer.byteLength(html)), 'cache-control': 'private, no-store',
        'content-security-policy': `${VIEWER_CSP}; sandbox allow-scripts`, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
      },
    });
  };
}

function filesOf(deps: GatewayDeps) {
  const files = deps.options.files;
  if (!files) throw notFound('File uploads are not enabled on this gateway.');
  return files;
}

/**
 * `POST /v1/files`: the body is the file's bytes (`Content-Type` as declared; `?filename=` or `x-filename`).
 * 413 naming the limit past the file store's `maxBytes` (checked on `Content-Length` and while reading), 400
 * for an empty body; the content type is sniffed. Answers `201 { file: { key, url, mediaType, … } }`.
 */
export function postFile(deps: GatewayDeps): RouteHandler {
  return async ({ request, url, userId }: RouteContext) => {
    const files = filesOf(deps);
    const limit = files.maxBytes;
    const tooLarge = () => new HttpError(413, 'FILE_TOO_LARGE', `body: the file is larger than the ${describeBytes(limit)} upload limit.`, { limitBytes: limit });
    const declared = request.headers.get('content-length');
    if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge();
    const filename = url.searchParams.get('filename') ?? request.headers.get('x-filename') ?? undefined;
    if (filename !== undefined && (filename.length > 255 || /[\u0000-\u001f]/.test(filename))) throw badRequest('filename: expected at most 255 printable characters.');
    const session = url.searchParams.get('session') ?? undefined;
    const chunks: Uint8Array[] = [];
    let total = 0;
    if (request.body) {
      const reader = request.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > limit) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    }
    if (total === 0) throw new HttpError(400, 'FILE_EMPTY', 'body: the file is empty (0 bytes).');
    const bytes = Buffer.concat(chunks, total);
    try {
      const file = await files.put({
        userId, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        ...(filename ? { filename } : {}), ...(request.headers.get('content-type') ? { contentType: request.headers.get('content-type')! } : {}), ...(session ? { sessionId: session } : {}),
      });
      return json(201, { file });
    } catch (error) {
      if (MinaraError.isInstance(error) && error.code === 'FILE_TOO_LARGE') throw tooLarge();
      throw error;
    }
  };
}

/** `GET /v1/files/:key`: the bytes, with the sniffed type; only safe types inline, everything else as a download. */
export function getFile(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const key = decodeParam('key', params['key'] ?? '');
    const read = await filesOf(deps).read({ userId }, key);
    if (!read) return notFoundAudited(deps, 'file', key, userId);
    const { file, bytes } = read;
    const inline = INLINE_TYPES.has(file.mediaType);
    const name = (file.filename ?? file.key).replace(/[^\w.\- ]/g, '_');
    return new Response(bytes, {
      status: 200,
      headers: {
        'content-type': inline ? (file.mediaType.startsWith('text/') ? `${file.mediaType}; charset=utf-8` : file.mediaType) : 'application/octet-stream',
        'content-length': String(bytes.byteLength), 'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${name}"`,
        'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox", 'cache-control': 'private, max-age=3600',
      },
    });
  };
}
