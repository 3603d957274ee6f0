/**
 * The learning loop over HTTP (docs/gateway.md, "Learning"): the tenant's methodologies, trade cases, trades,
 * compiled pages and preferences. Methodology decisions (accept, graduate, quarantine, reinstate) are the operator's;
 * preference decisions are the tenant's own (a hard constraint is the user's to approve).
 */
import { assertCanDecide } from './decide';
import type { LearningStore } from '../learning/types';
import { METHODOLOGY_STATES, PREFERENCE_STATES } from '../storage/learning-logic';
import { field, readJsonObject } from './body';
import { badRequest, HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';


function store(deps: GatewayDeps, userId: string): LearningStore {
  const learning = deps.options.learningFor?.(userId);
  if (!learning) throw notFound('The learning loop is not enabled on this gateway.');
  return learning;
}

function rowId(raw: string | undefined, what: string): number {
  if (raw === undefined || !/^[1-9]\d{0,14}$/.test(raw)) throw badRequest(`id: expected a positive integer ${what} id, got ${JSON.stringify(raw ?? '')}.`);
  return Number(raw);
}

function limit(url: URL, fallback: number): number {
  const raw = url.searchParams.get('limit');
  if (raw === null) return fallback;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 200) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(raw)}.`);
  return Number(raw);
}

function oneOf<T extends string>(url: URL, name: string, allowed: readonly T[]): T | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw badRequest(`${name}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(raw.slice(0, 40))}.`);
  return raw as T;
}

/** A decision's optional JSON body (`{ reason?, force? }`); an empty body is `{}`. */
async function decisionBody(deps: GatewayDeps, request: Request, allowed: readonly string[]): Promise<Record<string, unknown>> {
  if (request.headers.get('content-length') === '0' || (request.body === null && !request.headers.get('content-type'))) return {};
  const body = await readJsonObject(request, deps.maxBodyBytes);
  field.only(body, allowed);
  return body;
}

/** Register the learning routes on a router. */
export function learningRoutes(deps: GatewayDeps): Array<[method: string, pattern: string, handler: RouteHandler]> {
  const operatorOnly = (ctx: RouteContext) => {
    if (!ctx.operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Methodology decisions (accept, graduate, quarantine, reinstate) are the operator\'s.');
    // A decision that changes what the agent applies is a person's, like an approval: the same capability.
    assertCanDecide(ctx.canDecide);
  };
  const decide = (verb: 'accept' | 'graduate' | 'quarantine' | 'reinstate'): RouteHandler => async (ctx) => {
    operatorOnly(ctx);
    const learning = store(deps, ctx.userId);
    const id = rowId(ctx.params.id, 'methodology');
    const body = await decisionBody(deps, ctx.request, verb === 'graduate' ? ['reason', 'force'] : ['reason']);
    const reason = field.string(body, 'reason', { optional: true, min: 1, max: 500 });
    const force = body.force === undefined ? false : field.boolean(body, 'force');
    const methodology = verb === 'graduate'
      ? await learning.graduateMethodology(id, { force, ...(reason !== undefined ? { reason } : {}) })
      : verb === 'accept' ? await learning.acceptMethodology(id, reason)
      : verb === 'quarantine' ? await learning.quarantineMethodology(id, reason) : await learning.reinstateMethodology(id, reason);
    return json(200, { methodology });
  };
  const prefer = (verb: 'approve' | 'reject'): RouteHandler => async (ctx) => {
    assertCanDecide(ctx.canDecide);
    const learning = store(deps, ctx.userId);
    const id = rowId(ctx.params.id, 'preference');
    await decisionBody(deps, ctx.request, []);
    return json(200, { preference: verb === 'approve' ? await learning.approvePreference(id) : await learning.rejectPreference(id) });
  };
  return [
    ['GET', '/v1/learning/methodologies', async ({ url, userId }) => {
      const learning = store(deps, userId);
      const state = oneOf(url, 'state', METHODOLOGY_STATES);
      const assetClass = url.searchParams.get('assetClass');
      if (assetClass !== null && !/^[a-z][a-z0-9_]{0,39}$/.test(assetClass)) throw badRequest(`assetClass: expected lower snake case (crypto_major, forex, …), got ${JSON.stringify(assetClass.slice(0, 40))}.`);
      const methodologies = await learning.listMethodologies({ ...(state ? { states: [state] } : {}), ...(assetClass !== null ? { assetClasses: [assetClass] } : {}), limit: limit(url, 100) });
      return json(200, { policy: learning.policy, methodologies });
    }],
    ['GET', '/v1/learning/methodologies/:id', async ({ params, userId }) => {
      const methodology = await store(deps, userId).getMethodology(rowId(params.id, 'methodology'));
      if (!methodology) throw notFound(`No methodology ${params.id}.`);
      return json(200, { methodology });
    }],
    ['POST', '/v1/learning/methodologies/:id/graduate', decide('graduate')],
    // Methodologies proposed from outcomes, now (the `learning:synthesis` job does it daily): operators; it spends model
    // tokens and only ever adds proposals, which the operator then accepts (on trial) or quarantines.
    ['POST', '/v1/learning/synthesize', async (ctx) => {
      if (!ctx.operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Running the methodology synthesis is the operator\'s.');
      await decisionBody(deps, ctx.request, []);
      const admit = deps.options.admitAutonomousTurn;
      const result = await store(deps, ctx.userId).synthesize({ ...(admit ? { admit: () => admit({ userId: ctx.userId }) } : {}) });
      return json(200, { synthesis: result });
    }],
    ['POST', '/v1/learning/methodologies/:id/accept', decide('accept')],
    ['POST', '/v1/learning/methodologies/:id/quarantine', decide('quarantine')],
    ['POST', '/v1/learning/methodologies/:id/reinstate', decide('reinstate')],
    ['GET', '/v1/learning/cases', async ({ url, userId }) => {
      const status = oneOf(url, 'status', ['pending', 'reflected'] as const) ?? 'pending';
      return json(200, { cases: await store(deps, userId).listCases({ status, limit: limit(url, 50) }) });
    }],
    ['GET', '/v1/learning/trades', async ({ url, userId }) => {
      const asset = url.searchParams.get('asset');
      if (asset !== null && (asset.trim() === '' || asset.length > 32)) throw badRequest('asset: expected a symbol or pair of 1-32 characters (BTC, EUR/USD).');
      return json(200, { trades: await store(deps, userId).listTrades({ ...(asset !== null ? { asset } : {}), limit: limit(url, 50) }) });
    }],
    ['GET', '/v1/learning/pages/:entity', async ({ params, userId }) => {
      const page = await store(deps, userId).compiledPage(decodeParam('entity', params.entity ?? ''));
      return new Response(page, { status: 200, headers: { 'content-type': 'text/markdown; charset=utf-8', 'cache-control': 'no-store' } });
    }],
    ['GET', '/v1/preferences', async ({ url, userId }) => {
      const state = oneOf(url, 'state', PREFERENCE_STATES);
      return json(200, { preferences: await store(deps, userId).listPreferences({ ...(state ? { states: [state] } : {}), limit: limit(url, 100) }) });
    }],
    ['POST', '/v1/preferences/:id/approve', prefer('approve')],
    ['POST', '/v1/preferences/:id/reject', prefer('reject')],
  ];
}
