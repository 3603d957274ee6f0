import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MinaraError } from '@minara/agent';
import { createGateway, gatewayEnv, isLoopbackHost, serveGateway } from '@minara/agent/gateway';
import { chatBody, type Harness, postJson, startGateway, TOKEN } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A raw HTTP request, so paths and bodies reach the server exactly as written (no client-side URL normalisation). */
function raw(url: string, options: { method?: string; path: string; headers?: Record<string, string | number>; body?: Buffer | string; chunks?: Buffer[] }): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    // The server may answer (413) and close before the whole body is sent: that is the point.
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    if (options.chunks) {
      for (const c of options.chunks) req.write(c);
      req.end();
    } else req.end(options.body);
  });
}

const errorCode = (body: string) => (JSON.parse(body) as { error: { code: string; message: string } }).error;

describe('auth', () => {
  it('GET /healthz is open; everything else needs the bearer token (missing, wrong, wrong length, wrong scheme → 401 JSON)', async () => {
    h = await startGateway([{ text: 'hi' }], { gateway: { authToken: TOKEN } });
    const health = await fetch(`${h.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true });
    const wrongSameLength = TOKEN.slice(0, -1) + (TOKEN.endsWith('f') ? 'e' : 'f');
    for (const authorization of [undefined, `Bearer ${wrongSameLength}`, 'Bearer short', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, 'Bearer ', `bearer${TOKEN}`]) {
      const res = await fetch(`${h.url}/v1/memory`, { headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await res.json()).toMatchObject({ error: { code: 'HTTP_UNAUTHORIZED' } });
    }
    // Unknown routes are not revealed before authentication.
    expect((await fetch(`${h.url}/v1/nope`)).status).toBe(401);
    // A chat POST without the token stores nothing.
    expect((await postJson(`${h.url}/v1/chat`, chatBody('auth-1', 'hi'))).status).toBe(401);
    expect(await h.storage.conversations.listSessions()).toEqual([]);
    const ok = await fetch(`${h.url}/v1/memory`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    const chat = await postJson(`${h.url}/v1/chat`, chatBody('auth-1', 'hi'), { authorization: `bearer ${TOKEN}` });
    expect(chat.status).toBe(200);
    await chat.text();
  });

  it('rejects weak tokens at construction, and serveGateway refuses a non-loopback host without one', async () => {
    h = await startGateway();
    const { storage, tools } = h;
    expect(() => createGateway({ runtime: {} as never, storage, tools })).toThrow(/runtime/);
    const base = { runtime: { run: () => [] } as never, storage, tools };
    expect(() => createGateway({ ...base, authToken: 'short' })).toThrow(/authToken/);
    const open = createGateway(base);
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'example.com']) {
      const error = await serveGateway({ gateway: open, host, port: 0 }).then(() => undefined, (e: unknown) => e);
      expect(MinaraError.isInstance(error) && error.code === 'CONFIG_INVALID', host).toBe(true);
      expect(String((error as Error).message)).toContain('GATEWAY_AUTH_TOKEN');
    }
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '127.0.0.256', 'localhost.evil.com'].some(isLoopbackHost)).toBe(false);
    const none = { allowedHosts: [], allowedOrigins: [], quotas: {} };
    expect(gatewayEnv({})).toEqual({ port: 8080, host: '127.0.0.1', trustUserHeader: false, ...none });
    expect(gatewayEnv({ GATEWAY_PORT: '9090', GATEWAY_AUTH_TOKEN: TOKEN })).toEqual({ port: 9090, host: '127.0.0.1', authToken: TOKEN, trustUserHeader: false, ...none });
    expect(gatewayEnv({ GATEWAY_JWKS_URL: 'https://id.example.com/jwks', GATEWAY_JWT_AUDIENCE: 'minara', GATEWAY_TRUST_USER_HEADER: '1' })).toEqual({
      port: 8080, host: '127.0.0.1', jwt: { jwksUrl: 'https://id.example.com/jwks', audience: 'minara' }, trustUserHeader: true, ...none,
    });
    expect(() => gatewayEnv({ GATEWAY_JWT_SECRET: 'x'.repeat(40), GATEWAY_AUTH_TOKEN: TOKEN })).toThrow(/choose one/);
    expect(() => gatewayEnv({ GATEWAY_PORT: 'http' })).toThrow(/GATEWAY_PORT/);
    expect(gatewayEnv({ GATEWAY_QUOTA_RPM: '20', GATEWAY_QUOTA_USD_PER_DAY: '2.5' }).quotas).toEqual({ requestsPerMinute: 20, usdPerDay: 2.5 });
    expect(() => gatewayEnv({ GATEWAY_QUOTA_RPM: '1.5' })).toThrow(/GATEWAY_QUOTA_RPM/);
    expect(() => gatewayEnv({ GATEWAY_QUOTA_USD_PER_DAY: '-1' })).toThrow(/GATEWAY_QUOTA_USD_PER_DAY/);
  });
});

describe('bad input: the right 4xx with a JSON error, nothing stored', () => {
  it('invalid JSON, wrong content type, non-object, bad fields, unknown route, wrong method', async () => {
    h = await startGateway([], { gateway: { maxBodyBytes: 4096 } });
    const cases: Array<[string, RequestInit & { path: string }, number, string, RegExp?]> = [
      ['invalid JSON', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id": "c1", messages: [' }, 400, 'HTTP_BAD_REQUEST', /invalid JSON/],
      ['not JSON', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'text/plain', 'x-minara-request': '1' }, body: '{}' }, 415, 'HTTP_UNSUPPORTED_MEDIA_TYPE'],
      ['a POST a cross-site form could send', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }, 403, 'HTTP_CROSS_SITE'],
      ['array body', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' }, 400, 'HTTP_BAD_REQUEST', /JSON object/],
      ['empty body', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'application/json' }, body: '' }, 400, 'HTTP_BAD_REQUEST', /empty/],
      ['bad chat id', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('..', 'hi')) }, 400, 'HTTP_BAD_REQUEST', /^id:/],
      ['chat id with a slash', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('a/b', 'hi')) }, 400, 'HTTP_BAD_REQUEST', /^id:/],
      ['no messages', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c1', messages: [] }) }, 400, 'HTTP_BAD_REQUEST', /^messages:/],
      ['empty user text', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('c1', '  ')) }, 400, 'HTTP_BAD_REQUEST', /no text/],
      ['bad trigger', { path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('c1', 'x', { trigger: 'boom' })) }, 400, 'HTTP_BAD_REQUEST', /^trigger:/],
      ['memory without content', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ category: 'preference' }) }, 400, 'HTTP_BAD_REQUEST', /^content:/],
      ['memory unknown field', { path: '/v1/memory', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ category: 'preference', content: 'x', source: 'agent_recorded' }) }, 400, 'HTTP_BAD_REQUEST', /^source:/],
      ['unknown route', { path: '/v1/nope', method: 'GET' }, 404, 'NOT_FOUND'],
      ['unknown root', { path: '/', method: 'GET' }, 404, 'NOT_FOUND'],
      ['trailing slash', { path: '/v1/memory/', method: 'GET' }, 404, 'NOT_FOUND'],
      ['wrong method', { path: '/v1/chat', method: 'GET' }, 405, 'HTTP_METHOD_NOT_ALLOWED'],
      ['wrong method on memory id', { path: '/v1/memory/1', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, 405, 'HTTP_METHOD_NOT_ALLOWED'],
      ['bad memory id', { path: '/v1/memory/abc', method: 'DELETE' }, 400, 'HTTP_BAD_REQUEST', /^id:/],
      ['bad limit', { path: '/v1/memory?limit=0', method: 'GET' }, 400, 'HTTP_BAD_REQUEST', /^limit:/],
      ['bad user header', { path: '/v1/memory', method: 'GET', headers: { 'x-minara-user': 'a b' } }, 400, 'HTTP_BAD_REQUEST', /x-minara-user/],
      ['bad approval status', { path: '/v1/approvals?status=maybe', method: 'GET' }, 400, 'HTTP_BAD_REQUEST', /^status:/],
    ];
    for (const [name, { path: p, ...init }, status, code, message] of cases) {
      const res = await fetch(`${h.url}${p}`, init);
      expect(res.status, name).toBe(status);
      expect(res.headers.get('content-type'), name).toContain('application/json');
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, name).toBe(code);
      if (message) expect(body.error.message, name).toMatch(message);
      if (status === 405) expect(res.headers.get('allow'), name).toBeTruthy();
    }
    expect(await h.storage.conversations.listSessions()).toEqual([]);
    expect(await h.memoryFor('default').read()).toEqual([]);
    expect(h.model.calls).toHaveLength(0);
  });

  it('oversized bodies get 413, by Content-Length before reading and while streaming a chunked body; nothing stored', async () => {
    h = await startGateway([], { gateway: { maxBodyBytes: 4096 } });
    const big = JSON.stringify({ category: 'preference', content: 'x'.repeat(2 * 1024 * 1024) });
    const declared = await raw(h.url, { method: 'POST', path: '/v1/memory', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) }, body: big });
    expect(declared.status).toBe(413);
    expect(errorCode(declared.body).code).toBe('HTTP_PAYLOAD_TOO_LARGE');
    const chunked = await raw(h.url, {
      method: 'POST', path: '/v1/memory', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: [Buffer.from('{"category":"preference","content":"'), ...Array.from({ length: 8 }, () => Buffer.alloc(1024, 'y')), Buffer.from('"}')],
    });
    expect(chunked.status).toBe(413);
    const chat = await raw(h.url, { method: 'POST', path: '/v1/chat', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('big-1', 'z'.repeat(8000))) });
    expect(chat.status).toBe(413);
    // The server still serves after refusing.
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
    expect(await h.memoryFor('default').read()).toEqual([]);
    expect(await h.storage.conversations.listSessions()).toEqual([]);
  });

  it('path traversal in workspace names: 400 (or 404 off the whitelist), nothing read or written outside', async () => {
    h = await startGateway();
    const before = readdirSync(h.workspaceDir).sort();
    const put = JSON.stringify({ content: 'pwned', expectedSha256: null });
    const attempts: Array<[string, number]> = [
      ['/v1/workspace/files/..%2F..%2Fetc%2Fpasswd', 400],
      ['/v1/workspace/files/..%5C..%5Cwin.ini', 400],
      ['/v1/workspace/files/%2e%2e', 404], // normalised away by the URL parser: no such route
      ['/v1/workspace/files/MEMORY.md%00', 400],
      ['/v1/workspace/files/memory%2F2026-01-01.md', 400],
      ['/v1/workspace/files/..', 404],
      ['/v1/workspace/files/notes.txt', 404],
      ['/v1/workspace/files/.workspace-write.lock', 404],
      ['/v1/workspace/files/%E0%A4%A', 400],
    ];
    for (const [p, status] of attempts) {
      for (const method of ['GET', 'PUT']) {
        const res = await raw(h.url, { method, path: p, ...(method === 'PUT' ? { headers: { 'content-type': 'application/json', 'x-minara-roles': 'operator' }, body: put } : {}) });
        expect(res.status, `${method} ${p}`).toBe(status);
        expect(errorCode(res.body).code, `${method} ${p}`).toMatch(/SANDBOX_ESCAPE|WORKSPACE_FILE_NOT_EDITABLE|NOT_FOUND|HTTP_BAD_REQUEST/);
      }
    }
    expect(readdirSync(h.workspaceDir).sort()).toEqual(before);
    expect(readdirSync(path.dirname(h.workspaceDir)).some((f) => f === 'passwd' || f === 'win.ini')).toBe(false);
  });
});
