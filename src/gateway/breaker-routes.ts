/**
 * The circuit breakers over HTTP. Anyone sees their own breaker (the web app's banner); operators see every
 * user's. Resetting one is a person's decision: it needs the decide capability (`RouteContext.canDecide`, as
 * deciding approvals does), and a tenant may reset only their own. Setting limits is the operator's.
 */
import { needDecide } from './decide';
import { field, readJsonObject } from './body';
import { HttpError, json } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';

function breakersOf(deps: GatewayDeps) {
  const breakers = deps.options.tools.breakers;
  if (!breakers) throw new HttpError(404, 'NOT_FOUND', 'Circuit breakers are off on this gateway.');
  return breakers;
}

function target(ctx: RouteContext, action: string): string {
  const userId = decodeParam('userId', ctx.params['userId'] ?? '');
  if (!ctx.canDecide) {
    throw needDecide(`${action} a circuit breaker`);
  }
  if (userId !== ctx.userId && !ctx.operator) throw new HttpError(403, 'HTTP_FORBIDDEN', `Another user's circuit breaker is the operator's to change.`);
  return userId;
}

/**
 * `GET /v1/breakers[?measure=1]`: `{ own, breakers, canReset }`: the caller's breaker and, for operators, every
 * user's. `measure=1` adds the caller's current measurements (an audit query and the portfolio: the banner's poll
 * does without).
 */
export function listBreakers(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId, operator, canDecide }) => {
    const breakers = breakersOf(deps);
    const own = await breakers.status(userId, { measure: url.searchParams.get('measure') === '1' });
    const all = operator ? await breakers.list() : [own];
    return json(200, { own, breakers: all, canReset: canDecide });
  };
}

/** `POST /v1/breakers/:userId/reset { reason? }` (decide capability; a tenant: their own). */
export function resetBreaker(deps: GatewayDeps): RouteHandler {
  return async (ctx) => {
    const userId = target(ctx, 'Resetting');
    const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
    field.only(body, ['reason']);
    const reason = field.string(body, 'reason', { optional: true, max: 500 });
    const status = await breakersOf(deps).reset(userId, { by: `${ctx.userId} (gateway)`, ...(reason !== undefined ? { reason } : {}) });
    return json(200, { breaker: status });
  };
}

/** `PUT /v1/breakers/:userId/limits { limits }` (operators with the decide capability): per-user limits; `{}` clears them. */
export function putBreakerLimits(deps: GatewayDeps): RouteHandler {
  return async (ctx) => {
    const userId = target(ctx, 'Configuring');
    if (!ctx.operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Breaker limits are the operator\'s to set.');
    const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
    field.only(body, ['limits']);
    const limits = body.limits;
    if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw new HttpError(400, 'HTTP_BAD_REQUEST', 'limits: expected an object of limits, e.g. {"maxConsecutiveLosses":5}.');
    return json(200, { limits: await breakersOf(deps).configure(userId, limits, `${ctx.userId} (gateway)`) });
  };
}

/** The breaker routes, for the gateway's router. */
export function breakerRoutes(deps: GatewayDeps): Array<[string, string, RouteHandler]> {
  return [
    ['GET', '/v1/breakers', listBreakers(deps)],
    ['POST', '/v1/breakers/:userId/reset', resetBreaker(deps)],
    ['PUT', '/v1/breakers/:userId/limits', putBreakerLimits(deps)],
  ];
}
