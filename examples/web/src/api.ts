/** Talking to the gateway from the page: same origin, relative paths (works under any basePath), an optional token. */

const TOKEN_KEY = 'minara.token';

export function getToken(): string | undefined {
  return localStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function setToken(token: string | undefined): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

const PROOF_KEY = 'minara.proof';
const PROOF_FRAGMENT = /^#minara-proof=([A-Za-z0-9_-]{20,200})$/;

/**
 * The second half of a token-less gateway's login: the one-time link `minara serve` printed sets an HttpOnly cookie
 * and sends the browser to `#minara-proof=…`. The cookie alone decides nothing, because browsers send a `localhost`
 * cookie to every port of it (any other local server the browser visits gets it). The proof stays in this origin's
 * `localStorage` (one per port; no other server sees it) and leaves the address bar at once. Call before the router
 * reads `location.hash`.
 */
export function takeLoginProof(): void {
  const match = PROOF_FRAGMENT.exec(location.hash);
  if (!match) return;
  localStorage.setItem(PROOF_KEY, match[1]!);
  history.replaceState(null, '', `${location.pathname}${location.search}`);
}

/** A URL of the gateway, relative to the page (so a gateway mounted at /api serves the app at /api/). */
export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ''), document.baseURI).toString();
}

/**
 * The token the person typed, when the gateway needs one. A gateway without authentication needs none: the browser
 * that opened the one-time link `minara serve` printed holds an HttpOnly session cookie, sent with every
 * same-origin request, and its proof ({@link takeLoginProof}), sent here; the two together are what lets this page
 * (and not an MCP host, a script on the machine, or another local server that saw the cookie) decide approvals.
 */
export function authHeaders(): Record<string, string> {
  const token = getToken();
  const proof = localStorage.getItem(PROOF_KEY);
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(proof ? { 'x-minara-proof': proof } : {}) };
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

/** A view of the person's data that the server says changed (`GET /v1/events`). */
export type LiveView = 'portfolio' | 'memory' | 'approvals' | 'audit';

type ViewListener = (views: readonly LiveView[]) => void;
const viewListeners = new Set<ViewListener>();
let liveStream: AbortController | undefined;

/**
 * One `GET /v1/events` stream for the whole page (read with fetch, so it carries the same credentials as every
 * other call), opened while a view listens and reconnected after a drop. Each `invalidate` message names the
 * views that changed; the pages reload those instead of polling.
 */
function ensureLiveStream(): void {
  if (liveStream) return;
  const controller = new AbortController();
  liveStream = controller;
  void (async () => {
    let delay = 1000;
    while (!controller.signal.aborted) {
      try {
        const response = await fetch(apiUrl('v1/events'), { headers: authHeaders(), signal: controller.signal });
        if (response.status === 404 || response.status === 401) return; // no live updates on this server
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        delay = 1000;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!/^event: invalidate$/m.test(frame)) continue;
            const data = /^data: (.+)$/m.exec(frame)?.[1];
            const views = data ? ((JSON.parse(data) as { views?: LiveView[] }).views ?? []) : [];
            for (const listener of [...viewListeners]) listener(views);
          }
        }
      } catch {
        if (controller.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  })().finally(() => {
    if (liveStream === controller) liveStream = undefined;
  });
}

/** Call `reload` whenever the server says `view` changed (a trade filled, a memory was written, …). */
export function onViewChanged(view: LiveView, reload: () => void): () => void {
  const listener: ViewListener = (views) => {
    if (views.includes(view)) reload();
  };
  viewListeners.add(listener);
  ensureLiveStream();
  return () => {
    viewListeners.delete(listener);
    if (viewListeners.size === 0) {
      liveStream?.abort();
      liveStream = undefined;
    }
  };
}
