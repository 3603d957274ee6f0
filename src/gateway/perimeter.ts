import { isIP } from 'node:net';
import { MinaraError } from '../errors/minara-error';
import { HttpError } from './http-error';

/**
 * The gateway's perimeter: the one place that decides whether a request may reach any route at all, judged
 * from what a browser cannot be made to lie about. Three checks, in order:
 *
 * 1. **Host** (every request, static files and `/healthz` included). A web page whose name re-resolves to
 *    127.0.0.1 (DNS rebinding) is same-origin with a local server, but its requests still carry its own name in
 *    `Host`. Allowed: loopback names (`localhost`, `*.localhost`), IP literals (no name was resolved, so nothing
 *    can rebind) and the operator's `allowedHosts`. A request with no `Host` at all is an in-process call (a
 *    browser always sends one).
 * 2. **Origin and fetch metadata** (state-changing methods). A present `Origin` must be the request's own (or
 *    one of `allowedOrigins`); `null` (sandboxed frames, `data:` pages) is foreign; `Sec-Fetch-Site` other than
 *    `same-origin` or `none` is refused.
 * 3. **No CORS-simple writes.** A `POST` a cross-site form could send (no body type, `text/plain`, a form type,
 *    and no header a page cannot set without a preflight) is refused, so a browser that omitted `Origin` still
 *    cannot reach a route. JSON bodies, `PUT`/`PATCH`/`DELETE`, `Authorization` and any `x-…` header force a
 *    preflight, which the gateway never grants.
 *
 * Signed webhooks skip 2 and 3 (servers send them, their HMAC is their authority); never 1.
 * `createGateway` runs check 1 first of all, and 2–3 after authentication and before routing.
 */
export interface Perimeter {
  /** Check 1, before anything else: throw the 403 a foreign `Host` gets. */
  checkHost(request: Request, url: URL): void;
  /** Checks 2 and 3, before any route runs (after authentication, so an unauthenticated probe still gets its 401). */
  checkWrite(request: Request, url: URL): void;
}

/** Host names a gateway always answers to: loopback names and IP literals. */
export function isAlwaysAllowedHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  return isIP(h) !== 0;
}

const HOST_ENTRY = /^\.?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Check `allowedHosts` entries: bare host names (`agent.example.com`), or a leading dot for a name and its
 * subdomains (`.fleet.example.com`). No scheme, port, path or `*`. Returns them lower-cased.
 * @throws MinaraError `CONFIG_INVALID` naming `where` and the bad entry
 */
export function checkAllowedHosts(entries: readonly string[], where: string): string[] {
  if (!Array.isArray(entries)) throw new MinaraError('CONFIG_INVALID', `${where}: expected a list of host names.`);
  return entries.map((raw) => {
    const e = typeof raw === 'string' ? raw.trim().toLowerCase().replace(/\.$/, '') : '';
    if (e === '' || !HOST_ENTRY.test(e)) {
      throw new MinaraError('CONFIG_INVALID', `${where}: ${JSON.stringify(raw)} is not a host name; expected names like "agent.example.com" or ".example.com" (a name and its subdomains), without scheme, port or path.`);
    }
    return e;
  });
}

/**
 * Check `allowedOrigins` entries: `scheme://host[:port]` exactly as a browser sends `Origin`.
 * @throws MinaraError `CONFIG_INVALID` naming `where` and the bad entry
 */
export function checkAllowedOrigins(entries: readonly string[], where: string): string[] {
  if (!Array.isArray(entries)) throw new MinaraError('CONFIG_INVALID', `${where}: expected a list of origins.`);
  return entries.map((raw) => {
    let parsed: URL | undefined;
    try {
      parsed = typeof raw === 'string' ? new URL(raw) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.origin !== raw.replace(/\/$/, '')) {
      throw new MinaraError('CONFIG_INVALID', `${where}: ${JSON.stringify(raw)} is not an origin; expected "https://app.example.com" (scheme, host and optional port, nothing else).`);
    }
    return parsed.origin;
  });
}

/** `host[:port]` of a Host header, or undefined when it is not a well-formed authority. */
function parseHostHeader(value: string): { hostname: string; authority: string } | undefined {
  const v = value.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) return undefined;
  const bracketed = m[1]!;
  const hostname = (bracketed.startsWith('[') ? bracketed.slice(1, -1) : bracketed).replace(/\.$/, '');
  if (bracketed.startsWith('[') && isIP(hostname) !== 6) return undefined;
  const port = m[2];
  // Default ports name the same origin as no port.
  const authority = port === undefined || port === '80' || port === '443' ? bracketed : `${bracketed}:${port}`;
  return { hostname, authority };
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const SIMPLE_TYPES = new Set(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data']);

/** Whether a page could send this request without a CORS preflight (a "simple" request). */
function isCorsSimple(request: Request): boolean {
  if (request.method !== 'POST') return false;
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== '' && !SIMPLE_TYPES.has(type)) return false;
  for (const name of request.headers.keys()) {
    if (name === 'authorization' || name.startsWith('x-') || name.startsWith('mcp-')) return false;
  }
  return true;
}

/** Build the perimeter from checked `allowedHosts` / `allowedOrigins`. */
export function createPerimeter(options: { readonly allowedHosts: readonly string[]; readonly allowedOrigins: readonly string[] }): Perimeter {
  const exact = new Set(options.allowedHosts.filter((h) => !h.startsWith('.')));
  const suffixes = options.allowedHosts.filter((h) => h.startsWith('.'));
  const origins = new Set(options.allowedOrigins);
  const hostAllowed = (hostname: string) =>
    isAlwaysAllowedHost(hostname) || exact.has(hostname) || suffixes.some((s) => hostname.endsWith(s) || hostname === s.slice(1));

  /** The request's authority: an in-process call (`gateway.fetch(new Request(url))`) carries no Host header, so its URL is its host. */
  const hostOf = (request: Request, url: URL) => parseHostHeader(request.headers.get('host') ?? url.host);
  return {
    checkHost(request, url) {
      const header = request.headers.get('host');
      // No Host header: an in-process call (`gateway.fetch(new Request(…))` from the host's own code). Every
      // browser request carries one (HTTP/1.1 requires it; Node answers 400 without it), so nothing rebinds here.
      if (header === null) return;
      const host = hostOf(request, url);
      if (!host || !hostAllowed(host.hostname)) {
        throw new HttpError(
          403,
          'HTTP_HOST_NOT_ALLOWED',
          `Host: ${JSON.stringify(header.slice(0, 100))} is not a name this gateway answers to (loopback names and IP addresses always are; add a public name with allowedHosts or GATEWAY_ALLOWED_HOSTS).`,
        );
      }
    },
    checkWrite(request, url) {
      if (!STATE_CHANGING.has(request.method)) return;
      const host = hostOf(request, url);
      if (!host) return; // checkHost refused it already
      const origin = request.headers.get('origin');
      if (origin !== null && !origins.has(origin)) {
        let sameOrigin = false;
        if (origin !== 'null') {
          try {
            const o = new URL(origin);
            sameOrigin = (o.protocol === 'http:' || o.protocol === 'https:') && parseHostHeader(o.host)?.authority === host.authority;
          } catch {
            sameOrigin = false;
          }
        }
        if (!sameOrigin) throw new HttpError(403, 'HTTP_CROSS_SITE', `Origin: ${JSON.stringify(origin.slice(0, 100))} may not change anything here (a page of another site); add it to allowedOrigins if it is your own front end.`);
      }
      const site = request.headers.get('sec-fetch-site');
      if (site !== null && site !== 'same-origin' && site !== 'none' && !(origin !== null && origins.has(origin))) {
        throw new HttpError(403, 'HTTP_CROSS_SITE', `Sec-Fetch-Site: ${JSON.stringify(site.slice(0, 40))}: a request from another site may not change anything here.`);
      }
      if (isCorsSimple(request)) {
        throw new HttpError(
          403,
          'HTTP_CROSS_SITE',
          'A POST that a cross-site form could send is refused: send a JSON body (content-type: application/json), the file\'s real content type, or a header a form cannot set (x-filename for uploads, or x-minara-request: 1).',
        );
      }
    },
  };
}
