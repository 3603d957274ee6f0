/**
 * The operator's controls over HTTP (issue 34, parts 1, 2, 6, 8), attacks first: a tenant creating a grant for
 * another user, a credential that may not decide creating a grant or releasing a stop, an MCP token reaching the
 * controls, a tenant engaging the global stop; then bad input (named, nothing stored), the happy paths, the
 * capability switches, per-user quotas (429 with the reason and Retry-After) and a stopped user's webhook.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createToolCallContext } from '@minara/agent';
import { createJwtAuthenticator, quotaFromClaim, signWebhook, USER_TURN_SOURCES } from '@minara/agent/gateway';
import { chatBody, type Harness, startGateway, TOKEN } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Json = Record<string, any>;
const as = (user: string, opts: { decide?: boolean; operator?: boolean } = {}) => ({
  'x-minara-user': user,
  ...(opts.decide ? { 'x-minara-scopes': 'approvals:decide' } : {}),
  ...(opts.operator ? { 'x-minara-roles': 'operator' } : {}),
});
const send = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${h!.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
const get = async (path: string, headers: Record<string, string>) => (await (await fetch(`${h!.url}${path}`, { headers })).json()) as Json;
const future = () => new Date(Date.now() + 3_600_000).toISOString();
const grantBody = (extra: Record<string, unknown> = {}) => ({ tools: ['swap_tokens'], sources: ['cron'], capPerCallUsd: 50, capPerDayUsd: 100, expiresAt: future(), ...extra });

describe('attacks on the controls', () => {
  it('a tenant cannot create a grant for another user (403 naming userId); nothing is stored', async () => {
    h = await startGateway();
    const r = await send('POST', '/v1/grants', grantBody({ userId: 'bob' }), as('alice', { decide: true }));
    expect(r.status).toBe(403);
    expect(((await r.json()) as Json).error.message).toMatch(/^userId: "bob" is another user/);
    expect(await h.tools.grants.list({ includeRevoked: true })).toEqual([]);
  });

  it('a credential that may only request cannot create or revoke a grant, nor release a stop (it may engage its own)', async () => {
    h = await startGateway();
    expect((await send('POST', '/v1/grants', grantBody(), as('alice'))).status).toBe(403);
    expect(await h.tools.grants.list()).toEqual([]);
    const grant = await h.tools.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerDayUsd: 10, expiresAt: 60_000 });
    expect((await send('DELETE', `/v1/grants/${grant.id}`, undefined, as('alice'))).status).toBe(403);
    expect((await h.tools.grants.get(grant.id))?.revokedAt).toBeUndefined();
    expect((await send('POST', '/v1/stop', { action: 'engage', reason: 'panic' }, as('alice'))).status).toBe(200);
    const release = await send('POST', '/v1/stop', { action: 'release' }, as('alice'));
    expect(release.status).toBe(403);
    expect((await h.tools.emergencyStop.userStatus('alice')).engaged).toBe(true);
    // Turning a tool set off only tightens; turning it back on needs the decide capability.
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: false }, as('alice'))).status).toBe(200);
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: true }, as('alice'))).status).toBe(403);
  });

  it('the MCP hosts\' token reaches none of the controls', async () => {
    const MCP = 'mcp-token-0123456789abcdef';
    h = await startGateway([], { gateway: { authToken: TOKEN, mcpToken: MCP, trustUserHeader: false } });
    const mcp = { authorization: `Bearer ${MCP}` };
    for (const [method, path, body] of [['POST', '/v1/grants', grantBody()], ['POST', '/v1/stop', { action: 'release', scope: 'global' }], ['POST', '/v1/capabilities', { toolSet: 'trade', enabled: true }], ['GET', '/v1/grants', undefined]] as const) {
      expect((await send(method, path, body, mcp)).status, `${method} ${path}`).toBe(403);
    }
    expect(await h.tools.grants.list()).toEqual([]);
    // The person's token does.
    expect((await send('POST', '/v1/grants', grantBody(), { authorization: `Bearer ${TOKEN}` })).status).toBe(201);
  });

  it('a tenant cannot engage or release the global stop, nor another user\'s; an operator with the decide capability can', async () => {
    h = await startGateway();
    expect((await send('POST', '/v1/stop', { action: 'engage', scope: 'global', reason: 'x' }, as('alice', { decide: true }))).status).toBe(403);
    expect((await send('POST', '/v1/stop', { action: 'engage', userId: 'bob', reason: 'x' }, as('alice', { decide: true }))).status).toBe(403);
    expect((await h.tools.emergencyStop.status()).engaged).toBe(false);
    expect((await h.tools.emergencyStop.userStatus('bob')).engaged).toBe(false);
    // An operator's credential that may not decide cannot either.
    expect((await send('POST', '/v1/stop', { action: 'engage', scope: 'global', reason: 'x' }, as('ops', { operator: true }))).status).toBe(403);
    const engaged = await send('POST', '/v1/stop', { action: 'engage', scope: 'global', reason: 'drill' }, as('ops', { operator: true, decide: true }));
    expect(engaged.status).toBe(200);
    expect(await get('/v1/stop', as('alice'))).toMatchObject({ userId: 'alice', global: { engaged: true, reason: 'drill', scope: 'global' }, user: { engaged: false }, applies: true });
    expect((await send('POST', '/v1/stop', { action: 'release', scope: 'global' }, as('alice', { decide: true }))).status).toBe(403);
    expect((await send('POST', '/v1/stop', { action: 'release', scope: 'global' }, as('ops', { operator: true, decide: true }))).status).toBe(200);
    const audit = (await h.tools.queryAudit({})).filter((r) => r.toolName.startsWith('stop.'));
    expect(audit.map((r) => [r.toolName, JSON.parse(r.argsJson).scope, JSON.parse(r.argsJson).by])).toEqual([['stop.release', 'global', 'ops'], ['stop.engage', 'global', 'ops']]);
  });
});

describe('attack (issue 37): a tenant releases the stop the operator engaged on them', () => {
  const cronSwap = () =>
    h!.tools.dispatchDetailed('swap_tokens', { from: 'USDC', to: 'ETH', amountUsd: 5, confirm: true }, { context: createToolCallContext({ sessionId: 'cron-bob', source: 'cron', userId: 'bob' }) });

  it("Bob, with a person's credential, cannot release the operator's stop on him; his cron swap does not fill", async () => {
    h = await startGateway();
    await h.tools.grants.create({ tools: ['swap_tokens'], userId: 'bob', sources: ['cron'], capPerCallUsd: 50, capPerDayUsd: 100, expiresAt: 3_600_000 });
    expect((await send('POST', '/v1/stop', { action: 'engage', userId: 'bob', reason: 'compliance hold' }, as('ops', { operator: true, decide: true }))).status).toBe(200);
    const release = await send('POST', '/v1/stop', { action: 'release' }, as('bob', { decide: true }));
    expect(release.status).toBe(403);
    expect(((await release.json()) as Json).error).toMatchObject({ code: 'STOP_RELEASE_FORBIDDEN', message: expect.stringMatching(/engaged by an operator.*only an operator releases it/) });
    expect(await h.tools.emergencyStop.userStatus('bob')).toMatchObject({ engaged: true, reason: 'compliance hold', engagedBy: 'operator', by: 'ops' });
    // Engaging his own stop on top does not turn the operator's into his.
    expect((await send('POST', '/v1/stop', { action: 'engage', reason: 'mine' }, as('bob'))).status).toBe(200);
    expect((await send('POST', '/v1/stop', { action: 'release' }, as('bob', { decide: true }))).status).toBe(403);
    const cron = await cronSwap();
    expect(cron.envelope).toMatchObject({ ok: false, code: 'EMERGENCY_STOP' });
    expect(h.ledger).toEqual([]);
    // The operator releases it (both the operator's and Bob's own); then the cron swap fills under its grant.
    expect((await send('POST', '/v1/stop', { action: 'release', userId: 'bob' }, as('ops', { operator: true, decide: true }))).status).toBe(200);
    expect((await h.tools.emergencyStop.userStatus('bob')).engaged).toBe(false);
    expect((await cronSwap()).envelope.ok).toBe(true);
    expect(h.ledger).toEqual(['swap:USDC->ETH:5']);
  });

  it('a user releases a stop they engaged themselves; the SDK refuses a user-level release of the global or an operator stop', async () => {
    h = await startGateway();
    expect((await send('POST', '/v1/stop', { action: 'engage', reason: 'panic' }, as('bob'))).status).toBe(200);
    expect(await h.tools.emergencyStop.userStatus('bob')).toMatchObject({ engaged: true, engagedBy: 'user', by: 'bob' });
    expect((await send('POST', '/v1/stop', { action: 'release' }, as('bob', { decide: true }))).status).toBe(200);
    expect((await h.tools.emergencyStop.userStatus('bob')).engaged).toBe(false);
    // One enforcement point: the stop itself, whatever surface calls it.
    await h.tools.emergencyStop.engage('hold', { userId: 'bob', by: 'ops' });
    await expect(h.tools.emergencyStop.release({ userId: 'bob', by: 'bob', actor: 'user' })).rejects.toMatchObject({ code: 'STOP_RELEASE_FORBIDDEN' });
    await h.tools.emergencyStop.engage('drill', { by: 'ops' });
    await expect(h.tools.emergencyStop.release({ by: 'bob', actor: 'user' })).rejects.toMatchObject({ code: 'STOP_RELEASE_FORBIDDEN' });
    await expect(h.tools.emergencyStop.engage('mine', { by: 'bob', actor: 'user' })).rejects.toMatchObject({ code: 'STOP_RELEASE_FORBIDDEN' });
    expect((await h.tools.emergencyStop.status()).engaged).toBe(true);
    expect((await h.tools.emergencyStop.userStatus('bob')).engaged).toBe(true);
  });
});

describe('attack (issue 37): grants without bounds', () => {
  it('a grant naming a MANUAL_ONLY tool (directly or through its set), caps of 1e12 or an expiry in 9999 is refused naming the field; nothing is stored', async () => {
    h = await startGateway([], { withdraw: true, registry: { grantBounds: { maxCapPerCallUsd: 5_000, maxCapPerDayUsd: 25_000 } } });
    const alice = as('alice', { decide: true });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [grantBody({ tools: ['withdraw_funds'] }), /^grants\.create: "tools" names "withdraw_funds", a MANUAL_ONLY tool/],
      [grantBody({ tools: undefined, toolSets: ['transfer'] }), /^grants\.create: "toolSets" covers "withdraw_funds", a MANUAL_ONLY tool/],
      [grantBody({ capPerCallUsd: 1e12 }), /^grants\.create: "capPerCallUsd" .*above the operator's limit of \$5,000/],
      [grantBody({ capPerDayUsd: 1e12 }), /^grants\.create: "capPerDayUsd" .*above the operator's limit of \$25,000/],
      [grantBody({ expiresAt: '9999-12-31T00:00:00Z' }), /^grants\.create: "expiresAt" .*outlives the longest a grant may live \(90 days/],
    ];
    for (const [body, message] of cases) {
      const r = await send('POST', '/v1/grants', body, alice);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as Json).error.message, JSON.stringify(body)).toMatch(message);
    }
    expect(await h.tools.grants.list({ includeRevoked: true })).toEqual([]);
    // Within the bounds, it is stored.
    expect((await send('POST', '/v1/grants', grantBody({ capPerCallUsd: 5_000, capPerDayUsd: 25_000 }), alice)).status).toBe(201);
  });

  it('without any bound configured, the default lifetime (90 days) still holds, and the SDK refuses the same', async () => {
    h = await startGateway([], { withdraw: true });
    const r = await send('POST', '/v1/grants', grantBody({ expiresAt: '9999-12-31T00:00:00Z' }), as('alice', { decide: true }));
    expect(r.status).toBe(400);
    await expect(h.tools.grants.create({ tools: ['swap_tokens'], userId: 'alice', expiresAt: 400 * 86_400_000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('"expiresAt"') });
    await expect(h.tools.grants.create({ toolName: 'withdraw_funds', userId: 'alice', expiresAt: 60_000 })).rejects.toMatchObject({ message: expect.stringContaining('"toolName" names "withdraw_funds", a MANUAL_ONLY tool') });
    // A grant without an expiry gets the longest lifetime, not forever.
    const g = await h.tools.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerDayUsd: 10 });
    expect(Date.parse(g.expiresAt!) - Date.parse(g.createdAt)).toBe(90 * 86_400_000);
    expect(await h.tools.grants.list({ includeRevoked: true })).toHaveLength(1);
  });
});

describe('grants over HTTP', () => {
  it('bad input is a 400 naming the field, and nothing is stored', async () => {
    h = await startGateway();
    const alice = as('alice', { decide: true });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [grantBody({ capPerDayUsd: -1 }), /"capPerDayUsd"/],
      [grantBody({ toolSets: ['yolo'], tools: undefined }), /"toolSets" names an unknown tool set "yolo"/],
      [grantBody({ expiresAt: '2001-01-01T00:00:00Z' }), /"expiresAt" is in the past/],
      [grantBody({ expiresAt: undefined }), /^expiresAt: required/],
      [grantBody({ capPerCallUsd: undefined }), /^capPerCallUsd: required/],
      [grantBody({ sources: ['user'] }), /"sources"/],
      [grantBody({ spend: 'all' }), /^spend: unknown field/],
    ];
    for (const [body, message] of cases) {
      const r = await send('POST', '/v1/grants', body, alice);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(((await r.json()) as Json).error.message).toMatch(message);
    }
    expect(await h.tools.grants.list({ includeRevoked: true })).toEqual([]);
    expect(await h.tools.queryAudit({ toolName: 'grant.create' })).toEqual([]);
  });

  it('create, list (tenant-scoped, with what is left today), revoke; every create and revoke is an audit row', async () => {
    h = await startGateway();
    const created = await send('POST', '/v1/grants', grantBody({ toolSets: ['trade'], tools: undefined }), as('alice', { decide: true }));
    expect(created.status).toBe(201);
    const grant = ((await created.json()) as Json).grant;
    expect(grant).toMatchObject({ userId: 'alice', toolSets: ['trade'], sources: ['cron'], capPerCallUsd: 50, capPerDayUsd: 100, status: 'active', spentTodayUsd: 0, leftTodayUsd: 100, createdBy: 'alice' });
    expect((await get('/v1/grants', as('alice'))).grants.map((g: Json) => g.id)).toEqual([grant.id]);
    expect((await get('/v1/grants', as('bob'))).grants).toEqual([]);
    expect((await fetch(`${h.url}/v1/grants?user=*`, { headers: as('bob') })).status).toBe(403);
    expect((await get('/v1/grants?user=*', as('ops', { operator: true }))).grants).toHaveLength(1);
    // Another tenant's grant is not there.
    expect((await send('DELETE', `/v1/grants/${grant.id}`, undefined, as('bob', { decide: true }))).status).toBe(404);
    const revoked = await send('DELETE', `/v1/grants/${grant.id}`, undefined, as('alice', { decide: true }));
    expect(((await revoked.json()) as Json)).toMatchObject({ revoked: true, grant: { status: 'revoked', leftTodayUsd: 0 } });
    expect((await get('/v1/grants', as('alice'))).grants).toEqual([]);
    expect((await get('/v1/grants?includeRevoked=1', as('alice'))).grants).toHaveLength(1);
    const rows = await h.tools.queryAudit({});
    expect(rows.filter((r) => r.toolName.startsWith('grant.')).map((r) => [r.toolName, r.source, JSON.parse(r.argsJson).by])).toEqual([['grant.revoke', 'operator', 'alice'], ['grant.create', 'operator', 'alice']]);
  });
});

describe('stops, switches and quotas over HTTP', () => {
  it("a user's stop refuses her fund-moving calls (only reads run) and her webhook turns; others go on", async () => {
    const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 5, confirm: true } };
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Stopped.' }], { gateway: { webhooks: { alerts: { secret: 'whsec-0123456789abcdef', userId: 'alice' } } } });
    await send('POST', '/v1/stop', { action: 'engage', reason: 'going offline' }, as('alice'));
    const text = await (await send('POST', '/v1/chat', chatBody('a-1', 'swap 5 USDC to ETH'), as('alice', { decide: true }))).text();
    expect(text).toContain('EMERGENCY_STOP');
    expect(text).toContain('going offline');
    expect(h.ledger).toEqual([]);
    const body = JSON.stringify({ message: 'BTC dropped' });
    const ts = String(Math.floor(Date.now() / 1000));
    const hook = await fetch(`${h.url}/v1/signals/webhook/alerts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-timestamp': ts, 'x-minara-signature': signWebhook('whsec-0123456789abcdef', Number(ts), body), 'idempotency-key': 'evt-1' }, body });
    expect(hook.status).toBe(429);
    expect(((await hook.json()) as Json).error.message).toMatch(/alice's emergency stop is engaged \(going offline\); autonomous runs are skipped/);
    expect((await get('/v1/stop', as('bob'))).applies).toBe(false);
  });

  it("capability switches: alice turns her trade set off and on; an operator's switch only an operator lifts", async () => {
    h = await startGateway();
    const off = await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: false, reason: 'no trading this week' }, as('alice'));
    expect(((await off.json()) as Json)).toMatchObject({ userId: 'alice', toolSet: 'trade', enabled: false, changed: true });
    const listed = await get('/v1/capabilities', as('alice'));
    expect(listed.toolSets.find((s: Json) => s.name === 'trade')).toMatchObject({ enabled: false, reason: 'no trading this week', by: 'alice' });
    expect((await get('/v1/capabilities', as('bob'))).toolSets.find((s: Json) => s.name === 'trade')).toMatchObject({ enabled: true });
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: true }, as('alice', { decide: true }))).status).toBe(200);
    // The operator turns it off for alice: alice cannot lift it.
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: false, userId: 'alice' }, as('ops', { operator: true }))).status).toBe(200);
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: true }, as('alice', { decide: true }))).status).toBe(403);
    expect((await send('POST', '/v1/capabilities', { toolSet: 'trade', enabled: false, userId: 'bob' }, as('alice'))).status).toBe(403);
    expect((await send('POST', '/v1/capabilities', { toolSet: 'nope', enabled: false }, as('alice'))).status).toBe(400);
    expect(await h.tools.capabilities.list()).toMatchObject([{ userId: 'alice', toolSet: 'trade', by: 'ops' }]);
  });

  it('quotas: the third turn in a minute is a 429 with the reason and Retry-After; /v1/usage shows where each user stands', async () => {
    h = await startGateway([{ text: 'one' }, { text: 'two' }, { text: 'three' }], { gateway: { quotas: { requestsPerMinute: 2 } } });
    const alice = as('alice', { decide: true });
    for (const id of ['q-1', 'q-2']) expect((await send('POST', '/v1/chat', chatBody(id, 'hi'), alice)).status).toBe(200);
    const third = await send('POST', '/v1/chat', chatBody('q-3', 'hi'), alice);
    expect(third.status).toBe(429);
    const retry = Number(third.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const refused = (await third.json()) as Json;
    expect(refused.error).toMatchObject({ code: 'HTTP_TOO_MANY_REQUESTS', message: expect.stringMatching(/alice has used 2 of 2 chat turns allowed per minute/) });
    // Bob has his own count.
    expect((await send('POST', '/v1/chat', chatBody('q-4', 'hi'), as('bob', { decide: true }))).status).toBe(200);
    const usage = await get('/v1/usage', as('alice'));
    expect(usage.quota).toMatchObject({ userId: 'alice', requestsPerMinute: { limit: 2, used: 2, from: 'default' }, usdPerDay: { limit: null, from: 'none' } });
    // The usage ledger (createApp records each turn's cost) lists who spent what today.
    await h.storage.usage.record({ turnId: 't-bob', sessionId: 'q-4', userId: 'bob', source: 'user', modelId: 'm', at: new Date().toISOString(), inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.01 });
    // An operator gives alice more room (a stored setting beats the default) and sees everyone.
    expect((await send('PUT', '/v1/quotas/alice', { requestsPerMinute: 5, usdPerDay: 1.5 }, as('alice', { decide: true }))).status).toBe(403);
    expect((await send('PUT', '/v1/quotas/alice', { requestsPerMinute: -1 }, as('ops', { operator: true, decide: true }))).status).toBe(400);
    expect((await send('PUT', '/v1/quotas/alice', { requestsPerMinute: 5, usdPerDay: 1.5 }, as('ops', { operator: true, decide: true }))).status).toBe(200);
    const all = await get('/v1/usage?all=1', as('ops', { operator: true }));
    expect(all.users.map((u: Json) => [u.userId, u.quota.requestsPerMinute.limit, u.quota.usdPerDay.limit])).toEqual([['alice', 5, 1.5], ['bob', 2, null]]);
    expect((await fetch(`${h.url}/v1/usage?all=1`, { headers: as('bob') })).status).toBe(403);
  });
});

describe('a quota from the token', () => {
  it("the JWT's minara_quota claim limits its user, and a stored setting beats it", async () => {
    const secret = 'a-jwt-secret-of-at-least-32-bytes-long!!';
    const token = (sub: string, quota?: unknown) =>
      new SignJWT({ sub, scope: 'approvals:decide', ...(quota ? { minara_quota: quota } : {}) }).setProtectedHeader({ alg: 'HS256' }).setAudience('minara').setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    h = await startGateway([{ text: 'one' }, { text: 'two' }, { text: 'three' }], { gateway: { trustUserHeader: false, authenticate: createJwtAuthenticator({ secret, audience: 'minara' }) } });
    const carol = { authorization: `Bearer ${await token('carol', { rpm: 1, usdPerDay: 3 })}` };
    expect((await send('POST', '/v1/chat', chatBody('t-1', 'hi'), carol)).status).toBe(200);
    const refused = await send('POST', '/v1/chat', chatBody('t-2', 'hi'), carol);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await get('/v1/usage', carol)).quota).toMatchObject({ requestsPerMinute: { limit: 1, used: 1, from: 'token' }, usdPerDay: { limit: 3, leftUsd: 3, from: 'token' } });
    await h.storage.controls.setQuota({ userId: 'carol', requestsPerMinute: 5, updatedAt: new Date().toISOString() });
    expect((await send('POST', '/v1/chat', chatBody('t-3', 'hi'), carol)).status).toBe(200);
    expect(quotaFromClaim({ rpm: -1, usdPerDay: 'x' })).toBeUndefined();
    expect(quotaFromClaim({ requestsPerMinute: 4 })).toEqual({ requestsPerMinute: 4 });
    expect(USER_TURN_SOURCES).toEqual(['user', 'subagent', 'mcp']);
  });
});
