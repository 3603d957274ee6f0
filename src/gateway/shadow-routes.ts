/**
 * The shadow report over HTTP (`MINARA_TRADING_MODE=shadow`): `GET /v1/finance/shadow?since=` runs the finance
 * pack's READ_ONLY `shadow_report` tool for the caller, through the gate and the audit log like a chat's call.
 */
import { createToolCallContext } from '../tools/context';
import { parseEnvelope } from '../tools/envelope';
import { badRequest, HttpError, json } from './http-error';
import type { RouteHandler } from './router';
import type { GatewayDeps } from './types';

/** `GET /v1/finance/shadow?since=<ISO|24h|7d>`: `{ report }`; 404 when the agent is not in shadow mode. */
export function getShadowReport(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId }) => {
    if (!deps.options.tools.has('shadow_report')) throw new HttpError(404, 'NOT_FOUND', 'The agent is not in shadow mode (MINARA_TRADING_MODE=shadow).');
    const raw = url.searchParams.get('since');
    let since: string | undefined;
    if (raw !== null) {
      const span = /^(\d{1,4})([hd])$/u.exec(raw);
      if (span) since = new Date(deps.now().getTime() - Number(span[1]) * (span[2] === 'h' ? 3_600_000 : 86_400_000)).toISOString();
      else if (raw.length <= 40 && !Number.isNaN(Date.parse(raw))) since = new Date(raw).toISOString();
      else throw badRequest(`since: expected an ISO time or a span like 24h or 7d, got ${JSON.stringify(raw.slice(0, 40))}.`);
    }
    const context = createToolCallContext({ sessionId: `shadow-report-${userId}`, source: 'user', userId });
    const envelope = parseEnvelope(await deps.options.tools.dispatch('shadow_report', since ? { since } : {}, { context }));
    if (!envelope.ok) throw new HttpError(envelope.code === 'INVALID_ARGUMENT' ? 400 : 502, envelope.code === 'INVALID_ARGUMENT' ? 'HTTP_BAD_REQUEST' : 'PROVIDER_ERROR', envelope.error);
    return json(200, { report: envelope.data });
  };
}
