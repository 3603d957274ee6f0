/**
 * One request through the gateway, in the order its checks must run: the base path, the perimeter's Host check
 * (every route), the routes that carry their own proof (a webhook's HMAC, a signed artifact view link, the one-time
 * login link) and the web app's public files, then authentication (the shared token, the MCP hosts' token, or the
 * per-user authenticator), the perimeter's write check, routing, and who the caller is.
 */
import { DECIDE_SCOPE, type GatewayIdentity, type GatewayQuota } from './auth';
import { viewArtifact } from './artifact-routes';
import type { EventStreams } from './event-routes';
import { USER_ID, type GatewayConfig } from './gateway-config';
import type { GatewayRoutes } from './gateway-routes';
import { badRequest, HttpError, jsonError } from './http-error';
import { decodeParam, methodNotAllowed } from './router';
import type { GatewayDeps } from './types';

/** What a gateway keeps between requests. */
export interface GatewayState {
  readonly config: GatewayConfig;
  readonly deps: GatewayDeps;
  readonly routes: GatewayRoutes;
  readonly events: EventStreams;
  /** Compares a request's `Authorization` with the shared token (when `authToken` is set). */
  readonly checkToken: ((authorization: string | null) => boolean) | undefined;
  /** Compares a request's `Authorization` with the MCP hosts' token (when `mcpToken` is set). */
  readonly checkMcpToken: ((authorization: string | null) => boolean) | undefined;
  /** The identity `authenticate` gave each request in flight. */
  readonly authenticated: WeakMap<Request, GatewayIdentity>;
  /** Requests that came with the MCP hosts' token. */
  readonly mcpCallers: WeakSet<Request>;
  /** Set by `close()`: new turns are refused. */
  closing: boolean;
}

/** Who a request is and what it may do. */
interface Identity {
  userId: string;
  operator: boolean;
  canDecide: boolean;
  quota?: GatewayQuota | undefined;
}

/**
 * Who the request is and what it may do: the authenticator's identity (decides with the `approvals:decide`
 * scope), the trusted proxy's headers (its scopes header), the MCP token (request only), the shared token (a
 * person's), or the single user (decides with the session cookie of the one-time login link).
 */
async function identify(s: GatewayState, request: Request, url: URL): Promise<Identity> {
  const { config } = s;
  const who = s.authenticated.get(request);
  if (who) return { userId: who.userId, operator: (who.roles ?? []).includes('operator'), canDecide: (who.scopes ?? []).includes(DECIDE_SCOPE), ...(who.quota ? { quota: who.quota } : {}) };
  if (config.trustUserHeader) {
    const header = request.headers.get(config.userHeader);
    if (header !== null && !USER_ID.test(header)) throw badRequest(`${config.userHeader}: expected 1–128 characters of letters, digits, ".", "_", ":", "@" or "-".`);
    const roles = (request.headers.get(config.rolesHeader) ?? '').split(',').map((r) => r.trim());
    const scopes = (request.headers.get(config.scopesHeader) ?? '').split(/[\s,]+/);
    return { userId: header ?? config.defaultUserId, operator: roles.includes('operator'), canDecide: scopes.includes(DECIDE_SCOPE) };
  }
  if (s.mcpCallers.has(request)) return { userId: config.defaultUserId, operator: false, canDecide: false };
  if (config.localLogin) return { userId: config.defaultUserId, operator: true, canDecide: config.localLogin.holdsSession(request, url) };
  return { userId: config.defaultUserId, operator: true, canDecide: true };
}

/** The request's URL and its path below the base path (a path outside it is a 404). */
function locate(s: GatewayState, request: Request): { url: URL; pathname: string } {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw badRequest('url: not a valid URL.');
  }
  const { basePath } = s.config;
  let pathname = url.pathname;
  if (basePath !== '') {
    if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) throw new HttpError(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname} (the gateway is mounted at ${basePath}).`);
    pathname = pathname.slice(basePath.length) || '/';
  }
  return { url, pathname };
}

/**
 * The answer of a route that does not take the gateway's authentication (a webhook, a signed view link, the
 * one-time login link, the web app's files), or `undefined` to go on to authentication.
 */
async function beforeAuthentication(s: GatewayState, request: Request, url: URL, pathname: string, isHealth: boolean): Promise<Response | undefined> {
  const { config, deps } = s;
  // Webhooks authenticate with their own HMAC (a sender cannot hold the gateway token).
  const webhookMatch = /^\/v1\/signals\/webhook\/([^/]+)$/.exec(pathname);
  if (webhookMatch && request.method === 'POST') {
    const identity = { userId: config.defaultUserId, operator: false, canDecide: false };
    return s.routes.webhookRoute({ request, url, params: { name: webhookMatch[1] ?? '' }, ...identity });
  }
  // A signed artifact view link stands in for the token (an iframe cannot send one); it names its user.
  const viewMatch = /^\/v1\/artifacts\/([^/]+)\/view$/.exec(pathname);
  if (viewMatch && deps.viewLinks && (request.method === 'GET' || request.method === 'HEAD') && url.searchParams.has('sig')) {
    const id = decodeParam('id', viewMatch[1] ?? '');
    const signedFor = deps.viewLinks.verify(id, url);
    if (!signedFor) throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'sig: the view link is invalid or expired; ask GET /v1/artifacts/:id for a fresh viewUrl.');
    return viewArtifact(deps)({ request, url, params: { id }, userId: signedFor, operator: false, canDecide: false });
  }
  // The one-time link of a token-less gateway: sets the session cookie deciding needs, then sends the browser to the app.
  if (config.localLogin && pathname === '/login' && request.method === 'GET') return config.localLogin.handle(request, url);
  // The web app's files are public (the page asks for a token); API routes are not served from here.
  if (config.staticFiles && !isHealth && !pathname.startsWith('/v1/') && pathname !== '/mcp') {
    if (config.basePath !== '' && url.pathname === config.basePath) return new Response(null, { status: 308, headers: { location: `${config.basePath}/${url.search}` } });
    const file = await config.staticFiles(request.method, pathname);
    if (file) return file;
  }
  return undefined;
}

/** The per-user authenticator's verdict on a request: its identity is remembered, or the request is a 401. */
async function authenticateUser(s: GatewayState, request: Request): Promise<void> {
  const { authenticate, logger, defaultUserId } = s.config;
  let who: GatewayIdentity | null;
  try {
    who = await authenticate!(request);
  } catch (error) {
    // The reason is logged for the operator, never sent: it may describe the key or the token.
    logger.warn('gateway: authentication failed', { reason: error instanceof Error ? error.name : 'error' });
    who = null;
  }
  if (!who || typeof who.userId !== 'string' || !USER_ID.test(who.userId)) {
    throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'Authorization: expected "Bearer <token>" with a valid, unexpired token for this gateway.');
  }
  // The ids the host uses for itself (its default user owns session-less approvals) are never a token's.
  if (who.userId === defaultUserId) {
    logger.warn('gateway: a token claimed the host\'s own user id', { userId: who.userId });
    throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'Authorization: this token names a user id reserved for the host.');
  }
  s.authenticated.set(request, who);
}

/** Authentication, before routing (an unauthenticated caller cannot map the routes); health is open. */
async function authenticateRequest(s: GatewayState, request: Request, pathname: string, isHealth: boolean): Promise<void> {
  if (s.checkToken && !isHealth && !s.checkToken(request.headers.get('authorization'))) {
    // The MCP hosts' token opens /mcp and nothing else: a host can ask for consent, never read or give it.
    if (!s.checkMcpToken?.(request.headers.get('authorization'))) throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'Authorization: expected "Bearer <token>" with the gateway token.');
    if (pathname !== '/mcp' || s.routes.mcpRoute === undefined) throw new HttpError(403, 'HTTP_FORBIDDEN', 'This token is for MCP hosts: it reaches /mcp only (a person uses the gateway token).');
    s.mcpCallers.add(request);
  }
  if (s.config.authenticate && !isHealth) await authenticateUser(s, request);
}

/** Answer one request (errors are thrown as `HttpError`s; `fetchGateway` turns them into responses). */
export async function handleRequest(s: GatewayState, request: Request): Promise<Response> {
  const { url, pathname } = locate(s, request);
  const isHealth = pathname === '/healthz' && (request.method === 'GET' || request.method === 'HEAD');
  // The perimeter first, for every route: a foreign Host (DNS rebinding) reaches nothing.
  s.config.perimeter.checkHost(request, url);
  const early = await beforeAuthentication(s, request, url, pathname, isHealth);
  if (early) return early;
  await authenticateRequest(s, request, pathname, isHealth);
  // No route runs a write from another site: a foreign Origin or Sec-Fetch-Site, or a POST a cross-site form could send.
  s.config.perimeter.checkWrite(request, url);
  const match = s.routes.router.match(request.method, pathname);
  if (match.kind === 'not-found') throw new HttpError(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname}.`);
  if (match.kind === 'method-not-allowed') {
    const e = methodNotAllowed(request.method, match.allow);
    return jsonError(405, e.code, e.message, undefined, { allow: match.allow.join(', ') });
  }
  const identity = await identify(s, request, url);
  return match.handler({ request, url, params: match.params, ...identity });
}
