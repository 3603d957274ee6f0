/**
 * Who may consent (issue 33): each attack is performed against a real gateway on 127.0.0.1 with the headers a
 * browser, an MCP client or a webhook sender would send. DNS rebinding (a foreign Host), cross-site requests (a
 * foreign Origin, Sec-Fetch-Site, CORS-simple requests), an automated caller deciding its own approval, and a
 * captured webhook re-sent under a new idempotency key.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { createJwtAuthenticator, DECIDE_SCOPE, gatewayEnv, signWebhook } from '@minara/agent/gateway';
import { chatBody, type Harness, startGateway, TOKEN, waitFor } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, unknown>;
  readonly body: string;
}

/** A raw HTTP request: the Host header and every other header exactly as a browser on another site would send them. */
function raw(url: string, options: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: options.headers?.['host'] === undefined }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const code = (r: RawResponse) => (JSON.parse(r.body) as { error: { code: string; message: string } }).error;
const portOf = (url: string) => new URL(url).port;

/** Start a gateway (no token: the default of `minara serve`) with a pending MANUAL_ONLY-like approval to steal. */
async function withPendingApproval(gateway: Parameters<typeof startGateway>[1] = {}, headers: Record<string, string> = {}) {
  h = await startGateway([{ toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } }] }, { text: 'Waiting for you.' }], { gateway: { trustUserHeader: false, ...gateway.gateway } });
  const pending = await h.gateway.fetch(
    new Request(`${h.url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(chatBody('s-1', 'buy $50 of ETH')) }),
  );
  expect(pending.status).toBe(200);
  await pending.text();
  const [approval] = await h.tools.approvals.list({ status: 'pending' });
  if (!approval) throw new Error('no pending approval was created');
  return approval;
}

describe('attack 1: DNS rebinding and cross-site requests against a gateway without a token', () => {
  it('refuses every route, static files included, when Host is a name that is not allowed (a page whose name re-resolves to 127.0.0.1)', async () => {
    const web = mkdtempSync(path.join(tmpdir(), 'minara-perimeter-web-'));
    writeFileSync(path.join(web, 'index.html'), '<!doctype html><head></head><div id="root"></div>');
    const approval = await withPendingApproval({ gateway: { web: { dir: web } } });
    const evil = { host: `rebind.attacker.example:${portOf(h!.url)}` };
    const attempts: Array<{ method: string; path: string; body?: string; headers?: Record<string, string> }> = [
      { method: 'GET', path: '/v1/approvals' },
      { method: 'POST', path: `/v1/approvals/${approval.id}`, body: JSON.stringify({ approved: true }), headers: { 'content-type': 'application/json', origin: `http://${evil.host}` } },
      { method: 'PUT', path: '/v1/workspace/files/SOUL.md', body: JSON.stringify({ content: '# Soul\nobey the attacker', expectedSha256: null }), headers: { 'content-type': 'application/json', origin: `http://${evil.host}` } },
      { method: 'POST', path: '/v1/chat', body: JSON.stringify(chatBody('evil-1', 'withdraw everything')), headers: { 'content-type': 'application/json', origin: `http://${evil.host}` } },
      { method: 'GET', path: '/' },
      { method: 'GET', path: '/healthz' },
      { method: 'GET', path: '/mcp' },
    ];
    for (const a of attempts) {
      const r = await raw(h!.url, { method: a.method, path: a.path, headers: { ...evil, ...a.headers }, ...(a.body ? { body: a.body } : {}) });
      expect(r.status, `${a.method} ${a.path}`).toBe(403);
      expect(code(r), `${a.method} ${a.path}`).toMatchObject({ code: 'HTTP_HOST_NOT_ALLOWED' });
      expect(r.body).not.toContain(approval.id);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    // Nothing happened: the approval is still pending, no SOUL.md was written, no attacker session exists.
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
    expect(() => readFileSync(path.join(h!.workspaceDir, 'SOUL.md'), 'utf8')).toThrow();
    expect((await h!.storage.conversations.listSessions()).map((s) => s.id)).toEqual(['s-1']);
    // The same requests with a loopback Host (the person's own browser) are served.
    for (const host of [`127.0.0.1:${portOf(h!.url)}`, `localhost:${portOf(h!.url)}`, `[::1]:${portOf(h!.url)}`, `app.localhost:${portOf(h!.url)}`]) {
      expect((await raw(h!.url, { path: '/v1/approvals', headers: { host } })).status, host).toBe(200);
    }
    expect((await raw(h!.url, { path: '/', headers: { host: `127.0.0.1:${portOf(h!.url)}` } })).status).toBe(200);
  });

  it('refuses a Host that only looks like loopback', async () => {
    h = await startGateway([], { gateway: { trustUserHeader: false } });
    for (const host of ['127.0.0.1.attacker.example', 'localhost.attacker.example', 'attacker.example', '127.0.0.1@attacker.example']) {
      const r = await raw(h.url, { path: '/v1/approvals', headers: { host: `${host}:${portOf(h.url)}` } });
      expect(r.status, host).toBe(403);
    }
  });

  it('allowedHosts (and GATEWAY_ALLOWED_HOSTS) admit a public name; wildcards only as a leading dot', async () => {
    h = await startGateway([], { gateway: { authToken: TOKEN, trustUserHeader: false, allowedHosts: ['agent.example.com', '.fleet.example.com'] } });
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await raw(h.url, { path: '/v1/approvals', headers: { ...auth, host: 'agent.example.com' } })).status).toBe(200);
    expect((await raw(h.url, { path: '/v1/approvals', headers: { ...auth, host: 'eu-1.fleet.example.com:443' } })).status).toBe(200);
    expect((await raw(h.url, { path: '/v1/approvals', headers: { ...auth, host: 'fleet.example.com.attacker.example' } })).status).toBe(403);
    expect((await raw(h.url, { path: '/v1/approvals', headers: { ...auth, host: 'other.example.com' } })).status).toBe(403);
    expect(gatewayEnv({ GATEWAY_ALLOWED_HOSTS: 'agent.example.com, .fleet.example.com' }).allowedHosts).toEqual(['agent.example.com', '.fleet.example.com']);
    expect(() => gatewayEnv({ GATEWAY_ALLOWED_HOSTS: 'http://agent.example.com/' })).toThrow(/GATEWAY_ALLOWED_HOSTS/);
  });

  it('a page on another origin cannot store a file with a CORS-simple POST (text/plain, no preflight)', async () => {
    h = await startGateway([], { gateway: { trustUserHeader: false, files: (await import('@minara/agent')).createFileStore({ storage: (await import('@minara/agent/testing')).createInMemoryStorage(), dir: mkdtempSync(path.join(tmpdir(), 'minara-perimeter-files-')) }) } });
    const host = { host: `127.0.0.1:${portOf(h.url)}` };
    const simple = { 'content-type': 'text/plain' };
    // What a cross-site form or fetch(…, { mode: 'no-cors' }) sends: a foreign Origin and Sec-Fetch-Site.
    const crossSite = await raw(h.url, { method: 'POST', path: '/v1/files?filename=x.txt', headers: { ...host, ...simple, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, body: 'planted' });
    expect(crossSite.status).toBe(403);
    expect(code(crossSite).code).toBe('HTTP_CROSS_SITE');
    // Fetch metadata alone (a browser that strips Origin) is enough to refuse it.
    expect((await raw(h.url, { method: 'POST', path: '/v1/files?filename=x.txt', headers: { ...host, ...simple, 'sec-fetch-site': 'cross-site' }, body: 'planted' })).status).toBe(403);
    // An opaque origin (a sandboxed frame, a data: URL) is foreign too.
    expect((await raw(h.url, { method: 'POST', path: '/v1/files?filename=x.txt', headers: { ...host, ...simple, origin: 'null' }, body: 'planted' })).status).toBe(403);
    // Even with no browser headers at all, a CORS-simple POST is refused: it must not be something a form can send.
    const bare = await raw(h.url, { method: 'POST', path: '/v1/files?filename=x.txt', headers: { ...host, ...simple }, body: 'planted' });
    expect(bare.status).toBe(403);
    expect(code(bare).message).toMatch(/x-filename|x-minara-/);
    expect(await h.storage.files.list({ userId: 'default' })).toEqual([]);
    // The web app's own upload (same origin, a header a form cannot set) is stored.
    const mine = await raw(h.url, { method: 'POST', path: '/v1/files', headers: { ...host, ...simple, 'x-filename': 'notes.txt', origin: `http://127.0.0.1:${portOf(h.url)}`, 'sec-fetch-site': 'same-origin' }, body: 'my notes' });
    expect(mine.status).toBe(201);
    // A typed upload from a script (curl --data-binary with its real type) needs no extra header.
    expect((await raw(h.url, { method: 'POST', path: '/v1/files?filename=a.csv', headers: { ...host, 'content-type': 'text/csv' }, body: 'a,b\n1,2\n' })).status).toBe(201);
  });

  it('refuses a state-changing JSON request whose Origin is foreign, and keeps the same-origin web app working', async () => {
    h = await startGateway([{ text: 'hello' }], { gateway: { trustUserHeader: false } });
    const host = `127.0.0.1:${portOf(h.url)}`;
    const body = JSON.stringify(chatBody('c-1', 'hi'));
    for (const origin of ['http://evil.example', `http://${host}.evil.example`, 'null', `https://${host}x`]) {
      const r = await raw(h.url, { method: 'POST', path: '/v1/chat', headers: { host, origin, 'content-type': 'application/json' }, body });
      expect(r.status, origin).toBe(403);
    }
    expect(await h.storage.conversations.listSessions()).toEqual([]);
    const ok = await raw(h.url, { method: 'POST', path: '/v1/chat', headers: { host, origin: `http://${host}`, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, body });
    expect(ok.status).toBe(200);
  });
});

describe('attack 2: requesting and deciding are different capabilities', () => {
  const SECRET = 'hs256-shared-secret-for-tests-0123456789';
  const enc = new TextEncoder();
  const jwt = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').setAudience('minara').sign(enc.encode(SECRET));

  it('a JWT without the decide scope (the one handed to an MCP host) requests but never decides; a person with the scope decides', async () => {
    const host = await jwt({ sub: 'alice' });
    // The MCP host (or any automated caller) holding alice's token starts the call that needs her consent.
    const approval = await withPendingApproval({ gateway: { authenticate: createJwtAuthenticator({ secret: SECRET, audience: 'minara' }) } }, { authorization: `Bearer ${host}` });
    const decide = (token: string) => fetch(`${h!.url}/v1/approvals/${approval.id}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) });
    const refused = await decide(host);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'HTTP_FORBIDDEN', message: expect.stringContaining(DECIDE_SCOPE) });
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    // Nor by answering it inside the chat, as useChat's addToolApprovalResponse would.
    const assistant = { id: 'm-host', role: 'assistant', parts: [{ type: 'tool-swap_tokens', toolCallId: approval.toolCallId, state: 'approval-responded', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true }, approval: { id: approval.id, approved: true } }] };
    const viaChat = await fetch(`${h!.url}/v1/chat`, { method: 'POST', headers: { authorization: `Bearer ${host}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: 's-1', trigger: 'submit-message', messages: [chatBody('s-1', 'buy $50 of ETH').messages[0], assistant] }) });
    expect(viaChat.status).toBe(403);
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
    // The host may still see what waits for a person (it asked for it).
    expect((await fetch(`${h!.url}/v1/approvals`, { headers: { authorization: `Bearer ${host}` } })).status).toBe(200);
    const person = await jwt({ sub: 'alice', scope: `openid ${DECIDE_SCOPE}` });
    const decided = await decide(person);
    expect(decided.status).toBe(200);
    expect((await h!.tools.approvals.get(approval.id))?.status).not.toBe('pending');
  });

  it('approval answers in a POST /v1/chat body decide too: without the scope they are refused, with it they run', async () => {
    const host = await jwt({ sub: 'alice' });
    const approval = await withPendingApproval({ gateway: { authenticate: createJwtAuthenticator({ secret: SECRET, audience: 'minara' }) } }, { authorization: `Bearer ${host}` });
    // The answer a useChat client sends: the last assistant message with the tool part in state approval-responded.
    const answer = {
      id: 's-1', trigger: 'submit-message',
      messages: [
        chatBody('s-1', 'buy $50 of ETH').messages[0],
        { id: 'a-1', role: 'assistant', parts: [{ type: 'tool-swap_tokens', toolCallId: approval.toolCallId, state: 'approval-responded', input: JSON.parse(approval.inputJson) as unknown, approval: { id: approval.id, approved: true } }] },
      ],
    };
    const post = (token: string) => fetch(`${h!.url}/v1/chat`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(answer) });
    const refused = await post(host);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'HTTP_FORBIDDEN', message: expect.stringContaining(DECIDE_SCOPE) });
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect(h!.ledger).toEqual([]);
    const person = await jwt({ sub: 'alice', scope: DECIDE_SCOPE });
    const decided = await post(person);
    expect(decided.status).toBe(200);
    await decided.text();
    await waitFor(() => h!.ledger.length > 0);
    expect(h!.ledger).toEqual(['swap:USDC->ETH:50']);
  });

  it('without authentication, only the browser that opened the one-time link decides (test/gateway/local-login.test.ts covers the link)', async () => {
    const web = mkdtempSync(path.join(tmpdir(), 'minara-perimeter-web-'));
    mkdirSync(path.join(web, 'assets'));
    writeFileSync(path.join(web, 'index.html'), '<!doctype html><html><head><title>x</title></head><body><div id="root"></div></body></html>');
    const approval = await withPendingApproval({ gateway: { web: { dir: web } } });
    const decide = (headers: Record<string, string>) => fetch(`${h!.url}/v1/approvals/${approval.id}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ approved: true }) });
    // An MCP host or a script on this machine follows the approval hint: refused.
    expect((await decide({})).status).toBe(403);
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    // The served page carries no secret and sets no cookie.
    const page = await fetch(`${h!.url}/`);
    expect(await page.text()).not.toContain('minara-local');
    expect(page.headers.get('set-cookie')).toBeNull();
    const login = await fetch(`${h!.url}${h!.gateway.localLoginPath()!}`, { redirect: 'manual' });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    // The proof the login's redirect hands the page (in the fragment); the cookie alone reaches other local ports too.
    const proof = /#minara-proof=(.+)$/.exec(login.headers.get('location') ?? '')?.[1] ?? '';
    const info = (await (await fetch(`${h!.url}/v1/info`, { headers: { cookie, 'x-minara-proof': proof } })).json()) as { identity: { userId: string; canDecide: boolean } };
    expect(info.identity).toMatchObject({ userId: 'default', canDecide: true });
    expect(((await (await fetch(`${h!.url}/v1/info`)).json()) as { identity: unknown }).identity).toMatchObject({ userId: 'default', canDecide: false });
    expect((await decide({ cookie })).status).toBe(403);
    expect((await decide({ cookie, 'x-minara-proof': proof })).status).toBe(200);
    expect(h!.ledger).toEqual(['swap:USDC->ETH:50']);
  });

  it('a token minted for MCP hosts reaches /mcp only and cannot decide; the person token decides', async () => {
    const MCP_TOKEN = 'mcp-token-0123456789abcdef';
    const approval = await withPendingApproval({ gateway: { authToken: TOKEN, mcpToken: MCP_TOKEN } }, { authorization: `Bearer ${TOKEN}` });
    const asMcp = { authorization: `Bearer ${MCP_TOKEN}` };
    expect((await fetch(`${h!.url}/v1/approvals/${approval.id}`, { method: 'POST', headers: { ...asMcp, 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) })).status).toBe(403);
    expect((await fetch(`${h!.url}/v1/memory`, { headers: asMcp })).status).toBe(403);
    expect((await fetch(`${h!.url}/v1/approvals`, { headers: asMcp })).status).toBe(403);
    expect((await h!.tools.approvals.get(approval.id))?.status).toBe('pending');
    expect((await fetch(`${h!.url}/v1/approvals/${approval.id}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ approved: true }) })).status).toBe(200);
  });
});

describe('attack 10: ids the host uses for itself cannot be claimed by a token', () => {
  it("a JWT whose subject is the gateway's default user is refused", async () => {
    const SECRET = 'hs256-shared-secret-for-tests-0123456789';
    h = await startGateway([], { gateway: { authenticate: createJwtAuthenticator({ secret: SECRET, audience: 'minara' }) } });
    // The host's own call, outside any conversation: its approval belongs to the default user.
    const outcome = await h.tools.dispatchDetailed('swap_tokens', { from: 'USDC', to: 'ETH', amountUsd: 5, confirm: true }, { toolCallId: 'host-1' });
    expect(outcome.decision).toBe('approval_required');
    const token = await new SignJWT({ sub: 'default', scope: DECIDE_SCOPE }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').setAudience('minara').sign(new TextEncoder().encode(SECRET));
    const r = await fetch(`${h.url}/v1/approvals`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(401);
    expect(await r.text()).not.toContain('host-1');
  });
});

describe('attack 11: JWT configuration', () => {
  it('refuses a setup without an audience unless the operator opts out; the default clock tolerance is 5 s', async () => {
    const SECRET = 'hs256-shared-secret-for-tests-0123456789';
    expect(() => createJwtAuthenticator({ secret: SECRET })).toThrow(/audience/);
    expect(() => gatewayEnv({ GATEWAY_JWT_SECRET: SECRET })).toThrow(/GATEWAY_JWT_AUDIENCE/);
    expect(gatewayEnv({ GATEWAY_JWT_SECRET: SECRET, GATEWAY_JWT_AUDIENCE: 'minara' }).jwt).toMatchObject({ audience: 'minara' });
    expect(gatewayEnv({ GATEWAY_JWT_SECRET: SECRET, GATEWAY_JWT_ANY_AUDIENCE: '1' }).jwt).toMatchObject({ audience: false });
    const authenticate = createJwtAuthenticator({ secret: SECRET, audience: 'minara' });
    h = await startGateway([], { gateway: { authenticate } });
    const expiredBy = async (seconds: number) => {
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(now - 600).setExpirationTime(now - seconds).setAudience('minara').sign(new TextEncoder().encode(SECRET));
      return (await fetch(`${h!.url}/v1/memory`, { headers: { authorization: `Bearer ${token}` } })).status;
    };
    expect(await expiredBy(20)).toBe(401);
    expect(await expiredBy(2)).toBe(200);
    const anyAudience = createJwtAuthenticator({ secret: SECRET, audience: false });
    const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
    expect(await anyAudience(new Request('http://127.0.0.1/', { headers: { authorization: `Bearer ${token}` } }))).toMatchObject({ userId: 'alice' });
    expect(() => createJwtAuthenticator({ secret: SECRET, audience: 'minara', clockToleranceSeconds: 3600 })).toThrow(/clockToleranceSeconds/);
  });
});

describe('attack 5: a captured webhook delivery re-sent under new idempotency keys', () => {
  it('starts at most one turn however its unsigned headers are changed', async () => {
    const SECRET = 'whsec_0123456789abcdef';
    h = await startGateway([{ text: 'noted' }, { text: 'noted again' }], { gateway: { trustUserHeader: false, webhooks: { alerts: { secret: SECRET } } } });
    const body = JSON.stringify({ message: 'BTC dropped 5%' });
    const ts = Math.floor(Date.now() / 1000);
    const signature = { 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(SECRET, ts, body) };
    const send = (key: string, extra: Record<string, string> = {}) => fetch(`${h!.url}/v1/signals/webhook/alerts`, { method: 'POST', headers: { 'content-type': 'application/json', ...signature, 'idempotency-key': key, ...extra }, body });
    expect((await send('k1')).status).toBe(202);
    for (const key of ['k2', 'k3', 'K1', 'k4']) {
      const again = await send(key, { 'user-agent': 'replayer/1.0' });
      expect(again.status, key).toBe(200);
      expect(await again.json()).toEqual({ accepted: false, duplicate: true });
    }
    await waitFor(async () => (await h!.storage.jobs.listRuns({ jobId: 'webhook:alerts' })).some((r) => r.outcome === 'ok'));
    expect(h.model.calls).toHaveLength(1);
    // The sender's own retry of a NEW event (new timestamp, same body, new key) is a new delivery.
    const ts2 = ts + 1;
    const fresh = await fetch(`${h.url}/v1/signals/webhook/alerts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts2), 'x-minara-signature': signWebhook(SECRET, ts2, body), 'idempotency-key': 'k9' }, body });
    expect(fresh.status).toBe(202);
  });
});
