import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createJwtAuthenticator, type GatewayOptions } from '@minara/agent/gateway';
import { startGateway, TOKEN, type Harness } from './helpers';

// A forged x-minara-user header must never make a token holder another user (issue: the gateway trusted
// a header for who the user is). Every request below carries alice's name in the header.

const SECRET = 'hs256-shared-secret-for-tests-0123456789';
const enc = new TextEncoder();
let h: Harness;
afterEach(async () => h?.close());

const hs = (claims: Record<string, unknown>, opts: { exp?: string | number; aud?: string; key?: string } = {}) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(opts.exp ?? '5m').setAudience(opts.aud ?? 'minara').sign(enc.encode(opts.key ?? SECRET));

async function get(path: string, headers: Record<string, string>) {
  const res = await fetch(`${h.url}${path}`, { headers: { 'x-minara-user': 'alice', ...headers } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function seedAlice() {
  await h.memoryFor('alice').write({ category: 'fact', content: 'alice PIN is 4455', source: 'user_stated' } as never);
}

describe('shared token without a trusted proxy: one user, the header is ignored', () => {
  it("a forged x-minara-user with the valid token reads the single user's memory, not alice's", async () => {
    h = await startGateway([], { gateway: { authToken: TOKEN, trustUserHeader: false } satisfies Partial<GatewayOptions> });
    await seedAlice();
    const r = await get('/v1/memory', { authorization: `Bearer ${TOKEN}` });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).not.toContain('4455');
  });
});

describe('per-user JWT (shared secret)', () => {
  const authenticate = createJwtAuthenticator({ secret: SECRET, audience: 'minara' });
  it("bob's token with alice's header sees bob's memory, sessions and approvals only", async () => {
    h = await startGateway([], { gateway: { authenticate, trustUserHeader: false } });
    await seedAlice();
    await h.memoryFor('bob').write({ category: 'fact', content: 'bob likes SOL', source: 'user_stated' } as never);
    const bob = await hs({ sub: 'bob' });
    const mem = await get('/v1/memory', { authorization: `Bearer ${bob}` });
    expect(mem.status).toBe(200);
    expect(JSON.stringify(mem.body)).toContain('bob likes SOL');
    expect(JSON.stringify(mem.body)).not.toContain('4455');
    await h.storage.conversations.ensureSession({ id: 'alice-chat', userId: 'alice', now: new Date().toISOString() });
    expect((await get('/v1/chat/alice-chat/stream', { authorization: `Bearer ${bob}` })).status).toBe(404);
    const approvals = await get('/v1/approvals', { authorization: `Bearer ${bob}` });
    expect(approvals.body).toEqual({ approvals: [] });
  });

  it('refuses a missing, expired, wrongly signed, wrong-audience or alg:none token with 401 and no secret', async () => {
    h = await startGateway([], { gateway: { authenticate } });
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'alice', aud: 'minara', exp: 9_999_999_999 })).toString('base64url')}.`;
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      expired: { authorization: `Bearer ${await hs({ sub: 'alice' }, { exp: Math.floor(Date.now() / 1000) - 3600 })}` },
      'wrong key': { authorization: `Bearer ${await hs({ sub: 'alice' }, { key: 'another-secret-of-enough-length-000000' })}` },
      'wrong audience': { authorization: `Bearer ${await hs({ sub: 'alice' }, { aud: 'someone-else' })}` },
      'alg none': { authorization: `Bearer ${none}` },
      'no subject': { authorization: `Bearer ${await hs({})}` },
    };
    for (const [label, headers] of Object.entries(cases)) {
      const r = await get('/v1/memory', headers);
      expect(r.status, label).toBe(401);
      expect(JSON.stringify(r.body), label).not.toContain(SECRET);
    }
  });

  it('only the operator role writes the shared workspace files', async () => {
    h = await startGateway([], { gateway: { authenticate } });
    const put = async (token: string) =>
      (await fetch(`${h.url}/v1/workspace/files/SOUL.md`, {
        method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: '# Soul\nobey me', expectedSha256: null }),
      })).status;
    expect(await put(await hs({ sub: 'mallory' }))).toBe(403);
    expect(await put(await hs({ sub: 'ops', roles: ['operator'] }))).toBe(200);
  });

  it('refuses ambiguous configuration', () => {
    expect(() => createJwtAuthenticator({})).toThrow(/exactly one/);
    expect(() => createJwtAuthenticator({ secret: 'short' })).toThrow(/32 bytes/);
  });
});

describe('per-user JWT (JWKS on 127.0.0.1)', () => {
  let jwks: Server;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
    jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(() => new Promise((r) => jwks.close(r)));

  it('verifies tokens against the key set and scopes the request to its subject', async () => {
    const port = (jwks.address() as { port: number }).port;
    h = await startGateway([], { gateway: { authenticate: createJwtAuthenticator({ jwksUrl: `http://127.0.0.1:${port}/jwks.json`, issuer: 'https://id.test', audience: 'minara' }) } });
    await seedAlice();
    const token = await new SignJWT({ sub: 'carol' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://id.test').setAudience('minara').setExpirationTime('5m').sign(privateKey);
    const ok = await get('/v1/memory', { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body)).not.toContain('4455');
    const wrongIssuer = await new SignJWT({ sub: 'carol' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer('https://evil.test').setAudience('minara').setExpirationTime('5m').sign(privateKey);
    expect((await get('/v1/memory', { authorization: `Bearer ${wrongIssuer}` })).status).toBe(401);
  });
});

describe('attack (issue 37): a JWKS fetched over plain http', () => {
  it('is refused unless the host is loopback (a network attacker could swap the keys and mint any user)', () => {
    for (const jwksUrl of ['http://id.example.com/.well-known/jwks.json', 'http://10.0.0.5/jwks.json', 'http://id.example.com:443/jwks.json']) {
      expect(() => createJwtAuthenticator({ jwksUrl, audience: 'minara' }), jwksUrl).toThrow(/"jwksUrl" must use https:.*got http:\/\//);
    }
    for (const jwksUrl of ['ftp://id.example.com/jwks.json', 'file:///etc/jwks.json']) {
      expect(() => createJwtAuthenticator({ jwksUrl, audience: 'minara' }), jwksUrl).toThrow(/"jwksUrl" must use https:/);
    }
    // https anywhere, and http on loopback (a sidecar, a test) are accepted.
    for (const jwksUrl of ['https://id.example.com/.well-known/jwks.json', 'http://127.0.0.1:8080/jwks.json', 'http://localhost/jwks.json', 'http://[::1]:9000/jwks.json']) {
      expect(() => createJwtAuthenticator({ jwksUrl, audience: 'minara' }), jwksUrl).not.toThrow();
    }
  });
});
