/**
 * Every route of the gateway registered on one router, in the order they always were (a route's position decides
 * nothing but the `Allow` header's order). The webhook route and `/mcp` are returned too: the request path calls
 * them before (webhooks) or while (the MCP hosts' token) it authenticates.
 */
import { MinaraError } from '../errors/minara-error';
import { decideApproval, listApprovals } from './approvals-routes';
import { getArtifact, getFile, listArtifacts, postFile, viewArtifact } from './artifact-routes';
import { alertRoutes } from './alert-routes';
import { auditRoutes } from './audit-routes';
import { listBacktests } from './backtest-routes';
import { backtestRunRoutes } from './backtest-run-routes';
import { breakerRoutes } from './breaker-routes';
import { getChat, postChat, resumeChat } from './chat-routes';
import { controlRoutes } from './control-routes';
import type { EventStreams } from './event-routes';
import { financeRoutes } from './finance-routes';
import { json } from './http-error';
import { learningRoutes } from './learning-routes';
import { createMemory, decideHeldMemory, deleteMemory, deleteProfile, listMemory, listProfile, restoreMemory, setProfile, updateMemory } from './memory-routes';
import { createRouter, type RouteHandler } from './router';
import { getShadowReport } from './shadow-routes';
import { getInfo, getUsage, listDeliveries, listJobs } from './status-routes';
import type { GatewayDeps } from './types';
import { checkWebhooks, webhookSignal } from './webhook-routes';
import { workflowRoutes } from './workflow-routes';
import { getWorkspaceFile, listWorkspaceFiles, putWorkspaceFile } from './workspace-routes';

/** The gateway's router. */
export type GatewayRouter = ReturnType<typeof createRouter>;

/** The router and the two routes the request path reaches outside it. */
export interface GatewayRoutes {
  readonly router: GatewayRouter;
  /** `POST /v1/signals/webhook/:name`, authenticated by its own HMAC before the gateway's authentication. */
  readonly webhookRoute: RouteHandler;
  /** `/mcp`, when `options.mcp` is given: the only route the MCP hosts' token opens. */
  readonly mcpRoute: RouteHandler | undefined;
}

/** Register the status routes: jobs and deliveries (with a background source), usage and info. */
function addStatusRoutes(router: GatewayRouter, deps: GatewayDeps): void {
  const background = deps.options.background;
  if (background !== undefined) router.add('GET', '/v1/jobs', listJobs(background));
  if (background?.deliveries) router.add('GET', '/v1/deliveries', listDeliveries(background));
  router.add('GET', '/v1/usage', getUsage(deps));
  router.add('GET', '/v1/info', getInfo(deps));
}

/** Register chat, memory, learning, workflows, alerts, workspace, artifacts, files, approvals and live events. */
function addTenantRoutes(router: GatewayRouter, deps: GatewayDeps, events: EventStreams): void {
  const { options } = deps;
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
}

/** Register finance, the controls (grants, stops, switches, quotas), the audit trail, the breakers and the shadow report. */
function addOperatorRoutes(router: GatewayRouter, deps: GatewayDeps): void {
  for (const [method, pattern, handler] of financeRoutes(deps)) router.add(method, pattern, handler);
  for (const [method, pattern, handler] of controlRoutes(deps)) router.add(method, pattern, handler);
  // The operator's controls: the audit trail (and its verification), the circuit breakers.
  for (const [method, pattern, handler] of [...auditRoutes(deps), ...breakerRoutes(deps)]) router.add(method, pattern, handler);
  router.add('GET', '/v1/finance/shadow', getShadowReport(deps));
}

/** Register `/mcp` (POST, GET, DELETE) when `options.mcp` is given; its handler, or `undefined`. */
function addMcpRoute(router: GatewayRouter, deps: GatewayDeps): RouteHandler | undefined {
  const mcp = deps.options.mcp;
  if (mcp === undefined) return undefined;
  if (typeof mcp.handleHttp !== 'function') throw new MinaraError('CONFIG_INVALID', 'createGateway: "mcp" must come from createMcpToolServer() (@minara/agent/mcp).');
  const serveMcp: RouteHandler = ({ request, userId }) => mcp.handleHttp(request, { userId });
  for (const method of ['POST', 'GET', 'DELETE']) router.add(method, '/mcp', serveMcp);
  return serveMcp;
}

/** Build the router with every route (checking the webhooks and the MCP handler on the way). */
export function createGatewayRoutes(deps: GatewayDeps, events: EventStreams): GatewayRoutes {
  const router = createRouter();
  router.add('GET', '/healthz', () => json(200, { ok: true, activeStreams: deps.streams.size() }));
  const webhooks = deps.options.webhooks ?? {};
  checkWebhooks(webhooks);
  const webhookRoute = webhookSignal(deps, webhooks);
  addStatusRoutes(router, deps);
  addTenantRoutes(router, deps, events);
  addOperatorRoutes(router, deps);
  const mcpRoute = addMcpRoute(router, deps);
  return { router, webhookRoute, mcpRoute };
}
