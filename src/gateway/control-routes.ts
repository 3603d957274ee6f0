/**
 * The operator's controls over HTTP: grants (`/v1/grants`), the emergency stop (`/v1/stop`), capability switches
 * (`/v1/capabilities`) and per-user quotas (`/v1/quotas`). Tenant-scoped: a caller sees and changes its own user's;
 * an operator may name another user. What loosens a control (creating or revoking a grant, releasing a stop,
 * turning a tool set back on) needs the decide capability (`RouteContext.canDecide`), the same one deciding an
 * approval needs; what only tightens (engaging your own stop, turning your own tool set off) does not. The global
 * stop, another user's stop or switch, and quotas are the operator's (role `operator`) and need the decide
 * capability too.
 */
import { MinaraError } from '../errors/minara-error';
import type { GrantRecord } from '../storage/types';
import type { StoredGrantInput } from '../tools/types';
import { needDecide } from './decide';
import { describe, field, readJsonObject } from './body';
import { badRequest, HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

const operatorsOnly = (what: string) => new HttpError(403, 'HTTP_FORBIDDEN', `${what} is the operator's (role "operator"); this credential is a tenant's.`);

/** The user a request acts for: the caller, or (operators only) the one named in `field`. */
function targetUser(ctx: RouteContext, named: unknown, fieldName: string, what: string): string {
  if (named === undefined || named === null || named === ctx.userId) return ctx.userId;
  if (typeof named !== 'string' || !USER_ID.test(named)) throw badRequest(`${fieldName}: expected 1–128 letters, digits or . _ : @ -, got ${describe(named)}.`);
  if (!ctx.operator) throw new HttpError(403, 'HTTP_FORBIDDEN', `${fieldName}: "${named}" is another user; ${what} is for your own user ("${ctx.userId}") unless you are an operator.`);
  return named;
}

/** A grant as the gateway shows it, with what it spent and has left today. */
async function publicGrant(deps: GatewayDeps, g: GrantRecord) {
  const grants = deps.options.tools.grants;
  const at = deps.now().getTime();
  const status = g.revokedAt !== undefined ? 'revoked' : g.expiresAt !== undefined && Date.parse(g.expiresAt) <= at ? 'expired' : 'active';
  return {
    id: g.id, userId: g.userId ?? null, tools: g.toolName === '*' ? (g.tools ?? []) : [g.toolName, ...(g.tools ?? [])], toolSets: g.toolSets ?? [],
    sources: g.sources ?? [], capPerCallUsd: g.capPerCallUsd ?? null, capPerDayUsd: g.capPerDayUsd ?? null, argLimits: g.argLimits ?? null,
    createdAt: g.createdAt, createdBy: g.createdBy ?? null, expiresAt: g.expiresAt ?? null, revokedAt: g.revokedAt ?? null, note: g.note ?? null, status,
    spentTodayUsd: await grants.spentToday(g.id), leftTodayUsd: (await grants.leftToday(g.id)) ?? null,
  };
}

function toBadRequest(error: unknown): never {
  if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw badRequest(error.message);
  throw error;
}

/** `GET /v1/grants`: the caller's grants (an operator: another user's, or every user's with `?user=*`). */
async function listGrants(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  const named = ctx.url.searchParams.get('user') ?? undefined;
  const includeRevoked = ctx.url.searchParams.get('includeRevoked') === '1';
  const all = named === '*';
  if (all && !ctx.operator) throw operatorsOnly('Listing every user\'s grants');
  const userId = all ? undefined : targetUser(ctx, named, 'user', 'listing grants');
  const records = await tools.grants.list({ kind: 'stored', includeRevoked, ...(userId !== undefined ? { userId } : {}) });
  return json(200, { grants: await Promise.all(records.map((g) => publicGrant(deps, g))) });
}

/** `POST /v1/grants`: a person's grant, with caps per call and per day and an expiry (needs the decide capability). */
async function createGrant(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  if (!ctx.canDecide) throw needDecide('Creating a grant');
  const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
  field.only(body, ['userId', 'tools', 'toolSets', 'sources', 'capPerCallUsd', 'capPerDayUsd', 'expiresAt', 'note', 'argLimits']);
  const userId = targetUser(ctx, body['userId'], 'userId', 'a grant');
  for (const required of ['capPerCallUsd', 'capPerDayUsd', 'expiresAt'] as const) {
    if (body[required] === undefined) throw badRequest(`${required}: required (a grant made by a person names its caps per call and per day in USD and its expiry).`);
  }
  const input = { ...body, userId } as StoredGrantInput;
  const grant = await tools.grants.create(input, { by: ctx.userId }).catch(toBadRequest);
  return json(201, { grant: await publicGrant(deps, grant) });
}

/** `DELETE /v1/grants/:id`: revoke one of the caller's grants (an operator: anyone's; needs the decide capability). */
async function revokeGrant(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  if (!ctx.canDecide) throw needDecide('Revoking a grant');
  const id = decodeParam('id', ctx.params['id'] ?? '');
  const grant = await tools.grants.get(id);
  // Another user's grant (or a host-wide one, for a tenant) is as if it did not exist.
  if (!grant || grant.kind !== 'stored' || (grant.userId !== ctx.userId && !ctx.operator)) throw notFound(`No grant "${id}".`);
  const revoked = await tools.grants.revoke(id, { by: ctx.userId });
  const after = (await tools.grants.get(id)) ?? grant;
  return json(200, { revoked, grant: await publicGrant(deps, after) });
}

/** `GET /v1/stop`: the global stop and the user's own. */
async function getStop(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  const named = ctx.url.searchParams.get('user') ?? undefined;
  const userId = targetUser(ctx, named, 'user', 'reading a stop');
  const [global, user] = await Promise.all([tools.emergencyStop.status(), tools.emergencyStop.userStatus(userId)]);
  return json(200, { userId, global, user, applies: global.engaged || user.engaged });
}

/** `POST /v1/stop`: engage or release the global stop (operators, with the decide capability) or a user's. */
async function postStop(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
  field.only(body, ['action', 'scope', 'reason', 'userId']);
  const action = body['action'];
  if (action !== 'engage' && action !== 'release') throw badRequest(`action: expected "engage" or "release", got ${describe(action)}.`);
  const scope = body['scope'] ?? 'user';
  if (scope !== 'user' && scope !== 'global') throw badRequest(`scope: expected "user" or "global", got ${describe(scope)}.`);
  const reason = field.string(body, 'reason', { optional: true, min: 1, max: 500 }) ?? (action === 'engage' ? `stopped by ${ctx.userId}` : undefined);
  const by = ctx.userId;
  if (scope === 'global') {
    if (body['userId'] !== undefined) throw badRequest('userId: the global stop has no user; leave it out or use scope "user".');
    if (!ctx.operator) throw operatorsOnly('The global stop');
    if (!ctx.canDecide) throw needDecide(`${action === 'engage' ? 'Engaging' : 'Releasing'} the global stop`);
    if (action === 'engage') await tools.emergencyStop.engage(reason!, { by });
    else await tools.emergencyStop.release({ by });
    return json(200, { scope: 'global', stop: await tools.emergencyStop.status() });
  }
  const userId = targetUser(ctx, body['userId'], 'userId', 'a user\'s stop');
  // Engaging only tightens: the user (or an operator) may; releasing loosens and needs the decide capability,
  // and the stop itself refuses a user's release of what an operator engaged (STOP_RELEASE_FORBIDDEN, 403).
  if (action === 'release' && !ctx.canDecide) throw needDecide('Releasing a stop');
  const actor = ctx.operator ? 'operator' : 'user';
  if (action === 'engage') await tools.emergencyStop.engage(reason!, { userId, by, actor });
  else await tools.emergencyStop.release({ userId, by, actor });
  return json(200, { scope: 'user', userId, stop: await tools.emergencyStop.status({ userId }) });
}

/** `GET /v1/capabilities`: the tool sets in use and which are switched off for the user. */
async function getCapabilities(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  const userId = targetUser(ctx, ctx.url.searchParams.get('user') ?? undefined, 'user', 'reading capability switches');
  const off = new Map((await tools.capabilities.list({ userId })).map((s) => [s.toolSet, s] as const));
  const inUse = new Set(tools.list().map((t) => t.toolSet));
  const toolSets = tools.toolSets().filter((s) => inUse.has(s.name) || off.has(s.name)).map((s) => {
    const sw = off.get(s.name);
    return { name: s.name, description: s.description, enabled: sw === undefined, ...(sw ? { disabledAt: sw.disabledAt, reason: sw.reason ?? null, by: sw.by ?? null } : {}) };
  });
  return json(200, { userId, toolSets });
}

/** `POST /v1/capabilities`: switch a tool set off (tightens) or back on (loosens: needs the decide capability). */
async function postCapabilities(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { tools } = deps.options;
  const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
  field.only(body, ['toolSet', 'enabled', 'reason', 'userId']);
  const toolSet = field.string(body, 'toolSet', { min: 1, max: 128 })!;
  const enabled = field.boolean(body, 'enabled');
  const reason = field.string(body, 'reason', { optional: true, max: 500 });
  const userId = targetUser(ctx, body['userId'], 'userId', 'a capability switch');
  if (enabled) {
    // Turning a set back on loosens: a person's credential, and an operator unless the caller turned it off.
    if (!ctx.canDecide) throw needDecide('Turning a tool set back on');
    const current = (await tools.capabilities.list({ userId })).find((s) => s.toolSet === toolSet);
    if (current && !ctx.operator && current.by !== ctx.userId) throw operatorsOnly(`Turning "${toolSet}" back on (an operator turned it off)`);
    const changed = await tools.capabilities.enable(toolSet, { userId, by: ctx.userId }).catch(toBadRequest);
    return json(200, { userId, toolSet, enabled: true, changed });
  }
  const changed = await tools.capabilities.disable(toolSet, { userId, by: ctx.userId, ...(reason !== undefined ? { reason } : {}) }).catch(toBadRequest);
  return json(200, { userId, toolSet, enabled: false, changed });
}

/** `GET /v1/quotas`: the defaults and every stored quota setting (operators). */
async function listQuotas(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { storage } = deps.options;
  if (!ctx.operator) throw operatorsOnly('Quota settings');
  return json(200, { defaults: deps.quotas.defaults, quotas: await storage.controls.listQuotas() });
}

/** `PUT /v1/quotas/:user`: set a user's quota (operators, with the decide capability), audited. */
async function putQuota(deps: GatewayDeps, ctx: RouteContext): Promise<Response> {
  const { storage } = deps.options;
  if (!ctx.operator) throw operatorsOnly('Quota settings');
  if (!ctx.canDecide) throw needDecide('Changing a quota');
  const userId = decodeParam('user', ctx.params['user'] ?? '');
  if (!USER_ID.test(userId)) throw badRequest(`user: expected 1–128 letters, digits or . _ : @ -, got ${JSON.stringify(userId.slice(0, 40))}.`);
  const body = await readJsonObject(ctx.request, deps.maxBodyBytes);
  field.only(body, ['requestsPerMinute', 'usdPerDay']);
  const rpm = body['requestsPerMinute'];
  if (rpm !== undefined && rpm !== null && !(typeof rpm === 'number' && Number.isSafeInteger(rpm) && rpm >= 0)) throw badRequest(`requestsPerMinute: expected an integer ≥ 0 or null (no limit), got ${describe(rpm)}.`);
  const usd = body['usdPerDay'];
  if (usd !== undefined && usd !== null && !(typeof usd === 'number' && Number.isFinite(usd) && usd >= 0)) throw badRequest(`usdPerDay: expected a number of USD ≥ 0 or null (no limit), got ${describe(usd)}.`);
  const settings = {
    userId, updatedAt: deps.now().toISOString(),
    ...(rpm !== undefined ? { requestsPerMinute: rpm as number | null } : {}),
    ...(usd !== undefined ? { usdPerDay: usd as number | null } : {}),
  };
  await storage.controls.setQuota(settings);
  await storage.audit.append({ at: settings.updatedAt, toolName: 'quota.set', tier: 0, source: 'operator', decision: 'allowed', durationMs: 0, argsJson: JSON.stringify({ ...settings, by: ctx.userId }) });
  return json(200, { quota: settings, standing: await deps.quotas.standing(userId) });
}

/** The routes, for `createGateway` to register. */
export function controlRoutes(deps: GatewayDeps): Array<[string, string, RouteHandler]> {
  return [
    ['GET', '/v1/grants', (ctx) => listGrants(deps, ctx)],
    ['POST', '/v1/grants', (ctx) => createGrant(deps, ctx)],
    ['DELETE', '/v1/grants/:id', (ctx) => revokeGrant(deps, ctx)],
    ['GET', '/v1/stop', (ctx) => getStop(deps, ctx)],
    ['POST', '/v1/stop', (ctx) => postStop(deps, ctx)],
    ['GET', '/v1/capabilities', (ctx) => getCapabilities(deps, ctx)],
    ['POST', '/v1/capabilities', (ctx) => postCapabilities(deps, ctx)],
    ['GET', '/v1/quotas', (ctx) => listQuotas(deps, ctx)],
    ['PUT', '/v1/quotas/:user', (ctx) => putQuota(deps, ctx)],
  ];
}
