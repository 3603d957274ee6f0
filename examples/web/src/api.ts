/** Talking to the gateway from the page: same origin, relative paths (works under any basePath), an optional token. */

const TOKEN_KEY = 'minara.token';

export function getToken(): string | undefined {
  return localStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function setToken(token: string | undefined): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** A URL of the gateway, relative to the page (so a gateway mounted at /api serves the app at /api/). */
export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ''), document.baseURI).toString();
}

/**
 * The token the person typed, when the gateway needs one. A gateway without authentication needs none: the browser
 * that opened the one-time link `minara serve` printed holds an HttpOnly session cookie, sent with every
 * same-origin request, and that cookie is what lets this page (and not an MCP host or a script on the machine)
 * decide approvals.
 */
export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** An error answer of the gateway: `{ error: { code, message } }` plus the rest of the body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: Record<string, unknown>;
  constructor(status: number, code: string, message: string, body: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** Fetch JSON from the gateway; non-2xx answers throw an {@link ApiError}; 401 fires `minara:unauthorized`. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(apiUrl(path), {
    method: init.method ?? 'GET',
    // x-minara-request: a header a cross-site form cannot send, so the gateway knows a body-less POST is ours.
    headers: { ...authHeaders(), 'x-minara-request': '1', ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new Event('minara:unauthorized'));
    const error = (body.error ?? {}) as { code?: string; message?: string };
    throw new ApiError(response.status, error.code ?? `HTTP_${response.status}`, error.message ?? response.statusText, body);
  }
  return body as T;
}

/** What `GET /v1/info` says about the server. */
export interface ServerInfo {
  /** Who this page is to the gateway; `canDecide` is false until the browser opened the one-time link (token-less gateway). */
  readonly identity?: { readonly userId: string; readonly canDecide: boolean };
  readonly model: { readonly configured: boolean; readonly label?: string; readonly reason?: string };
  readonly features: { readonly memory: boolean; readonly workspace: boolean; readonly approvals: boolean; readonly deliveries?: boolean };
}
