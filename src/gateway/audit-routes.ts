/**
 * The audit trail over HTTP. Tenant-scoped like every route: a tenant sees only rows written for them (rows of
 * their own calls, skill activations, job runs); operators see every row and may filter by `user`. Verifying the
 * chain walks every tenant's rows, so it is the operator's.
 */
import { AUDIT_KINDS } from '../storage/audit-chain';
import type { AuditKind } from '../storage/audit-types';
import type { AuditDecision } from '../storage/types';
import { type AuditFilter, exportAudit, readAuditTrace } from '../safety/audit-trail';
import { badRequest, HttpError, json } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';

const DECISIONS: readonly AuditDecision[] = ['allowed', 'blocked', 'approval_required', 'approved', 'denied', 'error', 'executing'];
const ID = /^[A-Za-z0-9._:@-]{1,128}$/u;

function isoParam(url: URL, name: string): string | undefined {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  if (v.length > 40 || Number.isNaN(Date.parse(v))) throw badRequest(`${name}: expected an ISO time, got ${JSON.stringify(v.slice(0, 40))}.`);
  return new Date(v).toISOString();
}

function idParam(url: URL, name: string): string | undefined {
  const v = url.searchParams.get(name);
  if (v === null) return undefined;
  if (!ID.test(v)) throw badRequest(`${name}: expected 1–128 characters of A-Z a-z 0-9 . _ : @ -, got ${JSON.stringify(v.slice(0, 40))}.`);
  return v;
}

/** The filter a request asks for, with the tenant rule applied: a tenant's own rows, or (operators) any user's. */
function filterOf(ctx: RouteContext): AuditFilter {
  const { url, userId, operator } = ctx;
  const user = idParam(url, 'user');
  if (!operator && user !== undefined && user !== userId) {
    throw new HttpError(403, 'HTTP_FORBIDDEN', "Another user's audit rows are visible to operators only.");
  }
  const kind = url.searchParams.get('kind');
  if (kind !== null && !AUDIT_KINDS.includes(kind as AuditKind)) throw badRequest(`kind: expected one of ${AUDIT_KINDS.join(', ')}, got ${JSON.stringify(kind.slice(0, 40))}.`);
  const decision = url.searchParams.get('decision');
  if (decision !== null && !DECISIONS.includes(decision as AuditDecision)) throw badRequest(`decision: expected one of ${DECISIONS.join(', ')}, got ${JSON.stringify(decision.slice(0, 40))}.`);
  const scopedUser = operator ? user : userId;
  const trace = idParam(url, 'trace');
  const tool = idParam(url, 'tool');
  const session = idParam(url, 'session');
  const since = isoParam(url, 'since');
  const until = isoParam(url, 'until');
  return {
    ...(scopedUser !== undefined ? { userId: scopedUser } : {}), ...(trace ? { traceId: trace } : {}), ...(tool ? { toolName: tool } : {}), ...(session ? { sessionId: session } : {}),
    ...(since ? { since } : {}), ...(until ? { until } : {}), ...(kind ? { kind: kind as AuditKind } : {}), ...(decision ? { decision: decision as AuditDecision } : {}),
  };
}

/**
 * `GET /v1/audit?user=&trace=&tool=&session=&kind=&decision=&since=&until=&limit=&before=&format=`: rows newest
 * first (`limit` 1–500, default 100; `before=<id>` pages back) as `{ rows, next }`; `format=jsonl` or `csv` streams
 * every row the filter selects, oldest first, as a download.
 */
export function listAudit(deps: GatewayDeps): RouteHandler {
  return async (ctx) => {
    const { url } = ctx;
    const filter = filterOf(ctx);
    const format = url.searchParams.get('format') ?? 'json';
    const storage = deps.options.storage;
    if (format === 'jsonl' || format === 'csv') {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            await exportAudit({ storage, format, filter, write: (chunk) => controller.enqueue(encoder.encode(chunk)) });
            controller.close();
          } catch (error) {
            controller.error(error);
          }
        },
      });
      return new Response(body, {
        status: 200,
        headers: {
          'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
          'content-disposition': `attachment; filename="minara-audit.${format}"`,
          'cache-control': 'no-store',
        },
      });
    }
    if (format !== 'json') throw badRequest(`format: expected json, jsonl or csv, got ${JSON.stringify(format.slice(0, 20))}.`);
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 500)) throw badRequest(`limit: expected an integer from 1 to 500, got ${JSON.stringify(limitRaw)}.`);
    const beforeRaw = url.searchParams.get('before');
    if (beforeRaw !== null && !/^\d{1,15}$/.test(beforeRaw)) throw badRequest(`before: expected a row id, got ${JSON.stringify(beforeRaw.slice(0, 20))}.`);
    const limit = limitRaw === null ? 100 : Number(limitRaw);
    const rows = await storage.audit.query({ ...filter, limit, ...(beforeRaw !== null ? { beforeId: Number(beforeRaw) } : {}) });
    return json(200, { rows, next: rows.length === limit ? rows.at(-1)!.id : null });
  };
}

/** `GET /v1/audit/trace/:id`: one trace, oldest first (a tenant's own rows of it). */
export function getAuditTrace(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId, operator }) => {
    const traceId = decodeParam('id', params['id'] ?? '');
    if (!ID.test(traceId)) throw badRequest('id: expected 1–128 characters of A-Z a-z 0-9 . _ : @ -.');
    const rows = await readAuditTrace(deps.options.storage, traceId, operator ? {} : { userId });
    return json(200, { traceId, rows });
  };
}

/** `GET /v1/audit/verify?anchor=seq:hash` (operators): walk the whole chain (keyed, against the newest signed checkpoint when the gateway has `auditIntegrity`). */
export function verifyAudit(deps: GatewayDeps): RouteHandler {
  return async ({ url, operator }) => {
    if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Verifying the audit chain reads every tenant\'s rows: operators only.');
    const anchor = url.searchParams.get('anchor') ?? undefined;
    const o = anchor !== undefined ? { anchor } : {};
    const report = deps.options.auditIntegrity ? await deps.options.auditIntegrity.verify(o) : await deps.options.storage.audit.verify(o);
    return json(200, report);
  };
}

/** The audit routes, for the gateway's router. */
export function auditRoutes(deps: GatewayDeps): Array<[string, string, RouteHandler]> {
  return [
    ['GET', '/v1/audit', listAudit(deps)],
    ['GET', '/v1/audit/verify', verifyAudit(deps)],
    ['GET', '/v1/audit/trace/:id', getAuditTrace(deps)],
  ];
}
