/**
 * Price alerts over HTTP (docs/gateway.md, "Alerts"): the caller's alerts and cancelling one. Every row is the
 * caller's own: another tenant's id is a 404, as if it did not exist.
 */
import type { AlertStatus } from '../storage/automation-types';
import { badRequest, HttpError, json, notFound } from './http-error';
import type { RouteHandler } from './router';
import type { GatewayDeps } from './types';

const STATUSES: readonly AlertStatus[] = ['active', 'fired', 'cancelled', 'expired'];

/** The alert routes (`GET /v1/alerts`, `DELETE /v1/alerts/:id`). */
export function alertRoutes(deps: GatewayDeps): Array<[method: string, pattern: string, handler: RouteHandler]> {
  const alerts = deps.options.storage.alerts;
  const list: RouteHandler = async ({ url, userId }) => {
    const raw = url.searchParams.get('status');
    const status = raw === null ? undefined : raw.split(',').map((s) => s.trim());
    if (status && (status.length === 0 || status.some((s) => !(STATUSES as readonly string[]).includes(s)))) {
      throw badRequest(`status: expected one or more of ${STATUSES.join(', ')} (comma-separated), got ${JSON.stringify((raw ?? '').slice(0, 60))}.`);
    }
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 200)) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(limitRaw.slice(0, 20))}.`);
    return json(200, { alerts: await alerts.list({ userId, ...(status ? { status: status as AlertStatus[] } : {}), limit: limitRaw === null ? 50 : Number(limitRaw) }) });
  };
  const cancel: RouteHandler = async ({ params, userId }) => {
    const raw = params['id'] ?? '';
    if (!/^[1-9]\d{0,14}$/.test(raw)) throw badRequest(`id: expected a positive integer alert id, got ${JSON.stringify(raw.slice(0, 20))}.`);
    const id = Number(raw);
    const cancelled = await alerts.transition(userId, id, 'cancelled', { endedAt: deps.now().toISOString() });
    if (cancelled) return json(200, { alert: cancelled });
    const existing = await alerts.get(userId, id);
    if (!existing) throw notFound(`No alert ${id}.`);
    throw new HttpError(409, 'HTTP_CONFLICT', `Alert ${id} is already ${existing.status}.`);
  };
  return [
    ['GET', '/v1/alerts', list],
    ['DELETE', '/v1/alerts/:id', cancel],
  ];
}
