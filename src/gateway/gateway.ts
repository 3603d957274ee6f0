import { createEventStreams } from './event-routes';
import { MinaraError } from '../errors/minara-error';
import { generateId as defaultGenerateId } from '../util/ids';
import { createConsoleLogger } from '../util/logger';
import { createActiveStreams } from './active-streams';
import { decideApproval, listApprovals } from './approvals-routes';
import { createBearerCheck, DECIDE_SCOPE, type GatewayIdentity, type GatewayQuota } from './auth';
import { controlRoutes } from './control-routes';
import { checkQuotaDefaults, createQuotaGate, USER_TURN_SOURCES } from './quotas';
import { createSessionLocks } from './session-lock';
import { DEFAULT_MAX_BODY_BYTES } from './body';
import { assertSessionVisible, getChat, postChat, resumeChat } from './chat-routes';
import { badRequest, errorResponse, HttpError, json, jsonError } from './http-error';
import { auditRoutes } from './audit-routes';
import { breakerRoutes } from './breaker-routes';
import { getShadowReport } from './shadow-routes';
import { financeRoutes } from './finance-routes';
import { learningRoutes } from './learning-routes';
import { createViewLinks, getArtifact, getFile, listArtifacts, postFile, viewArtifact } from './artifact-routes';
import { listBacktests } from './backtest-routes';
import { backtestRunRoutes } from './backtest-run-routes';
import { createMemory, decideHeldMemory, deleteMemory, deleteProfile, listMemory, listProfile, restoreMemory, setProfile, updateMemory } from './memory-routes';
import { checkAllowedHosts, checkAllowedOrigins, createPerimeter } from './perimeter';
import { createRouter, decodeParam, methodNotAllowed, type RouteHandler } from './router';
import { createStaticFiles } from './static-files';
import { createLocalLogin } from './local-login';
import { checkWebhooks, webhookSignal } from './webhook-routes';
import { workflowRoutes } from './workflow-routes';
import { alertRoutes } from './alert-routes';
import type { Gateway, GatewayDeps, GatewayOptions } from './types';
import { getWorkspaceFile, listWorkspaceFiles, putWorkspaceFile } from './workspace-routes';

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * Create the HTTP gateway as a web-standard fetch handler (`Request` → `Response`), so it mounts in
 * Node `http` (see `serveGateway`), Hono, a Next.js route handler or Bun unchanged.
 *
 * Routes: `GET /healthz` (open), `POST /v1/chat` (AI SDK UI message stream, for `useChat`),
 * `GET /v1/chat/:id/stream` (resume; 204 when idle), `/v1/memory` (list, create, edit, soft delete,
 * restore), `/v1/workspace/files` (sha256 optimistic concurrency), `/v1/approvals` (list, decide + resume).
 * See `docs/gateway.md` for the request and response of each.
 *
 * @example
 * ```ts
 * import { createGateway, serveGateway } from '@minara/agent/gateway';
 *
 * const gateway = createGateway({ runtime, storage, tools, memoryFor, workspace, authToken: process.env.GATEWAY_AUTH_TOKEN });
 * const { url } = await serveGateway({ gateway, port: 8080 });
 * // Next.js: export const POST = (req: Request) => gateway.fetch(req);
 * ```
 */
export function createGateway(options: GatewayOptions): Gateway {
  if (!options || typeof options !== 'object') throw new MinaraError('CONFIG_INVALID', 'createGateway: options are required.');
  if (!options.runtime || typeof options.runtime.run !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "runtime" must be an AgentRuntime (createAgentRuntime).');
  if (!options.storage || typeof options.storage.conversations?.getSession !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "storage" must be a Storage.');
  if (!options.tools || typeof options.tools.approvals?.get !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "tools" must be a ToolRegistry (createToolRegistry).');
  const {
    authToken,
    maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
    defaultUserId = 'default',
    userHeader = 'x-minara-user',
    rolesHeader = 'x-minara-roles',
    scopesHeader = 'x-minara-scopes',
    trustUserHeader = false,
    mcpToken,
    authenticate,
    logger = createConsoleLogger({ level: 'warn' }),
    now = () => new Date(),
    generateId = defaultGenerateId,
    basePath = '',
    web,
    modelStatus,
  } = options;
  if (web !== undefined && (typeof web !== 'object' || web === null || typeof web.dir !== 'string' || web.dir === '')) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: "web" must be { dir: "<a directory with index.html>" }.');
  }
  const staticFiles = web ? createStaticFiles(web.dir) : undefined;
  if (typeof basePath !== 'string' || (basePath !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath))) {
    throw new MinaraError('CONFIG_INVALID', `createGateway: "basePath" must be "" or a path like "/api" (segments of letters, digits, ".", "_", "~", "-"; no trailing slash), got ${JSON.stringify(basePath)}.`);
  }
  // Without any authentication, deciding needs the cookie the one-time link (printed by whoever started the
  // server) sets; the page itself carries nothing (see local-login.ts).
  const singleUser = authToken === undefined && authenticate === undefined && !trustUserHeader;
  const localLogin = singleUser ? createLocalLogin(basePath) : undefined;
  if (authToken !== undefined && (typeof authToken !== 'string' || authToken.length < 16 || /\s/.test(authToken))) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: "authToken" must be a string of at least 16 characters without whitespace (e.g. `openssl rand -hex 32`).');
  }
  if (authenticate !== undefined && typeof authenticate !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "authenticate" must be a function (request) => { userId, roles } | null.');
  if (authenticate !== undefined && authToken !== undefined) {
    throw new MinaraError('CONFIG_INVALID', 'createGateway: give "authenticate" (per-user) or "authToken" (one shared token), not both.');
  }
  // With per-user identities, one workspace object would carry each user's heartbeat and journal (session and
  // approval ids) into every other user's prompt: the runtime must give each user their own view.
  const runtimeOptions = options.runtime.options as { readonly workspace?: unknown; readonly sharedWorkspace?: boolean } | undefined;
  if ((authenticate !== undefined || trustUserHeader) && typeof runtimeOptions?.workspace === 'object' && runtimeOptions.workspace !== null && runtimeOptions.sharedWorkspace !== true) {
    throw new MinaraError(
      'CONFIG_INVALID',
      'createGateway: per-user identities ("authenticate" or "trustUserHeader") over a runtime whose "workspace" is one Workspace object would put one user\'s sessions and approvals in another\'s prompt. Give createAgentRuntime "workspace: (scope) => …" (createTenantWorkspace per user), or "sharedWorkspace: true" (each user then gets a tenant view over it). See docs/gateway.md.',
    );
  }
  if (mcpToken !== undefined) {
    if (authToken === undefined) throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcpToken" needs "authToken" (the person\'s token); with per-user "authenticate", mint the MCP host a credential without the approvals:decide scope instead.');
    if (typeof mcpToken !== 'string' || mcpToken.length < 16 || /\s/.test(mcpToken) || mcpToken === authToken) {
      throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcpToken" must be a string of at least 16 characters without whitespace, different from "authToken".');
    }
  }
  const perimeter = createPerimeter({
    allowedHosts: checkAllowedHosts(options.allowedHosts ?? [], 'createGateway: "allowedHosts"'),
    allowedOrigins: checkAllowedOrigins(options.allowedOrigins ?? [], 'createGateway: "allowedOrigins"'),
  });
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024) throw new MinaraError('CONFIG_INVALID', 'createGateway: "maxBodyBytes" must be an integer of at least 1024.');
  if (!USER_ID.test(defaultUserId)) throw new MinaraError('CONFIG_INVALID', 'createGateway: "defaultUserId" must be 1–128 characters of letters, digits, ".", "_", ":", "@" or "-".');

  let closing = false;
  const streams = createActiveStreams({ generateId, logger });
  const viewLinks = options.artifacts ? createViewLinks(now) : undefined;
  const quotas = createQuotaGate({ storage: options.storage, defaults: checkQuotaDefaults(options.quotas, 'createGateway: "quotas"'), now, logger });
  const leaseMs = options.sessionLockLeaseMs;
  if (leaseMs !== undefined && !(Number.isSafeInteger(leaseMs) && leaseMs >= 3000)) throw new MinaraError('CONFIG_INVALID', 'createGateway: "sessionLockLeaseMs" must be an integer of at least 3000 (ms).');
  const sessionLocks = createSessionLocks({ storage: options.storage, now, logger, ...(leaseMs !== undefined ? { leaseMs } : {}) });
  const events = createEventStreams(options.bus);
  const deps: GatewayDeps = { options, quotas, sessionLocks, streams, maxBodyBytes, defaultUserId, logger, now, generateId, isClosing: () => closing, viewLinks };
  const checkToken = authToken === undefined ? undefined : createBearerCheck(authToken);
  const checkMcpToken = mcpToken === undefined ? undefined : createBearerCheck(mcpToken);

  const authenticated = new WeakMap<Request, GatewayIdentity>();
  const mcpCallers = new WeakSet<Request>();
  /**
   * Who the request is and what it may do: the authenticator's identity (decides with the `approvals:decide`
   * scope), the trusted proxy's headers (its scopes header), the MCP token (request only), the shared token (a
   * person's), or the single user (decides with the session cookie of the one-time login link).
   */
  async function identify(request: Request, url: URL): Promise<{ userId: string; operator: boolean; canDecide: boolean; quota?: GatewayQuota | undefined }> {
    const who = authenticated.get(request);
    if (who) return { userId: who.userId, operator: (who.roles ?? []).includes('operator'), canDecide: (who.scopes ?? []).includes(DECIDE_SCOPE), ...(who.quota ? { quota: who.quota } : {}) };
    if (trustUserHeader) {
      const header = request.headers.get(userHeader);
      if (header !== null && !USER_ID.test(header)) throw badRequest(`${userHeader}: expected 1–128 characters of letters, digits, ".", "_", ":", "@" or "-".`);
      const roles = (request.headers.get(rolesHeader) ?? '').split(',').map((r) => r.trim());
      const scopes = (request.headers.get(scopesHeader) ?? '').split(/[\s,]+/);
      return { userId: header ?? defaultUserId, operator: roles.includes('operator'), canDecide: scopes.includes(DECIDE_SCOPE) };
    }
    if (mcpCallers.has(request)) return { userId: defaultUserId, operator: false, canDecide: false };
    if (localLogin) return { userId: defaultUserId, operator: true, canDecide: localLogin.holdsSession(request, url) };
    return { userId: defaultUserId, operator: true, canDecide: true };
  }

  const router = createRouter();
  router.add('GET', '/healthz', () => json(200, { ok: true, activeStreams: streams.size() }));
  const webhooks = options.webhooks ?? {};
  checkWebhooks(webhooks);
  const webhookRoute = webhookSignal(deps, webhooks);
  const background = options.background;
  if (background !== undefined) {
    router.add('GET', '/v1/jobs', async ({ url, operator }) => {
      // Job runs are the operator's business (they name sessions and errors of every tenant's autonomous turns).
      if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Background jobs are visible to operators only.');
      const jobId = url.searchParams.get('job') ?? undefined;
      const limitRaw = url.searchParams.get('limit');
      if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 200)) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(limitRaw)}.`);
      const runs = await background.runs({ ...(jobId ? { jobId } : {}), limit: limitRaw === null ? 50 : Number(limitRaw) });
      return json(200, { started: background.started, jobs: background.status(), runs });
    });
  }
  if (background?.deliveries) {
    const source = background;
    // What the agent did by itself for this user (heartbeat, schedule, webhooks): the web app polls it for notifications.
    router.add('GET', '/v1/deliveries', async ({ url, userId }) => {
      const after = url.searchParams.get('after') ?? undefined;
      if (after !== undefined && (after.length > 40 || Number.isNaN(Date.parse(after)))) throw badRequest(`after: expected an ISO time, got ${JSON.stringify(after.slice(0, 40))}.`);
      const limitRaw = url.searchParams.get('limit');
      if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100)) throw badRequest(`limit: expected an integer from 1 to 100, got ${JSON.stringify(limitRaw)}.`);
      return json(200, { deliveries: await source.deliveries!({ userId, ...(after !== undefined ? { after } : {}), limit: limitRaw === null ? 20 : Number(limitRaw) }) });
    });
  }
  router.add('GET', '/v1/usage', async ({ url, userId, operator, quota }) => {
    const day = url.searchParams.get('day') ?? now().toISOString().slice(0, 10);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw badRequest(`day: expected YYYY-MM-DD, got ${JSON.stringify(day)}.`);
    if (url.searchParams.get('all') === '1') {
      // Where every user stands (operators only): each user with turns that day or a stored quota setting.
      if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Every user\'s usage is visible to operators only.');
      const [byUser, settings] = await Promise.all([options.storage.usage.byUser({ day }), options.storage.controls.listQuotas()]);
      const ids = [...new Set([...byUser.map((u) => u.userId), ...settings.map((q) => q.userId)])].sort();
      const userTurns = new Map((await options.storage.usage.byUser({ day, sources: USER_TURN_SOURCES })).map((u) => [u.userId, u.totals] as const));
      const users = await Promise.all(ids.map(async (id) => ({
        userId: id, today: byUser.find((u) => u.userId === id)?.totals ?? null, userTurns: userTurns.get(id) ?? null, quota: await quotas.standing(id),
      })));
      return json(200, { day, defaults: quotas.defaults, users });
    }
    const sessionId = url.searchParams.get('session');
    if (sessionId !== null) await assertSessionVisible(deps, sessionId, userId);
    const usage = options.storage.usage;
    const [today, autonomous, session] = await Promise.all([
      usage.totals({ day, userId }),
      usage.totals({ day, userId, sources: ['heartbeat', 'cron', 'webhook', 'workflow'] }),
      sessionId === null ? Promise.resolve(undefined) : usage.totals({ sessionId, userId }),
    ]);
    return json(200, { day, today, autonomous, ...(session ? { session } : {}), quota: await quotas.standing(userId, quota) });
  });
  router.add('GET', '/v1/info', ({ userId, canDecide }) =>
    json(200, {
      identity: { userId, canDecide },
      ...(options.tradingMode !== undefined ? { tradingMode: options.tradingMode } : {}),
      model: modelStatus === undefined ? { configured: true } : modelStatus.configured ? { configured: true, label: modelStatus.label } : { configured: false, reason: modelStatus.reason },
      features: { memory: options.memoryFor !== undefined, learning: options.learningFor !== undefined, deliveries: options.background?.deliveries !== undefined, workflows: options.workflows !== undefined, alerts: options.tools.has('alert_request'), shadow: options.tools.has('shadow_report'), workspace: options.workspace !== undefined, artifacts: options.artifacts !== undefined, backtestRuns: options.backtestRuns !== undefined, files: options.files !== undefined, approvals: true, mcp: options.mcp !== undefined, web: web !== undefined },
    }),
  );
  router.add('POST', '/v1/chat', postChat(deps));
  router.add('GET', '/v1/chat/:id', getChat(deps));
  router.add('GET', '/v1/chat/:id/stream', resumeChat(deps));
  router.add('GET', '/v1/memory', listMemory(deps));
  router.add('GET', '/v1/memory/profile', listProfile(deps));
  router.add('PUT', '/v1/memory/profile/:key', setProfile(deps));
  router.add('DELETE', '/v1/memory/profile/:key', deleteProfile(deps));
  router.add('POST', '/v1/memory', createMemory(deps));
  router.add('PATCH', '/v1/memory/:id', updateMemory(deps));
  router.add('DELETE', '/v1/memory/:id', deleteMemory(deps));
  router.add('POST', '/v1/memory/:id/restore', restoreMemory(deps));
  router.add('POST', '/v1/memory/:id/accept', decideHeldMemory(deps, 'accept'));
  router.add('POST', '/v1/memory/:id/reject', decideHeldMemory(deps, 'reject'));
  if (options.learningFor) for (const [method, pattern, handler] of learningRoutes(deps)) router.add(method, pattern, handler);
  if (options.workflows) for (const [method, pattern, handler] of workflowRoutes(deps, options.workflows)) router.add(method, pattern, handler);
  // Price alerts live in storage (every gateway has one): the caller's own, listed and cancelled.
  for (const [method, pattern, handler] of alertRoutes(deps)) router.add(method, pattern, handler);
  router.add('GET', '/v1/workspace/files', listWorkspaceFiles(deps));
  router.add('GET', '/v1/workspace/files/:name', getWorkspaceFile(deps));
  router.add('PUT', '/v1/workspace/files/:name', putWorkspaceFile(deps));
  router.add('GET', '/v1/artifacts', listArtifacts(deps));
  router.add('GET', '/v1/backtests', listBacktests(deps));
  for (const [method, pattern, handler] of backtestRunRoutes(deps)) router.add(method, pattern, handler);
  router.add('GET', '/v1/artifacts/:id', getArtifact(deps));
  router.add('GET', '/v1/artifacts/:id/view', viewArtifact(deps));
  router.add('POST', '/v1/files', postFile(deps));
  router.add('GET', '/v1/files/:key', getFile(deps));
  router.add('GET', '/v1/approvals', listApprovals(deps));
  router.add('GET', '/v1/events', events.route);
  router.add('POST', '/v1/approvals/:id', decideApproval(deps));
  for (const [method, pattern, handler] of financeRoutes(deps)) router.add(method, pattern, handler);
  for (const [method, pattern, handler] of controlRoutes(deps)) router.add(method, pattern, handler);
  // The operator's controls: the audit trail (and its verification), the circuit breakers.
  for (const [method, pattern, handler] of [...auditRoutes(deps), ...breakerRoutes(deps)]) router.add(method, pattern, handler);
  router.add('GET', '/v1/finance/shadow', getShadowReport(deps));
  const mcp = options.mcp;
  let mcpRoute: RouteHandler | undefined;
  if (mcp !== undefined) {
    if (typeof mcp.handleHttp !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcp" must come from createMcpToolServer() (@minara/agent/mcp).');
    const serveMcp: RouteHandler = ({ request, userId }) => mcp.handleHttp(request, { userId });
    mcpRoute = serveMcp;
    for (const method of ['POST', 'GET', 'DELETE']) router.add(method, '/mcp', serveMcp);
  }

  const onInternal = (error: unknown) =>
    logger.error('gateway: request failed', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });

  async function handle(request: Request): Promise<Response> {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      throw badRequest('url: not a valid URL.');
    }
    let pathname = url.pathname;
    if (basePath !== '') {
      if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) throw new HttpError(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname} (the gateway is mounted at ${basePath}).`);
      pathname = pathname.slice(basePath.length) || '/';
    }
    const isHealth = pathname === '/healthz' && (request.method === 'GET' || request.method === 'HEAD');
    const webhookMatch = /^\/v1\/signals\/webhook\/([^/]+)$/.exec(pathname);
    // The perimeter first, for every route: a foreign Host (DNS rebinding) reaches nothing.
    perimeter.checkHost(request, url);
    // Webhooks authenticate with their own HMAC (a sender cannot hold the gateway token).
    if (webhookMatch && request.method === 'POST') {
      const identity = { userId: defaultUserId, operator: false, canDecide: false };
      return webhookRoute({ request, url, params: { name: webhookMatch[1] ?? '' }, ...identity });
    }
    // A signed artifact view link stands in for the token (an iframe cannot send one); it names its user.
    const viewMatch = /^\/v1\/artifacts\/([^/]+)\/view$/.exec(pathname);
    if (viewMatch && viewLinks && (request.method === 'GET' || request.method === 'HEAD') && url.searchParams.has('sig')) {
      const id = decodeParam('id', viewMatch[1] ?? '');
      const signedFor = viewLinks.verify(id, url);
      if (!signedFor) throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'sig: the view link is invalid or expired; ask GET /v1/artifacts/:id for a fresh viewUrl.');
      return viewArtifact(deps)({ request, url, params: { id }, userId: signedFor, operator: false, canDecide: false });
    }
    // The one-time link of a token-less gateway: sets the session cookie deciding needs, then sends the browser to the app.
    if (localLogin && pathname === '/login' && request.method === 'GET') return localLogin.handle(request, url);
    // The web app's files are public (the page asks for a token); API routes are not served from here.
    if (staticFiles && !isHealth && !pathname.startsWith('/v1/') && pathname !== '/mcp') {
      if (basePath !== '' && url.pathname === basePath) return new Response(null, { status: 308, headers: { location: `${basePath}/${url.search}` } });
      const file = await staticFiles(request.method, pathname);
      if (file) return file;
    }
    // Authentication comes before routing, so an unauthenticated caller cannot map the routes.
    if (checkToken && !isHealth && !checkToken(request.headers.get('authorization'))) {
      // The MCP hosts' token opens /mcp and nothing else: a host can ask for consent, never read or give it.
      if (!checkMcpToken?.(request.headers.get('authorization'))) throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'Authorization: expected "Bearer <token>" with the gateway token.');
      if (pathname !== '/mcp' || mcpRoute === undefined) throw new HttpError(403, 'HTTP_FORBIDDEN', 'This token is for MCP hosts: it reaches /mcp only (a person uses the gateway token).');
      mcpCallers.add(request);
    }
    if (authenticate && !isHealth) {
      let who: GatewayIdentity | null;
      try {
        who = await authenticate(request);
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
      authenticated.set(request, who);
    }
    // No route runs a write from another site: a foreign Origin or Sec-Fetch-Site, or a POST a cross-site form could send.
    perimeter.checkWrite(request, url);
    const match = router.match(request.method, pathname);
    if (match.kind === 'not-found') throw new HttpError(404, 'NOT_FOUND', `No route ${request.method} ${url.pathname}.`);
    if (match.kind === 'method-not-allowed') {
      const e = methodNotAllowed(request.method, match.allow);
      return jsonError(405, e.code, e.message, undefined, { allow: match.allow.join(', ') });
    }
    const identity = await identify(request, url);
    return match.handler({ request, url, params: match.params, ...identity });
  }

  return {
    async fetch(request) {
      try {
        const response = await handle(request);
        if (response.status === 401) response.headers.set('www-authenticate', 'Bearer');
        return response;
      } catch (error) {
        const response = errorResponse(error, onInternal);
        if (response.status === 401) response.headers.set('www-authenticate', 'Bearer realm="minara"');
        return response;
      }
    },
    activeStreams: () => streams.size(),
    authRequired: checkToken !== undefined || authenticate !== undefined,
    localLoginPath: () => localLogin?.issue(),
    async close() {
      closing = true;
      events.closeAll();
      await streams.drain();
    },
  };
}
