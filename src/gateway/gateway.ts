import { MinaraError } from '../errors/minara-error';
import { createActiveStreams } from './active-streams';
import { createViewLinks } from './artifact-routes';
import { createBearerCheck } from './auth';
import { createEventStreams } from './event-routes';
import { resolveGatewayConfig } from './gateway-config';
import { handleRequest, type GatewayState } from './gateway-request';
import { createGatewayRoutes } from './gateway-routes';
import { errorResponse } from './http-error';
import { checkQuotaDefaults, createQuotaGate } from './quotas';
import { createSessionLocks } from './session-lock';
import type { Gateway, GatewayDeps, GatewayOptions } from './types';

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
  const config = resolveGatewayConfig(options);
  const { now, logger, generateId, authToken, mcpToken } = config;
  const streams = createActiveStreams({ generateId, logger });
  const viewLinks = options.artifacts ? createViewLinks(now) : undefined;
  const quotas = createQuotaGate({ storage: options.storage, defaults: checkQuotaDefaults(options.quotas, 'createGateway: "quotas"'), now, logger });
  const leaseMs = options.sessionLockLeaseMs;
  if (leaseMs !== undefined && !(Number.isSafeInteger(leaseMs) && leaseMs >= 3000)) throw new MinaraError('CONFIG_INVALID', 'createGateway: "sessionLockLeaseMs" must be an integer of at least 3000 (ms).');
  const sessionLocks = createSessionLocks({ storage: options.storage, now, logger, ...(leaseMs !== undefined ? { leaseMs } : {}) });
  const events = createEventStreams(options.bus);
  const isClosing = () => s.closing;
  const deps: GatewayDeps = { options, quotas, sessionLocks, streams, maxBodyBytes: config.maxBodyBytes, defaultUserId: config.defaultUserId, logger, now, generateId, isClosing, viewLinks };
  const checkToken = authToken === undefined ? undefined : createBearerCheck(authToken);
  const checkMcpToken = mcpToken === undefined ? undefined : createBearerCheck(mcpToken);
  const s: GatewayState = {
    config, deps, routes: createGatewayRoutes(deps, events), events, checkToken, checkMcpToken,
    authenticated: new WeakMap(), mcpCallers: new WeakSet(), closing: false,
  };
  return {
    fetch: (request) => fetchGateway(s, request),
    activeStreams: () => streams.size(),
    authRequired: checkToken !== undefined || config.authenticate !== undefined,
    localLoginPath: () => config.localLogin?.issue(),
    close: () => closeGateway(s),
  };
}

/** Answer a request; a 401 carries `WWW-Authenticate` (with the realm when the gateway refused it). */
async function fetchGateway(s: GatewayState, request: Request): Promise<Response> {
  try {
    const response = await handleRequest(s, request);
    if (response.status === 401) response.headers.set('www-authenticate', 'Bearer');
    return response;
  } catch (error) {
    const response = errorResponse(error, (e) => logInternal(s, e));
    if (response.status === 401) response.headers.set('www-authenticate', 'Bearer realm="minara"');
    return response;
  }
}

/** Log an internal error for the operator (the caller gets a generic 500). */
function logInternal(s: GatewayState, error: unknown): void {
  s.config.logger.error('gateway: request failed', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
}

/** Refuse new turns, end the live-event streams, and wait for the running turns' streams to finish. */
async function closeGateway(s: GatewayState): Promise<void> {
  s.closing = true;
  s.events.closeAll();
  await s.deps.streams.drain();
}
